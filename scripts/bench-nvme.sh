#!/bin/bash
# Benchmark (not a test): stage 09's rnvme against the kernel's C nvme
# driver, on the same QEMU NVMe controller, in one VM boot of the fast
# kernel. The two drivers take turns (sysfs unbind/bind): each round runs
# every workload once with each, the order swapped every round, so both
# meet the same host load.
#
#   scripts/bench-nvme.sh [ROUNDS] [SECONDS]   (default BENCH_ROUNDS or 5,
#                                               BENCH_SECONDS or 5 per sample)
#
# Workloads (fio, libaio, O_DIRECT, SECONDS each, on the namespace from
# 8 MiB on): 4k random read at QD1 (mean latency), 4k random read at QD32
# with one job per vCPU (IOPS), 128k sequential read at QD8 (MB/s), 4k
# random write at QD32 (IOPS). Per workload: the median of each driver over
# the rounds, the ratio ours/C of the medians with the min-max of the
# per-round ratios; and, to see why, fio's CPU use (usr+sys), interrupts per
# I/O and doorbell writes per I/O (counted in QEMU's trace). Under TCG the
# device is emulated too: the ratio, not the absolute number, is the result.
# The last lines are "nvme-<workload>-<ours|c|ratio|...> value unit" for
# bench.sh. Raw samples (fio's JSON): build/bench/nvme-samples.txt.
set -euo pipefail
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-${BENCH_ROUNDS:-5}}
SECS=${2:-${BENCH_SECONDS:-5}}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] && [[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "usage: bench-nvme.sh [ROUNDS] [SECONDS]"
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null
"$REPO/scripts/build-stage.sh" solutions 09 >/dev/null
KO="$REPO/build/modules-fast/solutions/09-blk-mq/rnvme.ko"
OUT="$REPO/build/bench"
mkdir -p "$OUT"
RAW="$OUT/nvme-samples.txt"
# Per sample: fio's ramp and run, a fio start, a bind and an unbind (the C
# driver's reset is slow under TCG); plus the boot and the fill.
export RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$((ROUNDS * 8 * (SECS + 15) + 240))}
# One controller, two I/O queue pairs for both drivers (one per vCPU).
export RKW_VM_CPUS=2
# vm.sh has QEMU trace every doorbell write (a line each, a small cost
# per doorbell for both drivers): the guest notes where each sample's
# lines begin and end, and the doorbells per I/O are counted from them.
export RKW_VM_LOG="$OUT/nvme-vm"
TRACE="$RKW_VM_LOG.nvme-trace"
rm -f "$TRACE"
t0=$(date +%s)
"$REPO/scripts/vm.sh" --devices "nvme:serial=rkw-bench,max_ioqpairs=2" \
	--exec "bash $REPO/scripts/bench-nvme-guest.sh $KO $(current_kdir) $ROUNDS $SECS" >"$RAW" 2>&1 || true
wall=$(($(date +%s) - t0))
grep -E '^RKW-(INFO|ERROR|DMESG|TAINT)|^RKW:vm-timeout' "$RAW" >&2 || true
grep -q '^RKW-GUEST-DONE' "$RAW" || die "the guest did not finish the benchmark (see ${RAW#"$REPO"/})"

python3 - "$RAW" "$ROUNDS" "$SECS" "$wall" "$TRACE" <<'EOF'
import json, statistics, sys
raw, rounds, secs, wall, trace = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
try:
    tracef = open(trace, "rb")
except OSError:
    tracef = None

def doorbells(start, end):
    """Doorbell writes of the I/O queues (not the admin queue's) in the
    trace between byte offsets start and end."""
    if tracef is None or end <= start:
        return 0
    tracef.seek(start)
    n = 0
    for line in tracef.read(end - start).splitlines():
        if b"pci_nvme_mmio_doorbell_" in line and b"qid 0 " not in line:
            n += 1
    return n

# workload: (what is measured, unit, higher is better)
WL = {
    "randread-qd1": ("mean latency", "us", False),
    "randread-qd32": ("IOPS", "IOPS", True),
    "seqread-128k-qd8": ("bandwidth", "MB/s", True),
    "randwrite-qd32": ("IOPS", "IOPS", True),
}
samples = {}  # (workload, who) -> {round: (value, CPU us/IO, IRQs/IO, CPU %, doorbells/IO)}
binds = {"ours": [], "c": []}
for line in open(raw, errors="replace"):
    if line.startswith("RKW-BIND "):
        _, who, ms, _ = line.split()
        binds[who].append(int(ms))
    if not line.startswith("RKW-SAMPLE "):
        continue
    _, r, wl, who, irqs, t0, t1, rest = line.split(" ", 7)
    jobs = json.loads(rest[rest.index("{"):])["jobs"]
    ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs)
    if wl == "randread-qd1":
        value = jobs[0]["read"]["lat_ns"]["mean"] / 1000
    elif wl == "seqread-128k-qd8":
        value = sum(j["read"]["bw_bytes"] for j in jobs) / 1e6
    else:
        value = sum(j["read"]["iops"] + j["write"]["iops"] for j in jobs)
    # CPU seconds of fio's jobs (usr+sys, which includes the submission
    # path through the driver, and interrupts taken while fio ran).
    cpu = sum((j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000 for j in jobs)
    busy = statistics.mean(j["usr_cpu"] + j["sys_cpu"] for j in jobs)
    # Interrupts and doorbell writes (SQ tail and CQ head) per I/O, over
    # fio's run (a few from its start and end, too).
    samples.setdefault((wl, who), {})[int(r)] = (value, cpu * 1e6 / max(ios, 1), int(irqs) / max(ios, 1),
                                                 busy, doorbells(int(t0), int(t1)) / max(ios, 1))

print(f"{rounds} rounds of {secs} s per sample and driver, wall time {wall} s; medians, and")
print("ours/C with the min-max of the per-round ratios. fio CPU: usr+sys of its jobs, % of")
print("their run and us per I/O. Doorbells: MMIO writes to the I/O queues' SQ tail and CQ")
print("head doorbells per I/O (QEMU's trace).")
print(f"{'workload':17} {'metric':10} {'ours':>8} {'C':>8} {'ours/C':>6} {'(min-max)':>11} |"
      f" {'fio CPU % ours':>14} {'C':>3} | {'us/IO ours':>10} {'C':>5} | {'IRQ/IO ours':>11} {'C':>4} |"
      f" {'doorbells/IO ours':>17} {'C':>4}")
res = []
med = statistics.median
for wl, (metric, unit, higher) in WL.items():
    o, c = samples.get((wl, "ours"), {}), samples.get((wl, "c"), {})
    both = sorted(set(o) & set(c))
    if not both:
        print(f"{wl}: no samples")
        continue
    # m[k] = (median of ours, median of C) of field k of the samples
    m = [(med(o[r][k] for r in both), med(c[r][k] for r in both)) for k in range(5)]
    (mo, mc), (uo, uc), (io_, ic), (bo, bc), (do, dc) = m
    ratios = [o[r][0] / c[r][0] for r in both]
    spread = f"({min(ratios):.2f}-{max(ratios):.2f})"
    print(f"{wl:17} {unit:10} {mo:8.1f} {mc:8.1f} {mo / mc:6.2f} {spread:>11} |"
          f" {bo:14.0f} {bc:3.0f} | {uo:10.0f} {uc:5.0f} | {io_:11.2f} {ic:4.2f} |"
          f" {do:17.2f} {dc:4.2f}")
    base = f"nvme-{wl}"
    res += [(f"{base}-ours", f"{mo:.1f}", unit), (f"{base}-c", f"{mc:.1f}", unit),
            (f"{base}-ratio", f"{mo / mc:.3f}", "ours/C" + ("" if higher else "(lower-is-better)")),
            (f"{base}-ratio-min", f"{min(ratios):.3f}", "ours/C"),
            (f"{base}-ratio-max", f"{max(ratios):.3f}", "ours/C"),
            (f"{base}-cpu-ours", f"{bo:.0f}", "%"), (f"{base}-cpu-c", f"{bc:.0f}", "%"),
            (f"{base}-cpu-per-io-ours", f"{uo:.0f}", "us"), (f"{base}-cpu-per-io-c", f"{uc:.0f}", "us"),
            (f"{base}-irqs-per-io-ours", f"{io_:.2f}", "IRQs"), (f"{base}-irqs-per-io-c", f"{ic:.2f}", "IRQs"),
            (f"{base}-doorbells-per-io-ours", f"{do:.2f}", "writes"),
            (f"{base}-doorbells-per-io-c", f"{dc:.2f}", "writes")]
for who in ("ours", "c"):
    if binds[who]:
        res.append((f"nvme-bind-{who}", f"{statistics.median(binds[who])}", "ms"))
res.append(("nvme-rounds", str(rounds), "rounds"))
res.append(("nvme-wall", wall, "s"))
for r in res:
    print(*r)
EOF
# The trace has done its job (it grows by tens of MB a run).
rm -f "$TRACE"
