#!/bin/bash
# Stage 18 test (runs in the VM): the read-only 9P2000.L server, mounted by
# the kernel's own v9fs client. A fixture tree on tmpfs (empty, 1-byte and
# msize-straddling files, a sparse file over 4 GiB, 2000 entries, 40 levels,
# odd names, symlinks of every kind, a FIFO, modes, owners, timestamps) is
# exported and mounted at three msizes with cache=none and cache=loose, and
# compared with diff and find; writes must fail; a raw-protocol client
# (p9raw.py) tries what a mount never sends; rmmod while mounted and while a
# find runs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tcp-lib.sh"
RAW="python3 $(dirname "$0")/p9raw.py"
PORT=5640
W=$(mktemp -d)
EXPORT=$W/export  # the tree the server exports (tmpfs)
OUTSIDE=$W/outside # a directory next to it, which must stay out of reach
MNT=$W/mnt
FIND_FMT='%p %s %m %U %G %T@ %y %l\n'
# The debug kernel (KASAN, lockdep, kmemleak) runs 5-10 times slower under
# TCG, where one request over 9P costs 10 ms or more and every process
# started costs a good part of a second: there the test compares the whole
# tree at one mount (8 KiB, cache=loose) instead of six, with fewer
# msize-straddling files (the later checks mount at 1 MiB), skips stage 14's
# port-in-use check (a Python listener), and it compares
# the 2000-entry directory by its names (readdir only) instead of stat'ing
# every entry at every mount, and leaves the 40-level path out of diff
# (with cache=none, diff's full paths are walked again from the root at
# every level: 40 levels cost ~800 walks; find, which works relative to
# each directory, still compares it). The fast kernel runs it all.
# A step that can hang (a listing whose Treaddir offsets never reach the
# end goes on forever) has a deadline of its own, STEP_LIMIT seconds.
if [ "${RKW_FLAVOUR:-debug}" = fast ]; then
	STEP_LIMIT=90
	MOUNTS="8192:none 8192:loose 131072:none 131072:loose 1048576:none 1048576:loose"
	DELTAS="-25 -24 -11 -1 0 1 4096"
	FIND_SKIP=()
	DIFF_SKIP=()
else
	STEP_LIMIT=150
	MOUNTS="8192:loose"
	DELTAS="-11 0 1"
	FIND_SKIP=(many)
	DIFF_SKIP=(-xmany -xlevel1)
fi

# ---- the fixture --------------------------------------------------------------
T_START=$SECONDS
mkdir -p "$EXPORT" "$OUTSIDE/dir" "$MNT"
mount -t tmpfs -o size=64m r9p-fixture "$EXPORT"
echo "not for 9P clients" >"$OUTSIDE/dir/secret"
(
	cd "$EXPORT" || exit 1
	: >empty
	printf 1 >one
	mkdir d sizes many links special modes
	seq 1 20000 >d/numbers
	# Sizes around each msize tested, less and more than what one Rread holds.
	for m in 8192 131072 1048576; do
		for delta in $DELTAS; do
			head -c $((m + delta)) /dev/urandom >"sizes/m$m$delta"
		done
	done
	touch many/entry-{0000..1999}-with-a-longer-name # one process: fast under TCG
	deep=.
	for i in $(seq 1 40); do deep=$deep/level$i; done
	mkdir -p "$deep" && echo bottom >"$deep/file"
	echo space >"with space"
	echo newline >$'new\nline'
	echo dash >-leading-dash
	echo utf8 >"ünïcødé-日本語-ø"
	echo tab >$'tab\there'
	ln -s ../one links/relative
	ln -s "$EXPORT/one" links/absolute
	ln -s nowhere links/dangling
	ln -s "$OUTSIDE/dir" links/out
	ln -s ../d links/dir
	# Sparse: 5 GiB, with bytes written around the 4 GiB mark.
	truncate -s 5G special/sparse
	printf 'ABCD' | dd of=special/sparse bs=1 seek=$((4 * 1024 * 1024 * 1024 - 2)) conv=notrunc status=none
	mkfifo special/fifo
	for m in 000 400 600 644 751 2755 4711; do echo "$m" >"modes/f$m" && chmod "$m" "modes/f$m"; done
	mkdir modes/sticky && chmod 1777 modes/sticky
	chown 1234:5678 modes/f644
	touch -d '2001-02-03 04:05:06.123456789' modes/f600
	touch -d '1970-01-01 00:00:00' modes/f400
	touch -d '2099-12-31 23:59:59.999999999' modes/f751
	touch -h -d '2010-10-10 10:10:10.5' links/relative
) || fail "the fixture tree is built" "a command in the fixture script failed"

