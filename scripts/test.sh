#!/bin/bash
# make test [STEP=NN]: for every stage, (a) the solution builds warning- and
#   clippy-free and passes its test, (b) the skeleton builds and FAILS the same
#   test; then the host tests and the book. One line per check, then
#   "N passed, N failed"; exit status 1 on any failure.
# make check STEP=NN (--learner): test the learner's steps/NN, explain failures.
set -uo pipefail
. "$(dirname "$0")/common.sh"

LEARNER=""
[ "${1:-}" = --learner ] && LEARNER=1 && shift
STEPS=("$@")

PASSED=0
FAILED=0
LOGS="$REPO/build/test-logs"
mkdir -p "$LOGS"

ok() {
	PASSED=$((PASSED + 1))
	printf '\033[32mok\033[0m   %s\n' "$1"
}
notok() {
	FAILED=$((FAILED + 1))
	printf '\033[31mFAIL\033[0m %s\n' "$1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/     /'
}

# The stages to test: all, or those whose number is in STEPS.
stages() {
	local d n
	for d in "$REPO"/tests/[0-9][0-9]-*/; do
		d=$(basename "$d")
		n=${d%%-*}
		if [ ${#STEPS[@]} -eq 0 ] || [[ " ${STEPS[*]} " == *" $n "* ]] || [[ " ${STEPS[*]} " == *" $((10#$n)) "* ]]; then
			echo "$d"
		fi
	done
}

# count TREE LOG: "pass fail ended" of one tree's run in a VM log.
count() {
	awk -v t="$1" '
		$0 == "RKW:begin " t { on = 1; next }
		$0 == "RKW:end " t { on = 0; ended = 1; next }
		on && /^RKW:ok / { p++ }
		on && /^RKW:not-ok / { f++ }
		END { printf "%d %d %d\n", p, f, ended }' "$2"
}

# details TREE LOG: the failed checks of one tree, with their explanations.
details() {
	awk -v t="$1" '
		$0 == "RKW:begin " t { on = 1; next }
		$0 == "RKW:end " t { on = 0; next }
		on && /^RKW:not-ok / { show = 1; sub(/^RKW:not-ok /, "x "); print; next }
		on && /^RKW:ok / { show = 0; next }
		on && show && /^#/ { print }' "$2"
}

# The stage's guest-side results, for one tree; $1 = solutions|steps.
judge() {
	local stage=$1 tree=$2 log=$3 p f ended
	read -r p f ended < <(count "$tree" "$log")
	local total=$((p + f))
	if [ "$tree" = solutions ]; then
		if [ "$ended" = 1 ] && [ "$f" = 0 ] && [ "$p" -gt 0 ]; then
			ok "$stage: solution passes its test ($p/$total checks)"
		elif [ "$ended" != 1 ]; then
			notok "$stage: solution passes its test (the VM run did not finish)" "$(grep -E 'RKW:vm-timeout|Kernel panic|BUG:|Oops' "$log" | head -5; tail -20 "$log")"
		else
			notok "$stage: solution passes its test ($f of $total checks fail)" "$(details "$tree" "$log")"
		fi
	else
		if [ "$f" -gt 0 ] || [ "$ended" != 1 ]; then
			ok "$stage: skeleton is not a solution ($f of $total checks fail)"
		else
			notok "$stage: skeleton is not a solution (it passes all $p checks: the test is vacuous)"
		fi
	fi
}

# ---- a stage tested on the host (no module) -----------------------------------------
host_stage() {
	local stage=$1
	if [ -n "$LEARNER" ]; then
		bash "$REPO/tests/$stage/test.sh" steps 2>&1 | tee "$LOGS/$stage-steps.log"
		return
	fi
	if bash "$REPO/tests/$stage/test.sh" solutions >"$LOGS/$stage-solutions.log" 2>&1; then
		ok "$stage: solution passes its test ($(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/$stage-solutions.log" | tail -1))"
	else
		notok "$stage: solution passes its test" "$(tail -20 "$LOGS/$stage-solutions.log")"
	fi
	if bash "$REPO/tests/$stage/test.sh" steps >"$LOGS/$stage-steps.log" 2>&1; then
		notok "$stage: skeleton is not a solution (it passes: the test is vacuous)"
	else
		ok "$stage: skeleton is not a solution ($(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/$stage-steps.log" | tail -1 || echo "it fails"))"
	fi
}

