// SPDX-License-Identifier: GPL-2.0

//! Stage 01: a module that says hello.
//!
//! How to run: `make run STEP=01` boots the workshop kernel in a VM and loads
//! this module; `dmesg` shows its greeting, `rmmod rhello` its farewell.

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
        pr_info!("Hello from Rust!\n");

        // Kernel allocations can fail: `push` returns a `Result`, and `?`
        // hands an `ENOMEM` back to insmod instead of crashing the kernel.
        let mut numbers = KVec::new();
        for n in [72, 108, 200] {
            numbers.push(n, GFP_KERNEL)?;
        }
        pr_info!("Keeping {} numbers in kernel memory\n", numbers.len());

        Ok(RHello { numbers })
    }
}
// ANCHOR_END: init

// ANCHOR: drop
impl Drop for RHello {
    fn drop(&mut self) {
        let sum: u32 = self.numbers.iter().sum();
        pr_info!("My numbers are {:?} (sum {})\n", self.numbers, sum);
        pr_info!("Goodbye from Rust!\n");
    }
}
// ANCHOR_END: drop
