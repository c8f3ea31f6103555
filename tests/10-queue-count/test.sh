#!/bin/bash
# Stage 10 test (runs in the VM, 4 vCPUs): rnvme asks for one I/O queue
# pair per CPU with Set Features (Number of Queues), 0's based, and reads
# the grant right: it would create one queue per CPU, at most as many as
# granted, each on its own vector while there are enough and on shared
# vectors when not. Three controllers, one bound at a time:
#   rkw-q4  max_ioqpairs=4      -> 4 queues, 5 vectors (admin + 4)
#   rkw-q1  max_ioqpairs=1      -> 1 queue, 5 vectors allocated
#   rkw-v2  msix_qsize=2        -> 4 queues sharing vector 1, admin on 0
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../nvme-lib.sh"

CPUS=$(nproc)
mapfile -t BDFS < <(nvme_bdfs)
[ ${#BDFS[@]} -eq 3 ] || {
	fail "the VM has three NVMe controllers" "found: ${BDFS[*]}"
	finish
	exit
}

# traced_numq: "CQS SQS" a Set Features (Number of Queues) asked for, as
# QEMU decoded it, since the doorbell mark (the last one).
traced_numq() {
	nvme_trace_since "${RKW_DOORBELL_START:-0}" |
		sed -nE 's/.*pci_nvme_setfeat_numq requested cq_count=([0-9]+) sq_count=([0-9]+).*/\1 \2/p' | tail -1
}

# variant NAME BDF GRANTED QUEUES VECTORS VEC1 VEC2...: bind to BDF and
# check what the chapter predicts: GRANTED queue pairs granted, QUEUES to
# create, VECTORS allocated, queue q on VECq.
variant() {
	local name=$1 bdf=$2 granted=$3 queues=$4 vectors=$5 q asked
	shift 5
	bind_only "$bdf"
	mark
	doorbell_mark
	hint "negotiate: Set Features (Number of Queues), on the admin queue, then read the grant in the completion's result"
	load || return 1
	expect_dmesg "$name: rnvme binds the controller with serial $name" "^rnvme $bdf: model \"[^\"]+\", serial \"$name\""
	expect_dmesg "$name: $granted queue pairs granted, $queues for $CPUS CPUs, $vectors vectors" \
		"^rnvme $bdf: I/O queues: $granted granted, $queues for $CPUS CPUs; $vectors vector\(s\) of type MsiX"
	hint "negotiate: Set Features' counts are 0's based, in CDW11 (SQs 15:0, CQs 31:16): asking for N pairs sends N - 1"
	asked=$(traced_numq)
	if [ "$asked" = "$CPUS $CPUS" ]; then
		pass "$name: Set Features asked for $CPUS I/O queue pairs, one per CPU (QEMU decoded the 0's based counts)"
	else
		fail "$name: Set Features asked for $CPUS I/O queue pairs, one per CPU (QEMU decoded the 0's based counts)" \
			"QEMU's trace: requested CQs and SQs: ${asked:-no Set Features (Number of Queues) traced}"
	fi
	hint "the count: one queue per CPU, at most as many as granted (negotiate returns the grant, 1-based)"
	for ((q = 1; q <= queues; q++)); do
		expect_dmesg "$name: I/O queue $q would use vector $1" "^rnvme $bdf: I/O queue $q would use vector $1\$"
		shift
	done
	expect_no_dmesg "$name: no I/O queue $((queues + 1))" "^rnvme $bdf: I/O queue $((queues + 1)) would use"
	mark
	unload
	expect_dmesg "$name: unbind disables the controller" "^rnvme $bdf: controller disabled"
}

# First all three at once: rnvme counts the queues of several controllers
# side by side, and says which serial number (set in stage.env) each PCI
# address has.
bind_all_by_serial

# (name, address, granted, queues, vectors, the queues' vectors; vector of
# I/O queue q: 1 + (q - 1) % (vectors - 1))
variant rkw-q4 "${BDF_OF[rkw-q4]:-none}" 4 4 5 1 2 3 4 &&
	variant rkw-q1 "${BDF_OF[rkw-q1]:-none}" 1 1 5 1 &&
	variant rkw-v2 "${BDF_OF[rkw-v2]:-none}" 64 4 2 1 1 1 1
bind_only

reload_twice
finish
