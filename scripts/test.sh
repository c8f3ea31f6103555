#!/bin/bash
# make test [STEP=NN]: for every stage, the skeleton differs from the solution
#   only in its exercises and no Rust file is a copy of another
#   (check-skeletons.py), no two files import each other
#   (check-modules.py), every kernel log line a test requires is in the
#   stage's skeleton or chapter (check-log-lines.py); (a) the solution builds warning-
#   and clippy-free and passes its test, (b) the skeleton builds and FAILS the
#   same test; then the host tests and the book. One line per check, then
#   "N passed, N failed"; exit status 1 on any failure. Solutions run on the
#   debug kernel (KASAN, lockdep, kmemleak); skeletons, which only have to
#   fail, on the fast one, in boots of their own (RKW_SKELETON_FLAVOUR=debug
#   runs them on the debug kernel too).
# make check STEP=NN (--learner): test the learner's steps/NN, explain failures.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Sourced (tests/harness/test.sh, the checks of this script): the
# functions only, with LOGS and VM_SH the caller's; nothing runs.
SOURCED=""
(return 0 2>/dev/null) && SOURCED=1

LEARNER=""
[ "${1:-}" = --learner ] && LEARNER=1 && shift
STEPS=("$@")

PASSED=0
FAILED=0
# The VM (a fake one in tests/harness/test.sh).
VM_SH="$REPO/scripts/vm.sh"
# Per flavour: a `make check FAST=1` must not overwrite a `make test`'s logs.
LOGS="$REPO/build/test-logs/$FLAVOUR"
if [ -z "$SOURCED" ]; then
	mkdir -p "$LOGS"
	# One run per flavour at a time: a second one would overwrite this
	# one's VM logs.
	exec 9>"$LOGS/.lock"
	if ! flock -n 9; then
		say "another make test/check on the $FLAVOUR kernel is running: waiting for it"
		flock 9
	fi
fi

ok() {
	PASSED=$((PASSED + 1))
	printf '\033[32mok\033[0m   %s\n' "$1"
}
notok() {
	FAILED=$((FAILED + 1))
	printf '\033[31mFAIL\033[0m %s\n' "$1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/     /'
}

# The stages to test: all, or the ones named on the command line.
stages() {
	local d
	if [ ${#STEPS[@]} -gt 0 ]; then
		for d in "${STEPS[@]}"; do stage_name "$d"; done
	else
		for d in "$REPO"/tests/[0-9][0-9]-*/; do basename "$d"; done
	fi
}

# The guest's results are KTAP (tests/lib.sh, tests/guest-run.sh), read by
# one parser, scripts/ktap.py.
# count STAGE TREE LOG: "pass fail skip ended" of one tree's run in a VM log.
count() { python3 "$REPO/scripts/ktap.py" counts "$3" "$1" "$2"; }

# details STAGE TREE LOG: the failed checks of one tree, with their explanations.
details() { python3 "$REPO/scripts/ktap.py" details "$3" "$1" "$2"; }

# judge STAGE TREE LOG: the stage's guest-side results for one tree.
judge() {
	local stage=$1 tree=$2 log=$3 p f sk ended gave_up=""
	read -r p f sk ended < <(count "$stage" "$tree" "$log")
	local total=$((p + f))
	# A run that never began because run_boots gave up (a kernel tainted at
	# boot, or a boot that hung, twice in a row) proves nothing, for either
	# tree; the reason is run_boots's, up to its colon.
	[ "$ended" = 1 ] || gave_up=$(sed -n 's/^# RKW:gave-up \([^:]*\):.*/it did not run: \1/p' "$(boot_out "$stage" "$tree")" 2>/dev/null | head -1)
	if [ "$tree" = solutions ]; then
		if [ "$ended" = 1 ] && [ "$f" = 0 ] && [ "$p" -gt 0 ]; then
			ok "$stage: solution passes its test ($p/$total checks)"
		elif [ "$ended" != 1 ]; then
			notok "$stage: solution passes its test (${gave_up:-its VM run did not finish})" "$(boot_excerpt "$stage" "$tree")"
		else
			notok "$stage: solution passes its test ($f of $total checks fail)" "$(details "$stage" "$tree" "$log")"
		fi
	else
		if [ -n "$gave_up" ]; then
			notok "$stage: skeleton is not a solution ($gave_up)" "$(boot_excerpt "$stage" "$tree")"
		elif [ "$f" -gt 0 ] || [ "$ended" != 1 ]; then
			ok "$stage: skeleton is not a solution ($f of $total checks fail)"
		else
			notok "$stage: skeleton is not a solution (it passes all $p checks: the test is vacuous)"
		fi
	fi
}

# boot_out STAGE TREE: the output file of the last boot that had STAGE's
# TREE to run (run_boots lists each boot's runs in $LOGS/boots), the one
# whose lines explain how that run ended; empty if no boot had it.
boot_out() {
	awk -v s="$1" -v t="$2" '{
		for (i = 2; i <= NF; i++) {
			split($i, r, ":")
			if (r[1] == s && index("," r[2] ",", "," t ","))
				f = $1
		}
	} END { if (f != "") print f }' "$LOGS/boots" 2>/dev/null
}

# boot_excerpt STAGE TREE: what a failure whose run did not finish shows:
# the lines of that boot's own file (not another boot's, nor the tail of
# the log of every boot) that say why, then its last lines.
boot_excerpt() {
	local out
	out=$(boot_out "$1" "$2")
	if [ -z "$out" ] || [ ! -f "$out" ]; then
		echo "no boot of this run had $1 $2 to run"
		return
	fi
	echo "its boot: ${out#"$REPO"/}"
	grep -E 'RKW:vm-timeout|RKW:boot-hung|RKW:stalled|RKW:retry|RKW:gave-up|# SKIP kernel tainted|^# kernel tainted|Kernel panic|BUG:|Oops' "$out" | head -8
	echo "its last lines:"
	tail -20 "$out"
}

# ---- a stage tested on the host (no module) -----------------------------------------
# host_stage STAGE [TREE]: make check runs the learner's steps; make test
# runs one TREE (solutions: it must pass; steps: it must fail). make test
# runs every host stage's skeleton first, then every solution, and then
# the host tests: the host tests' crate is built for one tree at a time
# (RKW_TREE), and each change of tree rebuilds it (10-25 s).
host_stage() {
	local stage=$1 tree=${2:-steps}
	if [ -n "$LEARNER" ]; then
		bash "$REPO/tests/$stage/test.sh" steps 2>&1 | tee "$LOGS/$stage-steps.log"
		# The learner's closing line counts that test's checks, one by one.
		local p f
		read -r p f < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/$stage-steps.log" | tail -1 | awk '{print $1, $3}')
		PASSED=$((PASSED + ${p:-0}))
		FAILED=$((FAILED + ${f:-1}))
		return
	fi
	if [ "$tree" = solutions ]; then
		if "${HOST_NICE[@]}" bash "$REPO/tests/$stage/test.sh" solutions >"$LOGS/$stage-solutions.log" 2>&1; then
			ok "$stage: solution passes its test ($(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/$stage-solutions.log" | tail -1))"
		else
			notok "$stage: solution passes its test" "$(tail -20 "$LOGS/$stage-solutions.log")"
		fi
	elif "${HOST_NICE[@]}" bash "$REPO/tests/$stage/test.sh" steps >"$LOGS/$stage-steps.log" 2>&1; then
		notok "$stage: skeleton is not a solution (it passes: the test is vacuous)"
	else
		ok "$stage: skeleton is not a solution ($(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/$stage-steps.log" | tail -1 || echo "it fails"))"
	fi
}