# The second export: ext4, on the NVMe namespace of this VM (the kernel's own
# nvme driver). Its directory positions are 64-bit hashes of the names
# (htree), not the small counters of tmpfs: a Treaddir that resumes from a
# count of entries, or keeps an offset in 32 bits, works on tmpfs only.
EXT4=$W/ext4
EXT4_NAMES=651
ext4_fixture() {
	modprobe nvme || return 1
	for _ in $(seq 1 200); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
	mkfs.ext4 -q -F /dev/nvme0n1 && mkdir -p "$EXT4" && mount /dev/nvme0n1 "$EXT4" || return 1
	mkdir "$EXT4/hashed" && (cd "$EXT4/hashed" && touch {a..z}{00..24}-a-name) &&
		seq 1 3000 >"$EXT4/hashed/m-a-name" && echo ext4 >"$EXT4/file"
}
EXT4_OK=""
if ext4_fixture >"$W/ext4.err" 2>&1; then EXT4_OK=yes; else
	fail "an ext4 fixture on /dev/nvme0n1 is built" "$(cat "$W/ext4.err")"
fi
# cleanup_fixture: unmount the fixture's file systems, remove the tree.
cleanup_fixture() {
	umount "$EXT4" 2>/dev/null
	umount "$EXPORT"
	rm -rf "$W"
}

# listing DIR: what find prints for every file under DIR (less FIND_SKIP),
# within STEP_LIMIT (exit status 124 if not).
listing() {
	local prune=() d
	for d in "${FIND_SKIP[@]}"; do prune+=(-path "./$d" -prune -o); done
	(set -o pipefail && cd "$1" && within "$STEP_LIMIT" find . "${prune[@]}" -printf "$FIND_FMT" | sort)
}
# inodes DIR OFFSET: each entry of DIR with the inode number its directory
# entry carries (d_ino, as readdir returns it; no stat), less OFFSET.
inodes() {
	within "$STEP_LIMIT" python3 -c 'import os, sys
for e in sorted(os.scandir(sys.argv[1]), key=lambda e: e.name):
    print(repr(e.name), e.inode() - int(sys.argv[2]))' "$@"
}
# timed_out DESC: the failure of a step that ran out of STEP_LIMIT; then
# the test ends, as every later check lists directories too.
timed_out() {
	fail "$1" "expected: done within $STEP_LIMIT s" \
		"got: still running: a directory listing that never ends (Treaddir offsets that do not move on) or a request never answered" \
		"$(excerpt 10)"
	umount -l "$MNT" 2>/dev/null
	loaded && rmmod "$MODULE"
	cleanup_fixture
	finish
	exit
}
listing "$EXPORT" >"$W/export.find"
echo "# the fixture took $((SECONDS - T_START)) s"
# What must not change: the listing, with ctimes (chmod would change them).
snapshot() {
	local prune=() d
	for d in "${FIND_SKIP[@]}"; do prune+=(-path "./$d" -prune -o); done
	(cd "$EXPORT" && find . "${prune[@]}" -printf '%p %s %m %U %G %T@ %C@ %l\n' | sort | md5sum)
}
BEFORE=$(snapshot)

# ---- parameters -------------------------------------------------------------------
hint "init refuses a missing or relative root= (pr_err and EINVAL)"
check_fails "insmod without root= is refused" insmod "$KO" port=$PORT
check_fails "insmod with a relative root= is refused" insmod "$KO" port=$PORT root=tmp
hint "init refuses an addr= that is not an IPv4 address"
check_fails "insmod with addr=bogus is refused" insmod "$KO" port=$PORT root="$EXPORT" addr=bogus
if [ "${RKW_FLAVOUR:-debug}" = fast ]; then
	hint "init logs listen's error and fails with it"
	port_in_use_refused 7115
fi

mark
load root="$EXPORT" port=$PORT workers=2 || {
	cleanup_fixture
	finish
	exit
}
expect_dmesg "the server says what it exports and where it listens" "serving $EXPORT .*127\.0\.0\.1:$PORT"

# ---- mounts -----------------------------------------------------------------------
mount9p() { mount -t 9p -o "trans=tcp,port=$PORT,version=9p2000.L,msize=$1,cache=$2" 127.0.0.1 "$MNT"; }

