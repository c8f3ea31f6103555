# Helpers of the last NVMe stages' tests (16 to 21: the nvme-cli nodes,
# timeouts, removal, zero copy), sourced after lib.sh, nvme-lib.sh and
# qmp.sh. They share one boot (BOOT=nvme-production in their stage.env):
# two controllers, rkw-d0 (QEMU's defaults) and rkw-slow (every I/O takes
# 4 s in QEMU's block layer), and QMP for hot-unplug from the host.
# shellcheck shell=bash

CPUS=$(nproc)
# shellcheck disable=SC2034 # used by the tests that source this
DRV=/sys/bus/pci/drivers/$MODULE
# Where stage 16's ioctl and nvme-cli scripts are.
PASSTHRU_TESTS=$(dirname "${BASH_SOURCE[0]}")/16-passthrough

# fio_load DEV SECONDS OUT: random reads and writes at QD32 on every vCPU, in
# the background, in the second 8 MiB of the disk; its output goes to OUT.
# It runs far longer than the test waits for it: it can only end early on
# an error (once the disk is gone, a write finds no space: ENOSPC, or EIO).
fio_load() {
	local disk i n0 n
	disk=$(basename "$1")
	n0=$(ios_done "$disk")
	fio --name=load --filename="$1" --ioengine=libaio --direct=1 --rw=randrw --bs=4k \
		--iodepth=32 --numjobs="$CPUS" --offset=8M --size=8M --time_based --runtime="$2" \
		--group_reporting >"$3" 2>&1 &
	FIO_PID=$!
	# Under load means fio's I/O flows: wait for 500 requests to have ended
	# (fio takes seconds to start on the debug kernel).
	for ((i = 0; i < 600; i++)); do
		n=$(ios_done "$disk")
		[ $((n - n0)) -ge 500 ] && return 0
		sleep 0.1
	done
	fail "fio's I/O flows on $disk before the removal" "$((n - n0)) requests ended in 60 s" "$(tail -5 "$3")"
}

# ios_done DISK: reads and writes the disk has ended so far.
ios_done() { awk '{ print $1 + $5 }' "/sys/block/$1/stat" 2>/dev/null || echo 0; }

# fio_ends DESC SECONDS: the background fio exits within SECONDS, with errors.
fio_ends() {
	local i rc
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$FIO_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$FIO_PID" 2>/dev/null; then
		fail "$1" "fio still runs $2 s after the removal (stuck requests, or I/O that still succeeds)" "$(excerpt)"
		kill -9 "$FIO_PID" 2>/dev/null
		return 1
	fi
	wait "$FIO_PID"
	rc=$?
	if [ $rc -ne 0 ] || grep -qiE "error|err=[ ]*[1-9]" "$FIO_OUT"; then
		pass "$1 (fio exited with $rc: $(grep -oiE '(io_u error|err=[ ]*-?[0-9]+|Input/output error|No such device)[^,]*' "$FIO_OUT" | sort -u | head -2 | tr '\n' ' '))"
	else
		fail "$1" "fio exited with 0 and no error: was the disk removed under it?" "$(tail -5 "$FIO_OUT")"
	fi
}

# fio_verify DESC FIO_ARGS...: on $DEV, a randwrite with crc32c verification, one job
# per vCPU, each in its own 8 MiB region from 40 MiB.
fio_verify() {
	local desc=$1 out rc=0
	shift
	out=$(within 240 fio --name=rkw --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite \
		--verify=crc32c --verify_fatal=1 --numjobs="$CPUS" --offset=40M --offset_increment=8M \
		--size=4M --group_reporting "$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out"; then
		pass "$desc"
	else
		fail "$desc" "fio exited with $rc:" "$(grep -iE 'verify|err|bad' <<<"$out" | head -8)" "$(excerpt 10)"
	fi
}

# Data that must survive every removal: 4 MiB at 32 MiB, written once with
# crc32c verification headers, verified after each re-bind.
KEEP_ARGS=(--name=keep --ioengine=libaio --direct=1 --bs=64k --iodepth=8 --offset=32M --size=4M
	--rw=write --verify=crc32c --verify_fatal=1)
keep_write() { fio --filename="$1" "${KEEP_ARGS[@]}" --do_verify=0 >/tmp/rkw10-keep.out 2>&1; }
keep_verify() {
	local desc=$1 dev=$2 out rc=0
	out=$(fio --filename="$dev" "${KEEP_ARGS[@]}" --verify_only 2>&1) || rc=$?
	if [ $rc -eq 0 ] && grep -q "err= 0" <<<"$out"; then
		pass "$desc"
	else
		fail "$desc" "fio --verify_only exited with $rc:" "$(grep -iE 'verify|err|bad' <<<"$out" | head -8)" "$(excerpt 10)"
	fi
}

# wait_gone BDF SECONDS: the PCI device has left the guest.
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -e "/sys/bus/pci/devices/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# bound_to BDF: rnvme is bound to BDF.
# ioctl_checks PREFIX ARGS...: ioctls.py ARGS, each of its lines a check.
ioctl_checks() {
	local prefix=$1 out rc status what
	shift
	out=$(python3 "$PASSTHRU_TESTS/ioctls.py" "$@" 2>&1)
	rc=$?
	while read -r status what; do
		case "$status" in
		ok) pass "$prefix $what" ;;
		not-ok) fail "$prefix $what" ;;
		esac
	done <<<"$out"
	[ $rc -eq 0 ] || grep -q '^not-ok' <<<"$out" || fail "ioctls.py $* ran to its end" "exit status $rc:" "$(tail -5 <<<"$out")"
}

bound_to() { [ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = "$MODULE" ]; }

# bound_within BDF SECONDS: rnvme is bound to BDF within SECONDS.
bound_within() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = "$MODULE" ] && return 0
		sleep 0.1
	done
	return 1
}

# The two controllers' PCI addresses, from QEMU (QMP): stop the stage if
# either is missing.
D0=$(qmp_pci_bdf rkw-d0) SLOW=$(qmp_pci_bdf rkw-slow)
if [ -z "$D0" ] || [ -z "$SLOW" ]; then
	fail "QEMU names both controllers (rkw-d0 and rkw-slow) over QMP" "rkw-d0: ${D0:-none}, rkw-slow: ${SLOW:-none}"
	finish
	exit
fi

