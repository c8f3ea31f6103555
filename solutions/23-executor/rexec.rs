// SPDX-License-Identifier: GPL-2.0

//! Stage 23: an async executor on a workqueue.
//!
//! `executor.rs` runs futures as work items on a workqueue of the module's
//! own (`queue.rs`), `waker.rs` builds their wakers over the kernel's `Arc`,
//! and `task_state.rs` keeps each task's state; `workloads.rs` starts the
//! executor and shuts it down at `rmmod`. This file loads one workload onto
//! the executor and logs what it did:
//!
//! - `tasks=N`: N short tasks, each yields once and returns `i * i`; one task
//!   awaits them all and logs the sum.
//!
//! How to run: `make run STEP=23` loads the module with its defaults; then,
//! in the VM (its shell starts in the repository), for example
//! `rmmod rexec; insmod build/modules-fast/steps/23-executor/rexec.ko tasks=5000 workers=1`
//! and `dmesg | tail`.

use core::{
    sync::atomic::{
        AtomicU32,
        Ordering, //
    }, //
};
use kernel::{
    prelude::*,
    sync::Arc,
    time::{
        Instant,
        Monotonic, //
    }, //
};

mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
mod waker;
#[path = "../../solutions/lib/exec/workloads.rs"]
mod workloads;

use executor::{
    yield_now,
    Executor, //
};
use workloads::Workloads;

module! {
    type: RExecModule,
    name: "rexec",
    authors: ["rust-kernel-workshop"],
    description: "Stage 23: an async executor on a workqueue",
    license: "GPL",
    params: {
        tasks: u32 {
            default: 1000,
            description: "Short tasks to spawn and join (0..=100000)",
        },
        workers: u32 {
            default: 2,
            description: "Work items the executor runs at once (1..=64)",
        },
    },
}

/// A progress line each time this many short tasks are spawned, and finished.
const PROGRESS_EVERY: u32 = 1000;

// ANCHOR: many
/// Spawns `n` short tasks, awaits each one's output, and logs the sum.
async fn many_tasks(executor: Arc<Executor>, n: u32) -> Result {
    let start = Instant::<Monotonic>::now();
    let done = Arc::new(AtomicU32::new(0), GFP_KERNEL)?;
    let mut handles = KVec::with_capacity(n as usize, GFP_KERNEL)?;
    for i in 0..n {
        let done = done.clone();
        let handle = executor.spawn(async move {
            // Give the worker to the others once, to be woken and polled again.
            yield_now().await;
            // Progress, so that a test that waits can tell a slow machine
            // (the count still moves) from a lost wakeup (it stops).
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if finished % PROGRESS_EVERY == 0 {
                pr_info!("progress: {} of {} tasks done\n", finished, n);
            }
            u64::from(i) * u64::from(i)
        })?;
        handles.push(handle, GFP_KERNEL)?;
        // Spawning is progress too: a waiting test can then tell tasks that
        // are spawned but never finish (a lost wakeup) from a slow machine.
        if (i + 1) % PROGRESS_EVERY == 0 {
            pr_info!("progress: {} of {} tasks spawned\n", i + 1, n);
        }
    }
    let mut sum: u64 = 0;
    // (`pop`, not a `for` loop: the kernel's `IntoIter` is not `Send`.)
    while let Some(handle) = handles.pop() {
        sum = sum.wrapping_add(handle.await);
    }
    pr_info!(
        "{} tasks done, sum of squares {} ({} ms)\n",
        n,
        sum,
        start.elapsed().as_millis()
    );
    Ok(())
}
// ANCHOR_END: many

// ANCHOR: module
/// The module: owns the executor until unload.
struct RExecModule {
    _workloads: Workloads,
}

impl kernel::Module for RExecModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let tasks = module_parameters::tasks.value();
        let workers = module_parameters::workers.value();
        if tasks > 100_000 || !(1..=64).contains(&workers) {
            pr_err!("out of range: tasks<=100000, workers 1..=64\n");
            return Err(EINVAL);
        }
        // From here on, an error drops `workloads`, which shuts the executor
        // down.
        let workloads = Workloads::start(c"rexec", workers)?;
        if tasks > 0 {
            workloads.spawn_logged("tasks", many_tasks(workloads.executor(), tasks))?;
        }
        pr_info!("executor started: {} workers, {} tasks\n", workers, tasks);
        Ok(Self {
            _workloads: workloads,
        })
    }
}
// ANCHOR_END: module
