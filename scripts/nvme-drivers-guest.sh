# Sourced in the VM by scripts/bench-nvme-guest.sh,
# scripts/profile-nvme-guest.sh, scripts/insns-nvme-guest.sh and
# scripts/ab-nvme-guest.sh: rnvme and
# the kernel's C nvme driver taking turns on the one QEMU NVMe controller
# (switched through sysfs: driver_override, bind, unbind), and the fio
# workloads they measure.
#
#   nvme_drivers_load KO KDIR [PARAMS...]   rnvme (with PARAMS) and nvme loaded (and fio run once),
#                                           the controller bound to neither;
#                                           sets BDF and DEVDIR
#   nvme_measure_start KO KDIR [params=..] WL...  the same, the workloads
#                                           checked (PARAMS, WORKLOADS) and
#                                           QEMU's NVMe trace off
#   load_rnvme KO [PARAMS...]               rnvme reloaded from KO with PARAMS, if it
#                                           was loaded from another file or with
#                                           others (bound to no controller then)
#   drv_of WHO, disk_of WHO                 WHO's driver, and its disk if it is there
#                                           (WHO: c, else rnvme: ours, bounce, ...)
#   bind WHO, unbind WHO                    the controller to WHO's driver and back;
#                                           bind sets DEV, the disk, and BIND_MS
#   fio_ios JSON, fio_sum JSON FIELD        the I/Os of a fio run, read and written;
#                                           FIELD (iops) summed the same way
#   rnvme_paths < LOG                       "MAPPED SGL BOUNCED": how rnvme's requests
#                                           went, from the kernel log of its last unbind
#
# It sets COMMON (fio's arguments for every workload, with SECS seconds)
# and WL (workload name: its fio arguments), and defines die.
# shellcheck shell=bash

CPUS=$(nproc)
NVME_GUEST_DIR=$(dirname "${BASH_SOURCE[0]}")
# The namespace is QEMU's null-co driver (reads give zeroes, no image): fio
# may use all of its 64 MiB. null-co drops writes: the write workload
# measures the drivers and the controller's model, never verify data.
COMMON="--direct=1 --ioengine=libaio --time_based --runtime=$SECS --norandommap --randrepeat=0 --size=64M --output-format=json"
# name: fio arguments.
declare -A WL=(
	[randread-qd1]="--rw=randread --bs=4k --iodepth=1 --numjobs=1"
	[randread-qd32]="--rw=randread --bs=4k --iodepth=32 --numjobs=1"
	# One job per vCPU, each pinned to its own: every hardware queue busy.
	[randread-qd32-jobs]="--rw=randread --bs=4k --iodepth=32 --numjobs=$CPUS --cpus_allowed=0-$((CPUS - 1)) --cpus_allowed_policy=split"
	# fio submits 16 I/Os per io_submit: blk-mq hands them to the driver
	# together (the last one marked), so a driver can ring once for them.
	[randread-qd32-batch16]="--rw=randread --bs=4k --iodepth=32 --numjobs=1 --iodepth_batch_submit=16"
	[seqread-128k]="--rw=read --bs=128k --iodepth=8 --numjobs=1"
	# Writes into the controller's volatile write cache, which both drivers
	# leave on (stage 20): no flush, fio sends none.
	[randwrite-qd32]="--rw=randwrite --bs=4k --iodepth=32 --numjobs=1"
)

# fio_sum JSON FIELD: FIELD of fio's JSON output (total_ios, iops), reads
# and writes, summed over its jobs.
fio_sum() {
	python3 -S -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sum(t[d][sys.argv[2]] for t in j["jobs"] for d in ("read", "write")))' "$1" "$2"
}
# fio_ios JSON: the I/Os fio's jobs did, reads and writes.
fio_ios() { fio_sum "$1" total_ios; }

die() {
	echo "RKW-ERROR $*"
	dmesg | tail -30 | sed 's/^/RKW-DMESG /'
	exit 1
}

