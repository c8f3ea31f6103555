#!/bin/bash
# Run `make setup` only when something is missing: the tools, or the
# RKW_FLAVOUR kernel built for this config and this rustc. Only that kernel
# is built: a first `make run` needs the fast one, `make test` the debug one.
set -euo pipefail
. "$(dirname "$0")/common.sh"

ready() {
	[ -x "$RUSTC" ] && [ -x "$BINDGEN" ] && [ -x "$MDBOOK" ] && venv_ok || return 1
	[ -f "$CACHE/accel" ] || return 1
	[ -z "${KDIR:-}" ] || return 0 # setup.sh checks a KDIR of yours once; trust it after that
	local kver want
	kver=$(cat "$CACHE/src/current-version" 2>/dev/null) || return 1
	want="$CACHE/kernel/$(kernel_key "$kver" "$FLAVOUR")"
	[ "$(current_kdir)" = "$want" ] && [ -f "$want/.rkw-complete" ]
}
ready || RKW_SETUP_FLAVOURS=$FLAVOUR "$REPO/scripts/setup.sh"
