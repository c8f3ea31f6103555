#!/bin/bash
# Regenerate the kernel reports quoted by the book's debugging chapter
# (book/src/captures/debug-NAME.txt) from the bugs in tests/debugging/NAME.patch.
#
# Usage: capture-debug-examples.sh [NAME...]    (default: every patch)
# Environment: RKW_DEBUG_WORK=dir (default build/debug-examples): where the
#   broken modules are built and the VM logs are kept.
#
# Each patch breaks one solution stage on purpose. Its header says how to
# show the bug (lines before the diff; `patch` ignores them):
#   Stage: 01-hello           the solution the patch applies to
#   Flavour: fast|debug       the kernel to boot (debug: KASAN, lockdep)
#   Run: insmod $KO && ...    what the guest runs ($KO: the broken module)
#   From: REGEX               the capture starts at the first kernel message
#   To: REGEX                 matching From, and ends at the next one
#                             matching To (both without the [ time] prefix)
#   Decode: yes               also keep objdump, addr2line and the kernel's
#                             decode_stacktrace.sh on the faulting RIP
#                             (debug-NAME-objdump.txt, -addr2line.txt,
#                             -decode.txt)
#   Demangle: yes             also keep the capture with its Rust symbols
#                             demangled (debug-NAME-demangled.txt)
# For each patch: copy solutions/STAGE to WORK/NAME/steps/STAGE, apply the
# patch, build the module for that flavour (and once more with debug info,
# KRUSTFLAGS=-g, for addr2line: the code is the same), boot the VM, run the
# commands, and cut the report out of dmesg. The capture is the kernel's
# text as it was printed, lines left out around it, none changed.
# Not run by make test: each bug is one VM boot (under TCG: 5-15 s on the
# fast kernel, 35-50 s on the debug kernel; all five bugs: about 4 min).
set -euo pipefail
. "$(dirname "$0")/common.sh"

WORK=${RKW_DEBUG_WORK:-$REPO/build/debug-examples}
OUT="$REPO/book/src/captures"
mkdir -p "$WORK" "$OUT"

header() { sed -n "s/^$1: //p" "$2" | head -1; } # header FIELD PATCH

# kernel_messages FROM TO < dmesg: the lines from the first message matching
# FROM to the next matching TO, both included.
kernel_messages() {
	awk -v from="$1" -v to="$2" '
		{ msg = $0; sub(/^\[ *[0-9]+\.[0-9]+\] /, "", msg) }
		!on && msg ~ from { on = 1; print; next }
		on { print; if (msg ~ to) exit }'
}

