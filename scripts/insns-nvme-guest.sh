#!/bin/bash
# Runs inside the VM of scripts/insns-nvme.sh (a measurement, not a test):
# for each workload, fio on rnvme's disk, then on the C driver's, on the
# same QEMU NVMe controller, with QEMU's instruction counter (the TCG
# plugin scripts/tcg-insns.c) zeroed just before fio and written out just
# after it.
#
#   insns-nvme-guest.sh RNVME_KO KDIR SECONDS [params=P,P...] WORKLOAD...
#
# The plugin zeroes its counts when the guest runs sethostname and writes
# them when it runs setdomainname (`hostname`, `domainname`: nothing else
# calls them while this runs). Output, per workload and driver:
#   RKW-INSNS <workload> <ours|c> <I/Os> <n>
# (n: the plugin's n-th dump, counted from 0) then, for the host to name
# the addresses, RKW-KSYM lines (the drivers' module symbols and one
# symbol of the kernel's, to check its load address) and RKW-GUEST-DONE.
set -uo pipefail
KO=$1 KDIR=$2 SECS=$3
shift 3
# COMMON, WL (the workloads), die, and the switching of the controller
# between the drivers.
. "$(dirname "$0")/nvme-drivers-guest.sh"
nvme_measure_start "$KO" "$KDIR" "$@"
echo "RKW-INFO kernel $(uname -r), $CPUS vCPUs, rnvme's parameters: ${PARAMS:-none}"

n=0
for who in ours c; do
	bind "$who"
	for w in "${WORKLOADS[@]}"; do
		hostname rkw-insns-start
		# shellcheck disable=SC2086
		fio --name="$w" --filename="$DEV" $COMMON ${WL[$w]} >/tmp/fio.json 2>/tmp/fio.err ||
			die "fio $w on $who ($DEV) failed: $(tail -5 /tmp/fio.err)"
		domainname rkw-insns-dump
		ios=$(fio_ios /tmp/fio.json)
		echo "RKW-INSNS $w $who $ios $n"
		n=$((n + 1))
	done
	unbind "$who"
done
# The drivers' symbols (modules load where the kernel finds room), and
# one of the kernel's: the host names the rest from System.map, moved by
# the difference if the kernel was loaded elsewhere.
grep -E '\[(rnvme|nvme|nvme_core)\]$' /proc/kallsyms | sed 's/^/RKW-KSYM /'
grep -m1 ' T __x64_sys_sethostname$' /proc/kallsyms | sed 's/^/RKW-KSYM /'
rmmod rnvme
echo "RKW-GUEST-DONE"
