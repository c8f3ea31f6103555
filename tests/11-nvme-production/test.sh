#!/bin/bash
# Stage 11 test (runs in the VM): rnvme for production. Two controllers:
#   rkw-d0    QEMU's defaults
#   rkw-slow  every I/O takes 4 s in QEMU (null-co latency): with
#             io_timeout_ms=1000 the driver's watchdog must fire
# Checked: the nvme-cli nodes and their ioctls (ioctls.py: good commands,
# and malformed ones refused with EFAULT/EINVAL/EACCES/ENOTTY before the
# controller sees them); nvme-cli's id-ctrl, id-ns, smart-log, get-feature
# and read/write give the same fields on rnvme as on the C driver, on the
# same controller in the same VM; removal under fio at QD32 three ways
# (sysfs unbind, sysfs remove + rescan, QEMU hot-unplug through QMP): fio
# sees errors and exits, nothing hangs, and binding again gives a disk whose
# data verifies; rmmod with the disk mounted; a request the controller
# holds back times out (Abort, then the controller is given up, the request
# fails with an error, and later ones fail at once); no splat, no leak.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"
. "$(dirname "$0")/../qmp.sh"

TREE=${1:-solutions}
HERE=$(dirname "$0")
CPUS=$(nproc) NSZE=131072
MNT=/tmp/rkw10
DRV=/sys/bus/pci/drivers/$MODULE

# disk_of BDF: the disk rnvme made for BDF since the mark, once its node
# exists (devtmpfs creates it shortly after, in a thread of its own).
disk_of() {
	local d i
	for ((i = 0; i < 100; i++)); do
		d=$(dmesg_since_mark | sed -nE "s/^rnvme $1: disk (rnvme[0-9]+n1): .*/\1/p" | tail -1)
		[ -n "$d" ] && [ -b "/dev/$d" ] && break
		sleep 0.1
	done
	echo "$d"
}

# fio_load DEV SECONDS OUT: random reads and writes at QD32 on every vCPU, in
# the background, in the second 8 MiB of the disk; its output goes to OUT.
# It runs far longer than the test waits for it: it can only end early on
# an error (once the disk is gone, a write finds no space: ENOSPC, or EIO).
fio_load() {
	local disk i n0 n
	disk=$(basename "$1")
	n0=$(ios_done "$disk")
	fio --name=load --filename="$1" --ioengine=libaio --direct=1 --rw=randrw --bs=4k \
		--iodepth=32 --numjobs="$CPUS" --offset=8M --size=8M --time_based --runtime="$2" \
		--group_reporting >"$3" 2>&1 &
	FIO_PID=$!
	# Under load means fio's I/O flows: wait for 500 requests to have ended
	# (fio takes seconds to start on the debug kernel).
	for ((i = 0; i < 600; i++)); do
		n=$(ios_done "$disk")
		[ $((n - n0)) -ge 500 ] && return 0
		sleep 0.1
	done
	fail "fio's I/O flows on $disk before the removal" "$((n - n0)) requests ended in 60 s" "$(tail -5 "$3")"
}

# ios_done DISK: reads and writes the disk has ended so far.
ios_done() { awk '{ print $1 + $5 }' "/sys/block/$1/stat" 2>/dev/null || echo 0; }

# fio_ends DESC SECONDS: the background fio exits within SECONDS, with errors.
fio_ends() {
	local i rc
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$FIO_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$FIO_PID" 2>/dev/null; then
		fail "$1" "fio still runs $2 s after the removal (stuck requests, or I/O that still succeeds)" "$(excerpt)"
		kill -9 "$FIO_PID" 2>/dev/null
		return 1
	fi
	wait "$FIO_PID"
	rc=$?
	if [ $rc -ne 0 ] || grep -qiE "error|err=[ ]*[1-9]" "$FIO_OUT"; then
		pass "$1 (fio exited with $rc: $(grep -oiE '(io_u error|err=[ ]*-?[0-9]+|Input/output error|No such device)[^,]*' "$FIO_OUT" | sort -u | head -2 | tr '\n' ' '))"
	else
		fail "$1" "fio exited with 0 and no error: was the disk removed under it?" "$(tail -5 "$FIO_OUT")"
	fi
}

