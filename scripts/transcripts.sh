#!/bin/bash
# Capture the outputs the book shows (book/src/transcripts/NAME.txt) from
# real runs of the workshop's commands, so that no page shows typed output.
#
# Usage: transcripts.sh [NAME...]   (default: all of them)
#   build-01           make build STEP=01 (the untouched skeleton)
#   build-01-error     make build STEP=01 of a steps/01-hello with a compiler
#                      error (the solution's rhello.rs, a `push` without its
#                      GFP_KERNEL)
#   run-01-steps       make run STEP=01 CMD=true (the untouched skeleton)
#   run-01-solutions   make run STEP=01 FROM=solutions CMD=true
#   check-NN-steps     make check STEP=NN FAST=1 (the untouched skeleton),
#                      for any stage NN (01-25)
#   check-NN-solutions make check STEP=NN FAST=1 of a steps/NN-* that is
#                      solutions/NN-* (its files copied over the skeleton's;
#                      a skeleton's #[path]s into ../../solutions/ still work)
#   run-13-goal        make run STEP=13 FROM=solutions with the session of
#                      chapter 13's goal: the disks, lsblk, the pattern, ext4
#   run-23-goal        make run STEP=23 FROM=solutions with the session of
#                      chapter 23's goal: 10000 tasks, rmmod
#   run-24-goal        make run STEP=24 FROM=solutions with the session of
#                      chapter 24's goal: 16 sleepers, rmmod of 1000 sleeping
#   run-25-goal        make run STEP=25 FROM=solutions with the session of
#                      chapter 25's goal: greeted clients, 256 held, rmmod
#                      with 64 held
#   run-26-goal        make run STEP=26 FROM=solutions with the session of
#                      chapter 26's goal: clients, and rmmod under load
#   test-01            RKW_FLAVOUR=fast make test STEP=01
#   setup-again        make setup when everything is done (seconds; it still
#                      asks Debian for the newest kernel source, as CI does)
#
# Every command runs in a scratch copy of this checkout as it is now
# (build/transcripts-work/, without build/ and .git): a make test or make
# check running here meanwhile neither waits for it nor shares its build/.
# (Not under /tmp: the VM has a /tmp of its own.)
#
# Each file's first line says how and when it was captured; the book
# includes it from line 2 ({{#include transcripts/NAME.txt:2:}}). The
# second line is the command, as `$ make ...`. Then the output, stdout and
# stderr as the terminal shows them, with these changes only: colour codes
# are removed, this checkout's path becomes /home/you/rust-kernel-workshop
# and the cache's /home/you/.cache/rust-kernel-workshop; a scratch copy's
# path becomes the checkout's. Times (dmesg stamps, seconds) are the run's.
#
# The default set is every transcript the book includes. Boots: run-01-*,
# run-13-goal, run-23-goal, run-24-goal, run-25-goal, run-26-goal, check-NN-* and test-01 one each, all on the fast kernel
# (stage 27's check runs host tests only, no VM). Under TCG on 2 cores,
# with another VM running, a check took 30-80 s, check-13 and check-19
# about 110 s, check-31 140 s and check-28 190 s. Re-run this after
# changing what run.sh, test.sh, vm.sh, setup.sh or a tests/NN-* print.
# The header's time is the whole command's (build and boot included).
set -euo pipefail
. "$(dirname "$0")/common.sh"

OUT="$REPO/book/src/transcripts"
WORK="$REPO/build/transcripts-work"
mkdir -p "$OUT" "$WORK"
ALL=(build-01 build-01-error run-01-steps run-01-solutions check-01-steps check-01-solutions test-01 setup-again)
for d in "$REPO"/tests/[0-9][0-9]-*/; do
	n=$(basename "$d") n=${n%%-*}
	[ "$n" = 01 ] || ALL+=("check-$n-solutions")
