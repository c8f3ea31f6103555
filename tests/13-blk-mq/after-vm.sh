#!/bin/bash
# Stage 13, on the host after the VM has exited: what the guest wrote
# through rnvme is in the image file QEMU's controller kept, so it went to
# the device and not only into the guest's page cache.
# Usage: after-vm.sh TREE IMAGE_DIR   (KTAP result lines, as tests/lib.sh's)
tree=$1 dir=$2
img=$dir/rkw-d0.img
# test.sh writes each tree's stamp at its own offset (56 or 60 MiB).
offset=$((60 << 20))
[ "$tree" = solutions ] || offset=$((56 << 20))
out=$(python3 "$(dirname "$0")/blocks.py" stamp-ok "$img" "$offset" "$tree" 2>&1)
if [[ "$out" == ok* ]]; then
	echo "ok 1 after the VM exited, the image holds the 1 MiB the guest wrote ($out)"
else
	echo "not ok 1 after the VM exited, the image holds the 1 MiB the guest wrote"
	echo "# expected: the guest's stamp at offset $offset; got: $out"
	echo "# hint: a Write must reach the controller: its data in the bounce buffer before the doorbell, the request ended only after the completion"
fi
