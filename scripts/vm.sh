#!/bin/bash
# Boot the workshop kernel in a virtme-ng VM (the host's root file system,
# read-only, with a writable overlay) with a stage's devices attached.
#
# Usage: vm.sh [--stage NN-name | --devices "nvme ..."] [--exec CMD | --shell SCRIPT | --probe]
#   --exec CMD     run CMD as root in the guest and exit with its status
#   --shell SCRIPT an interactive root shell that first runs SCRIPT
#   --probe        boot, print RKW-BOOT-OK, power off (KVM detection)
# Environment: RKW_ACCEL=kvm|tcg (default: what `make setup` measured),
#   RKW_VM_TIMEOUT=seconds (default 600; a hung guest is killed),
#   RKW_VM_LOG=file (QEMU's NVMe error traces go to FILE.nvme-trace),
#   RKW_VM_KEEP_IMAGES=dir (keep the NVMe images, as dir/SERIAL.img).
set -euo pipefail
. "$(dirname "$0")/common.sh"

STAGE="" MODE=shell CMD="" SCRIPT="" DEVICES_OVERRIDE=""
while [ $# -gt 0 ]; do
	case "$1" in
	--stage) STAGE=$2 && shift ;;
	--exec) MODE=exec CMD=$2 && shift ;;
	--shell) MODE=shell SCRIPT=$2 && shift ;;
	--probe) MODE=exec CMD="echo RKW-BOOT-OK" ;;
	--devices) DEVICES_OVERRIDE=$2 && shift ;;
	*) die "vm.sh: unknown argument $1" ;;
	esac
	shift
done

KDIR=$(current_kdir)
[ -n "$KDIR" ] && [ -f "$KDIR/arch/x86/boot/bzImage" ] || die "no workshop kernel yet: run 'make setup' first"
[ -x "$VENV/bin/vng" ] || die "virtme-ng is not installed: run 'make setup' first"

ACCEL=${RKW_ACCEL:-$(cat "$CACHE/accel" 2>/dev/null || echo tcg)}
TIMEOUT=${RKW_VM_TIMEOUT:-600}

# The C nvme driver would grab QEMU's NVMe controller before our module can:
# keep it from autoloading (tests that compare with it load it by hand).
APPEND="modprobe.blacklist=nvme panic_on_warn=0"
# The guest's root is the host's, over 9p. virtme-ng mounts it uncached,
# which makes every exec slow under TCG; the host's files do not change
# while the VM runs (modules are built before it boots), so let the guest
# cache them. What must be read live (QEMU's trace) gets an uncached mount.
APPEND+=" rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose"
# Extra kernel arguments (test.sh: kmemleak=on for stages that check leaks).
APPEND+=${RKW_VM_APPEND:+ $RKW_VM_APPEND}
# vCPUs: RKW_VM_CPUS, else the stage's CPUS (stage.env), else 2.
CPUS=${RKW_VM_CPUS:-}
[ -n "$CPUS" ] || [ -z "$STAGE" ] || [ ! -f "$REPO/tests/$STAGE/stage.env" ] || CPUS=$(stage_env "$STAGE" CPUS)
VNG=(vng --run "$KDIR" --user root --force-9p --cpus "${CPUS:-2}" --memory "${RKW_VM_MEMORY:-2G}" --append "$APPEND")
[ "$ACCEL" = kvm ] || VNG+=(--disable-kvm)

# ---- the stage's devices ---------------------------------------------------
DEVICES=$DEVICES_OVERRIDE
if [ -z "$DEVICES" ] && [ -n "$STAGE" ] && [ -f "$REPO/tests/$STAGE/stage.env" ]; then
	DEVICES=$(stage_env "$STAGE" DEVICES)
