#!/bin/bash
# Stage 14 test (runs in the VM): stage 13's disk, its requests in pieces.
# The same boot and controllers as stage 13 (BOOT=blk-mq):
#   rkw-d0  QEMU's defaults (MDTS 512 KiB)
#   rkw-m2  mdts=2: at most 16 KiB per command, so a request of 255 sectors
#           goes in eight pieces
#   rkw-b4  4096-byte logical blocks
# Checked: the disks' numbers (each controller its own, and a number free
# again once its disk is gone); unbind deletes each disk before its I/O
# queues; on rkw-m2, the host's pattern reads back in 1 MiB reads and fio's
# randwrite + crc32c verify passes with requests up to 1 MiB, with no
# command larger than the MDTS in QEMU's trace; a read the controller fails
# (past the namespace's end) fails in user space and rnvme logs the
# controller's status; reloads; no splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

HERE=$(dirname "$0")
# Stage 13's known data on the disks (the host's pattern in the first MiB).
BLOCKS=$HERE/../13-blk-mq/blocks.py
CPUS=$(nproc) NSZE=131072
mapfile -t BDFS < <(nvme_bdfs)
[ ${#BDFS[@]} -eq 3 ] || {
	fail "the VM has three NVMe controllers" "found: ${BDFS[*]}"
	finish
	exit
}

# ---- all three: the disks' numbers, and unbind's order ---------------------------
hint "DiskId::claim takes the lowest free number; its drop frees it"
mark
load || { finish; exit; }
declare -A DISK
map_serials
for s in "${!BDF_OF[@]}"; do DISK[$s]=$(disk_of "${BDF_OF[$s]}"); done
D0=${BDF_OF[rkw-d0]:-none} M2=${BDF_OF[rkw-m2]:-none}
numbers=$(for s in rkw-d0 rkw-m2 rkw-b4; do echo "${DISK[$s]:-}"; done | grep -c '^rnvme[0-2]n1$')
distinct=$(for s in rkw-d0 rkw-m2 rkw-b4; do echo "${DISK[$s]:-}"; done | sort -u | grep -c .)
if [ "$numbers" = 3 ] && [ "$distinct" = 3 ]; then
	pass "three controllers, three disk numbers: ${DISK[rkw-d0]}, ${DISK[rkw-m2]}, ${DISK[rkw-b4]}"
else
	fail "three controllers, three disk numbers (rnvme0n1 to rnvme2n1)" "disks: rkw-d0 ${DISK[rkw-d0]:-none}, rkw-m2 ${DISK[rkw-m2]:-none}, rkw-b4 ${DISK[rkw-b4]:-none}" "$(excerpt)"
fi
mark
unload
hint "unbind: disk::delete first (del_gendisk waits for the requests in flight), then io_queues::stop"
for b in "${BDFS[@]}"; do
	order=$(dmesg_since_mark | sed -nE "s/^rnvme $b: (disk rnvme[0-9]+n1 deleted|deleted [0-9]+ I\/O queue pairs)$/\1/p" | tr '\n' ';')
	if [[ "$order" =~ ^disk\ rnvme[0-9]n1\ deleted\;deleted\ [0-9]+\ I/O\ queue\ pairs\;$ ]]; then
		pass "unbind of $b deletes its disk before its I/O queues"
	else
		fail "unbind of $b deletes its disk before its I/O queues" "the log says, in order: $order" "$(excerpt)"
	fi
done

# ---- rkw-m2 alone: transfers larger than MDTS go in pieces ------------------------
bind_only "$M2"
mark
RKW_TRACE_START=$(nvme_trace_size)
load || { finish; exit; }
DEV=/dev/$(disk_of "$M2")
if [ "$DEV" = /dev/rnvme0n1 ]; then
	pass "rkw-m2 bound alone gets the number the others gave back: $DEV"
else
	fail "rkw-m2 bound alone gets the number the others gave back: /dev/rnvme0n1" "its disk: $DEV" "$(excerpt)"
fi
hint "finish: count the piece as done, then issue next_command on the same queue and identifier; only when there is none, copy out and end"
out=$(python3 "$BLOCKS" pattern "$DEV" 1048576 2>&1)
if [[ "$out" == ok* ]]; then
	pass "MDTS 16 KiB: the pattern reads back in 1 MiB reads (255-sector requests in 8 pieces) ($out)"
	DATA=1
else
	fail "MDTS 16 KiB: the pattern reads back in 1 MiB reads (255-sector requests in 8 pieces)" "$out" "$(excerpt 10)"
	DATA=0
fi
if [ $DATA = 1 ]; then
	is_ok "MDTS 16 KiB: the pattern reads back in 4 KiB reads" python3 "$BLOCKS" pattern "$DEV" 4096
	out=$(fio --name=rkw --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite \
		--verify=crc32c --verify_fatal=1 --numjobs="$CPUS" --cpus_allowed="0-$((CPUS - 1))" \
		--cpus_allowed_policy=split --offset=8M --offset_increment=8M --group_reporting \
		--bsrange=4k-1m --iodepth=32 --size=2M 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out" && ! grep -qiE "verify.*(bad|fail)|crc32c" <<<"$out"; then
		pass "MDTS 16 KiB: fio randwrite + verify, 4 KiB to 1 MiB at QD32"
	else
		fail "MDTS 16 KiB: fio randwrite + verify, 4 KiB to 1 MiB at QD32" "fio exited with $rc:" "$(tail -15 <<<"$out")" "$(excerpt 10)"
	fi
	if new_nvme_trace | grep -q pci_nvme_err_mdts; then
		fail "QEMU saw no command larger than its MDTS" "$(new_nvme_trace | grep pci_nvme_err_mdts | head -3)"
	else
		pass "QEMU saw no command larger than its MDTS"
	fi
else
	fail "MDTS 16 KiB: 4 KiB reads, fio verify (not run: the disk does not read the host's pattern yet)"
fi
unload

# ---- a command the controller fails --------------------------------------------------
bind_only "$D0"
mark
load fault=3 || { finish; exit; }
RKW_TRACE_START=$(nvme_trace_size)
DEV=/dev/$(disk_of "$D0")
hint "finish: a failed status ends the request with to_errno's error, never Ok, and says so with pr_err!"
check_fails "a read past the namespace's end fails in user space (fault=3: the disk claims 8 more blocks)" \
	dd if="$DEV" of=/dev/null bs=512 skip=$NSZE count=1 iflag=direct status=none
expect_dmesg "rnvme logs the controller's status: LBA Out of Range (SCT 0, SC 0x80), a target error" "^rnvme: queue [0-9]+ tag [0-9]+: 0x02 at block $NSZE failed: Target \(SCT 0, SC 0x80\)"
expect_dmesg "the block layer reports a target error for that sector" "critical target error, dev rnvme[0-9]+n1, sector $NSZE"
check "the namespace's last block still reads" dd if="$DEV" of=/dev/null bs=512 skip=$((NSZE - 1)) count=1 iflag=direct status=none
expect_nvme_trace "QEMU's model says why: an LBA range error (and nothing else)" "pci_nvme_err_(invalid_lba_range|req_status .* status 0x4080 )"
unload

bind_only
reload_twice
finish