# decode NAME KDIR KO KO_WITH_DEBUG_INFO CAPTURE: the instructions around
# the RIP of the capture (objdump), its source line (addr2line), and what the
# kernel's decode_stacktrace.sh makes of the report.
decode() {
	local name=$1 kdir=$2 ko=$3 kog=$4 cap=$5 rip sym off start line a src
	rip=$(grep -m1 -oE 'RIP: 0010:[^ ]+\+0x[0-9a-f]+/0x[0-9a-f]+' "$cap") ||
		die "$name: no RIP in a module in the capture"
	rip=${rip#RIP: 0010:}
	sym=${rip%%+*}
	off=${rip#*+}
	off=${off%%/*}
	# In a .ko, objdump's and addr2line's addresses are offsets in its
	# .text: the function's own (nm) plus the offset in it.
	start=$(nm "$ko" | awk -v s="$sym" '$3 == s { print $1 }')
	[ -n "$start" ] || die "$name: $sym is not in $ko"
	local at=$((16#$start + off))
	{
		echo "\$ objdump -dr --disassemble=$sym ${ko#"$REPO"/}"
		echo "  ... (the lines around $sym+$off)"
		objdump -dr --disassemble="$sym" "$ko" | while IFS= read -r line; do
			[[ "$line" =~ ^[[:space:]]*([0-9a-f]+): ]] || continue
			a=$((16#${BASH_REMATCH[1]}))
			[ $a -lt $((at - 24)) ] || [ $a -gt $((at + 12)) ] || printf '%s\n' "$line"
		done
	} >"$OUT/debug-$name-objdump.txt"
	{
		printf '$ llvm-addr2line%s -f -i -C -e %s 0x%x\n' "$LLVM_SUFFIX" "${kog#"$REPO"/}" "$at"
		llvm-addr2line"$LLVM_SUFFIX" -f -i -C -e "$kog" "$(printf '0x%x' "$at")"
	} >"$OUT/debug-$name-addr2line.txt"
	# The kernel has no debug info (CONFIG_DEBUG_INFO_NONE), the module
	# built with -g has: kept are the RIP line, the decoded Code: line and
	# the call trace.
	src=$(readlink -f "$kdir/source")
	"$src/scripts/decode_stacktrace.sh" "$kdir/vmlinux" "$src" "$(dirname "$kog")" \
		<"$cap" >"$WORK/$name/decoded.txt" 2>&1
	{
		echo "\$ scripts/decode_stacktrace.sh vmlinux <kernel source> <folder of the -g rhello.ko> < debug-$name.txt"
		grep -m1 'RIP: 0010:' "$WORK/$name/decoded.txt"
		sed -n '/^All code$/,/^Code starting with/p' "$WORK/$name/decoded.txt" | sed '$d'
		sed -n '/Call Trace:/,/<\/TASK>/p' "$WORK/$name/decoded.txt"
	} >"$OUT/debug-$name-decode.txt"
}

if [ $# -eq 0 ]; then
	set -- "$REPO"/tests/debugging/*.patch
fi
for arg in "$@"; do
	name=$(basename "$arg" .patch)
	patch=$REPO/tests/debugging/$name.patch
	[ -f "$patch" ] || die "no bug called $name (see tests/debugging/)"
	stage=$(header Stage "$patch") flavour=$(header Flavour "$patch")
	run=$(header Run "$patch") from=$(header From "$patch") to=$(header To "$patch")
	[ -n "$stage" ] && [ -n "$flavour" ] && [ -n "$run" ] && [ -n "$from" ] && [ -n "$to" ] ||
		die "$patch: the header needs Stage, Flavour, Run, From and To"
	module=$(stage_env "$stage" MODULE)
	kdir=$(current_kdir "$flavour")
	[ -n "$kdir" ] && [ -f "$kdir/Module.symvers" ] || die "no $flavour kernel yet: run 'make setup' first"

	say "$name: solutions/$stage with tests/debugging/$name.patch, on the $flavour kernel"
	dir=$WORK/$name
	rm -rf "$dir"
	mkdir -p "$dir/steps"
	cp "$REPO/Kbuild" "$dir/"
	cp -r "$REPO/solutions/$stage" "$dir/steps/"
	patch -s -p1 -d "$dir/steps/$stage" <"$patch"
	# shellcheck disable=SC2046
	make -C "$kdir" M="$dir" MO="$dir/out" STAGE_DIR="steps/$stage" $(kmake_args) modules \
		>"$dir/build.log" 2>&1 || die "$name does not build (see $dir/build.log)"
	# shellcheck disable=SC2046
	KRUSTFLAGS=-g make -C "$kdir" M="$dir" MO="$dir/out-g" STAGE_DIR="steps/$stage" $(kmake_args) modules \
		>"$dir/build-g.log" 2>&1 || die "$name does not build with -g (see $dir/build-g.log)"
	ko=$dir/out/steps/$stage/$module.ko

	start=$(date +%s)
	RKW_FLAVOUR=$flavour "$REPO/scripts/vm.sh" \
		--exec "KO=$ko; ( $run ); echo RKW-DMESG-BEGIN; dmesg" >"$dir/vm.log" 2>&1 || true
	note "VM run: $(($(date +%s) - start)) s (log: ${dir#"$REPO"/}/vm.log)"

	cap="$OUT/debug-$name.txt"
	awk 'on; /^RKW-DMESG-BEGIN$/ { on = 1 }' "$dir/vm.log" | kernel_messages "$from" "$to" >"$cap.new"
	[ -s "$cap.new" ] || {
		rm -f "$cap.new"
		die "$name: no kernel message matches '$from' (see $dir/vm.log)"
	}
	mv "$cap.new" "$cap"
	note "${cap#"$REPO"/}: $(wc -l <"$cap") lines"
	if [ "$(header Demangle "$patch")" = yes ]; then
		{
			echo "\$ llvm-cxxfilt$LLVM_SUFFIX < debug-$name.txt"
			"llvm-cxxfilt$LLVM_SUFFIX" <"$cap"
		} >"$OUT/debug-$name-demangled.txt"
		note "${OUT#"$REPO"/}/debug-$name-demangled.txt"
	fi
	if [ "$(header Decode "$patch")" = yes ]; then
		decode "$name" "$kdir" "$ko" "$dir/out-g/steps/$stage/$module.ko" "$cap"
		note "${OUT#"$REPO"/}/debug-$name-{objdump,addr2line,decode}.txt"
	fi
done
