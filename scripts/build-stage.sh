#!/bin/bash
# Build one stage's kernel module out of tree against the workshop kernel.
# Usage: build-stage.sh steps|solutions NN-name [--strict]
#   --strict: warnings are errors (solutions are held warning-free), and clippy
#   runs too (CLIPPY=1).
# Prints the compiler's own messages, without Kbuild's noise; the module ends
# up in build/modules-<flavour>/<tree>/<stage>/ (RKW_FLAVOUR, default debug).
set -euo pipefail
. "$(dirname "$0")/common.sh"

TREE=$1 STAGE=$(stage_name "$2") STRICT=${3:-}
KDIR=$(current_kdir)
[ -n "$KDIR" ] && [ -f "$KDIR/Module.symvers" ] || die "no workshop kernel yet: run 'make setup' first"
[ -d "$REPO/$TREE/$STAGE" ] || die "no such stage folder: $TREE/$STAGE"
# Kbuild mirrors STAGE_DIR under MO: the module lands in
# build/modules-$FLAVOUR/$TREE/$STAGE/.
MO="$MODULES_DIR"
OUT="$MO/$TREE/$STAGE"
LOG="$OUT.log"
# Modules built against another kernel build (make setup after a config
# change) would still look up to date to make, and load into a kernel whose
# structures they do not match: start afresh.
if [ -d "$MO" ] && [ "$(cat "$MO/.kdir" 2>/dev/null)" != "$KDIR" ]; then
	rm -rf "$MO"
fi
mkdir -p "$OUT"
echo "$KDIR" >"$MO/.kdir"

args=(-C "$KDIR" M="$REPO" MO="$MO" STAGE_DIR="$TREE/$STAGE")
# shellcheck disable=SC2207
args+=($(kmake_args))
[ -n "$STRICT" ] && args+=(CLIPPY=1 CLIPPY_DRIVER=/usr/bin/clippy-driver)

# compiler_said: the compiler's diagnostics from the log, without make's
# recursion lines and Kbuild's progress lines ("  RUSTC [M] ..."); the whole
# log if nothing else is left.
compiler_said() {
	grep -vE '^make(\[[0-9]+\])?: |^  [A-Z]+( \[M\])? ' "$LOG" >&2 || cat "$LOG" >&2
}

if ! make "${args[@]}" modules >"$LOG" 2>&1; then
	echo "--- $TREE/$STAGE does not build. The compiler said:" >&2
	compiler_said
	echo "--- (full log: ${LOG#"$REPO"/})" >&2
	exit 1
fi
# One known warning is not the learner's: objtool keeps a list of the Rust
# functions that never return, and 7.3's list misses
# `core::panicking::panic_const::panic_const_async_fn_resumed`, which every
# `async` block ends with (resuming a finished future). A function that ends
# in that call "falls through" in objtool's eyes. It is dropped from the log.
sed -i -E '/objtool: _R[A-Za-z0-9_]+\(\) falls through to next function _R/d' "$LOG"
if grep -qE '^(warning|error)(\[[A-Za-z0-9_]+\])?:|: warning:' "$LOG"; then
	if [ -n "$STRICT" ]; then
		echo "--- $TREE/$STAGE builds, but with warnings (solutions must be warning-free):" >&2
		compiler_said
		exit 1
	fi
	echo "--- $TREE/$STAGE builds, with warnings:" >&2
	compiler_said
fi
find "$OUT" -name '*.ko' -printf "${OUT#"$REPO"/}/%P\n"
