#!/bin/bash
# Stage 03 test (runs in the VM): /dev/rmisc from user space: round trips,
# concurrent writers, ioctls, the error paths, unloading while open.
. "$(dirname "$0")/../lib.sh"
CTL="python3 $(dirname "$0")/rmisc_ctl.py"
DEV=/dev/rmisc
W=$(mktemp -d)

# is DESC EXPECTED CMD...: CMD prints EXPECTED.
is() {
	local desc=$1 want=$2 got
	shift 2
	got=$("$@" 2>&1)
	if [ "$got" = "$want" ]; then pass "$desc"; else fail "$desc" "expected: $want" "got:      $got"; fi
}

hint "capacity must be 1..=1048576"
check_fails "capacity=0 is refused" insmod "$KO" capacity=0
hint "init registers the device"
load capacity=65536 || { finish; exit; }
check "$DEV exists and is a character device" test -c "$DEV"

hint "write_iter appends to BUFFER and returns the byte count; read_iter returns it"
check "writing \"hello, kernel\" to $DEV succeeds" sh -c "echo 'hello, kernel' >$DEV"
is "echo + cat round trip" "hello, kernel" cat "$DEV"
check "writing a second line succeeds" sh -c "echo 'second line' >$DEV"
is "writes append" "$(printf 'hello, kernel\nsecond line')" cat "$DEV"
hint "RMISC_GET_LEN writes the buffer length as a u64, all 8 bytes, to the user pointer (the test fills them with 0xff first)"
is "RMISC_GET_LEN reports the length" 26 $CTL len
hint "RMISC_GET_CAPACITY reports capacity()"
is "RMISC_GET_CAPACITY reports the capacity" 65536 $CTL capacity
hint "RMISC_CLEAR empties the buffer"
is "RMISC_CLEAR succeeds" ok $CTL clear
is "the buffer is empty after RMISC_CLEAR" 0 $CTL len
$CTL clear >/dev/null

hint "write_iter must set the file position (kiocb.ki_pos_mut()) to the buffer's new end, whatever it held before, so a read on the same file continues after it"
is "a write then a read on the same read-write file, after an earlier write: the read is at the end (EOF)" EOF $CTL write-then-read
$CTL clear >/dev/null

hint "read_iter must honour and advance the file position (simple_read_from_buffer)"
head -c 10000 /dev/urandom >"$W/blob"
dd if="$W/blob" of="$DEV" bs=10000 2>/dev/null
dd if="$DEV" of="$W/back" bs=333 2>/dev/null # many small reads
check "10000 random bytes come back intact through 333-byte reads" cmp "$W/blob" "$W/back"
$CTL clear >/dev/null

hint "one lock for the whole write: records of concurrent writers must never interleave"
for w in 1 2 3 4; do
	for i in $(seq 200); do printf '%-63s\n' "writer $w record $i"; done >"$W/in$w"
done
for w in 1 2 3 4; do dd if="$W/in$w" of="$DEV" bs=64 2>/dev/null & done
wait
sort "$W"/in? >"$W/want"
sort <"$DEV" >"$W/got"
check "4 concurrent writers x 200 records: none lost, none torn" cmp "$W/want" "$W/got"
is "and the length is exactly 4 x 200 x 64" 51200 $CTL len
$CTL clear >/dev/null

hint "a write that does not fit fails with ENOSPC and writes nothing"
$CTL clear >/dev/null
head -c 65536 /dev/zero | dd of="$DEV" bs=65536 2>/dev/null
is "filling the buffer to capacity works" 65536 $CTL len
check_fails "one more byte is refused" dd if=/dev/zero of="$DEV" bs=1 count=1
is "with ENOSPC (No space left on device)" ENOSPC $CTL write-one
$CTL clear >/dev/null
check_fails "a 70000-byte write (over capacity) is refused" dd if=/dev/zero of="$DEV" bs=70000 count=1
is "and nothing of it was kept" 0 $CTL len
$CTL clear >/dev/null

hint "ioctl: unknown commands get ENOTTY; a bad user pointer gives EFAULT"
is "an unknown ioctl fails with ENOTTY" ENOTTY $CTL unknown
is "RMISC_GET_LEN to a bad address fails with EFAULT" EFAULT $CTL bad-pointer-ioctl
hint "write_iter: copy_from_iter_vec copies less than iov.len() from a bad address: EFAULT, nothing kept"
$CTL clear >/dev/null
is "write() from a bad address fails with EFAULT" EFAULT $CTL bad-pointer-write
is "and leaves the buffer unchanged" 0 $CTL len
hint "write_iter: when copy_from_iter_vec copied only part (the rest of the user's buffer is unreadable), truncate the buffer back to its old length before failing with EFAULT"
is "a write whose second half is unreadable fails with EFAULT" EFAULT $CTL partly-bad-write
is "and keeps nothing of its readable first half" 0 $CTL len

hint "an open file holds a reference on the module"
exec 3<"$DEV"
check_fails "rmmod is refused while $DEV is open" rmmod "$MODULE"
exec 3<&-
unload
check_fails "$DEV is gone after rmmod" test -e "$DEV"
reload_twice
rm -rf "$W"
finish
