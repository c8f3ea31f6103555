#!/bin/bash
# make bench, 9P servers (runs in the VM; scripts/bench-9p-servers.sh boots
# it): r9p against diod and QEMU's own 9p server, each through a v9fs mount
# of the same tree with the same options (msize=65536, cache=none), samples
# alternating between the three.
#   bench-guest.sh KO SAMPLES [AGENT_DIR]
# KO: stage 33's r9p.ko. QEMU's server exports the tree from the host as
# the virtio-9p tag rkwbench (the VM's root holds the same tree, at
# $RKW_BENCH_FIXTURE, which r9p and diod export from a tmpfs). AGENT_DIR: a
# directory shared with the host, where an agent answers with the CPU time
# of QEMU's threads (scripts/bench-9p-servers.py agent).
# Prints "SERVER SAMPLE METRIC QUANTITY VALUE" lines: QUANTITY is rate (per
# second; MB/s for seqread), guest-cpu-us (the whole guest's busy CPU time,
# both vCPUs, per operation), client-cpu-us (the benchmark process's user +
# system time per operation) or qemu-io-cpu-us (the host CPU time of QEMU's
# threads other than its vCPUs per operation: QEMU's 9p server works there).
set -u
KO=$1 SAMPLES=${2:-3} AGENT=${3:-}
QDIR=${RKW_BENCH_FIXTURE:?the host directory of the fixture}
W=$(mktemp -d)
E=$W/export
mkdir -p "$E" "$W/r9p" "$W/diod" "$W/qemu"
chmod 755 "$W"
mount -t tmpfs -o size=400m r9p-bench "$E"
# The tree: 10,000 empty files in one directory, a 256 MiB file.
mkdir "$E/files"
(cd "$E/files" && touch file-{00000..09999})
cp "$QDIR/big" "$E/big"
echo "# fixture ready: $(ls -f "$E/files" | wc -l) entries, $(stat -c %s "$E/big") bytes"

# diod agrees to 64 KiB at most: all three get that msize, so that a large
# read takes as many 9P messages on each.
MSIZE=65536
insmod "$KO" root="$E" port=5640 max_conns=8 max_msize=$MSIZE allow_root=1 || exit 1
diod -f -n -l 127.0.0.1:5641 -e "$E" -L "$W/diod.log" &
DIOD=$!
sleep 1
opts="version=9p2000.L,msize=$MSIZE,cache=none"
mount -t 9p -o "trans=tcp,$opts,port=5640" 127.0.0.1 "$W/r9p" || exit 1
mount -t 9p -o "trans=tcp,$opts,port=5641,aname=$E" 127.0.0.1 "$W/diod" || exit 1
mount -t 9p -o "trans=virtio,$opts" rkwbench "$W/qemu" || exit 1
grep -E " $W/(r9p|diod|qemu) " /proc/mounts | sed 's/^/# mount: /'
[ "$(ls -f "$W/qemu/files" | wc -l)" = 10002 ] && [ "$(stat -c %s "$W/qemu/big")" = $((256 << 20)) ] ||
	echo "# QEMU's export does not hold the fixture"

measure() { # measure SERVER SAMPLE DIR: one sample of every metric
	python3 - "$@" "$AGENT" <<'EOF'
import os, random, resource, sys, time
server, sample, d, agent = sys.argv[1:5]
HZ = os.sysconf("SC_CLK_TCK")
asked = 0

def qemu_io():
    """Seconds of host CPU that QEMU's threads other than its vCPUs have
    used, from the host's agent (None without one)."""
    global asked
    if not agent:
        return None
    asked += 1
    name = f"{os.getpid()}.{asked}"
    with open(f"{agent}/q.{name}", "w") as f:
        f.write("cpu\n")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open(f"{agent}/a.{name}") as f:
                return float(f.read())
        except (FileNotFoundError, ValueError):
            time.sleep(0.01)
    return None

def guest_busy():
    """Seconds both vCPUs were busy (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / HZ

def client():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def run(metric, n, f, scale=1.0):
    """Runs f, n operations; prints their rate (scale: units per
    operation) and the CPU time per operation, in microseconds."""
    q0 = qemu_io()
    g0, c0, t0 = guest_busy(), client(), time.perf_counter()
    f()
    t1, c1, g1 = time.perf_counter(), client(), guest_busy()
    q1 = qemu_io()
    out = {"rate": n * scale / (t1 - t0), "guest-cpu-us": (g1 - g0) / n * 1e6,
           "client-cpu-us": (c1 - c0) / n * 1e6}
    if q0 is not None and q1 is not None:
        out["qemu-io-cpu-us"] = (q1 - q0) / n * 1e6
    for quantity, value in out.items():
        print(server, sample, metric, quantity, f"{value:.3f}", flush=True)

names = [f"{d}/files/file-{i:05d}" for i in range(10000)]
run("stat", 10000, lambda: [os.stat(p) for p in names])
run("readdir", 10000, lambda: os.listdir(f"{d}/files"))
run("open-close", 2000, lambda: [os.close(os.open(p, os.O_RDONLY)) for p in names[:2000]])
def seq():
    with open(f"{d}/big", "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass
# 256 reads of 1 MiB; the rate in MB/s.
run("seqread", 256, seq, scale=1.048576)
r = random.Random(1)
fd = os.open(f"{d}/big", os.O_RDONLY)
run("randread-4k", 2000, lambda: [os.pread(fd, 4096, r.randrange(65536) * 4096) for _ in range(2000)])
os.close(fd)
EOF
}

# The order turns at each sample (r9p diod qemu, diod qemu r9p, ...): a
# drift in the machine's load spreads over the three.
order=(r9p diod qemu)
for s in $(seq 1 "$SAMPLES"); do
	t0=$SECONDS
	for i in 0 1 2; do
		server=${order[$(((s - 1 + i) % 3))]}
		sync
		echo 3 >/proc/sys/vm/drop_caches
		measure "$server" "$s" "$W/$server"
	done
	echo "# sample $s took $((SECONDS - t0)) s"
done
umount "$W/r9p" "$W/diod" "$W/qemu"
kill $DIOD
rmmod r9p
umount "$E"
rm -rf "$W"
