#!/bin/bash
# Runs inside the VM: test stages' modules, one tree after the other, all in
# one boot. Usage: guest-run.sh NN-name:tree[,tree]...
# Output: one KTAP document (Documentation/dev-tools/ktap.rst) per boot; each
# stage's tree is a subtest, its checks indented under "# Subtest: STAGE
# TREE", closed by "ok N STAGE TREE" or "not ok N STAGE TREE". If a test left
# the kernel tainted (an oops, a warning), the rest would be judged on a
# broken kernel: they are reported "# SKIP", and the host boots a fresh VM for
# them (scripts/test.sh; scripts/ktap.py reads the results).
cd "$(dirname "$0")/.." || exit 1
export RKW_NVME_TRACE=${RKW_NVME_TRACE:-}

# shellcheck source=health.sh
. tests/health.sh

# stamp FILE: pass the test's output through; write each check's duration
# (seconds since the previous check, or since the start) and its line to
# FILE (printed after the tree's run): where make test's time budget goes,
# check by check.
stamp() {
	local file=$1 line prev=${EPOCHREALTIME/./} now
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok "* | "not ok "*)
			now=${EPOCHREALTIME/./}
			printf '%d.%d\t%s\n' $(((now - prev) / 1000000)) $(((now - prev) / 100000 % 10)) "$line" >>"$file"
			prev=$now
			;;
		esac
	done
}

# kmemleak: one check at the end of the boot, not one per tree (its two
# scans, kmemleak_scan in health.sh, take 20-40 s each on the debug kernel
# under TCG). Each tree that checks for leaks
# (KMEMLEAK=yes) records its module and when it ran (before its
# test and after its rmmod, in jiffies); the tests leave the check to us
# (RKW_KMEMLEAK_LATER), and leaks_report below gives each tree the
# unreferenced objects allocated while it ran, by its module.
export RKW_KMEMLEAK_LATER=""
if kmemleak_on; then
	RKW_KMEMLEAK_LATER=1
	kmemleak_quiet
fi
LEAK_TREES=() # "STAGE TREE MODULE BEGIN END" (jiffies)
# jiffies_now: the kernel's jiffies, as kmemleak's reports give each
# object's allocation time (the scheduler's debugfs file has them in its
# header; /proc/timer_list only with CONFIG_TICK_ONESHOT, which the
# workshop kernels lack).
jiffies_now() { awk '$1 == "jiffies" { print $3; exit }' /sys/kernel/debug/sched/debug 2>/dev/null; }

