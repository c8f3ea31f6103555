#!/bin/bash
# make rust-analyzer STEP=NN: a rust-project.json for one stage, so that
# rust-analyzer (completion, go to definition, inline errors) knows the
# stage's module and the workshop kernel's crates (`kernel`, `pin_init`,
# `macros`, `core`, ...), with the kernel's own cfgs and edition.
# Usage: rust-analyzer.sh NN [steps|solutions]   (default: steps)
#
# The kernel's `make M=DIR rust-analyzer` writes DIR/rust-project.json, in
# which the module's file is relative to DIR. We move it to the repository's
# root, with that path made relative to the root, so that an editor opened
# on the repository finds it there. One stage at a time: run it again for
# the next stage.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -ge 1 ] || die "usage: rust-analyzer.sh NN [steps|solutions] (make rust-analyzer STEP=NN)"
STAGE=$(stage_name "$1") TREE=${2:-steps}
DIR="$REPO/$TREE/$STAGE"
[ -d "$DIR" ] || die "no such stage folder: $TREE/$STAGE"
KDIR=$(current_kdir)
[ -n "$KDIR" ] && [ -f "$KDIR/Module.symvers" ] || die "no workshop kernel yet: run 'make setup' first"

mkdir -p "$REPO/build"
# shellcheck disable=SC2046
make -s -C "$KDIR" M="$DIR" $(kmake_args) rust-analyzer >"$REPO/build/rust-analyzer.log" 2>&1 ||
	{
		cat "$REPO/build/rust-analyzer.log" >&2
		die "make rust-analyzer failed"
	}
[ -f "$DIR/rust-project.json" ] || die "make rust-analyzer wrote no $TREE/$STAGE/rust-project.json"
python3 - "$DIR/rust-project.json" "$REPO/rust-project.json" "$TREE/$STAGE" <<'EOF'
import json, sys
src, dst, prefix = sys.argv[1:]
with open(src) as f:
    project = json.load(f)
for crate in project["crates"]:
    if not crate["root_module"].startswith("/"):
        crate["root_module"] = f"{prefix}/{crate['root_module']}"
with open(dst, "w") as f:
    json.dump(project, f, indent=1)
    f.write("\n")
EOF
rm -f "$DIR/rust-project.json"
say "rust-project.json for $TREE/$STAGE (on the $FLAVOUR kernel's crates)"
note "open the repository in your editor; rust-analyzer reads ./rust-project.json"
