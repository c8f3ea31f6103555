#!/bin/bash
# make setup: install the toolchain, fetch and build the workshop kernel,
# decide KVM or TCG. Idempotent: every part checks first and skips when done.
set -euo pipefail
. "$(dirname "$0")/common.sh"
# shellcheck source=host-check.sh
. "$REPO/scripts/host-check.sh"

mkdir -p "$CACHE/logs" "$TOOLS"
T_ALL=$(date +%s)
timed() { # timed LABEL CMD...: run a part, report how long it took
	local label=$1 t0
	shift
	t0=$(date +%s)
	"$@"
	note "$label: $(($(date +%s) - t0)) s"
}

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# ---- 0. Which Debian: the pins and the advice depend on it --------------------
# Debian 12 (bookworm) and 13 (trixie) are supported; each ships its own
# build of rustc-web and its own QEMU, pinned in versions.env as
# KEY_BOOKWORM and KEY_TRIXIE. (RKW_OS_RELEASE: another os-release file, for
# tests.)
os_release() { # os_release KEY: KEY of /etc/os-release, empty if none
	(
		# shellcheck disable=SC1090
		. "${RKW_OS_RELEASE:-/etc/os-release}" 2>/dev/null && eval "echo \"\${$1:-}\""
	) || true
}
DEB_CODENAME=$(os_release VERSION_CODENAME)
DEB_CODENAME=${DEB_CODENAME//[^a-z0-9]/}
DEB_NAME=$(os_release PRETTY_NAME)
DEB_NAME=${DEB_NAME:-a system without /etc/os-release}
pin() { # pin KEY: versions.env's KEY for this release (KEY_TRIXIE...), empty if none
	local key="${1}_${DEB_CODENAME^^}"
	[ -n "$DEB_CODENAME" ] && echo "${!key:-}"
}
upstream_series() { # upstream_series 1:10.0.13+ds-0+deb13u1: 10.0
	sed -E 's/^[0-9]+://; s/^([0-9]+\.[0-9]+).*/\1/' <<<"$1"
}
rustc_source_advice() { # where this release's rustc-web $RUSTC_DEB_SERIES comes from
	case "$DEB_CODENAME" in
	bookworm) echo "Debian 12 ships it in its security updates.
Add this line to /etc/apt/sources.list (a normal Debian 12 install has it), then run make setup again:
    deb http://deb.debian.org/debian-security bookworm-security main" ;;
	trixie) echo "Debian 13 ships it in trixie main (a point release brought it): your apt sources give an older
one. Point them at a current Debian mirror, e.g. this line in /etc/apt/sources.list, then run make setup again:
    deb http://deb.debian.org/debian trixie main" ;;
	*) echo "This workshop supports Debian 12 (bookworm) and Debian 13 (trixie); this is $DEB_NAME." ;;
	esac
}

# ---- 1. Debian packages ------------------------------------------------------
# In groups, so that each command installs only what it uses (RKW_SETUP_ONLY,
# RKW_SETUP_STAGE_TOOLS below): `make book` and the host-only stage 27 need
# no kernel and no VM; stage 01 needs no fio.
DEB_RUST=(
	rustc-web rust-web-src cargo-web # the kernel's Rust compiler + core source
	rust-web-clippy rustfmt-web        # CLIPPY=1 and rustfmt of the same release
	gcc ca-certificates                # cargo install's linker; crates.io over TLS
)
DEB_KERNEL=(
	"clang$LLVM_SUFFIX" "lld$LLVM_SUFFIX" "llvm$LLVM_SUFFIX" "libclang$LLVM_SUFFIX-dev"
	make bc bison flex libelf-dev libssl-dev cpio lz4 xz-utils kmod
	debian-archive-keyring            # the kernel source comes from Debian's own archive
	qemu-system-x86 python3-venv      # the VM
	udev iproute2 file procps         # virtme-ng's guest init (udevd, `ip link set lo up`) and host side (`file`)
)
DEB_BROWSER=(chromium) # scripts/book-browser-check.py: the book in a headless browser (make test)
DEB_STAGE_TOOLS=(
	fio nvme-cli diod # tools of the NVMe and 9P stages (04-25)
	e2fsprogs         # mkfs.ext4, e2fsck (stages 13, 18, 30): not in a minimal Debian 13
	g++ git           # fuzzing
	zstd              # make kit / make kit-install
	linux-perf        # perf, in the VM too: where the CPU time goes (stage 21, scripts/profile-nvme.sh)
)
deb_packages() { # the packages this run installs
	case "${RKW_SETUP_ONLY:-}" in
	host | book) echo "${DEB_RUST[@]}" ;;
	*)
		echo "${DEB_RUST[@]}" "${DEB_KERNEL[@]}"
		[ "${RKW_SETUP_STAGE_TOOLS:-1}" = 0 ] || echo "${DEB_STAGE_TOOLS[@]}"
		[ "${RKW_SETUP_BOOK:-1}" = 0 ] || echo "${DEB_BROWSER[@]}"
		;;
	esac
}
apt_packages() {
	local missing=() p
	for p in $(deb_packages); do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		note "installing: ${missing[*]}"
		as_root apt-get update -qq || die "apt-get update failed: check the network and /etc/apt/sources.list, then re-run make setup"
		# rustc-web $RUSTC_DEB_SERIES comes with Debian 12's security
		# updates (a root made by debootstrap has only "bookworm main") and
		# with Debian 13's point releases.
		local cand
		cand=$(apt-cache policy rustc-web | awk '/Candidate:/ {print $2}')
		case "$cand" in
		"$RUSTC_DEB_SERIES"*) ;;
		*) die "apt offers rustc-web ${cand:-(none)}, this workshop needs $RUSTC_DEB_SERIES.x. $(rustc_source_advice)" ;;
		esac
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
			>"$CACHE/logs/apt.log" 2>&1 ||
			die "apt-get install failed (log: $CACHE/logs/apt.log); the last lines:
