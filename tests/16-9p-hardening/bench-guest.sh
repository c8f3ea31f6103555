#!/bin/bash
# make bench, 9P servers (runs in the VM; scripts/bench-9p-servers.sh boots
# it): r9p against diod and QEMU's own 9p server, each through a v9fs mount
# of the same tree, samples alternating between the three.
#   bench-guest.sh KO QEMU_DIR SAMPLES
# KO: stage 16's r9p.ko. QEMU_DIR: the same tree on the host, which the VM
# sees through QEMU's virtio-9p root export. Prints "SERVER SAMPLE METRIC
# VALUE" lines.
set -u
KO=$1 QDIR=$2 SAMPLES=${3:-3}
W=$(mktemp -d)
E=$W/export
mkdir -p "$E" "$W/r9p" "$W/diod"
chmod 755 "$W"
mount -t tmpfs -o size=400m r9p-bench "$E"
# The tree: 10,000 empty files in one directory, a 256 MiB file.
mkdir "$E/files"
(cd "$E/files" && touch file-{00000..09999})
cp "$QDIR/big" "$E/big"
echo "# fixture ready: $(ls -f "$E/files" | wc -l) entries, $(stat -c %s "$E/big") bytes"

MSIZE=131072
insmod "$KO" root="$E" port=5640 max_conns=8 max_msize=$MSIZE || exit 1
diod -f -n -l 127.0.0.1:5641 -e "$E" -L "$W/diod.log" &
DIOD=$!
sleep 1
opts="trans=tcp,version=9p2000.L,msize=$MSIZE,cache=none"
mount -t 9p -o "$opts,port=5640" 127.0.0.1 "$W/r9p" || exit 1
mount -t 9p -o "$opts,port=5641,aname=$E" 127.0.0.1 "$W/diod" || exit 1
echo "# qemu: $(grep -m1 ' / 9p ' /proc/mounts)"

measure() { # measure DIR: one sample of every metric
	python3 - "$1" <<'EOF'
import os, random, sys, time
d = sys.argv[1]
def rate(n, f):
    t0, c0 = time.perf_counter(), time.process_time()
    f()
    return n / (time.perf_counter() - t0)
names = [f"{d}/files/file-{i:05d}" for i in range(10000)]
print("stat-per-s", rate(10000, lambda: [os.stat(p) for p in names]))
print("readdir-entries-per-s", rate(10000, lambda: os.listdir(f"{d}/files")))
print("open-close-per-s", rate(2000, lambda: [os.close(os.open(p, os.O_RDONLY)) for p in names[:2000]]))
def seq():
    with open(f"{d}/big", "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass
print("seqread-MB-per-s", rate(256, seq))
r = random.Random(1)
fd = os.open(f"{d}/big", os.O_RDONLY)
print("randread-4k-per-s", rate(2000, lambda: [os.pread(fd, 4096, r.randrange(65536) * 4096) for _ in range(2000)]))
os.close(fd)
EOF
}

for s in $(seq 1 "$SAMPLES"); do
	for server in r9p diod qemu; do
		case $server in
		r9p) dir=$W/r9p ;;
		diod) dir=$W/diod ;;
		qemu) dir=$QDIR ;;
		esac
		sync
		echo 3 >/proc/sys/vm/drop_caches
		measure "$dir" | while read -r metric value; do echo "$server $s $metric $value"; done
	done
done
umount "$W/r9p" "$W/diod"
kill $DIOD
rmmod r9p
umount "$E"
rm -rf "$W"
