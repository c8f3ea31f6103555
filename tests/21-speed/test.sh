#!/bin/bash
# Stage 21 test (runs in the VM): what makes rnvme as fast as the C driver,
# checked for what it changes, never for its speed (a timed test would fail
# at random on a busy machine: make bench measures). On rkw-d0 (QEMU's
# defaults: MQES 2047, OACS bit 8, MDTS 7), with every streaming mapping
# through swiotlb: I/O queues of 1024 entries and 1023 tags, more than 31
# requests really in flight; shadow doorbells configured, and in use (the
# driver counts values the shadow alone carried, and its count of register
# writes is the one in QEMU's trace); reads one at a time on an idle
# controller (where a doorbell lost to a wrong event index shows in the
# watchdog's log); a 4 KiB request mapped in one call (C's simple path);
# fio verify at the new depth, zero copy and through the bounce pool
# (zero_copy=0). No splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"
. "$(dirname "$0")/../nvme-disk-lib.sh"

TREE=${1:-solutions}
# A lost doorbell shows as a request that never completes: the watchdog
# gives the controller up after this long (the default is 30 s).
TIMEOUT_MS=5000

bind_only "$D0"
mark
doorbell_mark
load io_timeout_ms=$TIMEOUT_MS || { finish; exit; }
DISK=$(disk_of "$D0")
DEV=/dev/$DISK
if [ -z "$DISK" ]; then
	fail "rnvme makes a disk for $D0" "$(excerpt)"
	finish
	exit
fi

# ---- 1. the depth, as set up -------------------------------------------------------------
hint "speed::queue_depth: CAP.MQES is 0's based (Cap::max_queue_entries adds the one); at most MAX_DEPTH, the library's limit"
expect_dmesg "the I/O queues have 1024 entries (QEMU's MQES: 2048; the C driver's limit: 1024)" \
	"^rnvme $D0: [0-9]+ I/O queues of 1024 entries"
nr=$(cat "/sys/block/$DISK/queue/nr_requests" 2>/dev/null)
if [ "$nr" = 1023 ]; then
	pass "the disk takes 1023 requests per hardware queue (nr_requests; stage 20: 31)"
else
	fail "the disk takes 1023 requests per hardware queue (nr_requests; stage 20: 31)" "nr_requests: ${nr:-nothing}"
fi

# ---- 2. shadow doorbells, set up ---------------------------------------------------------
hint "speed::shadow_doorbells: OACS bit 8, then Doorbell Buffer Config (DoorbellBuffer::command) on the admin queue, then use_shadow on each I/O queue"
expect_dmesg "shadow doorbells on for every I/O queue (Doorbell Buffer Config accepted)" \
	"^rnvme $D0: shadow doorbells on for $CPUS I/O queues"

# ---- 3. one read at a time: the controller idle before each -----------------------------
# QEMU's event index is then the tail it saw last: the driver's old tail.
# A doorbell lost to a wrong answer shows as a command the controller never
# reads: the watchdog says so after TIMEOUT_MS ("no completion after"),
# however fast or slow the machine. The bound is only there so that a read
# the watchdog cannot end either does not take the stage's whole limit.
hint "speed::need_event: write the register when event_idx is one of old..new-1, modulo 2^16; one too strict and a controller that sleeps never hears of the command"
mark
check "20 reads of 4 KiB one at a time, on an idle controller, each ending" within $((TIMEOUT_MS / 1000 * 20)) \
	sh -c "for i in \$(seq 20); do dd if=$DEV of=/dev/null bs=4k count=1 skip=\$((i * 97)) iflag=direct 2>/dev/null || exit 1; done"
expect_no_dmesg "none of them waited for the watchdog (each doorbell heard)" "no completion after [0-9]+ ms"

# ---- 4. the depth, in use ---------------------------------------------------------------------
# QEMU's controller is quicker than the emulated CPU that feeds it: left
# alone, it ends requests about as fast as they come. Throttled (QMP:
# 50 I/Os a second), it keeps them: fio at QD128 then has as many in flight
# as the disk's tags let it.
hint "a queue of 1024 entries: the finished requests a list, the tags from the depth (disk::create), the tag set of depth - 1"
throttle() {
	qmp "{\"execute\":\"block_set_io_throttle\",\"arguments\":{\"id\":\"rkw-d0\",\"bps\":0,\"bps_rd\":0,\"bps_wr\":0,\"iops\":$1,\"iops_rd\":0,\"iops_wr\":0}}" >/dev/null
}
if check "QEMU throttles rkw-d0 to 50 I/Os a second (QMP)" throttle 50; then
	fio --name=deep --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=128 \
		--size=16M --time_based --runtime=3 >/tmp/rkw21-deep.out 2>&1 &
	FIO=$!
	# Sampled until fio ends (it may take seconds to start on a busy
	# machine), at most a minute; the throttle is lifted after.
	most=0
	for ((i = 0; i < 300; i++)); do
		kill -0 "$FIO" 2>/dev/null || break
		read -r r w <"/sys/block/$DISK/inflight"
		[ $((r + w)) -gt "$most" ] && most=$((r + w))
		sleep 0.2
	done
	throttle 0
	wait "$FIO"
	if [ "$most" -gt 31 ]; then
		pass "more than 31 requests in flight at once ($most seen; stage 20: 31 at most)"
	else
		fail "more than 31 requests in flight at once (stage 20: 31 at most)" "at most $most seen in /sys/block/$DISK/inflight" "$(tail -5 /tmp/rkw21-deep.out)"
	fi