fi
QEMU_OPTS=()
IMAGES=() SERIALS=()
# RKW_VM_KEEP_IMAGES=DIR keeps the NVMe images when the VM is gone, as
# DIR/SERIAL.img: a stage's host-side checks read what its guest wrote.
keep_or_remove_images() {
	local i
	for i in "${!IMAGES[@]}"; do
		if [ -n "${RKW_VM_KEEP_IMAGES:-}" ] && mkdir -p "$RKW_VM_KEEP_IMAGES"; then
			mv -f "${IMAGES[$i]}" "$RKW_VM_KEEP_IMAGES/${SERIALS[$i]}.img" || rm -f "${IMAGES[$i]}"
		else
			rm -f "${IMAGES[$i]}"
		fi
	done
}
trap keep_or_remove_images EXIT
NVME=0
for dev in $DEVICES; do
	case "$dev" in
	nvme | nvme:*) # QEMU's NVMe controller with a 64 MiB namespace in RAM-backed tmpfs
		# `nvme:OPT,OPT` adds QEMU options to this controller (e.g.
		# nvme:serial=rkw-q1,max_ioqpairs=1); several give several controllers.
		opts="serial=rkw000$((NVME + 1))"
		case "$dev" in
		*[:,]serial=*) opts=${dev#nvme:} ;;
		nvme:*) opts+=",${dev#nvme:}" ;;
		esac
		img=$(mktemp /dev/shm/rkw-nvme-XXXXXX.img)
		IMAGES+=("$img")
		SERIALS+=("$(sed -n 's/.*serial=\([^,]*\).*/\1/p' <<<"$opts")")
		truncate -s 64M "$img"
		# A pattern the tests can read back: 512-byte block b of the first
		# MiB holds "rkw-lba-%08d" (b) 32 times.
		python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.write(b"".join(b"rkw-lba-%08d" % b * 32 for b in range(2048)))' "$img"
		trace="${RKW_VM_LOG:-$REPO/build/vm}.nvme-trace"
		mkdir -p "$(dirname "$trace")"
		if [ $NVME -eq 0 ]; then
			: >"$trace"
			# Traced: every protocol error (err, ub: the tests fail on them),
			# every doorbell write and admin command (the tests compare them
			# with what the driver's ring arithmetic must produce).
			QEMU_OPTS+=("-trace pci_nvme_err*,file=$trace -trace pci_nvme_ub*,file=$trace"
				"-trace pci_nvme_mmio_doorbell*,file=$trace -trace pci_nvme_admin_cmd,file=$trace")
			VNG+=("--rodir=$(dirname "$trace")")
		fi
		QEMU_OPTS+=("-drive file=$img,if=none,id=nvm$NVME,format=raw -device nvme,drive=nvm$NVME,$opts")
		NVME=$((NVME + 1))
		;;
	*) die "tests/$STAGE/stage.env: unknown device '$dev'" ;;
	esac
done
for o in "${QEMU_OPTS[@]}"; do VNG+=("--qemu-opts=$o"); done

# Tell the guest where QEMU's NVMe trace is, so tests can check it live.
[ -z "${trace:-}" ] || CMD="export RKW_NVME_TRACE=$trace; $CMD"
CMD="export RKW_FLAVOUR=$FLAVOUR; $CMD"
case "$MODE" in
exec) VNG+=(--exec "$CMD") ;;
shell) [ -z "$SCRIPT" ] || VNG+=(--shell "$SCRIPT") ;;
esac

[ "$ACCEL" = kvm ] || note "VM under TCG (software emulation): a boot takes 10-50 s" >&2
cd "$REPO"
export PATH="$VENV/bin:$PATH"
if [ "$MODE" = exec ]; then
	rc=0
	timeout -k 10 "$TIMEOUT" "${VNG[@]}" </dev/null || rc=$?
	[ $rc -ne 124 ] && [ $rc -ne 137 ] || echo "RKW:vm-timeout the VM did not finish within $TIMEOUT s and was killed"
	exit $rc
else
	exec "${VNG[@]}"
fi
