# Shared by every script: paths, pinned versions, messages.
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../versions.env
. "$REPO/versions.env"

CACHE=${RKW_CACHE:-${XDG_CACHE_HOME:-${HOME:?neither HOME nor RKW_CACHE is set: say where the cache goes, e.g. RKW_CACHE=/var/cache/rkw}/.cache}/rust-kernel-workshop}
TOOLS="$CACHE/tools"
VENV="$CACHE/venv-virtme-ng-$VIRTME_NG_VERSION"
RUSTC=/usr/bin/rustc
CARGO=/usr/bin/cargo
BINDGEN="$TOOLS/bindgen-$BINDGEN_VERSION/bin/bindgen"
MDBOOK="$TOOLS/mdbook-$MDBOOK_VERSION/bin/mdbook"
# The book's diagrams (book.toml runs it through scripts/mdbook-svgbob.sh).
MDBOOK_SVGBOB="$TOOLS/mdbook-svgbob-$MDBOOK_SVGBOB_VERSION/bin/mdbook-svgbob"
# Kernel flavours: `fast` (workshop.config) for `make run`, `debug`
# (+ debug.config: KASAN, lockdep, ...) for `make test` and `make check`.
FLAVOUR=${RKW_FLAVOUR:-debug}
case "$FLAVOUR" in fast | debug) ;; *) echo "RKW_FLAVOUR must be fast or debug" >&2 && exit 1 ;; esac
fragments() { # fragments FLAVOUR: the config fragments of a flavour, in order
	echo "$REPO/kernel/workshop.config"
	[ "$1" = fast ] || echo "$REPO/kernel/$1.config"
}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }
die() {
	printf '\033[31merror:\033[0m %s\n' "$*" >&2
	exit 1
}

# clang_version: the first line of `clang --version` (of LLVM_SUFFIX's
# clang), empty if there is none: the C compiler the kernels are built by.
clang_version() {
	"clang$LLVM_SUFFIX" --version 2>/dev/null | head -1
}

