# The stage-test library. Stage tests (tests/NN-name/test.sh) source it and
# run as root inside the workshop VM. Results are KTAP (the kernel's test
# format, Documentation/dev-tools/ktap.rst), one line per check:
#     ok 3 <what was checked>
#     not ok 4 <what was checked>
#     ok 5 <what was checked> # SKIP <why it could not run>
# A failed check is followed by "# " lines: what was expected, what came, the
# hint, a dmesg excerpt. guest-run.sh makes each tree's run a subtest of the
# boot's KTAP document; scripts/ktap.py reads it on the host.
# shellcheck shell=bash

: "${MODULE:?stage.env must set MODULE}"
: "${KO:?the runner must set KO, the path of the module to test}"

# shellcheck source=health.sh
. "$(dirname "${BASH_SOURCE[0]}")/health.sh"

# python3, in a test, without `site` (-S): the tests' scripts use the
# standard library only, and site's search of the path, over the VM's 9p
# root, is half of every start (the debug kernel, idle: 0.42 s against
# 0.99 s; under make test's load, 1-1.5 s of 2.5-3). Their bytecode is
# compiled on the host (scripts/vm.sh): the VM's root is read-only.
python3() { command python3 -S "$@"; }

RKW_PASS=0
RKW_FAIL=0
RKW_SKIP=0
RKW_N=0
RKW_MARK=""
RKW_HINT=""
RKW_LOADED=0

# ---- results -------------------------------------------------------------------
# ktap_desc TEXT: a check's description as KTAP allows it (no "#", one line).
ktap_desc() {
	local d=${1//$'\n'/ }
	printf '%s' "${d//#/no.}"
}

# diag LINE...: "# " diagnostic lines (each argument may hold several lines).
diag() {
	local line
	for line in "$@"; do
		[ -n "$line" ] && printf '%s\n' "$line" | sed 's/^/# /'
	done
	return 0
}

pass() {
	RKW_PASS=$((RKW_PASS + 1)) RKW_N=$((RKW_N + 1))
	echo "ok $RKW_N $(ktap_desc "$1")"
}

# fail DESC [DETAIL...]: record a failed check, with its details (say what
# was expected and what came) and the hint of the checks it belongs to.
fail() {
	RKW_FAIL=$((RKW_FAIL + 1)) RKW_N=$((RKW_N + 1))
	echo "not ok $RKW_N $(ktap_desc "$1")"
	shift
	diag "$@"
	[ -z "$RKW_HINT" ] || echo "# hint: $RKW_HINT"
	# A skeleton's TODO returns ENOSYS: when the log shows one, the cause
	# is most likely an exercise not written yet, whatever the hint says.
	if [ -n "$RKW_MARK" ] && dmesg_since_mark | grep -qE 'Error\(38\)|error -38\b|ENOSYS'; then
		echo "# note: the kernel log since this check began shows ENOSYS (error 38), what a skeleton's TODO returns: an exercise this check needs may not be written yet"
	fi
	# make test runs each skeleton only to see its test fail: the first
	# failure is enough (guest-run.sh stops and unmounts what it left).
	if [ -n "${RKW_FIRST_FAIL:-}" ] && [ "$BASHPID" = "$$" ]; then
		echo "# stopped at the first failure: a skeleton only has to fail (make test)"
		echo "# Totals: pass:$RKW_PASS fail:$RKW_FAIL xfail:0 xpass:0 skip:$RKW_SKIP error:0"
		exit 0
	fi
	return 0
}

# skip DESC REASON: a check that cannot run here (e.g. kmemleak on the fast
# kernel); it neither passes nor fails.
skip() {
	RKW_SKIP=$((RKW_SKIP + 1)) RKW_N=$((RKW_N + 1))
	echo "ok $RKW_N $(ktap_desc "$1") # SKIP $(ktap_desc "$2")"
}

# hint TEXT: shown with every check after it that fails, until the next hint
# (hint "" for checks that need none).
hint() {
	RKW_HINT=$1
	rkw_state
}

# rkw_state: what the step running now is about (its mark and hint), for
# guest-run.sh to report if the stage's time limit stops the script here.
rkw_state() {
	[ -z "${RKW_STATE:-}" ] || printf 'mark %s\nhint %s\n' "$RKW_MARK" "$RKW_HINT" >"$RKW_STATE"
}

# ---- the kernel log --------------------------------------------------------------
# mark: later dmesg checks only look at what the kernel logs after this.
mark() {
	RKW_MARK="RKW-MARK-$$-$RANDOM$RANDOM"
	echo "$RKW_MARK" >/dev/kmsg
	rkw_state
}

# dmesg_since_mark: the kernel log since the last mark, without timestamps.
dmesg_since_mark() {
	log_since "$RKW_MARK" bare
}

excerpt() { # the last lines of the log since the mark, for failure reports
	echo "dmesg since the check began:"
	dmesg_since_mark | tail -n "${1:-15}" | sed 's/^/  /'
}

# ---- checks ----------------------------------------------------------------------
# check DESC CMD...: passes when CMD succeeds.
check() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ]; then
		pass "$desc"
	else
		fail "$desc" "expected: \`$*\` succeeds" "got: exit status $rc${out:+: $out}" "$(excerpt 10)"
	fi
	return $rc
}

