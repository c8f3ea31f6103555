#!/bin/bash
# Run `make setup` only when something is missing: the tools, or a kernel
# built for this config fragment and this rustc.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ready() {
	[ -x "$RUSTC" ] && [ -x "$BINDGEN" ] && [ -x "$MDBOOK" ] && [ -x "$VENV/bin/vng" ] || return 1
	[ -n "${KDIR:-}" ] && { [ -f "$KDIR/.rkw-complete" ] || die "KDIR=$KDIR is not a finished kernel build"; } && return 0
	local kver
	kver=$(cat "$CACHE/src/current-version" 2>/dev/null) || return 1
	[ "$(current_kdir)" = "$CACHE/kernel/$(kernel_key "$kver")" ] && [ -f "$(current_kdir)/.rkw-complete" ] &&
		[ -f "$(current_kdir)/.rkw-accel" ]
}
ready || "$REPO/scripts/setup.sh"