nvme_drivers_load() {
	local ko=$1 kdir=$2 d
	shift 2
	BDF=""
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0010 ] && BDF=$(basename "$d") && break
	done
	[ -n "$BDF" ] || die "no QEMU NVMe controller (1b36:0010) in the VM"
	DEVDIR=/sys/bus/pci/devices/$BDF
	# Both drivers registered, neither bound: the override names no driver.
	echo rkw-none >"$DEVDIR/driver_override"
	insmod "$ko" "$@" || die "insmod $ko $* failed"
	LOADED="$ko${*:+ $*}"
	if ! modprobe nvme 2>/dev/null; then
		# modprobe finds the kernel's modules through virtme-ng's link; if
		# it cannot, load them from the kernel build by path.
		grep -q '^nvme_core ' /proc/modules || insmod "$kdir/drivers/nvme/host/nvme-core.ko" || die "cannot load nvme-core.ko"
		insmod "$kdir/drivers/nvme/host/nvme.ko" || die "cannot load nvme.ko"
	fi
	[ -d /sys/bus/pci/drivers/nvme ] && [ -d /sys/bus/pci/drivers/rnvme ] || die "a driver is missing in /sys/bus/pci/drivers"
	# fio once before any measurement, on a file in memory: its first start
	# reads the program and its libraries over the VM's 9P root into the
	# page cache, which would otherwise fall on whichever driver is
	# measured first (in the instruction count, rnvme every time: at 4k
	# QD1 the rest of the kernel ran 1 714 instructions per I/O more than
	# with C, 144 with this; the benchmark's CPU and wall-time columns of
	# its first sample too).
	fio --name=warm-up --filename=/tmp/rkw-fio-warm-up --ioengine=libaio --rw=read --bs=4k --size=1M \
		--output-format=json >/dev/null 2>&1 || echo "RKW-INFO fio's warm-up run failed"
	rm -f /tmp/rkw-fio-warm-up
}

# nvme_measure_start KO KDIR [params=P,P...] WORKLOAD...: where the
# profile's and the instruction count's guests start: sets PARAMS (rnvme's
# parameters, words) and WORKLOADS (an array), every one known; both
# drivers loaded, and QEMU's NVMe trace off over QMP if the VM has it (a
# line written per doorbell slows the device model, most for the driver
# that rings more).
nvme_measure_start() {
	local ko=$1 kdir=$2 w
	shift 2
	PARAMS=""
	case "${1:-}" in params=*) PARAMS=${1#params=} && PARAMS=${PARAMS//,/ } && shift ;; esac
	WORKLOADS=("$@")
	for w in "${WORKLOADS[@]}"; do [ -n "${WL[$w]:-}" ] || die "no workload $w (there are: ${!WL[*]})"; done
	# shellcheck disable=SC2086
	nvme_drivers_load "$ko" "$kdir" $PARAMS
	# shellcheck source=../tests/qmp.sh
	if [ -n "${RKW_QMP_DIR:-}" ] && . "$NVME_GUEST_DIR/../tests/qmp.sh"; then
		qmp '{"execute":"trace-event-set-state","arguments":{"name":"pci_nvme_*","enable":false}}' >/dev/null ||
			echo "RKW-INFO QEMU's trace stays on"
	fi
}

load_rnvme() {
	[ "$LOADED" = "$*" ] && return 0
	rmmod rnvme || die "rmmod rnvme failed"
	# shellcheck disable=SC2068
	insmod $@ || die "insmod $* failed"
	LOADED="$*"
}

# rnvme logs when its disk goes how its requests went (stage 19 on): "N
# requests zero copy (M with an SGL), K through a bounce buffer" (the
# partition table's reads at bind included); stage 21 also "J requests
# mapped in one piece", the zero-copy requests its shortcut took (not in N).
# Mapped: N + J. Nothing if the driver logs no such line.
rnvme_paths() {
	local log n m k j
	log=$(cat)
	read -r n m k < <(grep -oE '[0-9]+ requests zero copy \([0-9]+ with an SGL\), [0-9]+ through a bounce buffer' <<<"$log" |
		tail -1 | tr -cs '0-9' ' ')
	[ -n "${n:-}" ] || return 0
	j=$(grep -oE '[0-9]+ requests mapped in one piece' <<<"$log" | tail -1 | cut -d' ' -f1)
	echo "$((n + ${j:-0})) $m $k"
}

drv_of() { [ "$1" = c ] && echo nvme || echo rnvme; }
disk_of() {
	local g
	if [ "$1" = c ]; then g=(/dev/nvme*n1); else g=(/dev/rnvme*n1); fi
	[ -b "${g[0]}" ] && echo "${g[0]}"
}

bind() {
	local drv t0
	drv=$(drv_of "$1")
	t0=$(date +%s%N)
	echo "$drv" >"$DEVDIR/driver_override"
	echo "$BDF" >"/sys/bus/pci/drivers/$drv/bind" || die "bind to $drv failed"
	DEV=""
	for _ in $(seq 300); do
		DEV=$(disk_of "$1") && break
		sleep 0.1
	done
	[ -n "$DEV" ] || die "no disk 30 s after binding $drv"
	BIND_MS=$((($(date +%s%N) - t0) / 1000000))
}

unbind() {
	local drv
	drv=$(drv_of "$1")
	echo "$BDF" >"/sys/bus/pci/drivers/$drv/unbind" || die "unbind from $drv failed"
	echo rkw-none >"$DEVDIR/driver_override"
	for _ in $(seq 300); do
		disk_of "$1" >/dev/null || return 0
		sleep 0.1
	done
	die "the $drv disk is still there 30 s after unbind"
}
