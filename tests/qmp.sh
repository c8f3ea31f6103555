# QEMU's monitor (QMP) from inside the guest: hot-unplug and re-plug of
# devices while a test runs. Source it in a guest test of a stage whose
# stage.env says QMP=yes (or a VM booted with RKW_VM_QMP=yes): vm.sh then
# shares a directory with the guest (RKW_QMP_DIR) and runs
# scripts/qmp-agent.py on the host, which passes each request file the
# guest writes there to QEMU's QMP socket and writes QEMU's answer back.
#
#   qmp JSON               run one QMP command, e.g. qmp '{"execute":"query-pci"}';
#                          prints QEMU's reply (one compact JSON line). Status:
#                          0 it returned, 1 QEMU said error, 2 no answer in time
#   qmp_device_del ID [S]  unplug device ID and wait (S seconds, default 60)
#                          until QEMU has deleted it: its DEVICE_DELETED event
#                          (or, should that be lost, ID gone from QEMU's devices
#                          for 5 s). Sets QMP_DEL_MS (how long it took).
#                          Status: 0 gone, 1 refused, 2 timeout
#   qmp_device_add ARGS|ID plug a device: ARGS is device_add's arguments as
#                          JSON ('{"driver":"nvme","id":...}'); a bare ID
#                          re-plugs a controller vm.sh attached at boot, with
#                          its boot-time arguments (image, serial, slot).
#                          Retries for 10 s while the id or the disk is still
#                          held by the device just unplugged. Status: 0 added,
#                          1 refused, 2 no answer
#   qmp_pci_bdf ID         the guest's PCI address of device ID (e.g.
#                          0000:01:00.0), from QEMU's query-pci
#
# Every NVMe controller of a QMP=yes VM has a QEMU id equal to its serial
# (nvme:serial=rkw-d0 is device rkw-d0) and sits alone behind a PCIe root
# port, so it can be unplugged and plugged back. Its disk stays in QEMU
# while it is unplugged: what the guest wrote before is there after.
# RKW_QMP_TIMEOUT (default 90 s) bounds a single qmp call; the agent itself
# gives QEMU 60 s, so a stuck monitor normally shows as an RkwTimeout error.
# shellcheck shell=bash

QMP_SEQ=0
# In `make run`'s interactive shell nobody exported RKW_QMP_DIR: find the
# shared directory among virtme-ng's mounts on the kernel command line.
if [ -z "${RKW_QMP_DIR:-}" ]; then
	RKW_QMP_DIR=$(tr ' ' '\n' </proc/cmdline | sed -n 's|^virtme_initmount[0-9]*=/*\(.*/rkw-qmp-[^/]*/guest\)$|/\1|p' | head -n 1)
	[ -z "$RKW_QMP_DIR" ] || export RKW_QMP_DIR
fi

# qmp_ready: the VM was booted with QMP and the host's agent is up.
qmp_ready() {
	[ -n "${RKW_QMP_DIR:-}" ] && [ -d "$RKW_QMP_DIR" ] || {
		echo "qmp: RKW_QMP_DIR is not set: the VM has no QMP (stage.env needs QMP=yes)" >&2
		return 1
	}
	local i
	# The agent connects while the guest boots; it is up long before a
	# test runs, but do not fail on a slow host.
	for ((i = 0; i < 100; i++)); do
		[ -e "$RKW_QMP_DIR/agent-up" ] && return 0
		sleep 0.1
	done
	echo "qmp: the host's qmp-agent.py is not running ($RKW_QMP_DIR/agent-up missing)" >&2
	return 1
}

qmp() {
	local cmd=$1 n d=${RKW_QMP_DIR:-} deadline reply
	qmp_ready || return 2
	# A device plugged or unplugged changes the PCI addresses' table.
	case $cmd in *'"device_add"'* | *'"device_del"'*) rm -f "$RKW_PCI_IDS" ;; esac
	QMP_SEQ=$((QMP_SEQ + 1))
	# Names sort in the order they were made (the agent runs them in name
	# order); the shell's and the subshell's pids and the counter keep
	# concurrent callers apart.
	# (Times come from bash, in microseconds: forking date is slow under TCG.)
	n=${EPOCHREALTIME/[.,]/}-$$-$BASHPID-$QMP_SEQ
	printf '%s\n' "$cmd" >"$d/.req.$n"
	mv "$d/.req.$n" "$d/req.$n"
	deadline=$((EPOCHSECONDS + ${RKW_QMP_TIMEOUT:-90}))
	while [ ! -e "$d/resp.$n" ]; do
		if [ "$EPOCHSECONDS" -ge "$deadline" ]; then
			rm -f "$d/req.$n"
			echo "qmp: no answer to $cmd within ${RKW_QMP_TIMEOUT:-90} s" >&2
			return 2
		fi
		sleep 0.05
	done
	reply=$(head -n 1 "$d/resp.$n")
	rm -f "$d/resp.$n"
	printf '%s\n' "$reply"
	case "$reply" in
	'{"return"'*) return 0 ;;
	*'"class":"RkwTimeout"'*) return 2 ;;
	*) return 1 ;;
	esac
}