# Data that must survive every removal: 4 MiB at 32 MiB, written once with
# crc32c verification headers, verified after each re-bind.
KEEP_ARGS=(--name=keep --ioengine=libaio --direct=1 --bs=64k --iodepth=8 --offset=32M --size=4M
	--rw=write --verify=crc32c --verify_fatal=1)
keep_write() { fio --filename="$1" "${KEEP_ARGS[@]}" --do_verify=0 >/tmp/rkw10-keep.out 2>&1; }
keep_verify() {
	local desc=$1 dev=$2 out rc=0
	out=$(fio --filename="$dev" "${KEEP_ARGS[@]}" --verify_only 2>&1) || rc=$?
	if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out"; then
		pass "$desc"
	else
		fail "$desc" "fio --verify_only exited with $rc:" "$(grep -iE 'verify|err|bad' <<<"$out" | head -8)" "$(excerpt 10)"
	fi
}

# wait_gone BDF SECONDS: the PCI device has left the guest.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "/sys/bus/pci/devices/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# bound_to BDF: rnvme is bound to BDF.
# ioctl_checks PREFIX ARGS...: ioctls.py ARGS, each of its lines a check.
ioctl_checks() {
	local prefix=$1 out rc status what
	shift
	out=$(python3 "$HERE/ioctls.py" "$@" 2>&1)
	rc=$?
	while read -r status what; do
		case "$status" in
		ok) pass "$prefix $what" ;;
		not-ok) fail "$prefix $what" ;;
		esac
	done <<<"$out"
	[ $rc -eq 0 ] || grep -q '^not-ok' <<<"$out" || fail "ioctls.py $* ran to its end" "exit status $rc:" "$(tail -5 <<<"$out")"
}

bound_to() { [ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = "$MODULE" ]; }

# bound_within BDF SECONDS: rnvme is bound to BDF within SECONDS.
bound_within() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = "$MODULE" ] && return 0
		sleep 0.1
	done
	return 1
}

D0=$(qmp_pci_bdf rkw-d0) SLOW=$(qmp_pci_bdf rkw-slow)
if [ -z "$D0" ] || [ -z "$SLOW" ]; then
	fail "QEMU names both controllers (rkw-d0 and rkw-slow) over QMP" "rkw-d0: ${D0:-none}, rkw-slow: ${SLOW:-none}"
	finish
	exit
fi

