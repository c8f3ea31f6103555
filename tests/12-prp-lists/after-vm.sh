#!/bin/bash
# Stage 12, on the host after the VM has exited: prp::describe's host
# property tests (tests/host: prp.rs against a model of how a controller
# walks PRP1, PRP2 and the list), on the tree the VM tested.
# Usage: after-vm.sh TREE IMAGE_DIR   (KTAP result lines, as tests/lib.sh's)
tree=$1

# The PRP-list builder's property tests (tests/host: prp.rs against a model
# of how a controller walks PRP1, PRP2 and the list), on the same tree.
out=$(bash "$(dirname "$0")/../../scripts/host-test.sh" --tree "$tree" --filter nvme_prp 2>&1)
counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
if [[ "$counts" == *" 0 failed" ]]; then
	echo "ok 1 prp::describe passes its host property tests ($counts)"
else
	echo "not ok 1 prp::describe passes its host property tests (${counts:-they did not run})"
	grep -E '^(FAIL|not ok|x )|panicked|minimal failing input' <<<"$out" | head -8 | sed 's/^/# /'
	echo "# hint: scripts/host-test.sh --tree $tree --filter nvme_prp shows every case"
fi
