#!/bin/bash
# Stage 34 test (runs in the VM): kread reads one file through the file
# reactor and logs its size, its FNV-1a hash and how the reads went. Stage
# 20's rnvme makes the disk, ext4 goes on it: a file nothing has cached is
# read right, with page waits that the disk's interrupt ended and no read
# in the blocking pool; read again, all of it at once; read in chunks that
# cross pages; with direct=1, from the disk directly; a tmpfs file (no
# FMODE_NOWAIT) through the pool. Then a read still waiting for the disk
# (QEMU throttles it, over QMP) is cancelled by rmmod. No leak, no splat.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../qmp.sh"

TREE=${1:-solutions}
W=$(mktemp -d)
DATA=$W/ext4 # the ext4 on rnvme's disk
REF=$W/ref   # the files' copies, off the ext4 (reading those caches nothing)
TMPFS=$W/tmpfs
mkdir -p "$DATA" "$REF" "$TMPFS"
# Stage 20's rnvme: the disk (scripts/test.sh builds it: USES in stage.env).
RNVME=$(dirname "$0")/../../build/modules-${RKW_FLAVOUR:-debug}/solutions/20-disk-limits/rnvme.ko
# QEMU's id of the controller (stage.env's serial).
CTRL=rkw-c0

cleanup() {
	loaded && rmmod "$MODULE" 2>/dev/null
	throttle_reads 0
	umount "$TMPFS" 2>/dev/null
	# rnvme's removal waits for the disk's last user: not while the ext4
	# is still mounted (a module left loaded holds a file open on it).
	umount "$DATA" 2>/dev/null || ! mountpoint -q "$DATA" || return
	grep -q "^rnvme " /proc/modules && rmmod rnvme 2>/dev/null
	rm -rf "$W"
}
# throttle_reads BPS: QEMU reads at most BPS bytes a second from the disk
# (0: as fast as it can).
throttle_reads() {
	qmp "{\"execute\":\"block_set_io_throttle\",\"arguments\":{\"id\":\"$CTRL\",\"bps\":0,\"bps_rd\":$1,\"bps_wr\":0,\"iops\":0,\"iops_rd\":0,\"iops_wr\":0}}" >/dev/null
}
drop_caches() { sync && echo 3 >/proc/sys/vm/drop_caches; }
# fnv FILE: FNV-1a 64 of FILE, as kread computes it.
fnv() {
	python3 -c 'import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)' "$1"
}
# kread DESC DIR NAME REF [PARAM...]: loads kread on DIR/NAME, waits for its
# lines, unloads it; checks the bytes and the hash against the copy REF and
# sets C_ONCE C_AFTER C_WAITS C_DIRECT C_POOL from its counts.
LINE='^kread: ([^:]+): ([0-9]+) bytes in ([0-9]+) read\(s\), fnv1a64 ([0-9a-f]{16})'
COUNTS='^kread: file reactor: ([0-9]+) read\(s\) at once, ([0-9]+) after ([0-9]+) page wait\(s\), ([0-9]+) direct, ([0-9]+) in the blocking pool'
# A read that never ends (its page wait never woken: page_wake) makes
# `rmmod` wait for ever (the entry is still queued): the module stays, and
# the checks that need it again fail, named.
STUCK=""
loaded() { [ -z "$STUCK" ] && grep -q "^$MODULE " /proc/modules; }
kread() {
	local desc=$1 dir=$2 name=$3 ref=$4 got size hash
	shift 4
	C_ONCE="" C_AFTER="" C_WAITS="" C_DIRECT="" C_POOL=""
	if [ -n "$STUCK" ]; then
		fail "$desc: kread reads the file" "not run: an earlier read never ended, and kread cannot be unloaded"
		return 1
	fi
	mark
	load root="$dir" name="$name" "$@" || return 1
	if wait_dmesg "$desc: kread logs what it read" "$COUNTS|^kread: read failed" 60; then
		unload
	else
		STUCK=1
		echo "# the read never ended: kread is left loaded (its rmmod would wait for the page wait's wake)"
	fi
	got=$(dmesg_since_mark | sed -nE "s/$LINE.*/\2 \4/p" | tail -1)
	size=$(stat -c %s "$ref")
	hash=$(fnv "$ref")
	if [ "$got" = "$size $hash" ]; then
		pass "$desc: the $size bytes read are the file's (FNV-1a $hash)"
	else
		fail "$desc: the bytes read are the file's" "expected: $size bytes, FNV-1a $hash" "got: ${got:-no line matching $LINE}" "$(excerpt)"
	fi
	read -r C_ONCE C_AFTER C_WAITS C_DIRECT C_POOL < <(dmesg_since_mark | sed -nE "s/$COUNTS.*/\1 \2 \3 \4 \5/p" | tail -1)
	echo "# $desc: ${C_ONCE:-?} at once, ${C_AFTER:-?} after ${C_WAITS:-?} page waits, ${C_DIRECT:-?} direct, ${C_POOL:-?} in the pool"
}

