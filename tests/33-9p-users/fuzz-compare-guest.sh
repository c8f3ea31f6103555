#!/bin/bash
# make fuzz, the comparison (runs in the VM; scripts/fuzz-compare.sh boots
# it): the same fuzzers, with the same seed and budget, against r9p (stage
# 33), diod and QEMU's own 9p server, all exporting the same fixture.
#   fuzz-compare-guest.sh KO COUNT SEED FIXTURE
# KO: stage 33's r9p.ko; COUNT: the messages (and system calls) each
# fuzzer sends; FIXTURE: the host's fixture, which QEMU exports as the
# virtio-9p tag rkwfz and r9p and diod from a copy in a tmpfs.
# Two fuzzers:
#   raw    tests/p9h.py fuzz: malformed and semi-valid frames over TCP,
#          8 connections at a time (r9p and diod; QEMU's server speaks
#          virtio only, which no user-space client reaches)
#   mount  tests/p9h.py mountfuzz: random read-only system calls on a v9fs
#          mount (msize 65536, cache=none) of each server
# Prints "compare SERVER FUZZER key=value ..." lines: sent (messages or
# calls), seconds, then what each fuzzer counts, and crashed=0|1 (the
# server is gone, or the kernel logged a BUG, Oops or WARNING).
set -u
KO=$1 COUNT=$2 SEED=$3 FIX=$4
H=$(dirname "$0")/../p9h.py
W=$(mktemp -d)
E=$W/export
mkdir -p "$E" "$W/r9p" "$W/diod" "$W/qemu"
chmod 755 "$W"
mount -t tmpfs -o size=64m rkw-fuzz "$E"
cp -a "$FIX/." "$E/"
dmesg -C

insmod "$KO" root="$E" port=5640 max_conns=16 max_msize=65536 || exit 1
opts="version=9p2000.L,msize=65536,cache=none"
DIOD=""
# diod, started (again, if it died: each fuzzer gets a live one, and a
# crash is counted for the fuzzer it happened under), and mounted.
diod_up() {
	if [ -n "$DIOD" ] && kill -0 "$DIOD" 2>/dev/null; then
		return
	fi
	if [ -n "$DIOD" ]; then
		wait "$DIOD" 2>/dev/null
		echo "# diod had died (status $?): started again"
		umount -l "$W/diod" 2>/dev/null
	fi
	diod -f -n -l 127.0.0.1:5641 -e "$E" -L "$W/diod.log" 2>>"$W/diod.err" &
	DIOD=$!
	sleep 1
	mount -t 9p -o "trans=tcp,$opts,port=5641,aname=$E" 127.0.0.1 "$W/diod" || echo "# diod: no mount"
}
diod_up
mount -t 9p -o "trans=tcp,$opts,port=5640" 127.0.0.1 "$W/r9p" || echo "# r9p: no mount"
mount -t 9p -o "trans=virtio,$opts" rkwfz "$W/qemu" || echo "# qemu: no mount"
sleep 2
kill -0 "$DIOD" 2>/dev/null || echo "# diod died within 2 s of its mount"

# crashed SERVER: 1 if the server is gone or the kernel logged a bug.
crashed() {
	local gone=0
	case $1 in
	r9p) grep -q '^r9p ' /proc/modules && ls "$W/r9p" >/dev/null 2>&1 || gone=1 ;;
	diod) kill -0 "$DIOD" 2>/dev/null || gone=1 ;;
	qemu) ls "$W/qemu" >/dev/null 2>&1 || gone=1 ;;
	esac
	dmesg | grep -qE 'BUG|Oops|WARNING|general protection' && gone=1
	echo $gone
}

stat_line() { # stat_line PREFIX OUTPUT: the fuzzer's "# PREFIX-stats" line's fields
	sed -n "s/^# $1-stats //p" <<<"$2" | tail -1
}

for server in r9p diod; do
	[ $server = diod ] && diod_up
	port=$([ $server = r9p ] && echo 5640 || echo 5641)
	out=$(P9H_ANAME=$([ $server = diod ] && echo "$E") timeout 1800 python3 "$H" fuzz $port "$SEED" "$COUNT" 8 2>&1)
	grep -E '^(ok|not-ok|# [^f])' <<<"$out" | sed "s/^/# $server raw: /" | head -5
	hangs=$(grep -c 'reads nothing for 30 s' <<<"$out")
	echo "compare $server raw $(stat_line fuzz "$out") hangs=$hangs crashed=$(crashed $server)"
done
for server in r9p diod qemu; do
	[ $server = diod ] && diod_up
	out=$(timeout 1800 python3 "$H" mountfuzz "$W/$server" "$SEED" "$COUNT" 2>&1)
	grep -E '^(ok|not-ok)' <<<"$out" | sed "s/^/# $server mount: /"
	echo "compare $server mount $(stat_line mountfuzz "$out") crashed=$(crashed $server)"
done
dmesg | grep -E 'BUG|Oops|WARNING|segfault|r9p' | head -20 | sed 's/^/# dmesg: /'
tail -5 "$W/diod.err" "$W/diod.log" 2>/dev/null | sed 's/^/# diod: /'
umount "$W/r9p" "$W/diod" "$W/qemu" 2>/dev/null
kill "$DIOD" 2>/dev/null
rmmod r9p
