#!/bin/bash
# Stage 11 test (runs in the VM): the in-kernel echo server on loopback, from
# user-space clients: many sizes, partial sends and receives, clients that
# vanish, a port already taken, and rmmod while clients are connected.
. "$(dirname "$0")/../lib.sh"
CLIENT="python3 $(dirname "$0")/tcp_client.py"
PORT=7007
W=$(mktemp -d)

# is_ok DESC CMD...: CMD prints a line starting with "ok".
is_ok() {
	local desc=$1 out
	shift
	out=$("$@" 2>&1)
	if [[ "$out" == ok* ]]; then pass "$desc ($out)"; else fail "$desc" "$out" "$(excerpt 10)"; fi
}

hint "init refuses port=0"
check_fails "port=0 is refused" insmod "$KO" port=0

hint "TcpListener::listen returns kernel_bind's error; init logs it and fails with it"
$CLIENT listen 7100 >"$W/holder" 2>&1 &
holder=$!
for _ in $(seq 50); do grep -q ready "$W/holder" && break; sleep 0.1; done
mark
insmod "$KO" port=7100 2>"$W/err"
rc=$?
if [ $rc -ne 0 ] && grep -q 'Address already in use' "$W/err"; then
	pass "insmod on a port another program listens on fails with EADDRINUSE"
else
	fail "insmod on a port another program listens on fails with EADDRINUSE" \
		"insmod exited with $rc: $(cat "$W/err")"
	loaded && rmmod "$MODULE"
fi
expect_dmesg "and the kernel log says why, naming the port" '7100.*(in use|EADDRINUSE)'
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

hint "init listens on 127.0.0.1:port and spawns the accept loop"
mark
load port=$PORT || {
	finish
	exit
}
expect_dmesg "the server says where it listens" "127\.0\.0\.1:$PORT"

hint "recv must return what kernel_recvmsg received; send_all must loop until every byte is sent"
is_ok "one client: 15 sizes from 0 bytes to 1 MiB, partial sends and receives" $CLIENT echo $PORT 1
is_ok "8 concurrent clients, each 15 sizes" $CLIENT echo $PORT 8

hint "a reset (ECONNRESET) or a peer gone while sending (EPIPE) ends one connection, not the server"
mark
is_ok "clients that disconnect abruptly do not disturb the server" $CLIENT abrupt $PORT
expect_no_dmesg "and no error is logged for them" 'ended with an error|dropped a connection|accept failed'

hint "the clients need a working echo first (recv, send_all)"
$CLIENT hold $PORT 6 >"$W/hold" 2>&1 &
holdpid=$!
for _ in $(seq 100); do grep -q ready "$W/hold" && break; sleep 0.1; done
if grep -q ready "$W/hold"; then
	pass "6 clients connected (one blocked mid-transfer)"
else
	fail "6 clients connected (one blocked mid-transfer)" "$(cat "$W/hold")"
fi
hint "stop: set the flag, shut down the listener and every live stream, then wait for the work items"
mark
t0=$(date +%s%N)
timeout 20 rmmod "$MODULE"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ $rc -eq 0 ] && [ $ms -lt 3000 ]; then
	pass "rmmod with clients connected returns promptly (${ms} ms)"
else
	fail "rmmod with clients connected returns promptly" "rmmod exited with $rc after ${ms} ms" "$(excerpt)"
fi
wait "$holdpid"
rc=$?
out=$(tail -1 "$W/hold")
if [ $rc -eq 0 ]; then pass "and every client saw its connection end ($out)"; else fail "and every client saw its connection end" "$(cat "$W/hold")"; fi
check_fails "nothing listens on the port after rmmod" $CLIENT echo $PORT 1
expect_dmesg "the server logs that it stopped" 'stopped after [0-9]+ connections'

hint "Drop must release every socket; reuseaddr lets a reload bind despite TIME_WAIT connections"
reload_twice port=$PORT
load port=7200 && hint "recv must return what kernel_recvmsg received; send_all must loop until every byte is sent" &&
	is_ok "loaded on another port, it echoes there" $CLIENT echo 7200 2
unload
rm -rf "$W"
finish
