#!/bin/bash
# Runs inside the VM of scripts/bench-nvme.sh (a benchmark, not a test):
# rnvme (stage 09) and the kernel's C nvme driver take turns on the same
# QEMU NVMe controller, switched through sysfs (driver_override, bind,
# unbind), and run the same fio samples.
#
#   bench-nvme-guest.sh RNVME_KO KDIR ROUNDS SECONDS
#
# Per round and workload: one sample with each driver, the order swapped
# every round (ours first in odd rounds, C first in even ones) so that a
# drift of the busy host does not always favour the same driver. Output,
# one line per sample (the host parses it):
#   RKW-SAMPLE <round> <workload> <ours|c> <interrupts> <from> <to> <fio's JSON, on one line>
# where from and to are the size of QEMU's NVMe trace before and after fio
# ran: the host counts the doorbell writes between them.
# then RKW-BIND lines (bind times), RKW-DMESG lines (what the drivers and
# the kernel logged that looks like trouble), and RKW-GUEST-DONE.
set -uo pipefail
KO=$1 KDIR=$2 ROUNDS=$3 SECS=$4
CPUS=$(nproc)
# fio's region: from 8 MiB to the end of the 64 MiB namespace. rnvme's
# probe reads the host's pattern in the first MiB and writes a block just
# after it, so the write workload must stay clear of it.
REGION="--offset=8M --size=56M"
COMMON="--direct=1 --ioengine=libaio --time_based --runtime=$SECS --norandommap --randrepeat=0 $REGION --output-format=json"
# name: fio arguments. One job per vCPU for the IOPS workload, pinned.
declare -A WL=(
	[randread-qd1]="--rw=randread --bs=4k --iodepth=1 --numjobs=1"
	[randread-qd32]="--rw=randread --bs=4k --iodepth=32 --numjobs=$CPUS --cpus_allowed=0-$((CPUS - 1)) --cpus_allowed_policy=split"
	[seqread-128k-qd8]="--rw=read --bs=128k --iodepth=8 --numjobs=1"
	[randwrite-qd32]="--rw=randwrite --bs=4k --iodepth=32 --numjobs=1"
)
ORDER="randread-qd1 randread-qd32 seqread-128k-qd8 randwrite-qd32"

die() {
	echo "RKW-ERROR $*"
	dmesg | tail -30 | sed 's/^/RKW-DMESG /'
	exit 1
}

BDF=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0010 ] && BDF=$(basename "$d") && break
done
[ -n "$BDF" ] || die "no QEMU NVMe controller (1b36:0010) in the VM"
DEVDIR=/sys/bus/pci/devices/$BDF

# Both drivers registered, neither bound: the override names no driver.
echo rkw-none >"$DEVDIR/driver_override"
insmod "$KO" io_reads=1 || die "insmod $KO failed"
if ! modprobe nvme 2>/dev/null; then
	# modprobe finds the kernel's modules through virtme-ng's link; if it
	# cannot, load them from the kernel build by path.
	grep -q '^nvme_core ' /proc/modules || insmod "$KDIR/drivers/nvme/host/nvme-core.ko" || die "cannot load nvme-core.ko"
	insmod "$KDIR/drivers/nvme/host/nvme.ko" || die "cannot load nvme.ko"
fi
[ -d /sys/bus/pci/drivers/nvme ] && [ -d /sys/bus/pci/drivers/rnvme ] || die "a driver is missing in /sys/bus/pci/drivers"
echo "RKW-INFO C driver: $(modinfo -F filename nvme 2>/dev/null || echo "$KDIR/drivers/nvme/host/nvme.ko"), rnvme: $KO, $CPUS vCPUs"

# disk_of ours|c: the disk the bound driver made, if it is there yet.
disk_of() {
	local g
	case "$1" in
	ours) g=(/dev/rnvme*n1) ;;
	c) g=(/dev/nvme*n1) ;;
	esac
	[ -b "${g[0]}" ] && echo "${g[0]}"
}
drv_of() { [ "$1" = ours ] && echo rnvme || echo nvme; }

