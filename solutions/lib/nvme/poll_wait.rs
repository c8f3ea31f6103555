// SPDX-License-Identifier: GPL-2.0

//! Stage 08's wait for a completion, given: no interrupt handler reaps yet,
//! so the submitter reaps itself (`reap_locked`, stage 08's exercise), and
//! between two looks sleeps a jiffy with the lock released. Stage 09
//! replaces it with a wait that sleeps until the handler wakes it.
//!
//! Part of the NVMe library (`nvme::poll_wait`), in stage 08 only.

use kernel::{
    prelude::*,
    sync::{
        CondVarTimeoutResult,
        SpinLockIrqGuard, //
    },
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
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
    // ANCHOR: poll_wait
    /// Polls until identifier `cid` has completed, for at most
    /// `timeout_ms` milliseconds, and frees the identifier; or marks it
    /// abandoned.
    pub(super) fn wait_for(
        &self,
        rings: &mut SpinLockIrqGuard<'_, Rings<P>>,
        cid: u16,
        timeout_ms: u32,
    ) -> Result<Completion> {
        let since = Instant::<Monotonic>::now();
        let limit = Delta::from_millis(i64::from(timeout_ms));
        let err = loop {
            // Reap what the controller posted (this command's, or others'),
            // then look at this command's slot.
            self.reap_locked(rings);
            if let Some(cqe) = rings.take_done(cid) {
                return Ok(cqe);
            }
            if since.elapsed() >= limit {
                break ETIMEDOUT;
            }
            // A jiffy's sleep, the lock released (nobody notifies in this
            // stage: it is a sleep, not a wait to be woken). Never spin here
            // with the lock held, which keeps interrupts off on this CPU.
            if let CondVarTimeoutResult::Signal { .. } =
                self.completed.wait_interruptible_timeout(rings, 1)
            {
                break EINTR;
            }
        };
        // The controller may still answer with this identifier: nobody may
        // reuse it until then.
        *rings.slot(cid).ok_or(EINVAL)? = Slot::Abandoned;
        Err(err)
    }
    // ANCHOR_END: poll_wait
}
