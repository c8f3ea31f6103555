#!/bin/bash
# Stage 13 test (runs in the VM): rnvme is a disk. Three controllers:
#   rkw-d0  QEMU's defaults (MDTS 512 KiB: no request needs splitting)
#   rkw-m2  mdts=2: at most 16 KiB per command (stage 14 splits requests
#           for it; here only its disk line is checked)
#   rkw-b4  4096-byte logical blocks: the block layer's 512-byte sectors
#           are not the namespace's blocks (a request's sector must be
#           converted; on 512-byte blocks forgetting it goes unnoticed)
# Checked: both disks appear with the namespace's size and block size; the
# pattern the host wrote before boot reads back bit for bit; fio's
# randwrite + crc32c verify (4k at QD1 and QD32, 4k-1m at QD32, one job
# per vCPU pinned to it, so every hardware queue carries I/O); mkfs.ext4,
# files written, e2fsck -fn clean, read back; every I/O queue's doorbells as
# ring arithmetic predicts; the pattern and fio's verify on rkw-b4's 4 KiB
# blocks; a read the controller fails (past the namespace's end) fails in
# user space too (stage 14 checks the log line and the split transfers);
# reloads; no splat, no leak, no protocol error in QEMU's trace. After the
# VM, after-vm.sh finds the guest's last write in the image file.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

