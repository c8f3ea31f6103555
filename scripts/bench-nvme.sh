#!/bin/bash
# Benchmark (not a test): rnvme (the speed stage's, 21-speed, or the stage
# BENCH_NVME_STAGE names) against the kernel's C nvme driver, on the same
# QEMU NVMe controller, in one VM boot of the fast kernel. The two drivers take turns (sysfs unbind/bind): each round runs
# every workload once with each, the order swapped every round, so both
# meet the same host load.
#
#   scripts/bench-nvme.sh [ROUNDS] [SECONDS]   (default BENCH_ROUNDS or 5,
#                                               BENCH_SECONDS or 5 per sample)
#
# The controller's namespace is QEMU's null-co driver with read-zeroes
# (vm.sh's latency_ms=0): no image, no host I/O, so the disk is never the
# bottleneck; the drivers and the emulated controller are. Workloads (fio,
# libaio, O_DIRECT, SECONDS each): 4k random reads at QD1, at QD32
# (one job), at QD32 with one job per vCPU, at QD32 submitted 16 at a
# time, 128k sequential reads at QD8, and 4k random writes at QD32 into
# the controller's write cache; at QD32 and 128k also rnvme with
# zero_copy=0 (stage 13's bounce buffers), if it has that parameter, and
# at QD1 and QD32 rnvme built without Rust's overflow checks. Per
# workload: IOPS (MB/s for 128k) of each driver, the median over the
# rounds; the ratio rnvme/C, the median of the per-round ratios with their
# min-max; and, to see why, CPU time per I/O (fio's usr+sys, and the whole
# guest's), interrupts, IPIs, context switches, doorbell writes and commands
# per I/O (from QEMU's trace), and how rnvme's requests went (zero copy or
# bounced; its own count). QEMU's trace costs each doorbell write a line
# written under QEMU's global lock, more for the driver that rings more:
# the measured rounds run with the trace off (over QMP), and one more
# round, traced, counts the doorbells (its speed is not used). Under TCG
# the device is emulated too: the ratio, not the absolute number, is the
# result. The report and the page: scripts/bench-nvme-report.py, the plot:
# scripts/bench-plot.py. BENCH_NVME_PARAMS: rnvme's module parameters for
# every sample, commas between them (io_depth=32,shadow_doorbells=0: what
# each of the speed stage's changes buys).
#
# Output: a table (for people), then "nvme-<workload>-<ours|c|ratio|...>
# value unit" lines for bench.sh. It also rewrites the NVMe part of the
# book's page book/src/benchmarks.md and its plot benchmarks-nvme.svg
# (BENCH_PAGE=no: not; BENCH_PAGE=DIR: into DIR instead). Raw samples
# (fio's JSON): build/bench/nvme-samples.txt. BENCH_NVME_REF=<commit>
# measures the stage as committed there (a copy of that commit's tree, built
# in build/bench/rnvme-bench-tree) instead of the working tree's.
set -euo pipefail
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-${BENCH_ROUNDS:-5}}
SECS=${2:-${BENCH_SECONDS:-5}}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] && [[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "usage: bench-nvme.sh [ROUNDS] [SECONDS]"
PAGE_DIR=${BENCH_PAGE:-$REPO/book/src}
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null
OUT="$REPO/build/bench"
# A copy of the module and of its source: a rebuild or an edit of the stage
# while the VM runs does not change what is measured, or what the report
# reads in the source.
nvme_bench_module "rnvme-bench"
nvme_bench_nochecks "rnvme-bench"
rm -rf "$OUT/nvme-src" && cp -r "$TREE/solutions/$STAGE" "$OUT/nvme-src"
RAW="$OUT/nvme-samples.txt"
# Per sample: fio's run and start, a bind and an unbind (the C driver's
# reset is slow under TCG); plus the boot.
SAMPLES=16 # per round: 6 workloads x 2 drivers, 2 with zero_copy=0, 2 without overflow checks
export RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$(((ROUNDS + 1) * SAMPLES * (SECS + 20) + 300))}
# QMP: the guest turns QEMU's trace off for the measured rounds.
export RKW_VM_QMP=yes
# One controller, two I/O queue pairs for both drivers (one per vCPU).
export RKW_VM_CPUS=2
# vm.sh has QEMU trace every doorbell write (a line each, a small cost
# per doorbell for both drivers): the guest notes where each sample's
# lines begin and end, and the doorbells per I/O are counted from them.
export RKW_VM_LOG="$OUT/nvme-vm"
TRACE="$RKW_VM_LOG.nvme-trace"
rm -f "$TRACE"

# What the host was doing meanwhile: its load average every 10 s (the VM's
# two vCPU threads count about 2 of it).
LOADS="$OUT/nvme-loadavg.txt"
: >"$LOADS"
(while :; do
	cut -d' ' -f1 /proc/loadavg >>"$LOADS"
	sleep 10
done) &
LOADER=$!
trap 'kill "$LOADER" 2>/dev/null || true' EXIT

started=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)
"$REPO/scripts/vm.sh" --devices "nvme:serial=rkw-bench,max_ioqpairs=2,latency_ms=0" \
	--exec "bash $REPO/scripts/bench-nvme-guest.sh $KO $(current_kdir fast) $ROUNDS $SECS ${BENCH_NVME_PARAMS:--} $NOCHECKS_KO" >"$RAW" 2>&1 || true
wall=$(($(date +%s) - t0))
kill "$LOADER" 2>/dev/null || true
grep -E '^RKW-(INFO|ERROR|DMESG|TAINT|OACS)|^RKW:vm-timeout' "$RAW" >&2 || true
grep -q '^RKW-GUEST-DONE' "$RAW" || die "the guest did not finish the benchmark (see ${RAW#"$REPO"/})"

python3 "$REPO/scripts/bench-nvme-report.py" --raw "$RAW" --trace "$TRACE" --rounds "$ROUNDS" \
	--secs "$SECS" --wall "$wall" --loads "$LOADS" --started "$started" --commit "$commit" \
	--qemu "$(qemu-system-x86_64 --version | head -1)" --accel "$(vm_accel)" \
	--host-cpus "$(nproc)" --page "$([ "$PAGE_DIR" = no ] || echo "$PAGE_DIR")" \
	--plot "$REPO/scripts/bench-plot.py" --summary "$OUT/nvme-summary.json" --src "$OUT/nvme-src" \
	--stage "$STAGE"
# The trace has done its job (it grows by tens of MB a run).
rm -f "$TRACE"