# leaks_report: the scan, then one KTAP document with a "kmemleak" check for
# each tree in LEAK_TREES, as more checks of that tree (scripts/ktap.py
# merges the blocks of one name).
leaks_report() {
	[ ${#LEAK_TREES[@]} -gt 0 ] || return 0
	local report i=0 entry stage tree module begin end ours
	local began=$SECONDS
	report=$(kmemleak_scan)
	echo "KTAP version 1"
	echo "# kmemleak: the boot's scans took $((SECONDS - began)) s"
	echo "1..${#LEAK_TREES[@]}"
	for entry in "${LEAK_TREES[@]}"; do
		i=$((i + 1))
		read -r stage tree module begin end <<<"$entry"
		# What the tree's module allocated while the tree ran.
		ours=$(leaks_of "$module" "$begin" "$end" <<<"$report")
		echo "    KTAP version 1"
		echo "    # Subtest: $stage $tree"
		echo "    1..1"
		if [ -z "$ours" ]; then
			echo "    ok 1 $LEAK_CHECK"
			echo "ok $i $stage $tree"
		else
			echo "    not ok 1 $LEAK_CHECK"
			{
				leaks_details "$ours"
				echo "hint: $LEAK_HINT"
			} | sed 's/^/    # /'
			echo "not ok $i $stage $tree"
		fi
	done
}

runs=()
for arg in "$@"; do
	trees=${arg#*:}
	for t in ${trees//,/ }; do runs+=("${arg%%:*} $t"); done
done
echo "KTAP version 1"
echo "# guest kernel $(uname -r)"
echo "1..${#runs[@]}"
n=0 stop=""
for run in "${runs[@]}"; do
	n=$((n + 1))
	read -r STAGE t <<<"$run"
	if [ -z "$stop" ] && [ "$(bad_taint)" -ne 0 ]; then
		# "at boot" when no test ran yet: scripts/test.sh boots such a
		# boot's runs once more (the kernel, not a module, broke).
		at=""
		[ "$n" -gt 1 ] || at=" at boot,"
		stop="kernel tainted ($(cat "$TAINTED_FILE"))$at before $STAGE $t: a fresh VM runs it"
		# What tainted it, from the kernel itself, while the log has it.
		echo "# $stop"
		taint_report
	fi
	if [ -n "$stop" ]; then
		echo "ok $n $STAGE $t # SKIP $stop"
		continue
	fi
	MODULE="" DEVICES="" KMEMLEAK="" TIMEOUT=""
	# shellcheck disable=SC1090
	. "tests/$STAGE/stage.env"
	RKW_STAGE_DEVICES=$DEVICES RKW_STAGE_KMEMLEAK=$KMEMLEAK
	export MODULE RKW_STAGE_DEVICES RKW_STAGE_KMEMLEAK
	echo "    KTAP version 1"
	echo "    # Subtest: $STAGE $t"
	began=$SECONDS
	leak_begin=$(jiffies_now)
	mounts_before=$(cut -d' ' -f2 /proc/mounts)
	modules_before=$(cut -d' ' -f1 /proc/modules)
	out=$(mktemp)
	KO=$(find "build/modules-${RKW_FLAVOUR:-debug}/$t/$STAGE" -name "$MODULE.ko" 2>/dev/null | head -1)
	if [ -z "$KO" ]; then
		echo "not ok 1 $MODULE.ko was built" | tee "$out"
	else
		limit=${RKW_TEST_TIMEOUT:-${TIMEOUT:-240}}
		# The test's library writes the running step's mark and hint here.
		RKW_STATE=$(mktemp)
		times=$(mktemp)
		# The test and everything it starts are in timeout's process
		# group: its number is kept, to stop what a test left running.
		pgfile=$(mktemp)
		KO=$PWD/$KO RKW_STATE=$RKW_STATE timeout -k 5 "$limit" \
			bash -c 'ps -o pgid= -p $$ >"$1"; shift; exec "$@"' - "$pgfile" bash "tests/$STAGE/test.sh" "$t" 2>&1 |
			stamp "$times" | tee "$out" | sed -u 's/^/    /'
		rc=${PIPESTATUS[0]}
		if [ -n "${RKW_FIRST_FAIL:-}" ]; then
			# A skeleton's test that stopped at its first failure left
			# what it started (clients, servers, fio) and what it mounted:
			# stopped and unmounted here, newest mount first. A file system
			# on an rnvme disk only while rnvme is loaded: one whose rnvme
			# went while it was mounted (stage 18's skeleton) stays (see
			# below); one on the disk of a module the test loads beside its
			# own (USES: stage 34's ext4 on stage 20's rnvme) goes, and so
			# does that module, after the stage's own (below).
			pg=$(tr -d ' ' <"$pgfile")
			[ -z "$pg" ] || kill -KILL -- "-$pg" 2>/dev/null
			awk '{ print $1, $2 }' /proc/mounts | tac | while read -r src mnt; do
				grep -qxF "$mnt" <<<"$mounts_before" && continue
				[[ $src == /dev/rnvme* ]] && ! grep -q '^rnvme ' /proc/modules && continue
				umount -l "$mnt" 2>/dev/null
			done
		fi
		rm -f "$pgfile"
		if [ "$rc" -ne 0 ]; then
			last=$(grep -cE '^(not )?ok [0-9]+ ' "$out")
			if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
				# Stopped by the time limit: say where, with the hint of
				# the step that was running and the kernel log since it
				# began, rather than a bare exit status.
				after=$(grep -E '^(not )?ok [0-9]+ ' "$out" | tail -1 | sed -E 's/^(not )?ok [0-9]+ //; s/ # SKIP.*//')
				mark=$(sed -n 's/^mark //p' "$RKW_STATE") hint=$(sed -n 's/^hint //p' "$RKW_STATE")
				{
					echo "not ok $((last + 1)) the step after \"${after:-the start of the test}\" finished within the stage's time limit"
					echo "# got: still running after $limit s, the whole stage's limit (TIMEOUT in tests/$STAGE/stage.env): the test script was stopped there"
					[ -z "$hint" ] || echo "# hint: $hint"
					if [ -n "$mark" ]; then
						echo "# dmesg since that step began:"
						log_since "$mark" bare | tail -n 15 | sed 's/^/#   /'
					fi
				} | tee -a "$out" | sed 's/^/    /'
			else
				echo "not ok $((last + 1)) the test script finished (exit status $rc)" |
					tee -a "$out" | sed 's/^/    /'
			fi
		fi
		rm -f "$RKW_STATE"
	fi
	# A module the test left behind would spoil the next run. Its removal
	# may never end (a skeleton whose exit waits for a wake-up nothing
	# sends, e.g. stage 34's with exercise 1 written and not 2): after
	# 120 s the module stays, and the runs left get a fresh VM.
	if grep -q "^$MODULE " /proc/modules; then
		rmmod "$MODULE" 2>/dev/null &
		rm_pid=$!
		for ((w = 0; w < 240; w++)); do
			kill -0 "$rm_pid" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$rm_pid" 2>/dev/null; then
			echo "# rmmod $MODULE still waits after 120 s: the module stays loaded"
			[ -n "$stop" ] || stop="rmmod $MODULE did not end after $STAGE $t: a fresh VM runs the rest"
		else
			wait "$rm_pid" 2>/dev/null
		fi
	fi
	# The modules a skeleton's stopped test loaded beside its own (USES),
	# once their file systems are gone (above) and the stage's module too.
	if [ -n "${RKW_FIRST_FAIL:-}" ] && [ -z "$stop" ]; then
		for m in $(cut -d' ' -f1 /proc/modules); do
			grep -qxF "$m" <<<"$modules_before" && continue
			timeout 60 rmmod "$m" 2>/dev/null ||
				stop="rmmod $m (loaded by $STAGE $t) did not end: a fresh VM runs the rest"
		done
	fi
	[ -z "$RKW_KMEMLEAK_LATER" ] || [ "$KMEMLEAK" != yes ] || [ -z "${KO:-}" ] ||
		LEAK_TREES+=("$STAGE $t $MODULE $leak_begin $(jiffies_now)")
	# So would a file system left mounted on the module's disk (a skeleton
	# whose module went while its disk was mounted: unmounting it now would
	# crash the kernel, so it stays): the rest get a fresh VM, as after a
	# taint.
	if [ -z "$stop" ] && grep -q '^/dev/rnvme' /proc/mounts; then
		stop="a file system is still mounted from a disk of rnvme after $STAGE $t: a fresh VM runs it"
	fi
	# How long the stage took (make test's time budget is spent here), and
	# each of its checks ("# time STAGE TREE SECONDS CHECK").
	[ -z "${times:-}" ] || sed "s/^/# time $STAGE $t /" "$times"
	rm -f "${times:-}"
	times=""
	echo "# $STAGE $t took $((SECONDS - began)) s"
	if grep -qE '^not ok [0-9]+ ' "$out"; then
		echo "not ok $n $STAGE $t"
	else
		echo "ok $n $STAGE $t"
	fi
	rm -f "$out"
done
leaks_report
