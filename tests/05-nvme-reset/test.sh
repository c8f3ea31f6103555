#!/bin/bash
# Stage 05 test (runs in the VM): rnvme disables, configures and enables the
# controller (checked in the controller's own registers), disables it on
# unbind, and fails probe cleanly when the controller reports fatal status
# or never becomes ready.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

# regs: the controller's state as user space reads it from BAR0.
regs() {
	echo 1 >"/sys/bus/pci/devices/$BDF/enable" 2>/dev/null # memory decoding on, also when unbound
	python3 "$(dirname "$0")/../nvme_regs.py" "$BDF" state
}
# reg_is DESC FIELD=VALUE...: every FIELD of `regs` has its VALUE.
reg_is() {
	local desc=$1 state f
	shift
	state=$(regs)
	for f in "$@"; do
		if ! grep -qw -- "$f" <<<"$state"; then
			fail "$desc" "wanted $f in the controller's registers:" "$state"
			return
		fi
	done
	pass "$desc"
}

# mmio_between FROM TO: the register reads and writes QEMU traced between
# two sizes of its trace (nvme_trace_size), taken around something
# only the driver does: the test's own reads of BAR0 (nvme_regs.py) come
# outside them.
mmio_between() {
	nvme_trace_since "$1" "$2" | grep -E '^pci_nvme_mmio_(read|write) '
}
# waits_for_not_ready: in such lines, a write clearing CC.EN (offset 0x14,
# bit 0) followed by a read of CSTS (0x1c).
waits_for_not_ready() {
	python3 -c '
import re, sys
cleared = False
for line in sys.stdin:
    m = re.match(r"pci_nvme_mmio_write addr 0x14 data 0x([0-9a-f]+)", line)
    if m and int(m.group(1), 16) & 1 == 0:
        cleared = True
    elif cleared and re.match(r"pci_nvme_mmio_read addr 0x1c ", line):
        sys.exit(0)
sys.exit(1)'
}

# AQA, ASQ and ACQ survive a controller reset: zero them (the controller is
# disabled), so that the checks below see what this probe wrote, not what an
# earlier load of a driver left there.
echo 1 >"/sys/bus/pci/devices/$BDF/enable" 2>/dev/null
python3 "$(dirname "$0")/../nvme_regs.py" "$BDF" clear-admin >/dev/null

hint "probe must disable the controller, program AQA/ASQ/ACQ, set CC and wait for CSTS.RDY"
t0=$(nvme_trace_size)
load || { finish; exit; }
probe_mmio=$(mmio_between "$t0" "$(nvme_trace_size)")
check "rnvme is bound to the NVMe controller $BDF" bound_to_us
expect_dmesg "logs that the controller is enabled" "^rnvme $BDF: controller enabled: admin queues of 32 entries at 0x[0-9a-f]+ and 0x[0-9a-f]+\$"
reg_is "CC.EN=1 and CSTS.RDY=1, no fatal status" en=1 rdy=1 cfs=0
reg_is "CC: 4 KiB pages, 64-byte SQ and 16-byte CQ entries" mps=0 iosqes=6 iocqes=4
reg_is "AQA: 32-entry admin queues" asqs=32 acqs=32
asq=$(dmesg_since_mark | sed -n 's/.*admin queues of 32 entries at \(0x[0-9a-f]*\) and.*/\1/p' | tail -1)
acq=$(dmesg_since_mark | sed -n 's/.*admin queues of 32 entries at 0x[0-9a-f]* and \(0x[0-9a-f]*\)$/\1/p' | tail -1)
hint "write the DMA addresses of the two queues to ASQ (0x28) and ACQ (0x30)"
reg_is "ASQ and ACQ hold the logged queue addresses" "asq=${asq:-none}" "acq=${acq:-none}"
hint "ASQ and ACQ are 64-bit registers: one 64-bit write each (try_write64); a 32-bit write leaves the upper half of the address out"
if grep -qE 'addr 0x28 .* size 8|addr 0x2c ' <<<"$probe_mmio" && grep -qE 'addr 0x30 .* size 8|addr 0x34 ' <<<"$probe_mmio"; then
	pass "ASQ and ACQ written whole, upper halves included (QEMU's trace)"
else
	fail "ASQ and ACQ written whole, upper halves included (QEMU's trace)" \
		"expected: an 8-byte write at 0x28 and at 0x30 (or writes of their upper halves, 0x2c and 0x34); got:" \
		"$(grep -E 'addr 0x(28|2c|30|34) ' <<<"$probe_mmio" || echo none)"
fi

hint "unbind must disable the controller (CC.EN=0, wait for RDY=0) before the queue memory is freed"
for round in 1 2; do
	mark
	t0=$(nvme_trace_size)
	echo "$BDF" 2>/dev/null >/sys/bus/pci/drivers/rnvme/unbind
	unbind_mmio=$(mmio_between "$t0" "$(nvme_trace_size)")
	expect_dmesg "unbind disables the controller (round $round)" "^rnvme $BDF: controller disabled\$"
	if waits_for_not_ready <<<"$unbind_mmio"; then
		pass "unbind reads CSTS after clearing CC.EN: it waits for RDY=0 (QEMU's trace, round $round)"
	else
		fail "unbind reads CSTS after clearing CC.EN: it waits for RDY=0 (QEMU's trace, round $round)" \
			"the controller may still use the queue memory until CSTS.RDY is 0; QEMU traced:" \
			"$(grep -E 'addr 0x(14|1c) ' <<<"$unbind_mmio" | head -5 | grep . || echo none)"
	fi
	reg_is "after unbind: CC.EN=0, CSTS.RDY=0 (round $round)" en=0 rdy=0
	mark
	echo "$BDF" 2>/dev/null >/sys/bus/pci/drivers/rnvme/bind
	check "bind enables it again (round $round)" bound_to_us
	reg_is "CSTS.RDY=1 again (round $round)" en=1 rdy=1
done
mark
unload
reg_is "rmmod leaves the controller disabled" en=0 rdy=0

hint "wait_ready must give up on CSTS.CFS with EIO instead of waiting for RDY"
mark
insmod "$KO" fault=1 2>/dev/null
check_fails "fault=1 (page size beyond CAP.MPSMAX): probe fails" bound_to_us
expect_dmesg "and reports the controller's fatal status" "^rnvme $BDF: controller fatal status \\(CSTS\\.CFS\\)"
expect_dmesg "probe fails with EIO" "rnvme $BDF: probe with driver rnvme failed with error -5\$"
expect_nvme_trace "QEMU's own trace confirms it refused to start" 'pci_nvme_err_startfail'
rmmod "$MODULE" 2>/dev/null

hint "read_poll_timeout must stop after CAP.TO with ETIMEDOUT, never hang"
mark
start=$(date +%s)
insmod "$KO" fault=2 2>/dev/null
took=$(($(date +%s) - start))
check_fails "fault=2 (a ready state that never comes): probe fails" bound_to_us
expect_dmesg "after CAP.TO, with a clear message" "^rnvme $BDF: controller not ready after [0-9]+ ms \\(CAP\\.TO\\)\$"
expect_dmesg "probe fails with ETIMEDOUT" "rnvme $BDF: probe with driver rnvme failed with error -110\$"
if [ "$took" -lt 60 ]; then pass "and returns within a minute (took ${took} s)"; else fail "and returns within a minute" "took ${took} s"; fi
rmmod "$MODULE" 2>/dev/null

reload_twice
finish
