#!/bin/bash
# Tests of make setup's decisions that CI's machine cannot reach for real
# (it has no usable KVM): the KVM-or-TCG probe (scripts/accel.sh) and the
# check that every program the VM and the tests run is installed
# (scripts/host-check.sh). Runs on the host, in a scratch cache, with fake
# probes and a fake /dev/kvm; each case runs the code as `make setup` does:
# under `set -euo pipefail`, with none of the variables that only other
# entry points set (RKW_SETUP_FLAVOURS, RKW_FLAVOUR, KDIR).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)) && echo "ok   $1"; }
notok() { FAILED=$((FAILED + 1)) && printf 'FAIL %s\n%s\n' "$1" "$2" | sed '3,$s/^/     /'; }

# as_setup SNIPPET: run SNIPPET after sourcing what setup.sh sources, in a
# scratch cache, in the strict mode setup.sh runs in.
as_setup() {
	env -u RKW_SETUP_FLAVOURS -u RKW_FLAVOUR -u KDIR RKW_CACHE="$W/cache" bash -c '
		set -euo pipefail
		. "$1/scripts/common.sh"
		. "$1/scripts/accel.sh"
		. "$1/scripts/host-check.sh"
		eval "$2"' as_setup "$REPO" "$1"
}

# A fake /dev/kvm the probe may use, and probes that fail or boot.
touch "$W/kvm"
cat >"$W/probe-fails" <<'P'
#!/bin/bash
echo "qemu: error: failed to set MSR 0x10a" >&2
exit 1
P
cat >"$W/probe-boots" <<'P'
#!/bin/bash
# The flavour must be one that setup built: fast or debug.
case "${RKW_FLAVOUR:-}" in fast | debug) echo RKW-BOOT-OK ;; *) echo "no flavour: '${RKW_FLAVOUR:-}'"; exit 1 ;; esac
P
chmod +x "$W/probe-fails" "$W/probe-boots"

# accel_case DESC EXPECT SNIPPET: SNIPPET must exit 0 and leave EXPECT
# (kvm or tcg) in the cache's accel file.
accel_case() {
	local out rc=0
	rm -rf "$W/cache"
	out=$(as_setup "$3" 2>&1) || rc=$?
	if [ $rc -eq 0 ] && [ "$(cat "$W/cache/accel" 2>/dev/null)" = "$2" ]; then
		ok "$1"
	else
		notok "$1" "exit $rc, accel file: '$(cat "$W/cache/accel" 2>/dev/null)', expected '$2'; output:
$out"
	fi
}

accel_case "bare make setup, writable /dev/kvm, the test boot fails: TCG" tcg \
	"RKW_KVM_DEV=$W/kvm RKW_KVM_PROBE=$W/probe-fails accel \"\${RKW_SETUP_FLAVOURS:-fast debug}\""
accel_case "bare make setup, writable /dev/kvm, the test boot works: KVM" kvm \
	"RKW_KVM_DEV=$W/kvm RKW_KVM_PROBE=$W/probe-boots accel \"\${RKW_SETUP_FLAVOURS:-fast debug}\""
accel_case "make run's setup (only the fast kernel), the test boot works: KVM" kvm \
	"RKW_KVM_DEV=$W/kvm RKW_KVM_PROBE=$W/probe-boots accel fast"
accel_case "accel with no argument at all: TCG when the boot fails" tcg \
	"RKW_KVM_DEV=$W/kvm RKW_KVM_PROBE=$W/probe-fails accel"
accel_case "no /dev/kvm: TCG, and the probe is not run" tcg \
	"RKW_KVM_DEV=$W/no-such-kvm RKW_KVM_PROBE=$W/probe-boots accel"
# A decision made earlier stands.
rm -rf "$W/cache" && mkdir -p "$W/cache" && echo kvm >"$W/cache/accel"
if out=$(as_setup "RKW_KVM_DEV=$W/kvm RKW_KVM_PROBE=$W/probe-fails accel" 2>&1) && [ "$(cat "$W/cache/accel")" = kvm ]; then
	ok "an earlier decision is kept (no second probe)"
else
	notok "an earlier decision is kept (no second probe)" "$out"
fi
# setup.sh itself calls accel the way these cases do.
if grep -qF 'accel "${RKW_SETUP_FLAVOURS:-fast debug}"' "$REPO/scripts/setup.sh"; then
	ok "setup.sh calls accel with the flavours it built (default: fast debug)"
else
	notok "setup.sh calls accel with the flavours it built (default: fast debug)" "$(grep -n accel "$REPO/scripts/setup.sh")"
fi

# host_check: a missing program is named together with its Debian package.
mkdir -p "$W/bin"
for c in $(as_setup 'host_programs' 2>/dev/null); do
	p=$(command -v "$c") && ln -sf "$p" "$W/bin/$c"
done
if out=$(as_setup "PATH=$W/bin:/nonexistent host_check" 2>&1); then
	ok "host_check passes when every program is there"
else
	notok "host_check passes when every program is there" "$out"
fi
rm -f "$W/bin/ip"
if out=$(as_setup "PATH=$W/bin host_check" 2>&1); then
	notok "host_check fails when ip (iproute2) is missing" "it passed: $out"
elif grep -q 'iproute2' <<<"$out"; then
	ok "host_check fails when ip is missing, and names iproute2"
else
	notok "host_check fails when ip is missing, and names iproute2" "$out"
