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
#   RKW_VM_KEEP_IMAGES=dir (keep the NVMe images, as dir/SERIAL.img),
#   RKW_VM_QMP=yes (as a stage.env's QMP=yes, for --devices and manual runs),
#   RKW_VM_RWDIR=dir (a host directory the guest may write to, e.g. for a
#   host agent's answers: scripts/bench-9p-servers.sh).
#
# Devices (--devices, or the stage.env's DEVICES=, separated by spaces):
#   nvme             QEMU's NVMe controller, serial rkw000N, with a 64 MiB
#                    namespace (an image in /dev/shm holding a pattern)
#   nvme:OPT,OPT     the same with QEMU options for `-device nvme`, e.g.
#                    nvme:serial=rkw-q1,max_ioqpairs=1
#   nvme:...,latency_ms=N  a slow controller: its namespace is QEMU's null-co
#                    driver (reads give zeroes, writes are dropped, no image),
#                    and every I/O takes N ms (for timeout tests)
#   9p:TAG=DIR       QEMU's own 9p server, exporting the host's DIR read-only
#                    as the virtio-9p tag TAG (mount -t 9p -o trans=virtio TAG)
# QMP=yes in stage.env: the guest may drive QEMU's monitor (tests/qmp.sh;
# scripts/qmp-agent.py relays). Then every NVMe controller has the QEMU id
# of its serial, sits alone behind a PCIe root port of a q35 machine, and
# can be unplugged (device_del) and plugged back (device_add): its disk is
# a -blockdev node, which survives the unplug, so data written before it
# is there after.
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

ACCEL=$(vm_accel)
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
# QMP: RKW_VM_QMP, else the stage's QMP (stage.env).
QMP=${RKW_VM_QMP:-}
[ -n "$QMP" ] || [ -z "$STAGE" ] || [ ! -f "$REPO/tests/$STAGE/stage.env" ] || QMP=$(stage_env "$STAGE" QMP)
case "$QMP" in
yes | 1) QMP=yes ;;
"" | no | 0) QMP="" ;;
*) die "QMP must be yes or no, not '$QMP'" ;;
esac

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
# QMP: the directory of the monitor's socket and of the one shared with the
# guest, and the agent between them.
QMP_RUN="" AGENT=""
cleanup() {
	keep_or_remove_images
	if [ -n "$AGENT" ]; then
		kill "$AGENT" 2>/dev/null || true
		wait "$AGENT" 2>/dev/null || true
	fi
	[ -z "$QMP_RUN" ] || rm -rf "$QMP_RUN"
}
trap cleanup EXIT
if [ -n "$QMP" ]; then
	# Under /tmp, not build/: the guest's uncached mount of build/ (for the
	# trace, below) would hide a mount under it. A unix socket's path must
	# stay short (108 bytes).
	QMP_RUN=$(mktemp -d /tmp/rkw-qmp-XXXXXX)
	mkdir "$QMP_RUN/guest"
	# Hot-plug needs a slot for it: vng gives a q35 machine under TCG, but
	# QEMU's default (i440fx) under KVM; ask for q35 always, so both have
	# the same PCIe root ports (an extra -machine merges with vng's).
	QEMU_OPTS+=("-machine q35 -qmp unix:$QMP_RUN/qmp.sock,server=on,wait=off")
	VNG+=("--rwdir=$QMP_RUN/guest")
