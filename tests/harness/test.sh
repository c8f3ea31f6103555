#!/bin/bash
# Tests of the test harness itself, on the host, with a fake VM: how
# scripts/test.sh plans boots again and shows a failure's lines, what
# tests/guest-run.sh prints when the kernel is tainted, and which modules
# scripts/teeth.py builds. No VM, no kernel build, no module is loaded:
# guest-run.sh runs here only with a fake taint (every run skipped) and a
# flavour with no modules, and the builds are a fake build-stage.sh's.
# Usage: bash tests/harness/test.sh (make test runs it).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)) && echo "ok   $1"; }
notok() { FAILED=$((FAILED + 1)) && printf 'FAIL %s\n%s\n' "$1" "$2" | sed '3,$s/^/     /'; }
# expect DESC OUTPUT CONDITION...: ok if every CONDITION (a shell test run
# with $out set to OUTPUT) holds.
expect() {
	local desc=$1 c
	out=$2
	shift 2
	for c in "$@"; do
		if ! eval "$c"; then
			notok "$desc" "this does not hold: $c
output:
$out"
			return
		fi
	done
	ok "$desc"
}

# ---- a kernel tainted at boot --------------------------------------------------
# A fake dmesg: boot lines, then a Bad page report longer than 40 lines (as
# the debug kernel printed one before any module was loaded, flag 32).
mkdir -p "$W/bin"
cat >"$W/bin/dmesg" <<'D'
#!/bin/bash
echo "[    0.000000] Linux version 7.3.4 (harness)"
echo "[    0.100000] Command line: console=ttyS0"
echo "[    4.200000] BUG: Bad page state in process swapper/0  pfn:02c1f"
echo "[    4.200001] page: refcount:0 mapcount:1 mapping:0000000000000000 index:0x0 pfn:0x2c1f"
echo "[    4.200002] page dumped because: nonzero mapcount"
echo "[    4.200003] Call Trace:"
for i in $(seq 1 60); do echo "[    4.2001$i]  frame_$i+0x10/0x20"; done
echo "[    9.000000] harness: the last line"
D
chmod +x "$W/bin/dmesg"
echo 32 >"$W/tainted"

# guest_tainted RUN...: guest-run.sh as a VM tainted at boot runs it. The
# flavour "harness" has no modules: were the taint not seen, the runs would
# find no .ko and load nothing.
guest_tainted() {
	(cd "$REPO" && PATH="$W/bin:$PATH" RKW_TAINTED_FILE="$W/tainted" RKW_FLAVOUR=harness \
		bash tests/guest-run.sh "$@" 2>&1)
}

out=$(guest_tainted 01-hello:solutions 02-params:solutions)
expect "guest-run: a kernel tainted at boot skips every run and says it was at boot" "$out" \
	'grep -q "^ok 1 01-hello solutions # SKIP kernel tainted (32) at boot, before 01-hello solutions" <<<"$out"' \
	'grep -q "^ok 2 02-params solutions # SKIP kernel tainted" <<<"$out"' \
	'! grep -q "# Subtest:" <<<"$out"'
expect "guest-run: a skip for a taint prints the kernel's report (the BUG line, its Call Trace), at most 40 lines" "$out" \
	'grep -q "^#   BUG: Bad page state in process swapper/0" <<<"$out"' \
	'grep -q "^#   Call Trace:" <<<"$out"' \
	'[ "$(grep -c "^#   " <<<"$out")" -le 40 ]' \
	'! grep -q "Command line" <<<"$out"'

# ---- run_boots: a fresh VM for a boot tainted at boot, once ---------------------
# The fake VM: boots listed in FAKE_TAINTED (e.g. "1", or "all") are tainted
# at boot and run the real guest-run.sh (which skips everything); the
# others pass every run with one check. Each boot is counted in $W/boots-n.
cat >"$W/vm.sh" <<'V'
#!/bin/bash
n=$(($(cat "$W/boots-n" 2>/dev/null || echo 0) + 1))
echo "$n" >"$W/boots-n"
while [ $# -gt 0 ]; do
	case $1 in --exec) cmd=$2 && shift ;; esac
	shift
