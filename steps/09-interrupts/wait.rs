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
        // TODO (exercise 1): Sleep until the handler has completed `cid`, for
        // at most `ms` milliseconds:
        // 1. `let mut left = msecs_to_jiffies(ms);`, then loop:
        // 2. look first: `rings.take_done(cid)` gives the completion if the
        //    handler has reaped it (and frees the identifier): return
        //    `Ok(cqe)` (the handler may have come before you sleep, or while
        //    you slept for another command);
        // 3. else sleep: `self.completed.wait_interruptible_timeout(rings,
        //    left)` releases the lock while asleep and takes it again.
        //    `Woken { jiffies }`: go round with `left = jiffies`; `Timeout`
        //    means ETIMEDOUT, `Signal { .. }` EINTR;
        // 4. then look one last time (a completion that came just now
        //    wins), else mark the slot (`rings.slot(cid)`) `Slot::Abandoned`
        //    (the controller may still answer with this cid: nobody may
        //    reuse it until then) and return the error.
        // Tests: "rnvme is bound to the NVMe controller ..." and the checks
        // after it, with MsiX and with Intx; "an Asynchronous Event Request the
        // controller holds ends in ETIMEDOUT ..." and "no later command got the
        // held AER's identifier ..." check the timeout.
        let _ = (rings, cid, msecs_to_jiffies(ms), CondVarTimeoutResult::Timeout);
        let _ = Slot::<P>::Abandoned;
        Err(ENOSYS)
    }
    // ANCHOR_END: wait
}