fi
[ -z "${RKW_VM_RWDIR:-}" ] || VNG+=("--rwdir=$RKW_VM_RWDIR")
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
		serial=$(sed -n 's/.*serial=\([^,]*\).*/\1/p' <<<"$opts")
		# latency_ms=N is ours, not QEMU's: take it out of the options.
		latency=""
		if [[ ",$opts," == *,latency_ms=* ]]; then
			IFS=, read -ra parts <<<"$opts"
			opts=""
			for p in "${parts[@]}"; do
				case "$p" in
				latency_ms=*) latency=${p#latency_ms=} ;;
				*) opts+="${opts:+,}$p" ;;
				esac
			done
			[[ "$latency" =~ ^[0-9]+$ ]] || die "$dev: latency_ms must be a number of milliseconds"
		fi
		# The serial names the -blockdev node (rkw-img-SERIAL) and, with
		# QMP, the device: QEMU wants a letter, then letters, digits, '-',
		# '.', '_' (31 bytes at most for a node name).
		node="rkw-img-$serial"
		[ -z "$QMP$latency" ] || [[ "$serial" =~ ^[A-Za-z][A-Za-z0-9._-]{0,22}$ ]] ||
			die "$dev: serial '$serial' cannot name a QEMU device (a letter, then letters, digits, - . _; 23 at most)"
		if [ -n "$latency" ]; then
			# Slow: every request waits in QEMU's null-co driver, which
			# reads zeroes and drops writes, so there is no image and no
			# pattern.
			backend="-blockdev driver=null-co,node-name=$node,size=67108864,latency-ns=$((latency * 1000000)),read-zeroes=on"
		else
			img=$(mktemp /dev/shm/rkw-nvme-XXXXXX.img)
			IMAGES+=("$img")
			SERIALS+=("$serial")
			truncate -s 64M "$img"
			# A pattern the tests can read back: 512-byte block b of the first
			# MiB holds "rkw-lba-%08d" (b) 32 times.
			python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.write(b"".join(b"rkw-lba-%08d" % b * 32 for b in range(2048)))' "$img"
			# With QMP, a -blockdev node: it belongs to no device, so a
			# controller unplugged and plugged back finds its disk as it
			# was. (QEMU 7.2's nvme leaves a -drive in place too, but
			# other device models delete theirs with the device.)
			# discard=unmap: a Dataset Management that deallocates punches
			# a hole in the image, so the blocks read as zeroes, as QEMU's
			# Identify Namespace says (DLFEAT); by default QEMU ignores it
			# and the old data stays (stage 20 checks it).
			backend="-blockdev driver=raw,node-name=$node,discard=unmap,file.driver=file,file.filename=$img"
		fi
		trace="${RKW_VM_LOG:-$REPO/build/vm}.nvme-trace"
		mkdir -p "$(dirname "$trace")"
		if [ $NVME -eq 0 ]; then
			: >"$trace"
			# Traced: every protocol error (err, ub: the tests fail on them),
			# every doorbell write and admin command (the tests compare them
			# with what the driver's ring arithmetic must produce), and the
			# driver's reads and writes of the controller's registers below
			# the doorbells (stage 05 checks their widths and order).
			QEMU_OPTS+=("-trace pci_nvme_err*,file=$trace -trace pci_nvme_ub*,file=$trace"
				"-trace pci_nvme_mmio_doorbell*,file=$trace -trace pci_nvme_admin_cmd,file=$trace"
				"-trace pci_nvme_setfeat_numq,file=$trace"
				"-trace pci_nvme_mmio_read,file=$trace -trace pci_nvme_mmio_write,file=$trace")
			VNG+=("--rodir=$(dirname "$trace")")
		fi
		if [ -n "$QMP" ]; then
			# Alone behind a PCIe root port: a slot the guest's hot-plug
			# driver watches (a device on q35's root bus cannot be
			# unplugged). No I/O window: NVMe needs none, and each port's
			# default 4 KiB of the 64 KiB I/O space would soon run out.
			port="rkw-port$NVME"
			QEMU_OPTS+=("-device pcie-root-port,id=$port,bus=pcie.0,chassis=$((NVME + 1)),io-reserve=0"
				"$backend -device nvme,id=$serial,drive=$node,bus=$port,$opts")
			# device_add's arguments to plug it back (qmp_device_add ID).
			json="{\"driver\":\"nvme\",\"id\":\"$serial\",\"drive\":\"$node\",\"bus\":\"$port\""
			IFS=, read -ra parts <<<"$opts"
			for p in "${parts[@]}"; do json+=",\"${p%%=*}\":\"${p#*=}\""; done
			echo "$json}" >"$QMP_RUN/guest/device.$serial"
		elif [ -n "$latency" ]; then
			QEMU_OPTS+=("$backend -device nvme,drive=$node,$opts")
		else
			QEMU_OPTS+=("-drive file=$img,if=none,id=nvm$NVME,format=raw,discard=unmap -device nvme,drive=nvm$NVME,$opts")
		fi
		NVME=$((NVME + 1))
		;;
	9p:*=*) # QEMU's 9p server: the guest mounts it with the tag
		tag=${dev#9p:} && tag=${tag%%=*} dir=${dev#*=}
		[ -d "$dir" ] || die "$dev: no directory $dir"
		QEMU_OPTS+=("-fsdev local,id=$tag,path=$dir,security_model=none,readonly=on,multidevs=remap -device virtio-9p-pci,fsdev=$tag,mount_tag=$tag")
		;;
	*) die "tests/$STAGE/stage.env: unknown device '$dev'" ;;
	esac
