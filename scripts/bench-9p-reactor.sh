#!/bin/bash
# make bench, 9P reads from the disk: stage 35's r9p (reads await stage 34's
# file reactor) against stage 31's (the same server and limits, reading
# synchronously in the executor's worker: `Policy::read`'s default), both
# exporting an ext4 on stage 20's rnvme, in one VM boot of the fast kernel.
#   scripts/bench-9p-reactor.sh [ROUNDS]   (default BENCH_ROUNDS or 5)
# Each round runs every case with each server, the order swapped every
# round; the guest's side is scripts/bench-9p-reactor-guest.sh. Cases: four
# v9fs clients (cache=none) reading 12 MiB files at once, 128 KiB
# sequential reads and 4 KiB random reads (fio); and the slow disk (QEMU
# throttled over QMP, one executor worker): one client reads a cold file
# while three stat and read files in memory.
# Prints a table, then "9p-reactor-METRIC-(reactor|sync|ratio|ratio-min|
# ratio-max) value unit" lines for bench.sh; rewrites the reactor part of
# book/src/benchmarks.md (BENCH_PAGE=no: not). Raw output:
# build/bench/9p-reactor.txt.
set -euo pipefail
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-${BENCH_ROUNDS:-5}}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "usage: bench-9p-reactor.sh [ROUNDS]"
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null
OUT="$REPO/build/bench"
mkdir -p "$OUT"
for s in 20-disk-limits 31-9p-limits 35-9p-async-reads; do
	"$REPO/scripts/build-stage.sh" solutions "$s" --strict >/dev/null || die "solutions/$s does not build"
done
# Copies: a rebuild while the VM runs does not change what is measured.
M="$REPO/build/modules-fast/solutions"
cp "$M/35-9p-async-reads/r9p.ko" "$OUT/r9p-reactor.ko"
cp "$M/31-9p-limits/r9p.ko" "$OUT/r9p-sync.ko"
cp "$M/20-disk-limits/rnvme.ko" "$OUT/rnvme-20.ko"
commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
RAW="$OUT/9p-reactor.txt"
# QMP: the guest throttles the disk. One controller, its id the serial.
export RKW_VM_QMP=yes RKW_VM_LOG="$OUT/9p-reactor-vm"
# A round took 50 s under TCG on a quiet host.
export RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$((300 + ROUNDS * 400))}
vms0=$(vms_running) load0=$(host_load)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)
"$REPO/scripts/vm.sh" --devices "nvme:serial=rkw-c0" \
	--exec "bash $REPO/scripts/bench-9p-reactor-guest.sh $OUT/r9p-reactor.ko $OUT/r9p-sync.ko $OUT/rnvme-20.ko $ROUNDS" >"$RAW" 2>&1 || true
wall=$(($(date +%s) - t0))
vms1=$(vms_running) load1=$(host_load)
rm -f "$RKW_VM_LOG.nvme-trace"
grep -E '^# |^RKW:vm-timeout' "$RAW" >&2 || true
grep -q '^RKW-GUEST-DONE' "$RAW" || die "the guest did not finish the benchmark (see ${RAW#"$REPO"/})"
note="Measured $started by \`scripts/bench-9p-reactor.sh $ROUNDS\` ($wall s in all, commit $commit): $(vm_accel) on $(nproc) cores, host load $load0 before and $load1 after, $vms0 other VMs running before and $vms1 after."
python3 "$REPO/scripts/bench-9p-reactor-report.py" "$RAW" "$note" \
	"$([ "${BENCH_PAGE:-}" = no ] || echo "$REPO/book/src/benchmarks.md")"