# qmp_events_since N: the QMP events after the first N (one JSON line each;
# qmp_event_count: how many so far). Every event QEMU sent is in
# $RKW_QMP_DIR/events.
qmp_events_since() {
	tail -n "+$(($1 + 1))" "$RKW_QMP_DIR/events" 2>/dev/null
}

qmp_event_count() {
	local n=0
	[ ! -e "$RKW_QMP_DIR/events" ] || n=$(wc -l <"$RKW_QMP_DIR/events")
	echo "$n"
}

qmp_device_del() {
	local id=$1 secs=${2:-60} n0 t0 now reply last=0 gone=""
	qmp_ready || return 2
	n0=$(qmp_event_count)
	t0=${EPOCHREALTIME/[.,]/}
	reply=$(qmp "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$id\"}}") || {
		echo "qmp_device_del $id: $reply" >&2
		return 1
	}
	while :; do
		now=${EPOCHREALTIME/[.,]/}
		# QEMU sends DEVICE_DELETED (with "device":ID; its children's
		# events have only a QOM path) when it frees the device: only
		# then is its disk free for a device_add.
		if qmp_events_since "$n0" | grep '"event":"DEVICE_DELETED"' | grep -q "\"device\":\"$id\""; then
			break
		fi
		# An event lost with a broken QMP connection must not make the
		# caller wait for nothing: once a second ask whether QEMU still
		# has the device. It leaves /machine/peripheral when the guest
		# has let go of it, a little before it is freed (the event), so
		# give the event 5 s more. (Not query-pci: it lists no device
		# behind a bridge whose bus number the guest has not set.)
		if [ $((now - last)) -ge 1000000 ]; then
			last=$now
			if [ -z "$gone" ]; then
				reply=$(qmp '{"execute":"qom-list","arguments":{"path":"/machine/peripheral"}}') &&
					[[ "$reply" != *"\"name\":\"$id\""* ]] && gone=$now
			elif [ $((now - gone)) -ge 5000000 ]; then
				echo "qmp_device_del $id: gone from QEMU's devices, but no DEVICE_DELETED (qmp_device_add retries while its disk is busy)" >&2
				break
			fi
		fi
		if [ $(((now - t0) / 1000000)) -ge "$secs" ]; then
			QMP_DEL_MS=$(((now - t0) / 1000))
			echo "qmp_device_del $id: still there after $secs s (does the guest hold it?)" >&2
			return 2
		fi
		sleep 0.1
	done
	QMP_DEL_MS=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
	return 0
}

qmp_device_add() {
	local args=$1 reply t0 rc
	qmp_ready || return 2
	if [[ "$args" != "{"* ]]; then
		[ -f "$RKW_QMP_DIR/device.$args" ] || {
			echo "qmp_device_add: vm.sh attached no device $args at boot (see $RKW_QMP_DIR/device.*)" >&2
			return 1
		}
		args=$(cat "$RKW_QMP_DIR/device.$args")
	fi
	t0=$EPOCHSECONDS
	# A device just unplugged keeps its id and its disk until QEMU has
	# freed it (DEVICE_DELETED): retry for a while on those two errors.
	while :; do
		rc=0
		reply=$(qmp "{\"execute\":\"device_add\",\"arguments\":$args}") || rc=$?
		[ $rc -ne 0 ] || return 0
		case "$reply" in
		*Duplicate* | *"Permission conflict"*) [ $((EPOCHSECONDS - t0)) -lt 10 ] && sleep 0.2 && continue ;;
		esac
		echo "qmp_device_add: $reply" >&2
		return $rc
	done
}

# The table of QEMU ids and guest PCI addresses that qmp_pci_bdf answers
# from: made by one query-pci and one python3 (each takes seconds under TCG
# on the debug kernel) and kept for the rest of the boot (the file name has
# the boot's id), until a device_add or device_del changes it (qmp removes
# it then).
read -r RKW_BOOT_ID </proc/sys/kernel/random/boot_id
RKW_PCI_IDS=/tmp/rkw-pci-ids.$RKW_BOOT_ID
qmp_pci_bdf() {
	local reply id bdf
	if [ ! -s "$RKW_PCI_IDS" ]; then
		reply=$(qmp '{"execute":"query-pci"}') || return 1
		python3 -c '
import json, sys
def walk(devs):
    for d in devs:
        if d.get("qdev_id"):
            print("%s 0000:%02x:%02x.%x" % (d["qdev_id"], d["bus"], d["slot"], d["function"]))
        walk(d.get("pci_bridge", {}).get("devices", []))
for bus in json.loads(sys.stdin.read())["return"]:
    walk(bus["devices"])' <<<"$reply" >"$RKW_PCI_IDS.$$" && mv "$RKW_PCI_IDS.$$" "$RKW_PCI_IDS" || return 1
	fi
	while read -r id bdf; do
		[ "$id" != "$1" ] || { echo "$bdf" && return 0; }
	done <"$RKW_PCI_IDS"
	return 1
}
