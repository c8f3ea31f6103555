#!/bin/bash
# build-p9wire.sh [SOURCE BINARY]: tests/p9wire.rs, the workshop's 9P codec
# as a host program that the tests' raw 9P client (tests/p9raw.py) frames
# its requests with, built into build/p9wire/p9wire (or BINARY, from a copy
# of the tree at SOURCE: tests/tooling/test_p9wire.py builds one from a
# codec it changed). Built only when it or a file it includes changed
# (rustc's dep-info lists them). scripts/vm.sh runs it before every boot:
# the guest, whose root is the host's, runs this binary; it cannot build it.
# A failed build leaves no binary, never a stale one.
set -euo pipefail
. "$(dirname "$0")/common.sh"

SOURCE=${1:-$REPO/tests/p9wire.rs}
BINARY=${2:-$REPO/build/p9wire/p9wire}
[ -x "$RUSTC" ] || RUSTC=rustc
mkdir -p "$(dirname "$BINARY")"
# Two VMs may boot at once (make test's lanes).
exec 9>"$BINARY.lock"
flock 9

# fresh: the binary is there and newer than every file its dep-info lists
# (the first line: "BINARY: FILE FILE ...").
fresh() {
	local f
	[ -x "$BINARY" ] && [ -f "$BINARY.d" ] || return 1
	for f in $(sed -n '1s/^[^:]*://p' "$BINARY.d"); do
		[ -f "$f" ] && [ ! "$f" -nt "$BINARY" ] || return 1
	done
}
fresh && exit 0

# Without symbols: half a MiB, not ten, for the guest to read over 9P.
if ! "$RUSTC" --edition 2021 --crate-name p9wire -C debuginfo=0 -C strip=symbols \
	--emit "link=$BINARY.new,dep-info=$BINARY.d" "$SOURCE"; then
	rm -f "$BINARY" "$BINARY.new"
	die "$SOURCE does not build: the tests' raw 9P client (tests/p9raw.py) cannot frame its requests"
fi
mv -f "$BINARY.new" "$BINARY"
