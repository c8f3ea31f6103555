#!/bin/bash
# Runs inside the VM of scripts/ab-nvme.sh (a measurement, not a test): two
# builds of rnvme, "after" and "before" a change, and the kernel's C nvme
# driver take turns on the same QEMU NVMe controller, sample by sample.
#
#   ab-nvme-guest.sh AFTER_KO BEFORE_KO KDIR ROUNDS SECONDS [params=P,P...] WORKLOAD...
#
# Per round and workload one fio run of SECONDS with each of the three, in
# an order that turns every round (after, before, C; then before, C,
# after; then C, after, before), so that no build always runs first or
# after the same one. Output, one line per sample (the host reads it):
#   RKW-AB <round> <workload> <after|before|c> <IOPS>
# then RKW-GUEST-DONE.
set -uo pipefail
AFTER_KO=$1 BEFORE_KO=$2 KDIR=$3 ROUNDS=$4 SECS=$5
shift 5
# COMMON, WL (the workloads), die, load_rnvme, fio_sum, and the switching of the
# controller between the drivers.
. "$(dirname "$0")/nvme-drivers-guest.sh"
nvme_measure_start "$AFTER_KO" "$KDIR" "$@"
echo "RKW-INFO kernel $(uname -r), $CPUS vCPUs, rnvme's parameters: ${PARAMS:-none}"

WHO=(after before c)
for ((r = 1; r <= ROUNDS; r++)); do
	for w in "${WORKLOADS[@]}"; do
		for i in 0 1 2; do
			who=${WHO[(r - 1 + i) % 3]}
			# shellcheck disable=SC2086
			case $who in
			after) load_rnvme "$AFTER_KO" $PARAMS ;;
			before) load_rnvme "$BEFORE_KO" $PARAMS ;;
			esac
			bind "$who"
			# shellcheck disable=SC2086
			fio --name="$w" --filename="$DEV" $COMMON ${WL[$w]} >/tmp/fio.json 2>/tmp/fio.err ||
				die "fio $w on $who ($DEV) failed: $(tail -5 /tmp/fio.err)"
			unbind "$who"
			echo "RKW-AB $r $w $who $(fio_sum /tmp/fio.json iops)"
		done
	done
done
rmmod rnvme
echo "RKW-GUEST-DONE"
