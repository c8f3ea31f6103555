#!/bin/bash
# Stage 25 test (runs in the VM): the greeter on the reactor. Every
# connection's task sends one line, then waits (holding no worker) until the
# client answers or hangs up: many connections waiting at once on 2 workers,
# a half-close that must wake its task, and rmmod with connections held.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../tcp-lib.sh"
ASYNC="python3 $(dirname "$0")/../async_clients.py"
PORT=7008
W=$(mktemp -d)

hint "init refuses port=0 (given: reactor::listen checks the parameters)"
check_fails "port=0 is refused" insmod "$KO" port=0

hint "init logs listen's error and fails with it"
port_in_use_refused 7101

mark
load port=$PORT workers=2 || {
	finish
	exit
}
expect_dmesg "the server says where it listens" "127\.0\.0\.1:$PORT"

hint "the accept task must get the connection: Watched::poll_ready stores the waker, then checks readiness; sock_wake wakes it"
out=$($ASYNC greet $PORT 2>&1)
if [[ "$out" == ok* ]]; then
	pass "a client is greeted ($out)"
else
	fail "a client is greeted" "$out" "$(excerpt 10)"
	# Nothing else can work while no connection is served.
	rm -rf "$W"
	finish
	exit
fi

hint "poll_ready is Ready only when the socket has an event of mask (or POLLERR, POLLHUP): a connection is always writable (POLLOUT), which the greeter does not wait for"
is_ok "a greeted client that stays silent keeps its connection" $ASYNC silent $PORT
hint "the greeter waits for POLLIN | POLLRDHUP: the client's half-close or its data must wake the task (sock_wake wakes the waker poll_ready stored)"
is_ok "a client's half-close ends its connection" $ASYNC halfclose $PORT
is_ok "a client's answer ends its connection" $ASYNC answer $PORT

hint "a task that waits must give its worker back (return Pending), or 2 workers cannot hold 256 connections"
mark
is_ok "256 connections greeted and held open at once on 2 workers, each ended by its half-close" $ASYNC hold $PORT 256
expect_no_dmesg "and no error is logged for them" 'dropped a connection|accept failed'
unload

hint "Drop: executor.shutdown() cancels the tasks, and dropping their futures closes the sockets"
load port=$PORT workers=2
$ASYNC held $PORT 64 >"$W/held" 2>&1 &
heldpid=$!
wait_ready "$W/held" 300
mark
timed_rmmod
if [ $RMMOD_RC -eq 0 ] && ! loaded; then
	pass "rmmod with 64 connections held returns (${RMMOD_MS} ms)"
else
	fail "rmmod with 64 connections held returns" "rmmod exited with $RMMOD_RC after ${RMMOD_MS} ms" "$(excerpt)"
fi
wait "$heldpid"
out=$(tail -1 "$W/held")
if [[ "$out" == ok*"64 closed by the server" ]]; then
	pass "every held client saw its connection end ($out)"
else
	fail "every held client saw its connection end" "$(cat "$W/held")"
fi
expect_dmesg "the server logs that it stopped, cancelling 65 tasks (the 64 connections and the accept loop)" 'stopped: [0-9]+ tasks spawned, 65 cancelled'
check_fails "nothing listens on the port after rmmod" $ASYNC greet $PORT

hint "nothing may survive rmmod: the reactor's wait-queue entries leave their queues before the sockets go"
reload_twice port=$PORT
rm -rf "$W"
finish
