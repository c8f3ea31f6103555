#!/bin/bash
# Stage 28 test (runs in the VM): a 9P2000.L server of the export's root
# alone, mounted by the kernel's own v9fs client. Parameters are checked;
# a mount works, its root has the export root's attributes and file system;
# walking a name and listing get EOPNOTSUPP (stages 29 and 30); a
# raw-protocol client (p9raw.py) tries what a mount never sends: requests
# before Tversion, msize,
# fids reused, Tflush, unknown and write-like types, truncated and
# oversized frames, frames shorter than their header, a request of 60 KiB;
# rmmod while mounted; with one worker, a flooding connection takes turns.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tcp-lib.sh"
. "$(dirname "$0")/../p9-lib.sh"

# A small export: this stage serves its root alone.
mount -t tmpfs -o size=1m r9p-fixture "$EXPORT"
printf 1 >"$EXPORT/one"
chmod 751 "$EXPORT"
chown 1234:5678 "$EXPORT"

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
p9_load root="$EXPORT" port=$PORT workers=2
expect_dmesg "the server says what it exports and where it listens" "serving $EXPORT .*127\.0\.0\.1:$PORT"

# ---- mounts -----------------------------------------------------------------------
hint "Tversion, Tattach and Tgetattr are what mount needs. 'a connection ended with an error: Error(38)' (ENOSYS) in dmesg: serve_requests is still a TODO"
mounted=0
for m in 8192:none 1048576:loose; do
	msize=${m%:*} cache=${m#*:}
	mark
	if ! mount9p $msize $cache 2>"$W/err"; then
		fail "mount msize=$msize cache=$cache" "$(cat "$W/err")" "$(excerpt)"
		continue
	fi
	mounted=$((mounted + 1))
	pass "mount msize=$msize cache=$cache"
	hint "Tgetattr on the root fid: mode, uid, gid (stat of the mount point is stat of the export's root)"
	want=$(stat -c '%A %u %g %Y' "$EXPORT") got=$(within "$STEP_LIMIT" stat -c '%A %u %g %Y' "$MNT" 2>&1)
	if [ "$got" = "$want" ]; then
		pass "msize=$msize cache=$cache: stat of the mount is the export root's ($got)"
	else
		fail "msize=$msize cache=$cache: stat of the mount is the export root's" "mount: $got, export: $want"
	fi
	umount "$MNT"
done
if [ $mounted -eq 0 ]; then
	# Nothing else can work while no mount does.
	loaded && rmmod "$MODULE"
	cleanup_fixture
	finish
	exit
fi

mount9p 8192 loose
hint "Tstatfs: vfs_statfs on the fid's path, every field"
if [ "$(stat -f -c '%t %s %b %l' "$MNT" 2>&1)" = "$(stat -f -c '%t %s %b %l' "$EXPORT")" ]; then
	pass "stat -f shows the export's file system ($(stat -f -c 'type %t, %b blocks of %s' "$MNT"))"
else
	fail "stat -f shows the export's file system" "mount: $(stat -f -c '%t %s %b %l' "$MNT" 2>&1), export: $(stat -f -c '%t %s %b %l' "$EXPORT")"
fi
hint "the namespace of this stage (RootOnly) has only the trait's defaults: a walk of a name and a listing get EOPNOTSUPP, until stages 29 and 30"
p9_refused "walking a name is stage 29's: cat of a file under the mount gets EOPNOTSUPP" cat "$MNT/one"
p9_refused "listing is stage 30's: ls of the mount gets EOPNOTSUPP" ls "$MNT"
umount "$MNT"

# ---- the raw protocol -------------------------------------------------------------
mark
hint "p9raw.py names the check that failed; the chapter's 'Answering a request' says what each request must get"
is_ok "raw 9P: requests before Tversion (EPROTO), msize, Tauth, fids reused, Tflush, unknown and write types, malformed frames, a 60 KiB request" $RAW $PORT session
expect_no_dmesg "and nothing is logged for them" 'r9p: .*(error|dropped)'
hint "serve_requests: a frame whose size is beyond msize, or below the 7-byte header (it can never be consumed), gets one Rlerror EPROTO (Session::refuse, with its tag) before the connection is given up"
is_ok "raw 9P: a frame announcing more than msize bytes, or fewer than its 7-byte header, gets one Rlerror EPROTO, then the connection closes" $RAW $PORT oversized
hint "a connection that ends must not harm the server: serve_requests returns, the others go on"
mount9p 8192 loose
check "after all of it, a fresh mount serves" stat "$MNT"

# ---- rmmod under a mount ------------------------------------------------------------
# cache=none: every stat asks the server, so the loop meets the rmmod.
umount "$MNT"
mount9p 8192 none
p9_rmmod_under "a stat loop" stat "$MNT"

hint "nothing may survive rmmod: no task, no socket, no file reference"
load root="$EXPORT" port=$PORT workers=2
if loaded; then
	mount9p 131072 loose 2>/dev/null
	check "insmod again serves a new mount" stat "$MNT"
	umount "$MNT" 2>/dev/null
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
