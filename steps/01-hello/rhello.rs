// SPDX-License-Identifier: GPL-2.0

//! Stage 01: a module that says hello.
//!
//! How to run: `make run STEP=01` boots the workshop kernel in a VM and loads
//! this module; `dmesg` shows its greeting, `rmmod rhello` its farewell.
//! Check your work with `make check STEP=01`.

use kernel::prelude::*;

// ANCHOR: module
module! {
    type: RHello,
    name: "rhello",
    authors: ["rust-kernel-workshop"],
    description: "Stage 01: hello from Rust",
    license: "GPL",
}
// ANCHOR_END: module

// ANCHOR: state
/// The module's state: it lives from a successful `init` until `drop`.
struct RHello {
    /// Numbers kept in kernel memory while the module is loaded.
    numbers: KVec<u32>,
}
// ANCHOR_END: state

// ANCHOR: init
impl kernel::Module for RHello {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // TODO (exercise 1): Say "Hello from Rust!" with `pr_info!`, then build
        // a `KVec<u32>` holding 72, 108 and 200 (`push` can fail: use `?`), log
        // "Keeping 3 numbers in kernel memory" (use `len()`), and return the
        // module state `RHello { numbers }`.
        // Until then, loading fails with "Function not implemented".
        // Tests: "insmod rhello" (until it loads, the stage stops there),
        // "greets when loaded" and "keeps 3 numbers in kernel memory".
        Err(ENOSYS)
    }
}
// ANCHOR_END: init

// ANCHOR: drop
impl Drop for RHello {
    fn drop(&mut self) {
        // TODO (exercise 2): Log "My numbers are [72, 108, 200] (sum 380)" (the
        // `{:?}` format prints a KVec like a slice), then "Goodbye from Rust!".
        // Tests: "shows its numbers when unloaded" and "says goodbye when
        // unloaded".
    }
}
// ANCHOR_END: drop
