#!/bin/bash
# Stage 23 test (runs in the VM): the executor runs thousands of short tasks,
# each woken once by its own waker, and one task joins them all; rmmod then
# finds nothing left to cancel. (Sleepers and cancelling: stage 24.)
. "$(dirname "$0")/../lib.sh"

hint "init checks its parameters before it starts anything"
check_fails "workers=0 is refused" insmod "$KO" workers=0
check_fails "tasks=200000 is refused" insmod "$KO" tasks=200000

hint "Task::run (executor.rs) must poll the future with a Context made from waker::new, and the waker's wake must call Task::wake"
# First 10 tasks: done in well under a second when tasks run at all, so an
# executor that never polls fails here in 20 s instead of after the stall
# limit of the long run below.
mark
load tasks=10 || {
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

# 10000 tasks on the fast kernel; 2000 on the debug one, where 10000 take
# 10-45 s (KASAN, lockdep, kmemleak) and what they are there to show, a task
# freed too early or never, KASAN and kmemleak see at the first task.
# The sum of i*i for i < n is (n-1)n(2n-1)/6.
N=10000
[ "${RKW_FLAVOUR:-debug}" = fast ] || N=2000
SUM=$(((N - 1) * N * (2 * N - 1) / 6))
mark
load tasks=$N || {
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

hint "a reload must start from scratch: nothing may survive rmmod"
reload_twice tasks=500
finish
