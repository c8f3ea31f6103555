# shellcheck shell=bash
# KVM or TCG, decided by booting a kernel, not by the presence of /dev/kvm
# (on some hosts /dev/kvm is there but QEMU aborts on a normal kernel).
# Sourced by setup.sh; tests/setup/test.sh runs it with fake probes.
#
#   accel "FLAVOURS"   probe with the first flavour of FLAVOURS that was built
#                      and write kvm or tcg to $CACHE/accel
# Replaceable for tests: RKW_KVM_DEV (default /dev/kvm) and RKW_KVM_PROBE
# (default: scripts/vm.sh --probe; it must print RKW-BOOT-OK on success).

accel() {
	local flavours=${1:-fast debug}
	local dev=${RKW_KVM_DEV:-/dev/kvm}
	if [ -f "$CACHE/accel" ]; then
		note "VM acceleration: $(cat "$CACHE/accel") (decided earlier; rm $CACHE/accel to probe again)"
		return
	fi
	local mode=tcg why="no writable $dev"
	mkdir -p "$CACHE/logs"
	if [ -w "$dev" ]; then
		why="$dev is there but a test boot failed (e.g. a PVM hypervisor that only runs patched guests; log: $CACHE/logs/kvm-probe.log)"
		# shellcheck disable=SC2086 # RKW_KVM_PROBE is a command line
		if RKW_FLAVOUR=${flavours%% *} RKW_ACCEL=kvm RKW_VM_TIMEOUT=90 \
			${RKW_KVM_PROBE:-"$REPO/scripts/vm.sh" --probe} >"$CACHE/logs/kvm-probe.log" 2>&1 &&
			grep -q RKW-BOOT-OK "$CACHE/logs/kvm-probe.log"; then
			mode=kvm why="a test boot under KVM worked"
		fi
	fi
	echo "$mode" >"$CACHE/accel"
	if [ "$mode" = kvm ]; then note "VM acceleration: KVM ($why)"; else note "VM acceleration: TCG, software emulation ($why)"; fi
}
