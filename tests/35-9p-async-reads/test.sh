#!/bin/bash
# Stage 35 test (runs in the VM): the capstone. Stage 20's rnvme makes the
# disk, ext4 goes on it, r9p exports it and v9fs mounts it: the mount reads
# back what was written (diff -r), through the file reactor, with no read
# in the blocking pool (the module's last log line counts them) and with
# page waits that the disk's interrupt ended; direct=1 reads from the disk
# directly; a tmpfs export (no FMODE_NOWAIT) uses the pool. Then the slow
# disk: with the disk throttled (QEMU, over QMP) and one executor worker, a
# read stuck on the disk does not hold up another client's stat. No leak,
# no splat.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"

TREE=${1:-solutions}
PORT=5640
W=$(mktemp -d)
DATA=$W/ext4 # the ext4 on rnvme's disk
MNT=$W/mnt   # the 9P mount (mount9p)
MNT2=$W/mnt2 # a second client's
TMPFS=$W/tmpfs
mkdir -p "$DATA" "$MNT" "$MNT2" "$TMPFS"
# Stage 20's rnvme: the disk (scripts/test.sh builds it: USES in stage.env).
RNVME=$(dirname "$0")/../../build/modules-${RKW_FLAVOUR:-debug}/solutions/20-disk-limits/rnvme.ko
# QEMU's id of the controller (stage.env's serial).
CTRL=rkw-c0
# The module's last word (`Reactored::stopped`).
COUNTS='^r9p: file reactor: ([0-9]+) read\(s\) at once, ([0-9]+) after ([0-9]+) page wait\(s\), ([0-9]+) direct, ([0-9]+) in the blocking pool'

cleanup() {
	umount "$MNT2" 2>/dev/null
	umount "$MNT" 2>/dev/null
	loaded && rmmod "$MODULE" 2>/dev/null
	throttle 0
	umount "$TMPFS" 2>/dev/null
	# rnvme's removal waits for the disk's last user: not while the ext4
	# is still mounted (a module left loaded holds a file open on it).
	umount "$DATA" 2>/dev/null || ! mountpoint -q "$DATA" || return
	grep -q "^rnvme " /proc/modules && rmmod rnvme 2>/dev/null
	rm -rf "$W"
}
# throttle_reads BPS: QEMU reads at most BPS bytes a second from the disk
# (0: as fast as it can); `throttle 0` lifts it.
throttle_reads() {
	qmp "{\"execute\":\"block_set_io_throttle\",\"arguments\":{\"id\":\"$CTRL\",\"bps\":0,\"bps_rd\":$1,\"bps_wr\":0,\"iops\":0,\"iops_rd\":0,\"iops_wr\":0}}" >/dev/null
}
throttle() { throttle_reads 0; }
# counts: "AT_ONCE AFTER_WAIT PAGE_WAITS DIRECT BLOCKING" from the module's
# last log line since the mark.
counts() { dmesg_since_mark | sed -nE "s/$COUNTS.*/\1 \2 \3 \4 \5/p" | tail -1; }
# unload_counts DESC: unload the server and read its counts (into C_*).
unload_counts() {
	umount "$MNT2" 2>/dev/null
	umount "$MNT" 2>/dev/null
	unload
	read -r C_ONCE C_AFTER C_WAITS C_DIRECT C_POOL < <(counts)
	if [ -n "${C_POOL:-}" ]; then
		pass "$1: the module counts its reads ($C_ONCE at once, $C_AFTER after $C_WAITS page waits, $C_DIRECT direct, $C_POOL in the pool)"
	else
		fail "$1: the module counts its reads" "expected: a line matching $COUNTS" "$(excerpt)"
	fi
}
drop_caches() { sync && echo 3 >/proc/sys/vm/drop_caches; }

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
(
	cd "$DATA" || exit 1
	mkdir -p small deep/er/and/deeper
	printf 1 >one
	: >empty
	for n in 1 4095 4096 4097 65536 131083 1048579; do head -c $n /dev/urandom >"s$n"; done
	head -c 4M /dev/urandom >big
	head -c 2M /dev/urandom >slow
	head -c 1M /dev/urandom >direct
	seq 1 30000 >numbers
	for i in $(seq 1 60); do echo "file $i" >"small/f$i"; done
	echo bottom >deep/er/and/deeper/file
) || fail "the files are written to the ext4" "a command in the fixture script failed"
chmod -R a+rX "$DATA"
# What the mount must read back, kept off the ext4 (tmpfs): diff reading
# the ext4 itself would bring its pages into the cache before r9p reads them.
REF=$W/ref
cp -a "$DATA" "$REF"
# And a file nothing reads before the slow disk's check (so the page cache
# has none of it: diff -r leaves it out), its copy beside the reference.
head -c 1M /dev/urandom >"$W/cold" && cp "$W/cold" "$DATA/cold"

# ---- the capstone: the whole export, read through 9P --------------------------------
hint "Reactored::read: the future of self.reactor.read_at(file, buf, pos), which Session::read awaits (stage 34's read_at: IOCB_NOWAIT, then IOCB_WAITQ)"
# Nothing in the page cache: every file's data comes from the disk.
drop_caches
mark
load root="$DATA" port=$PORT workers=2 || {
	cleanup
	finish
	exit
}
if check "mount the export over 9P (cache=none)" mount9p 262144 none; then
	check "diff -r: the ext4 on rnvme, read back over 9P, is what was written" within 120 diff -r -x cold "$REF" "$MNT"
