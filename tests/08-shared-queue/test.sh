#!/bin/bash
# Stage 08 test (runs in the VM): rnvme's admin commands go through the
# library's shared queue pair and complete, reaped by polling (no interrupt
# handler yet); a command the controller holds back times out instead of
# hanging, and its identifier is not given to another command; QEMU saw the
# doorbells that ring arithmetic predicts; a late answer to an abandoned
# command frees its identifier; nothing leaks.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

# 2 Identify commands, an Asynchronous Event Request that the controller
# holds (no event comes), then 70 more Identify: 73 commands, 72
# completions, through an admin queue of 32 entries.
REPEAT=70 DEPTH=32 AER_MS=300
SUBMITTED=$((REPEAT + 3)) COMPLETED=$((REPEAT + 2))

mark
doorbell_mark
hint "reap_locked: while next_completion gives one, advance the CQ ring, consumed_up_to, count it, and mark a Waiting slot Done(cqe); the polled wait looks for Done"
load repeat=$REPEAT aer_wait_ms=$AER_MS
check "rnvme is bound to the NVMe controller $BDF" bound_to_us
expect_dmesg "Identify completes, reaped by polling: model, serial, firmware" "^rnvme $BDF: model \"[^\"]+\", serial \"rkw0001\""
expect_dmesg "and namespace 1" "^rnvme $BDF: namespace 1: [0-9]+ blocks"
hint "the given polled wait marks the slot Abandoned and returns ETIMEDOUT when its time is up (the probe goes on)"
expect_dmesg "an Asynchronous Event Request the controller holds ends in ETIMEDOUT after ${AER_MS} ms, not a hang" \
	"^rnvme $BDF: Asynchronous Event Request: no answer in $AER_MS ms, ETIMEDOUT"
expect_dmesg "then $REPEAT more Identify commands complete" "^rnvme $BDF: $REPEAT more Identify commands completed"
hint "an Abandoned slot is not Free: only reap_locked frees it, when the controller answers"
is_ok "no later command got the held AER's identifier (QEMU's trace of admin commands)" aer_cid_not_reused
hint "reap_locked: one CQ head doorbell write per batch, after advancing the ring (the new head), only if it reaped any"
expect_doorbells "QEMU saw the doorbells ring arithmetic predicts: $SUBMITTED commands, $COMPLETED completions" \
	0 $DEPTH $SUBMITTED $COMPLETED --one-at-a-time
hint "reap_locked: add how many it reaped to rings.reaped, and return that number"
expect_dmesg "the polled waits reaped all $COMPLETED completions" "^rnvme $BDF: $COMPLETED completions reaped by polling"
check_fails "no interrupt handler yet: /proc/interrupts has no rnvme line" grep -q rnvme /proc/interrupts
unload
expect_dmesg "unbind disables the controller" "^rnvme $BDF: controller disabled; $COMPLETED completions reaped by polling"

# Answers that come late free their identifiers.
late_answers $DEPTH "reap_locked: an answer for an Abandoned slot makes it Free (not Done: nobody would take it)"

reload_twice repeat=10
finish