# check_llvm_match: stops unless rustc and clang$LLVM_SUFFIX are on one LLVM
# (major version); setup.sh asks before it builds a kernel (tests/setup/test.sh
# runs it with a fake rustc and clang). CONFIG_RUST_INLINE_HELPERS wants clang
# on rustc's LLVM (and EXPERT, which tinyconfig sets); with another LLVM,
# Kconfig drops it and kernel-config.sh stops with a message that does not
# say why.
check_llvm_match() {
	local llvm_rustc llvm_clang
	# A missing program is a '?' in the message, not a silent stop.
	llvm_rustc=$("$RUSTC" -vV 2>/dev/null | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p') || true
	llvm_clang=$("clang$LLVM_SUFFIX" -dumpversion 2>/dev/null | cut -d. -f1) || true
	[ "$llvm_rustc" = "$llvm_clang" ] ||
		die "rustc is built on LLVM ${llvm_rustc:-?}, clang$LLVM_SUFFIX is LLVM ${llvm_clang:-?}: the kernel inlines its C helpers into Rust (CONFIG_RUST_INLINE_HELPERS), which needs both on one LLVM. rustc-web has moved to another LLVM: install clang-$llvm_rustc and set LLVM_SUFFIX=-$llvm_rustc in versions.env (and please report it), or build with KDIR= a kernel of your own"
}

# The kernel build is keyed by kernel version, config fragment and compiler:
# a rustc security update must give a new kernel, or modules will not load.
kernel_key() { # kernel_key KVER FLAVOUR
	local kver=$1 flavour=$2 frag rustc cc
	# shellcheck disable=SC2046
	frag=$(cat $(fragments "$flavour") "$REPO/scripts/kernel-config.sh" | sha256sum | cut -c1-12)
	rustc=$("$RUSTC" --version | sha256sum | cut -c1-8)
	# The C compiler too: the kernel's C and the helpers inlined into Rust.
	cc=$(clang_version | sha256sum | cut -c1-8)
	echo "linux-${kver//[~+]/_}-$flavour-cfg$frag-rustc$rustc-cc$cc"
}

# Where the current kernel build of FLAVOUR lives (KDIR overrides); empty
# if none yet.
current_kdir() { # current_kdir [FLAVOUR]
	local f=${1:-$FLAVOUR}
	if [ -n "${KDIR:-}" ]; then
		echo "$KDIR"
	elif [ -f "$CACHE/current-kernel-$f" ]; then
		cat "$CACHE/current-kernel-$f"
	fi
}

# What else runs beside a benchmark (its numbers are only as calm as the
# machine): the QEMU processes running, and the host's load average.
vms_running() { pgrep -c -f '^[^ ]*qemu-system' || true; }
host_load() { cut -d' ' -f1 /proc/loadavg; }

# vm_accel: how VMs run here, kvm or tcg: RKW_ACCEL, else what `make setup`
# measured (accel.sh), else tcg.
vm_accel() { echo "${RKW_ACCEL:-$(cat "$CACHE/accel" 2>/dev/null || echo tcg)}"; }

# prune_kernels: removes the kernel builds of an older kernel version,
# config fragment or rustc, to reclaim their space (setup.sh, at its end).
# Kept: each flavour's current build, and the build the current version,
# fragments and rustc name, finished or not: a `make setup` may be building
# it right now while another command's setup (ensure-setup.sh, for one
# flavour) ends. (Seen: `make setup` building the debug kernel, a
# benchmark's ensure-setup removed the half-built tree under it.)
prune_kernels() {
	local d f kver keep
	keep=" $(current_kdir fast) $(current_kdir debug) "
	if kver=$(cat "$CACHE/src/current-version" 2>/dev/null) && [ -x "$RUSTC" ]; then
		for f in fast debug; do keep+="$CACHE/kernel/$(kernel_key "$kver" "$f") "; done
	fi
	for d in "$CACHE"/kernel/*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		[[ "$keep" == *" $d "* ]] && continue
		note "removing the stale kernel build $(basename "$d") ($(du -sh "$d" | cut -f1))"
		rm -rf "$d"
	done
	rm -f "$CACHE/current-kernel" # the single-flavour layout of before
}

# venv_ok: virtme-ng's venv is there and built on Debian's /usr/bin/python3
# (a venv made by another interpreter breaks when that one is not there).
venv_ok() {
	[ -x "$VENV/bin/vng" ] && grep -qx 'home = /usr/bin' "$VENV/pyvenv.cfg" 2>/dev/null
}
# py_tools_ok: the maintainer tooling's packages are in that venv at their
# pinned versions (versions.env): tree-sitter, its Rust grammar, pytest.
py_tools_ok() {
	local p
	for p in "tree_sitter-$TREE_SITTER_VERSION" "tree_sitter_rust-$TREE_SITTER_RUST_VERSION" "pytest-$PYTEST_VERSION"; do
		compgen -G "$VENV/lib/python3*/site-packages/$p.dist-info" >/dev/null || return 1
	done
}

# Modules are built per flavour: a module only loads into its own kernel.
MODULES_DIR="$REPO/build/modules-$FLAVOUR"

# Arguments for every kernel/module build: the one place RUSTC etc. are set.
kmake_args() {
	echo "ARCH=x86_64 LLVM=$LLVM_SUFFIX RUSTC=$RUSTC HOSTRUSTC=$RUSTC BINDGEN=$BINDGEN"
}

# stage_name 1|01|01-hello: the stage's folder name (01-hello), or fail.
stage_name() {
	local n=${1%%-*} d
	[[ "$n" =~ ^[0-9]+$ ]] || die "not a stage number: $1 (try STEP=01)"
	for d in "$REPO"/tests/"$(printf '%02d' "$((10#$n))")"-*/; do
		[ -d "$d" ] && basename "$d" && return 0
	done
	die "there is no stage $1 (see the folders in tests/)"
}

# stage_env NN-name VAR: the value of VAR in tests/NN-name/stage.env (MODULE,
# DEVICES, VM), empty if it is not set there (not the caller's VAR: test.sh
# counts its boots in BOOT, which is also a stage.env setting).
stage_env() {
	# shellcheck disable=SC1090
	(unset "$2" && . "$REPO/tests/$1/stage.env" && eval "echo \"\${$2:-}\"")
}

# build_uses STAGE FLAVOUR...: build the solutions of the stages whose modules
# STAGE's test loads too (USES in its stage.env: stages 34 and 35 load stage
# 20's rnvme), for each kernel FLAVOUR its trees boot on. The one way to
# build them, for scripts/test.sh and scripts/teeth.py; a build that fails
# says which, with the compiler's output, and the status is 1.
build_uses() {
	local stage=$1 used f out rc=0
	shift
	for used in $(stage_env "$stage" USES); do
		for f in $(printf '%s\n' "$@" | sort -u); do
			out=$(RKW_FLAVOUR=$f "$REPO/scripts/build-stage.sh" solutions "$used" 2>&1) || {
				rc=1
				printf 'the module of %s, which the test of %s loads, does not build (%s kernel):\n%s\n' "$used" "$stage" "$f" "$out"
			}
		done
	done
	return $rc
}

# nvme_bench_module NAME: the NVMe stage the benchmarks measure
# (BENCH_NVME_STAGE, default 21-speed) built on the fast kernel, as
# committed at BENCH_NVME_REF (a copy of that tree in build/bench/NAME-tree)
# or as in the working tree, and its module copied to build/bench/NAME.ko,
# so that a rebuild while the VM runs changes nothing measured. Sets STAGE,
# TREE (where it was built), KO, and commit (what was measured, for the
# report).
nvme_bench_module() {
	STAGE=${BENCH_NVME_STAGE:-21-speed}
	[ -d "$REPO/solutions/$STAGE" ] || die "no stage $STAGE in solutions/"
	mkdir -p "$REPO/build/bench"
	TREE=$REPO
	if [ -n "${BENCH_NVME_REF:-}" ]; then
		TREE="$REPO/build/bench/$1-tree"
		rm -rf "$TREE" && mkdir -p "$TREE"
		git -C "$REPO" archive "$BENCH_NVME_REF" | tar -x -C "$TREE" || die "cannot export $BENCH_NVME_REF"
		commit=$(git -C "$REPO" rev-parse --short "$BENCH_NVME_REF")
	else
		commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
		# The stage's crate includes files of earlier stages and of the
		# library: any change under solutions/ may be in it.
		git -C "$REPO" diff --quiet HEAD -- solutions 2>/dev/null ||
			commit+=", with uncommitted changes under solutions/"
	fi
	KO="$REPO/build/bench/$1.ko"
	nvme_bench_build "$KO"
}

# nvme_bench_build KO [KRUSTFLAGS]: nvme_bench_module's STAGE built in its
# TREE for the fast kernel (with KRUSTFLAGS, appended to the kernel's own
# Rust flags), its module copied to KO.
nvme_bench_build() {
	KRUSTFLAGS=${2:-${KRUSTFLAGS:-}} RKW_FLAVOUR=fast "$TREE/scripts/build-stage.sh" solutions "$STAGE" --strict >/dev/null ||
		die "solutions/$STAGE does not build${2:+ with $2}"
	cp "$TREE/build/modules-fast/solutions/$STAGE/rnvme.ko" "$1"
}

# nvme_measure_vm NAME GUEST [ARGS...]: the VM of a measurement that puts
# rnvme and C on one controller in turn (profile-nvme.sh, insns-nvme.sh,
# ab-nvme.sh):
# scripts/GUEST runs there with ARGS, its output in
# build/bench/nvme-NAME-raw.txt (RAW); dies if the guest did not finish.
nvme_measure_vm() {
	local name=$1 guest=$2
	shift 2
	RAW="$REPO/build/bench/nvme-$name-raw.txt"
	export RKW_VM_QMP=yes RKW_VM_CPUS=2 RKW_VM_LOG="$REPO/build/bench/nvme-$name-vm"
	"$REPO/scripts/vm.sh" --devices "nvme:serial=rkw-bench,max_ioqpairs=2,latency_ms=0" \
		--exec "bash $REPO/scripts/$guest $*" >"$RAW" 2>&1 || true
	rm -f "$RKW_VM_LOG.nvme-trace"
	grep -E '^RKW-(INFO|ERROR|DMESG)|^RKW:vm-timeout|tcg-insns' "$RAW" >&2 || true
	grep -q '^RKW-GUEST-DONE' "$RAW" || die "the guest did not finish (see ${RAW#"$REPO"/})"
}

# nvme_bench_nochecks NAME: after nvme_bench_module, the same module built
# without Rust's overflow checks (the kernel's Makefile puts KRUSTFLAGS
# after its own -Coverflow-checks=y, so the last one wins), copied to
# build/bench/NAME-nochecks.ko; sets NOCHECKS_KO. It names what the checks
# cost the driver's code (and the kernel crate's generic code compiled into
# it) with no second kernel build; the kernel's built-in Rust keeps them.
nvme_bench_nochecks() {
	NOCHECKS_KO="$REPO/build/bench/$1-nochecks.ko"
	# Kbuild rebuilds on changed flags: the next build of the stage is
	# checked again.
	nvme_bench_build "$NOCHECKS_KO" -Coverflow-checks=n
}
