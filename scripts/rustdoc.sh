#!/bin/bash
# make rustdoc: the HTML docs of the `kernel` crate (and of `pin_init`,
# `macros`, `core`, ...) exactly as the workshop kernel was built: the
# kernel's own `make rustdoc`, run in the workshop kernel's build tree.
# Usage: rustdoc.sh   (RKW_FLAVOUR=fast|debug picks the kernel, default debug)
# Prints the path of the index page. Takes one to three minutes (and about
# 480 MB, in the kernel's build folder); run it again after `make setup` has
# built a new kernel.
set -euo pipefail
. "$(dirname "$0")/common.sh"

KDIR=$(current_kdir)
[ -n "$KDIR" ] && [ -f "$KDIR/Module.symvers" ] || die "no workshop kernel yet: run 'make setup' first"
RUSTDOC=${RUSTC%rustc}rustdoc
[ -x "$RUSTDOC" ] || die "$RUSTDOC is missing: it comes with rustc ($RUSTC)"

LOG="$REPO/build/rustdoc.log"
mkdir -p "$REPO/build"
say "building the kernel crate's docs in $KDIR"
# shellcheck disable=SC2046
if ! make -C "$KDIR" $(kmake_args) RUSTDOC="$RUSTDOC" rustdoc >"$LOG" 2>&1; then
	tail -n 20 "$LOG" >&2
	die "make rustdoc failed (full log: ${LOG#"$REPO"/})"
fi
INDEX="$KDIR/Documentation/output/rust/rustdoc/kernel/index.html"
[ -f "$INDEX" ] || die "make rustdoc did not write $INDEX (log: ${LOG#"$REPO"/})"
say "the kernel crate's docs: $INDEX"
echo "$INDEX"
