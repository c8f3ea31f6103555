#!/bin/bash
# Stage 11 test (runs in the VM, 4 vCPUs): rnvme creates one I/O queue pair
# per CPU, as many as the controller grants (stage 10 counted them), each on
# its own vector while there are enough and on shared vectors when not;
# every queue carries real Reads (of a pattern the host wrote before boot)
# and a Write; QEMU saw the doorbells ring arithmetic predicts on every
# queue; unbind deletes each SQ before its CQ. Three controllers, one bound at a time:
#   rkw-q4  max_ioqpairs=4      -> 4 queues, 5 vectors (admin + 4)
#   rkw-q1  max_ioqpairs=1      -> 1 queue, 5 vectors allocated, 2 used
#   rkw-v2  msix_qsize=2        -> 4 queues sharing vector 1, admin on 0
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

REPEAT=70 DEPTH=32 READS=70
mapfile -t BDFS < <(nvme_bdfs)
[ ${#BDFS[@]} -eq 3 ] || {
	fail "the VM has three NVMe controllers" "found: ${BDFS[*]}"
	finish
	exit
}

# irq_lines: how many interrupt lines rnvme has registered (one controller
# is bound at a time).
irq_lines() { grep -c "rnvme" /proc/interrupts; }

# deletes_in_order N: QEMU's trace since the doorbell mark has N Delete
# I/O SQ (0x0) + Delete I/O CQ (0x4) pairs, each SQ right before its CQ.
deletes_in_order() {
	traced_admin_cmds | awk -v n="$1" '
		$2 == "0x0" || $2 == "0x4" { seq = seq $2 " " }
		END { want = ""; for (i = 0; i < n; i++) want = want "0x0 0x4 "
		      if (seq == want) print "ok: " n " x (Delete I/O SQ, Delete I/O CQ)"; else print "deletes traced: " (seq == "" ? "none" : seq) "; expected " want }'
}

# variant NAME BDF QUEUES IRQS REPEAT VEC1 VEC2...: bind to BDF and check
# what the chapter predicts: QUEUES created, IRQS interrupts registered,
# queue q on VECq.
variant() {
	local name=$1 bdf=$2 queues=$3 irqs=$4 repeat=$5 q admin
	shift 5
	bind_only "$bdf"
	mark
	doorbell_mark
	hint "create: per queue, Create I/O CQ (with its vector, IEN) before Create I/O SQ"
	load repeat="$repeat" || return 1
	expect_dmesg "$name: rnvme binds the controller with serial $name" "^rnvme $bdf: model \"[^\"]+\", serial \"$name\""
	hint "exercise: read each pattern block through the queue and compare; vectors: vector_of(qid, vectors)"
	for ((q = 1; q <= queues; q++)); do
		expect_dmesg "$name: queue $q on vector $1 reads the host's pattern and reads back its own write" \
			"^rnvme $bdf: queue $q: vector $1, $READS pattern blocks read and verified, 1 block written and read back"
		shift
	done
	admin=$((2 + repeat + 1 + 2 * queues + 1))
	hint "every command: SQ tail doorbell = the slot after it; every completion: CQ head doorbell = the slot after it"
	# (The admin queue wraps twice only with repeat=70: checked once.)
	[ "$repeat" -eq 0 ] ||
		expect_doorbells "$name: admin queue doorbells as ring arithmetic predicts ($admin commands)" 0 $DEPTH $admin $admin --one-at-a-time
	for ((q = 1; q <= queues; q++)); do
		expect_doorbells "$name: I/O queue $q doorbells as ring arithmetic predicts ($((READS + 2)) commands)" \
			$q $DEPTH $((READS + 2)) $((READS + 2)) --one-at-a-time
	done
	local n
	n=$(irq_lines)
	if [ "$n" = "$irqs" ]; then
		pass "$name: $irqs rnvme interrupt lines in /proc/interrupts (admin + the I/O queues' vectors)"
	else
		fail "$name: $irqs rnvme interrupt lines in /proc/interrupts" "found $n:" "$(grep rnvme /proc/interrupts)"
	fi
	mark
	doorbell_mark
	hint "unbind: Delete I/O SQ, then Delete I/O CQ, for each queue, before disabling the controller"
	unload
	expect_dmesg "$name: unbind deletes the $queues I/O queue pairs" "^rnvme $bdf: deleted $queues I/O queue pairs"
	is_ok "$name: each SQ deleted before its CQ (QEMU's trace)" deletes_in_order "$queues"
}

# First all three at once: rnvme drives several controllers side by side,
# and says which serial number (set in stage.env) each PCI address has.
bind_all_by_serial io_reads=2

# Then one at a time. (Vector of I/O queue q: 1 + (q - 1) % (vectors - 1).)
# (name, address, queues, interrupt lines, repeat, the queues' vectors)
variant rkw-q4 "${BDF_OF[rkw-q4]:-none}" 4 5 $REPEAT 1 2 3 4 &&
	variant rkw-q1 "${BDF_OF[rkw-q1]:-none}" 1 2 0 1 &&
	variant rkw-v2 "${BDF_OF[rkw-v2]:-none}" 4 2 0 1 1 1 1
bind_only

reload_twice io_reads=2
finish
