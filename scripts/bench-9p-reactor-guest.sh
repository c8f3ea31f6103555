#!/bin/bash
# make bench, 9P reads from the disk (runs in the VM; scripts/bench-9p-reactor.sh
# boots it): stage 35's r9p, whose reads await stage 34's file reactor,
# against stage 31's, the same server reading synchronously in its worker,
# both exporting an ext4 on stage 20's rnvme, read by several v9fs clients
# at once (cache=none), the two servers taking turns.
#   bench-9p-reactor-guest.sh REACTOR_KO SYNC_KO RNVME_KO ROUNDS
# Prints "sample ROUND SERVER METRIC VALUE" lines (SERVER: reactor or sync),
# "counts ROUND SERVER CASE LINE" (the reactor's last log line: its reads,
# and how many went to the blocking pool) and "# ..." notes; the last line
# is "RKW-GUEST-DONE".
set -u
REACTOR_KO=$1 SYNC_KO=$2 RNVME_KO=$3 ROUNDS=${4:-5}
. "$(dirname "$0")/../tests/qmp.sh"
# Four clients (v9fs mounts, a TCP connection each), one reader on each.
CLIENTS=4
FILE_MB=12 # per client: 4 x 12 MiB fill most of the 64 MiB disk
PORT=5640
MSIZE=262144 # a 128 KiB read is one Tread
CTRL=rkw-c0  # QEMU's id of the controller (the serial)
W=$(mktemp -d)
E=$W/ext4
mkdir -p "$E"
say() { echo "# $*"; }
drop_caches() { sync && echo 3 >/proc/sys/vm/drop_caches; }
# throttle_reads BPS: QEMU reads at most BPS bytes a second from the disk
# (0: no limit), as stage 35's test does.
throttle_reads() {
	qmp "{\"execute\":\"block_set_io_throttle\",\"arguments\":{\"id\":\"$CTRL\",\"bps\":0,\"bps_rd\":$1,\"bps_wr\":0,\"iops\":0,\"iops_rd\":0,\"iops_wr\":0}}" >/dev/null
}
mounts() { # mounts: the clients' mounts of the server on $PORT
	local i
	for i in $(seq 1 $CLIENTS); do
		mkdir -p "$W/m$i"
		mount -t 9p -o "trans=tcp,port=$PORT,version=9p2000.L,msize=$MSIZE,cache=none" 127.0.0.1 "$W/m$i" || return 1
	done
}
umounts() {
	local i
	for i in $(seq 1 $CLIENTS); do umount "$W/m$i" 2>/dev/null; done
}
# unload ROUND SERVER CASE: unmount, rmmod, and print the reactor's counts
# (its last log line, `Reactored::stopped`; stage 31 has none).
unload() {
	umounts
	rmmod r9p || say "rmmod r9p failed"
	local line
	line=$(dmesg | grep -E '^(\[[ 0-9.]+\] )?r9p: file reactor: ' | tail -1 | sed -E 's/^\[[ 0-9.]+\] //')
	[ "$2" != reactor ] || echo "counts $1 $2 $3 ${line:-none}"
	dmesg -C
}
ko() { if [ "$1" = reactor ]; then echo "$REACTOR_KO"; else echo "$SYNC_KO"; fi; }

