#!/bin/bash
# Stage 24 test (runs in the VM): sleepers on stage 23's executor wake in the
# order of their deadlines without holding a worker, and rmmod cancels tasks
# that are still waiting, cleanly.
. "$(dirname "$0")/../lib.sh"

hint "init checks its parameters before it starts anything"
check_fails "workers=0 is refused" insmod "$KO" workers=0
check_fails "sleepers=65 is refused" insmod "$KO" sleepers=65

S=16
hint "Sleep::poll (sleep.rs) must store the waker under the alarm's lock, then start the timer once; Ready only once the timer fired"
mark
load sleepers=$S workers=1 || {
	finish
	exit
}
if wait_dmesg "$S sleepers (50 ms to 800 ms, spawned longest first) wake in the order of their deadlines, none early" \
	"$S sleepers woke in the order of their deadlines, none early" 15; then
	# One worker, and the sleeps add up to 6.8 s: finishing well before that
	# means no sleeper held the worker while it slept.
	ms=$(dmesg_since_mark | sed -nE "s/.*$S sleepers woke .*\(([0-9]+) ms\)/\1/p" | tail -1)
	if [ -n "$ms" ] && [ "$ms" -lt 6800 ]; then
		pass "on one worker they slept side by side: ${ms} ms, not the 6800 ms of one after the other"
	else
		fail "on one worker they slept side by side" "took ${ms:-?} ms; 6800 ms is the sum of the sleeps"
	fi
fi
expect_no_dmesg "no sleeper woke early or out of turn" 'woke early|woke [0-9]+th'
unload

P=1000
hint "shutdown: cancel every live task (drop its future, cancelling its timer), then flush the queue"
mark
load sleepers=0 pending=$P || {
	finish
	exit
}
wait_dmesg "$P tasks wait on hour-long timers" "executor started: .* $P pending" 10
timed_rmmod
if [ $RMMOD_RC -eq 0 ] && ! loaded; then
	pass "rmmod with $P sleeping tasks returns (${RMMOD_MS} ms)"
else
	fail "rmmod with $P sleeping tasks returns" "rmmod exited with $RMMOD_RC after ${RMMOD_MS} ms" "$(excerpt)"
fi
hint "if fewer were cancelled, the tasks were not waiting: Sleep::poll (sleep.rs) must return Pending until the timer fires"
expect_dmesg "and cancels every one of them" "executor stopped: $P tasks spawned, $P cancelled"

hint "a reload must start from scratch: nothing may survive rmmod"
reload_twice sleepers=4 pending=10
finish