# within SECONDS CMD...: CMD with a deadline of its own (exit status 124
# when it ran out): a step that can hang (a listing that never ends) fails
# its own check, named and with its hint, long before the script's limit.
within() {
	local t=$1
	shift
	timeout -k 5 "$t" "$@"
}

# check_fails DESC CMD...: passes when CMD fails.
check_fails() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -ne 0 ]; then
		pass "$desc"
	else
		fail "$desc" "expected: \`$*\` fails" "got: it succeeded${out:+: $out}"
	fi
}

# run_checks CMD...: every "ok WHAT" / "not-ok WHAT" line CMD prints is a
# check (with the "# DETAIL" lines that follow a not-ok); a CMD that prints
# no check at all fails as one.
run_checks() {
	local out line what="" details=() n=0
	out=$("$@" 2>&1)
	flush() {
		[ -n "$what" ] && fail "$what" "${details[@]}" "$(excerpt 8)"
		what="" details=()
	}
	while IFS= read -r line; do
		case "$line" in
		"ok "*) flush; n=$((n + 1)); pass "${line#ok }" ;;
		"not-ok "*) flush; n=$((n + 1)); what=${line#not-ok } ;;
		"# "*) if [ -n "$what" ]; then details+=("${line#\# }"); else echo "$line"; fi ;;
		*) [ -n "$what" ] && details+=("$line") ;;
		esac
	done <<<"$out"
	flush
	[ $n -gt 0 ] || fail "$* reports its checks" "$out"
}

# mount9p MSIZE CACHE: mounts the 9P server listening on 127.0.0.1:$PORT
# (the stages' r9p) on $MNT, with v9fs's msize and cache mode.
mount9p() { mount -t 9p -o "trans=tcp,port=$PORT,version=9p2000.L,msize=$1,cache=$2" 127.0.0.1 "$MNT"; }

# expect_dmesg DESC REGEX: the kernel logged a line matching REGEX since the mark.
expect_dmesg() {
	if dmesg_since_mark | grep -qE -- "$2"; then
		pass "$1"
	else
		fail "$1" "expected: a kernel log line matching $2" "got: none" "$(excerpt)"
	fi
}

# wait_dmesg DESC REGEX SECONDS: the kernel logs a line matching REGEX since
# the mark within SECONDS (for work a module does after insmod returned).
wait_dmesg() {
	local deadline=$((SECONDS + $3))
	while :; do
		if dmesg_since_mark | grep -qE -- "$2"; then
			pass "$1"
			return 0
		fi
		[ $SECONDS -lt $deadline ] || break
		sleep 0.2
	done
	fail "$1" "expected: a kernel log line matching $2 within $3 s" "got: none" "$(excerpt)"
	return 1
}

