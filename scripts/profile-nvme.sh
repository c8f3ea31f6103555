#!/bin/bash
# Where the CPU time per I/O goes (a measurement, not a test): rnvme (the
# speed stage's, 21-speed, or the stage BENCH_NVME_STAGE names) and the
# kernel's C nvme driver take turns on the same QEMU NVMe controller, in
# one VM boot of the fast kernel, as in scripts/bench-nvme.sh; fio runs
# under `perf record` (every CPU, the cpu-clock event), and the report
# gives each driver's busy CPU time per I/O by kind of code, and the
# functions that differ most.
#
#   scripts/profile-nvme.sh [SECONDS] [WORKLOAD...]
#       (default 10 s each, randread-qd1 randread-qd32 seqread-128k)
#
# Needs perf on the host (Debian's linux-perf: the VM runs the host's
# programs). Output: the report (Markdown), also in
# build/bench/nvme-profile.md; the guest's raw lines in
# build/bench/nvme-profile-raw.txt. It also rewrites the profile part of
# the book's page book/src/benchmarks.md (BENCH_PAGE=no: not; BENCH_PAGE=DIR:
# DIR/benchmarks.md instead), as bench-nvme.sh does; BENCH_NVME_REF and
# BENCH_NVME_PARAMS as there.
set -euo pipefail
. "$(dirname "$0")/common.sh"
SECS=${1:-10}
PAGE_DIR=${BENCH_PAGE:-$REPO/book/src}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "usage: profile-nvme.sh [SECONDS] [WORKLOAD...]"
shift || true
WORKLOADS=${*:-randread-qd1 randread-qd32 seqread-128k}
command -v perf >/dev/null || die "no perf on this machine: apt install linux-perf (the VM uses the host's)"
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null
OUT="$REPO/build/bench"
nvme_bench_module "rnvme-profile"
n=$(wc -w <<<"$WORKLOADS")
export RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$((n * 2 * (SECS + 60) + 300))}
# shellcheck disable=SC2086
nvme_measure_vm profile profile-nvme-guest.sh "$KO" "$(current_kdir fast)" "$SECS" \
	${BENCH_NVME_PARAMS:+params=$BENCH_NVME_PARAMS} $WORKLOADS
page=()
[ "$PAGE_DIR" = no ] || page=(--page "$PAGE_DIR")
python3 "$REPO/scripts/profile-nvme-report.py" "$RAW" --commit "$commit" "${page[@]}" | tee "$OUT/nvme-profile.md"
