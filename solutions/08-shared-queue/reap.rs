// SPDX-License-Identifier: GPL-2.0

//! Stage 08's idea: the library's shared queue pair, reaped under its lock.
//! One loop takes every new completion and hands each to its command
//! identifier's slot; whoever holds the lock may run it: stage 08's polling
//! submitters (`poll_wait.rs`), and from stage 09 on the interrupt handler
//! (through the library's `QueuePair::reap`).
//!
//! Part of the NVMe library (`nvme::reap`): one method of [`QueuePair`].
//! The queue pair itself (its memory, rings, identifier slots and lock) is
//! the library's `queue.rs`.

use super::queue::{
    Pending,
    QueuePair,
    Rings,
    Slot, //
};

impl<P: Pending> QueuePair<P> {
    // ANCHOR: reap_locked
    /// Reaps every new completion, with the `rings` lock held: hands each
    /// to its identifier's slot and gives the entries back to the
    /// controller. Returns how many there were.
    pub(super) fn reap_locked(&self, rings: &mut Rings<P>) -> u32 {
        let mut n = 0;
        while let Ok(Some(cqe)) = self.next_completion(&rings.cq) {
            rings.cq.advance();
            rings.sq.consumed_up_to(cqe.sq_head);
            n += 1;
            match rings.slot(cqe.cid) {
                // Its submitter waits: hand the completion over.
                Some(slot) if matches!(slot, Slot::Waiting) => *slot = Slot::Done(cqe),
                // Its submitter gave up: the identifier is free again now.
                Some(slot) if matches!(slot, Slot::Abandoned) => *slot = Slot::Free,
                // A block request's (stage 13): the handler finishes it
                // once the lock is dropped.
                Some(Slot::Request(..)) => rings.finish_later(cqe),
                // An answer to a command nobody sent: nothing to hand over.
                _ => {}
            }
        }
        if n > 0 {
            // Hand the entries back; for INTx (stage 09) this also lowers
            // the line. Nobody could act on a failed write here.
            let _ = self.ring_doorbell(rings, rings.cq.head(), self.cq_doorbell);
            rings.reaped += u64::from(n);
        }
        n
    }
    // ANCHOR_END: reap_locked
}