TREE=${1:-solutions}
HERE=$(dirname "$0")
CPUS=$(nproc) DEPTH=32 TAGS=31 NSZE=131072
EXERCISE=4 # commands the probe sends through each I/O queue with io_reads=2
MNT=/tmp/rkw09
mapfile -t BDFS < <(nvme_bdfs)
[ ${#BDFS[@]} -eq 3 ] || {
	fail "the VM has three NVMe controllers" "found: ${BDFS[*]}"
	finish
	exit
}

# fio_verify DESC DEV FIO_ARGS...: a randwrite with crc32c verification,
# one job per vCPU, pinned to it, each in its own 8 MiB region from 8 MiB.
fio_verify() {
	local desc=$1 dev=$2 out rc=0
	shift 2
	out=$(fio --name=rkw --filename="$dev" --ioengine=libaio --direct=1 --rw=randwrite \
		--verify=crc32c --verify_fatal=1 --numjobs="$CPUS" --cpus_allowed="0-$((CPUS - 1))" \
		--cpus_allowed_policy=split --offset=8M --offset_increment=8M --group_reporting "$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out" && ! grep -qiE "verify.*(bad|fail)|crc32c" <<<"$out"; then
		pass "$desc ($(grep -oE 'issued rwts: total=[0-9]+,[0-9]+' <<<"$out" | sed 's/issued rwts: total=/reads,writes /'))"
	else
		fail "$desc" "fio exited with $rc:" "$(grep -vE '^ +(lat|clat|slat|bw|iops|cpu|IO depths|submit|complete|latency|issued|clat percentiles|\|)' <<<"$out" | tail -15)" "$(excerpt 10)"
	fi
}

# queue_counts BDF: "qid completions" of each I/O queue, from unbind's log.
queue_counts() { dmesg_since_mark | sed -nE "s/^rnvme $1: queue ([0-9]+): ([0-9]+) completions came by interrupt/\1 \2/p"; }

# ---- both controllers at once ---------------------------------------------------
hint "create: a TagSet of one hardware queue per I/O queue, then GenDiskBuilder with the namespace's block size and size"
mark
load io_reads=2 || { finish; exit; }
declare -A DISK
map_serials
for s in "${!BDF_OF[@]}"; do DISK[$s]=$(disk_of "${BDF_OF[$s]}"); done
D0=${BDF_OF[rkw-d0]:-none} M2=${BDF_OF[rkw-m2]:-none} B4=${BDF_OF[rkw-b4]:-none}
disks=$(for s in rkw-d0 rkw-m2 rkw-b4; do [ -z "${DISK[$s]:-}" ] || echo "${DISK[$s]}"; done | sort -u | wc -l)
if [ "$disks" = 3 ]; then
	pass "one disk per controller: ${DISK[rkw-d0]} (rkw-d0), ${DISK[rkw-m2]} (rkw-m2) and ${DISK[rkw-b4]} (rkw-b4)"
else
	fail "one disk per controller" "disks: rkw-d0 ${DISK[rkw-d0]:-none}, rkw-m2 ${DISK[rkw-m2]:-none}, rkw-b4 ${DISK[rkw-b4]:-none}" "$(excerpt)"
fi
expect_dmesg "rkw-d0: $NSZE blocks of 512 bytes, $CPUS hardware queues of $TAGS tags, 128 KiB per command (the bounce buffer; MDTS is 512 KiB)" \
	"^rnvme $D0: disk rnvme[0-9]+n1: $NSZE blocks of 512 bytes, $CPUS hardware queues of $TAGS tags, at most 131072 bytes per command"
expect_dmesg "rkw-d0: the controller's volatile write cache is off (the block layer cannot be told it has one)" \
	"^rnvme $D0: volatile write cache off"
expect_dmesg "rkw-m2: 16 KiB per command (its MDTS)" \
	"^rnvme $M2: disk rnvme[0-9]+n1: $NSZE blocks of 512 bytes, $CPUS hardware queues of $TAGS tags, at most 16384 bytes per command"
expect_dmesg "rkw-b4: 4096-byte blocks, an eighth as many" \
	"^rnvme $B4: disk rnvme[0-9]+n1: $((NSZE / 8)) blocks of 4096 bytes, $CPUS hardware queues of $TAGS tags, at most 131072 bytes per command"
for s in rkw-d0:512 rkw-m2:512 rkw-b4:4096; do
	bs=${s#*:} s=${s%:*}
	dev=/dev/${DISK[$s]:-none}
	size=$(blockdev --getsize64 "$dev" 2>&1) ss=$(blockdev --getss "$dev" 2>&1)
	if [ "$size" = $((NSZE * 512)) ] && [ "$ss" = "$bs" ]; then
		pass "$s: $dev has 64 MiB in $bs-byte logical blocks"
	else
		fail "$s: $dev has 64 MiB in $bs-byte logical blocks" "blockdev says: size $size, logical block size $ss"
	fi
done
unload

# ---- rkw-d0 alone: data, file system, every queue, doorbells ---------------------
bind_only "$D0"
mark
doorbell_mark
load io_reads=2 || { finish; exit; }
DEV=/dev/$(disk_of "$D0")
hint "queue_rq: the tag's buffer claimed, the opcode, the length checked, the request's sector converted to blocks, then issue_batched on the request's hardware queue"
# The gate: a disk that cannot read what the host wrote fails the checks
# below anyway, slowly (every I/O error is logged, every tool retries).
out=$(python3 "$HERE/blocks.py" pattern "$DEV" 4096 2>&1)
if [[ "$out" == ok* ]]; then
	pass "the host's pattern reads back bit for bit (4 KiB reads) ($out)"
	DATA=1
else
	fail "the host's pattern reads back bit for bit (4 KiB reads)" "$out" "$(excerpt 10)"
	DATA=0
fi
# not_run WHAT: the checks of WHAT fail without running.
not_run() { fail "$1 (not run: the disk does not read the host's pattern yet)"; }
if [ $DATA = 1 ]; then
	is_ok "the host's pattern reads back bit for bit (1 MiB reads: 128 KiB requests, PRP lists)" python3 "$HERE/blocks.py" pattern "$DEV" 1048576
	hint "a wrong PRP list or a piece of the bounce buffer copied to the wrong place shows as a verify error"
	fio_verify "fio randwrite + verify, 4 KiB at QD1, $CPUS jobs" "$DEV" --bs=4k --iodepth=1 --size=1M
	fio_verify "fio randwrite + verify, 4 KiB at QD32, $CPUS jobs" "$DEV" --bs=4k --iodepth=32 --size=2M
	fio_verify "fio randwrite + verify, 4 KiB to 1 MiB at QD32, $CPUS jobs" "$DEV" --bsrange=4k-1m --iodepth=32 --size=4M

	hint "every request must end exactly once, with its status; e2fsck finds what was lost"
	mkdir -p "$MNT"
	if check "mkfs.ext4 on $DEV" mkfs.ext4 -q -F -E nodiscard "$DEV" && check "mount it" mount -t ext4 "$DEV" "$MNT"; then
		head -c 3M /dev/urandom >"$MNT/random.bin"
		cp -r /usr/share/doc/fio "$MNT/" 2>/dev/null
		(cd "$MNT" && find . -type f -exec sha256sum {} + >/tmp/rkw09.sums)
		check "umount (the block layer writes back)" umount "$MNT"
		check "e2fsck -fn finds the file system clean" e2fsck -fn "$DEV"
		if mount -o ro -t ext4 "$DEV" "$MNT"; then
			check "files read back after a remount ($(wc -l </tmp/rkw09.sums) files, sha256)" sh -c "cd $MNT && sha256sum --quiet -c /tmp/rkw09.sums"
			umount "$MNT"
		else
			fail "remount read-only" "$(excerpt)"
		fi
	fi
	# The probe's own check reads the pattern, which mkfs overwrote: put it back.
	check "restore the host's pattern over the file system" \
		sh -c "python3 $HERE/blocks.py pattern-bytes | dd of=$DEV bs=1M oflag=direct status=none"
else
	not_run "1 MiB reads, fio verify, mkfs.ext4, mount, e2fsck"
fi
# The stage's last write, found in the image after the VM exits (after-vm.sh).
offset=60
[ "$TREE" = solutions ] || offset=56
check "write 1 MiB at $offset MiB for the host to find after the VM" \
	sh -c "python3 $HERE/blocks.py stamp $TREE | dd of=$DEV bs=1M seek=$offset oflag=direct status=none"
mark
unload
hint "queue_rq runs on the submitting CPU's hardware queue: request::hw_queue(rq) picks the I/O queue"
COUNTS=$(queue_counts "$D0")
while read -r q n; do
	[ -n "$q" ] || continue # no report at all: the check after the loop fails
	if [ "$n" -gt $((EXERCISE + 100)) ]; then
		pass "I/O queue $q carried the I/O of its CPU ($n completions)"
	else
		fail "I/O queue $q carried the I/O of its CPU" "$n completions: only the probe's $EXERCISE and a few more"
	fi
	hint "every command: SQ tail doorbell = the slot after it; every completion reaped: CQ head doorbell = the slot after the last"
	expect_doorbells "I/O queue $q doorbells as ring arithmetic predicts ($n commands)" "$q" $DEPTH "$n" "$n"
done <<<"$COUNTS"
[ "$(grep -c . <<<"$COUNTS")" = "$CPUS" ] || fail "rnvme reports each of the $CPUS I/O queues at unbind" "$(excerpt)"

if [ $DATA = 1 ]; then
	# ---- rkw-b4 alone: 4096-byte blocks -------------------------------------------------
	bind_only "$B4"
	mark
	RKW_TRACE_START=$(nvme_trace_size)
	load io_reads=2 || { finish; exit; }
	DEV=/dev/$(disk_of "$B4")
	hint "queue_rq: the block layer counts 512-byte sectors, the command counts the namespace's blocks (lba_shift): convert the request's sector and length"
	is_ok "4 KiB blocks: the pattern reads back in 4 KiB reads" python3 "$HERE/blocks.py" pattern "$DEV" 4096
	is_ok "4 KiB blocks: the pattern reads back in 1 MiB reads" python3 "$HERE/blocks.py" pattern "$DEV" 1048576
	fio_verify "4 KiB blocks: fio randwrite + verify, 4 KiB to 1 MiB at QD32" "$DEV" --bsrange=4k-1m --iodepth=32 --size=2M
	nvme_trace_is_clean "4 KiB blocks: QEMU's model reported no error"
	unload

	# ---- a command the controller fails ----------------------------------------------
	bind_only "$D0"
	mark
	load io_reads=2 fault=3 || { finish; exit; }
	RKW_TRACE_START=$(nvme_trace_size)
	DEV=/dev/$(disk_of "$D0")
	hint "a failed status ends the request with an error (finish_whole, given: the errno of the status)"
	check_fails "a read past the namespace's end fails in user space (fault=3: the disk claims 8 more blocks)" \
		dd if="$DEV" of=/dev/null bs=512 skip=$NSZE count=1 iflag=direct status=none
	expect_dmesg "the block layer reports a target error for that sector" "critical target error, dev rnvme[0-9]+n1, sector $NSZE"
	check "the namespace's last block still reads" dd if="$DEV" of=/dev/null bs=512 skip=$((NSZE - 1)) count=1 iflag=direct status=none
	expect_nvme_trace "QEMU's model says why: an LBA range error (and nothing else)" "pci_nvme_err_(invalid_lba_range|req_status .* status 0x4080 )"
	unload
else
	not_run "rkw-b4: 4096-byte blocks"
	not_run "fault=3: a read the controller fails"
fi

bind_only
reload_twice io_reads=2
finish
