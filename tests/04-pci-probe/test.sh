#!/bin/bash
# Stage 04 test (runs in the VM): rnvme binds to QEMU's NVMe controller, logs
# CAP and VS as the controller itself reports them, and survives unbind/bind
# and unload.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

REGS="python3 $(dirname "$0")/../nvme_regs.py $BDF"
# Firmware, or a driver loaded earlier in this boot, may have left the device
# enabled, with memory decoding and bus mastering on: disable it (sysfs
# `enable`, once per enable the PCI core counts) and turn both bits off, so
# that probe is seen to turn them on.
ENABLE=/sys/bus/pci/devices/$BDF/enable
for _ in 1 2 3 4 5 6 7 8; do
	[ "$(cat "$ENABLE")" != 0 ] && echo 0 2>/dev/null >"$ENABLE" || break
done
[ "$(cat "$ENABLE")" != 0 ] || $REGS command-off >/dev/null

hint "probe must enable the device, map BAR0 and return Ok(RNvme { .. })"
load
if dmesg_since_mark | grep -q "NVM command set is not supported"; then
	hint "probe refused the controller because CAP seems to say it has no NVM command set: Cap::from_raw (spec.rs) must decode CSS (bits 44:37) and the other fields"
fi
# Without a bound controller none of the checks below can mean anything.
check "rnvme is bound to the NVMe controller $BDF" bound_to_us || { finish; exit; }
hint "probe must turn on memory decoding (pdev.enable_device_mem()) and bus mastering (pdev.set_master())"
pcicmd=$($REGS command 2>&1)
if [ "$pcicmd" = "memory=1 master=1" ]; then
	pass "probe turned on memory decoding and bus mastering (the PCI command register)"
else
	fail "probe turned on memory decoding and bus mastering (the PCI command register)" \
		"expected: memory=1 master=1" "got:      $pcicmd"
fi

# What the controller itself says, read from user space through sysfs.
mapfile -t want < <(python3 "$(dirname "$0")/../nvme_regs.py" "$BDF" identity)
hint "read VS with bar.read(regs::VS) and log major.minor.tertiary"
expect_dmesg "logs the NVMe version the controller reports" "^rnvme $BDF: ${want[0]}\$"
hint "Cap::from_raw: check each field's bit range against the NVMe spec (CAP, section 3.1.1)"
expect_dmesg "logs CAP.MQES, CQR and DSTRD as the controller reports them" "^rnvme $BDF: $(sed 's/[().]/\\&/g' <<<"${want[1]}")\$"
expect_dmesg "logs CAP.TO, CSS, MPSMIN and MPSMAX as the controller reports them" "^rnvme $BDF: $(sed 's/[().]/\\&/g' <<<"${want[2]}")\$"

hint "unbind must not fail, and the data must be dropped after it"
for round in 1 2; do
	mark
	echo "$BDF" 2>/dev/null >/sys/bus/pci/drivers/rnvme/unbind
	check_fails "unbind via sysfs (round $round)" bound_to_us
	expect_dmesg "unbind logs and releases the controller (round $round)" "^rnvme $BDF: released"
	mark
	echo "$BDF" 2>/dev/null >/sys/bus/pci/drivers/rnvme/bind
	check "bind via sysfs probes again (round $round)" bound_to_us
	expect_dmesg "probe logs the version again (round $round)" "^rnvme $BDF: ${want[0]}\$"
done

mark
unload
expect_dmesg "rmmod with the device bound unbinds it first" "^rnvme $BDF: unbinding"
reload_twice
finish
