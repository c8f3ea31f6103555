// SPDX-License-Identifier: GPL-2.0

//! Stage 24: sleeping tasks, on stage 23's executor.
//!
//! `sleep.rs` is a timer future: `sleep(duration).await` gives the worker
//! back until a high-resolution timer fires. Stage 23's `executor.rs`,
//! `waker.rs` and `task_state.rs` run the tasks, unchanged; `workloads.rs`
//! starts the executor and shuts it down at `rmmod`, cancelling the tasks
//! that still sleep. This file loads sleepers onto the executor:
//!
//! - `sleepers=N`: N tasks, spawned in reverse order, sleep 1..=N times
//!   50 ms; they must wake in the order of their deadlines, none early;
//! - `pending=N`: N tasks that sleep for an hour, for `rmmod` to cancel.
//!
//! How to run: `make run STEP=24` loads the module with its defaults; then,
//! in the VM (its shell starts in the repository), for example
//! `rmmod rsleep; insmod build/modules-fast/steps/24-sleep/rsleep.ko sleepers=16 workers=1`
//! and `dmesg | tail`.
//! Check your work with `make check STEP=24` (the exercise is in `sleep.rs`,
//! `Sleep::poll`).

use core::sync::atomic::{
    AtomicU32,
    Ordering, //
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

// Stage 23's files, unchanged: the executor, its run queue, the task
// states, the waker; and the module's executor, given. (Nothing here
// yields: `yield_now` goes unused.)
#[allow(dead_code)]
#[path = "../../solutions/23-executor/executor.rs"]
mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
#[path = "../../solutions/23-executor/waker.rs"]
mod waker;
#[path = "../../solutions/lib/exec/workloads.rs"]
mod workloads;
// New in stage 24: the timer future.
mod sleep;

use executor::Executor;
use sleep::sleep;
use workloads::Workloads;

module! {
    type: RSleepModule,
    name: "rsleep",
    authors: ["rust-kernel-workshop"],
    description: "Stage 24: tasks that sleep on high-resolution timers",
    license: "GPL",
    params: {
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
            let begun = Instant::<Monotonic>::now();
            sleep(asked)?.await;
            let slept = begun.elapsed();
            // The order in which the sleepers woke: 1, 2, 3, ...
            let rank = woke.fetch_add(1, Ordering::Relaxed) + 1;
            // Its deadline, from the sleepers' start, counts from when the
            // worker first ran it: on a busy machine a sleeper spawned
            // later may begin much later.
            Ok::<_, Error>((k, rank, slept, asked, begun - start + asked))
        })?;
        handles.push(handle, GFP_KERNEL)?;
    }
    // Each sleeper's deadline, at the place of its rank.
    let mut deadlines = KVec::from_elem(None, n as usize, GFP_KERNEL)?;
    let mut in_order = true;
    while let Some(handle) = handles.pop() {
        let (k, rank, slept, asked, deadline) = handle.await?;
        if slept < asked {
            pr_err!(
                "sleeper {} woke early: {} us < {} us\n",
                k,
                slept.as_micros_ceil(),
                asked.as_micros_ceil()
            );
            in_order = false;
        }
        if let Some(at) = (rank as usize)
            .checked_sub(1)
            .and_then(|i| deadlines.get_mut(i))
        {
            *at = Some((k, deadline));
        }
    }
    // In the order of their deadlines: no sleeper woke after one whose
    // deadline was later than its own.
    let mut latest = Delta::ZERO;
    for (i, at) in deadlines.iter().enumerate() {
        match at {
            Some((_, deadline)) if *deadline >= latest => latest = *deadline,
            Some((k, deadline)) => {
                pr_err!(
                    "sleeper {} woke {}th: its deadline {} ms, one before it {} ms\n",
                    k,
                    i + 1,
                    deadline.as_millis(),
                    latest.as_millis()
                );
                in_order = false;
            }
            None => in_order = false,
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

// ANCHOR: module
/// The module: owns the executor until unload.
struct RSleepModule {
    _workloads: Workloads,
}

impl kernel::Module for RSleepModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let sleepers = module_parameters::sleepers.value();
        let pending = module_parameters::pending.value();
        let workers = module_parameters::workers.value();
        if sleepers > 64 || pending > 100_000 || !(1..=64).contains(&workers) {
            pr_err!("out of range: sleepers<=64, pending<=100000, workers 1..=64\n");
            return Err(EINVAL);
        }
        // From here on, an error drops `workloads`, which shuts the executor
        // down, cancelling the sleepers spawned so far.
        let workloads = Workloads::start(c"rsleep", workers)?;
        if sleepers > 0 {
            let executor = workloads.executor();
            workloads.spawn_logged("sleepers", sleepers_in_order(executor, sleepers))?;
        }
        for _ in 0..pending {
            workloads.spawn_logged("pending", async {
                sleep(Delta::from_secs(3600))?.await;
                Ok(())
            })?;
        }
        pr_info!(
            "executor started: {} workers, {} sleepers, {} pending\n",
            workers,
            sleepers,
            pending
        );
        Ok(Self {
            _workloads: workloads,
        })
    }
}
// ANCHOR_END: module
