# What counts as a broken kernel, shared by the test library (lib.sh) and the
# guest runner (guest-run.sh), so that both judge by the same rules.
# shellcheck shell=bash

# Kernel log lines that mean the module under test broke the kernel.
RKW_BAD='WARNING:|BUG:|Oops|general protection|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|rcu_.*stall|Kernel panic|kernel BUG|refcount_t:|list_(add|del) corruption|unreferenced object|Rust panic|panicked at|enqueued on deprecated workqueue'

# log_since MARK [bare]: the kernel log after the line MARK, with timestamps,
# or without them if the second argument is "bare". (One awk, not two or
# three seds: every process costs about 0.15 s under TCG on the debug
# kernel, and the tests read the log hundreds of times.)
log_since() {
	dmesg | awk -v mark="$1" -v bare="${2:-}" '
		seen { if (bare == "bare") sub(/^\[ *[0-9.]*\] /, ""); print; next }
		index($0, mark) { seen = 1 }'
}

# bad_taint: the kernel's taint flags, less those that mean no trouble:
# O (4096, out-of-tree module) and E (8192, unsigned module). 0 is healthy.
# (RKW_TAINTED_FILE: a fake of /proc/sys/kernel/tainted, for
# tests/harness/test.sh, which runs guest-run.sh on the host.)
TAINTED_FILE=${RKW_TAINTED_FILE:-/proc/sys/kernel/tainted}
bad_taint() {
	local t
	read -r t <"$TAINTED_FILE"
	echo $((t & ~(4096 | 8192)))
}

# taint_report: the kernel's own report of what tainted it, for the log of
# a boot that skips its runs for a taint (the console is not kept): from
# dmesg's first line of trouble (RKW_BAD, "Bad page", a "Call Trace"), at
# most 40 lines, each behind "#   "; else dmesg's last 10 lines.
taint_report() {
	local log first
	log=$(dmesg 2>/dev/null | sed 's/^\[ *[0-9.]*\] //')
	first=$(grep -nE "$RKW_BAD|Bad page|Call Trace" <<<"$log" | head -1 | cut -d: -f1)
	if [ -n "$first" ]; then
		echo "# the kernel's report (dmesg, from its first line of trouble):"
		tail -n "+$first" <<<"$log" | head -40 | sed 's/^/#   /'
	else
		echo "# no BUG, WARNING or Call Trace in dmesg; its last lines:"
		tail -10 <<<"$log" | sed 's/^/#   /'
	fi
}

# ---- leaks (kmemleak) --------------------------------------------------------
# Boots of stages with KMEMLEAK=yes have kmemleak on (scripts/test.sh).
KMEMLEAK_FILE=/sys/kernel/debug/kmemleak
kmemleak_on() { grep -qw kmemleak=on /proc/cmdline && [ -w "$KMEMLEAK_FILE" ]; }
LEAK_CHECK="kmemleak: nothing the module allocated is left after rmmod"
LEAK_HINT="something the module allocated was never freed: an Arc reference never dropped (a waker's?), a forgotten KBox"

# kmemleak_scan: two scans, then the report on stdout. One scan never
# reports an object allocated since the last scan: a new object's checksum
# starts at ~0, so the first scan that sees it finds it "modified since the
# previous scan" and paints it gray for that scan (update_checksum in
# mm/kmemleak.c); only the next scan can flag it (OBJECT_SUSPECT) and, after
# its own confirmation pass, report it (min_unref_scans is 1 without
# CONFIG_DEBUG_KMEMLEAK_VERBOSE, as here). Nor is an object younger than
# 5 s at the start of a scan reported (MSECS_MIN_AGE; the documentation's
# 1000 is out of date). A scan takes 20-40 s on the debug kernel under TCG.
# The automatic scans are off (kmemleak_quiet), so these are the only ones.
kmemleak_scan() {
	local first=$SECONDS
	echo scan >"$KMEMLEAK_FILE"
	[ $((SECONDS - first)) -ge 6 ] || sleep 6
	echo scan >"$KMEMLEAK_FILE"
	cat "$KMEMLEAK_FILE"
}

# kmemleak_quiet: forget the leaks reported so far (clear paints them gray;
# what was never reported still can be, hence leaks_of's module and time
# filter) and stop the scanning thread, whose
# 20-40 s scans every 10 minutes would land in the middle of a test and
# (by taking a checksum) decide by chance whether a leak is reported.
kmemleak_quiet() {
	echo scan=off >"$KMEMLEAK_FILE"
	echo clear >"$KMEMLEAK_FILE"
}

# leaks_of MODULE [FROM TO] <REPORT: the report's unreferenced objects that
# MODULE allocated: their backtraces go through module memory (the module
# is gone, so its frames show as bare addresses in the modules area,
# "    0xffffffffa0003e80") or name the module; with FROM and TO, only
# those allocated between these jiffies ("jiffies N" in the report).
leaks_of() {
	awk -v mod="$1" -v b="${2:-}" -v e="${3:-}" '
		function flush() { if (keep && (b == "" || (at >= b + 0 && at <= e + 0))) print block }
		/^unreferenced object/ { flush(); block = $0; keep = 0; at = -1; next }
		{ block = block "\n" $0 }
		/^  comm .*, jiffies [0-9]+/ { at = $NF + 0 }
		/^ +0xffffffff[a-f][0-9a-f]+$/ || index($0, mod) { keep = 1 }
		END { flush() }'
}

# leaks_details LEAKS: what a failed leak check says (leaks_of's output).
leaks_details() {
	echo "$(grep -c '^unreferenced object' <<<"$1") leaked objects; the first:"
	head -25 <<<"$1"
}
