#!/bin/bash
# Runs inside the VM of scripts/bench-nvme.sh (a benchmark, not a test):
# rnvme (the stage bench-nvme.sh names) and the kernel's C nvme driver
# take turns on the same QEMU NVMe controller, switched through sysfs
# (driver_override, bind, unbind), and run the same fio samples.
#
#   bench-nvme-guest.sh RNVME_KO KDIR ROUNDS SECONDS [PARAMS [NOCHECKS_KO]]
#
# PARAMS: rnvme's module parameters for every sample (one word, commas
# between them: io_depth=32,shadow_doorbells=0; "-" for none).
# NOCHECKS_KO: the same rnvme built without Rust's overflow checks.
#
# Per round and workload: one sample with each driver, the order swapped
# every round (rnvme first in odd rounds, C first in even ones) so that a
# drift of the busy host does not always favour the same driver; for two
# workloads a third, rnvme with zero_copy=0 ("bounce"), and for two others
# rnvme built without overflow checks ("nochecks"), if given. Output, one
# line per sample (the host parses it):
#   RKW-SAMPLE <round> <workload> <ours|bounce|nochecks|c> <interrupts> <from> <to> <busy> <all> <ms> <ipis> <switches> <fio's JSON, on one line>
# where from and to are the size of QEMU's NVMe trace before and after fio
# ran (the host counts the doorbell writes between them); busy and all the
# guest's non-idle and total CPU time over fio's run, in ticks of
# /proc/stat (1/100 s, both vCPUs together; a tick due while a CPU has its
# interrupts off for longer than a tick period is not counted: all falls
# short of ms/10 per vCPU); ms the run's wall time; ipis the rescheduling
# and function-call IPIs, switches the context switches, over the run.
# Also RKW-PATHS lines (how rnvme's requests went: mapped for the
# controller, with an SGL among them, bounce buffer: rnvme_paths),
# RKW-INFO lines (kernel, queue sizes, what the controller offers),
# RKW-BIND lines (bind times), RKW-DMESG lines (what the drivers and the
# kernel logged that looks like trouble), and RKW-GUEST-DONE.
set -uo pipefail
KO=$1 KDIR=$2 ROUNDS=$3 SECS=$4 PARAMS=${5:-} NOCHECKS_KO=${6:-}
[ "$PARAMS" != - ] || PARAMS=""
PARAMS=${PARAMS//,/ }
# COMMON, WL (the workloads), die, and the switching of the controller
# between the drivers.
. "$(dirname "$0")/nvme-drivers-guest.sh"
ORDER="randread-qd1 randread-qd32 randread-qd32-jobs randread-qd32-batch16 seqread-128k randwrite-qd32"
# Where rnvme also runs with zero_copy=0 ("bounce": every request through a
# bounce buffer, as stage 13), if the module has that parameter: what the
# copy costs.
BOUNCE_WL="randread-qd32 seqread-128k"
# Where rnvme also runs built without overflow checks ("nochecks"): what
# they cost the driver's own code (and the kernel crate's generic code
# compiled into it; not the kernel's built-in Rust).
NOCHECKS_WL="randread-qd1 randread-qd32"
[ -n "$NOCHECKS_KO" ] || NOCHECKS_WL=""

nvme_drivers_load "$KO" "$KDIR"
modinfo -F parm "$KO" 2>/dev/null | grep -q '^zero_copy:' || BOUNCE_WL=""
echo "RKW-INFO kernel $(uname -r), $CPUS vCPUs, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
echo "RKW-INFO C driver: $(modinfo -F filename nvme 2>/dev/null || echo "$KDIR/drivers/nvme/host/nvme.ko"), rnvme: $KO"

# sample_bind ours|bounce|c: rnvme loaded with the sample's parameters, the
# controller bound to WHO's driver, and the time its disk took.
sample_bind() {
	case "$1" in
	# shellcheck disable=SC2086
	ours) load_rnvme "$KO" $PARAMS ;;
	# shellcheck disable=SC2086
	bounce) load_rnvme "$KO" zero_copy=0 $PARAMS ;;
	# shellcheck disable=SC2086
	nochecks) load_rnvme "$NOCHECKS_KO" $PARAMS ;;
	esac
	bind "$1"
	echo "RKW-BIND $1 $BIND_MS ms"
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
# cpu_ticks: "busy all" ticks of every CPU so far (/proc/stat: user nice
# system idle iowait irq softirq steal).
cpu_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# ipi_count: rescheduling and function-call IPIs so far, every CPU.
ipi_count() { awk -v cpus="$CPUS" '$1 == "RES:" || $1 == "CAL:" { for (i = 2; i <= cpus + 1; i++) n += $i } END { print n + 0 }' /proc/interrupts; }
ctxt_count() { awk '$1 == "ctxt" { print $2 }' /proc/stat; }
# Once per driver: each vector's CPUs, the disk's queue size (the host
# needs it to count commands from the SQ tail doorbells) and what the
# controller offers.
declare -A SHOWN
once() {
	local v out=""
	[ -z "${SHOWN[$1]:-}" ] || return 0
	SHOWN[$1]=1
	for v in $(ls "$DEVDIR/msi_irqs" 2>/dev/null); do
		out+=" $v:$(cat "/proc/irq/$v/effective_affinity_list" 2>/dev/null || cat "/proc/irq/$v/smp_affinity_list")"
	done
	echo "RKW-INFO $1: IRQ:CPU of the controller's vectors:$out"
	echo "RKW-QUEUE $1 nr_requests $(cat "/sys/block/${DEV#/dev/}/queue/nr_requests") max_sectors_kb $(cat "/sys/block/${DEV#/dev/}/queue/max_sectors_kb") hw_queues $(ls "/sys/block/${DEV#/dev/}/mq" | wc -l)"
	# "write back": the disk has a volatile write cache (the write workload
	# writes into it with both drivers).
	echo "RKW-INFO $1: write cache: $(cat "/sys/block/${DEV#/dev/}/queue/write_cache")"
	if [ "$1" = c ]; then
		# OACS bit 8: the controller supports Doorbell Buffer Config
		# (shadow doorbells), which the C driver then uses.
		echo "RKW-OACS $(nvme id-ctrl "${DEV%n1}" 2>/dev/null | awk '$1 == "oacs" { print $3 }')"
	fi
}

# trace_on true|false: QEMU's NVMe trace (QMP). Measured rounds run
# untraced; one more round, traced, counts the doorbells (the host knows
# it by its trace lines). Without QMP, every round is traced.
ROUND_LIST=$(seq "$ROUNDS")
trace_on() {
	qmp "{\"execute\":\"trace-event-set-state\",\"arguments\":{\"name\":\"pci_nvme_*\",\"enable\":$1}}" >/dev/null
}
if [ -n "${RKW_QMP_DIR:-}" ] && . "$(dirname "$0")/../tests/qmp.sh" && trace_on false; then
	ROUND_LIST+=" $((ROUNDS + 1))"
	echo "RKW-INFO QEMU's trace off for rounds 1 to $ROUNDS; round $((ROUNDS + 1)) traced, for the doorbell counts"
fi

dmesg -c >/dev/null 2>&1 || true
for r in $ROUND_LIST; do
	[ "$r" -le "$ROUNDS" ] || trace_on true
	if [ $((r % 2)) -eq 1 ]; then pair="ours c"; else pair="c ours"; fi
	for w in $ORDER; do
		who_list=$pair
		case " $BOUNCE_WL " in *" $w "*) who_list+=" bounce" ;; esac
		case " $NOCHECKS_WL " in *" $w "*) who_list+=" nochecks" ;; esac
		for who in $who_list; do
			sample_bind "$who"
			once "$who"
			i0=$(irq_count) p0=$(ipi_count) x0=$(ctxt_count) t0=$(trace_size) c0=$(cpu_ticks) w0=$(date +%s%N)
			# shellcheck disable=SC2086
			out=$(fio --name="$w" --filename="$DEV" $COMMON ${WL[$w]} 2>/tmp/fio.err) ||
				die "fio $w on $who ($DEV) failed: $(tail -5 /tmp/fio.err)"
			w1=$(date +%s%N) c1=$(cpu_ticks) t1=$(trace_size) x1=$(ctxt_count) p1=$(ipi_count) i1=$(irq_count)
			echo "RKW-SAMPLE $r $w $who $((i1 - i0)) $t0 $t1 $((${c1% *} - ${c0% *})) $((${c1#* } - ${c0#* }))" \
				"$(((w1 - w0) / 1000000)) $((p1 - p0)) $((x1 - x0)) $(tr -d '\n' <<<"$out")"
			unbind "$who"
			# How rnvme's requests went (logged when its disk goes).
			if [ "$who" != c ]; then
				paths=$(dmesg | rnvme_paths)
				[ -z "$paths" ] || echo "RKW-PATHS $r $w $who $paths"
			fi
			if [ "$who" = ours ] && [ "$w" = randread-qd32-jobs ] && [ "$r" = 1 ]; then
				# rnvme logs at unbind how many completions each queue
				# reaped: with a job per vCPU, both queues should have.
				echo "RKW-INFO ours, $w: $(dmesg | grep -oE 'queue [0-9]+: [0-9]+ completions came by interrupt' | tail -"$CPUS" | paste -sd ';')"
			fi
		done
	done
done
# Trouble the drivers or the kernel reported during the samples.
dmesg | grep -iE '\b(error|errors|failed|fail|timeout|timed out|abort|aborting|reset|resetting)\b|WARNING|BUG|Oops|hung|I/O error' |
	sed 's/^/RKW-DMESG /'
echo "RKW-TAINT $(cat /proc/sys/kernel/tainted)"
rmmod rnvme
echo "RKW-GUEST-DONE"
