#!/bin/bash
# Stage 20 test (runs in the VM): the disk a user sees, on rkw-d0 (QEMU's
# defaults: MDTS 7, a volatile write cache, Dataset Management). Its queue
# limits come from the controller (a 512 KiB read is one command); fsync
# reaches the controller as a Flush and O_DSYNC writes carry FUA; blkdiscard
# (one range, and three in one request) and fstrim deallocate (the blocks
# read back as zeroes, the rest is kept);
# the disk sits under its PCI device in sysfs. fio verify through all of it,
# and through the bounce buffers (zero_copy=0). No splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"
. "$(dirname "$0")/../nvme-disk-lib.sh"

TREE=${1:-solutions}
HERE=$(dirname "$0")
MNT=/tmp/rkw90
# What QEMU traces for this test, only while it looks (every I/O command
# would be a line): turned on and off over QMP.
EVENTS=(pci_nvme_read pci_nvme_io_cmd pci_nvme_dsm pci_nvme_dsm_deallocate)
qemu_trace() {
	local e
	for e in "${EVENTS[@]}"; do
		qmp "{\"execute\":\"trace-event-set-state\",\"arguments\":{\"name\":\"$e\",\"enable\":$1}}" >/dev/null ||
			echo "# could not turn QEMU's trace of $e $1" >&2
	done
}

bind_only "$D0"
mark
load || { finish; exit; }
DISK=$(disk_of "$D0")
DEV=/dev/$DISK
Q=/sys/block/$DISK/queue
qemu_trace true
t0=$(nvme_trace_size)

# ---- 1. limits from the controller --------------------------------------------
hint "disk_limits::limits: max_hw_sectors is MDTS (a power of two of CAP.MPSMIN pages) in 512-byte sectors, applied with queue_limits::apply"
kb=$(cat "$Q/max_hw_sectors_kb" 2>/dev/null)
if [ "$kb" = 512 ]; then
	pass "max_hw_sectors_kb is 512: QEMU's MDTS 7 (4 KiB << 7)"
else
	fail "max_hw_sectors_kb is 512: QEMU's MDTS 7 (4 KiB << 7)" "got: ${kb:-nothing} (the block layer's default is 127: 255 sectors)"
fi
# A 512 KiB O_DIRECT read at 16 MiB (block 0x8000): QEMU traces each Read
# with its block count and bytes.
dd if="$DEV" of=/dev/null bs=512K count=1 skip=32 iflag=direct 2>/dev/null
reads=$(nvme_trace_since "$t0" | sed -nE 's/.*pci_nvme_read .* count ([0-9]+) lba 0x8000$/\1/p' | xargs)
if [ "$reads" = 524288 ]; then
	pass "a 512 KiB O_DIRECT read is one NVMe Read of 524288 bytes"
else
	fail "a 512 KiB O_DIRECT read is one NVMe Read of 524288 bytes" "QEMU traced Reads of: ${reads:-none} bytes"
fi

# ---- 2. the volatile write cache ------------------------------------------------
hint "FullDisk::write_cache: keep the cache (no write_through) and tell the block layer (Limits::write_cache: BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA)"
expect_dmesg "Identify Controller's VWC: QEMU's controller has a volatile write cache" \
	"^rnvme $D0: the controller has a volatile write cache"
wc=$(cat "$Q/write_cache" 2>/dev/null) fua=$(cat "$Q/fua" 2>/dev/null)
if [ "$wc" = "write back" ] && [ "$fua" = 1 ]; then
	pass "the block layer knows the write cache: write_cache says \"write back\", fua 1"
else
	fail "the block layer knows the write cache: write_cache says \"write back\", fua 1" "got: write_cache \"$wc\", fua \"$fua\""
fi
t1=$(nvme_trace_size)
dd if=/dev/urandom of="$DEV" bs=4k count=4 seek=6144 oflag=direct conv=fsync 2>/dev/null
flushes=$(nvme_trace_since "$t1" | grep -c "pci_nvme_io_cmd .*opc 0x0 ")
if [ "$flushes" -ge 1 ]; then
	pass "fsync reaches the controller as a Flush ($flushes traced)"