done
ALL+=(check-19-steps check-25-steps check-26-steps check-27-steps check-28-steps run-13-goal run-23-goal run-24-goal run-25-goal run-26-goal)
NAMES=("$@")
[ ${#NAMES[@]} -gt 0 ] || NAMES=("${ALL[@]}")

PRISTINE="" SOLVED=""
cleanup() { [ -z "$PRISTINE$SOLVED" ] || rm -rf $PRISTINE $SOLVED; }
trap cleanup EXIT

# scratch: a copy of this checkout as it is now (without build/ and .git);
# prints its path.
scratch() {
	local d
	d=$(mktemp -d "$WORK/copy-XXXXXX")
	# (a file someone changes meanwhile makes tar say so and exit 1: the
	# copy is whole all the same). Not the host tests' target directory:
	# with it, a solved copy's host stage (15, 26, 31) showed the test
	# binary built from the checkout's skeleton.
	{ tar -C "$REPO" --exclude=./build --exclude=./.git --exclude=./tests/host/target \
		--warning=no-file-changed -cf - . || true; } |
		tar -xf - -C "$d"
	echo "$d"
}
pristine() { [ -n "$PRISTINE" ] || PRISTINE=$(scratch); }
# solved [broken|NN]: a copy whose steps/01-hello (or steps/NN-*) is the
# solution (with a compiler error if "broken"). One copy serves every stage:
# a stage builds and tests its own folder only.
solved() {
	local st
	case "${1:-}" in
	"" | broken) st=01-hello ;;
	*) st=$(stage_name "$1") ;;
	esac
	[ -n "$SOLVED" ] || SOLVED=$(scratch)
	cp -r "$REPO/solutions/$st/." "$SOLVED/steps/$st/"
	if [ "${1:-}" = broken ]; then
		sed -i '0,/push(n, GFP_KERNEL)/s//push(n)/' "$SOLVED/steps/01-hello/rhello.rs"
		grep -q 'push(n)?' "$SOLVED/steps/01-hello/rhello.rs" ||
			die "build-01-error: solutions/01-hello/rhello.rs has no push(n, GFP_KERNEL) to break"
	fi
}

# normalise DIR: the output as a reader sees it in their own checkout.
normalise() {
	sed -E -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r$//' |
		sed -e "s#$1#/home/you/rust-kernel-workshop#g" -e "s#$REPO#/home/you/rust-kernel-workshop#g" \
			-e "s#$CACHE#/home/you/.cache/rust-kernel-workshop#g"
}

# capture NAME DIR COMMAND...: run COMMAND (a make command line) in DIR,
# write NAME.txt.
capture() {
	local name=$1 dir=$2 tmp rc
	shift 2
	say "capturing $name: $*"
	tmp=$(mktemp)
	# Through a pipe, not into the file: vng re-opens its output by name,
	# which would truncate a file and lose the lines before the boot.
	local st=() t0=$SECONDS
	{
		(cd "$dir" && env -u MAKEFLAGS -u MAKELEVEL bash -c "$*" </dev/null 2>&1) | cat >"$tmp"
		st=("${PIPESTATUS[@]}")
	} || true
	rc=${st[0]:-?}
	{
		echo "# captured by scripts/transcripts.sh on $(date -u +%Y-%m-%d) (exit status $rc, $((SECONDS - t0)) s); the book includes from line 2"
		echo "\$ $*"
		normalise "$dir" <"$tmp"
	} >"$OUT/$name.txt"
	rm -f "$tmp"
	note "$(($(wc -l <"$OUT/$name.txt") - 2)) lines in book/src/transcripts/$name.txt"
}

