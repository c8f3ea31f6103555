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
        // at most `ms` milliseconds, on the queue's `completed` CondVar (the
        // handler's reap calls `notify_all` on it), and return the
        // completion (`rings.take_done(cid)`, which frees the identifier).
        // The contract:
        // - the whole wait lasts at most `ms`, however often other commands'
        //   completions wake you: each wake-up leaves less time;
        // - a completion that came before you sleep, or just as the time
        //   ran out, wins over the timeout;
        // - out of time: ETIMEDOUT; a signal: EINTR. Either way the
        //   controller may still answer with this cid: mark its slot
        //   `Slot::Abandoned` (`rings.slot(cid)`) so nobody reuses it until
        //   then;
        // - sleep only through the CondVar, which releases the lock while
        //   you sleep and takes it again.
        // Tests: "rnvme is bound to the NVMe controller ..." and the checks
        // after it, with MsiX and with Intx; "an Asynchronous Event Request the
        // controller holds ends in ETIMEDOUT ..." and "no later command got the
        // held AER's identifier ..." check the timeout; "woken by N other
        // completions, a 300 ms wait still ends on time ..." the first rule.
        let _ = (
            rings,
            cid,
            msecs_to_jiffies(ms),
            CondVarTimeoutResult::Timeout,
        );
        let _ = Slot::<P>::Abandoned;
        Err(ENOSYS)
    }
    // ANCHOR_END: wait
}
