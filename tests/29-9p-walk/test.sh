#!/bin/bash
# Stage 29 test (runs in the VM): the 9P server walks its export, confined
# to it. The fixture tree of tests/p9-lib.sh (empty, 1-byte and
# msize-straddling files, a sparse file over 4 GiB, 40 levels, odd names,
# symlinks of every kind, modes, owners, timestamps) is mounted at three
# msizes with cache=none and cache=loose; every path the export has is
# read and stat'ed through the mount by its name (no listing: that is stage
# 30) and compared; writes must fail; a raw-protocol client (p9raw.py)
# tries the walks a mount never sends; rmmod while mounted; an export of
# /proc; a leased file, a FIFO, tmpfs mounts inside the export (refused, then
# crossed with cross_mounts=1).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tcp-lib.sh"
. "$(dirname "$0")/../p9-lib.sh"

p9_tree
BEFORE=$(snapshot)
# Every path in the export (less `many`, 2000 entries of one kind: a listing
# is stage 30's), and its regular files (less the sparse file, read below),
# NUL-terminated: one of the names has a newline.
(cd "$EXPORT" && find . -path ./many -prune -o -print0) | sort -z >"$W/paths"
(cd "$EXPORT" && find . -path ./many -prune -o -path ./special -prune -o -type f -print0) | sort -z >"$W/files"
# What stat says of each path: name, size, mode, owner, group, mtime to the
# nanosecond, type, and a symlink's target.
STAT_FMT='%n %s %a %U %G %.9Y %F %N\n'
# stat_all DIR: STAT_FMT for every path of the export, as seen under DIR.
stat_all() { (cd "$1" && within "$STEP_LIMIT" xargs -0 -a "$W/paths" stat --printf "$STAT_FMT" 2>&1); }
stat_all "$EXPORT" >"$W/export.stat"

mark
p9_load root="$EXPORT" port=$PORT workers=2