# wait_progress DESC DONE_REGEX PROGRESS_REGEX STALL_SECONDS [CAP_SECONDS [FIRST_SECONDS]]:
# like wait_dmesg, for long work that logs progress lines (PROGRESS_REGEX):
# it waits as long as the progress moves, and fails only when no new
# progress line came for STALL_SECONDS ("stuck"), or after CAP_SECONDS
# (default 150) in all ("too slow"). A busy or emulated machine is slow, a
# lost wakeup is stuck: the failure says which, with the last progress line.
# The first progress line must come within FIRST_SECONDS (default: STALL):
# work that never starts (an untouched skeleton) fails early.
wait_progress() {
	local desc=$1 done_re=$2 prog_re=$3 stall=$4 cap=${5:-150} first=${6:-$4}
	local t0=$SECONDS last=$SECONDS seen=0 n log
	while :; do
		log=$(dmesg_since_mark)
		if grep -qE -- "$done_re" <<<"$log"; then
			pass "$desc ($((SECONDS - t0)) s)"
			return 0
		fi
		n=$(grep -cE -- "$prog_re" <<<"$log")
		if [ "$n" -gt "$seen" ]; then
			seen=$n last=$SECONDS
		fi
		if [ "$seen" = 0 ] && [ $((SECONDS - t0)) -ge "$first" ]; then
			fail "$desc" "expected: progress lines within $first s" "got: none: the work never started" "$(excerpt)"
			return 1
		fi
		if [ $((SECONDS - last)) -ge "$stall" ]; then
			fail "$desc" "stuck: no progress for $stall s after $((SECONDS - t0)) s; the last progress line: $(grep -E -- "$prog_re" <<<"$log" | tail -1 || true)" "$(excerpt)"
			return 1
		fi
		if [ $((SECONDS - t0)) -ge "$cap" ]; then
			fail "$desc" "too slow: still moving after $cap s ($(grep -E -- "$prog_re" <<<"$log" | tail -1))" "$(excerpt)"
			return 1
		fi
		sleep 0.5
	done
}

# expect_no_dmesg DESC REGEX: the kernel logged no line matching REGEX.
expect_no_dmesg() {
	if dmesg_since_mark | grep -qE -- "$2"; then
		fail "$1" "expected: no kernel log line matching $2" "got:" "$(dmesg_since_mark | grep -E -- "$2" | head -5)"
	else
		pass "$1"
	fi
}

# is_ok DESC CMD...: passes when CMD prints a line starting with "ok" (how the
# tests' client programs report success); the line goes into the result.
is_ok() {
	local desc=$1 out
	shift
	out=$("$@" 2>&1)
	if [[ "$out" == ok* ]]; then pass "$desc ($out)"; else fail "$desc" "expected: \`$*\` prints ok" "got: $out" "$(excerpt 10)"; fi
}

# wait_ready FILE TENTHS: wait up to TENTHS tenths of a second until a client
# running in the background has written "ready" to FILE.
wait_ready() {
	local i
	for ((i = 0; i < $2; i++)); do
		grep -q ready "$1" && return 0
		sleep 0.1
	done
	return 1
}

# ---- the module --------------------------------------------------------------------
# load [PARAM=VALUE...]: insmod the module under test. If the module has
# never loaded in this run, the checks after it cannot mean anything: the
# stage says so and stops (with its closing checks).
load() {
	if check "insmod $MODULE $*" insmod "$KO" "$@"; then
		RKW_LOADED=1
		return 0
	fi
	if [ "$RKW_LOADED" = 0 ]; then
		echo "# the module did not load: the checks that need it cannot run, so this stage stops here"
		finish
		exit 0
	fi
	return 1
}

# unload: rmmod it.
unload() {
	check "rmmod $MODULE" rmmod "$MODULE"
}

loaded() { grep -q "^$MODULE " /proc/modules; }

# timed_rmmod: rmmod the module, giving up after 20 s; sets RMMOD_RC (its exit
# status) and RMMOD_MS (how long it took).
timed_rmmod() {
	local t0
	t0=$(date +%s%N)
	timeout 20 rmmod "$MODULE"
	RMMOD_RC=$?
	RMMOD_MS=$((($(date +%s%N) - t0) / 1000000))
}

