# Helpers for the NVMe stages' tests (sourced after lib.sh).
# shellcheck shell=bash

# is_qemu_nvme DIR: the PCI device of sysfs folder DIR is QEMU's NVMe
# controller (1b36:0010). Read with the shell's own `read`: a `cat` is a
# process, about 0.15 s under TCG on the debug kernel, and a q35 VM has some
# 30 PCI devices to look at (two `cat`s each cost 8 s before every insmod).
is_qemu_nvme() {
	local vendor device
	read -r vendor <"$1/vendor" && read -r device <"$1/device" &&
		[ "$vendor" = 0x1b36 ] && [ "$device" = 0x0010 ]
}

# nvme_bdf: the PCI address of QEMU's NVMe controller (the first).
nvme_bdf() {
	local d
	for d in /sys/bus/pci/devices/*; do
		is_qemu_nvme "$d" && echo "${d##*/}" && return 0
	done
	return 1
}

# nvme_bdfs: the PCI addresses of all of QEMU's NVMe controllers.
nvme_bdfs() {
	local d
	for d in /sys/bus/pci/devices/*; do
		! is_qemu_nvme "$d" || echo "${d##*/}"
	done
	return 0
}

# bind_only [BDF...]: from now on, only these controllers bind to a driver
# (the others get a driver_override that names no driver); no argument: all.
bind_only() {
	local b
	for b in $(nvme_bdfs); do
		if [ $# -eq 0 ] || [[ " $* " == *" $b "* ]]; then
			echo >"/sys/bus/pci/devices/$b/driver_override"
		else
			echo rkw-none >"/sys/bus/pci/devices/$b/driver_override"
		fi
	done
}

# map_serials: fill BDF_OF (serial -> PCI address) from the serial each
# controller bound since the mark logged with its model (set in stage.env).
declare -A BDF_OF
map_serials() {
	local b s
	for b in $(nvme_bdfs); do
		s=$(dmesg_since_mark | sed -n "s/^$MODULE $b: model \"[^\"]*\", serial \"\([^\"]*\)\".*/\1/p" | tail -1)
		[ -z "$s" ] || BDF_OF[$s]=$b
	done
}

# bind_all_by_serial [LOAD ARGS...]: load the module with every controller
# bound, check that it binds them all at once (probe runs once per
# controller), and fill BDF_OF (map_serials); then unload. A module that
# does not load ends the stage.
bind_all_by_serial() {
	local all
	all=$(nvme_bdfs | wc -l)
	hint "probe runs once per controller: nothing in the driver may be global"
	mark
	load "$@" || {
		finish
		exit
	}
	map_serials
	if [ ${#BDF_OF[@]} -eq "$all" ]; then
		pass "$MODULE binds all $all controllers at once (${!BDF_OF[*]})"
	else
		fail "$MODULE binds all $all controllers at once" "serials found: ${!BDF_OF[*]}" "$(excerpt)"
	fi
	unload
}

# bound_to_us: the controller is bound to our driver.
bound_to_us() {
	[ "$(basename "$(readlink "/sys/bus/pci/devices/$BDF/driver" 2>/dev/null)")" = "$MODULE" ]
}

# aer_cid_not_reused (stages 08 and 09): in QEMU's trace of admin commands
# since the doorbell mark, no command after the AER used the AER's
# identifier.
aer_cid_not_reused() {
	traced_admin_cmds | awk '
		{
			cid = $1; opc = $2
			if (aer != "" && cid == aer) { print "command " opc " reused cid " cid " of the AER, which the controller still holds"; bad = 1; exit }
			if (opc == "0xc") aer = cid
			n++
		}
		END { if (aer == "") { print "no AER (opcode 0xc) in the trace"; exit 1 } if (bad) exit 1; print "ok: cid " aer " held by the AER, " n " admin commands traced" }'
}

# late_answers DEPTH HINT (stages 08 and 09): Asynchronous Event Requests
# given no time to wait (late=): each is abandoned, then answered after an
# event (a temperature threshold of 0 K). The late answers must free their
# identifiers: more requests than the queue has (DEPTH) would run out of
# them otherwise.
late_answers() {
	local depth=$1 late=$(($1 + 8))
	mark
	hint "$2"
	if load late=$late repeat=10; then
		expect_dmesg "$late requests abandoned, answered later: their identifiers come back ($depth in the queue)" \
			"^rnvme $BDF: $late Asynchronous Event Requests abandoned, each answered later"
		expect_dmesg "and 10 Identify commands after them complete" "^rnvme $BDF: 10 more Identify commands completed"
		unload
	fi
}

BDF=$(nvme_bdf) || {
	fail "the VM has QEMU's NVMe controller (1b36:0010)" "no such PCI device: is DEVICES=nvme in stage.env?"
	finish
	exit 1
}

# disk_of BDF: the disk rnvme made for BDF since the mark (stages 13 on),
# once its node exists (devtmpfs creates it shortly after, in a thread of
# its own); none at once if the probe failed, else none after 10 s. (A deadline in
# seconds, not a count of tries: each try is a few processes, 0.4 s on a
# slow guest, and 100 of them were 43 s for a skeleton whose probe failed.)
disk_of() {
	local d log end=$((SECONDS + 10))
	while :; do
		log=$(dmesg_since_mark)
		d=$(sed -nE "s/^rnvme $1: disk (rnvme[0-9]+n1): .*/\1/p" <<<"$log" | tail -1)
		[ -n "$d" ] && [ -b "/dev/$d" ] && break
		[[ $log != *"rnvme $1: probe with driver rnvme failed"* ]] || break
		[ $SECONDS -lt $end ] || break
		sleep 0.1
	done
	echo "$d"
}
