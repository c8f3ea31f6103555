# Helpers for the TCP server stages' tests (sourced after lib.sh).
# shellcheck shell=bash

# Stage 22's user-space clients (echo, abrupt, hold, listen).
TCP_CLIENT="$(dirname "${BASH_SOURCE[0]}")/22-tcp-echo/tcp_client.py"

# port_in_use_refused PORT: while a user-space program listens on PORT,
# insmod port=PORT must fail with EADDRINUSE. Sets the mark just before the
# insmod, for checks of what the module logged.
port_in_use_refused() {
	local port=$1 w holder rc
	w=$(mktemp -d)
	python3 "$TCP_CLIENT" listen "$port" >"$w/holder" 2>&1 &
	holder=$!
	wait_ready "$w/holder" 50
	mark
	insmod "$KO" port="$port" 2>"$w/err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q 'Address already in use' "$w/err"; then
		pass "insmod on a port another program listens on fails with EADDRINUSE"
	else
		fail "insmod on a port another program listens on fails with EADDRINUSE" \
			"insmod exited with $rc: $(cat "$w/err")"
		loaded && rmmod "$MODULE"
	fi
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	rm -rf "$w"
}
