#!/bin/bash
# Stage 17 test (runs in the VM): the executor runs thousands of short tasks,
# sleepers wake in the order of their deadlines without holding a worker, and
# rmmod cancels tasks that are still waiting, cleanly.
. "$(dirname "$0")/../lib.sh"

hint "init checks its parameters before it starts anything"
check_fails "workers=0 is refused" insmod "$KO" workers=0
check_fails "tasks=200000 is refused" insmod "$KO" tasks=200000

hint "Task::run (executor.rs) must poll the future with a Context made from waker::new, and the waker's wake must call Task::wake"
# First 10 tasks: done in well under a second when tasks run at all, so an
# executor that never polls fails here in 20 s instead of after the stall
# limit of the long run below.
mark
load tasks=10 sleepers=0 || {
	finish
	exit
}
if ! wait_dmesg "10 short tasks run, each yields once, and one task joins them all" \
	"10 tasks done, sum of squares 285 " 20; then
	# Nothing else can work while tasks do not run.
	finish
	exit
fi
unload

# 10000 tasks; sum of i*i for i < n is (n-1)n(2n-1)/6.
N=10000
SUM=$(((N - 1) * N * (2 * N - 1) / 6))
mark
load tasks=$N sleepers=0 || {
	finish
	exit
}
# Under TCG on a busy debug kernel this can take a minute or more: wait as
# long as progress lines keep coming (every 1000 tasks spawned, and every
# 1000 done), and call it stuck when none came for 45 s. Spawned lines count:
# the work queue is first in, first out, so a task's second poll waits behind
# the first polls of every task spawned before it, and the first "done" line
# may come only when nearly all are spawned. A stall after "10000 of 10000
# tasks spawned" is tasks that never run again: a lost wakeup.
if ! wait_progress "$N short tasks run, each yields once, and one task joins them all" \
	"$N tasks done, sum of squares $SUM " "progress: [0-9]+ of $N tasks (spawned|done)" 45; then
	finish
	exit
fi
hint "each JoinHandle must yield its task's output: check waker.rs's clone and drop (reference counts)"
expect_no_dmesg "no task failed" 'failed:'
unload
expect_dmesg "rmmod: nothing was left to cancel" "executor stopped: $((N + 1)) tasks spawned, 0 cancelled"

S=16
hint "Sleep::poll (sleep.rs) must store the waker under the alarm's lock, then start the timer once; Ready only once the timer fired"
mark
load tasks=0 sleepers=$S workers=1 || {
	finish
	exit
}
if wait_dmesg "$S sleepers (50 ms to 800 ms, spawned longest first) wake in the order of their deadlines, none early" \
	"$S sleepers woke in the order of their deadlines, none early" 30; then
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
load tasks=0 sleepers=0 pending=$P || {
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
reload_twice tasks=500 sleepers=4 pending=10
finish