else
	fail "fsync reaches the controller as a Flush" "QEMU traced no Flush (opcode 0x0) after dd conv=fsync"
fi
# O_DSYNC writes: the block layer sends them with REQ_FUA (counted at unbind).
dd if=/dev/urandom of="$DEV" bs=4k count=4 seek=6160 oflag=direct,dsync 2>/dev/null

# ---- 3. discard -------------------------------------------------------------------
hint "dsm: one 16-byte range per bio (context 0, length in blocks, starting block), NR 0's based in CDW10, AD (bit 2) in CDW11, PRP1 the buffer"
expect_dmesg "Identify Controller's ONCS and Namespace's DLFEAT: QEMU's controller deallocates, and a discarded block reads as zeroes" \
	"^rnvme $D0: the controller .* deallocates \(a discarded block reads as zeroes\)"
dd if=/dev/urandom of="$DEV" bs=1M count=1 seek=20 oflag=direct 2>/dev/null
t2=$(nvme_trace_size)
if check "blkdiscard of 1 MiB at 20 MiB" within 60 blkdiscard -o 20M -l 1M "$DEV"; then
	dsm=$(nvme_trace_since "$t2" | grep -oE "pci_nvme_dsm nr [0-9]+ attr 0x[0-9a-f]+" | sed 's/pci_nvme_dsm //' | xargs)
	dealloc=$(nvme_trace_since "$t2" | grep -oE "pci_nvme_dsm_deallocate slba [0-9]+ nlb [0-9]+" | sed 's/pci_nvme_dsm_deallocate //' | xargs)
	if [ "$dsm" = "nr 1 attr 0x4" ] && [ "$dealloc" = "slba 40960 nlb 2048" ]; then
		pass "it is one Dataset Management (1 range, Deallocate) of blocks 40960 to 43007"
	else
		fail "it is one Dataset Management (1 range, Deallocate) of blocks 40960 to 43007" \
			"QEMU traced: Dataset Management: ${dsm:-none}; deallocated: ${dealloc:-none}"
	fi
fi
if cmp -s -n 1048576 <(dd if="$DEV" bs=1M count=1 skip=20 iflag=direct 2>/dev/null) /dev/zero; then
	pass "the discarded blocks read back as zeroes (DLFEAT 001b)"
else
	fail "the discarded blocks read back as zeroes (DLFEAT 001b)" "the random data written there is still there: no deallocation reached QEMU"
fi
# Three ranges in one request: 64 KiB at 24 MiB, 24.25 MiB and 24.5 MiB,
# discarded by three io_uring commands submitted at once (discards.py): the
# block layer merges them into one request, each bio its own range.
dd if=/dev/urandom of="$DEV" bs=64k count=16 seek=384 oflag=direct 2>/dev/null
# gaps: the 64 KiB blocks between and after the ranges, as they are now.
gaps() { for b in 385 386 387 389 390 391 393 394 395; do dd if="$DEV" bs=64k count=1 skip=$b iflag=direct 2>/dev/null | md5sum; done; }
before=$(gaps)
t3=$(nvme_trace_size)
M=$((1 << 20))
is_ok "three discards of 64 KiB submitted at once (io_uring)" python3 "$HERE/discards.py" "$DEV" \
	$((24 * M)):65536 $((24 * M + M / 4)):65536 $((24 * M + M / 2)):65536
dsm=$(nvme_trace_since "$t3" | grep -oE "pci_nvme_dsm nr [0-9]+ attr 0x[0-9a-f]+" | sed 's/pci_nvme_dsm //' | xargs)
dealloc=$(nvme_trace_since "$t3" | grep -oE "pci_nvme_dsm_deallocate slba [0-9]+ nlb [0-9]+" | sed 's/pci_nvme_dsm_deallocate //' | sort | xargs)
want="slba 49152 nlb 128 slba 49664 nlb 128 slba 50176 nlb 128"
if [ "$dsm" = "nr 3 attr 0x4" ] && [ "$dealloc" = "$want" ]; then
	pass "they are one Dataset Management of 3 ranges, each its bio's 128 blocks"
