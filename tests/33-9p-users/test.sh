#!/bin/bash
# Stage 33 test (runs in the VM): the stage-31 server acts for its users.
# Root squashed by default (p9h.py squash: an attach as uid 0 or as
# "root" acts as nobody, 65534), then, loaded with allow_root=1, per-user
# access through raw attaches (p9h.py access: by uid, by name, an
# unknown user; opens each user may and may not make; Tflush and
# connections closed mid-request) and through a mount, as root, as uid
# 1000, with and without the group the server's group file gives it; then a
# mount compares equal with the export, and kmemleak and the kernel log are
# clean.
. "$(dirname "$0")/../lib.sh"
H="python3 $(dirname "$0")/../p9h.py"
PORT=5640
W=$(mktemp -d)
EXPORT=$W/export
MNT=$W/mnt

# ---- the fixture --------------------------------------------------------------------
mkdir -p "$EXPORT" "$MNT"
chmod 755 "$W" # mktemp -d makes it 700: uid 1000 must reach the mount
mount -t tmpfs -o size=32m r9p-fixture "$EXPORT"
(
	cd "$EXPORT" || exit 1
	printf 1 >one
	mkdir d many links special closed sizes
	seq 1 20000 >d/numbers
	for n in 1 4085 8181 65525 200000; do head -c $n /dev/urandom >"sizes/s$n"; done
	ln -s ../one links/relative
	ln -s /etc links/out
	ln -s nowhere links/dangling
	mkfifo special/fifo
	echo "for root" >rootonly && chmod 600 rootonly
	echo "alice's" >alices && chown 1000:1000 alices && chmod 600 alices
	echo "for staff" >staffonly && chown 0:2000 staffonly && chmod 640 staffonly
	echo "for nobody" >brokengroup && chown 0:2001 brokengroup && chmod 640 brokengroup
	echo "for group 0" >rootgroup && chown 0:0 rootgroup && chmod 640 rootgroup
	echo "nobody's" >nobodys && chown 65534:65534 nobodys && chmod 600 nobodys
	echo leased >leased
	echo inside >closed/inside && chmod 700 closed
) || fail "the fixture tree is built" "a command in the fixture script failed"
# The users the server knows: its own passwd file, not the VM's. A mount
# attaches first as "nobody" (by name: v9fs's default uname=), then once
# per user who reaches the mount, by uid.
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' '# a comment' 'broken:x:notanumber:1::/:' \
	'alice:x:1000:1000::/home/alice:/bin/sh' 'bob:x:1001:1001::/home/bob:/bin/sh' \
	'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >"$W/passwd"
# And the groups: alice is a member of staff (2000) and wheel, bob of
# neither; the line of 2001 has a field too many and must be skipped.
printf '%s\n' 'root:x:0:' '# a comment' 'wheel:x:10:carol,alice' 'staff:x:2000:carol,alice,dave' \
	'broken:x:2001:alice:extra' 'bob:x:1001:' 'nogroup:x:65534:' >"$W/group"

# ---- parameters ---------------------------------------------------------------------
hint "Users::new opens the passwd and group files (given): a file that cannot be opened fails the load"
check_fails "insmod with a group file that does not exist is refused" insmod "$KO" root="$EXPORT" group=/nonexistent

# ---- root, squashed ------------------------------------------------------------------------
# 9P2000.L has no authentication: n_uname is whatever the client says.
# Without allow_root=1, uid 0 acts as nobody.
load root="$EXPORT" passwd="$W/passwd" group="$W/group" port=$PORT workers=2
hint "Users::attach (given): without allow_root=1, lookup squashes uid 0 to ANONYMOUS (65534:65534, no group, no capability); User::new drops the capabilities of every uid but 0"
run_checks $H squash $PORT
if mount9p 65536 none 2>"$W/err"; then
	check_fails "through a mount, root (squashed) cannot read the root-only file" cat "$MNT/rootonly"
	check "through a mount, root (squashed) reads nobody's mode-600 file" grep -qx "nobody's" "$MNT/nobodys"
	umount "$MNT"
else
	fail "mount as root, squashed (msize 65536, cache=none)" "$(cat "$W/err")" "$(excerpt)"
fi
unload