hint "Tversion, Tattach, Tgetattr and Twalk are what mount needs. 'a connection ended with an error: Error(38)' (ENOSYS) in dmesg: serve_requests is still a TODO; a mount that fails later: see step and Session::readdir"
mounted=0
for m in $MOUNTS; do
	msize=${m%:*} cache=${m#*:}
	mark
	if ! mount9p $msize $cache 2>"$W/err"; then
		fail "mount msize=$msize cache=$cache" "$(cat "$W/err")" "$(excerpt)"
		continue
	fi
	mounted=$((mounted + 1))
	hint "Tread (count clamped to msize - 11) and Treaddir (every entry once, offsets that resume): a diff names the file"
	t0=$SECONDS rc=0
	out=$(within "$STEP_LIMIT" diff -r --no-dereference -x special "${DIFF_SKIP[@]}" "$EXPORT" "$MNT" 2>&1) || rc=$?
	desc="msize=$msize cache=$cache: diff -r of the export and the mount is clean"
	if [ $rc -eq 0 ]; then
		pass "$desc ($((SECONDS - t0)) s)"
	elif [ $rc -eq 124 ]; then
		timed_out "$desc"
	else
		fail "$desc" "$(head -10 <<<"$out")" "$(excerpt 10)"
	fi
	hint "Tgetattr: mode, uid, gid, size, mtime (seconds and nanoseconds), and Treadlink for %l; a name listed twice or missing: Treaddir's offsets"
	t0=$SECONDS rc=0
	listing "$MNT" >"$W/mnt.find" || rc=$?
	desc="msize=$msize cache=$cache: find -printf '%p %s %m %U %G %T@ %y %l' is identical"
	if [ $rc -eq 0 ] && cmp -s "$W/export.find" "$W/mnt.find"; then
		pass "$desc ($((SECONDS - t0)) s)"
	elif [ $rc -eq 124 ]; then
		timed_out "$desc"
	else
		fail "$desc" "$(diff "$W/export.find" "$W/mnt.find" | head -10)"
	fi
	umount "$MNT"
done

if [ $mounted -eq 0 ]; then
	# Nothing else can work while no mount does. The module holds the
	# export's root open: unload it before unmounting the fixture.
	loaded && rmmod "$MODULE"
	cleanup_fixture
	finish
	exit
fi

mount9p 1048576 loose
hint "Treaddir: every entry once, whatever count the client asks for; each entry's offset is where the listing continues after it"
rc=0
names=$(within "$STEP_LIMIT" ls -f "$MNT/many" 2>&1) || rc=$?
[ $rc -ne 124 ] || timed_out "the 2000-entry directory lists the same names"
if [ "$(sort <<<"$names")" = "$(ls -f "$EXPORT/many" | sort)" ]; then
	pass "the 2000-entry directory lists the same names ($(wc -l <<<"$names") with . and ..)"
else
	fail "the 2000-entry directory lists the same names" "$(diff <(ls -f "$EXPORT/many" | sort) <(sort <<<"$names") | head -5)"
fi
# v9fs makes an inode number from a qid's path (QID2INO: path + 2 on a
# 64-bit kernel), the one in Rreaddir's entries too, which readdir(3)
# returns as d_ino: what ls -i and find -inum see without a stat.
hint "Treaddir: an entry's qid path is the inode number the file system gives it (the actor's ino), as Tgetattr's is"
bad=""
for d in . links many; do
	inodes "$EXPORT/$d" 0 >"$W/export.ino" 2>&1
	inodes "$MNT/$d" 2 >"$W/mnt.ino" 2>&1 || true
	cmp -s "$W/export.ino" "$W/mnt.ino" || bad="$bad $d: $(diff "$W/export.ino" "$W/mnt.ino" | sed -n 2,3p | tr '\n' ' ')"
done
if [ -z "$bad" ]; then
	pass "the inode numbers of the directory entries are the files' (readdir's d_ino, as ls -i shows them)"
else
	fail "the inode numbers of the directory entries are the files' (readdir's d_ino, as ls -i shows them)" "export (<) and mount (>, less 2):$bad"
fi
hint "Tstatfs: vfs_statfs on the fid's path, every field"
if [ "$(stat -f -c '%t %s %b %l' "$MNT" 2>&1)" = "$(stat -f -c '%t %s %b %l' "$EXPORT")" ]; then
	pass "stat -f shows the export's file system ($(stat -f -c 'type %t, %b blocks of %s' "$MNT"))"
else
	fail "stat -f shows the export's file system" "mount: $(stat -f -c '%t %s %b %l' "$MNT" 2>&1), export: $(stat -f -c '%t %s %b %l' "$EXPORT")"
fi
hint "Treadlink answers the target as stored; the server never follows it"
out=$(ls -l "$MNT/links" 2>&1)
if grep -q -- "relative -> ../one" <<<"$out" && grep -q -- "out -> $OUTSIDE/dir" <<<"$out" &&
	grep -q -- "dangling -> nowhere" <<<"$out"; then
	pass "ls -l shows the symlinks' targets"
else
	fail "ls -l shows the symlinks' targets" "$out"
fi
hint "Tread with offsets beyond 4 GiB: the offset is a u64, kernel_read takes a loff_t"
want=$(dd if="$EXPORT/special/sparse" bs=1 skip=$((4 * 1024 * 1024 * 1024 - 4)) count=8 status=none | od -An -tx1)
got=$(dd if="$MNT/special/sparse" bs=1 skip=$((4 * 1024 * 1024 * 1024 - 4)) count=8 status=none | od -An -tx1)
if [ "$(stat -c %s "$MNT/special/sparse")" = $((5 * 1024 * 1024 * 1024)) ] && [ -n "$got" ] && [ "$got" = "$want" ]; then
	pass "a 5 GiB sparse file: its size and the bytes around 4 GiB ($got)"
else
	fail "a 5 GiB sparse file: its size and the bytes around 4 GiB" "size $(stat -c %s "$MNT/special/sparse"), bytes '$got', expected '$want'"
fi
hint "Twalk: up to 16 names a request, each one step (step: a directory, one component)"
check "a file 40 directories deep reads back" grep -qx bottom "$MNT/$(cd "$EXPORT" && echo level*/level2/level3/level4/level5/level6/level7/level8/level9/level10/level11/level12/level13/level14/level15/level16/level17/level18/level19/level20/level21/level22/level23/level24/level25/level26/level27/level28/level29/level30/level31/level32/level33/level34/level35/level36/level37/level38/level39/level40/file)"

hint "every request that would change the export gets Rlerror EROFS (Tlopen with write flags too)"
bad=""
touch "$MNT/new" 2>/dev/null && bad="$bad touch-new"
touch "$MNT/one" 2>/dev/null && bad="$bad touch"
mkdir "$MNT/newdir" 2>/dev/null && bad="$bad mkdir"
rm -f "$MNT/one" 2>/dev/null && bad="$bad rm"
rmdir "$MNT/modes/sticky" 2>/dev/null && bad="$bad rmdir"
(echo x >"$MNT/one") 2>/dev/null && bad="$bad echo>"
(echo x >>"$MNT/d/numbers") 2>/dev/null && bad="$bad echo>>"
chmod 777 "$MNT/one" 2>/dev/null && bad="$bad chmod"
mv "$MNT/one" "$MNT/two" 2>/dev/null && bad="$bad mv"
ln -s x "$MNT/newlink" 2>/dev/null && bad="$bad ln-s"
err=$(touch "$MNT/one" 2>&1)
if [ -z "$bad" ] && [ "$(snapshot)" = "$BEFORE" ] && grep -qE 'Read-only file system|Permission denied|not permitted' <<<"$err"; then
	pass "writes (touch, mkdir, rm, rmdir, echo >, >>, chmod, mv, ln -s) fail and change nothing"
else
	fail "writes fail and change nothing" "succeeded:${bad:- none}; touch said: $err; export unchanged: $([ "$(snapshot)" = "$BEFORE" ] && echo yes || echo NO)"
fi
umount "$MNT"

# ---- the raw protocol -------------------------------------------------------------
mark
hint "p9raw.py names the check that failed; each is one rule of the chapter's confinement argument"
is_ok "raw 9P: '..', names with '/', symlinks, walks from a file, fid reuse, Tflush, unknown and write types, malformed frames" $RAW $PORT
expect_no_dmesg "and nothing is logged for them" 'r9p: .*(error|dropped)'
hint "serve_requests: a frame whose size is beyond msize, or below the 7-byte header (it can never be consumed), gets one Rlerror EPROTO (Session::refuse, with its tag) before the connection is given up"
is_ok "raw 9P: a frame announcing more than msize bytes, or fewer than its 7-byte header, gets one Rlerror EPROTO, then the connection closes" $RAW $PORT oversized
hint "a connection that ends must not harm the server: serve_requests returns, the others go on"
mount9p 8192 loose
check "after all of it, a fresh mount serves" cmp "$EXPORT/sizes/m8192-11" "$MNT/sizes/m8192-11"

# ---- rmmod under a mount and during a find -------------------------------------------
hint "Drop: executor.shutdown() cancels the tasks; dropping a task's future closes its socket and files"
(while find "$MNT" -printf "$FIND_FMT" >/dev/null 2>&1; do :; done) &
finder=$!
sleep 2
mark
timed_rmmod
if [ $RMMOD_RC -eq 0 ] && ! loaded; then
	pass "rmmod while mounted and while a find runs returns (${RMMOD_MS} ms)"
else
	fail "rmmod while mounted and while a find runs returns" "rmmod exited with $RMMOD_RC after ${RMMOD_MS} ms" "$(excerpt)"
fi
# The find loop ends at its first error; a hung one is killed.
for _ in $(seq 1 100); do kill -0 $finder 2>/dev/null || break; sleep 0.1; done
if kill -0 $finder 2>/dev/null; then
	kill $finder
	fail "the client sees errors, not a hang" "find still runs 10 s after rmmod"
else
	out=$(ls "$MNT" 2>&1)
	if [ -n "$out" ] && ! ls "$MNT/d" >/dev/null 2>&1; then pass "the client sees errors, not a hang ($(head -1 <<<"$out"))"; else pass "the client sees errors, not a hang"; fi
fi
wait $finder 2>/dev/null
umount -l "$MNT" 2>/dev/null
expect_dmesg "the server logs that it stopped" 'stopped after [0-9]+ connections'

hint "nothing may survive rmmod: no task, no socket, no file reference"
load root="$EXPORT" port=$PORT workers=2
if loaded; then
	mount9p 131072 loose 2>/dev/null
	check "insmod again serves a new mount" diff -r --no-dereference "$EXPORT/sizes" "$MNT/sizes"
	umount "$MNT" 2>/dev/null
	unload
fi

# ---- an export on ext4: hashed directory positions --------------------------------
hint "Treaddir on ext4: positions are 64-bit hashes of the names, not counters: an entry's offset is the next entry's position as the file system gave it (a u64), never a count of entries"
if [ -z "$EXT4_OK" ]; then
	skip "an ext4 export ($EXT4_NAMES names in one directory): listed whole, in pieces" "no ext4 fixture"
elif load root="$EXT4" port=$PORT workers=2; then
	# Listed in pieces of 200 bytes (a handful of entries a reply), each
	# resumed from the offset the last entry gave.
	rc=0
	out=$(within "$STEP_LIMIT" $RAW $PORT list hashed 200 2>&1) || rc=$?
	want=$(ls -fA "$EXT4/hashed" | sort)
	desc="an ext4 export: its $EXT4_NAMES-name directory, read by Treaddir in pieces of 200 bytes, lists every name once"
	if [ $rc -eq 124 ]; then
		timed_out "$desc"
	elif [ $rc -eq 0 ] && [ "$(sort <<<"$out")" = "$want" ]; then
		pass "$desc ($(wc -l <<<"$out") names)"
	else
		fail "$desc" "got (exit status $rc): $(sort <<<"$out" | diff <(echo "$want") - | head -5)"
	fi
	mark
	if mount9p 8192 none 2>"$W/err"; then
		t0=$SECONDS rc=0
		out=$(within "$STEP_LIMIT" diff -r "$EXT4" "$MNT" 2>&1) || rc=$?
		desc="an ext4 export, msize 8 KiB: diff -r of the export and the mount is clean"
		if [ $rc -eq 0 ]; then
			pass "$desc ($((SECONDS - t0)) s)"
		elif [ $rc -eq 124 ]; then
			timed_out "$desc"
		else
			fail "$desc" "$(head -10 <<<"$out")" "$(excerpt 10)"
		fi
		inodes "$EXT4/hashed" 0 >"$W/export.ino" 2>&1
		inodes "$MNT/hashed" 2 >"$W/mnt.ino" 2>&1 || true
		check "an ext4 export: the directory entries' inode numbers are the files'" cmp "$W/export.ino" "$W/mnt.ino"
		umount "$MNT"
	else
		fail "an ext4 export: mount msize=8192 cache=none" "$(cat "$W/err")" "$(excerpt)"
	fi
	unload
fi

# ---- taking turns: one worker, a connection that never has to wait -------------------
hint "serve_requests: every TURNS requests yield_now().await, so that a connection with requests waiting lets the others have a turn"
if load root="$EXPORT" port=$PORT workers=1; then
	is_ok "raw 9P, one worker: a connection flooding it with pipelined requests takes turns: another is answered long before the flood ends" $RAW $PORT fair
	unload
fi
cleanup_fixture
finish
