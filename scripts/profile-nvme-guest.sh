#!/bin/bash
# Runs inside the VM of scripts/profile-nvme.sh (a measurement, not a
# test): for each workload, fio on rnvme's disk, then on the C driver's, on
# the same QEMU NVMe controller, each under `perf record` of every CPU.
#
#   profile-nvme-guest.sh RNVME_KO KDIR SECONDS [params=P,P...] WORKLOAD...
#
# params=: rnvme's module parameters (commas between them), as
# bench-nvme-guest.sh's PARAMS.
# perf samples the CPUs 2000 times a second with the `cpu-clock` software
# event (an hrtimer: the workshop's VMs have no PMU under TCG). A sample
# due while a CPU has its interrupts off waits until they are back on, so
# that time is charged to the function that turns them on again
# (`_raw_spin_unlock_irqrestore`, `_raw_spin_unlock_irq_enable`, ...): the
# report says so. Output, per workload and driver:
#   RKW-RUN <workload> <ours|c> <I/Os> <ms> <CPUs>
# (ms: how long perf recorded, fio's start included)
#   RKW-SYM <workload> <ours|c> <percent of the samples> <k|.> <symbol>
# (k: the kernel's, .: user space's)
# then RKW-GUEST-DONE. The drivers are switched as in bench-nvme-guest.sh
# (driver_override, bind, unbind).
set -uo pipefail
KO=$1 KDIR=$2 SECS=$3
shift 3
PARAMS=""
case "${1:-}" in params=*) PARAMS=${1#params=} && PARAMS=${PARAMS//,/ } && shift ;; esac
COMMON="--direct=1 --ioengine=libaio --time_based --runtime=$SECS --norandommap --randrepeat=0 --size=64M --output-format=json"
declare -A WL=(
	[randread-qd1]="--rw=randread --bs=4k --iodepth=1 --numjobs=1"
	[randread-qd32]="--rw=randread --bs=4k --iodepth=32 --numjobs=1"
	[seqread-128k]="--rw=read --bs=128k --iodepth=8 --numjobs=1"
)
die() {
	echo "RKW-ERROR $*"
	dmesg | tail -20 | sed 's/^/RKW-DMESG /'
	exit 1
}
for w in "$@"; do [ -n "${WL[$w]:-}" ] || die "no workload $w (there are: ${!WL[*]})"; done
command -v perf >/dev/null || die "no perf in the VM (the host's /usr/bin/perf: apt install linux-perf)"

BDF=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0010 ] && BDF=$(basename "$d") && break
done
[ -n "$BDF" ] || die "no QEMU NVMe controller (1b36:0010) in the VM"
DEVDIR=/sys/bus/pci/devices/$BDF
echo rkw-none >"$DEVDIR/driver_override"
# shellcheck disable=SC2086
insmod "$KO" $PARAMS || die "insmod $KO $PARAMS failed"
if ! modprobe nvme 2>/dev/null; then
	grep -q '^nvme_core ' /proc/modules || insmod "$KDIR/drivers/nvme/host/nvme-core.ko" || die "cannot load nvme-core.ko"
	insmod "$KDIR/drivers/nvme/host/nvme.ko" || die "cannot load nvme.ko"
fi
# QEMU's doorbell trace off (over QMP, if the VM has it): a trace line per
# doorbell would be charged to the driver that rings more.
if [ -n "${RKW_QMP_DIR:-}" ] && . "$(dirname "$0")/../tests/qmp.sh"; then
	qmp '{"execute":"trace-event-set-state","arguments":{"name":"pci_nvme_*","enable":false}}' >/dev/null ||
		echo "RKW-INFO QEMU's trace stays on"
fi
echo "RKW-INFO kernel $(uname -r), $(nproc) vCPUs, perf $(perf version 2>/dev/null | awk '{ print $3 }'), rnvme's parameters: ${PARAMS:-none}"

# disk_of ours|c: the bound driver's disk, once it is there.
disk_of() {
	local g
	if [ "$1" = c ]; then g=(/dev/nvme*n1); else g=(/dev/rnvme*n1); fi
	[ -b "${g[0]}" ] && echo "${g[0]}"
}
for who in ours c; do
	drv=rnvme
	[ "$who" = c ] && drv=nvme
	echo "$drv" >"$DEVDIR/driver_override"
	echo "$BDF" >"/sys/bus/pci/drivers/$drv/bind" || die "bind to $drv failed"
	DEV=""
	for _ in $(seq 300); do
		DEV=$(disk_of "$who") && break
		sleep 0.1
	done
	[ -n "$DEV" ] || die "no disk 30 s after binding $drv"
	for w in "$@"; do
		data=/tmp/perf-$who-$w.data
		t0=$(date +%s%N)
		# shellcheck disable=SC2086
		perf record -q -a -e cpu-clock -F 2000 -o "$data" -- \
			fio --name="$w" --filename="$DEV" $COMMON ${WL[$w]} >/tmp/fio.json 2>/tmp/fio.err ||
			die "fio $w on $who ($DEV) failed: $(tail -5 /tmp/fio.err)"
		ms=$((($(date +%s%N) - t0) / 1000000))
		ios=$(python3 -S -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(t["read"]["total_ios"] for t in j["jobs"]))' /tmp/fio.json)
		echo "RKW-RUN $w $who $ios $ms $(nproc)"
		# Symbols by share of all samples (idle included): the host turns
		# them into µs per I/O.
		perf report -i "$data" --stdio --kallsyms=/proc/kallsyms --no-children --sort sym --percent-limit 0.01 2>/dev/null |
			awk -v w="$w" -v who="$who" '/^ +[0-9.]+%/ { p = $1; sub("%", "", p); k = substr($2, 2, 1); $1 = ""; $2 = ""; sub(/^ +/, ""); print "RKW-SYM", w, who, p, k, $0 }'
		rm -f "$data"
	done
	echo "$BDF" >"/sys/bus/pci/drivers/$drv/unbind" || die "unbind from $drv failed"
	echo rkw-none >"$DEVDIR/driver_override"
	for _ in $(seq 300); do
		disk_of "$who" >/dev/null || break
		sleep 0.1
	done
done
rmmod rnvme
echo "RKW-GUEST-DONE"
