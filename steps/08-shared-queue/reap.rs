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
        // TODO (exercise 1): Reap every new completion, with the lock held,
        // and return how many there were. The contract:
        // - reap until `self.next_completion(&rings.cq)` has nothing new
        //   (`Ok(None)`; an `Err`, a head outside the ring, which the ring
        //   never gives, stops it too);
        // - each completion is consumed, and counted whatever its slot: the
        //   CQ ring moves past it, and the SQ ring learns from its SQHD which
        //   slots are free again;
        // - it goes to its identifier's slot (`rings.slot(cqe.cid)`): a
        //   `Waiting` submitter gets it (`Slot::Done`); an `Abandoned` slot,
        //   whose submitter gave up, becomes `Free` (its cid is usable again
        //   only now); a block request's (`Slot::Request`, from stage 13 on)
        //   goes to `rings.finish_later`; any other slot is left alone;
        // - the CQ head doorbell is rung once per call, with the final head,
        //   and only if there was something new; its error has nowhere to
        //   go (from stage 09 on an interrupt handler calls this);
        // - `rings.reaped` (a `u64`) adds up every completion ever reaped.
        // You have: `self.next_completion`, `rings.cq` and `rings.sq` (stage
        // 06's rings), `rings.slot`, `Slot`, `rings.finish_later`,
        // `self.ring_doorbell` with `self.cq_doorbell`.
        // Tests: "rnvme is bound to the NVMe controller ..." and the checks
        // after it; "QEMU saw the doorbells ring arithmetic predicts: ..."
        // checks the doorbell, "the polled waits reaped all ... completions"
        // the count ("N completions reaped by polling"), and "... requests
        // abandoned, answered later: their identifiers come back" the
        // `Abandoned` arm.
        let _ = (
            rings,
            Self::next_completion,
            Slot::<P>::Done,
            self.cq_doorbell,
        );
        0
    }
    // ANCHOR_END: reap_locked
}
