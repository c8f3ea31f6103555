#!/bin/bash
# Stage 27 test (runs on the host, not in the VM): the 9P2000.L codec of the
# given tree (steps or solutions) against hand-worked byte vectors, property
# tests, the rs9p cross-check, the kernel's lints and the trybuild lessons.
#
#   tests/27-9p-protocol/test.sh steps       # your code: fails until done
#   tests/27-9p-protocol/test.sh solutions   # the reference: passes
#
# Ends with "N passed, N failed"; exit status 0 only if all pass.
set -uo pipefail
tree=${1:-steps}
exec "$(dirname "$0")/../../scripts/host-test.sh" --tree "$tree" --filter p9
