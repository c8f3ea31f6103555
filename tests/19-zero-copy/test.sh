#!/bin/bash
# Stage 19 test (runs in the VM): zero copy, on rkw-d0. fio randwrite +
# verify through the request's own pages (PRPs, PRP lists, buffers at an
# offset in their page); scattered 512-byte segments through an SGL, and,
# with sgl=0, through the bounce buffer; with zero_copy=0 every request
# bounced, as in stage 13; each queue's interrupt on its CPU; a batch of
# requests rings the doorbell once. No splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"
. "$(dirname "$0")/../nvme-disk-lib.sh"

TREE=${1:-solutions}
HERE=$(dirname "$0")
# The boot has swiotlb=force (stage.env): every streaming DMA mapping takes
# bounce slots until it is unmapped, and debugfs counts them: a mapping
# never undone still holds its slots after rmmod.
SWIOTLB_USED=/sys/kernel/debug/swiotlb/io_tlb_used
slots_before=$(cat "$SWIOTLB_USED" 2>/dev/null)
bind_only "$D0"
mark
load || { finish; exit; }
DEV=/dev/$(disk_of "$D0")

# ---- zero copy ----------------------------------------------------------------------
# fio_verify DESC DEV FIO_ARGS...: a randwrite with crc32c verification, one
# job per vCPU, each in its own 4 MiB region from 40 MiB.
fio_verify() {
	local desc=$1 dev=$2 out rc=0
	shift 2
	out=$(fio --name=rkw --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite \
		--verify=crc32c --verify_fatal=1 --numjobs="$CPUS" --offset=40M --offset_increment=4M \
		--size=2M --group_reporting "$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out"; then
		pass "$desc"
	else
		fail "$desc" "fio exited with $rc:" "$(grep -iE 'verify|err|bad' <<<"$out" | head -8)" "$(excerpt 10)"
	fi
}
# zero_copy_counts: "mapped with_sgl bounced" from the disk's report at unbind.
zero_copy_counts() { dmesg_since_mark | sed -nE 's/^rnvme: ([0-9]+) requests zero copy \(([0-9]+) with an SGL\), ([0-9]+) through a bounce buffer/\1 \2 \3/p' | tail -1; }

hint "dma_map: the request's pages mapped and described by PRPs; unmapped before the request ends"
fio_verify "zero copy: fio randwrite + verify, 4 KiB at QD32" "$DEV" --bs=4k --iodepth=32
fio_verify "zero copy: fio randwrite + verify, 4 KiB to 128 KiB at QD32 (PRP lists)" "$DEV" --bsrange=4k-128k --iodepth=32
fio_verify "zero copy: buffers 512 bytes into a page (the first PRP entry has an offset)" "$DEV" --bsrange=4k-64k --iodepth=8 --iomem_align=512
expect_dmesg "Identify Controller's SGLS: QEMU's controller takes SGLs" "^rnvme $D0: the controller takes SGLs"
hint "a request whose pages PRPs cannot describe is described by an SGL (PSDT 01b, Data Block descriptors, a Last Segment descriptor for the list)"
is_ok "scattered 512-byte segments (no PRP shape): written and read back through an SGL" python3 "$HERE/iovec.py" "$DEV" $((56 << 20))
hint "dma_map: PRP entries after the first cover whole pages: a piece that ends before the end of its page, with pieces after it, is no PRP shape"
is_ok "512-byte segments each at the start of a page (no PRP shape: each ends mid-page): written and read back" python3 "$HERE/iovec.py" "$DEV" $((56 << 20)) page-starts
hint "affinity::spread: each I/O queue's interrupt vector to the CPUs the tag set's map sends to its hardware queue"
expect_dmesg "each I/O queue's interrupt is sent to its CPU" "^rnvme $D0: $CPUS I/O queue interrupt\(s\) sent to their CPU"
# irqs_on_cpu N: rnvme's interrupts so far on CPU N (/proc/interrupts).
irqs_on_cpu() { awk -v c=$(($1 + 2)) '/rnvme/ { s += $c } END { print s + 0 }' /proc/interrupts; }
last=$((CPUS - 1))
b0=$(irqs_on_cpu 0) bl=$(irqs_on_cpu $last)
fio --name=where --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=1 \
	--cpus_allowed=$last --offset=8M --size=8M --number_ios=400 >/dev/null 2>&1
d0=$(($(irqs_on_cpu 0) - b0)) dl=$(($(irqs_on_cpu $last) - bl))
if [ "$dl" -ge 300 ] && [ $((d0 * 4)) -lt "$dl" ]; then
	pass "reads submitted on CPU $last complete on CPU $last ($dl interrupts there, $d0 on CPU 0)"
else
	fail "reads submitted on CPU $last complete on CPU $last" "400 reads: $dl interrupts on CPU $last, $d0 on CPU 0" "$(grep rnvme /proc/interrupts)"
fi
hint "queue_rq: write the command, ring the doorbell only when is_last (commit_rqs rings what a stopped batch left)"
t0=$(nvme_trace_size)
out=$(fio --name=batch --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=32 \
	--iodepth_batch_submit=32 --iodepth_batch_complete_min=16 --numjobs=1 --cpus_allowed=0 --offset=8M \
	--size=8M --io_size=8M 2>&1)
ios=$(grep -oE 'issued rwts: total=[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
rings=$(nvme_trace_since "$t0" | grep -cE 'pci_nvme_mmio_doorbell_sq sqid [1-9]')
if [ "${ios:-0}" -gt 0 ] && [ $((rings * 4)) -lt $((ios * 3)) ]; then
	pass "batches ring once: $rings SQ doorbell writes for $ios reads submitted 32 at a time"
else
	fail "batches ring once" "$rings SQ doorbell writes for ${ios:-?} reads submitted 32 at a time (one per read means no batching)" "$(tail -3 <<<"$out")"
fi
hint "dma_map: Mapping::map maps and describes the pages of every request one command can carry (zero copy), with an SGL where PRPs cannot describe them"
mark
echo "$D0" >"$DRV/unbind"
read -r mapped sgl bounced < <(zero_copy_counts)
if [ "${mapped:-0}" -gt 100 ] && [ "${sgl:-0}" -gt 0 ]; then
	pass "zero copy with PRPs and with SGLs ($mapped requests zero copy, $sgl of them with an SGL; $bounced bounced)"
else
	fail "zero copy with PRPs and with SGLs" "zero copy: ${mapped:-?}, with an SGL: ${sgl:-?}, bounce buffer: ${bounced:-?}" "$(excerpt)"
fi
unload
mark
load sgl=0 || { finish; exit; }
DEV=/dev/$(disk_of "$D0")
hint "without SGLs, pages PRPs cannot describe go through the bounce buffer"
is_ok "sgl=0: scattered 512-byte segments written and read back through the bounce buffer" python3 "$HERE/iovec.py" "$DEV" $((56 << 20))
unload
read -r mapped sgl bounced < <(zero_copy_counts)
if [ "${sgl:-x}" = 0 ] && [ "${bounced:-0}" -gt 0 ]; then
	pass "sgl=0: no SGL; $bounced requests through a bounce buffer"
else
	fail "sgl=0: no SGL; requests through a bounce buffer" "zero copy: ${mapped:-?}, with an SGL: ${sgl:-?}, bounce buffer: ${bounced:-?}" "$(excerpt)"
fi
mark
load zero_copy=0 || { finish; exit; }
DEV=/dev/$(disk_of "$D0")
fio_verify "zero_copy=0: fio randwrite + verify, 4 KiB to 128 KiB at QD32 (bounce buffers, as stage 13)" "$DEV" --bsrange=4k-128k --iodepth=32
unload
read -r mapped sgl bounced < <(zero_copy_counts)
if [ "${mapped:-x}" = 0 ] && [ "${bounced:-0}" -gt 0 ]; then
	pass "zero_copy=0: no request zero copy ($bounced through a bounce buffer)"
else
	fail "zero_copy=0: no request zero copy" "zero copy: ${mapped:-?}, bounce buffer: ${bounced:-?}" "$(excerpt)"
fi
hint "dma_map: every piece mapped is unmapped, also when the request is refused half-way (check a piece's shape before you map it, or unmap what you mapped)"
slots_after=$(cat "$SWIOTLB_USED" 2>/dev/null)
if [ -z "$slots_before" ]; then
	fail "every DMA mapping was undone (swiotlb's slots in use, before and after)" "no $SWIOTLB_USED"
elif [ "$slots_after" = "$slots_before" ]; then
	pass "every DMA mapping was undone: swiotlb's slots in use back to $slots_before after rmmod"
else
	fail "every DMA mapping was undone: swiotlb's slots in use back to $slots_before after rmmod" "now: $slots_after slots in use (a mapping never unmapped holds its slots)"
fi
bind_only
finish