done
# RKW_VM_QEMU_OPTS: more options for QEMU, for a measurement (a TCG
# plugin, a trace); nothing the tests use.
[ -z "${RKW_VM_QEMU_OPTS:-}" ] || QEMU_OPTS+=("$RKW_VM_QEMU_OPTS")
for o in "${QEMU_OPTS[@]}"; do VNG+=("--qemu-opts=$o"); done

# Tell the guest where QEMU's NVMe trace is, so tests can check it live.
[ -z "${trace:-}" ] || CMD="export RKW_NVME_TRACE=$trace; $CMD"
# And where to ask for QMP commands (tests/qmp.sh).
[ -z "$QMP" ] || CMD="export RKW_QMP_DIR=$QMP_RUN/guest; $CMD"
CMD="export RKW_FLAVOUR=$FLAVOUR; $CMD"
# The tests' Python modules (p9raw.py, ...) compiled here: the VM's root
# is read-only, so a module it imports without a current .pyc is compiled
# again at every start of a script, on the guest's slow CPU.
python3 -m compileall -q "$REPO/tests" >/dev/null 2>&1 || true
# The 9P codec for the tests' raw clients (p9raw.py frames its requests
# with it), likewise: the guest runs the host's binary and cannot build it.
# A failure is p9raw.py's to report (the binary is then missing), not a
# reason to boot no VM.
"$REPO/scripts/build-p9wire.sh" || true
case "$MODE" in
exec) VNG+=(--exec "$CMD") ;;
shell) [ -z "$SCRIPT" ] || VNG+=(--shell "$SCRIPT") ;;
esac

[ "$ACCEL" = kvm ] || note "VM under TCG (software emulation): a boot takes 10-50 s" >&2
cd "$REPO"
export PATH="$VENV/bin:$PATH"
if [ -n "$QMP" ]; then
	# It waits for QEMU's socket, and stops when we do (cleanup) or when
	# we are gone without cleaning up (killed). Its log: what the guest
	# asked and what QEMU said.
	qmplog="${RKW_VM_LOG:-$REPO/build/vm}.qmp-log"
	mkdir -p "$(dirname "$qmplog")"
	python3 "$REPO/scripts/qmp-agent.py" "$QMP_RUN/qmp.sock" "$QMP_RUN/guest" 2>"$qmplog" &
	AGENT=$!
fi
if [ "$MODE" = exec ]; then
	rc=0
	timeout -k 10 "$TIMEOUT" "${VNG[@]}" </dev/null || rc=$?
	[ $rc -ne 124 ] && [ $rc -ne 137 ] || echo "RKW:vm-timeout the VM did not finish within $TIMEOUT s and was killed"
	exit $rc
elif [ -n "$QMP" ]; then
	# Not exec: the agent must be stopped and the directory removed after.
	rc=0
	"${VNG[@]}" || rc=$?
	exit $rc
else
	exec "${VNG[@]}"
fi