# fio_rate METRIC RW BS [fio options]: the clients read at once, one fio
# job each on its own mount and file, from a dropped page cache; prints the
# sum of the jobs' rates (MB/s for read, IOPS for randread).
fio_rate() {
	local metric=$1 rw=$2 bs=$3 i job=$W/job.fio
	shift 3
	{
		echo "[global]"
		echo "rw=$rw"
		echo "bs=$bs"
		echo "ioengine=psync"
		echo "invalidate=0"
		for o in "$@"; do echo "$o"; done
		for i in $(seq 1 $CLIENTS); do
			echo "[c$i]"
			echo "filename=$W/m$i/c$i"
		done
	} >"$job"
	drop_caches
	fio --output-format=json --output="$W/fio.json" "$job" >/dev/null 2>"$W/fio.err" || {
		say "fio failed: $(head -c 300 "$W/fio.err")"
		return 1
	}
	python3 - "$W/fio.json" "$metric" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
rd = [job["read"] for job in j["jobs"]]
if sys.argv[2].endswith("mbs"):
    v = sum(r["io_bytes"] for r in rd) / 1e6 / max(r["runtime"] for r in rd) * 1e3
else:
    v = sum(r["iops"] for r in rd)
print(f"{v:.3f}")
EOF
}
# sample ROUND SERVER METRIC PASSES RW BS [fio options]: fio_rate PASSES
# times; prints the median as the round's sample.
sample() {
	local round=$1 server=$2 metric=$3 passes=$4 i v vs=()
	shift 4
	for i in $(seq 1 "$passes"); do
		v=$(fio_rate "$metric" "$@") && [ -n "$v" ] || return 1
		vs+=("$v")
	done
	echo "# $round $server $metric passes: ${vs[*]}"
	echo "sample $round $server $metric $(printf '%s\n' "${vs[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
}

# stall ROUND SERVER: the slow disk. Client 1 reads a file whose pages are
# not in the page cache while QEMU lets the disk read 1 MiB/s; clients 2..4
# meanwhile stat a file and read a small one, both in memory (no disk), in
# a loop: how many of those they finish, and how long the longest took.
stall() {
	python3 - "$1" "$2" "$W" $CLIENTS <<'EOF'
import os, sys, time
rnd, server, w, clients = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stop = f"{w}/stop"
if os.path.exists(stop):
    os.unlink(stop)
kids = []
for i in range(2, clients + 1):
    r, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        lat = []
        d = f"{w}/m{i}"
        while not os.path.exists(stop):
            t0 = time.monotonic()
            os.stat(f"{d}/small/f{i}")
            with open(f"{d}/hot", "rb", buffering=0) as f:
                while f.read(65536):
                    pass
            lat.append(time.monotonic() - t0)
        os.write(wr, (" ".join(f"{x:.6f}" for x in lat) + "\n").encode())
        os._exit(0)
    os.close(wr)
    kids.append((pid, r))
time.sleep(1)  # the others are going
t0 = time.monotonic()
n = 0
with open(f"{w}/m1/slow", "rb", buffering=0) as f:
    while True:
        b = f.read(131072)
        if not b:
            break
        n += len(b)
cold = time.monotonic() - t0
open(stop, "w").close()
lat = []
for pid, r in kids:
    with os.fdopen(r) as f:
        lat += [float(x) for x in f.read().split()]
    os.waitpid(pid, 0)
lat.sort()
# Operations that ended while the cold read went on, at most: the loop
# ran from 1 s before it to its end (and one more operation each).
print("sample", rnd, server, "stall-ops-per-s", f"{len(lat) / (cold + 1):.3f}")
print("sample", rnd, server, "stall-max-ms", f"{lat[-1] * 1e3 if lat else 0:.1f}")
print("sample", rnd, server, "stall-median-ms", f"{lat[len(lat) // 2] * 1e3 if lat else 0:.1f}")
print("sample", rnd, server, "stall-cold-mbs", f"{n / 1e6 / cold:.3f}", flush=True)
EOF
}

# ---- the disk, ext4, the files --------------------------------------------------
# vm.sh has QEMU trace every doorbell write (a line each, under QEMU's
# global lock): off, as scripts/bench-nvme-guest.sh's measured rounds.
qmp '{"execute":"trace-event-set-state","arguments":{"name":"pci_nvme_*","enable":false}}' >/dev/null ||
	say "QMP: QEMU's NVMe trace stays on"
dmesg -C
insmod "$RNVME_KO" || exit 1
DEV=""
for _ in $(seq 1 100); do
	DEV=$(dmesg | sed -nE 's/^(\[[ 0-9.]+\] )?rnvme [0-9a-f:.]+: disk (rnvme[0-9]+n1): .*/\2/p' | tail -1)
	[ -n "$DEV" ] && [ -b "/dev/$DEV" ] && break
	sleep 0.1
done
[ -n "$DEV" ] || {
	say "rnvme made no disk"
	exit 1
}
mkfs.ext4 -q -F -m 0 -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "/dev/$DEV" && mount "/dev/$DEV" "$E" || exit 1
for i in $(seq 1 $CLIENTS); do head -c $((FILE_MB << 20)) /dev/urandom >"$E/c$i" || exit 1; done
head -c 4M /dev/urandom >"$E/slow" || exit 1
head -c 64K /dev/urandom >"$E/hot"
mkdir "$E/small" && for i in $(seq 1 $CLIENTS); do echo "file $i" >"$E/small/f$i"; done
chmod -R a+rX "$E"
sync
say "fixture: /dev/$DEV, $(df -h --output=size,used "$E" | tail -1 | xargs) used; $CLIENTS files of $FILE_MB MiB, a 4 MiB cold one"
dmesg -C

# ---- rounds, the servers alternating ----------------------------------------------
for r in $(seq 1 "$ROUNDS"); do
	t0=$SECONDS
	if [ $((r % 2)) = 1 ]; then order="reactor sync"; else order="sync reactor"; fi
	for s in $order; do
		# The module's defaults (4 executor workers), one per client.
		drop_caches
		insmod "$(ko $s)" root="$E" port=$PORT || exit 1
		mounts || exit 1
		# The sequential pass is short (48 MiB): three of them, each from
		# a dropped cache.
		sample "$r" $s seq-mbs 3 read 128k
		sample "$r" $s rand-iops 1 randread 4k norandommap time_based runtime=8
		unload "$r" $s fast
		# The slow disk: one executor worker, as in stage 35's test, so that
		# a worker asleep on the disk is the whole server.
		drop_caches
		find "$E" -exec stat {} + >/dev/null
		cat "$E/hot" "$E/small/"* >/dev/null
		insmod "$(ko $s)" root="$E" port=$PORT workers=1 || exit 1
		mounts || exit 1
		if throttle_reads 1048576; then
			stall "$r" $s
			throttle_reads 0
		else
			say "QMP: QEMU does not throttle the disk"
		fi
		unload "$r" $s slow-disk
	done
	say "round $r took $((SECONDS - t0)) s"
done
umount "$E"
rmmod rnvme
rm -rf "$W"
echo RKW-GUEST-DONE
