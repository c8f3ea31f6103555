// SPDX-License-Identifier: GPL-2.0

//! Stage 17: an async executor on a workqueue.
//!
//! `executor.rs` runs futures as work items on a workqueue of the module's
//! own (`queue.rs`), `waker.rs` builds their wakers over the kernel's `Arc`,
//! `task_state.rs` keeps each task's state, and `sleep.rs` is a timer future.
//! This file loads a few workloads onto the executor and logs what they did:
//!
//! - `tasks=N`: N short tasks, each yields once and returns `i * i`; one task
//!   awaits them all and logs the sum;
//! - `sleepers=N`: N tasks, spawned in reverse order, sleep 1..=N times
//!   50 ms; they must wake in the order of their deadlines, none early;
//! - `pending=N`: N tasks that sleep for an hour, for `rmmod` to cancel.
//!
//! How to run: `make run STEP=17` loads the module with its defaults; then,
//! in the VM (its shell starts in the repository), for example
//! `rmmod rexec; insmod build/modules-fast/steps/17-executor/rexec.ko tasks=5000 sleepers=4`
//! and `dmesg | tail`.
//! Check your work with `make check STEP=17` (the exercises are in
//! `waker.rs`, `executor.rs` (`Task::run`) and `sleep.rs` (`Sleep::poll`)).

use core::{
    future::Future,
    sync::atomic::{
        AtomicU32,
        Ordering, //
    }, //
};
use kernel::{
    prelude::*,
    sync::Arc,
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
};

mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
mod sleep;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
mod waker;

use executor::{
    yield_now,
    Executor, //
};
use sleep::sleep;

module! {
    type: RExecModule,
    name: "rexec",
    authors: ["rust-kernel-workshop"],
    description: "Stage 17: an async executor on a workqueue",
    license: "GPL",
    params: {
        tasks: u32 {
            default: 1000,
            description: "Short tasks to spawn and join (0..=100000)",
        },
        sleepers: u32 {
            default: 8,
            description: "Tasks that sleep k * 50 ms, k = 1..=sleepers (0..=64)",
        },
        pending: u32 {
            default: 0,
            description: "Tasks that sleep for an hour, cancelled by rmmod (0..=100000)",
        },
        workers: u32 {
            default: 2,
            description: "Work items the executor runs at once (1..=64)",
        },
    },
}

/// The time unit of the sleepers.
const SLEEP_STEP_MS: i64 = 50;
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

// ANCHOR: sleepers
/// Spawns `n` sleepers in reverse order; sleeper `k` sleeps `k` steps. Logs
/// whether they woke in the order of their deadlines and none too early.
async fn sleepers_in_order(executor: Arc<Executor>, n: u32) -> Result {
    let start = Instant::<Monotonic>::now();
    let woke = Arc::new(AtomicU32::new(0), GFP_KERNEL)?;
    let mut handles = KVec::with_capacity(n as usize, GFP_KERNEL)?;
    for k in (1..=n).rev() {
        let woke = woke.clone();
        let asked = Delta::from_millis(SLEEP_STEP_MS * i64::from(k));
        let handle = executor.spawn(async move {
            let start = Instant::<Monotonic>::now();
            sleep(asked)?.await;
            let slept = start.elapsed();
            // The order in which the sleepers woke: 1, 2, 3, ...
            let rank = woke.fetch_add(1, Ordering::Relaxed) + 1;
            Ok::<_, Error>((k, rank, slept, asked))
        })?;
        handles.push(handle, GFP_KERNEL)?;
    }
    let mut in_order = true;
    while let Some(handle) = handles.pop() {
        let (k, rank, slept, asked) = handle.await?;
        if slept < asked {
            pr_err!(
                "sleeper {} woke early: {} us < {} us\n",
                k,
                slept.as_micros_ceil(),
                asked.as_micros_ceil()
            );
            in_order = false;
        }
        if rank != k {
            pr_err!("sleeper {} woke {}th\n", k, rank);
            in_order = false;
        }
    }
    if in_order {
        pr_info!(
            "{} sleepers woke in the order of their deadlines, none early ({} ms)\n",
            n,
            start.elapsed().as_millis()
        );
    }
    Ok(())
}
// ANCHOR_END: sleepers

/// Runs a workload as a task, logging its error if it fails.
fn spawn_logged<F>(executor: &Arc<Executor>, what: &'static str, workload: F) -> Result
where
    F: Future<Output = Result> + Send + 'static,
{
    let handle = executor.spawn(async move {
        if let Err(e) = workload.await {
            pr_err!("{} failed: {:?}\n", what, e);
        }
    })?;
    // Detached: nobody awaits the output, the task goes on.
    drop(handle);
    Ok(())
}

// ANCHOR: module
/// The module: owns the executor until unload.
struct RExecModule {
    executor: Arc<Executor>,
}

impl kernel::Module for RExecModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let tasks = module_parameters::tasks.value();
        let sleepers = module_parameters::sleepers.value();
        let pending = module_parameters::pending.value();
        let workers = module_parameters::workers.value();
        if tasks > 100_000 || sleepers > 64 || pending > 100_000 || !(1..=64).contains(&workers) {
            pr_err!("out of range: tasks<=100000, sleepers<=64, pending<=100000, workers 1..=64\n");
            return Err(EINVAL);
        }
        // From here on, an error drops `this`, which shuts the executor down.
        let this = Self {
            executor: Executor::new(c"rexec", workers)?,
        };
        let ex = &this.executor;
        if tasks > 0 {
            spawn_logged(ex, "tasks", many_tasks(ex.clone(), tasks))?;
        }
        if sleepers > 0 {
            spawn_logged(ex, "sleepers", sleepers_in_order(ex.clone(), sleepers))?;
        }
        for _ in 0..pending {
            spawn_logged(ex, "pending", async {
                sleep(Delta::from_secs(3600))?.await;
                Ok(())
            })?;
        }
        pr_info!(
            "executor started: {} workers, {} tasks, {} sleepers, {} pending\n",
            workers,
            tasks,
            sleepers,
            pending
        );
        Ok(this)
    }
}

impl Drop for RExecModule {
    fn drop(&mut self) {
        let cancelled = self.executor.shutdown();
        pr_info!(
            "executor stopped: {} tasks spawned, {} cancelled\n",
            self.executor.spawned(),
            cancelled
        );
    }
}
// ANCHOR_END: module