$(tail -5 "$CACHE/logs/apt.log")"
	fi
	local have
	have=$(dpkg-query -W -f='${Version}' rustc-web)
	case "$have" in
	"$RUSTC_DEB_SERIES"*) ;;
	*) die "rustc-web is $have, this workshop needs $RUSTC_DEB_SERIES.x (versions.env)" ;;
	esac
	local tested
	tested=$(pin RUSTC_DEB_TESTED)
	if [ -z "$tested" ]; then
		note "rustc-web $have: versions.env pins none for $DEB_NAME (Debian 12 bookworm and 13 trixie are supported)"
	elif [ "$have" != "$tested" ]; then
		note "rustc-web $have (pinned for $DEB_CODENAME: $tested): an update since; a kernel is built for each rustc --version"
	fi
	note "rustc: $("$RUSTC" --version)"
	[ -z "${RKW_SETUP_ONLY:-}" ] || return 0
	# QEMU comes with the kernel group. A series other than the one pinned
	# for this release (7.2 on bookworm, 10.0 on trixie) is untested: say
	# so. (Nothing is printed otherwise: QEMU's security updates are many.)
	local qemu qemu_pin
	qemu=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null) || qemu=""
	qemu_pin=$(pin QEMU_DEB_TESTED)
	[ -z "$qemu" ] || [ -z "$qemu_pin" ] || [ "$(upstream_series "$qemu")" = "$(upstream_series "$qemu_pin")" ] ||
		note "QEMU $qemu is not the series pinned for $DEB_CODENAME ($qemu_pin): its NVMe model may answer differently from what the tests expect"
	host_check
}

# ---- 2. crates.io tools (bindgen, mdbook) -------------------------------------
cargo_tool() { # cargo_tool CRATE VERSION BINARY
	local crate=$1 ver=$2 bin=$3 root
	root="$TOOLS/$bin-$ver"
	[ -x "$root/bin/$bin" ] && return 0
	note "cargo install $crate@$ver (a few minutes, once)"
	# Debian's cargo + rustc, never whatever rustup put first on PATH.
	RUSTC=$RUSTC CARGO_TARGET_DIR="$CACHE/cargo-target" \
		"$CARGO" install --locked --quiet --root "$root" "$crate@$ver" >"$CACHE/logs/cargo-$crate.log" 2>&1 ||
		die "cargo install $crate@$ver failed (log: $CACHE/logs/cargo-$crate.log): is crates.io reachable? Re-run make setup to retry."
}
crate_tools() {
	# bindgen builds the kernel; mdbook only the book (`make book`, `make
	# test`, a full `make setup`): a first `make run` does not wait for it.
	case "${RKW_SETUP_ONLY:-}" in
	host) ;;
	book)
		cargo_tool mdbook "$MDBOOK_VERSION" mdbook
		cargo_tool mdbook-svgbob "$MDBOOK_SVGBOB_VERSION" mdbook-svgbob
		;;
	*)
		cargo_tool bindgen-cli "$BINDGEN_VERSION" bindgen
		[ "${RKW_SETUP_BOOK:-1}" = 0 ] || cargo_tool mdbook "$MDBOOK_VERSION" mdbook
		[ "${RKW_SETUP_BOOK:-1}" = 0 ] || cargo_tool mdbook-svgbob "$MDBOOK_SVGBOB_VERSION" mdbook-svgbob
		;;
	esac
	rm -rf "$CACHE/cargo-target"
}

