# Shared by every script: paths, pinned versions, messages.
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../versions.env
. "$REPO/versions.env"

CACHE=${RKW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rust-kernel-workshop}
TOOLS="$CACHE/tools"
VENV="$CACHE/venv-virtme-ng-$VIRTME_NG_VERSION"
RUSTC=/usr/bin/rustc
CARGO=/usr/bin/cargo
BINDGEN="$TOOLS/bindgen-$BINDGEN_VERSION/bin/bindgen"
MDBOOK="$TOOLS/mdbook-$MDBOOK_VERSION/bin/mdbook"
FRAGMENT="$REPO/kernel/workshop.config"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }
die() {
	printf '\033[31merror:\033[0m %s\n' "$*" >&2
	exit 1
}

# The kernel build is keyed by kernel version, config fragment and compiler:
# a rustc security update must give a new kernel, or modules will not load.
kernel_key() {
	local kver=$1 frag rustc
	frag=$(sha256sum "$FRAGMENT" "$REPO/scripts/kernel-config.sh" | sha256sum | cut -c1-12)
	rustc=$("$RUSTC" --version | sha256sum | cut -c1-8)
	echo "linux-$kver-cfg$frag-rustc$rustc"
}

# Where the current kernel build lives (KDIR overrides); empty if none yet.
current_kdir() {
	if [ -n "${KDIR:-}" ]; then
		echo "$KDIR"
	elif [ -f "$CACHE/current-kernel" ]; then
		cat "$CACHE/current-kernel"
	fi
}

# Arguments for every kernel/module build: the one place RUSTC etc. are set.
kmake_args() {
	echo "ARCH=x86_64 LLVM=$LLVM_SUFFIX RUSTC=$RUSTC HOSTRUSTC=$RUSTC BINDGEN=$BINDGEN"
}