# ---- per-user access, Tflush, abrupt closes -------------------------------------------------
mark
load root="$EXPORT" passwd="$W/passwd" group="$W/group" port=$PORT workers=2 max_conns=80 idle_ms=2000 allow_root=1
expect_dmesg "allow_root=1 is logged as the risk it is" 'allow_root=1: any client that can connect may act as root'
hint "user.rs: User::new builds the credentials (and its groups, r9p_set_groups), User::run installs them for one request; open_read_checked asks inode_permission"
t0=$SECONDS
run_checks $H access $PORT
echo "# access took $((SECONDS - t0)) s"
hint "lookup (given) opens the passwd file again at each Tattach, by its name in the directory opened at load: useradd replaces the file by a rename"
run_checks $H attach $PORT 1002 13 "not in the passwd file yet"
cp "$W/passwd" "$W/passwd.new" && echo 'carol:x:1002:1002::/:/bin/sh' >>"$W/passwd.new" && mv "$W/passwd.new" "$W/passwd"
run_checks $H attach $PORT 1002 ok "carol, added by mv of a new passwd file over the old one"
# A lease holder that never lets go: without O_NONBLOCK, the open sleeps
# lease-break-time (10 s here, 45 s by default) in a worker.
BREAK=$(cat /proc/sys/fs/lease-break-time)
echo 10 >/proc/sys/fs/lease-break-time
python3 "$(dirname "$0")/../p9raw.py" hold "$EXPORT/leased" 60 >"$W/holder" 2>&1 &
holder=$!
hint "open_read_checked opens with O_NONBLOCK: break_lease answers EWOULDBLOCK at once instead of sleeping in the worker"
if wait_ready "$W/holder" 100; then
	is_ok "Tlopen of a file under a lease (F_SETLEASE) fails at once with EAGAIN, and the server goes on" \
		python3 "$(dirname "$0")/../p9raw.py" $PORT lease leased
else
	fail "a lease on a file of the export (the fixture)" "$(cat "$W/holder")"
fi
kill $holder 2>/dev/null
wait $holder 2>/dev/null
echo "$BREAK" >/proc/sys/fs/lease-break-time
hint "Session::lopen (given, session.rs) opens regular files and directories only, before open_read_checked is asked"
is_ok "Tlopen of a FIFO fails at once with EOPNOTSUPP, and the server goes on" \
	python3 "$(dirname "$0")/../p9raw.py" $PORT fifo special/fifo

as_alice() { setpriv --reuid=1000 --regid=1000 --clear-groups "$@"; }
served=0
if mount9p 65536 none 2>"$W/err"; then
	served=1
	hint "v9fs attaches once per user (access=user), with n_uname = the user's uid: each user's requests run as that user"
	check "through a mount, root reads the root-only file" grep -qx 'for root' "$MNT/rootonly"
	check_fails "through a mount, uid 1000 cannot read it" as_alice cat "$MNT/rootonly"
	check "through a mount, uid 1000 reads its own mode-600 file" as_alice grep -qx "alice's" "$MNT/alices"
	check_fails "through a mount, uid 1000 cannot list a root-only directory" as_alice ls "$MNT/closed"
	# The client's own check (generic_permission on the file's mode and
	# gid, with the caller's groups) passes for both: the server decides,
	# with the groups of its group file.
	check "through a mount, uid 1000 reads a file of group staff (mode 640): staff is its supplementary group in the server's group file" \
		setpriv --reuid=1000 --regid=1000 --groups=2000 grep -qx 'for staff' "$MNT/staffonly"
	check_fails "through a mount, uid 1001 (not in staff there) cannot, though its process has group 2000" \
		setpriv --reuid=1001 --regid=1001 --groups=2000 cat "$MNT/staffonly"
	hint "open_read_checked: no O_NOATIME (open(2) grants it to the file's owner only): a read updates the access time"
	touch -a -d '2001-01-01 00:00:00' "$EXPORT/one"
	as_alice cat "$MNT/one" >/dev/null 2>&1
	at=$(stat -c %X "$EXPORT/one")
	if [ "$at" -gt $((978307200 + 86400)) ]; then
		pass "through a mount, uid 1000's read of root's file updates its access time (2001 -> $(date -d "@$at" +%F))"
	else
		fail "through a mount, uid 1000's read of root's file updates its access time" "atime still $(date -d "@$at" +%F): opened with O_NOATIME?"
	fi
	umount "$MNT"
else
	fail "mount as root (msize 65536, cache=none)" "$(cat "$W/err")" "$(excerpt)"
fi

# ---- after them -------------------------------------------------------------------------
if [ $served = 1 ]; then
	hint "a user's requests must leave the server as it was: credentials put back after each (User::run)"
	if mount9p 65536 none 2>"$W/err"; then
		if out=$(diff -r --no-dereference -x special "$EXPORT" "$MNT" 2>&1); then
			pass "then, as root, diff -r of the export and a mount is clean"
		else
			fail "then, as root, diff -r of the export and a mount is clean" "$(head -10 <<<"$out")" "$(excerpt 10)"
		fi
		umount "$MNT"
	else
		fail "then a mount as root works" "$(cat "$W/err")" "$(excerpt)"
	fi
fi
hint ""
mark
timed_rmmod
if [ $RMMOD_RC -eq 0 ]; then pass "rmmod (${RMMOD_MS} ms)"; else fail "rmmod" "exited with $RMMOD_RC" "$(excerpt)"; fi
umount "$EXPORT"
rm -rf "$W"
finish