# reload_twice: load and unload twice more; leaks and double-init bugs show here.
reload_twice() {
	local i
	for i in 1 2; do
		mark
		if insmod "$KO" "$@" 2>/dev/null && rmmod "$MODULE" 2>/dev/null; then
			pass "load + unload again (round $i)"
		else
			fail "load + unload again (round $i)" "$(excerpt)"
			loaded && rmmod -f "$MODULE" 2>/dev/null
			return 0
		fi
	done
}

# ---- the kernel's health ---------------------------------------------------------
# kernel_is_clean: no oops, warning, KASAN or lockdep report (RKW_BAD) since
# the stage began, and no taint other than O or E (see health.sh).
kernel_is_clean() {
	local log reports taint
	log=$(log_since "$RKW_STAGE_MARK")
	reports=$(grep -E -- "$RKW_BAD" <<<"$log" | head -5)
	taint=$(bad_taint)
	if [ -z "$reports" ] && [ "$taint" -eq 0 ]; then
		pass "kernel log has no oops, warning, KASAN or lockdep report; no taint"
	else
		fail "kernel log has no oops, warning, KASAN or lockdep report; no taint" \
			"taint flags (besides O/E): $taint" "reports:" "$reports" \
			"$(grep -B2 -A12 -m1 -E -- "$RKW_BAD" <<<"$log")"
	fi
}

