#!/bin/bash
# Where the guest's instructions per I/O go (a measurement, not a test):
# rnvme (the speed stage's, 21-speed, or BENCH_NVME_STAGE) and the kernel's
# C nvme driver take turns on the same QEMU NVMe controller, in one VM boot
# of the fast kernel, as in scripts/bench-nvme.sh, while QEMU counts every
# instruction the guest executes (the TCG plugin scripts/tcg-insns.c, built
# here). The report gives each driver's instructions per I/O by kind of
# code, its calls, what costs more than an instruction under TCG (memory
# accesses, atomics, interrupts turned on), and the functions that differ
# most, by name.
#
#   scripts/insns-nvme.sh [SECONDS] [WORKLOAD...]
#       (default 10 s each, randread-qd1 randread-qd32)
#
# Unlike perf in the guest (scripts/profile-nvme.sh), nothing is sampled:
# interrupt handlers and code with interrupts off are counted where they
# run. Under TCG the time a guest spends follows its instructions closely
# (each is translated into several of the host's), though not exactly
# (a doorbell write, an exit into QEMU, is one instruction).
#
# Needs a C compiler for the plugin (clang-22, which make setup installs,
# or cc) and a QEMU with TCG plugins (Debian's 7.2 has them; the plugin is
# written to its plugin API, version 1). Output: the report (Markdown),
# also in build/bench/nvme-insns.md; the guest's lines in
# build/bench/nvme-insns-raw.txt and the counts in build/bench/insns/. It
# also rewrites the instructions part of the book's page
# book/src/benchmarks.md (BENCH_PAGE=no: not; BENCH_PAGE=DIR: DIR's),
# as bench-nvme.sh does; BENCH_NVME_REF and BENCH_NVME_PARAMS as there.
set -euo pipefail
. "$(dirname "$0")/common.sh"
SECS=${1:-10}
PAGE_DIR=${BENCH_PAGE:-$REPO/book/src}
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "usage: insns-nvme.sh [SECONDS] [WORKLOAD...]"
shift || true
WORKLOADS=${*:-randread-qd1 randread-qd32}
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null
OUT="$REPO/build/bench"
nvme_bench_module "rnvme-insns"
# The fast kernel (common.sh read RKW_FLAVOUR before this script set it).
KDIR=$(current_kdir fast)

# The plugin, rebuilt when its source changed.
PLUGIN="$OUT/tcg-insns.so"
CC_PLUGIN=$(command -v "clang$LLVM_SUFFIX" || command -v cc || true)
[ -n "$CC_PLUGIN" ] || die "no C compiler for the TCG plugin (clang$LLVM_SUFFIX or cc)"
if [ ! -f "$PLUGIN" ] || [ "$REPO/scripts/tcg-insns.c" -nt "$PLUGIN" ]; then
	"$CC_PLUGIN" -O2 -Wall -shared -fPIC -o "$PLUGIN" "$REPO/scripts/tcg-insns.c" ||
		die "cannot build the TCG plugin scripts/tcg-insns.c"
fi
# The two system calls the guest makes to zero and to write the counts.
addr_of() { awk -v s="$1" '$3 == s { print $1 }' "$KDIR/System.map"; }
RESET=$(addr_of __x64_sys_sethostname) DUMP=$(addr_of __x64_sys_setdomainname)
[ -n "$RESET" ] && [ -n "$DUMP" ] || die "no sethostname/setdomainname in $KDIR/System.map"
COUNTS="$OUT/insns"
rm -rf "$COUNTS" && mkdir -p "$COUNTS"

n=$(wc -w <<<"$WORKLOADS")
# Counting slows the guest down (about 1.5 times): a longer limit.
export RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$((n * 2 * (2 * SECS + 60) + 300))}
export RKW_VM_QEMU_OPTS="-plugin $PLUGIN,reset=$RESET,dump=$DUMP,dir=$COUNTS"
# shellcheck disable=SC2086
nvme_measure_vm insns insns-nvme-guest.sh "$KO" "$KDIR" "$SECS" \
	${BENCH_NVME_PARAMS:+params=$BENCH_NVME_PARAMS} $WORKLOADS
page=()
[ "$PAGE_DIR" = no ] || page=(--page "$PAGE_DIR")
python3 "$REPO/scripts/insns-nvme-report.py" "$RAW" --counts "$COUNTS" --system-map "$KDIR/System.map" \
	--commit "$commit" "${page[@]}" | tee "$OUT/nvme-insns.md"
