#!/bin/bash
# Stage 09 test (runs in the VM): rnvme's admin commands complete by
# interrupt, with MSI-X and with INTx (MSI not allowed), and the submitter
# sleeps until the handler has reaped its completion; a command the
# controller holds back times out instead of hanging, and its identifier is
# not given to another command; QEMU saw the doorbells that ring arithmetic
# predicts; a late answer to an abandoned command frees its identifier;
# nothing leaks.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

# 2 Identify commands, an Asynchronous Event Request that the controller
# holds (no event comes), then 70 more Identify: 73 commands, 72
# completions, through an admin queue of 32 entries.
REPEAT=70 DEPTH=32 AER_MS=300
SUBMITTED=$((REPEAT + 3)) COMPLETED=$((REPEAT + 2))
MSI_BUS=/sys/bus/pci/devices/$BDF/msi_bus

# irq_count: rnvme's interrupts in /proc/interrupts, summed over the CPUs.
irq_count() {
	awk '/rnvme/ { s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s; exit }' /proc/interrupts
}

# run_admin TYPE: load, check Identify, interrupts and doorbells with
# interrupts of TYPE (MsiX or Intx), unload.
run_admin() {
	local type=$1 n
	mark
	doorbell_mark
	hint "wait_for (wait.rs) must sleep on the CondVar until the handler's reap marked the slot Done (rings.take_done)"
	load repeat=$REPEAT aer_wait_ms=$AER_MS || return 1
	check "rnvme is bound to the NVMe controller $BDF" bound_to_us
	expect_dmesg "the PCI core gave it one $type vector" "^rnvme $BDF: interrupts: 1 vector\(s\) of type $type, admin queue on IRQ [0-9]+"
	expect_dmesg "Identify completes by interrupt: model, serial, firmware" "^rnvme $BDF: model \"[^\"]+\", serial \"rkw0001\""
	expect_dmesg "and namespace 1" "^rnvme $BDF: namespace 1: [0-9]+ blocks"
	hint "on timeout, wait_for must mark the slot Abandoned and return ETIMEDOUT (the probe goes on)"
	expect_dmesg "an Asynchronous Event Request the controller holds ends in ETIMEDOUT after ${AER_MS} ms, not a hang" \
		"^rnvme $BDF: Asynchronous Event Request: no answer in $AER_MS ms, ETIMEDOUT"
	expect_dmesg "then $REPEAT more Identify commands complete" "^rnvme $BDF: $REPEAT more Identify commands completed"
	hint "wait_for: after the last look, mark the slot Abandoned (not Free): claim_cid skips it until the controller answers"
	is_ok "no later command got the held AER's identifier (QEMU's trace of admin commands)" aer_cid_not_reused
	expect_doorbells "QEMU saw the doorbells ring arithmetic predicts: $SUBMITTED commands, $COMPLETED completions" \
		0 $DEPTH $SUBMITTED $COMPLETED --one-at-a-time
	n=$(irq_count)
	hint "each completion raises an interrupt, and the given handler reaps it"
	if [ -n "$n" ] && [ "$n" -ge "$COMPLETED" ]; then
		pass "/proc/interrupts counts $n rnvme interrupts, at least one per completion ($COMPLETED)"
	else
		fail "/proc/interrupts counts at least one rnvme interrupt per completion ($COMPLETED)" "counted: ${n:-no rnvme line}" "$(grep -i rnvme /proc/interrupts)"
	fi
	expect_dmesg "the handler reaped all $COMPLETED completions" "^rnvme $BDF: $COMPLETED completions came by interrupt"
	unload
	expect_dmesg "unbind disables the controller" "^rnvme $BDF: controller disabled"
	check_fails "and frees the interrupt" grep -q rnvme /proc/interrupts
}

run_admin MsiX || {
	finish
	exit
}

# INTx: what `pci=nomsi` does for every device, msi_bus=0 does for this one
# (for drivers bound from now on). alloc_irq_vectors then falls back to the
# legacy pin, level-triggered and maybe shared.
if [ -w "$MSI_BUS" ]; then
	echo 0 >"$MSI_BUS"
	run_admin Intx
	echo 1 >"$MSI_BUS"
else
	fail "MSI can be disallowed for $BDF" "no writable $MSI_BUS"
fi

# A wait woken again and again by other commands' completions (a second
# submitter on a workqueue keeps them coming for up to 20 x WOKEN_MS) still
# ends when its time is up: a wait_for that sleeps the whole timeout again
# after each wake-up ends only after that submitter stops. The check asks
# whether the completions were still coming when the wait ended, not how
# long it took: a loaded machine stretches a right wait to several times
# WOKEN_MS (1.5 s seen under TCG at load 8), which no time bound separates
# from a wrong one on every machine.
WOKEN_MS=300
mark
hint "wait_for: each wake-up leaves less time: sleep again only for what is left (Woken { jiffies }), not the whole timeout"
if load woken_ms=$WOKEN_MS; then
	read -r waited others coming < <(dmesg_since_mark | sed -nE "s/.*woken while waiting: an Asynchronous Event Request timed out after ([0-9]+) ms \(of $WOKEN_MS\), while ([0-9]+) other commands completed, (and more were coming|after they had stopped).*/\1 \2 \3/p" | tail -1)
	if [ -n "${waited:-}" ] && [ "${others:-0}" -gt 0 ] && [ "${coming:-}" = "and more were coming" ]; then
		pass "woken by $others other completions, a $WOKEN_MS ms wait still ends while they keep coming (after $waited ms)"
	else
		fail "woken by other completions, a $WOKEN_MS ms wait still ends while they keep coming" \
			"waited: ${waited:-no log line} ms, while ${others:-?} other commands completed${coming:+; the wait ended $coming}" "$(excerpt)"
	fi
	unload
fi

# Answers that come late free their identifiers.
late_answers $DEPTH "wait_for: on timeout mark the slot Abandoned (not left Waiting): the late answer frees it"

reload_twice repeat=10
finish