# nvme_trace_is_clean: QEMU's NVMe model logged no error or undefined-
# behaviour trace (pci_nvme_err_*, pci_nvme_ub_*) since this test began.
# The VM runner points RKW_NVME_TRACE at QEMU's trace file, which the guest
# reads live through the host's file system.
# Marks in it are byte offsets: its size is a getattr, and what came after
# a mark one read from there; a count of lines read the whole trace over 9p
# each time, up to 25 s in the debug boot of stages 16-21, whose trace has
# every doorbell write of their fio runs. A line QEMU is half-way through
# writing at a mark is cut: it belongs to what came before the mark.
# nvme_trace_size: the trace's size now, in bytes (0: no trace).
nvme_trace_size() { stat -c %s "${RKW_NVME_TRACE:-/nonexistent}" 2>/dev/null || echo 0; }
# nvme_trace_since FROM [TO]: what QEMU traced from byte FROM (up to TO).
nvme_trace_since() {
	if [ $# -gt 1 ]; then
		tail -c +"$(($1 + 1))" "$RKW_NVME_TRACE" 2>/dev/null | head -c "$(($2 - $1))"
	else
		tail -c +"$(($1 + 1))" "$RKW_NVME_TRACE" 2>/dev/null
	fi
}
# new_nvme_trace: the error and undefined-behaviour lines QEMU wrote since
# RKW_TRACE_START (the trace also has every doorbell write and admin command).
# A command the driver had aborted completes with Command Abort Requested
# (status 0x7; QEMU 10 honours Abort, QEMU 7.2 does not): that is the Abort
# working, not a protocol error.
new_nvme_trace() {
	nvme_trace_since "$RKW_TRACE_START" | grep -E 'pci_nvme_(err|ub)' |
		grep -vE 'pci_nvme_err_req_status cid [0-9]+ nsid [0-9]+ status 0x7 '
}
nvme_trace_is_clean() { # [DESC]
	local new desc="QEMU's NVMe model reported no protocol errors"
	[ $# -eq 0 ] || desc=$1
	new=$(new_nvme_trace | head -10)
	if [ -z "$new" ]; then
		pass "$desc"
	else
		fail "$desc" "QEMU's trace (the model says what the driver did wrong):" "$new"
	fi
}

# expect_nvme_trace DESC REGEX: QEMU's NVMe model logged at least one trace
# line since the last check, and every one matches REGEX: a fault the test
# provoked on purpose, confirmed by the device itself. They are then no
# longer counted against nvme_trace_is_clean.
expect_nvme_trace() {
	local new
	new=$(new_nvme_trace)
	if [ -n "$new" ] && ! grep -qvE -- "$2" <<<"$new"; then
		pass "$1"
	else
		fail "$1" "expected QEMU trace lines matching $2, got:" "${new:-none}"
	fi
	RKW_TRACE_START=$(nvme_trace_size)
}

# doorbell_mark: later doorbell checks only look at what QEMU traced after this.
doorbell_mark() { RKW_DOORBELL_START=$(nvme_trace_size); }

# expect_doorbells DESC QID DEPTH SUBMITTED COMPLETED [--one-at-a-time]: the
# doorbell writes QEMU saw on queue QID since doorbell_mark are what ring
# arithmetic predicts for SUBMITTED commands and COMPLETED completions on a
# ring of DEPTH entries (tests/nvme_doorbells.py says how).
expect_doorbells() {
	local desc=$1
	shift
	is_ok "$desc" python3 "$(dirname "${BASH_SOURCE[0]}")/nvme_doorbells.py" "$RKW_NVME_TRACE" "${RKW_DOORBELL_START:-0}" "$@"
}

# traced_admin_cmds: "CID OPCODE" of every admin command QEMU traced since
# doorbell_mark, in order (opcode as QEMU prints it: 0x6, 0xc, ...).
traced_admin_cmds() {
	nvme_trace_since "${RKW_DOORBELL_START:-0}" |
		sed -nE 's/.*pci_nvme_admin_cmd cid ([0-9]+) sqid [0-9]+ opc (0x[0-9a-f]+).*/\1 \2/p'
}

# traced_io_doorbells: how many doorbell register writes (SQ tails and CQ
# heads) QEMU traced on the I/O queues (qid 1 and up) since doorbell_mark.
traced_io_doorbells() {
	nvme_trace_since "${RKW_DOORBELL_START:-0}" |
		grep -cE "pci_nvme_mmio_doorbell_(sq sqid|cq cqid) [1-9]"
}

# ---- leaks ---------------------------------------------------------------------
# Stages with KMEMLEAK=yes in stage.env run in a boot with kmemleak=on
# (scripts/test.sh). Under guest-run.sh one check at the end of the boot
# checks every tree; a test run on its own quiets kmemleak at its start
# (kmemleak_quiet: older reports forgotten, no automatic scans), and at its
# end no_leaks has kmemleak scan for objects nothing points at any more
# and fails on those the module allocated (kmemleak_scan and leaks_of in
# health.sh).
no_leaks() {
	if ! kmemleak_on; then
		skip "$LEAK_CHECK" \
			"kmemleak is not on in this boot (the fast kernel has none; make check without FAST=1 checks for leaks)"
		return 0
	fi
	# The module is gone: nothing of it is in flight.
	local ours
	ours=$(kmemleak_scan | leaks_of "$MODULE")
	hint "$LEAK_HINT"
	if [ -z "$ours" ]; then
		pass "$LEAK_CHECK"
	else
		fail "$LEAK_CHECK" "$(leaks_details "$ours")"
	fi
}

# finish: the closing checks of this tree's run, then KTAP's totals line.
finish() {
	loaded && rmmod "$MODULE" 2>/dev/null
	# Under guest-run.sh, one kmemleak check at the end of the boot checks
	# every tree (RKW_KMEMLEAK_LATER): its two scans take 20-40 s each.
	[ "${RKW_STAGE_KMEMLEAK:-}" = yes ] && [ -z "${RKW_KMEMLEAK_LATER:-}" ] && no_leaks
	hint "read the first report from its top: the book's debugging chapter shows how"
	kernel_is_clean
	hint "QEMU's trace line names what the driver did against the NVMe specification"
	[[ " ${RKW_STAGE_DEVICES:-} " =~ \ nvme[\ :] ]] && nvme_trace_is_clean
	echo "# Totals: pass:$RKW_PASS fail:$RKW_FAIL xfail:0 xpass:0 skip:$RKW_SKIP error:0"
}

RKW_TRACE_START=$(nvme_trace_size)
[ "${RKW_STAGE_KMEMLEAK:-}" = yes ] && [ -z "${RKW_KMEMLEAK_LATER:-}" ] && kmemleak_on && kmemleak_quiet
RKW_STAGE_MARK="RKW-STAGE-$$-$RANDOM$RANDOM"
echo "$RKW_STAGE_MARK" >/dev/kmsg
mark
