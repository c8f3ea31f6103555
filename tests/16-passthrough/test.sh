#!/bin/bash
# Stage 16 test (runs in the VM): nvme-cli on rnvme. On rkw-d0: the disk
# and the nodes /dev/rnvmeX and /dev/rngXn1; their ioctls (ioctls.py: good
# commands, and malformed ones refused with EFAULT/EINVAL/EACCES/ENOTTY
# before the controller sees them); nvme-cli's id-ctrl, id-ns, smart-log,
# get-feature and read/write give the same fields on rnvme as on the C
# driver, on the same controller in the same VM; nvme-cli's format and
# set-feature of the Host Memory Buffer are refused (EPERM), and a
# namespace the C driver formatted with metadata is refused at probe. On
# rkw-slow (4 s per I/O): a passthrough command that times out, or is
# interrupted, retires its own buffer and identifier until the controller
# answers, and the next command gets another buffer; a command waiting for
# its turn can be interrupted. No splat (no hung task), no leak.
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
RKW_TRACE_START=$(nvme_trace_size)
ioctl_checks "ioctl:" "$CTRL" "$NS"
python3 "$PASSTHRU_TESTS/nvme_cli.py" record "$CTRL" "$NS" /tmp/rkw10-rnvme.json >/tmp/rkw10-rnvme.log 2>&1 ||
	fail "nvme-cli works on $CTRL and $NS" "$(tail -5 /tmp/rkw10-rnvme.log)"
# Set Features Host Memory Buffer (0x0d) would give the controller host
# memory its CDW13/14 point to: nvme-cli gets EPERM.
hint "passthru::check: Set Features of a feature off the allow-list (Host Memory Buffer, 0x0d) is Forbidden, EPERM"
out=$(timeout 60 nvme set-feature "$CTRL" -f 0x0d -v 1 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "Operation not permitted" <<<"$out"; then
	pass "nvme set-feature $CTRL -f 0x0d (Host Memory Buffer): refused (EPERM)"
else
	fail "nvme set-feature $CTRL -f 0x0d (Host Memory Buffer): refused (EPERM)" "exit status $rc: $out"
fi
# Format NVM would change the block size the disk and check were sized
# with: nvme-cli gets EPERM, and namespace 1 keeps its format.
flbas() { nvme id-ns "$1" -o json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["flbas"])'; }
hint "passthru::check: Format NVM (0x80) is not one of the five admin opcodes user space may send: Forbidden, EPERM"
out=$(timeout 60 nvme format "$CTRL" -n 1 -l 4 -f 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "Operation not permitted" <<<"$out" && [ "$(flbas "$NS")" = 0 ] &&
	[ "$(cat "/sys/block/$DISK/queue/logical_block_size" 2>/dev/null)" = 512 ]; then
	pass "nvme format $CTRL -n 1 -l 4 (4096-byte blocks): refused (EPERM), namespace 1 still in LBA format 0"
else
	fail "nvme format $CTRL -n 1 -l 4 (4096-byte blocks): refused (EPERM), namespace 1 still in LBA format 0" \
		"exit status $rc: $out" "FLBAS now: $(flbas "$NS")"
fi
# The ioctls above make QEMU's model log the errors they provoke on
# purpose (a read past the end, unknown opcodes): the trace check at the
# end looks at what comes after them.
RKW_TRACE_START=$(nvme_trace_size)

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
	# ---- a namespace formatted with metadata -------------------------------------------
	# The C driver formats namespace 1 with 8 bytes of metadata a block
	# (QEMU's LBA format 1); rnvme moves data alone, so its probe must
	# refuse the namespace, and say why, not drive it as if it had none.
	# Then the C driver formats it back.
	if [ -n "$c" ] && timeout 60 nvme format "/dev/$c" -n 1 -l 1 -f >/tmp/rkw16-format.log 2>&1; then
		rmmod nvme nvme_core 2>/dev/null
		mark
		if load; then
			hint "IdNs::block_size: a format with metadata (MS != 0) has no block size the driver can use; IdentifyPage::namespace refuses it"
			expect_dmesg "rkw-d0 formatted with 8 bytes of metadata a block: rnvme's probe refuses namespace 1, and says why" \
				"^rnvme $D0: namespace 1: LBA format 1 \(2\^9-byte blocks, 8 bytes of metadata each\) is not one rnvme drives"
			if bound_to "$D0"; then
				fail "rkw-d0 formatted with metadata: not bound" "$(excerpt)"
			else
				pass "rkw-d0 formatted with metadata: not bound"
			fi
			unload
		fi
		modprobe nvme 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			c=$(ls /sys/bus/pci/devices/"$D0"/nvme 2>/dev/null | head -1)
			[ -n "$c" ] && [ -c "/dev/$c" ] && break
			sleep 0.1
		done
		check "the C driver formats rkw-d0 back to LBA format 0" timeout 60 nvme format "/dev/$c" -n 1 -l 0 -f
	else
		fail "the C driver formats rkw-d0 with 8 bytes of metadata a block (LBA format 1)" "$(cat /tmp/rkw16-format.log)"
	fi
	rmmod nvme nvme_core 2>/dev/null
else
	fail "nvme-cli, rnvme vs C (not run: nvme-cli on rnvme failed, or no C driver)"
fi

# ---- a passthrough command that times out ------------------------------------------
# The controller still owns the command's buffer after the ioctl gave up:
# nothing may reuse it until the controller has answered; the next command
# takes another.
bind_only "$SLOW"
mark
if load; then
	SDISK=$(disk_of "$SLOW")
	N=${SDISK#rnvme}
	N=${N%n1}
	hint "Passthrough::run: a command that timed out (ETIMEDOUT) retires its claim (turn.retire(target, claim)); dropped, the buffer would go to the next command while the controller may still write it"
	ioctl_checks "ioctl on the slow controller:" --abandon "/dev/rnvme$N" "/dev/rng${N}n1"
	check "unbind the controller with the retired buffer" timeout 30 sh -c "echo $SLOW > $DRV/unbind"
	unload
fi

# ---- a passthrough command interrupted by a signal ---------------------------------
# The same, for an ioctl that returns EINTR: the command is still the
# controller's. And a command waiting for its turn returns on a signal.
bind_only "$SLOW"
mark
if load; then
	SDISK=$(disk_of "$SLOW")
	N=${SDISK#rnvme}
	N=${N%n1}
	hint "Passthrough::run: a command interrupted by a signal (EINTR) is still the controller's, as one that timed out: retire the claim (turn.retire), never drop it; and take the turn with take_turn, whose wait a signal ends"
	ioctl_checks "ioctl on the slow controller:" --interrupt "/dev/rnvme$N" "/dev/rng${N}n1"
	check "unbind the controller with the buffer an interrupted command retired" timeout 30 sh -c "echo $SLOW > $DRV/unbind"
	unload
fi

bind_only
finish
