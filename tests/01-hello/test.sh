#!/bin/bash
# Stage 01 test (runs in the VM): load rhello, read its greeting, unload it,
# read its farewell; then load and unload it twice more.
. "$(dirname "$0")/../lib.sh"

hint "init must return Ok(RHello { numbers }) instead of Err(ENOSYS)"
if load; then
	hint "pr_info!(\"Hello from Rust!\\n\") at the start of init"
	expect_dmesg "greets when loaded" '^rhello: Hello from Rust!$'
	hint "push 72, 108 and 200, then log numbers.len()"
	expect_dmesg "keeps 3 numbers in kernel memory" '^rhello: Keeping 3 numbers in kernel memory$'

	mark
	unload
	hint "Drop::drop logs the numbers with {:?} and their sum"
	expect_dmesg "shows its numbers when unloaded" '^rhello: My numbers are \[72, 108, 200\] \(sum 380\)$'
	hint "the last line of Drop::drop"
	expect_dmesg "says goodbye when unloaded" '^rhello: Goodbye from Rust!$'
	reload_twice
fi
finish
