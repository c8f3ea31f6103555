#!/bin/bash
# Stage 06 test (runs on the host, not in the VM): ring.rs of the given tree
# (steps or solutions): `SqRing` and `CqRing` driven against a model of the
# controller in proptests (any depth, any interleaving of submissions,
# completions and reaps), the hand-worked cases, the trybuild lesson that
# a ring cannot be forged, then the kernel's rustc and clippy lints on the
# file.
#
#   tests/06-nvme-rings/test.sh steps       # your code: fails until done
#   tests/06-nvme-rings/test.sh solutions   # the reference: passes
#
# Ends with "N passed, N failed"; exit status 0 only if all pass.
set -uo pipefail
tree=${1:-steps}
exec "$(dirname "$0")/../../scripts/host-test.sh" --tree "$tree" --filter nvme_ring