# ---- the disk, ext4, the files -----------------------------------------------------
hint "the test loads stage 20's solution (rnvme): build it with scripts/build-stage.sh solutions 20"
mark
if ! check "insmod stage 20's rnvme" insmod "$RNVME"; then
	cleanup
	finish
	exit
fi
DEV=""
for _ in $(seq 1 100); do
	DEV=$(dmesg_since_mark | sed -nE 's/^rnvme [0-9a-f:.]+: disk (rnvme[0-9]+n1): .*/\1/p' | tail -1)
	[ -n "$DEV" ] && [ -b "/dev/$DEV" ] && break
	sleep 0.1
done
if ! check "mkfs.ext4 on /dev/${DEV:-rnvme0n1}, mounted" sh -c "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/$DEV && mount /dev/$DEV $DATA"; then
	cleanup
	finish
	exit
fi
# Sizes that end inside a page; written to the copies, then to the ext4.
head -c 2097257 /dev/urandom >"$REF/big"
head -c 1048579 /dev/urandom >"$REF/odd"
head -c 1048581 /dev/urandom >"$REF/direct"
head -c 2097152 /dev/urandom >"$REF/slow"
cp "$REF"/* "$DATA"/
chmod -R a+rX "$DATA"

# ---- a file nothing cached: page waits ------------------------------------------
hint "FileReactor::read_at: IOCB_NOWAIT first (File::read_nowait); on EAGAIN, KiocbOp::poll_page (IOCB_WAITQ), awaited; Step::Again reads again; Step::Blocked goes to the pool"
drop_caches
# The disk slower than the kernel: under TCG, QEMU's disk can end a read
# before the debug kernel's read path even looks at the page (seen: every
# read at once). At 1 MiB/s the readahead's later requests wait in QEMU.
throttle_reads 1048576
kread "a file not in the page cache" "$DATA" big "$REF/big"
throttle_reads 0
if [ "${C_WAITS:-0}" -gt 0 ] && [ "${C_AFTER:-0}" -gt 0 ] && [ "${C_POOL:-x}" = 0 ]; then
	pass "reads waited for their pages and were woken ($C_WAITS page waits), none went to the blocking pool"
else
	fail "reads waited for their pages and were woken, none went to the blocking pool" "got: ${C_WAITS:-no} page waits, ${C_AFTER:-no} reads after one, ${C_POOL:-no count} in the pool (the page cache was dropped: the first read must wait)"
fi
hint "page_wake: for our folio and the lock bit, take the entry out of the queue, set PageUnlocked and wake the waker taken under the lock"
kread "the same file, cached" "$DATA" big "$REF/big"
if [ "${C_ONCE:-0}" -gt 0 ] && [ "${C_WAITS:-x}" = 0 ] && [ "${C_POOL:-x}" = 0 ]; then
	pass "a cached file is read at once ($C_ONCE reads), no wait, no pool"
else
	fail "a cached file is read at once, no wait, no pool" "got: ${C_ONCE:-no} at once, ${C_WAITS:-no count} page waits, ${C_POOL:-no count} in the pool"
fi

# ---- reads that cross pages --------------------------------------------------------
hint "read_at reads at pos, and the caller goes on from pos + n: a short read is no end"
drop_caches
kread "reads of 1000 bytes, across pages" "$DATA" odd "$REF/odd" chunk=1000

# ---- direct reads --------------------------------------------------------------------
hint "FileReactor::read_direct and KiocbOp::poll_direct: IOCB_DIRECT with ki_complete (direct_done), the bytes in the bounce buffer, copied out"
drop_caches
kread "direct=1" "$DATA" direct "$REF/direct" direct=1 chunk=262144
if [ "${C_DIRECT:-0}" -gt 0 ] && [ "${C_POOL:-x}" = 0 ]; then
	pass "direct=1: aligned reads went to the disk directly ($C_DIRECT), none to the pool"
else
	fail "direct=1: aligned reads went to the disk directly, none to the pool" "got: ${C_DIRECT:-no} direct, ${C_POOL:-no count} in the pool"
fi

# ---- a file system without async reads: the pool -----------------------------------
hint "File::async_support: tmpfs has no FMODE_NOWAIT; such a file is read by FileReactor::blocking, in the pool"
mount -t tmpfs -o size=8m kread-tmpfs "$TMPFS" && cp "$REF/odd" "$TMPFS/file"
kread "a tmpfs file" "$TMPFS" file "$REF/odd"
if [ "${C_POOL:-0}" -gt 0 ]; then
	pass "tmpfs (no FMODE_NOWAIT): its reads went to the blocking pool ($C_POOL)"
else
	fail "tmpfs (no FMODE_NOWAIT): its reads went to the blocking pool" "got: ${C_POOL:-no count} in the pool"
fi

# ---- a read cancelled while it waits for the disk ----------------------------------
hint "KiocbOp's drop: while the entry is in a page's wait queue, wait until page_wake took it out"
drop_caches
mark
# QEMU lets a request through when its bucket is (nearly) empty, whatever
# its size, and empties the bucket at 4 KiB/s: a 64 KiB read of the raw
# disk fills it, and the file's readahead, however large, waits about 16 s
# for its turn, or until the throttle is lifted. (At 32 KiB/s the bucket
# was empty again 2 s later: on a slow boot the readahead passed at once.)
if [ -n "$STUCK" ]; then
	fail "rmmod during a read waiting for the disk waits for the page" "not run: an earlier read never ended"
elif throttle_reads 4096 && dd if="/dev/$DEV" of=/dev/null bs=64K count=1 skip=900 iflag=direct 2>/dev/null &&
	load root="$DATA" name=slow; then
	inflight=0
	for _ in $(seq 1 100); do
		read -r r _ <"/sys/block/$DEV/inflight"
		[ "${r:-0}" -gt 0 ] && inflight=1 && break
		sleep 0.1
	done
	rmmod "$MODULE" 2>/dev/null &
	rmmod_pid=$!
	sleep 1
	if [ $inflight = 1 ] && kill -0 $rmmod_pid 2>/dev/null; then
		pass "rmmod during a read waiting for the disk waits for the page (the entry is still queued)"
	else
		fail "rmmod during a read waiting for the disk waits for the page" "got: $([ $inflight = 1 ] && echo "rmmod returned at once" || echo "no read of the disk in flight")"
	fi
	throttle_reads 0
	if within 60 tail --pid=$rmmod_pid -f /dev/null; then
		wait $rmmod_pid
		check "the cancelled read's rmmod ends once the page is in" sh -c "! grep -q '^$MODULE ' /proc/modules"
	else
		fail "the cancelled read's rmmod ends once the page is in" "rmmod still running after 60 s"
	fi
	expect_dmesg "the executor cancelled the read in flight" '^kread: executor stopped: 1 tasks spawned, 1 cancelled'
else
	fail "QEMU throttles the disk, kread loads" "QMP refused, or the module did not load" "$(excerpt)"
fi

# ---- the end -------------------------------------------------------------------------
cleanup
finish
