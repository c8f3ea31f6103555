#!/bin/bash
# Before and after a change, side by side (a measurement, not a test): the
# speed stage's rnvme (21-speed, or BENCH_NVME_STAGE) as committed at BEFORE
# and as in the working tree (or at BENCH_NVME_REF), each against the
# kernel's C nvme driver, on the same QEMU NVMe controller in one VM boot of
# the fast kernel. The three take turns sample by sample, so all meet the
# same host load; what a change bought is the ratio after/before of each
# round, with its spread, and never two runs compared across time (a TCG
# guest on a busy host differs from one run to the next by more than most
# fixes).
#
#   scripts/ab-nvme.sh BEFORE [ROUNDS] [SECONDS] [WORKLOAD...]
#       (default 3 rounds of 5 s, randread-qd1 randread-qd32; the workloads
#       are those of scripts/nvme-drivers-guest.sh)
#
# BENCH_NVME_PARAMS: rnvme's parameters for both builds, as in
# bench-nvme.sh. AB_BEFORE_KRUSTFLAGS, AB_AFTER_KRUSTFLAGS: Rust flags for
# one build (appended to the kernel's), to time a compiler setting: with
# BEFORE=HEAD and AB_AFTER_KRUSTFLAGS=-Copt-level=2, what building the
# module for speed instead of size (the fast kernel's -Copt-level=s) buys.
# Output: a Markdown table (also build/bench/nvme-ab.md); the guest's lines
# in build/bench/nvme-ab-raw.txt.
set -euo pipefail
. "$(dirname "$0")/common.sh"
BEFORE=${1:-}
ROUNDS=${2:-3}
SECS=${3:-5}
[ -n "$BEFORE" ] && git -C "$REPO" rev-parse -q --verify "$BEFORE^{commit}" >/dev/null ||
	die "usage: ab-nvme.sh BEFORE [ROUNDS] [SECONDS] [WORKLOAD...] (BEFORE: a commit)"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] && [[ "$SECS" =~ ^[1-9][0-9]*$ ]] ||
	die "usage: ab-nvme.sh BEFORE [ROUNDS] [SECONDS] [WORKLOAD...]"
shift $(($# < 3 ? $# : 3))
WORKLOADS=${*:-randread-qd1 randread-qd32}
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null

AFTER_REF=${BENCH_NVME_REF:-}
KRUSTFLAGS=${AB_BEFORE_KRUSTFLAGS:-} BENCH_NVME_REF=$BEFORE nvme_bench_module "rnvme-ab-before"
BEFORE_KO=$KO before="$commit${AB_BEFORE_KRUSTFLAGS:+, KRUSTFLAGS=$AB_BEFORE_KRUSTFLAGS}"
KRUSTFLAGS=${AB_AFTER_KRUSTFLAGS:-} BENCH_NVME_REF=$AFTER_REF nvme_bench_module "rnvme-ab-after"
commit+=${AB_AFTER_KRUSTFLAGS:+, KRUSTFLAGS=$AB_AFTER_KRUSTFLAGS}
KDIR=$(current_kdir fast)

n=$(wc -w <<<"$WORKLOADS")
# Per sample: fio, a bind (the C driver's reset is slow under TCG), an
# unbind and maybe a reload; plus the boot.
export RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$((ROUNDS * n * 3 * (SECS + 20) + 300))}
# shellcheck disable=SC2086
nvme_measure_vm ab ab-nvme-guest.sh "$KO" "$BEFORE_KO" "$KDIR" "$ROUNDS" "$SECS" \
	${BENCH_NVME_PARAMS:+params=$BENCH_NVME_PARAMS} $WORKLOADS
python3 "$REPO/scripts/ab-nvme-report.py" "$RAW" --before "$before" --after "$commit" |
	tee "$REPO/build/bench/nvme-ab.md"
