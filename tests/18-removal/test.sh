#!/bin/bash
# Stage 18 test (runs in the VM): removal. On rkw-d0: removal under fio at
# QD32 three ways (sysfs unbind, sysfs remove + rescan, QEMU hot-unplug
# through QMP): fio sees errors and exits, nothing hangs, and binding
# again gives a disk whose data verifies; rmmod with the disk mounted
# waits for the umount. No splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"
. "$(dirname "$0")/../nvme-disk-lib.sh"

TREE=${1:-solutions}
MNT=/tmp/rkw10
bind_only "$D0"
mark
load || { finish; exit; }
DEV=/dev/$(disk_of "$D0")

# ---- removal under load ------------------------------------------------------------
hint "unbind: delete the disk first (del_gendisk waits for the requests in flight), then the queues"
keep_write "$DEV" || fail "write the data that must survive removal" "$(tail -5 /tmp/rkw10-keep.out)"

# 1. sysfs unbind while fio runs.
FIO_OUT=/tmp/rkw10-fio1.out
fio_load "$DEV" 600 "$FIO_OUT"
mark
t0=$SECONDS
if timeout 120 sh -c "echo $D0 > $DRV/unbind"; then
	pass "unbind under fio (QD32 x $CPUS jobs) returns ($((SECONDS - t0)) s)"
else
	fail "unbind under fio (QD32 x $CPUS jobs) returns" "still in unbind after 120 s" "$(excerpt)"
fi
fio_ends "fio sees errors and exits after the unbind" 120
expect_dmesg "the disk was deleted, then the queues" "disk rnvme[0-9]+n1 deleted"
mark
echo "$D0" >"$DRV/bind" 2>/dev/null
DEV=/dev/$(disk_of "$D0")
keep_verify "bound again: the data written before the unbind verifies" "$DEV"

# 2. sysfs remove + rescan while fio runs.
FIO_OUT=/tmp/rkw10-fio2.out
fio_load "$DEV" 600 "$FIO_OUT"
mark
t0=$SECONDS
if timeout 120 sh -c "echo 1 > /sys/bus/pci/devices/$D0/remove"; then
	pass "PCI remove under fio returns ($((SECONDS - t0)) s)"
else
	fail "PCI remove under fio returns" "still in remove after 120 s" "$(excerpt)"
fi
fio_ends "fio sees errors and exits after the remove" 120
mark
echo 1 >/sys/bus/pci/rescan
if bound_within "$D0" 30; then
	pass "rescan: the controller comes back and rnvme binds it"
	DEV=/dev/$(disk_of "$D0")
	keep_verify "after remove + rescan: the data verifies" "$DEV"
else
	fail "rescan: the controller comes back and rnvme binds it" "$(ls /sys/bus/pci/devices)" "$(excerpt)"
fi

# 3. QEMU hot-unplug (device_del from the host, through QMP) while fio runs.
FIO_OUT=/tmp/rkw10-fio3.out
fio_load "$DEV" 600 "$FIO_OUT"
mark
t0=$SECONDS
if qmp_device_del rkw-d0 120 >/tmp/rkw10-qmp.out 2>&1 && wait_gone "$D0" 120; then
	pass "QEMU hot-unplug (device_del) under fio completes ($((SECONDS - t0)) s)"
else
	fail "QEMU hot-unplug (device_del) under fio completes" "$(tail -5 /tmp/rkw10-qmp.out)" "$(excerpt)"
fi
fio_ends "fio sees errors and exits after the hot-unplug" 120
mark
if qmp_device_add rkw-d0 >/tmp/rkw10-qmp.out 2>&1 && D0=$(qmp_pci_bdf rkw-d0) && [ -n "$D0" ] && bound_within "$D0" 60; then
	pass "re-plugged (device_add): rnvme binds the controller"
	DEV=/dev/$(disk_of "$D0")
	keep_verify "after the re-plug: the data verifies" "$DEV"
else
	fail "re-plugged (device_add): rnvme binds the controller" "$(tail -5 /tmp/rkw10-qmp.out)" "$(excerpt)"
fi

# ---- rmmod with the disk mounted ---------------------------------------------------
hint "the 7.3 gendisk has no owner: the module must not go while its disk is open (lingering.rs)"
mkdir -p "$MNT"
if mkfs.ext4 -q -F -E nodiscard "$DEV" && mount -t ext4 "$DEV" "$MNT" && echo kept >"$MNT/file" && sync; then
	mark
	rmmod "$MODULE" 2>/tmp/rkw10-rmmod.out &
	RMMOD_PID=$!
	sleep 3
	gone_while_mounted=
	if kill -0 $RMMOD_PID 2>/dev/null; then
		pass "rmmod with the disk mounted waits (the module stays while the disk is open)"
	else
		fail "rmmod with the disk mounted waits (the module stays while the disk is open)" "rmmod returned: $(cat /tmp/rkw10-rmmod.out)" "$(excerpt)"
		# The module is gone, its disk still mounted: an umount would run
		# its freed code (an oops in blkdev_put_whole). Left mounted.
		gone_while_mounted=1
	fi
	expect_dmesg "rnvme says why" "rnvme[0-9]+n1 is still open \(mounted\?\): deleted, its I/O fails; rmmod waits until it is closed"
	check_fails "the mounted file system sees I/O errors" sh -c "echo more >$MNT/file2 && sync -f $MNT/file2"
	if [ -n "$gone_while_mounted" ]; then
		fail "after the umount, rmmod finishes" "not tried: the module went while its disk was mounted, and an umount would crash the kernel"
	else
		check "umount" umount "$MNT"
		for ((i = 0; i < 100; i++)); do
			kill -0 $RMMOD_PID 2>/dev/null || break
			sleep 0.1
		done
		if ! kill -0 $RMMOD_PID 2>/dev/null && ! loaded; then
			pass "after the umount, rmmod finishes"
		else
			fail "after the umount, rmmod finishes" "$(excerpt)"
		fi
	fi
else
	fail "mkfs.ext4 + mount on $DEV" "$(excerpt)"
	umount "$MNT" 2>/dev/null
	unload
fi

bind_only
finish
