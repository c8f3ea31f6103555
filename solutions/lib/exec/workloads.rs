// SPDX-License-Identifier: GPL-2.0

//! The executor a demo module owns: started in `init`, shut down at unload.
//!
//! Stages 23 and 24 load different workloads onto the same executor; what
//! they share around them (starting it, spawning a workload as a task that
//! logs its error, shutting it down at `rmmod`) is here, given.

use crate::executor::Executor;
use core::future::Future;
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// A module's executor. Dropping it cancels the tasks left and waits until
/// no module code runs, then logs what the executor did.
pub(crate) struct Workloads {
    executor: Arc<Executor>,
}

impl Workloads {
    /// Starts an executor whose tasks run on at most `workers` threads.
    pub(crate) fn start(name: &'static CStr, workers: u32) -> Result<Self> {
        Ok(Self {
            executor: Executor::new(name, workers)?,
        })
    }

    /// The executor, for workloads that spawn tasks of their own.
    pub(crate) fn executor(&self) -> Arc<Executor> {
        self.executor.clone()
    }

    /// Runs a workload as a task, logging its error if it fails.
    pub(crate) fn spawn_logged<F>(&self, what: &'static str, workload: F) -> Result
    where
        F: Future<Output = Result> + Send + 'static,
    {
        let handle = self.executor.spawn(async move {
            if let Err(e) = workload.await {
                pr_err!("{} failed: {:?}\n", what, e);
            }
        })?;
        // Detached: nobody awaits the output, the task goes on.
        drop(handle);
        Ok(())
    }
}

// ANCHOR: drop
impl Drop for Workloads {
    fn drop(&mut self) {
        let cancelled = self.executor.shutdown();
        pr_info!(
            "executor stopped: {} tasks spawned, {} cancelled\n",
            self.executor.spawned(),
            cancelled
        );
    }
}
// ANCHOR_END: drop
