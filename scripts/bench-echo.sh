#!/bin/bash
# Benchmark (not a test): stage 22's blocking echo server (a work item, so a
# worker thread, per connection) against stage 26's async one (tasks on 2
# workers), under the same load, in one VM boot on the fast kernel.
#
#   scripts/bench-echo.sh [SECONDS]    (default 10 per run)
#
# Each run: CONNS connections each send 512-byte messages and wait for the
# echo, as fast as they can (tests/async_clients.py load). Prints
# messages/s, latency percentiles and how many kernel worker threads the
# load made the kernel create; the last lines are "echo-<server>-<conns> <msg/s>" for bench.sh.
set -euo pipefail
. "$(dirname "$0")/common.sh"
SECS=${1:-10}
export RKW_FLAVOUR=fast
"$REPO/scripts/ensure-setup.sh" >/dev/null
for s in 21 25; do "$REPO/scripts/build-stage.sh" solutions "$s" >/dev/null; done
MO="$REPO/build/modules-fast/solutions"
GUEST="$REPO/build/bench-echo-guest.sh"
cat >"$GUEST" <<EOS
#!/bin/bash
# One server at a time, same load, same VM.
LOAD="python3 $REPO/tests/async_clients.py load"
run() { # run NAME PORT CONNS
	before=\$(ps -e -o comm= | grep -c '^kworker')
	\$LOAD \$2 \$3 $SECS >/tmp/out 2>&1 &
	for _ in \$(seq 600); do grep -q ready /tmp/out && break; sleep 0.1; done
	sleep $((SECS / 2))
	during=\$(ps -e -o comm= | grep -c '^kworker')
	wait
	echo "\$1 \$3 conns: \$(tail -1 /tmp/out) | kworker threads \$before -> \$during"
	rate=\$(sed -nE 's/.* ([0-9]+) msg\/s.*/\1/p' /tmp/out)
	echo "RESULT echo-\$1-\$3 \${rate:-0} msg/s"
	echo "RESULT echo-\$1-\$3-new-kworkers \$((during - before)) threads"
}
# The async server first: idle kworkers live on for minutes, and those the
# blocking server needs would be counted in the async server's "before".
insmod $MO/26-async-sockets/rasync.ko port=7008 workers=2
run async 7008 16
run async 7008 200
rmmod rasync
insmod $MO/22-tcp-echo/rtcp.ko port=7007
run blocking 7007 16
run blocking 7007 200
rmmod rtcp
EOS
chmod +x "$GUEST"
"$REPO/scripts/vm.sh" --exec "bash $GUEST" 2>&1 | grep -E '^(blocking|async|RESULT) ' | sed 's/^RESULT //'
