#!/bin/bash
# The workshop kit: the built kernels, their source and the tools, packed on
# one machine and installed on the others, so that a room of laptops does not
# spend 25 minutes each building the same kernels.
#
#   kit.sh pack [FILE]      make kit: pack this machine's cache into FILE
#                           (default build/rkw-kit-<kernel version>.tar.zst)
#                           and FILE.sha256
#   kit.sh install FILE     make kit-install FILE=...: check FILE against
#                           FILE.sha256 and its manifest against this machine,
#                           then unpack it into the cache; no network
#   kit.sh info FILE        print the kit's manifest
#   kit.sh packages         the Debian packages to install first (one line)
#
# A kit carries, from the cache ($CACHE):
#   kernel/<key>/   the fast and the debug kernel build trees, without what
#                   neither an out-of-tree module build nor a VM boot reads:
#                   objects, archives, vmlinux images, Kbuild's .cmd files
#   src/linux-source-<version>/   the whole source tree they were built from
#                   (an O= module build reads its Makefiles, scripts, headers
#                   and rust/; `make setup` and `make rustdoc` want the rest)
#   tools/bindgen-*, tools/mdbook-*, venv-virtme-ng-*/   as `make setup` built
#                   them (crates.io and PyPI are not needed where it goes)
# and not the KVM-or-TCG decision ($CACHE/accel): that is per machine, and
# the install probes it again. The manifest (the archive's first member) says
# what the kernels need of a machine: the same rustc and clang, Debian
# release and architecture, and the same config fragments (the kernel_key
# computed here).
set -euo pipefail
. "$(dirname "$0")/common.sh"

KIT_FORMAT=1
# zstd, measured against xz on the fast kernel's part of a kit (270 MB of
# tar, 2 cores): zstd -3 68 MB in 3.4 s, unpacks in 1.2 s; xz -6 50 MB in
# 195 s, unpacks in 5.2 s. --long lets zstd see that the two flavours share
# most of their bytes (the rust/*.rmeta and *.so are alike). The whole kit
# (2.2 GB of tar): zstd -3 --long 352 MB in 16 s, unpacked in 3.6 s; without
# --long 377 MB; zstd -9 --long 309 MB in 84 s; xz -3 299 MB in 629 s,
# unpacked in 26 s.
ZSTD_PACK=(zstd -q -T0 "-${RKW_KIT_ZSTD_LEVEL:-3}" --long=27)
ZSTD_UNPACK=(zstd -q -d -c --long=27)

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

debian_version() { cat /etc/debian_version 2>/dev/null || echo none; }

# The files kernel_key hashes for FLAVOUR, relative to the repository.
key_inputs() { # key_inputs FLAVOUR
	local f
	for f in $(fragments "$1") "$REPO/scripts/kernel-config.sh"; do echo "${f#"$REPO"/}"; done
}

# A kernel build tree, less what no module build or VM boot reads (measured
# with strace over every stage's build, with clippy, and a boot with NVMe):
# objects and archives (*.o *.a, rust/host/*.rlib), the vmlinux images, the
# link's .tmp_* files, Kbuild's .cmd and .d files, and the HTML of a
# `make rustdoc` (Documentation/output: 480 MB, 47000 files). Without the
# objects, make rustdoc in an installed tree first rebuilds the Rust crates
# (3-4 min on 2 cores, measured; modules built after it still load). Kbuild
# would rebuild them anyway: the .cmd files name the packing machine's paths.
# NUL-separated.
kernel_files() { # kernel_files DIR (relative to the current directory)
	find "$1" \( -path "$1/Documentation" -o -name '*.o' -o -name '*.a' -o -name '*.rlib' -o -name 'vmlinux*' \
		-o -name '.tmp_*' -o -name '.*.cmd' -o -name '.*.d' -o -name '.vmlinux.export.c' \
		-o -name '.config.old' \) -prune -o -print0
}

