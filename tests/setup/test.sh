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

# check_llvm_match (setup.sh, before a kernel build): rustc and clang on
# one LLVM, or Kconfig drops CONFIG_RUST_INLINE_HELPERS without saying why.
# A fake rustc (RUSTC) and a fake clang$LLVM_SUFFIX on PATH, each reporting
# an LLVM version the way the real ones do.
CLANG=clang$(as_setup 'echo "$LLVM_SUFFIX"')
mkdir -p "$W/llvm"
# (The fake clang's --version is one line: clang_version reads it through
# `head -1`, under pipefail, and a second write after head has exited would
# kill the fake with SIGPIPE and kernel_key with it; the real clang writes
# its four lines at once.)
fake_llvm() { # fake_llvm RUSTC_LLVM CLANG_VERSION: rustc -vV and clang's answers
	printf '#!/bin/sh\necho "rustc 1.99.0 (fake)"\necho "host: x86_64-unknown-linux-gnu"\necho "LLVM version: %s"\n' "$1" >"$W/llvm/rustc"
	cat >"$W/llvm/$CLANG" <<-C
		#!/bin/sh
		case "\$1" in
		-dumpversion) echo $2 ;;
		--version) echo "Debian clang version $2 (fake)" ;;
		*) exit 1 ;;
		esac
	C
	chmod +x "$W/llvm/rustc" "$W/llvm/$CLANG"
}
fake_llvm 23.1.0 22.1.8
if out=$(as_setup "RUSTC=$W/llvm/rustc PATH=$W/llvm:\$PATH check_llvm_match" 2>&1); then
	notok "check_llvm_match stops when rustc is on LLVM 23 and $CLANG on LLVM 22" "it passed: $out"
elif grep -qF "rustc is built on LLVM 23, $CLANG is LLVM 22:" <<<"$out" && grep -qF CONFIG_RUST_INLINE_HELPERS <<<"$out"; then
	ok "check_llvm_match stops when rustc is on LLVM 23 and $CLANG on LLVM 22, naming both and CONFIG_RUST_INLINE_HELPERS"
else
	notok "check_llvm_match stops when rustc is on LLVM 23 and $CLANG on LLVM 22, naming both and CONFIG_RUST_INLINE_HELPERS" "$out"
fi
fake_llvm 22.1.2 22.1.8
if out=$(as_setup "RUSTC=$W/llvm/rustc PATH=$W/llvm:\$PATH check_llvm_match" 2>&1); then
	ok "check_llvm_match passes when rustc (LLVM 22.1.2) and $CLANG (22.1.8) are on LLVM 22"
else
	notok "check_llvm_match passes when rustc (LLVM 22.1.2) and $CLANG (22.1.8) are on LLVM 22" "$out"
fi
if grep -qx $'\t\tcheck_llvm_match' "$REPO/scripts/setup.sh"; then
	ok "setup.sh checks the LLVMs before it builds a kernel"
else
	notok "setup.sh checks the LLVMs before it builds a kernel" "$(grep -n llvm "$REPO/scripts/setup.sh")"
fi

# make kit-install (scripts/kit.sh install) refuses a kit whose kernels were
# built by another clang, and says so: the kernel key's -cc part differs. A
# fake kit (its manifest alone, as kit.sh pack writes it) whose kernel key is
# computed with one fake clang, installed with another on PATH; rustc is
# this machine's own (kit.sh compares it with the manifest's).
fake_kit() { # fake_kit CLANG_VERSION [SED]: a kit of a fast kernel built by that clang (SED: applied to its key)
	local key
	fake_llvm 22.1.2 "$1"
	key=$(as_setup "PATH=$W/llvm:\$PATH kernel_key 7.3.4-1 fast" | sed "${2:-}")
	rm -rf "$W/kit" && mkdir -p "$W/kit"
	cat >"$W/kit/MANIFEST" <<-M
		# rust-kernel-workshop kit, made by tests/setup/test.sh
		$(grep -m1 '^KIT_FORMAT=' "$REPO/scripts/kit.sh")
		PACKED_FROM_COMMIT=test
		ARCH=$(uname -m)
		DEBIAN_VERSION=$(cat /etc/debian_version 2>/dev/null || echo none)
		RUSTC=$(as_setup '"$RUSTC" --version' 2>&1)
		CLANG=$(as_setup "PATH=$W/llvm:\$PATH clang_version")
		KERNEL_VERSION=7.3.4-1
		FLAVOURS=fast
		KERNEL_KEY_fast=$key
		CONTENTS=kernel/$key
	M
	tar -cf - -C "$W/kit" MANIFEST | zstd -q -o "$W/kit/kit.tar.zst"
	(cd "$W/kit" && sha256sum kit.tar.zst >kit.tar.zst.sha256)
}
kit_install() { # kit_install CLANG_VERSION: kit.sh install of the fake kit, with that clang here
	fake_llvm 22.1.2 "$1"
	env -u RKW_FLAVOUR -u KDIR RKW_CACHE="$W/cache" PATH="$W/llvm:$PATH" \
		bash "$REPO/scripts/kit.sh" install "$W/kit/kit.tar.zst" 2>&1
}
rm -rf "$W/cache"
fake_kit 22.1.0
if out=$(kit_install 22.1.8); then
	notok "kit install refuses a kit built by another clang, and names both clangs" "it installed: $out"
elif grep -qF "clang: the kit's fast kernel was built by 'Debian clang version 22.1.0 (fake)', this machine has 'Debian clang version 22.1.8 (fake)'" <<<"$out" &&
	grep -qF CONFIG_RUST_INLINE_HELPERS <<<"$out" && [ ! -e "$W/cache" ]; then
	ok "kit install refuses a kit built by another clang, and names both clangs"
else
	notok "kit install refuses a kit built by another clang, and names both clangs" "$out"
fi
# The same clang, but other config fragments: the config is named, clang not.
fake_kit 22.1.8 's/-cfg[0-9a-f]*-/-cfg000000000000-/'
if out=$(kit_install 22.1.8); then
	notok "kit install of a kit built by this clang (another config) says nothing of clang" "it installed: $out"
elif grep -q "^  - config: the fast kernel was configured from other files" <<<"$out" && ! grep '^  - ' <<<"$out" | grep -q clang; then
	ok "kit install of a kit built by this clang (another config) says nothing of clang"
else
	notok "kit install of a kit built by this clang (another config) says nothing of clang" "$out"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
