#!/bin/bash
# Run `make setup` only when something is missing: the tools, or a kernel
# built for this config fragment and this rustc.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ready() {
	[ -x "$RUSTC" ] && [ -x "$BINDGEN" ] && [ -x "$MDBOOK" ] && [ -x "$VENV/bin/vng" ] || return 1
	[ -f "$CACHE/accel" ] || return 1
	[ -z "${KDIR:-}" ] || return 0 # setup.sh checks a KDIR of yours once; trust it after that
	local kver
	kver=$(cat "$CACHE/src/current-version" 2>/dev/null) || return 1
	local f
	for f in fast debug; do
		[ "$(current_kdir $f)" = "$CACHE/kernel/$(kernel_key "$kver" $f)" ] &&
			[ -f "$CACHE/kernel/$(kernel_key "$kver" $f)/.rkw-complete" ] || return 1
	done
}
ready || "$REPO/scripts/setup.sh"
