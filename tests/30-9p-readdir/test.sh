#!/bin/bash
# Stage 30 test (runs in the VM): the read-only 9P2000.L server lists
# directories, and Linux's v9fs client mounts it. The fixture tree of
# tests/p9-lib.sh is mounted at three msizes with cache=none and
# cache=loose and compared with diff -r and find; a directory of 2000
# entries, readdir's inode numbers, and a second export on ext4 (hashed
# 64-bit directory positions) are listed; a raw-protocol client (p9raw.py)
# lists in pieces a mount never asks for; rmmod while a find runs. Every
# listing has its own deadline: a Treaddir whose offsets never reach the
# end fails its check by name.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tcp-lib.sh"
. "$(dirname "$0")/../p9-lib.sh"

p9_tree
p9_ext4
listing "$EXPORT" >"$W/export.find"

mark
p9_load root="$EXPORT" port=$PORT workers=2

# ---- mounts -----------------------------------------------------------------------
hint "Treaddir: every entry once, offsets that resume. 'a connection ended with an error: Error(38)' (ENOSYS) in dmesg, or 'Function not implemented': readdir is still a TODO"
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
umount "$MNT"

# ---- the raw protocol -------------------------------------------------------------
mark
hint "Treaddir: each entry's offset is the position of the entry after it; a count that cannot hold one entry is EMSGSIZE, not an empty reply (the end)"
rc=0
out=$(within "$STEP_LIMIT" $RAW $PORT readdirs 2>&1) || rc=$?
desc="raw 9P: a directory listed in pieces of 300 bytes, and a count too small for one entry"
if [ $rc -eq 124 ]; then
	timed_out "$desc"
elif [ $rc -eq 0 ]; then
	pass "$desc ($out)"
else
	fail "$desc" "$out" "$(excerpt 10)"
fi

# ---- rmmod under a mount and during a find -------------------------------------------
mount9p 8192 loose
p9_rmmod_under "a find loop" find "$MNT" -printf "$FIND_FMT"

hint "nothing may survive rmmod: no task, no socket, no file reference"
load root="$EXPORT" port=$PORT workers=2
if loaded; then
	mount9p 131072 loose 2>/dev/null
	check "insmod again serves a new mount" within "$STEP_LIMIT" diff -r --no-dereference "$EXPORT/sizes" "$MNT/sizes"
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
		# Through the mount, by readdir alone (a diff -r would also stat and
		# read each of the 651 files: minutes on the debug kernel, and the
		# listing is what differs from tmpfs here).
		t0=$SECONDS rc=0
		out=$(within "$STEP_LIMIT" ls -fA "$MNT/hashed" 2>&1) || rc=$?
		desc="an ext4 export, msize 8 KiB: ls of its $EXT4_NAMES-name directory lists the export's names"
		if [ $rc -eq 124 ]; then
			timed_out "$desc"
		elif [ $rc -eq 0 ] && [ "$(sort <<<"$out")" = "$want" ]; then
			pass "$desc ($((SECONDS - t0)) s)"
		else
			fail "$desc" "got (exit status $rc): $(sort <<<"$out" | diff <(echo "$want") - | head -5)" "$(excerpt 10)"
		fi
		check "an ext4 export: a file reads back" cmp "$EXT4/hashed/m-a-name" "$MNT/hashed/m-a-name"
		inodes "$EXT4/hashed" 0 >"$W/export.ino" 2>&1
		inodes "$MNT/hashed" 2 >"$W/mnt.ino" 2>&1 || true
		check "an ext4 export: the directory entries' inode numbers are the files'" cmp "$W/export.ino" "$W/mnt.ino"
		umount "$MNT"
	else
		fail "an ext4 export: mount msize=8192 cache=none" "$(cat "$W/err")" "$(excerpt)"
	fi
	unload
fi

cleanup_fixture
finish