fi
# mkfs.ext4 and e2fsck (stages 13, 18 and 30) are in e2fsprogs, which a minimal
# Debian 13 lacks; they live in /usr/sbin (RKW_SBIN_DIRS empty: PATH alone).
for c in ip mkfs.ext4; do
	p=$(command -v "$c" || ls /usr/sbin/"$c" /sbin/"$c" 2>/dev/null | head -1) && ln -sf "$p" "$W/bin/$c"
done
rm -f "$W/bin/mkfs.ext4"
if out=$(as_setup "RKW_SBIN_DIRS= PATH=$W/bin host_check" 2>&1); then
	notok "host_check fails when mkfs.ext4 (e2fsprogs) is missing" "it passed: $out"
elif grep -q 'mkfs.ext4 (e2fsprogs)' <<<"$out"; then
	ok "host_check fails when mkfs.ext4 is missing, and names e2fsprogs"
else
	notok "host_check fails when mkfs.ext4 is missing, and names e2fsprogs" "$out"
fi

# stage_env reads a stage's own settings, not the caller's variables of the
# same name: scripts/test.sh counts its boots in BOOT, a stage.env setting
# too, and a stage without BOOT= once joined a "group" named by the count
# (its kmemleak checks then ran in a boot without kmemleak).
out=$(as_setup 'BOOT=3; CPUS=9; echo "[$(stage_env 09-interrupts BOOT)][$(stage_env 17-timeouts BOOT)][$(stage_env 09-interrupts CPUS)]"' 2>&1)
if [ "$out" = "[][nvme-production][]" ]; then
	ok "stage_env gives a stage's own settings, never the caller's variable of that name"
else
	notok "stage_env gives a stage's own settings, never the caller's variable of that name" \
		"with BOOT=3 and CPUS=9 set, 09's BOOT, 17's BOOT and 09's CPUS: $out (expected [][nvme-production][])"
fi

# py_tools_ok: setup installs the tooling's Python packages into the venv
# unless each is there at the version versions.env pins (a venv of an
# earlier setup has none: setup adds them to it, without a new venv).
fake_venv() { # fake_venv DIST-INFO...: a scratch venv holding those packages
	rm -rf "$W/cache"
	local v
	v=$(as_setup 'echo "$VENV"')
	mkdir -p "$v/lib/python3.11/site-packages"
	for d in "$@"; do mkdir -p "$v/lib/python3.11/site-packages/$d.dist-info"; done
}
pins=$(as_setup 'echo "tree_sitter-$TREE_SITTER_VERSION tree_sitter_rust-$TREE_SITTER_RUST_VERSION pytest-$PYTEST_VERSION"')
# shellcheck disable=SC2086 # one directory per package
fake_venv $pins
if out=$(as_setup 'py_tools_ok' 2>&1); then
	ok "py_tools_ok: every pinned package in the venv ($pins)"
else
	notok "py_tools_ok: every pinned package in the venv ($pins)" "it failed: $out"
fi
fake_venv "tree_sitter-0.0.1" "${pins#* }"
if out=$(as_setup 'py_tools_ok' 2>&1); then
	notok "py_tools_ok fails for a tree-sitter of another version" "it passed"
else
	ok "py_tools_ok fails for a tree-sitter of another version (setup installs the pinned one)"
fi
fake_venv
if out=$(as_setup 'py_tools_ok' 2>&1); then
	notok "py_tools_ok fails for a venv of an earlier setup (virtme-ng only)" "it passed"
else
	ok "py_tools_ok fails for a venv of an earlier setup (virtme-ng only)"
fi
# setup.sh installs them after virtme-ng (into its venv), and a command
# that needs the VM (ensure-setup.sh) runs setup when they are missing.
if grep -qx 'timed "Python tools" py_tools' "$REPO/scripts/setup.sh" &&
	grep -q 'venv_ok && py_tools_ok' "$REPO/scripts/ensure-setup.sh"; then
	ok "setup.sh installs the Python tools; ensure-setup.sh asks for them"
else
	notok "setup.sh installs the Python tools; ensure-setup.sh asks for them" "$(grep -n py_tools "$REPO/scripts/setup.sh" "$REPO/scripts/ensure-setup.sh")"
fi

# prune_kernels (setup.sh's end): the builds of an older version go; each
# flavour's current build stays, and so does the build the current version
# names that is not finished yet (a `make setup` building it while another
# command's setup ends).
out=$(as_setup '
	mkdir -p "$CACHE/src" "$CACHE/kernel"
	echo 7.3.4-1 >"$CACHE/src/current-version"
	fast=$CACHE/kernel/$(kernel_key 7.3.4-1 fast) debug=$CACHE/kernel/$(kernel_key 7.3.4-1 debug)
	old=$CACHE/kernel/linux-7.2.9-fast-cfg000000000000-rustc00000000
	mkdir -p "$fast" "$debug" "$old"
	touch "$fast/.rkw-complete"
	echo "$fast" >"$CACHE/current-kernel-fast"
	prune_kernels 2>/dev/null
	for d in "$fast" "$debug" "$old"; do [ -d "$d" ] && echo "kept ${d##*/}" || echo "removed ${d##*/}"; done' 2>&1)
if grep -q '^kept linux-7.3.4-1-fast-' <<<"$out" && grep -q '^kept linux-7.3.4-1-debug-' <<<"$out" &&
	grep -q '^removed linux-7.2.9-' <<<"$out"; then
	ok "prune_kernels removes an older build, keeps the current ones, finished or being built"
else
	notok "prune_kernels removes an older build, keeps the current ones, finished or being built" "$out"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