# ---- mounts -----------------------------------------------------------------------
hint "step: walking a name is what every path under the mount needs. 'a connection ended with an error: Error(38)' (ENOSYS) in dmesg, or 'Function not implemented': step is still a TODO"
mounted=0
for m in $MOUNTS; do
	msize=${m%:*} cache=${m#*:}
	mark
	if ! mount9p $msize $cache 2>"$W/err"; then
		fail "mount msize=$msize cache=$cache" "$(cat "$W/err")" "$(excerpt)"
		continue
	fi
	mounted=$((mounted + 1))
	t0=$SECONDS bad="" n=0
	while IFS= read -r -d '' f; do
		n=$((n + 1))
		cmp -s "$EXPORT/$f" "$MNT/$f" || { bad="$f: $(cmp "$EXPORT/$f" "$MNT/$f" 2>&1 | head -1)" && break; }
	done <"$W/files"
	if [ -z "$bad" ]; then
		pass "msize=$msize cache=$cache: every file reads back by its path ($n files, $((SECONDS - t0)) s)"
	else
		fail "msize=$msize cache=$cache: every file reads back by its path" "$bad" "$(excerpt 10)"
	fi
	hint "Tgetattr: mode, uid, gid, size, mtime (seconds and nanoseconds), and Treadlink for a symlink's target; step: '.', '..' and names as the chapter's rules say"
	t0=$SECONDS rc=0
	stat_all "$MNT" >"$W/mnt.stat" || rc=$?
	desc="msize=$msize cache=$cache: stat of every path shows what the export's does ('%n %s %a %U %G %.9Y %F %N')"
	if [ $rc -eq 124 ]; then
		timed_out "$desc"
	elif cmp -s "$W/export.stat" "$W/mnt.stat"; then
		pass "$desc ($(tr -cd '\0' <"$W/paths" | wc -c) paths, $((SECONDS - t0)) s)"
	else
		fail "$desc" "$(diff "$W/export.stat" "$W/mnt.stat" | head -10)"
	fi
	umount "$MNT"
done

if [ $mounted -eq 0 ]; then
	loaded && rmmod "$MODULE"
	cleanup_fixture
	finish
	exit
fi

mount9p 1048576 loose
hint "Treadlink answers the target as stored; the server never follows it"
out=$(ls -l "$MNT/links/relative" "$MNT/links/out" "$MNT/links/dangling" 2>&1)
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
hint "the namespace of this stage (Confined) has walking only: a listing still gets the trait's default, EOPNOTSUPP, until stage 30"
p9_refused "listing is stage 30's: ls of a directory gets EOPNOTSUPP" ls "$MNT/d"
hint "open_read (given, vfs.rs) opens without O_NOATIME, which open(2) grants the file's owner only: a read through the server updates the access time, as read(2) does"
echo atime >"$EXPORT/atime" && touch -a -d '2001-01-01 00:00:00' "$EXPORT/atime"
cat "$MNT/atime" >/dev/null 2>&1
at=$(stat -c %X "$EXPORT/atime")
if [ "$at" -gt $((978307200 + 86400)) ]; then
	pass "a read through the server updates the file's access time (2001 -> $(date -d "@$at" +%F))"
else
	fail "a read through the server updates the file's access time" "atime still $(date -d "@$at" +%F): opened with O_NOATIME?"
fi
rm -f "$EXPORT/atime"
umount "$MNT"


# ---- the raw protocol -------------------------------------------------------------
mark
hint "p9raw.py names the check that failed; each is one rule of the chapter's confinement argument"
is_ok "raw 9P: '..', names with '/', NULs, symlinks, walks from a file, fid reuse, a file read" $RAW $PORT walks
expect_no_dmesg "and nothing is logged for them" 'r9p: .*(error|dropped)'

# ---- rmmod under a mount ------------------------------------------------------------
mount9p 8192 loose
p9_rmmod_under "a cat loop" cat "$MNT/d/numbers"

# ---- links a file system reads itself ----------------------------------------------
# /proc's "magic" links (cwd, exe, fd/N) have their own i_op->readlink:
# their get_link jumps the caller's path walk, which a worker has none of.
hint "Treadlink of a link with its own i_op->readlink (/proc/<pid>/cwd) is refused, EOPNOTSUPP (the given File::readlink); vfs_get_link on it dereferences current->nameidata, NULL in a worker"
load root=/proc port=$PORT workers=2
if loaded; then
	mount9p 8192 none
	mark
	rc=0
	out=$(within "$STEP_LIMIT" readlink -v "$MNT/1/cwd" 2>&1) || rc=$?
	if [ $rc -eq 124 ]; then
		timed_out "an export of /proc: readlink of its magic link 1/cwd is refused (EOPNOTSUPP)"
	fi
	if [ $rc -ne 0 ] && grep -q "not supported" <<<"$out" && [ "$(readlink "$MNT/mounts")" = self/mounts ]; then
		pass "an export of /proc: readlink of its magic link 1/cwd is refused (${out##*: }); of the plain link mounts, read"
	else
		fail "an export of /proc: readlink of its magic link 1/cwd is refused (EOPNOTSUPP)" "exit $rc: $out" "$(excerpt 10)"
	fi
	expect_no_dmesg "and the kernel logs no oops" 'BUG:|Oops|general protection'
	umount "$MNT"
	unload
fi

# ---- a leased file, mounts inside the export ----------------------------------------
echo leased >"$EXPORT/leased"
mkdir -p "$EXPORT/mnt-a" "$EXPORT/mnt-b"
mount -t tmpfs -o size=1m r9p-inner-a "$EXPORT/mnt-a" && echo a >"$EXPORT/mnt-a/f" &&
	mount -t tmpfs -o size=1m r9p-inner-b "$EXPORT/mnt-b" && echo b >"$EXPORT/mnt-b/f" ||
	fail "tmpfs mounts inside the export (the fixture)" "mount failed"
load root="$EXPORT" port=$PORT workers=2
if loaded; then
	# A lease holder that never lets go: without O_NONBLOCK, the open
	# sleeps lease-break-time (10 s here, 45 s by default) in a worker.
	BREAK=$(cat /proc/sys/fs/lease-break-time)
	echo 10 >/proc/sys/fs/lease-break-time
	$RAW hold "$EXPORT/leased" 60 >"$W/holder" 2>&1 &
	holder=$!
	hint "open_read (given, vfs.rs) opens with O_NONBLOCK: break_lease then answers EWOULDBLOCK at once instead of sleeping in a worker"
	if wait_ready "$W/holder" 100; then
		is_ok "raw 9P: Tlopen of a file under a lease (F_SETLEASE) fails at once with EAGAIN, and the server goes on" $RAW $PORT lease leased
	else
		fail "a lease on a file of the export (the fixture)" "$(cat "$W/holder")"
	fi
	kill $holder 2>/dev/null
	wait $holder 2>/dev/null
	echo "$BREAK" >/proc/sys/fs/lease-break-time
	hint "Session::lopen (given, session.rs) opens regular files and directories only: a FIFO's open would wait for a writer, or with O_NONBLOCK hand the client a pipe"
	if [ -p "$EXPORT/special/fifo" ]; then
		is_ok "raw 9P: Tlopen of a FIFO fails at once with EOPNOTSUPP, and the server goes on" $RAW $PORT fifo special/fifo
	else
		fail "a FIFO in the export (the fixture)" "$EXPORT/special/fifo is not one"
	fi
	hint "step: a name with a file system mounted on it is EXDEV (File::same_mount), unless may_cross()"
	is_ok "raw 9P: a walk onto a mount inside the export gets EXDEV (as diod's), a walk through one stops before it" $RAW $PORT mounts
	unload
fi
hint "cross_mounts=1 lets walks into the mounts (may_cross); qid_of (given, node.rs) folds the device of a file on another file system into its qid path"
load root="$EXPORT" port=$PORT workers=2 cross_mounts=1
if loaded; then
	ia=$(stat -c %i "$EXPORT/mnt-a/f") ib=$(stat -c %i "$EXPORT/mnt-b/f")
	[ "$ia" = "$ib" ] || fail "the fixture: mnt-a/f and mnt-b/f have one inode number" "$ia and $ib"
	is_ok "raw 9P, cross_mounts=1: the files on two mounts inside the export read back, with distinct qids though their inode numbers are one ($ia)" $RAW $PORT mounts cross
	unload
fi
umount "$EXPORT/mnt-a" "$EXPORT/mnt-b"

hint "nothing may survive rmmod: no task, no socket, no file reference"
load root="$EXPORT" port=$PORT workers=2
if loaded; then
	mount9p 131072 loose 2>/dev/null
	check "insmod again serves a new mount" cmp "$EXPORT/sizes/m8192-11" "$MNT/sizes/m8192-11"
	umount "$MNT" 2>/dev/null
	unload
fi
cleanup_fixture
finish
