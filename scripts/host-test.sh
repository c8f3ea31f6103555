#!/bin/bash
# Host-side tests (tests/host): the stages' shared, core-only code, compiled
# for the host from one tree and tested there (unit vectors, property tests,
# cross-checks, trybuild lessons).
#
#   scripts/host-test.sh [--tree steps|solutions] [--filter NAME]
#
# --tree picks the tree the tests are built from (default solutions; the
#   RKW_TREE variable of tests/host/stages/build.rs).
# --filter runs only the tests whose name contains NAME (e.g. p9: stage 27).
#
# Prints one line per test (trybuild's compile-fail cases included), then
# "N passed, N failed"; exits 1 if any test failed or the tests did not build.
# Uses Debian's cargo and rustc (/usr/bin), the compiler the kernel is built
# with, so that trybuild's expected compiler messages stay valid.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
TREE=solutions
FILTER=()

usage() {
	sed -n '2,/^set /p' "$0" | sed -n 's/^# \{0,1\}//p' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--tree)
		[ $# -ge 2 ] || usage
		TREE=$2
		shift 2
		;;
	--tree=*)
		TREE=${1#--tree=}
		shift
		;;
	--filter)
		[ $# -ge 2 ] || usage
		FILTER=("$2")
		shift 2
		;;
	--filter=*)
		FILTER=("${1#--filter=}")
		shift
		;;
	-h | --help) usage ;;
	*) usage ;;
	esac
done
case "$TREE" in
solutions | steps) ;;
*)
	echo "host-test.sh: --tree must be steps or solutions, not '$TREE'" >&2
	exit 2
	;;
esac
for tool in /usr/bin/cargo /usr/bin/rustc; do
	if [ ! -x "$tool" ]; then
		echo "host-test.sh: $tool is missing: run 'make setup' (Debian's cargo-web and rustc-web)" >&2
		echo "0 passed, 1 failed"
		exit 1
	fi
done

export RKW_TREE=$TREE
export RUSTC=/usr/bin/rustc
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-$(nproc)}
export CARGO_TERM_COLOR=never
export RUST_BACKTRACE=0

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

# One run at a time (make test runs two VMs at once, and each may run a
# stage's host tests after its boot): both would build into the same
# target directory, one tree over the other's test binary.
mkdir -p "$REPO/tests/host/target"
exec 8>"$REPO/tests/host/target/.rkw-host-test.lock"
flock 8

echo "==> host tests from $TREE/${FILTER[0]:+ (tests matching '${FILTER[0]}')}" >&2
(cd "$REPO/tests/host" && /usr/bin/cargo test --workspace --no-fail-fast -- "${FILTER[@]}") >"$LOG" 2>&1
status=$?

# One line per test: libtest's "test NAME ... ok|FAILED|ignored", and
# trybuild's "test PATH ... ok|error|mismatch|wip" for each compile-fail case.
# (trybuild colours its lines whatever the terminal is: strip the escapes.)
sed -e 's/\x1b\[[0-9;]*m//g' "$LOG" >"$LOG.plain"
mv "$LOG.plain" "$LOG"
awk '
	/^test .* \.\.\. / {
		result = $NF
		name = $0
		sub(/^test /, "", name)
		sub(/ \.\.\. .*$/, "", name)
		sub(/^.*\/tests\/host\//, "tests/host/", name)
		sub(/stages\/\.\.\//, "", name)
		if (result == "ok") { p++; printf "ok     %s\n", name }
		else if (result == "ignored") { printf "skip   %s\n", name }
		else { f++; printf "FAIL   %s (%s)\n", name, result }
	}
	END { printf "COUNT %d %d\n", p, f }' "$LOG" >"$LOG.lines"
grep -v '^COUNT ' "$LOG.lines"
read -r _ passed failed < <(grep '^COUNT ' "$LOG.lines")
rm -f "$LOG.lines"

# The failures' details: libtest's panics and trybuild's diffs.
if [ "$failed" -gt 0 ] || [ $status -ne 0 ]; then
	echo
	awk '/^failures:$/ { on = 1 } /^test result:/ { on = 0 } on' "$LOG" | head -150
	grep -E -A30 '^(EXPECTED|ACTUAL OUTPUT|ERROR):' "$LOG" | head -80
fi
if [ $status -ne 0 ] && [ "$failed" -eq 0 ]; then
	# Nothing failed, yet cargo did: the tests did not build.
	echo
	grep -E -B2 -A12 '^error(\[|:)' "$LOG" | head -80
	failed=1
	echo "FAIL   the host tests build (cargo test exited with status $status)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ $status -eq 0 ]
