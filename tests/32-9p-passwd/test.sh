#!/bin/bash
# Stage 32 test (runs on the host, not in the VM): passwd.rs of the given
# tree (steps or solutions), and the given group.rs, which reads its gids
# with passwd.rs's `decimal`: hand-written files, comments, malformed lines,
# ids that do not fit a u32, and a property test against a model.
#
#   tests/32-9p-passwd/test.sh steps       # your code: fails until done
#   tests/32-9p-passwd/test.sh solutions   # the reference: passes
#
# Ends with "N passed, N failed"; exit status 0 only if all pass.
set -uo pipefail
tree=${1:-steps}
exec "$(dirname "$0")/../../scripts/host-test.sh" --tree "$tree" --filter r9p_