# ---- 3. virtme-ng from PyPI, in a private venv --------------------------------
virtme() {
	venv_ok && return 0
	note "pip install virtme-ng==$VIRTME_NG_VERSION"
	rm -rf "$VENV"
	# Debian's python3 (the one python3-venv serves), never one that pyenv
	# or a PATH put first: the venv must work where only Debian's exists.
	/usr/bin/python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "virtme-ng==$VIRTME_NG_VERSION" >"$CACHE/logs/pip.log" 2>&1 ||
		{
			rm -rf "$VENV"
			die "pip install virtme-ng==$VIRTME_NG_VERSION failed (log: $CACHE/logs/pip.log): is PyPI reachable? Re-run make setup."
		}
}

# ---- 3b. the maintainer tooling's Python packages, into the same venv -------------
# tree-sitter and tree-sitter-rust (scripts/rkw/rust.py parses the Rust
# sources with them), pytest (tests/tooling): wheels only, nothing compiled.
py_tools() {
	py_tools_ok && return 0
	local pkgs=("tree-sitter==$TREE_SITTER_VERSION" "tree-sitter-rust==$TREE_SITTER_RUST_VERSION" "pytest==$PYTEST_VERSION")
	note "pip install ${pkgs[*]}"
	"$VENV/bin/pip" install -q --only-binary=:all: "${pkgs[@]}" >"$CACHE/logs/pip-tools.log" 2>&1 ||
		die "pip install ${pkgs[*]} failed (log: $CACHE/logs/pip-tools.log): is PyPI reachable? Re-run make setup."
}

# ---- 4. linux-source-7.3 from Debian, without touching the host's apt sources -
APT_DIR="$CACHE/apt"
APT_OPTS=(-o "Dir::Etc::sourcelist=$APT_DIR/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" -o APT::Get::List-Cleanup=0)
kernel_source() {
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$CACHE/src"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $KERNEL_DEB_MIRROR $KERNEL_DEB_SUITE main" \
		>"$APT_DIR/sources.list"
	local pkg="linux-source-$KERNEL_SERIES" ver
	if apt-get "${APT_OPTS[@]}" -qq update >"$CACHE/logs/apt-kernel.log" 2>&1; then
		ver=$(apt-cache "${APT_OPTS[@]}" policy "$pkg" | awk '/Candidate:/ {print $2}')
	fi
	if [ -z "${ver:-}" ] || [ "$ver" = "(none)" ]; then
		# Offline, or Debian moved on: use what we already have.
		ver=$(cat "$CACHE/src/current-version" 2>/dev/null || true)
		[ -n "$ver" ] || die "cannot find $pkg in Debian $KERNEL_DEB_SUITE (log: $CACHE/logs/apt-kernel.log)"
		note "package index unreachable: using the cached $pkg $ver"
	fi
	[ "$ver" = "$KERNEL_DEB_TESTED" ] || note "Debian now has $pkg $ver (tested: $KERNEL_DEB_TESTED); using it"
	KSRC="$CACHE/src/linux-source-$ver"
	if [ ! -f "$KSRC/.rkw-extracted" ]; then
		local deb
		(cd "$CACHE/src" && apt-get "${APT_OPTS[@]}" -qq download "$pkg=$ver") >>"$CACHE/logs/apt-kernel.log" 2>&1 ||
			die "downloading $pkg=$ver failed (log: $CACHE/logs/apt-kernel.log); re-run make setup to retry"
		deb=$(ls "$CACHE/src/${pkg}_"*.deb | head -1)
		note "unpacking $(basename "$deb")"
		rm -rf "$KSRC" "$CACHE/src/tmp"
		mkdir -p "$CACHE/src/tmp"
		dpkg-deb -x "$deb" "$CACHE/src/tmp"
		tar -xf "$CACHE/src/tmp/usr/src/$pkg.tar.xz" -C "$CACHE/src/tmp"
		mv "$CACHE/src/tmp/$pkg" "$KSRC"
		rm -rf "$CACHE/src/tmp" "$deb"
		touch "$KSRC/.rkw-extracted"
	fi
	echo "$ver" >"$CACHE/src/current-version"
	KVER=$ver
}

