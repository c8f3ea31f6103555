#!/bin/bash
# make bench, 9P servers: r9p (stage 33) against diod and QEMU's 9p server,
# through v9fs mounts with the same options (msize=65536, cache=none) in
# one VM (fast kernel), samples alternating.
#   scripts/bench-9p-servers.sh [SAMPLES]
# Prints "9p-NAME value unit" lines: each server's medians (rates, and CPU
# time per operation: the guest's, the benchmark process's, QEMU's I/O
# threads' on the host) and the ratios r9p/diod and r9p/qemu (median of the
# per-sample ratios, with their min and max). The raw samples go to
# build/bench/9p-servers.txt; the plot to book/src/benchmarks-9p.svg and the
# table to the 9P section of book/src/benchmarks.md
# (scripts/bench-9p-servers.py report).
set -uo pipefail
export RKW_FLAVOUR=fast
. "$(dirname "$0")/common.sh"
SAMPLES=${1:-3}
STAGE=33-9p-users
OUT="$REPO/build/bench"
QDIR="$OUT/9p-fixture"
RAW="$OUT/9p-servers.txt"
LOG="$OUT/9p-servers.log"
mkdir -p "$OUT" "$QDIR/files"

"$REPO/scripts/build-stage.sh" solutions "$STAGE" >/dev/null || die "solutions/$STAGE does not build"
KO="$REPO/build/modules-fast/solutions/$STAGE/r9p.ko"
# The tree on the host, for QEMU's export (and the guest copies the big
# file from here to its tmpfs, for r9p and diod).
[ "$(find "$QDIR/files" -maxdepth 1 -type f | wc -l)" = 10000 ] || (cd "$QDIR/files" && touch file-{00000..09999})
[ "$(stat -c %s "$QDIR/big" 2>/dev/null)" = $((256 << 20)) ] ||
	head -c $((256 << 20)) /dev/urandom >"$QDIR/big"

# The VM (scripts/vm.sh), 2 vCPUs, with a second virtio-9p export, of the
# fixture alone (tag rkwbench), which the guest mounts with the options of
# the other two, since the VM's root is mounted cache=loose and would be
# answered from the guest's page cache; and a directory shared with the
# host, where an agent tells the guest how much CPU time QEMU's threads
# have used.
ACCEL=$(vm_accel)
AGENT=$(mktemp -d /tmp/rkw-9pbench-XXXXXX)
AGENT_PID=""
cleanup() {
	[ -z "$AGENT_PID" ] || kill "$AGENT_PID" 2>/dev/null
	rm -rf "$AGENT"
}
trap cleanup EXIT

# What else runs: the numbers are only as calm as the machine.
vms0=$(vms_running) load0=$(host_load)
python3 "$REPO/scripts/bench-9p-servers.py" agent "$AGENT" &
AGENT_PID=$!
# Under TCG one sample of the three servers takes 5 to 12 minutes (diod is
# the slow one), depending on what else the machine runs. QEMU's threads
# are named after their job (CPU 0/TCG, worker, ...): the agent leaves the
# vCPUs out. (-name merges with vng's.)
RKW_VM_CPUS=2 RKW_VM_RWDIR=$AGENT RKW_VM_QEMU_OPTS="-name guest=virtme-ng,debug-threads=on" \
	RKW_VM_TIMEOUT=$((300 + SAMPLES * 900)) "$REPO/scripts/vm.sh" --devices "9p:rkwbench=$QDIR" \
	--exec "export RKW_BENCH_FIXTURE=$QDIR; bash tests/$STAGE/bench-guest.sh $KO $SAMPLES $AGENT" >"$LOG" 2>&1
vms1=$(vms_running) load1=$(host_load)
grep -E '^(r9p|diod|qemu) [0-9]+ [a-z0-9-]+ [a-z-]+ [0-9.]+$' "$LOG" >"$RAW" ||
	die "no samples (see ${LOG#"$REPO"/})"
grep '^# ' "$LOG"
note="$ACCEL on $(nproc) cores, host load $load0 before and $load1 after, $vms0 other VMs running before and $vms1 after"
echo "# $note"
python3 "$REPO/scripts/bench-9p-servers.py" report "$RAW" "$REPO/book/src/benchmarks-9p.svg" \
	"$REPO/book/src/benchmarks.md" "$note"
