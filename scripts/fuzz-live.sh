#!/bin/bash
# make fuzz, second part: fuzz the running 9P server in the VM.
#
#   scripts/fuzz-live.sh [MESSAGES] [SEED]
#
# Builds stage 31's solution for the debug kernel (KASAN, lockdep, kmemleak
# on), boots it and runs tests/31-9p-limits/test.sh with its fuzzer
# sending MESSAGES (default 100000) malformed and semi-valid messages, seed
# SEED (default 16), instead of make test's short run. Every other check of
# the stage runs too: after the fuzzer the server must still serve 64
# clients and a mount that compares equal with the export, with a clean
# kernel log and no leak. RKW_FLAVOUR=fast uses the fast kernel (no KASAN,
# no kmemleak; about 4 times faster under TCG).
# Prints the test's checks, then "N passed, N failed"; the full VM log is
# build/fuzz/live-vm.log.
set -uo pipefail
. "$(dirname "$0")/common.sh"

COUNT=${1:-100000}
SEED=${2:-16}
[[ "$COUNT" =~ ^[0-9]+$ ]] && [[ "$SEED" =~ ^[0-9]+$ ]] || die "usage: scripts/fuzz-live.sh [MESSAGES] [SEED]"
STAGE=31-9p-limits
LOGS="$REPO/build/fuzz"
mkdir -p "$LOGS"
LOG="$LOGS/live-vm.log"

say "building solutions/$STAGE for the $FLAVOUR kernel"
"$REPO/scripts/build-stage.sh" solutions "$STAGE" >/dev/null || die "solutions/$STAGE does not build"

# Under TCG the debug kernel answers a few hundred messages a second: give
# the test 20 ms per message on top of its usual time.
TEST_SECONDS=$(($(stage_env "$STAGE" TIMEOUT) + COUNT / 50))
APPEND=""
[ "$FLAVOUR" = debug ] && APPEND=kmemleak=on
say "booting the VM ($FLAVOUR kernel${APPEND:+, $APPEND}): $COUNT messages, seed $SEED (at most $TEST_SECONDS s)"
t0=$SECONDS
RKW_VM_TIMEOUT=$((TEST_SECONDS + 180)) RKW_VM_APPEND=$APPEND RKW_VM_LOG="$LOGS/live-vm" \
	"$REPO/scripts/vm.sh" --stage "$STAGE" \
	--exec "RKW_FUZZ_COUNT=$COUNT RKW_FUZZ_SEED=$SEED RKW_TEST_TIMEOUT=$TEST_SECONDS bash tests/guest-run.sh $STAGE:solutions" \
	>"$LOG" 2>&1
python3 "$REPO/scripts/ktap.py" report "$LOG" "$STAGE" solutions
read -r passed failed _ ended < <(python3 "$REPO/scripts/ktap.py" counts "$LOG" "$STAGE" solutions)
[ "$ended" = 1 ] || {
	failed=$((failed + 1))
	echo "FAIL the VM run finished (see ${LOG#"$REPO"/})"
}
say "live fuzzing took $((SECONDS - t0)) s of VM time"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