fi

# ---- 5. the shadow doorbells in use --------------------------------------------------------
# Random reads at QD128 on each vCPU's queue: submissions close enough
# together that the controller has not read the last tail when the next
# comes (counted at unbind, below).
n0=$(ios_done "$DISK")
out=$(fio --name=shadow --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=128 \
	--numjobs="$CPUS" --cpus_allowed=0-$((CPUS - 1)) --cpus_allowed_policy=split --size=16M \
	--time_based --runtime=4 --group_reporting 2>&1)
rc=$?
n1=$(ios_done "$DISK")
ios=$((n1 - n0))
if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out"; then
	pass "fio randread at QD128 on each of $CPUS vCPUs ($ios I/Os)"
else
	fail "fio randread at QD128 on each of $CPUS vCPUs" "fio exited with $rc" "$(tail -5 <<<"$out")" "$(excerpt 10)"
fi

# ---- 6. data at the new depth ---------------------------------------------------------------
hint "the tags' pages and the zero-copy pieces: every request's data where it belongs, at any depth"
fio_verify "fio randwrite + verify, 4 KiB at QD256 per job (zero copy, through swiotlb)" --bs=4k --iodepth=256
fio_verify "fio randwrite + verify, 4 KiB to 512 KiB at QD16, buffers 512 bytes into a page, fdatasync every 8 writes" \
	--bsrange=4k-512k --iodepth=16 --iomem_align=512 --fdatasync=8
# The driver counts, for each queue, the values it wrote to a register and
# those the shadow alone carried. Whether the controller still needed a
# register write depends on how far it had read, so on the machine's speed
# (a debug kernel's slow CPU lets QEMU catch up between two requests): the
# test asks only that some values went by the shadow alone, and that the
# driver's count of register writes is QEMU's, so its count can be trusted.
hint "QueuePair::use_shadow on every I/O queue; DoorbellBuffer::update asks need_event, and the register is written only if it says so"
mark
echo "$D0" >"$DRV/unbind"
read -r mmio shadow < <(dmesg_since_mark | sed -nE 's/^rnvme .*: queue [0-9]+: ([0-9]+) doorbell register writes, ([0-9]+) new values by the shadow doorbells alone/\1 \2/p' |
	awk '{ m += $1; s += $2 } END { print m + 0, s + 0 }')
traced=$(traced_io_doorbells)
if [ "${shadow:-0}" -gt 0 ]; then
	pass "new doorbell values carried by the shadow alone, no register write ($shadow; $mmio register writes; stage 20: none)"
else
	fail "new doorbell values carried by the shadow alone, no register write (stage 20: none)" \
		"the driver's count: register writes ${mmio:-?}, by the shadow alone ${shadow:-?}" "$(excerpt)"
fi
if [ "${mmio:-0}" -gt 0 ] && [ "$mmio" = "$traced" ]; then
	pass "the driver's count of doorbell register writes is QEMU's ($mmio)"
else
	fail "the driver's count of doorbell register writes is QEMU's" "the driver: ${mmio:-?}; QEMU's trace: $traced"
fi
# Every 4 KiB read of step 5 is one piece of one page: each mapped in one
# call (and step 6's, 512 bytes into a page, in one call reaching into the
# next page, their data verified).
hint "SpeedDisk::map_one: request::contiguous gives the one piece, DmaPiece::map maps it; PRP2 is the start of the second page if the piece reaches it"
whole=$(dmesg_since_mark | sed -nE 's/^rnvme: ([0-9]+) requests mapped in one piece.*/\1/p' | tail -1)
if [ "${whole:-0}" -ge "$ios" ] && [ "$ios" -gt 0 ]; then
	pass "each 4 KiB request mapped in one call, as C's simple path ($whole requests; step 5: $ios reads)"
else
	fail "each 4 KiB request mapped in one call, as C's simple path" \
		"mapped in one piece: ${whole:-no count in the log}; step 5's 4 KiB reads: $ios" "$(excerpt)"
fi
unload

# ---- 7. through the bounce pool ------------------------------------------------------------------
mark
load zero_copy=0 io_timeout_ms=$TIMEOUT_MS || { finish; exit; }
DEV=/dev/$(disk_of "$D0")
hint "a request larger than its tag's page goes through a buffer of the pool (Speedups::large_bounce); none free: EBUSY, and blk-mq tries again"
fio_verify "zero_copy=0: fio randwrite + verify, 4 KiB to 512 KiB at QD32 (the tags' pages and the pool of 16 per queue)" \
	--bsrange=4k-512k --iodepth=32
unload
bind_only
finish
