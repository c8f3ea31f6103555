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
# (nvme-drivers-guest.sh), and run its workloads.
set -uo pipefail
KO=$1 KDIR=$2 SECS=$3
shift 3
# COMMON, WL (the workloads), die, and the switching of the controller
# between the drivers.
. "$(dirname "$0")/nvme-drivers-guest.sh"
command -v perf >/dev/null || die "no perf in the VM (the host's /usr/bin/perf: apt install linux-perf)"
nvme_measure_start "$KO" "$KDIR" "$@"
echo "RKW-INFO kernel $(uname -r), $CPUS vCPUs, perf $(perf version 2>/dev/null | awk '{ print $3 }'), rnvme's parameters: ${PARAMS:-none}"

for who in ours c; do
	bind "$who"
	for w in "${WORKLOADS[@]}"; do
		data=/tmp/perf-$who-$w.data
		t0=$(date +%s%N)
		# shellcheck disable=SC2086
		perf record -q -a -e cpu-clock -F 2000 -o "$data" -- \
			fio --name="$w" --filename="$DEV" $COMMON ${WL[$w]} >/tmp/fio.json 2>/tmp/fio.err ||
			die "fio $w on $who ($DEV) failed: $(tail -5 /tmp/fio.err)"
		ms=$((($(date +%s%N) - t0) / 1000000))
		ios=$(fio_ios /tmp/fio.json)
		echo "RKW-RUN $w $who $ios $ms $CPUS"
		# Symbols by share of all samples (idle included): the host turns
		# them into µs per I/O.
		perf report -i "$data" --stdio --kallsyms=/proc/kallsyms --no-children --sort sym --percent-limit 0.01 2>/dev/null |
			awk -v w="$w" -v who="$who" '/^ +[0-9.]+%/ { p = $1; sub("%", "", p); k = substr($2, 2, 1); $1 = ""; $2 = ""; sub(/^ +/, ""); print "RKW-SYM", w, who, p, k, $0 }'
		rm -f "$data"
	done
	unbind "$who"
done
rmmod rnvme
echo "RKW-GUEST-DONE"
