# What counts as a broken kernel, shared by the test library (lib.sh) and the
# guest runner (guest-run.sh), so that both judge by the same rules.
# shellcheck shell=bash

# Kernel log lines that mean the module under test broke the kernel.
RKW_BAD='WARNING:|BUG:|Oops|general protection|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|rcu_.*stall|Kernel panic|kernel BUG|refcount_t:|list_(add|del) corruption|unreferenced object|Rust panic|panicked at'

# log_since MARK: the kernel log after the line MARK, with timestamps.
log_since() {
	dmesg | sed -n "/$1/,\$p" | sed '1d'
}

# bad_taint: the kernel's taint flags, less those that mean no trouble:
# O (4096, out-of-tree module) and E (8192, unsigned module). 0 is healthy.
bad_taint() { echo $(($(cat /proc/sys/kernel/tainted) & ~(4096 | 8192))); }