# ---- rkw-d0: the nodes, their ioctls, nvme-cli ------------------------------------
bind_only "$D0"
mark
load || { finish; exit; }
DISK=$(disk_of "$D0")
DEV=/dev/${DISK:-none}
N=${DISK#rnvme}
N=${N%n1}
CTRL=/dev/rnvme$N NS=/dev/rng${N}n1
hint "Nodes::new registers /dev/rnvmeX and /dev/rngXn1 after the disk"
if [ -b "$DEV" ] && [ -c "$CTRL" ] && [ -c "$NS" ]; then
	pass "rkw-d0: the disk $DEV and the nvme-cli nodes $CTRL and $NS"
else
	fail "rkw-d0: the disk $DEV and the nvme-cli nodes $CTRL and $NS" "$(ls -l /dev/rnvme* /dev/rng* 2>&1)" "$(excerpt)"
fi
hint "passthru::check: which commands may pass, and what data_len each must have"
RKW_TRACE_START=$(nvme_trace_lines)
ioctl_checks "ioctl:" "$CTRL" "$NS"
python3 "$HERE/nvme_cli.py" record "$CTRL" "$NS" /tmp/rkw10-rnvme.json >/tmp/rkw10-rnvme.log 2>&1 ||
	fail "nvme-cli works on $CTRL and $NS" "$(tail -5 /tmp/rkw10-rnvme.log)"
# The ioctls above make QEMU's model log the errors they provoke on
# purpose (a read past the end, unknown opcodes): the trace check at the
# end looks at what comes after them.
RKW_TRACE_START=$(nvme_trace_lines)

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
t0=$(nvme_trace_lines)
out=$(fio --name=batch --filename="$DEV" --ioengine=libaio --direct=1 --rw=randread --bs=4k --iodepth=32 \
	--iodepth_batch_submit=32 --iodepth_batch_complete_min=16 --numjobs=1 --cpus_allowed=0 --offset=8M \
	--size=8M --io_size=8M 2>&1)
ios=$(grep -oE 'issued rwts: total=[0-9]+' <<<"$out" | grep -oE '[0-9]+$')
rings=$(tail -n +"$((t0 + 1))" "$RKW_NVME_TRACE" 2>/dev/null | grep -cE 'pci_nvme_mmio_doorbell_sq sqid [1-9]')
if [ "${ios:-0}" -gt 0 ] && [ $((rings * 4)) -lt $((ios * 3)) ]; then
	pass "batches ring once: $rings SQ doorbell writes for $ios reads submitted 32 at a time"
else
	fail "batches ring once" "$rings SQ doorbell writes for ${ios:-?} reads submitted 32 at a time (one per read means no batching)" "$(tail -3 <<<"$out")"
fi
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
fio_verify "zero_copy=0: fio randwrite + verify, 4 KiB to 128 KiB at QD32 (bounce buffers, as stage 10)" "$DEV" --bsrange=4k-128k --iodepth=32
unload
read -r mapped sgl bounced < <(zero_copy_counts)
if [ "${mapped:-x}" = 0 ] && [ "${bounced:-0}" -gt 0 ]; then
	pass "zero_copy=0: no request zero copy ($bounced through a bounce buffer)"
else
	fail "zero_copy=0: no request zero copy" "zero copy: ${mapped:-?}, bounce buffer: ${bounced:-?}" "$(excerpt)"
fi
mark
load || { finish; exit; }
DEV=/dev/$(disk_of "$D0")

# ---- removal under load ------------------------------------------------------------
hint "unbind: delete the disk first (del_gendisk waits for the requests in flight), then the queues"
keep_write "$DEV" || fail "write the data that must survive removal" "$(tail -5 /tmp/rkw10-keep.out)"

# 1. sysfs unbind while fio runs.
FIO_OUT=/tmp/rkw10-fio1.out
fio_load "$DEV" 600 "$FIO_OUT"
mark
t0=$SECONDS
if timeout 120 sh -c "echo $D0 > $DRV/unbind"; then
	pass "unbind under fio (QD32 x $CPUS jobs) returns ($((SECONDS - t0)) s)"
else
	fail "unbind under fio (QD32 x $CPUS jobs) returns" "still in unbind after 120 s" "$(excerpt)"
fi
fio_ends "fio sees errors and exits after the unbind" 120
expect_dmesg "the disk was deleted, then the queues" "disk rnvme[0-9]+n1 deleted"
mark
echo "$D0" >"$DRV/bind" 2>/dev/null
DEV=/dev/$(disk_of "$D0")
keep_verify "bound again: the data written before the unbind verifies" "$DEV"

# 2. sysfs remove + rescan while fio runs.
FIO_OUT=/tmp/rkw10-fio2.out
fio_load "$DEV" 600 "$FIO_OUT"
mark
t0=$SECONDS
if timeout 120 sh -c "echo 1 > /sys/bus/pci/devices/$D0/remove"; then
	pass "PCI remove under fio returns ($((SECONDS - t0)) s)"
else
	fail "PCI remove under fio returns" "still in remove after 120 s" "$(excerpt)"
fi
fio_ends "fio sees errors and exits after the remove" 120
mark
echo 1 >/sys/bus/pci/rescan
if bound_within "$D0" 30; then
	pass "rescan: the controller comes back and rnvme binds it"
	DEV=/dev/$(disk_of "$D0")
	keep_verify "after remove + rescan: the data verifies" "$DEV"
else
	fail "rescan: the controller comes back and rnvme binds it" "$(ls /sys/bus/pci/devices)" "$(excerpt)"
fi

# 3. QEMU hot-unplug (device_del from the host, through QMP) while fio runs.
FIO_OUT=/tmp/rkw10-fio3.out
fio_load "$DEV" 600 "$FIO_OUT"
mark
t0=$SECONDS
if qmp_device_del rkw-d0 120 >/tmp/rkw10-qmp.out 2>&1 && wait_gone "$D0" 120; then
	pass "QEMU hot-unplug (device_del) under fio completes ($((SECONDS - t0)) s)"
else
	fail "QEMU hot-unplug (device_del) under fio completes" "$(tail -5 /tmp/rkw10-qmp.out)" "$(excerpt)"
fi
fio_ends "fio sees errors and exits after the hot-unplug" 120
mark
if qmp_device_add rkw-d0 >/tmp/rkw10-qmp.out 2>&1 && D0=$(qmp_pci_bdf rkw-d0) && [ -n "$D0" ] && bound_within "$D0" 60; then
	pass "re-plugged (device_add): rnvme binds the controller"
	DEV=/dev/$(disk_of "$D0")
	keep_verify "after the re-plug: the data verifies" "$DEV"
else
	fail "re-plugged (device_add): rnvme binds the controller" "$(tail -5 /tmp/rkw10-qmp.out)" "$(excerpt)"
fi

# ---- rmmod with the disk mounted ---------------------------------------------------
hint "the 7.3 gendisk has no owner: the module must not go while its disk is open (lingering.rs)"
mkdir -p "$MNT"
if mkfs.ext4 -q -F -E nodiscard "$DEV" && mount -t ext4 "$DEV" "$MNT" && echo kept >"$MNT/file" && sync; then
	mark
	rmmod "$MODULE" 2>/tmp/rkw10-rmmod.out &
	RMMOD_PID=$!
	sleep 3
	if kill -0 $RMMOD_PID 2>/dev/null; then
		pass "rmmod with the disk mounted waits (the module stays while the disk is open)"
	else
		fail "rmmod with the disk mounted waits (the module stays while the disk is open)" "rmmod returned: $(cat /tmp/rkw10-rmmod.out)" "$(excerpt)"
	fi
	expect_dmesg "rnvme says why" "rnvme[0-9]+n1 is still open \(mounted\?\): deleted, its I/O fails; rmmod waits until it is closed"
	check_fails "the mounted file system sees I/O errors" sh -c "echo more >$MNT/file2 && sync -f $MNT/file2"
	check "umount" umount "$MNT"
	for ((i = 0; i < 100; i++)); do
		kill -0 $RMMOD_PID 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 $RMMOD_PID 2>/dev/null && ! loaded; then
		pass "after the umount, rmmod finishes"
	else
		fail "after the umount, rmmod finishes" "$(excerpt)"
	fi
else
	fail "mkfs.ext4 + mount on $DEV" "$(excerpt)"
	umount "$MNT" 2>/dev/null
	unload
fi

# ---- the C driver on the same controller: nvme-cli compared -----------------------
if [ -s /tmp/rkw10-rnvme.json ] && modprobe nvme 2>/dev/null; then
	for ((i = 0; i < 100; i++)); do
		c=$(ls /sys/bus/pci/devices/"$D0"/nvme 2>/dev/null | head -1)
		[ -n "$c" ] && [ -c "/dev/$c" ] && [ -c "/dev/ng${c#nvme}n1" ] && break
		sleep 0.1
	done
	if [ -n "$c" ] && python3 "$HERE/nvme_cli.py" record "/dev/$c" "/dev/ng${c#nvme}n1" /tmp/rkw10-c.json >/tmp/rkw10-c.log 2>&1; then
		while read -r status what; do
			case "$status" in
			ok) pass "nvme-cli, rnvme vs C: $what" ;;
			not-ok) fail "nvme-cli, rnvme vs C: $what" ;;
			esac
		done < <(python3 "$HERE/nvme_cli.py" compare /tmp/rkw10-rnvme.json /tmp/rkw10-c.json 2>&1)
	else
		fail "nvme-cli on the C driver (the reference)" "$(tail -5 /tmp/rkw10-c.log 2>&1)"
	fi
	rmmod nvme nvme_core 2>/dev/null
