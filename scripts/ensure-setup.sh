#!/bin/bash
# Run `make setup` only for what this command uses, and only when it is
# missing; say so before any long build starts.
#   RKW_FLAVOUR     the kernel it boots or builds against (fast or debug)
#   RKW_NEED        kernel (default): tools + that kernel + the VM;
#                   host: Debian's Rust only (stage 27's host tests);
#                   book: Debian's Rust + mdbook
#   RKW_STAGE_TOOLS 1: also fio, nvme-cli, diod (stages 04-33, make test)
#   RKW_NEED_BOOK   1: also mdbook (make test checks the book)
#   RKW_WHY         the command, for the announcement ("make check")
#   RKW_STEP        the stage it is for, if one: a host-only stage (VM=no in
#                   its stage.env) needs no kernel, stages 01-03 no stage tools
set -euo pipefail
. "$(dirname "$0")/common.sh"
NEED=${RKW_NEED:-kernel}
WHY=${RKW_WHY:-this command}
STAGE_TOOLS=${RKW_STAGE_TOOLS:-1}
NEED_BOOK=${RKW_NEED_BOOK:-0}
if [ -n "${RKW_STEP:-}" ]; then
	stage=$(stage_name "$RKW_STEP")
	[ "$NEED" != kernel ] || [ "$(stage_env "$stage" VM)" != no ] || NEED=host
	[ "$((10#${stage%%-*}))" -ge 4 ] || STAGE_TOOLS=0
fi

# shellcheck source=host-check.sh
. "$REPO/scripts/host-check.sh"

rust_ready() { [ -x "$RUSTC" ] && [ -x "$CARGO" ]; }
stage_tools_ready() { # have_program: nvme, diod, mkfs.ext4 are in /usr/sbin, off a user's PATH
	local p
	for p in $STAGE_PROGRAMS; do have_program "$p" || return 1; done
}
kernel_ready() {
	[ -z "${KDIR:-}" ] || return 0 # setup.sh checks a KDIR of yours once; trust it after that
	local kver want
	kver=$(cat "$CACHE/src/current-version" 2>/dev/null) || return 1
	want="$CACHE/kernel/$(kernel_key "$kver" "$FLAVOUR")"
	[ "$(current_kdir)" = "$want" ] && [ -f "$want/.rkw-complete" ]
}

# A kernel build is long: say which one, why, how long, and the way out.
announce_kernel() {
	local last
	last=$(cat "$CACHE"/kernel/*-"$FLAVOUR"-*/.rkw-build-seconds 2>/dev/null | tail -1 || true)
	say "$WHY needs the $FLAVOUR workshop kernel, which is not built for this setup yet: building it now, once"
	if [ "$FLAVOUR" = debug ]; then
		note "The debug kernel has KASAN, lockdep and kmemleak: they catch the use-after-free,"
		note "out-of-bounds, lock-order and leak bugs a test alone would miss."
		note "It takes ${last:+about $((last / 60)) min here last time; }15-25 min on 2 cores."
		note "In a hurry? Press Ctrl-C and add FAST=1 (make check STEP=${RKW_STEP:-NN} FAST=1): the fast kernel,"
		note "without those checks. The build goes on where it stopped when you run this again."
	else
		note "It takes ${last:+about $((last / 60)) min here last time; }8-15 min on 2 cores."
	fi
	note "Log: $CACHE/logs/kernel-build-$FLAVOUR.log"
}

case "$NEED" in
host | book)
	if ! rust_ready || { [ "$NEED" = book ] && { [ ! -x "$MDBOOK" ] || [ ! -x "$MDBOOK_SVGBOB" ]; }; }; then
		what="Debian's Rust"
		[ "$NEED" = host ] || what="Debian's Rust, mdbook and mdbook-svgbob"
		say "$WHY needs $what (no kernel, no VM): installing them, once"
		RKW_SETUP_ONLY=$NEED "$REPO/scripts/setup.sh"
	fi
	exit 0
	;;
esac

tools_ready() {
	rust_ready && [ -x "$BINDGEN" ] && venv_ok && py_tools_ok && [ -f "$CACHE/accel" ] || return 1
	[ "$STAGE_TOOLS" = 0 ] || stage_tools_ready || return 1
	[ "$NEED_BOOK" = 0 ] || { [ -x "$MDBOOK" ] && [ -x "$MDBOOK_SVGBOB" ] && command -v chromium >/dev/null; }
}
tools_ready && kernel_ready && exit 0
tools_ready || say "$WHY: installing what it needs first (Debian packages, bindgen, virtme-ng, tree-sitter; a few minutes, once)"
kernel_ready || announce_kernel
RKW_SETUP_FLAVOURS=$FLAVOUR RKW_SETUP_STAGE_TOOLS=$STAGE_TOOLS RKW_SETUP_BOOK=$NEED_BOOK "$REPO/scripts/setup.sh"
