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
        // TODO (exercise 1): Sleep until the handler has completed `cid`, for
        // at most `ms` milliseconds:
        // 1. `let mut left = msecs_to_jiffies(ms);`, then loop:
        // 2. look first: if `rings.slot(cid)` holds `Slot::Done(cqe)`, set
        //    it to `Slot::Free` and return `Ok(cqe)` (the handler may have
        //    come before you sleep, or while you slept for another command);
        // 3. else sleep: `self.completed.wait_interruptible_timeout(rings,
        //    left)` releases the lock while asleep and takes it again.
        //    `Woken { jiffies }`: go round with `left = jiffies`; `Timeout`
        //    means ETIMEDOUT, `Signal { .. }` EINTR;
        // 4. then look one last time (a completion that came just now
        //    wins), else mark the slot `Slot::Abandoned` (the controller may
        //    still answer with this cid: nobody may reuse it until then) and
        //    return the error.
        // Tests: "rnvme is bound to the NVMe controller ..." and the checks
        // after it, with MsiX and with Intx; "an Asynchronous Event Request the
        // controller holds ends in ETIMEDOUT ..." and "no later command got the
        // held AER's identifier ..." check the timeout.
        let _ = (rings, cid, msecs_to_jiffies(ms), Slot::<P>::Abandoned);
        Err(ENOSYS)
    }
    // ANCHOR_END: wait

    // ANCHOR: reap
    /// Reaps every new completion; called by the interrupt handler. Returns
    /// how many there were (0: the interrupt was not ours).
    pub(crate) fn reap(&self) -> u32 {
        // TODO (exercise 2): Reap every new completion:
        // 1. take the lock: `let mut rings = self.rings.lock();`
        // 2. while `self.next_completion(&rings.cq)` gives `Ok(Some(cqe))`:
        //    advance the CQ ring, record how far the controller consumed the
        //    SQ (`rings.sq.consumed_up_to(cqe.sq_head)`), count it, and hand
        //    it over by its identifier (`rings.slot(cqe.cid)`): a `Waiting`
        //    slot becomes `Slot::Done(cqe)`, an `Abandoned` one `Free`, and a
        //    block request's (`Slot::Request`, from stage 10 on) goes to
        //    `rings.finish_later(cqe)`;
        // 3. if there were any: ring the CQ head doorbell with the new head
        //    (`self.ring_doorbell(rings.cq.head(), self.cq_doorbell)`; the
        //    result can only be dropped here), add them to `rings.reaped`,
        //    and wake the submitters: `self.completed.notify_all()`;
        // 4. return how many: 0 tells the kernel the interrupt was not ours.
        // Tests: "rnvme is bound to the NVMe controller ..." and the checks
        // after it, with MsiX and with Intx; "QEMU saw the doorbells ring
        // arithmetic predicts: ...", "/proc/interrupts counts ..." and "the
        // handler reaped all ... completions" check the handler itself.
        let _ = (Self::next_completion, Slot::<P>::Done, self.cq_doorbell);
        0
    }
    // ANCHOR_END: reap
}