else
	fail "nvme-cli, rnvme vs C (not run: nvme-cli on rnvme failed, or no C driver)"
fi

# ---- a request the controller holds back -------------------------------------------
bind_only "$SLOW"
mark
load io_timeout_ms=1000 || { finish; exit; }
hint "the watchdog: a request older than io_timeout_ms is aborted; a controller that aborts it ends it with an error and stays in service, one that does not is given up and every request ends with an error"
wait_dmesg "a request without completion after 1 s is aborted" "^rnvme $SLOW: queue [0-9]+ command [0-9]+: no completion after [0-9]+ ms, aborting it" 20
# QEMU 7.2's model answers an Abort "not aborted" (result bit 0 set); QEMU
# 10's may abort the command, which then completes with Command Abort
# Requested (SCT 0, SC 0x07): seen once on Debian 13, declined in another
# run there. The driver handles both; the test checks the one it sees.
GIVEN_UP="^rnvme $SLOW: controller given up \(the controller did not abort a timed-out command\): disabled, [0-9]+ request\(s\) ended with an error"
ABORTED="^rnvme: queue [0-9]+ tag [0-9]+: 0x02 at block [0-9]+ failed: Io \(SCT 0, SC 0x07\)"
outcome=none
deadline=$((SECONDS + 20))
while [ "$outcome" = none ] && [ $SECONDS -lt $deadline ]; do
	log=$(dmesg_since_mark)
	if grep -qE -- "$GIVEN_UP" <<<"$log"; then
		outcome=given-up
	elif grep -qE -- "$ABORTED" <<<"$log"; then
		outcome=aborted
	else
		sleep 0.2
	fi