fi
unload_counts "buffered reads of the ext4"
if [ "${C_POOL:-x}" = 0 ]; then
	pass "no read of the ext4 went to the blocking pool: no worker slept on the disk"
else
	fail "no read of the ext4 went to the blocking pool: no worker slept on the disk" "got: ${C_POOL:-no count} in the pool"
fi
if [ "${C_WAITS:-0}" -gt 0 ] && [ "${C_AFTER:-0}" -gt 0 ]; then
	pass "reads waited for their pages, and were woken ($C_WAITS page waits): the data came from the disk's interrupt to the task's waker"
else
	fail "reads waited for their pages, and were woken" "got: ${C_WAITS:-no} page waits, ${C_AFTER:-no} reads after one (the page cache was dropped: the first read of each file must wait)"
fi

# ---- direct reads --------------------------------------------------------------------
hint "FileReactor::read_direct and KiocbOp::poll_direct: IOCB_DIRECT with ki_complete (direct_done), the bytes in the bounce buffer, copied out"
drop_caches
mark
load root="$DATA" port=$PORT direct=1 || {
	cleanup
	finish
	exit
}
if check "mount the export over 9P again (direct=1)" mount9p 262144 none; then
	# Reads of 1 MiB: v9fs sends each as Treads of what msize allows, at
	# offsets that stay page-aligned.
	check "with direct=1, files read over 9P are what was written" within 60 sh -c "for f in direct s1048579 s4097; do dd if=$MNT/\$f bs=1M status=none | cmp - $REF/\$f || exit 1; done"
fi
unload_counts "direct reads"
if [ "${C_DIRECT:-0}" -gt 0 ] && [ "${C_POOL:-x}" = 0 ]; then
	pass "direct=1: aligned reads went to the disk directly ($C_DIRECT), none to the pool"
else
	fail "direct=1: aligned reads went to the disk directly, none to the pool" "got: ${C_DIRECT:-no} direct, ${C_POOL:-no count} in the pool"
fi

# ---- a file system without async reads: the pool -----------------------------------
hint "File::async_support: tmpfs has no FMODE_NOWAIT; such a file is read by FileReactor::blocking, in the pool"
mount -t tmpfs -o size=8m r9p-tmpfs "$TMPFS" && head -c 300000 /dev/urandom >"$TMPFS/file"
mark
load root="$TMPFS" port=$PORT blocking=1 || {
	cleanup
	finish
	exit
}
if check "mount a tmpfs export over 9P" mount9p 65536 none; then
	check "a tmpfs file read over 9P (through the blocking pool) is what was written" within 60 cmp "$TMPFS/file" "$MNT/file"
fi
unload_counts "reads of a tmpfs"
if [ "${C_POOL:-0}" -gt 0 ]; then
	pass "tmpfs (no FMODE_NOWAIT): its reads went to the blocking pool ($C_POOL)"
else
	fail "tmpfs (no FMODE_NOWAIT): its reads went to the blocking pool" "got: ${C_POOL:-no count} in the pool"
fi

# ---- the slow disk: a stuck read holds up no other client ---------------------------
hint "Session::read awaits Policy::read: with one executor worker, a read waiting for the disk must leave the worker to other connections"
# The data of `cold` was never read; its inode and every name are in memory
# (stat'ed after the drop): the other client's Tgetattr needs no disk.
drop_caches
find "$DATA" -exec stat {} + >/dev/null
mark
load root="$DATA" port=$PORT workers=1 || {
	cleanup
	finish
	exit
}
# QEMU lets a request through when its bucket is (nearly) empty, whatever
# its size, and empties it at 4 KiB/s: a direct read of the raw disk, 64
# KiB at a time, in the background, keeps it full, so that the file's
# readahead waits in QEMU's queue behind it until the throttle is lifted.
# (One 64 KiB read before the client, as this test first did, kept the
# disk slow 16 s: the debug kernel took 20 s to get the Tread out, the
# fast one 2 s at 32 KiB/s, and the readahead passed at once.)
if throttle_reads 4096; then
	dd if="/dev/$DEV" of=/dev/null bs=64K count=256 skip=900 iflag=direct 2>/dev/null &
	filler=$!
	echo "# in the page cache before the read: $(fincore -n -o PAGES "$DATA/cold" 2>/dev/null) pages of cold"
	python3 "$(dirname "$0")/overtake.py" $PORT cold "$W/cold" "/sys/block/$DEV/inflight" "$W/go" >"$W/overtake.out" 2>&1 &
	client=$!
	for _ in $(seq 1 600); do
		grep -q '^ready' "$W/overtake.out" && break
		kill -0 $client 2>/dev/null || break
		sleep 0.1
	done
	throttle 0
	kill $filler 2>/dev/null
	wait $filler 2>/dev/null
	touch "$W/go"
	for _ in $(seq 1 1200); do
		kill -0 $client 2>/dev/null || break
		sleep 0.1
	done
	kill $client 2>/dev/null
	wait $client 2>/dev/null
	run_checks cat "$W/overtake.out"
else
	fail "QEMU throttles the disk (QMP block_set_io_throttle)" "QMP refused or did not answer"
fi
unload_counts "the slow disk"

# ---- the end -------------------------------------------------------------------------
cleanup
no_leaks
kernel_is_clean
finish
