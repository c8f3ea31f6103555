// SPDX-License-Identifier: GPL-2.0

//! The life of a task, as one atomic state machine.
//!
//! This file is `core`-only: the kernel module and the host tests
//! (`tests/host`) compile the very same code. The executor asks the state
//! machine two questions: "a waker fired: must I queue the task?" and "a poll
//! ended: must I queue it again?". The answers guarantee that
//!
//! - a task is never polled by two workers at once,
//! - a wake is never lost: a wake that arrives while the task is being polled
//!   makes it run once more,
//! - a task is queued at most once at a time, however many wakes arrive,
//! - once a task is done (finished or cancelled), wakes do nothing: no work
//!   item is queued for it ever again.
//!
//! ```text
//!            wake                start                 poll: Pending
//!   Idle ───────────▶ Queued ────────────▶ Running ─────────────────▶ Idle
//!                       ▲                    │  │
//!                       │ poll: Pending      │  │ wake
//!                       └────────────── Woken ◀─┘
//!   poll: Ready (from Running or Woken), or cancel (from anywhere): Done
//! ```
#![forbid(unsafe_code)]

use core::sync::atomic::{
    AtomicU8,
    Ordering, //
};

// ANCHOR: states
/// Waiting for a wake; no work item is queued.
const IDLE: u8 = 0;
/// A work item is queued (or about to be) and will poll the task.
const QUEUED: u8 = 1;
/// A worker is polling the task.
const RUNNING: u8 = 2;
/// A worker is polling the task, and a wake arrived meanwhile.
const WOKEN: u8 = 3;
/// Finished or cancelled: never polled again.
const DONE: u8 = 4;
// ANCHOR_END: states

/// One task's state (see the module documentation).
pub(crate) struct TaskState(AtomicU8);

impl TaskState {
    /// A new task is queued by `spawn`, so it starts out [`QUEUED`].
    pub(crate) const fn new_queued() -> Self {
        Self(AtomicU8::new(QUEUED))
    }

    /// Applies `f` to the state until the compare-exchange succeeds and
    /// returns the state it replaced.
    fn update(&self, f: impl Fn(u8) -> u8) -> u8 {
        let mut old = self.0.load(Ordering::Acquire);
        loop {
            // `AcqRel`: what the waker wrote before waking happens before the
            // next poll, and what a poll wrote happens before a later wake.
            match self
                .0
                .compare_exchange_weak(old, f(old), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(prev) => return prev,
                Err(now) => old = now,
            }
        }
    }

    // ANCHOR: transitions
    /// A waker fired. Returns `true` if the caller must queue the task: only
    /// the wake that takes it from [`IDLE`] does.
    pub(crate) fn wake(&self) -> bool {
        let prev = self.update(|s| match s {
            IDLE => QUEUED,
            RUNNING => WOKEN,
            other => other,
        });
        prev == IDLE
    }

    /// A worker is about to poll. Returns `false` if it must not: the task
    /// is done (cancelled while queued).
    pub(crate) fn start(&self) -> bool {
        let prev = self.update(|s| if s == QUEUED { RUNNING } else { s });
        prev == QUEUED
    }

    /// A poll returned; `ready` says whether the future finished. Returns
    /// `true` if the caller must queue the task again: it was woken while it
    /// was being polled.
    pub(crate) fn end(&self, ready: bool) -> bool {
        let prev = self.update(|s| match s {
            _ if ready => DONE,
            RUNNING => IDLE,
            WOKEN => QUEUED,
            other => other,
        });
        !ready && prev == WOKEN
    }

    /// The task will never run again, whatever state it is in.
    pub(crate) fn cancel(&self) {
        self.0.store(DONE, Ordering::Release);
    }
    // ANCHOR_END: transitions
}