done
SDEV=/dev/$(disk_of "$SLOW")
case $outcome in
given-up)
	pass "the controller does not abort it: it is given up, its requests end with an error"
	if bound_to "$SLOW" && [ -b "$SDEV" ]; then
		pass "the controller stays bound and its disk $SDEV stays"
		t0=$SECONDS
		check_fails "a read of the given-up disk fails" dd if="$SDEV" of=/dev/null bs=4k count=1 iflag=direct status=none
		if [ $((SECONDS - t0)) -le 3 ]; then
			pass "at once ($((SECONDS - t0)) s; the controller would take 4)"
		else
			fail "at once" "it took $((SECONDS - t0)) s"
		fi
	else
		fail "the controller stays bound and its disk $SDEV stays" "$(excerpt)"
	fi
	;;
aborted)
	pass "the controller aborts it: the request ends with Command Abort Requested (SC 0x07)"
	if bound_to "$SLOW" && [ -b "$SDEV" ]; then
		pass "the controller stays bound and its disk $SDEV stays"
		# Each read takes the controller 4 s: it is aborted after 1 s too.
		t0=$SECONDS
		check_fails "a read that outlasts the timeout fails" dd if="$SDEV" of=/dev/null bs=4k count=1 skip=100 iflag=direct status=none
		if [ $((SECONDS - t0)) -le 3 ]; then
			pass "after the timeout and the Abort ($((SECONDS - t0)) s; the controller would take 4)"
		else
			fail "after the timeout and the Abort" "it took $((SECONDS - t0)) s"
		fi
		if dmesg_since_mark | grep -q "controller given up"; then
			fail "the controller stays in service (not given up)" "$(excerpt)"
		else
			pass "the controller stays in service (not given up)"
		fi
	else
		fail "the controller stays bound and its disk $SDEV stays" "$(excerpt)"
	fi
	;;
*)
	fail "the timed-out request ends: aborted by the controller, or the controller given up" \
		"expected within 20 s a kernel log line matching $GIVEN_UP" "or one matching $ABORTED" "$(excerpt)"
	;;
esac
check "unbind the slow controller" timeout 30 sh -c "echo $SLOW > $DRV/unbind"
unload

# ---- a passthrough command that times out ------------------------------------------
# The controller still owns the driver's buffer after the ioctl gave up:
# nothing may reuse it until the controller is stopped (unbind).
bind_only "$SLOW"
mark
if load; then
	SDISK=$(disk_of "$SLOW")
	N=${SDISK#rnvme}
	N=${N%n1}
	hint "Passthrough::run: a command that timed out (ETIMEDOUT, EINTR) abandons its claim of the buffer (Claim::abandon); the buffer then refuses every later command with EBUSY"
	ioctl_checks "ioctl on the slow controller:" --abandon "/dev/rnvme$N" "/dev/rng${N}n1"
	check "unbind the controller with the retired buffer" timeout 30 sh -c "echo $SLOW > $DRV/unbind"
	unload
fi

bind_only
finish
