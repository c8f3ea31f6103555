// SPDX-License-Identifier: GPL-2.0

//! Stage 02: module parameters, checked at load time.
//!
//! How to run: `make run STEP=02`, then in the VM for example
//! `rmmod rparams; insmod build/modules-fast/steps/02-params/rparams.ko queue_depth=100`
//! (refused: not a power of two) or `... queue_depth=256 nr_queues=8`.

use kernel::prelude::*;

mod config;
use config::Config;

// ANCHOR: module
module! {
    type: RParams,
    name: "rparams",
    authors: ["rust-kernel-workshop"],
    description: "Stage 02: module parameters and errors",
    license: "GPL",
    params: {
        queue_depth: u32 {
            default: 64,
            description: "Entries per queue: a power of two, 2..=4096",
        },
        nr_queues: u32 {
            default: 4,
            description: "Number of queues, 1..=64",
        },
        verbose: bool {
            default: false,
            description: "Log every queue's slot range",
        },
    },
}
// ANCHOR_END: module

/// The module's state: the configuration it was loaded with.
struct RParams {
    config: Config,
}

// ANCHOR: init
impl kernel::Module for RParams {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let depth = module_parameters::queue_depth.value();
        let queues = module_parameters::nr_queues.value();

        // A bad value makes insmod fail with EINVAL: nothing stays loaded,
        // and the log says which value was wrong and why.
        let config = Config::new(depth, queues).map_err(|e| {
            pr_err!("{}={} refused: {}\n", e.param(), e.value(), e.reason());
            EINVAL
        })?;

        pr_info!(
            "{} queues of {} entries (2^{}), {} bytes of rings\n",
            config.queues(),
            config.depth(),
            config.depth_shift(),
            config.ring_bytes()
        );
        if module_parameters::verbose.value() {
            for q in 0..config.queues() {
                let start = q * config.queue_bytes();
                pr_info!(
                    "queue {}: ring bytes {}..{}\n",
                    q,
                    start,
                    start + config.queue_bytes()
                );
            }
        }
        Ok(RParams { config })
    }
}
// ANCHOR_END: init

impl Drop for RParams {
    fn drop(&mut self) {
        pr_info!("unloaded ({} queues)\n", self.config.queues());
    }
}
