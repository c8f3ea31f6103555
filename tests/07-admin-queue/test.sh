#!/bin/bash
# Stage 07 test (runs in the VM): rnvme's admin queue answers Identify, and
# what it logs equals what the kernel's C nvme driver and nvme-cli report
# for the same controller.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
W=$(mktemp -d)

# 2 Identify commands, then 70 more: 72 through an admin queue of 32
# entries, so both rings wrap twice in one queue lifetime.
REPEAT=70 DEPTH=32
hint "submit_sync: write the SQE, ring the SQ tail doorbell, poll the CQE's phase tag, ring the CQ head doorbell"
doorbell_mark
load repeat=$REPEAT
# Without a bound controller the rest (the C driver's comparison included)
# cannot mean anything.
check "rnvme is bound to the NVMe controller $BDF" bound_to_us || { finish; exit; }
expect_dmesg "the controller is enabled" "^rnvme $BDF: controller enabled"
hint "Identify Controller (CNS 1) into a DMA page, then IdCtrl::parse"
expect_dmesg "logs the model, serial and firmware" "^rnvme $BDF: model \"[^\"]+\", serial \"rkw0001\", firmware \"[^\"]+\""
hint "Identify Namespace (CNS 0, NSID 1), then IdNs::parse"
expect_dmesg "logs namespace 1" "^rnvme $BDF: namespace 1: [0-9]+ blocks of [0-9]+ bytes"
expect_dmesg "and $REPEAT more Identify commands" "^rnvme $BDF: $REPEAT more Identify commands completed"
hint "each command: SQ tail doorbell = the slot after it (wrapping at $DEPTH); each completion: CQ head doorbell = the slot after it"
expect_doorbells "QEMU saw the doorbells the ring arithmetic predicts: $((REPEAT + 2)) commands, one at a time" \
	0 $DEPTH $((REPEAT + 2)) $((REPEAT + 2)) --one-at-a-time
hint "submit_sync: each command takes the next command identifier (next_cid, incremented, wrapping)"
ncmd=$(traced_admin_cmds | grep -c .)
ncid=$(traced_admin_cmds | awk '{ print $1 }' | sort -u | grep -c .)
if [ "$ncmd" -ge $((REPEAT + 2)) ] && [ "$ncid" = "$ncmd" ]; then
	pass "each of the $ncmd admin commands had a command identifier of its own (QEMU's trace)"
else
	fail "each of the $ncmd admin commands had a command identifier of its own (QEMU's trace)" \
		"expected: at least $((REPEAT + 2)) commands, all with different cids" "got: $ncid different cids" \
		"$(traced_admin_cmds | head -5)"
fi
ours=$(dmesg_since_mark | sed -n "s/^rnvme $BDF: \(model\|MDTS\|controller ID\|namespace 1:\)/\1/p")
printf '%s\n' "$ours" >"$W/ours"

# The same controller seen by the kernel's own driver and nvme-cli.
mark
unload
hint "compare your log lines with the C driver's view (see the chapter)"
if modprobe nvme 2>"$W/err" && for _ in $(seq 50); do [ -e /dev/nvme0n1 ] && break; sleep 0.2; done && [ -e /dev/nvme0n1 ]; then
	pass "the C nvme driver binds the controller"
	nvme id-ctrl /dev/nvme0 -o json >"$W/ctrl.json" 2>>"$W/err"
	nvme id-ns /dev/nvme0n1 -o json >"$W/ns.json" 2>>"$W/err"
	python3 "$(dirname "$0")/c_driver_view.py" "$W/ctrl.json" "$W/ns.json" >"$W/theirs" 2>>"$W/err"
	if diff -u "$W/theirs" "$W/ours" >"$W/diff"; then
		pass "the identity rnvme logged equals nvme id-ctrl / id-ns through the C driver"
	else
		fail "the identity rnvme logged equals nvme id-ctrl / id-ns through the C driver" "$(cat "$W/diff" "$W/err")"
	fi
	modprobe -r nvme nvme_core 2>/dev/null || rmmod nvme nvme_core 2>/dev/null
	check_fails "the C driver is unloaded again" test -e /dev/nvme0
else
	fail "the C nvme driver binds the controller" "$(cat "$W/err")"
fi

mark
load
check "rnvme binds again after the C driver" bound_to_us
expect_dmesg "and identifies the controller again" "^rnvme $BDF: model \""
unload

# A failed status whose code is 0: only its type (SCT 1) says it failed.
mark
RKW_TRACE_START=$(nvme_trace_size)
hint "submit_sync: a command succeeded only if its Status Code Type and its Status Code are both 0 (Status::is_success)"
load fault=3
check "fault=3: rnvme binds (its refused command failed, as it must)" bound_to_us
expect_dmesg "fault=3: Delete I/O CQ 0, refused with Status Code Type 1 and Status Code 0, is a failure" \
	"^rnvme $BDF: Delete I/O CQ 0 refused \(.*\), as it must be"
expect_nvme_trace "QEMU's model says why: no completion queue 0 to delete (status 0x4100: SCT 1, SC 0, DNR)" \
	'pci_nvme_err_(invalid_del_cq_cqid|req_status .*status 0x4100)'
unload
reload_twice
rm -rf "$W"
finish