# bind ours|c: the controller to that driver, and wait for its disk.
bind() {
	local drv t0 i
	drv=$(drv_of "$1")
	t0=$(date +%s%N)
	echo "$drv" >"$DEVDIR/driver_override"
	echo "$BDF" >"/sys/bus/pci/drivers/$drv/bind" || die "bind to $drv failed"
	for i in $(seq 300); do
		DEV=$(disk_of "$1") && break
		sleep 0.1
	done
	[ -n "$DEV" ] || die "no disk 30 s after binding $drv"
	echo "RKW-BIND $1 $(((($(date +%s%N) - t0) / 1000000))) ms"
}
unbind() {
	local drv i
	drv=$(drv_of "$1")
	echo "$BDF" >"/sys/bus/pci/drivers/$drv/unbind" || die "unbind from $drv failed"
	echo rkw-none >"$DEVDIR/driver_override"
	for i in $(seq 300); do
		disk_of "$1" >/dev/null || return 0
		sleep 0.1
	done
	die "the $drv disk is still there 30 s after unbind"
}

# trace_size: bytes QEMU has written to its NVMe trace so far (every
# doorbell write is a line there; see vm.sh).
trace_size() { stat -c %s "${RKW_NVME_TRACE:-/nonexistent}" 2>/dev/null || echo 0; }
# irq_count: interrupts the controller's vectors have raised so far, on
# every CPU.
irq_count() {
	local n=0 v c
	for v in $(ls "$DEVDIR/msi_irqs" 2>/dev/null); do
		for c in $(awk -v v="$v:" -v cpus="$CPUS" '$1 == v { for (i = 2; i <= cpus + 1; i++) print $i }' /proc/interrupts); do
			n=$((n + c))
		done
	done
	echo $n
}
# irq_affinity: each vector's CPUs, once per driver.
declare -A SHOWN
irq_affinity() {
	local v out=""
	[ -z "${SHOWN[$1]:-}" ] || return 0
	SHOWN[$1]=1
	for v in $(ls "$DEVDIR/msi_irqs" 2>/dev/null); do
		out+=" $v:$(cat "/proc/irq/$v/effective_affinity_list" 2>/dev/null || cat "/proc/irq/$v/smp_affinity_list")"
	done
	echo "RKW-INFO $1: IRQ:CPU of the controller's vectors:$out"
}

# Fill the region once, so that every read finds written data in the image
# (a hole in QEMU's image file reads faster than data).
bind ours
fio --name=fill --filename="$DEV" --direct=1 --ioengine=libaio --rw=write --bs=1M --iodepth=4 $REGION >/dev/null ||
	die "filling the region failed"
unbind ours

dmesg -c >/dev/null 2>&1 || true
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then pair="ours c"; else pair="c ours"; fi
	for w in $ORDER; do
		for who in $pair; do
			bind "$who"
			irq_affinity "$who"
			if [ "$who" = c ] && [ -z "${SHOWN[vwc]:-}" ]; then
				# rnvme turns the volatile write cache off at probe; the
				# controller keeps that through the C driver's reset.
				SHOWN[vwc]=1
				echo "RKW-INFO c: $(nvme get-feature "${DEV%n1}" -f 6 2>&1 | head -1)"
			fi
			i0=$(irq_count) t0=$(trace_size)
			# shellcheck disable=SC2086
			out=$(fio --name="$w" --filename="$DEV" $COMMON ${WL[$w]} 2>/tmp/fio.err) ||
				die "fio $w on $who ($DEV) failed: $(tail -5 /tmp/fio.err)"
			echo "RKW-SAMPLE $r $w $who $(($(irq_count) - i0)) $t0 $(trace_size) $(tr -d '\n' <<<"$out")"
			unbind "$who"
		done
	done
done
# Trouble the drivers or the kernel reported during the samples.
dmesg | grep -iE '\b(error|errors|failed|fail|timeout|timed out|abort|aborting|reset|resetting)\b|WARNING|BUG|Oops|hung|I/O error' |
	sed 's/^/RKW-DMESG /'
echo "RKW-TAINT $(cat /proc/sys/kernel/tainted)"
rmmod rnvme
echo "RKW-GUEST-DONE"
