#!/bin/bash
# Stage 16 test (runs in the VM): nvme-cli on rnvme. On rkw-d0: the disk
# and the nodes /dev/rnvmeX and /dev/rngXn1; their ioctls (ioctls.py: good
# commands, and malformed ones refused with EFAULT/EINVAL/EACCES/ENOTTY
# before the controller sees them); nvme-cli's id-ctrl, id-ns, smart-log,
# get-feature and read/write give the same fields on rnvme as on the C
# driver, on the same controller in the same VM. On rkw-slow (4 s per
# I/O): a passthrough command that times out keeps the driver's buffer
# until unbind (the next one gets EBUSY). No splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"
. "$(dirname "$0")/../nvme-disk-lib.sh"

TREE=${1:-solutions}
# ---- rkw-d0: the nodes, their ioctls, nvme-cli ------------------------------------
bind_only "$D0"
mark
load || { finish; exit; }
DISK=$(disk_of "$D0")
DEV=/dev/${DISK:-none}
N=${DISK#rnvme}
N=${N%n1}
CTRL=/dev/rnvme$N NS=/dev/rng${N}n1
hint "Nodes::new registers /dev/rnvmeX and /dev/rngXn1 after the disk"
if [ -b "$DEV" ] && [ -c "$CTRL" ] && [ -c "$NS" ]; then
	pass "rkw-d0: the disk $DEV and the nvme-cli nodes $CTRL and $NS"
else
	fail "rkw-d0: the disk $DEV and the nvme-cli nodes $CTRL and $NS" "$(ls -l /dev/rnvme* /dev/rng* 2>&1)" "$(excerpt)"
fi
hint "Passthrough::run sends what stage 15's passthru::check let through: a wrong answer here is in run (the buffer, the copies, the status), or in check if stage 15's host tests fail"
RKW_TRACE_START=$(nvme_trace_lines)
ioctl_checks "ioctl:" "$CTRL" "$NS"
python3 "$PASSTHRU_TESTS/nvme_cli.py" record "$CTRL" "$NS" /tmp/rkw10-rnvme.json >/tmp/rkw10-rnvme.log 2>&1 ||
	fail "nvme-cli works on $CTRL and $NS" "$(tail -5 /tmp/rkw10-rnvme.log)"
# The ioctls above make QEMU's model log the errors they provoke on
# purpose (a read past the end, unknown opcodes): the trace check at the
# end looks at what comes after them.
RKW_TRACE_START=$(nvme_trace_lines)

mark
unload
# ---- the C driver on the same controller: nvme-cli compared -----------------------
if [ -s /tmp/rkw10-rnvme.json ] && modprobe nvme 2>/dev/null; then
	for ((i = 0; i < 100; i++)); do
		c=$(ls /sys/bus/pci/devices/"$D0"/nvme 2>/dev/null | head -1)
		[ -n "$c" ] && [ -c "/dev/$c" ] && [ -c "/dev/ng${c#nvme}n1" ] && break
		sleep 0.1
	done
	if [ -n "$c" ] && python3 "$PASSTHRU_TESTS/nvme_cli.py" record "/dev/$c" "/dev/ng${c#nvme}n1" /tmp/rkw10-c.json >/tmp/rkw10-c.log 2>&1; then
		while read -r status what; do
			case "$status" in
			ok) pass "nvme-cli, rnvme vs C: $what" ;;
			not-ok) fail "nvme-cli, rnvme vs C: $what" ;;
			esac
		done < <(python3 "$PASSTHRU_TESTS/nvme_cli.py" compare /tmp/rkw10-rnvme.json /tmp/rkw10-c.json 2>&1)
	else
		fail "nvme-cli on the C driver (the reference)" "$(tail -5 /tmp/rkw10-c.log 2>&1)"
	fi
	rmmod nvme nvme_core 2>/dev/null
else
	fail "nvme-cli, rnvme vs C (not run: nvme-cli on rnvme failed, or no C driver)"
fi

# ---- a passthrough command that times out ------------------------------------------
# The controller still owns the driver's buffer after the ioctl gave up:
# nothing may reuse it until the controller is stopped (unbind).
bind_only "$SLOW"
mark
if load; then
	SDISK=$(disk_of "$SLOW")
	N=${SDISK#rnvme}
	N=${N%n1}
	hint "Passthrough::run: a command that timed out (ETIMEDOUT, EINTR) abandons its claim of the buffer (Claim::abandon); the buffer then refuses every later command with EBUSY"
	ioctl_checks "ioctl on the slow controller:" --abandon "/dev/rnvme$N" "/dev/rng${N}n1"
	check "unbind the controller with the retired buffer" timeout 30 sh -c "echo $SLOW > $DRV/unbind"
	unload
fi

# ---- a passthrough command interrupted by a signal ---------------------------------
# The same, for an ioctl that returns EINTR: the command is still the
# controller's.
bind_only "$SLOW"
mark
if load; then
	SDISK=$(disk_of "$SLOW")
	N=${SDISK#rnvme}
	N=${N%n1}
	hint "Passthrough::run: a command interrupted by a signal (EINTR) is still the controller's, as one that timed out: abandon the claim (Claim::abandon), never give the buffer back"
	ioctl_checks "ioctl on the slow controller:" --interrupt "/dev/rnvme$N" "/dev/rng${N}n1"
	check "unbind the controller with the buffer an interrupted command retired" timeout 30 sh -c "echo $SLOW > $DRV/unbind"
	unload
fi

bind_only
finish