# host_tests: every host test of the solutions (make test without STEP).
host_tests() {
	[ -x "$REPO/scripts/host-test.sh" ] || return 0
	local rc hp hf
	"${HOST_NICE[@]}" "$REPO/scripts/host-test.sh" >"$LOGS/host.log" 2>&1
	rc=$?
	read -r hp hf < <(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/host.log" | tail -1 | awk '{print $1, $3}')
	if [ $rc -eq 0 ] && [ -n "${hp:-}" ]; then
		ok "host tests: $hp passed"
		PASSED=$((PASSED + hp - 1))
	else
		notok "host tests (${hf:-?} failed)" "$(grep -E 'FAILED|panicked|error' "$LOGS/host.log" | head -20)"
		FAILED=$((FAILED + ${hf:-1} - 1))
		PASSED=$((PASSED + ${hp:-0}))
	fi
}

# ---- stages tested in the VM -------------------------------------------------------
# Build every stage's trees first, then test them all in as few boots as
# possible: one, unless a test leaves the kernel tainted, in which case a
# fresh VM takes the stages that remain.
VM_RUNS=() # "NN-name:tree,tree" for guest-run.sh
HOST_NICE=() # make test: nice -n 10 for the host work that runs beside the VMs
# make test on the debug kernel: the skeletons go to the fast kernel (a
# failing skeleton proves the test is not vacuous; it needs no KASAN), in
# VM_RUNS_FAST, built and booted with that flavour.
SKELETON_FLAVOUR=$FLAVOUR
[ -n "$LEARNER" ] || [ "$FLAVOUR" != debug ] || SKELETON_FLAVOUR=${RKW_SKELETON_FLAVOUR:-fast}
VM_RUNS_FAST=()
build_stage() {
	local stage=$1 trees=() out skel skel_rc=0
	# A stage whose test loads another stage's module (USES in its
	# stage.env: stages 34 and 35 load stage 20's rnvme) gets that stage's
	# solution built too, for each kernel its trees boot on (build_uses in
	# common.sh, which scripts/teeth.py runs too).
	out=$(build_uses "$stage" "$FLAVOUR" "$SKELETON_FLAVOUR") ||
		notok "$stage: the modules its test loads (USES in stage.env) build" "$out"
	if [ -z "$LEARNER" ]; then
		# The two builds at once, one on each core, when they are for two
		# kernels: each flavour's modules have their own Kbuild output root
		# (build/modules-FLAVOUR, whose modules.order both would write).
		skel=$(mktemp)
		RKW_FLAVOUR=$SKELETON_FLAVOUR "$REPO/scripts/build-stage.sh" steps "$stage" >"$skel" 2>&1 &
		local pid=$!
		[ "$SKELETON_FLAVOUR" != "$FLAVOUR" ] || wait "$pid" || skel_rc=$?
		if out=$("$REPO/scripts/build-stage.sh" solutions "$stage" --strict 2>&1); then
			ok "$stage: solution builds without warnings (rustc + clippy)"
			trees+=(solutions)
		else
			notok "$stage: solution builds without warnings (rustc + clippy)" "$out"
		fi
		[ "$SKELETON_FLAVOUR" = "$FLAVOUR" ] || wait "$pid" || skel_rc=$?
		out=$(cat "$skel")
		rm -f "$skel"
		if [ "$skel_rc" -eq 0 ]; then
			ok "$stage: skeleton builds"
			if [ "$SKELETON_FLAVOUR" = "$FLAVOUR" ]; then
				trees+=(steps)
			else
				VM_RUNS_FAST+=("$stage:steps")
			fi
		else
			notok "$stage: skeleton builds" "$out"
		fi
	else
		say "building steps/$stage"
		if ! "$REPO/scripts/build-stage.sh" steps "$stage" >/dev/null; then
			notok "$stage: your module builds" "Fix the compiler errors above, then run 'make check STEP=${stage%%-*}' again."
			return
		fi
		ok "$stage: your module builds"
		trees=(steps)
	fi
	[ ${#trees[@]} -eq 0 ] || VM_RUNS+=("$stage:$(
		IFS=,
		echo "${trees[*]}"
	)")
}

# ---- boots, planned as jobs and run in lanes -----------------------------------
# Every boot is a job: FLAVOUR, kernel arguments, vCPUs, QMP and the stage
# trees it tests. plan_jobs FLAVOUR NN-name:trees... prints one job a line,
# "FLAVOUR|APPEND|CPUS|QMP|SECONDS|NN-name:trees ..." (SECONDS: its estimate).
# Stages that check for leaks (KMEMLEAK=yes in stage.env) boot with kmemleak
# on: it doubles the debug kernel's boot time and slows every allocation, so
# the other stages do without (the fast kernel has no kmemleak). Stages with
# BOOT=own (their own devices and vCPUs, e.g. several NVMe controllers) boot
# alone; stages with the same BOOT=NAME (the same devices, vCPUs and QMP:
# stages split from one, such as 16 to 21) boot together, with their first
# stage's APPEND, CPUS and QMP. The others share boots, each at most
# JOB_SECONDS long by the estimates, so that the lanes can share the work.
JOB_SECONDS=${RKW_JOB_SECONDS:-480}
plan_jobs() {
	local flavour=$1 r g kind
	shift
	local -A group_of=() group_secs=()
	local groups=() plain=() leak=()
	for r in "$@"; do
		g=$(stage_env "${r%%:*}" BOOT)
		[ "$g" != own ] || g="own:${r%%:*}"
		if [ -n "$g" ]; then
			[ -n "${group_of[$g]:-}" ] || groups+=("$g")
			group_of[$g]+=" $r"
			group_secs[$g]=$((${group_secs[$g]:-0} + $(estimate "$flavour" "$r")))
		elif wants_kmemleak "$flavour" "$r"; then
			leak+=("$r")
		else
			plain+=("$r")
		fi
	done
	for g in "${groups[@]}"; do
		local members first
		read -ra members <<<"${group_of[$g]}"
		first=${members[0]%%:*}
		# A skeleton that leaves the VM unfit for the stages after it
		# (SKELETON_LAST=yes: 18's lets rmmod go with a disk mounted) runs
		# last in a boot of skeletons, which then needs no second boot.
		local m last=() rest=()
		for m in "${members[@]}"; do
			if [ "${m#*:}" = steps ] && [ "$(stage_env "${m%%:*}" SKELETON_LAST)" = yes ]; then
				last+=("$m")
			else
				rest+=("$m")
			fi
		done
		members=("${rest[@]}" "${last[@]}")
		echo "$flavour|$(boot_args "$flavour" "$first")|$((BOOT_SECONDS + ${group_secs[$g]}))|${members[*]}"
	done
	for kind in plain leak; do
		local -n list=$kind
		local job=() secs=0 e append=""
		[ $kind = plain ] || append="kmemleak=on"
		for r in "${list[@]}"; do
			e=$(estimate "$flavour" "$r")
			if [ ${#job[@]} -gt 0 ] && [ $((secs + e)) -gt "$JOB_SECONDS" ]; then
				echo "$flavour|$append|||$((BOOT_SECONDS + secs))|${job[*]}"
				job=() secs=0
			fi
			job+=("$r")
			secs=$((secs + e))
		done
		[ ${#job[@]} -eq 0 ] || echo "$flavour|$append|||$((BOOT_SECONDS + secs))|${job[*]}"
		unset -n list
	done
}
BOOT_SECONDS=60

# boot_args FLAVOUR STAGE: "APPEND|CPUS|QMP" of a boot that runs STAGE:
# kmemleak=on on the debug kernel if the stage checks for leaks; a stage
# that boots on its own or in a group (BOOT= in stage.env) adds its kernel
# arguments (APPEND), vCPUs (CPUS) and QMP. (The stages of a group agree.)
boot_args() {
	local append=""
	wants_kmemleak "$1" "$2" && append="kmemleak=on"
	if [ -n "$(stage_env "$2" BOOT)" ]; then
		local extra
		extra=$(stage_env "$2" APPEND)
		echo "$append${append:+${extra:+ }}$extra|$(stage_env "$2" CPUS)|$(stage_env "$2" QMP)"
	else
		echo "$append||"
	fi
}

# run_stage STAGE TREES: STAGE's TREES (comma-separated) in as few boots as
# possible, booted as make test boots the stage (scripts/rkw/teeth.py's
# way to boot, through rkw.boots). VMLOG, LOGS and BOOT as for run_boots.
run_stage() {
	local append cpus qmp
	IFS='|' read -r append cpus qmp <<<"$(boot_args "$FLAVOUR" "$1")"
	RKW_VM_CPUS=$cpus RKW_VM_QMP=$qmp run_boots "$append" "$1:$2"
}

# estimate FLAVOUR NN-name:trees: the seconds these trees' tests took in the
# last make test on this machine (build/test-logs/vm-seconds.txt, from the
# guest's "took" lines), else as recorded in tests/vm-seconds.txt, else
# half the stage's TIMEOUT.
SECONDS_FILES=("$REPO/build/test-logs/vm-seconds.txt" "$REPO/tests/vm-seconds.txt")
estimate() {
	local flavour=$1 stage=${2%%:*} trees=${2#*:} t sum=0 e f
	for t in ${trees//,/ }; do
		e=""
		for f in "${SECONDS_FILES[@]}"; do
			[ -f "$f" ] || continue
			e=$(awk -v s="$stage" -v t="$t" -v f="$flavour" '$1 == s && $2 == t && $3 == f { print $4; exit }' "$f")
			[ -z "$e" ] || break
		done
		[ -n "$e" ] || { e=$(stage_env "$stage" TIMEOUT) && e=$((${e:-240} / 2)); }
		sum=$((sum + e))
	done
	echo "$sum"
}

# record_seconds: what each stage tree took in this run's boots, for the
# next run's plan (build/test-logs/vm-seconds.txt; copy it to tests/ to
# give a fresh clone the same plan).
record_seconds() {
	local f out="$REPO/build/test-logs/vm-seconds.txt" new
	new=$(mktemp)
	for f in "$REPO"/build/test-logs/*/jobs/*.log; do
		[ -f "$f" ] || continue
		grep -hE '^# [0-9][0-9]-[a-z0-9-]+ [a-z]+ took [0-9]+ s$' "$f" |
			awk -v fl="$(sed -n 's/^flavour //p' "${f%.log}.job")" '{ print $2, $3, fl, $5 }'
	done >"$new"
	# Keep the lines of stage trees this run did not boot.
	[ ! -f "$out" ] || awk 'NR == FNR { seen[$1 " " $2 " " $3] = 1; next } !(($1 " " $2 " " $3) in seen)' "$new" "$out" >>"$new"
	sort -k1,1 -k2,2 -k3,3 -u "$new" >"$out"
	rm -f "$new"
}

# run_jobs JOB...: the jobs in RKW_TEST_LANES lanes (2: one VM per core;
# under TCG a VM keeps both cores busy only part of the time, so two share
# them well), the longest first; a lane takes the next job as soon as it is
# free. Each job's VM output goes to $LOGS/jobs/K.log.
run_jobs() {
	local jobs=("$@") lanes=${RKW_TEST_LANES:-2} lane pids=() next
	rm -rf "$LOGS/jobs"
	mkdir -p "$LOGS/jobs"
	next="$LOGS/jobs/next"
	echo 0 >"$next"
	mapfile -t jobs < <(printf '%s\n' "${jobs[@]}" | sort -t'|' -k5,5nr)
	for ((lane = 1; lane <= lanes; lane++)); do
		(
			local k
			while :; do
				k=$(
					{
						flock 8
						read -r k <"$next"
						echo $((k + 1)) >"$next"
						echo "$k"
					} 8>"$next.lock"
				)
				[ "$k" -lt ${#jobs[@]} ] || break
				run_job "$k" "${jobs[$k]}"
			done
		) &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# run_job K JOB: one job (plan_jobs's line), in its own log.
run_job() {
	local k=$1 flavour append cpus qmp secs runs
	IFS='|' read -r flavour append cpus qmp secs runs <<<"$2"
	printf 'flavour %s\nestimate %s\nruns %s\n' "$flavour" "$secs" "$runs" >"$LOGS/jobs/$k.job"
	local -a members
	read -ra members <<<"$runs"
	: >"$LOGS/jobs/$k.log"
	# The skeletons' jobs of make test (a flavour of their own) stop each
	# test at its first failure: a skeleton only has to fail.
	local guest_env=""
	[ -n "$LEARNER" ] || [ "$flavour" = "$FLAVOUR" ] || guest_env="RKW_FIRST_FAIL=1"
	GUEST_ENV=$guest_env FLAVOUR=$flavour RKW_FLAVOUR=$flavour VMLOG="$LOGS/jobs/$k.log" BOOT_ID="${BOOT_ID:+job$k}" \
		RKW_VM_CPUS=$cpus RKW_VM_QMP=$qmp run_boots "$append" "${members[@]}"
}

# job_log FLAVOUR: every job's log of that flavour in one file, to judge
# (vm.log for the flavour of this run, vm-FLAVOUR.log for the skeletons').
job_log() {
	local f out="$LOGS/vm.log"
	[ "$1" = "$FLAVOUR" ] || out="$LOGS/vm-$1.log"
	: >"$out"
	for f in "$LOGS"/jobs/*.job; do
		[ -f "$f" ] && grep -qx "flavour $1" "$f" && cat "${f%.job}.log" >>"$out"
	done
	echo "$out"
}

# wants_kmemleak FLAVOUR NN-name:trees: the stage checks for leaks
# (KMEMLEAK=yes) and this is the debug kernel (the fast one has no kmemleak).
wants_kmemleak() {
	[ "$1" = debug ] && [ "$(stage_env "${2%%:*}" KMEMLEAK)" = yes ]
}

# run_boots KERNEL_ARGS NN-name:trees...: test the stages in as few boots as
# possible; the one way this project boots a VM to run tests (make test,
# make check, and scripts/teeth.py through run_stage). The caller sets
# VMLOG (the runs' KTAP is appended there), LOGS, BOOT (the boots so far);
# RKW_VM_CPUS and RKW_VM_QMP reach vm.sh; GUEST_ENV goes before the guest's
# command; AFTER_VM_TREES (e.g. "solutions") limits after-vm.sh to those
# trees. A guest that hangs is stopped: silent for RKW_BOOT_LIMIT (600) s
# before its first line, or for a tree's limit and 300 s more after it.
run_boots() {
	local append=$1 log="$VMLOG" devices="" r
	shift
	local pending=("$@") budget=120 t trees tree_limit=0 retried=""
	for r in "${pending[@]}"; do
		devices+=" $(stage_env "${r%%:*}" DEVICES)"
		# Each tree's test may take TIMEOUT seconds (stage.env; 240), or
		# RKW_TEST_TIMEOUT if set (it reaches the guest: guest-run.sh).
		t=${RKW_TEST_TIMEOUT:-$(stage_env "${r%%:*}" TIMEOUT)}
		t=${t:-240}
		[ "$t" -le "$tree_limit" ] || tree_limit=$t
		trees=${r#*:}
		for _ in ${trees//,/ }; do budget=$((budget + 2 * t + 20)); done
	done
	local guest_env="${GUEST_ENV:-}${RKW_TEST_TIMEOUT:+ RKW_TEST_TIMEOUT=$RKW_TEST_TIMEOUT}"
	guest_env=${guest_env# }
	devices=$(tr ' ' '\n' <<<"$devices" | sort -u | xargs)
	while [ ${#pending[@]} -gt 0 ]; do
		BOOT=$((BOOT + 1))
		[ -n "$LEARNER" ] && say "booting the VM and running the test${append:+ ($append)}"
		local t0=$SECONDS
		# Each boot has a file of its own, added to the log afterwards: vng
		# re-opens its output by name (truncating it), so a second boot
		# cannot append to the first one's file.
		local name="vm-${BOOT_ID:+$BOOT_ID-}$FLAVOUR-$BOOT" keep=""
		local out="$LOGS/$name.out"
		: >"$out"
		# Stages with host-side checks of their NVMe images after the VM
		# (tests/NN-name/after-vm.sh) keep the images, if a tree it checks
		# (AFTER_VM_TREES) is in this boot.
		for r in "${pending[@]}"; do
			[ -f "$REPO/tests/${r%%:*}/after-vm.sh" ] || continue
			trees=${r#*:}
			for t in ${trees//,/ }; do
				! after_vm_checks "$t" || [ -n "$keep" ] || keep=$(mktemp -d /dev/shm/rkw-images-XXXXXX)
			done
		done
		# Which runs this boot had (boot_out: a failure's excerpt comes
		# from its boot's file).
		echo "$out ${pending[*]}" >>"$LOGS/boots"
		# In a session of its own (setsid), so that a boot that hangs can be
		# stopped whole: vm.sh, virtme-ng and QEMU. A session, not a process
		# group: vm.sh runs vng under coreutils' timeout, which makes a
		# group of its own. (This script has no job control, so the
		# background child is no group leader and setsid does not fork: $!
		# is vm.sh, and the session's id.)
		RKW_VM_KEEP_IMAGES=$keep RKW_VM_TIMEOUT=${RKW_VM_TIMEOUT:-$budget} RKW_VM_APPEND=$append \
			RKW_VM_LOG="$LOGS/$name" setsid "$VM_SH" --devices "$devices" \
			--exec "${guest_env:+$guest_env }bash tests/guest-run.sh ${pending[*]}" >>"$out" 2>&1 &
		local vm=$! hung="" stalled="" limit=${RKW_BOOT_LIMIT:-600} began="" size=-1 now quiet=$SECONDS
		local stall=${RKW_STALL_LIMIT:-$((tree_limit + 300))}
		# The guest's first line (guest-run.sh's "KTAP version 1") comes
		# within a minute or two of the boot, on a busy machine. A boot
		# silent for RKW_BOOT_LIMIT s never reached it (seen once: a debug
		# boot that printed nothing for 20 minutes, which the budget would
		# have let run for an hour): it is stopped, and booted once more.
		# After it, guest-run.sh stops each tree's test at its limit and
		# says so, then waits for the module's removal for up to 120 s
		# (silent) and gives up on it with a line: a guest silent for the
		# limit and 300 s more is stuck in the kernel (a busy loop in a
		# worker, a stop that never returns): it is stopped, and the runs
		# it did not begin get a fresh boot.
		while kill -0 "$vm" 2>/dev/null; do
			if [ -z "$began" ]; then
				if grep -q '^KTAP version 1' "$out"; then
					began=1 quiet=$SECONDS
				elif [ $((SECONDS - t0)) -ge "$limit" ]; then
					hung=1
				fi
			else
				now=$(stat -c %s "$out")
				if [ "$now" != "$size" ]; then
					size=$now quiet=$SECONDS
				elif [ $((SECONDS - quiet)) -ge "$stall" ]; then
					stalled=$((SECONDS - quiet))
				fi
			fi
			if [ -n "$hung$stalled" ]; then
				pkill -TERM -s "$vm"
				sleep 5
				pkill -KILL -s "$vm"
				break
			fi
			sleep 2
		done
		wait "$vm" 2>/dev/null
		[ -z "$stalled" ] || echo "# RKW:stalled the guest printed nothing for $stalled s, longer than a test may run ($tree_limit s): something in the kernel never returned (a loop, a wait, an rmmod); the VM was stopped" >>"$out"
		[ -z "$hung" ] || echo "# RKW:boot-hung the guest printed nothing in $limit s: stopped" >>"$out"
		cat "$out" >>"$log"
		[ -z "$keep" ] || after_vm "$keep" "$log" "${pending[@]}"
		echo "boot ${BOOT_ID:+$BOOT_ID.}$BOOT ($FLAVOUR${append:+, $append}): $((SECONDS - t0)) s for ${pending[*]}" >>"$LOGS/vm.seconds"
		# Keep the runs this boot did not begin; drop the one it was in
		# when it stopped (its results stand as they are). Per tree: on the
		# fast kernel a stage's solution and skeleton share a run, and a
		# boot that stopped in the solution's never began the skeleton's.
		local rest=() reached r t trees left
		reached=$(python3 "$REPO/scripts/ktap.py" reached "$log")
		for r in "${pending[@]}"; do
			trees=${r#*:} left=""
			for t in ${trees//,/ }; do
				grep -qxF "${r%%:*} $t" <<<"$reached" || left+=${left:+,}$t
			done
			[ -z "$left" ] || rest+=("${r%%:*}:$left")
		done
		if [ "${rest[*]}" != "${pending[*]}" ]; then
			retried=""
			pending=("${rest[@]}")
			continue
		fi
		# No progress at all. A kernel tainted at boot, before any test
		# (guest-run.sh: "tainted (N) at boot"; seen once: a Bad page on
		# the debug kernel before any module was loaded), is booted once
		# more; twice in a row, it is the kernel's fault every time: give
		# up, and say so. Any other boot that ran nothing: give up.
		if grep -q '^# kernel tainted ([0-9]*) at boot,' "$out"; then
			if [ -z "$retried" ]; then
				retried=1
				echo "# RKW:retry the kernel was tainted at boot, before any test ran: a fresh VM runs ${pending[*]}" | tee -a "$out" >>"$log"
				continue
			fi
			echo "# RKW:gave-up the kernel was tainted at boot twice in a row, before any test ran: not booted again; ${pending[*]} did not run (see the kernel's report above)" | tee -a "$out" >>"$log"
		elif [ -n "$hung$stalled" ]; then
			# (A guest that stalled before its first test began, as one that
			# never printed a line: once more, then give up.)
			if [ -z "$retried" ]; then
				retried=1
				echo "# RKW:retry the boot hung before any test ran: a fresh VM runs ${pending[*]}" | tee -a "$out" >>"$log"
				continue
			fi
			echo "# RKW:gave-up the boot hung twice in a row, before any test ran: ${pending[*]} did not run" | tee -a "$out" >>"$log"
		fi
		break
	done
}

# after_vm_checks TREE: whether after-vm.sh checks TREE's runs: every
# tree's, unless AFTER_VM_TREES names some (teeth: "solutions").
after_vm_checks() {
	[ -z "${AFTER_VM_TREES:-}" ] || [[ " $AFTER_VM_TREES " == *" $1 "* ]]
}

# after_vm IMAGE_DIR LOG NN-name:trees...: the host-side checks of the
# stages that have them, run on the NVMe images the VM left (one file per
# controller serial), for each tree whose run in the VM finished; their
# results go into the log as more lines of that tree's run.
after_vm() {
	local keep=$1 log=$2 r stage trees t
	shift 2
	for r in "$@"; do
		stage=${r%%:*} trees=${r#*:}
		[ -f "$REPO/tests/$stage/after-vm.sh" ] || continue
		for t in ${trees//,/ }; do
			after_vm_checks "$t" || continue
			[ "$(count "$stage" "$t" "$log" | cut -d' ' -f4)" = 1 ] || continue
			{
				printf 'KTAP version 1\n# host side, after the VM\n1..1\n'
				echo "    KTAP version 1"
				echo "    # Subtest: $stage $t"
				bash "$REPO/tests/$stage/after-vm.sh" "$t" "$keep" 2>&1 | sed 's/^/    /'
				echo "ok 1 $stage $t"
			} >>"$log"
		done
	done
	rm -rf "$keep"
}

# judge_vms LOG NN-name:trees...: the results of these runs in LOG.
judge_vms() {
	local log=$1 r stage tree trees
	shift
	for r in "$@"; do
		stage=${r%%:*}
		if [ -n "$LEARNER" ]; then
			learner_report "$stage" "$log"
			continue
		fi
		trees=${r#*:}
		for tree in ${trees//,/ }; do judge "$stage" "$tree" "$log"; done
	done
}

# make check: every check of the learner's run, with what went wrong and a hint.
learner_report() {
	local stage=$1 log=$2 p f sk ended boot
	read -r p f sk ended < <(count "$stage" steps "$log")
	# The lines of the boot that ran it, not the last boot's.
	boot=$(boot_out "$stage" steps)
	[ -f "$boot" ] || boot=$log
	if [ "$ended" != 1 ] && [ $((p + f + sk)) = 0 ]; then
		notok "$stage: the VM run finished" "$(grep -E 'RKW:vm-timeout|RKW:stalled|RKW:gave-up|^# kernel tainted' "$boot"; echo "The VM stopped early; its last lines:"; tail -25 "$boot")"
		return
	fi
	python3 "$REPO/scripts/ktap.py" report "$log" "$stage" steps
	# The learner's closing line counts the checks above, one by one.
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	if [ "$ended" != 1 ]; then
		notok "$stage: the VM run finished" "$(grep -E 'RKW:vm-timeout|RKW:stalled' "$boot"; echo "The VM stopped before the test's end; its last lines:"; tail -15 "$boot")"
	elif [ "$f" = 0 ]; then
		# The build is a check too (counted by ok above): one count, the
		# same as the closing "N passed, N failed".
		say "$stage: all $((p + 1)) checks pass (the build and $p of the test). Well done! On to the next chapter."
	else
		say "$stage: $f of $((p + f + 1)) checks fail (the build passed; $f of the test's $((p + f))): see the ✗ lines above (full VM log: ${log#"$REPO"/})"
	fi
}

[ -z "$SOURCED" ] || return 0

# ---- the whole run -----------------------------------------------------------------
STAGES=$(stages) || exit 2
# make progress reads what make check said, for the files it tested.
# shellcheck disable=SC2086 # one argument per stage
[ -z "$LEARNER" ] || "$REPO/scripts/progress.sh" --begin $STAGES
if [ -z "$LEARNER" ]; then
	# shellcheck disable=SC2086 # one argument per stage
	if out=$("$REPO/scripts/check-skeletons.py" $STAGES 2>&1); then
		ok "skeletons differ from solutions only in their exercises ($(tail -1 <<<"$out"))"
	else
		notok "skeletons differ from solutions only in their exercises" "$out"
	fi
	# shellcheck disable=SC2086 # one argument per stage
	if out=$("$REPO/scripts/check-modules.py" $STAGES 2>&1); then
		ok "module graphs: $(tail -1 <<<"$out")"
	else
		notok "module graphs: no two files import each other, a shared file means the same everywhere" "$out"
	fi
	# The kernel's style: rustfmt with its configuration (.rustfmt.toml,
	# the kernel's), as `make rustfmtcheck` checks it.
	if out=$(cd "$REPO" && git ls-files -z 'solutions/*.rs' 'steps/*.rs' | xargs -0 rustfmt --check 2>&1); then
		ok "every Rust file is formatted as the kernel's rustfmt configuration says"
	else
		notok "every Rust file is formatted as the kernel's rustfmt configuration says (run rustfmt on the files below)" "$(sed -nE 's/^Diff in (.*\.rs)( at line [0-9]+)?:([0-9]+:)?$/\1/p' <<<"$out" | xargs -r realpath -m --relative-to="$REPO" | sort -u | head -20)"
	fi
	# shellcheck disable=SC2086 # one argument per stage
	if out=$("$REPO/scripts/check-log-lines.py" $STAGES 2>&1); then
		ok "log lines: $(tail -1 <<<"$out" | sed 's/^check-log-lines: //')"
	else
		notok "log lines: every line a test requires is in a skeleton or a chapter" "$out"
	fi
fi
HOST_STAGES=()
for stage in $STAGES; do
	if [ "$(stage_env "$stage" VM)" = no ]; then
		HOST_STAGES+=("$stage")
	else
		build_stage "$stage"
	fi
done
rm -f "$LOGS"/vm-*.out "$LOGS/vm.seconds" "$LOGS/boots"
BOOT=0
# Every boot planned as a job (plan_jobs), the solutions' on the debug
# kernel and the skeletons' on the fast one (which only have to fail: they
# need no KASAN), all run in two lanes, the longest first (run_jobs).
JOBS=()
[ ${#VM_RUNS[@]} -eq 0 ] || mapfile -t -O 0 JOBS < <(plan_jobs "$FLAVOUR" "${VM_RUNS[@]}")
[ ${#VM_RUNS_FAST[@]} -eq 0 ] || mapfile -t -O ${#JOBS[@]} JOBS < <(plan_jobs "$SKELETON_FLAVOUR" "${VM_RUNS_FAST[@]}")
LANES_PID=""
if [ ${#JOBS[@]} -gt 0 ] && [ -z "$LEARNER" ]; then
	# make test: the VMs start now, and the host stages and host tests
	# below (minutes of cargo builds) run beside them, niced: under TCG the
	# VMs leave the cores idle part of the time (a test waiting on a timer,
	# a guest idle between checks), and the host work fills it. Each job
	# writes only its own logs; the counts are the judges' below.
	BOOT_ID=1 run_jobs "${JOBS[@]}" &
	LANES_PID=$!
	HOST_NICE=(nice -n 10)
fi
# The host stages' skeletons, then their solutions, then the host tests of
# the solutions: the host tests' crate is rebuilt at each change of tree.
if [ -n "$LEARNER" ]; then
	for stage in "${HOST_STAGES[@]}"; do host_stage "$stage"; done
else
	for tree in steps solutions; do
		for stage in "${HOST_STAGES[@]}"; do host_stage "$stage" "$tree"; done
	done
	[ ${#STEPS[@]} -gt 0 ] || host_tests
fi
if [ -n "$LANES_PID" ]; then
	wait "$LANES_PID"
	record_seconds
elif [ ${#JOBS[@]} -gt 0 ]; then
	RKW_TEST_LANES=1 run_jobs "${JOBS[@]}"
fi
[ ${#VM_RUNS[@]} -eq 0 ] || judge_vms "$(job_log "$FLAVOUR")" "${VM_RUNS[@]}"
[ ${#VM_RUNS_FAST[@]} -eq 0 ] || judge_vms "$(job_log "$SKELETON_FLAVOUR")" "${VM_RUNS_FAST[@]}"

if [ -z "$LEARNER" ] && [ ${#STEPS[@]} -eq 0 ]; then
	# The book, and the checks of the repository's tools.
	# make setup's decisions (KVM or TCG, missing programs) with fake probes.
	if out=$(bash "$REPO/tests/setup/test.sh" 2>&1); then
		ok "make setup's probes: $(tail -1 <<<"$out")"
	else
		notok "make setup's probes" "$(grep -v '^ok ' <<<"$out")"
	fi
	# The harness's own checks (this script, guest-run.sh, teeth.py),
	# with a fake VM.
	if out=$(bash "$REPO/tests/harness/test.sh" 2>&1); then
		ok "the test harness: $(tail -1 <<<"$out")"
	else
		notok "the test harness (tests/harness/test.sh)" "$(grep -v '^ok ' <<<"$out")"
	fi
	# The maintainer tooling's unit tests (scripts/rkw: the stage reader,
	# the Rust parser on every .rs file), by the venv's pytest.
	if out=$(cd "$REPO" && "$VENV/bin/python3" -m pytest -q -p no:cacheprovider tests/tooling 2>&1); then
		ok "the tooling's unit tests: $(tail -1 <<<"$out")"
	else
		notok "the tooling's unit tests (tests/tooling, pytest)" "$(grep -vE '^[.sx]+ *(\[ *[0-9]+%\])?$' <<<"$out" | tail -40)"
	fi
	if out=$("$REPO/scripts/hint.sh" --check 2>&1); then
		ok "every exercise has its three tiers of hints (make hint)"
	else
		notok "every exercise has its three tiers of hints (scripts/hint.sh --check)" "$out"
	fi
	if out=$("$REPO/scripts/estimate.py" --check 2>&1); then
		ok "the time estimates (README, chapters) are current"
	else
		notok "the time estimates (run scripts/estimate.py --write)" "$out"
	fi
	if out=$("$REPO/scripts/gen-book-extras.py" --check 2>&1); then
		ok "the book's generated sections are up to date; every unsafe site has its SAFETY comment"
	else
		notok "the book's generated sections (run scripts/gen-book-extras.py)" "$out"
	fi
	if out=$("$REPO/scripts/book-check.sh" 2>&1); then
		ok "the book: builds without a warning, names only what exists, works in a browser"
	else
		notok "the book (scripts/book-check.sh)" "$out"
	fi

fi

# shellcheck disable=SC2086 # one argument per stage
[ -z "$LEARNER" ] || "$REPO/scripts/progress.sh" --record "$PASSED" "$FAILED" $STAGES
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
