// SPDX-License-Identifier: GPL-2.0

//! Stage 09's idea: a submitter sleeps until its completion comes, and the
//! interrupt handler, which reaps the completions (`QueuePair::reap`, with
//! stage 08's `reap_locked`), wakes it.
//!
//! Part of the NVMe library (`nvme::wait`): the method of [`QueuePair`]
//! that stage 09 writes. It replaces stage 08's polled wait
//! (`poll_wait.rs`).

use kernel::{
    prelude::*,
    sync::{
        CondVarTimeoutResult,
        SpinLockIrqGuard, //
    },
    time::msecs_to_jiffies, //
};

use super::{
    command::Completion,
    queue::{
        Pending,
        QueuePair,
        Rings,
        Slot, //
    }, //
};

impl<P: Pending> QueuePair<P> {
    // ANCHOR: wait
    /// Sleeps until the handler has completed identifier `cid`, for at most
    /// `ms` milliseconds, and frees the identifier; or marks it abandoned.
    pub(super) fn wait_for(
        &self,
        rings: &mut SpinLockIrqGuard<'_, Rings<P>>,
        cid: u16,
        ms: u32,
    ) -> Result<Completion> {
        let mut left = msecs_to_jiffies(ms);
        loop {
            // The handler may have come before we sleep, or between two
            // wake-ups for other commands: always look first.
            if let Some(cqe) = rings.take_done(cid) {
                return Ok(cqe);
            }
            // Releases the lock while asleep, takes it again before return.
            let err = match self.completed.wait_interruptible_timeout(rings, left) {
                CondVarTimeoutResult::Woken { jiffies } => {
                    left = jiffies;
                    continue;
                }
                CondVarTimeoutResult::Timeout => ETIMEDOUT,
                CondVarTimeoutResult::Signal { .. } => EINTR,
            };
            // Out of time: one last look, then leave the identifier to the
            // controller.
            if let Some(cqe) = rings.take_done(cid) {
                return Ok(cqe);
            }
            *rings.slot(cid).ok_or(EINVAL)? = Slot::Abandoned;
            return Err(err);
        }
    }
    // ANCHOR_END: wait
}