# ---- 5. configure and build the kernel -----------------------------------------
kernel_build() { # kernel_build FLAVOUR
	local flavour=$1
	if [ -n "${KDIR:-}" ]; then
		[ -f "$KDIR/Module.symvers" ] && [ -f "$KDIR/arch/x86/boot/bzImage" ] ||
			die "KDIR=$KDIR is not a built kernel tree (no Module.symvers or bzImage); build it with CONFIG_RUST=y, or unset KDIR"
		note "using your kernel: KDIR=$KDIR"
		return
	fi
	local key out
	key=$(kernel_key "$KVER" "$flavour")
	out="$CACHE/kernel/$key"
	if [ -f "$out/.rkw-complete" ]; then
		note "cached $flavour kernel: $out"
	else
		mkdir -p "$out"
		note "building the $flavour kernel in $out"
		note "(8-15 min on 2 cores; log: $CACHE/logs/kernel-build-$flavour.log)"
		local t0
		t0=$(date +%s)
		# rustc and clang on one LLVM (common.sh), or Kconfig drops
		# CONFIG_RUST_INLINE_HELPERS without saying why.
		check_llvm_match
		# shellcheck disable=SC2046
		make -s -C "$KSRC" $(kmake_args) rustavailable >"$CACHE/logs/kernel-build-$flavour.log" 2>&1 ||
			die "the kernel does not accept this Rust toolchain:
$(tail -5 "$CACHE/logs/kernel-build-$flavour.log")"
		# shellcheck disable=SC2046
		"$REPO/scripts/kernel-config.sh" "$KSRC" "$out" $(fragments "$flavour")
		# shellcheck disable=SC2046
		if ! make -C "$KSRC" O="$out" $(kmake_args) -j"$(nproc)" bzImage modules \
			>>"$CACHE/logs/kernel-build-$flavour.log" 2>&1; then
			grep -E 'error|Error' "$CACHE/logs/kernel-build-$flavour.log" | tail -15 >&2
			die "the kernel build failed (log: $CACHE/logs/kernel-build-$flavour.log); re-run make setup to continue it"
		fi
		echo "$(($(date +%s) - t0))" >"$out/.rkw-build-seconds"
		touch "$out/.rkw-complete"
		note "kernel built in $(cat "$out/.rkw-build-seconds") s"
	fi
	echo "$out" >"$CACHE/current-kernel-$flavour"
}

# ---- 6. KVM or TCG: decided by booting (scripts/accel.sh) ---------------------
# shellcheck source=accel.sh
. "$REPO/scripts/accel.sh"

say "make setup (cache: $CACHE)"
timed "Debian packages" apt_packages
if [ "${RKW_SETUP_UNTIL:-}" = packages ]; then
	# scripts/rehearse-fresh-root.sh --until packages: the packages and the
	# program check only, without the long parts that follow.
	say "setup (until packages) done in $(($(date +%s) - T_ALL)) s"
	exit 0
fi
timed "crates.io tools" crate_tools
if [ -n "${RKW_SETUP_ONLY:-}" ]; then
	# host: Debian's Rust for the host tests (stage 27); book: + mdbook.
	say "setup ($RKW_SETUP_ONLY only) done in $(($(date +%s) - T_ALL)) s"
	exit 0
fi
timed "virtme-ng" virtme
timed "Python tools" py_tools
[ -n "${KDIR:-}" ] || [ "${RKW_SETUP_FLAVOURS:-}" = none ] || timed "kernel source" kernel_source
# `make setup` builds both flavours; `make run`/`make test` only theirs.
# (RKW_SETUP_FLAVOURS=none: the tools only.)
for flavour in ${RKW_SETUP_FLAVOURS:-fast debug}; do
	[ "$flavour" = none ] || timed "kernel build ($flavour)" kernel_build "$flavour"
done
[ "${RKW_SETUP_FLAVOURS:-}" = none ] || timed "KVM probe" accel "${RKW_SETUP_FLAVOURS:-fast debug}"

[ -n "${KDIR:-}" ] || prune_kernels
say "setup done in $(($(date +%s) - T_ALL)) s"