done
runs=${cmd#*tests/guest-run.sh }
[ "${FAKE_SILENT:-}" = "" ] || exit 1
# hang: print nothing more and never end, in a child under coreutils'
# timeout as vng is in vm.sh (timeout makes a process group of its own, so
# stopping vm.sh's group does not stop it).
hang() {
	timeout 300 sleep 300 &
	echo $! >>"$W/hung-pids"
	wait
	exit 0
}
# Boots listed in FAKE_HANG print nothing and hang.
if [ "${FAKE_HANG:-}" = all ] || grep -qw "$n" <<<"${FAKE_HANG:-}"; then
	hang
fi
# Boots listed in FAKE_QUIET print guest-run.sh's first line, then hang
# (stuck before any test began).
if grep -qw "$n" <<<"${FAKE_QUIET:-}"; then
	echo "KTAP version 1"
	hang
fi
# Boots listed in FAKE_STALL begin their first run, then hang (a test
# stuck in the kernel).
if grep -qw "$n" <<<"${FAKE_STALL:-}"; then
	r=${runs%% *}
	printf 'KTAP version 1\n    KTAP version 1\n    # Subtest: %s %s\n' "${r%%:*}" "${r#*:}"
	hang
fi
if [ "$FAKE_TAINTED" = all ] || grep -qw "$n" <<<"$FAKE_TAINTED"; then
	# shellcheck disable=SC2086 # one argument per run
	cd "$REPO" && PATH="$W/bin:$PATH" RKW_TAINTED_FILE="$W/tainted" RKW_FLAVOUR=harness bash tests/guest-run.sh $runs
	exit 0
fi
echo "KTAP version 1"
i=0
for r in $runs; do
	trees=${r#*:}
	for t in ${trees//,/ }; do
		i=$((i + 1))
		printf '    KTAP version 1\n    # Subtest: %s %s\n    ok 1 the fake check of %s\n' "${r%%:*}" "$t" "${r%%:*}"
		# Boots listed in FAKE_STOP stop in their first run (as a kernel
		# tainted by it does).
		if grep -qw "$n" <<<"${FAKE_STOP:-}"; then exit 0; fi
		echo "ok $i ${r%%:*} $t"
	done
done
V
chmod +x "$W/vm.sh"

# in_test_sh SNIPPET: SNIPPET in a shell that sourced scripts/test.sh (its
# functions), with the logs in $W/logs and the fake VM.
in_test_sh() {
	rm -rf "$W/logs" "$W/boots-n"
	mkdir -p "$W/logs/jobs"
	W=$W REPO=$REPO RKW_FLAVOUR=debug bash -c '
		. "$1/scripts/test.sh"
		LOGS="$2/logs" VM_SH="$2/vm.sh" BOOT=0
		eval "$3"' in_test_sh "$REPO" "$W" "$1" 2>&1
}
export W REPO

out=$(FAKE_TAINTED=1 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions 02-params:solutions
	echo "boots $(cat "$W/boots-n")"
	echo "01 $(count 01-hello solutions "$VMLOG")"
	echo "02 $(count 02-params solutions "$VMLOG")"')
expect "run_boots: a boot tainted at boot is booted once more, and its runs run there" "$out" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -qx "01 1 0 0 1" <<<"$out"' \
	'grep -qx "02 1 0 0 1" <<<"$out"'

out=$(FAKE_TAINTED=all in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions
	echo "boots $(cat "$W/boots-n")"
	judge 01-hello solutions "$VMLOG"')
expect "run_boots: a kernel tainted at every boot is booted twice, then fails and says so" "$out" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -q "FAIL.*01-hello: solution passes its test (it did not run: the kernel was tainted at boot twice in a row, before any test ran)" <<<"$out"' \
	'grep -q "RKW:gave-up the kernel was tainted at boot twice in a row" <<<"$out"'

# fast: a stage's solution and skeleton share a run; a boot that stops in
# the solution's leaves the skeleton's to the next boot (it did not begin),
# where it runs and is judged on what it did.
out=$(FAKE_STOP=1 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions,steps
	echo "boots $(cat "$W/boots-n")"
	echo "steps $(count 01-hello steps "$VMLOG")"
	grep -h "01-hello" "$LOGS/boots"')
expect "run_boots: a boot that stops in a stage's solution runs its skeleton in the next boot" "$out" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -qx "steps 1 0 0 1" <<<"$out"' \
	'grep -q " 01-hello:steps$" <<<"$out"'

out=$(FAKE_TAINTED=all in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:steps
	judge 01-hello steps "$VMLOG"')
expect "judge: a skeleton that never ran (tainted at boot twice) does not count as failing its test" "$out" \
	'grep -q "FAIL.*01-hello: skeleton is not a solution (it did not run: the kernel was tainted at boot twice in a row, before any test ran)" <<<"$out"'

out=$(FAKE_TAINTED="" FAKE_SILENT=1 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions
	echo "boots $(cat "$W/boots-n")"')
expect "run_boots: a boot that ran nothing for another reason is not booted again" "$out" \
	'grep -qx "boots 1" <<<"$out"'

rm -f "$W/hung-pids"
out=$(FAKE_HANG=1 RKW_BOOT_LIMIT=2 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions
	echo "boots $(cat "$W/boots-n")"
	echo "01 $(count 01-hello solutions "$VMLOG")"
	grep -h "RKW:" "$LOGS"/*.out')
left=$(while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done <"$W/hung-pids")
expect "run_boots: a boot silent for RKW_BOOT_LIMIT s is stopped whole and booted once more" "$out
left: $left" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -qx "01 1 0 0 1" <<<"$out"' \
	'grep -q "RKW:boot-hung the guest printed nothing in 2 s: stopped" <<<"$out"' \
	'grep -qx "left: " <<<"$out
left: $left"'

out=$(FAKE_HANG=all RKW_BOOT_LIMIT=2 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions
	echo "boots $(cat "$W/boots-n")"
	judge 01-hello solutions "$VMLOG"')
expect "run_boots: a boot that hangs twice in a row is not booted a third time, and says so" "$out" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -q "FAIL.*01-hello: solution passes its test (it did not run: the boot hung twice in a row, before any test ran)" <<<"$out"' \
	'grep -q "RKW:gave-up the boot hung twice in a row" <<<"$out"'

rm -f "$W/hung-pids"
out=$(FAKE_STALL=1 RKW_STALL_LIMIT=3 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions 02-params:solutions
	echo "boots $(cat "$W/boots-n")"
	echo "02 $(count 02-params solutions "$VMLOG")"
	judge 01-hello solutions "$VMLOG"')
left=$(while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done <"$W/hung-pids")
expect "run_boots: a guest silent in a test for longer than its limit is stopped whole; the runs it did not begin get a fresh boot" "$out
left: $left" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -qx "02 1 0 0 1" <<<"$out"' \
	'grep -q "FAIL.*01-hello: solution passes its test (its VM run did not finish)" <<<"$out"' \
	'grep -q "RKW:stalled the guest printed nothing for [0-9]* s" <<<"$out"' \
	'grep -qx "left: " <<<"$out
left: $left"'

out=$(FAKE_QUIET=1 RKW_STALL_LIMIT=3 in_test_sh '
	VMLOG="$LOGS/jobs/0.log"; run_boots "" 01-hello:solutions
	echo "boots $(cat "$W/boots-n")"
	echo "01 $(count 01-hello solutions "$VMLOG")"')
expect "run_boots: a guest that stalls before its first test began is booted once more, as a hung boot" "$out" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -qx "01 1 0 0 1" <<<"$out"'

# ---- a failure's excerpt: the lines of its own boot --------------------------
# As in make test: jobs 6 and 8 in one lane (boot numbers 1, 2 and 3); job 6
# (01-hello) tainted at every boot, job 8 (35) passes; vm.log has job 6's log,
# then job 8's.
out=$(FAKE_TAINTED="1 2" in_test_sh '
	BOOT_ID=1 run_job 6 "debug||||100|01-hello:solutions"
	BOOT_ID=1 run_job 8 "debug||||100|35-9p-async-reads:solutions"
	judge 01-hello solutions "$(job_log debug)"')
expect "test.sh: a failure shows the lines of the boot that ran the stage, not another boot's" "$out" \
	'grep -q "FAIL.*01-hello: solution passes its test" <<<"$out"' \
	'! grep -q "35-9p-async-reads" <<<"$out"' \
	'grep -q "its boot: .*vm-job6-debug-2.out" <<<"$out"' \
	'grep -q "SKIP kernel tainted (32) at boot, before 01-hello solutions" <<<"$out"'

# ---- plan_jobs: a skeleton that leaves the VM unfit runs last in its boot -------
out=$(in_test_sh '
	plan_jobs fast 16-passthrough:steps 17-timeouts:steps 18-removal:steps 19-zero-copy:steps
	plan_jobs debug 16-passthrough:solutions 18-removal:solutions 19-zero-copy:solutions')
expect "plan_jobs: 18's skeleton (SKELETON_LAST=yes) runs last in its boot; its solution keeps its place" "$out" \
	'grep -q "|16-passthrough:steps 17-timeouts:steps 19-zero-copy:steps 18-removal:steps$" <<<"$out"' \
	'grep -q "|16-passthrough:solutions 18-removal:solutions 19-zero-copy:solutions$" <<<"$out"' \
	'grep -q "^fast|swiotlb=force|2|yes|" <<<"$out"'

# ---- the modules a stage's test loads (USES) -------------------------------------
# A copy of the repository's layout whose build-stage.sh only logs what it
# was asked to build (and for which kernel).
mkdir -p "$W/repo/scripts"
for f in "$REPO"/*; do
	case ${f##*/} in scripts | build) ;; *) ln -s "$f" "$W/repo/${f##*/}" ;; esac
done
for f in "$REPO"/scripts/*; do ln -s "$f" "$W/repo/scripts/${f##*/}"; done
rm "$W/repo/scripts/build-stage.sh"
cat >"$W/repo/scripts/build-stage.sh" <<'B'
#!/bin/bash
echo "$* ${RKW_FLAVOUR:-debug}" >>"$W/built"
B
chmod +x "$W/repo/scripts/build-stage.sh"

rm -f "$W/built"
out=$(RKW_FLAVOUR=fast python3 "$W/repo/scripts/teeth.py" 34 --no-vm --only none --report "$W/report.md" 2>&1)
out="$out
built:
$(cat "$W/built" 2>/dev/null)"
expect "teeth.py builds the solutions of the stages the test loads too (USES), as test.sh does" "$out" \
	'grep -qx "solutions 34-kiocb-reactor fast" <<<"$out"' \
	'grep -qx "solutions 20-disk-limits fast" <<<"$out"'

rm -f "$W/built"
out=$(RKW_FLAVOUR=debug bash -c '
	. "$1/scripts/test.sh"
	LOGS="$2/logs" SKELETON_FLAVOUR=fast
	build_stage 35-9p-async-reads' sh "$W/repo" "$W" 2>&1)
out="$out
built:
$(cat "$W/built" 2>/dev/null)"
expect "test.sh builds them for each kernel the stage boots on (debug and fast)" "$out" \
	'grep -qx "solutions 20-disk-limits debug" <<<"$out"' \
	'grep -qx "solutions 20-disk-limits fast" <<<"$out"'

# ---- teeth's boots: test.sh's run_boots, through rkw.boots ------------------------
# The copy of the layout boots the fake VM, which writes down the kernel
# arguments, vCPUs and QMP each boot was given.
rm "$W/repo/scripts/vm.sh"
cat >"$W/repo/scripts/vm.sh" <<'V'
#!/bin/bash
echo "${RKW_VM_APPEND:-}|${RKW_VM_CPUS:-}|${RKW_VM_QMP:-}" >>"$W/vm-args"
exec bash "$W/vm.sh" "$@"
V
chmod +x "$W/repo/scripts/vm.sh"
rm -rf "$W/logs" "$W/boots-n" "$W/vm-args"
mkdir -p "$W/logs"
out=$(FAKE_TAINTED="" RKW_FLAVOUR=debug python3 -c '
import sys
sys.path.insert(0, sys.argv[1] + "/scripts")
from rkw import boots
log, logs = sys.argv[2] + "/logs/t.log", sys.argv[2] + "/logs"
n = boots.run_stage("13-blk-mq", ["solutions", "teeth-13-w1"], log, logs, 0, "13-blk-mq", "solutions")
n = boots.run_stage("17-timeouts", ["teeth-17-w1"], log, logs, n, "17-timeouts")
print("boots", n)' "$W/repo" "$W" 2>&1)
out="$out
$(cat "$W/vm-args")
$(ls "$W/logs")
$(grep -c "# Subtest: 13-blk-mq solutions" "$W/logs/t.log") runs of 13's solution
$(grep -c "# Subtest: 13-blk-mq teeth-13-w1" "$W/logs/t.log") runs of its variant"
expect "rkw.boots: teeth boots through run_boots, with the stage's kernel arguments; after-vm.sh for the trees it names" "$out" \
	'grep -qx "boots 2" <<<"$out"' \
	'grep -qx "kmemleak=on|2|" <<<"$out"' \
	'grep -qx "kmemleak=on swiotlb=force|2|yes" <<<"$out"' \
	'grep -qx "vm-13-blk-mq-debug-1.out" <<<"$out"' \
	'grep -qx "vm-17-timeouts-debug-2.out" <<<"$out"' \
	'grep -qx "2 runs of 13.s solution" <<<"$out"' \
	'grep -qx "1 runs of its variant" <<<"$out"'

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
