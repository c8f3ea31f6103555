#!/bin/bash
# Stage 15 test (runs on the host, not in the VM): passthru.rs of the given
# tree (steps or solutions): the uapi layouts and ioctl numbers, `parse`,
# and `check` on a table of admin and I/O commands and in proptests, then
# the kernel's rustc and clippy lints on the file.
#
#   tests/15-passthru-check/test.sh steps       # your code: fails until done
#   tests/15-passthru-check/test.sh solutions   # the reference: passes
#
# Ends with "N passed, N failed"; exit status 0 only if all pass.
set -uo pipefail
tree=${1:-steps}
exec "$(dirname "$0")/../../scripts/host-test.sh" --tree "$tree" --filter nvme_passthru