for name in "${NAMES[@]}"; do
	case "$name" in
	build-01) pristine && capture "$name" "$PRISTINE" make build STEP=01 ;;
	build-01-error) solved broken && capture "$name" "$SOLVED" make build STEP=01 ;;
	run-01-steps) pristine && capture "$name" "$PRISTINE" make run STEP=01 CMD=true ;;
	run-01-solutions) pristine && capture "$name" "$PRISTINE" make run STEP=01 FROM=solutions CMD=true ;;
	check-[0-9][0-9]-steps)
		n=${name#check-}; n=${n%-steps}; stage_name "$n" >/dev/null
		pristine && capture "$name" "$PRISTINE" make check STEP=$n FAST=1 ;;
	check-[0-9][0-9]-solutions)
		n=${name#check-}; n=${n%-solutions}; stage_name "$n" >/dev/null
		solved "$n" && capture "$name" "$SOLVED" make check STEP=$n FAST=1 ;;
	run-13-goal)
		# Traced as run-25-goal. (No double quotes in CMD: make passes it
		# on inside double quotes.)
		pristine && capture "$name" "$PRISTINE" make run STEP=13 FROM=solutions \
			"CMD='set -x; dmesg -t | grep -e serial -e disk.rnvme; lsblk -o NAME,SIZE,LOG-SEC,ROTA /dev/rnvme0n1 /dev/rnvme1n1 /dev/rnvme2n1; dd if=/dev/rnvme0n1 bs=512 count=1 iflag=direct status=none | head -c 64; echo; mkfs.ext4 -q -F -E nodiscard /dev/rnvme0n1 && mkdir -p /tmp/m && mount /dev/rnvme0n1 /tmp/m && df -h /tmp/m; umount /tmp/m; rmmod rnvme; dmesg -t | grep 0a.0 | tail -n 5'"
		;;
	run-23-goal)
		# Traced as run-25-goal; each workload's kernel log (without time
		# stamps) once it is done, then rmmod's.
		m=build/modules-fast/solutions/23-executor/rexec.ko
		w='{ set +x; } 2>/dev/null; until dmesg | grep -q -e failed -e'
		pristine && capture "$name" "$PRISTINE" make run STEP=23 FROM=solutions \
			"CMD='set -x; rmmod rexec; dmesg -C; insmod $m tasks=10000; $w tasks.done; do sleep 0.2; done; set -x; dmesg -t; dmesg -C; rmmod rexec; dmesg -t'"
		;;
	run-24-goal)
		# As run-23-goal: the sleepers' log once they are done, then
		# rmmod's, then rmmod of 1000 tasks that sleep, timed.
		m=build/modules-fast/solutions/24-sleep/rsleep.ko
		w='{ set +x; } 2>/dev/null; until dmesg | grep -q -e failed -e'
		pristine && capture "$name" "$PRISTINE" make run STEP=24 FROM=solutions \
			"CMD='set -x; rmmod rsleep; dmesg -C; insmod $m sleepers=16 workers=1; $w sleepers.woke; do sleep 0.2; done; set -x; dmesg -t; dmesg -C; rmmod rsleep; dmesg -t; dmesg -C; insmod $m sleepers=0 pending=1000; time rmmod rsleep; dmesg -t'"
		;;
	run-25-goal)
		# The commands are traced (set -x: "+ command" lines, on stderr).
		# make run loaded rgreet with 4 workers: the goal has 2. The held
		# clients run in the background, rmmod cancels them once they are
		# greeted (the client prints "ready").
		c=tests/async_clients.py
		pristine && capture "$name" "$PRISTINE" make run STEP=25 FROM=solutions \
			"CMD='set -x; rmmod rgreet; insmod build/modules-fast/solutions/25-reactor/rgreet.ko workers=2; dmesg | tail -n 1; python3 $c greet 7008; python3 $c hold 7008 256; python3 $c held 7008 64 >/tmp/held & { set +x; } 2>/dev/null; until grep -q ready /tmp/held; do sleep 0.1; done; set -x; time rmmod rgreet; dmesg | tail -n 1; wait; cat /tmp/held'"
		;;
	run-26-goal)
		# Traced as run-25-goal. make run loaded rasync with 4 workers:
		# the goal has 2. The clients' load runs in the background, rmmod
		# cancels it once its connections are open (it prints "ready").
		c=tests/async_clients.py
		pristine && capture "$name" "$PRISTINE" make run STEP=26 FROM=solutions \
			"CMD='set -x; rmmod rasync; insmod build/modules-fast/solutions/26-async-sockets/rasync.ko workers=2; dmesg | tail -n 1; python3 $c ping 7008; python3 $c many 7008 256 20; python3 $c load 7008 64 60 >/tmp/load & { set +x; } 2>/dev/null; until grep -q ready /tmp/load; do sleep 0.1; done; set -x; time rmmod rasync; dmesg | tail -n 1; wait; cat /tmp/load'"
		;;
	test-01) pristine && capture "$name" "$PRISTINE" RKW_FLAVOUR=fast make test STEP=01 ;;
	setup-again)
		# Only when there is nothing to do: a kernel to build would take
		# 10-25 min, and setup then prunes the builds no flavour uses.
		for f in fast debug; do
			want="$CACHE/kernel/$(kernel_key "$(cat "$CACHE/src/current-version" 2>/dev/null)" "$f")"
			[ "$(current_kdir "$f")" = "$want" ] && [ -f "$want/.rkw-complete" ] ||
				die "setup-again: the $f kernel is not built for this config yet: run make setup first"
		done
		pristine && capture "$name" "$PRISTINE" make setup
		;;
	*) die "no transcript called $name (there are: ${ALL[*]})" ;;
	esac
done