else
	fail "they are one Dataset Management of 3 ranges, each its bio's 128 blocks" \
		"QEMU traced: Dataset Management: ${dsm:-none}" "deallocated: ${dealloc:-none}" "expected: $want"
fi
zero=1
for b in 384 388 392; do
	cmp -s -n 65536 <(dd if="$DEV" bs=64k count=1 skip=$b iflag=direct 2>/dev/null) /dev/zero || zero=0
done
if [ $zero = 1 ] && [ "$(gaps)" = "$before" ]; then
	pass "the 3 ranges read back as zeroes, the blocks between and after them as written"
else
	fail "the 3 ranges read back as zeroes, the blocks between and after them as written" "the data there is not what a discard of exactly those ranges leaves"
fi
# ext4, mounted with online discard: removed files are discarded, fstrim
# discards the free space, and the files kept stay as they were.
mkdir -p "$MNT"
if check "mkfs.ext4 and mount -o discard on $DEV" within 120 sh -c "mkfs.ext4 -q -F -E nodiscard $DEV && mount -o discard $DEV $MNT"; then
	for f in a b c d e; do dd if=/dev/urandom of="$MNT/$f" bs=64k count=4 2>/dev/null; done
	sync
	sums=$(cd "$MNT" && md5sum b d)
	rm "$MNT/a" "$MNT/c" "$MNT/e"
	sync
	out=$(within 60 fstrim -v "$MNT" 2>&1)
	if [[ "$out" == *" trimmed"* && "$out" != *"(0 bytes)"* ]]; then
		pass "fstrim on the ext4 ($out)"
	else
		fail "fstrim on the ext4" "got: $out"
	fi
	umount "$MNT"
	mount "$DEV" "$MNT" 2>/dev/null
	if [ "$(cd "$MNT" 2>/dev/null && md5sum b d)" = "$sums" ]; then
		pass "the files kept are intact after the discards"
	else
		fail "the files kept are intact after the discards" "md5sum before: $sums" "after: $(cd "$MNT" && md5sum b d 2>&1)"
	fi
	umount "$MNT"
fi
qemu_trace false

# ---- 4. the disk under its controller ---------------------------------------
hint "queue_limits::set_parent: the disk's device under the PCI device's"
path=$(readlink -f "/sys/block/$DISK")
if [[ "$path" == /sys/devices/pci*/"$D0"/block/"$DISK" ]]; then
	pass "/sys/block/$DISK is under its controller ($path)"
else
	fail "/sys/block/$DISK is under its controller (/sys/devices/pci.../$D0/block/$DISK)" "got: $path"
fi

# ---- fio through the new limits, flushes among the writes ---------------------
hint "the bounce buffers, PRP lists and zero-copy pieces hold requests of max_hw_sectors"
fio_verify "fio randwrite + verify, 4 KiB to 512 KiB at QD8, buffers 512 bytes into a page, fdatasync every 8 writes" \
	--bsrange=4k-512k --iodepth=8 --iomem_align=512 --fdatasync=8
hint "FullDisk counts the Flushes, FUA writes and discards it sends"
mark
echo "$D0" >"$DRV/unbind"
read -r fl fw dc < <(dmesg_since_mark | sed -nE 's/^rnvme: ([0-9]+) flushes, ([0-9]+) FUA writes, ([0-9]+) discards.*/\1 \2 \3/p' | tail -1)
if [ "${fl:-0}" -gt 0 ] && [ "${fw:-0}" -gt 0 ] && [ "${dc:-0}" -gt 0 ]; then
	pass "Flushes, FUA writes and discards sent ($fl, $fw, $dc)"
else
	fail "Flushes, FUA writes and discards sent" "flushes: ${fl:-?}, FUA writes: ${fw:-?}, discards: ${dc:-?}" "$(excerpt)"
fi
unload
mark
load zero_copy=0 || { finish; exit; }
DEV=/dev/$(disk_of "$D0")
hint "each tag's bounce buffer holds the largest request (Speedups::BOUNCE_SIZE)"
fio_verify "zero_copy=0: fio randwrite + verify, 4 KiB to 512 KiB at QD8 (through the bounce buffers)" \
	--bsrange=4k-512k --iodepth=8
unload
bind_only
finish
