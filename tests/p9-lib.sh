# The 9P stages' test library (stages 28 to 30 source it, after lib.sh and
# tcp-lib.sh): the fixture trees, the mounts, and the helpers that compare a
# mount with its export.
# shellcheck shell=bash

RAW="python3 $(dirname "${BASH_SOURCE[0]}")/p9raw.py"
PORT=5640
W=$(mktemp -d)
EXPORT=$W/export   # the tree the server exports (tmpfs)
OUTSIDE=$W/outside # a directory next to it, which must stay out of reach
MNT=$W/mnt
EXT4=$W/ext4 # a second export, on ext4 (stage 30)
mkdir -p "$EXPORT" "$OUTSIDE/dir" "$MNT"
FIND_FMT='%p %s %m %U %G %T@ %y %l\n'
# The debug kernel (KASAN, lockdep, kmemleak) runs 5-10 times slower under
# TCG, where one request over 9P costs 10 ms or more and every process
# started costs a good part of a second: there the tests mount at one
# msize (8 KiB, cache=loose) instead of six, with fewer msize-straddling
# files (the later checks mount at 1 MiB), skip stage 22's port-in-use
# check (a Python listener), compare the 2000-entry directory by its names
# (readdir only) instead of stat'ing every entry at every mount, and leave
# the 40-level path out of diff (with cache=none, diff's full paths are
# walked again from the root at every level: 40 levels cost ~800 walks;
# find, which works relative to each directory, still compares it). The
# fast kernel runs it all.
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

# p9_tree: the fixture tree on tmpfs, in EXPORT: empty, 1-byte and
# msize-straddling files, a sparse file over 4 GiB, 2000 entries, 40
# levels, odd names, symlinks of every kind, a FIFO, modes, owners,
# timestamps.
p9_tree() {
	T_START=$SECONDS
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

	echo "# the fixture took $((SECONDS - T_START)) s"
}

# p9_ext4: the second export, on ext4 (sets EXT4_OK).
EXT4_OK=""
EXT4_NAMES=651
ext4_fixture() {
	modprobe nvme || return 1
	for _ in $(seq 1 200); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
	mkfs.ext4 -q -F /dev/nvme0n1 && mkdir -p "$EXT4" && mount /dev/nvme0n1 "$EXT4" || return 1
	mkdir "$EXT4/hashed" && (cd "$EXT4/hashed" && touch {a..z}{00..24}-a-name) &&
		seq 1 3000 >"$EXT4/hashed/m-a-name" && echo ext4 >"$EXT4/file"
}
p9_ext4() {
	if ext4_fixture >"$W/ext4.err" 2>&1; then EXT4_OK=yes; else
		fail "an ext4 fixture on /dev/nvme0n1 is built" "$(cat "$W/ext4.err")"
	fi
}

# cleanup_fixture: unmount the fixture's file systems, remove the trees.
cleanup_fixture() {
	umount "$MNT" 2>/dev/null
	umount "$EXT4" 2>/dev/null
	umount "$EXPORT" 2>/dev/null
	rm -rf "$W"
}

# p9_load ARGS...: load the module, or clean up and end the test.
p9_load() {
	load "$@" || {
		cleanup_fixture
		finish
		exit
	}
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
# snapshot: what must not change in the export: its listing, with ctimes
# (chmod would change them).
snapshot() {
	local prune=() d
	for d in "${FIND_SKIP[@]}"; do prune+=(-path "./$d" -prune -o); done
	(cd "$EXPORT" && find . "${prune[@]}" -printf '%p %s %m %U %G %T@ %C@ %l\n' | sort | md5sum)
}
# timed_out DESC: the failure of a step that ran out of STEP_LIMIT; then
# the test ends, as every later check would wait too.
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

# p9_refused DESC CMD...: CMD (on the mount) fails with EOPNOTSUPP, what a
# namespace's default answers for what a later stage adds.
p9_refused() {
	local desc=$1 out
	shift
	out=$(within "$STEP_LIMIT" "$@" 2>&1)
	if grep -q "Operation not supported" <<<"$out"; then
		pass "$desc"
	else
		fail "$desc" "$1 said: $out"
	fi
}

# p9_rmmod_under WHAT CMD...: CMD in a loop on the mount, rmmod while it
# runs and the mount stays: rmmod returns, the client sees errors.
p9_rmmod_under() {
	local what=$1 worker out
	shift
	hint "Drop: executor.shutdown() cancels the tasks; dropping a task's future closes its socket and files"
	(while "$@" >/dev/null 2>&1; do :; done) &
	worker=$!
	sleep 2
	mark
	timed_rmmod
	if [ $RMMOD_RC -eq 0 ] && ! loaded; then
		pass "rmmod while mounted and while $what runs returns (${RMMOD_MS} ms)"
	else
		fail "rmmod while mounted and while $what runs returns" "rmmod exited with $RMMOD_RC after ${RMMOD_MS} ms" "$(excerpt)"
	fi
	# The loop ends at its first error; a hung one is killed.
	for _ in $(seq 1 100); do kill -0 $worker 2>/dev/null || break; sleep 0.1; done
	if kill -0 $worker 2>/dev/null; then
		kill $worker
		fail "the client sees errors, not a hang" "$what still runs 10 s after rmmod"
	else
		out=$(stat "$MNT" 2>&1 >/dev/null)
		pass "the client sees errors, not a hang${out:+ ($(head -1 <<<"$out"))}"
	fi
	wait $worker 2>/dev/null
	umount -l "$MNT" 2>/dev/null
	expect_dmesg "the server logs that it stopped" 'stopped after [0-9]+ connections'
}