# ---- a stage tested in the VM ----------------------------------------------------------
vm_stage() {
	local stage=$1 trees=() out
	if [ -z "$LEARNER" ]; then
		if out=$("$REPO/scripts/build-stage.sh" solutions "$stage" --strict 2>&1); then
			ok "$stage: solution builds without warnings (rustc + clippy)"
			trees+=(solutions)
		else
			notok "$stage: solution builds without warnings (rustc + clippy)" "$out"
		fi
		if out=$("$REPO/scripts/build-stage.sh" steps "$stage" 2>&1); then
			ok "$stage: skeleton builds"
			trees+=(steps)
		else
			notok "$stage: skeleton builds" "$out"
		fi
	else
		say "building steps/$stage"
		"$REPO/scripts/build-stage.sh" steps "$stage" >/dev/null || {
			notok "$stage: your module builds" "Fix the compiler errors above, then run 'make check STEP=${stage%%-*}' again."
			return
		}
		ok "$stage: your module builds"
		trees=(steps)
	fi
	[ ${#trees[@]} -gt 0 ] || return
	local log="$LOGS/$stage.log"
	[ -n "$LEARNER" ] && say "booting the VM and running tests/$stage/test.sh"
	local t0=$SECONDS
	RKW_VM_LOG="$LOGS/$stage" "$REPO/scripts/vm.sh" --stage "$stage" \
		--exec "bash tests/guest-run.sh $stage ${trees[*]}" >"$log" 2>&1
	echo "$((SECONDS - t0))" >"$LOGS/$stage.seconds"
	if [ -s "$LOGS/$stage.nvme-trace" ]; then
		notok "$stage: QEMU's NVMe model reported no protocol errors" "$(head -10 "$LOGS/$stage.nvme-trace")"
	elif grep -q '^DEVICES=.*nvme' "$REPO/tests/$stage/stage.env"; then
		ok "$stage: QEMU's NVMe model reported no protocol errors"
	fi
	if [ -n "$LEARNER" ]; then
		learner_report "$stage" "$log"
		return
	fi
	local tree
	for tree in solutions steps; do
		[[ " ${trees[*]} " == *" $tree "* ]] && judge "$stage" "$tree" "$log"
	done
}

# make check: every check of the learner's run, with what went wrong and a hint.
learner_report() {
	local stage=$1 log=$2
	if ! grep -q '^RKW:end steps' "$log"; then
		notok "$stage: the VM run finished" "$(grep -E 'RKW:vm-timeout' "$log"; echo "The VM stopped early; its last lines:"; tail -25 "$log")"
		return
	fi
	awk '/^RKW:begin steps/ { on = 1; next } /^RKW:end steps/ { on = 0 } on' "$log" |
		while IFS= read -r line; do
			case "$line" in
			RKW:ok\ *) printf '\033[32m  ✓\033[0m %s\n' "${line#RKW:ok }" ;;
			RKW:not-ok\ *) printf '\033[31m  ✗\033[0m %s\n' "${line#RKW:not-ok }" ;;
			\#*) printf '      %s\n' "${line#\#   }" ;;
			esac
		done
	local p f ended
	read -r p f ended < <(count steps "$log")
	if [ "$f" = 0 ]; then ok "$stage: all $p checks pass"; else notok "$stage: $f of $((p + f)) checks fail (details above; full VM log: ${log#"$REPO"/})"; fi
}

# ---- the whole run -----------------------------------------------------------------
KDIR=$(current_kdir)
[ -n "$KDIR" ] && [ -f "$KDIR/.rkw-complete" ] || die "no workshop kernel yet: run 'make setup' first"

for stage in $(stages); do
	# shellcheck disable=SC1090
	if (. "$REPO/tests/$stage/stage.env" && [ "${VM:-yes}" = no ]); then
		host_stage "$stage"
	else
		vm_stage "$stage"
	fi
done

if [ -z "$LEARNER" ] && [ ${#STEPS[@]} -eq 0 ]; then
	# Host-side tests of the stages' pure logic, and the book.
	if [ -x "$REPO/scripts/host-test.sh" ]; then
		"$REPO/scripts/host-test.sh" >"$LOGS/host.log" 2>&1
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
	fi
	if out=$("$MDBOOK" build "$REPO/book" 2>&1) && ! grep -qiE 'error|warn' <<<"$out"; then
		ok "the book builds (mdbook, every {{#include}} resolves)"
	else
		notok "the book builds" "$out"
	fi
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
