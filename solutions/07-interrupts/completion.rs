// SPDX-License-Identifier: GPL-2.0

//! Stage 07's idea: a submitter sleeps until its completion comes, and the
//! interrupt handler reaps the completions and wakes the submitters.
//!
//! Part of the NVMe library (`nvme::completion`): the two methods of
//! [`QueuePair`] that stage 07 writes. The queue pair itself (its memory,
//! rings, identifier slots and lock) is the library's `queue.rs`.

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
            let slot = rings.slot(cid).ok_or(EINVAL)?;
            if let Slot::Done(cqe) = slot {
                let cqe = *cqe;
                *slot = Slot::Free;
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
            let slot = rings.slot(cid).ok_or(EINVAL)?;
            if let Slot::Done(cqe) = slot {
                let cqe = *cqe;
                *slot = Slot::Free;
                return Ok(cqe);
            }
            *slot = Slot::Abandoned;
            return Err(err);
        }
    }
    // ANCHOR_END: wait

    // ANCHOR: reap
    /// Reaps every new completion; called by the interrupt handler. Returns
    /// how many there were (0: the interrupt was not ours).
    pub(crate) fn reap(&self) -> u32 {
        let mut rings = self.rings.lock();
        let mut n = 0;
        while let Ok(Some(cqe)) = self.next_completion(&rings.cq) {
            rings.cq.advance();
            rings.sq.consumed_up_to(cqe.sq_head);
            n += 1;
            match rings.slot(cqe.cid) {
                // Its submitter sleeps: hand the completion over.
                Some(slot) if matches!(slot, Slot::Waiting) => *slot = Slot::Done(cqe),
                // Its submitter gave up: the identifier is free again now.
                Some(slot) if matches!(slot, Slot::Abandoned) => *slot = Slot::Free,
                // A block request's (stage 10): the handler finishes it
                // once the lock is dropped.
                Some(Slot::Request(..)) => rings.finish_later(cqe),
                // An answer to a command nobody sent: nothing to hand over.
                _ => {}
            }
        }
        if n > 0 {
            // Hand the entries back; for INTx this also lowers the line.
            let _ = self.ring_doorbell(rings.cq.head(), self.cq_doorbell);
            rings.reaped += u64::from(n);
            self.completed.notify_all();
        }
        n
    }
    // ANCHOR_END: reap
}