# The tools this clone uses from $TOOLS (crates.io builds: bindgen, mdbook,
# ...): every variable of common.sh that names a program there, as
# tools/NAME-VERSION.
tool_dirs() {
	local v p
	for v in $(compgen -A variable); do
		p=${!v-}
		[[ "$p" == "$TOOLS"/*/bin/* ]] || continue
		p=${p#"$CACHE"/}
		echo "${p%%/bin/*}"
	done | sort -u
}

# manifest_get MANIFEST_TEXT KEY: the value of KEY= (keys hold / and .)
manifest_get() {
	awk -v k="$2" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' <<<"$1"
}

need_zstd() {
	command -v zstd >/dev/null || die "zstd is missing (the kit is a .tar.zst): sudo apt-get install zstd"
}

# ---- pack ----------------------------------------------------------------------
pack() {
	local out=${1:-} kver ksrc f kd t0 stage list size
	[ -z "${KDIR:-}" ] || die "KDIR is set: a kit carries the workshop's own kernels, not yours (unset KDIR)"
	need_zstd
	kver=$(cat "$CACHE/src/current-version" 2>/dev/null) || die "no workshop kernel in $CACHE yet: run 'make setup' first"
	ksrc="src/linux-source-$kver"
	[ -f "$CACHE/$ksrc/.rkw-extracted" ] || die "the kernel source $CACHE/$ksrc is not complete: run 'make setup' first"
	local flavours=()
	for f in fast debug; do
		kd=$(current_kdir "$f")
		if [ -z "$kd" ]; then
			note "no $f kernel in the cache: the kit will not carry one (make setup builds both)"
			continue
		fi
		[ -f "$kd/.rkw-complete" ] || die "the $f kernel build in $kd is not finished: run 'make setup' first"
		[ "$kd" = "$CACHE/kernel/$(kernel_key "$kver" "$f")" ] ||
			die "the $f kernel in the cache ($kd) was built for another config or rustc than this clone's: run 'make setup', then 'make kit'"
		flavours+=("$f")
	done
	[ ${#flavours[@]} -gt 0 ] || die "no kernel to pack: run 'make setup' first"
	[ -x "$BINDGEN" ] && venv_ok || die "bindgen or virtme-ng is not in the cache: run 'make setup' first"
	local tools=("${VENV#"$CACHE"/}") t
	for t in $(tool_dirs); do
		if [ -n "$(find "$CACHE/$t/bin" -maxdepth 1 -type f -perm -u+x 2>/dev/null | head -1)" ]; then
			tools+=("$t")
		else
			note "no $t in the cache: the kit will not carry it (the first make that needs it installs it, from crates.io)"
		fi
	done
	[ -n "$out" ] || out="$REPO/build/rkw-kit-${kver//[~+]/_}.tar.zst"
	mkdir -p "$(dirname "$out")"
	out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

	say "packing a kit of the ${flavours[*]} kernels into $out"
	t0=$(date +%s.%N)
	stage=$(mktemp -d "${TMPDIR:-/tmp}/rkw-kit-pack.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$stage' '$out.partial'" EXIT
	list="$stage/files"
	(
		cd "$CACHE"
		for f in "${flavours[@]}"; do kernel_files "kernel/$(basename "$(current_kdir "$f")")"; done
		find "${tools[@]}" -print0
		# The source tree, less any object a build in it may have left.
		find "$ksrc" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' \) -prune -o -print0
	) >"$list"

	# The manifest: what the kernels need of a machine, then what is in here.
	{
		echo "# rust-kernel-workshop kit, made by scripts/kit.sh pack"
		echo "KIT_FORMAT=$KIT_FORMAT"
		echo "PACKED_AT=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "PACKED_ON=$(hostname 2>/dev/null || echo unknown)"
		echo "PACKED_FROM_COMMIT=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)"
		echo "PACKED_CACHE=$CACHE"
		echo "ARCH=$(uname -m)"
		echo "DEBIAN_VERSION=$(debian_version)"
		echo "RUSTC=$("$RUSTC" --version)"
		echo "RUSTC_WEB_DEB=$(dpkg-query -W -f='${Version}' rustc-web 2>/dev/null || echo unknown)"
		echo "CLANG=$(clang_version)"
		echo "BINDGEN=$("$BINDGEN" --version)"
		echo "VIRTME_NG_VERSION=$VIRTME_NG_VERSION"
		echo "KERNEL_VERSION=$kver"
		echo "FLAVOURS=${flavours[*]}"
		for f in "${flavours[@]}"; do echo "KERNEL_KEY_$f=$(basename "$(current_kdir "$f")")"; done
		echo "CONTENTS=$ksrc $(for f in "${flavours[@]}"; do echo "kernel/$(basename "$(current_kdir "$f")")"; done | tr '\n' ' ')${tools[*]}"
		for f in $(for fl in "${flavours[@]}"; do key_inputs "$fl"; done | sort -u); do
			echo "SHA256 $f=$(sha256sum "$REPO/$f" | cut -d' ' -f1)"
		done
		echo "UNPACKED_BYTES=$(cd "$CACHE" && tr '\0' '\n' <"$list" | xargs -d '\n' stat -c '%s' | awk '{ s += $1 } END { printf "%d\n", s }')"
	} >"$stage/MANIFEST"

	# MANIFEST first, so that install reads it without unpacking the rest.
	tar -cf - -C "$stage" MANIFEST -C "$CACHE" --no-recursion --null -T "$list" |
		"${ZSTD_PACK[@]}" -o "$out.partial" ||
		die "packing failed (is there room in $(dirname "$out")? df -h $(dirname "$out"))"
	mv -f "$out.partial" "$out"
	(cd "$(dirname "$out")" && sha256sum "$(basename "$out")" >"$(basename "$out").sha256.partial" &&
		mv -f "$(basename "$out").sha256.partial" "$(basename "$out").sha256")
	trap - EXIT
	rm -rf "$stage"
	size=$(stat -c %s "$out")
	say "kit: $out ($(numfmt --to=iec-i --suffix=B "$size"), packed in $(printf '%.0f' "$(echo "$(date +%s.%N) - $t0" | bc)") s)"
	note "checksum: $out.sha256 (copy both files)"
	note "on each laptop: make kit-install FILE=/path/to/$(basename "$out")"
}

# ---- install -------------------------------------------------------------------
read_manifest() { # read_manifest FILE: the kit's MANIFEST, read from the front
	# tar stops at the first MANIFEST (--occurrence), which is the first
	# member: zstd then dies of SIGPIPE, which is expected.
	("${ZSTD_UNPACK[@]}" "$1" 2>/dev/null || true) | tar -xOf - --occurrence=1 MANIFEST 2>/dev/null || true
}

# Fix what holds the packing machine's cache path: the kernel trees' Makefile
# (written by the kernel's `make O=`) and `source` link, and the venv's scripts.
relocate() { # relocate TMP KVER OLD_CACHE FLAVOURS...
	local tmp=$1 kver=$2 old=$3 f key kd
	shift 3
	for f in "$@"; do
		key=$(manifest_get "$MANIFEST" "KERNEL_KEY_$f")
		kd="$tmp/kernel/$key"
		[ -f "$kd/Module.symvers" ] || die "the kit has no $f kernel tree (kernel/$key): it is damaged, pack it again"
		cat >"$kd/Makefile" <<-EOF
			# Automatically generated by $CACHE/src/linux-source-$kver/Makefile: don't edit
			export KBUILD_OUTPUT = $CACHE/kernel/$key
			include $CACHE/src/linux-source-$kver/Makefile
		EOF
		ln -sfn "$CACHE/src/linux-source-$kver" "$kd/source"
		touch "$kd/.rkw-complete"
	done
	local venv_rel file
	venv_rel="venv-virtme-ng-$(manifest_get "$MANIFEST" VIRTME_NG_VERSION)"
	[ "$old" = "$CACHE" ] && return 0
	# The venv's scripts start with #!OLD/venv.../bin/python3; pyvenv.cfg
	# and activate* name it too. Text files only, and only those.
	while IFS= read -r file; do
		OLD="$old/$venv_rel" NEW="$CACHE/$venv_rel" perl -pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/g' "$file"
	done < <(grep -rlF -- "$old/$venv_rel" "$tmp/$venv_rel/bin" "$tmp/$venv_rel/pyvenv.cfg" 2>/dev/null || true)
}

# place REL: move TMP/REL to CACHE/REL, unless the one already there is
# complete (then it stays, and ours is dropped).
place() {
	local rel=$1
	[ -e "$TMP/$rel" ] || die "the kit lists $rel but does not hold it: it is damaged, pack it again"
	if [ -e "$CACHE/$rel" ] || [ -L "$CACHE/$rel" ]; then
		if "$(done_check "$rel")" "$CACHE/$rel"; then
			note "already there, kept: $rel"
			return 0
		fi
		# An unfinished one: out of the way (TMP goes, and it with it).
		mv "$CACHE/$rel" "$TMP/.old-$(basename "$rel")"
	fi
	mkdir -p "$(dirname "$CACHE/$rel")"
	mv "$TMP/$rel" "$CACHE/$rel"
	note "installed: $rel"
}
kernel_done() { [ -f "$1/.rkw-complete" ] && [ -f "$1/Module.symvers" ]; }
source_done() { [ -f "$1/.rkw-extracted" ]; }
tool_done() { [ -n "$(find "$1/bin" -maxdepth 1 -type f -perm -u+x 2>/dev/null | head -1)" ]; }
venv_done() { VENV=$1 venv_ok; }
done_check() { # done_check REL: the check that says CACHE/REL is complete
	case "$1" in
	src/*) echo source_done ;;
	kernel/*) echo kernel_done ;;
	tools/*) echo tool_done ;;
	venv-*) echo venv_done ;;
	*) die "the kit holds $1, which this clone does not know: use the same workshop version as the machine that packed it" ;;
	esac
}

write_file() { # write_file PATH CONTENT: atomically
	printf '%s\n' "$2" >"$1.rkw-tmp" && mv -f "$1.rkw-tmp" "$1"
}

install_kit() {
	local file=${1:-} t0 sum want have
	[ -n "$file" ] || die "say which kit: make kit-install FILE=/path/to/rkw-kit-....tar.zst"
	[ -f "$file" ] || die "no such file: $file"
	need_zstd
	t0=$(date +%s.%N)
	sum="$file.sha256"
	[ -f "$sum" ] || die "$sum is missing: copy it along with the kit (make kit writes both)"
	say "checking $file"
	want=$(awk '{ print $1; exit }' "$sum")
	have=$(sha256sum "$file" | cut -d' ' -f1)
	[ "$want" = "$have" ] || die "$file does not match its checksum ($sum): it is damaged or was not copied completely. Copy it again."

	MANIFEST=$(read_manifest "$file")
	[ -n "$MANIFEST" ] || die "$file has no manifest: it is not a workshop kit (make kit makes one)"
	local format
	format=$(manifest_get "$MANIFEST" KIT_FORMAT)
	[ "$format" = "$KIT_FORMAT" ] || die "this kit has format ${format:-?}, this clone reads format $KIT_FORMAT: use the same workshop version as the machine that packed it (commit $(manifest_get "$MANIFEST" PACKED_FROM_COMMIT))"

	# What the kernels need of this machine. Every difference is listed,
	# each with what to do; `make setup` always works instead (it builds
	# this machine's own kernels, 20-36 min).
	local kver flavours f bad=() k_arch k_deb here_deb k_rustc here_rustc key_here key_kit p
	kver=$(manifest_get "$MANIFEST" KERNEL_VERSION)
	read -ra flavours <<<"$(manifest_get "$MANIFEST" FLAVOURS)"
	k_arch=$(manifest_get "$MANIFEST" ARCH)
	[ "$k_arch" = "$(uname -m)" ] ||
		bad+=("architecture: the kit is for $k_arch, this machine is $(uname -m). The workshop runs on x86_64 only.")
	k_deb=$(manifest_get "$MANIFEST" DEBIAN_VERSION)
	here_deb=$(debian_version)
	[ "${k_deb%%.*}" = "${here_deb%%.*}" ] ||
		bad+=("Debian: the kit was packed on Debian ${k_deb%%.*} ($k_deb), this machine has $([ "$here_deb" = none ] && echo "no /etc/debian_version (not Debian)" || echo "Debian ${here_deb%%.*} ($here_deb)"). The kernels and tools are built against Debian ${k_deb%%.*}'s libraries: use Debian ${k_deb%%.*} here, or run 'make setup'.")
	k_rustc=$(manifest_get "$MANIFEST" RUSTC)
	if [ ! -x "$RUSTC" ]; then
		bad+=("rustc: $RUSTC is not installed. Install the Debian packages first, then run this again:
      sudo apt-get install --no-install-recommends $(deb_packages)")
	else
		here_rustc=$("$RUSTC" --version)
		[ "$k_rustc" = "$here_rustc" ] ||
			bad+=("rustc: the kit's kernels were built by '$k_rustc' (rustc-web $(manifest_get "$MANIFEST" RUSTC_WEB_DEB)), this machine has '$here_rustc' (rustc-web $(dpkg-query -W -f='${Version}' rustc-web 2>/dev/null || echo '?')). A module loads only into a kernel built by the very same rustc. Bring both machines to the same rustc-web (sudo apt-get update && sudo apt-get install rustc-web; Debian keeps only the newest), then 'make setup' and 'make kit' again on the machine that packs; or run 'make setup' here.")
		for f in "${flavours[@]}"; do
			key_kit=$(manifest_get "$MANIFEST" "KERNEL_KEY_$f")
			key_here=$(kernel_key "$kver" "$f")
			[ "$key_kit" != "$key_here" ] || continue
			# The key ends in -rustcHASH-ccHASH: a rustc apart was said
			# above; a C compiler apart is said here.
			local rk=${key_kit##*-rustc} rh=${key_here##*-rustc}
			[ "${rk%%-cc*}" = "${rh%%-cc*}" ] || continue
			if [ "${rk##*-cc}" != "${rh##*-cc}" ]; then
				bad+=("clang: the kit's $f kernel was built by '$(manifest_get "$MANIFEST" CLANG)', this machine has '$(v=$(clang_version) && echo "${v:-no clang$LLVM_SUFFIX}")'. The kernel inlines C into its Rust code (CONFIG_RUST_INLINE_HELPERS), so a module must be built by the same clang: bring both machines to the same clang$LLVM_SUFFIX (sudo apt-get update && sudo apt-get install clang$LLVM_SUFFIX), or run 'make setup' here.")
				continue
			fi
			local diff=()
			for p in $(key_inputs "$f"); do
				[ "$(manifest_get "$MANIFEST" "SHA256 $p")" = "$(sha256sum "$REPO/$p" 2>/dev/null | cut -d' ' -f1)" ] || diff+=("$p")
			done
			bad+=("config: the $f kernel was configured from other files than this clone's: ${diff[*]:-the config fragments} $([ ${#diff[@]} -eq 1 ] && echo differs || echo differ). Check out the commit the kit was packed from ($(manifest_get "$MANIFEST" PACKED_FROM_COMMIT)) or undo your edits; or run 'make setup' here.")
		done
	fi
	if [ ${#bad[@]} -gt 0 ]; then
		printf '\033[31merror:\033[0m this kit does not fit this machine (%s):\n' "$file" >&2
		printf '  - %s\n' "${bad[@]}" >&2
		echo "Nothing was installed. 'make setup' builds this machine's own kernels instead (20-36 min, needs the network)." >&2
		exit 1
	fi
	local t
	for t in $(tool_dirs) "${VENV#"$CACHE"/}"; do
		[[ " $(manifest_get "$MANIFEST" CONTENTS) " == *" $t "* ]] ||
			note "the kit has no $t (versions.env): the first make that needs it installs it, from the network"
	done

	# Room for it?
	local need avail parent=$CACHE
	need=$(manifest_get "$MANIFEST" UNPACKED_BYTES)
	while [ ! -d "$parent" ]; do parent=$(dirname "$parent"); done
	avail=$(df -P -B1 "$parent" | awk 'NR == 2 { print $4 }')
	[ -z "$need" ] || [ "$avail" -gt $((need + need / 10)) ] ||
		die "not enough disk for the kit in $CACHE: it needs $(numfmt --to=iec-i --suffix=B "$need"), $(numfmt --to=iec-i --suffix=B "$avail") are free"

	say "installing the ${flavours[*]} kernels (Linux $kver) into $CACHE"
	# Installed before (the same kit, or make setup built the same)? Then
	# only the pointers below are written.
	local contents rel all_there=1
	read -ra contents <<<"$(manifest_get "$MANIFEST" CONTENTS)"
	[ ${#contents[@]} -gt 0 ] || die "the kit's manifest lists no contents: it is damaged, pack it again"
	for rel in "${contents[@]}"; do "$(done_check "$rel")" "$CACHE/$rel" || all_there=0; done
	mkdir -p "$CACHE"
	if [ $all_there = 1 ]; then
		note "the kit's kernels, source and tools are all in $CACHE already"
	else
		# Unpacked beside the cache (the same file system), then renamed
		# into it, one folder at a time.
		TMP=$(mktemp -d "$CACHE/.kit-install.XXXXXX")
		trap 'rm -rf "$TMP"' EXIT
		"${ZSTD_UNPACK[@]}" "$file" | tar -xf - -C "$TMP" ||
			die "unpacking $file failed (disk full? df -h $CACHE)"
		relocate "$TMP" "$kver" "$(manifest_get "$MANIFEST" PACKED_CACHE)" "${flavours[@]}"

		for rel in "${contents[@]}"; do place "$rel"; done
		rm -rf "$TMP"
		trap - EXIT
	fi
	# What setup.sh writes when it is done with a kernel.
	mkdir -p "$CACHE/logs"
	write_file "$CACHE/src/current-version" "$kver"
	for f in "${flavours[@]}"; do
		write_file "$CACHE/current-kernel-$f" "$CACHE/kernel/$(manifest_get "$MANIFEST" "KERNEL_KEY_$f")"
	done
	note "installed in $(printf '%.0f' "$(echo "$(date +%s.%N) - $t0" | bc)") s"

	# KVM or TCG is this machine's own question: probe it (unless decided).
	if venv_ok; then
		# shellcheck source=accel.sh
		. "$REPO/scripts/accel.sh"
		accel "${flavours[*]}"
	fi

	# The check of scripts/ensure-setup.sh, for each flavour installed.
	local missing=()
	[ -x "$BINDGEN" ] || missing+=("bindgen $BINDGEN_VERSION")
	[ -x "$MDBOOK" ] || missing+=("mdbook $MDBOOK_VERSION")
	venv_ok || missing+=("virtme-ng $VIRTME_NG_VERSION")
	[ -f "$CACHE/accel" ] || missing+=("the KVM-or-TCG decision")
	for f in "${flavours[@]}"; do
		kernel_done "$(current_kdir "$f")" && [ "$(current_kdir "$f")" = "$CACHE/kernel/$(kernel_key "$kver" "$f")" ] ||
			missing+=("the $f kernel")
	done
	[ ${#missing[@]} -eq 0 ] || note "still missing: ${missing[*]}: the next make run/check/test runs make setup for it"
	say "kit installed in $(printf '%.0f' "$(echo "$(date +%s.%N) - $t0" | bc)") s: try 'make run STEP=01'"
	[[ " ${flavours[*]} " == *" debug "* ]] || note "this kit has no debug kernel: the first make check or make test builds it (10-15 min)"
}

# The Debian packages setup.sh installs (every DEB_* list in it, read from
# there so that there is one list), and zstd for the kit itself.
deb_packages() {
	local v p out=() seen=" "
	eval "$(sed -n '/^DEB_[A-Z_]*=(/,/^)/p' "$REPO/scripts/setup.sh")"
	for v in $(compgen -A variable DEB_); do
		eval "set -- \"\${$v[@]}\""
		for p in "$@"; do
			[[ "$seen" == *" $p "* ]] || out+=("$p")
			seen+="$p "
		done
	done
	[[ "$seen" == *" zstd "* ]] || out+=(zstd)
	[ ${#out[@]} -gt 1 ] || die "cannot read the package lists (DEB_*) of scripts/setup.sh"
	echo "${out[*]}"
}

case "${1:-}" in
pack) pack "${2:-}" ;;
install) install_kit "${2:-}" ;;
info)
	[ -f "${2:-}" ] || die "usage: kit.sh info FILE"
	need_zstd
	read_manifest "$2"
	;;
packages) deb_packages ;;
*) usage ;;
esac
