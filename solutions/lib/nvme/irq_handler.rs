// SPDX-License-Identifier: GPL-2.0

//! A queue's interrupt handler (the admin queue's, or an I/O queue's).
//!
//! Part of the NVMe library (`nvme::irq_handler`), from stage 09 on.

use kernel::{
    irq::{
        Handler,
        IrqReturn, //
    },
    sync::Arc, //
};

use super::queue::{
    Finished,
    Pending,
    QueuePair, //
};

// ANCHOR: handler
/// The handler owns what it needs: a reference to its queue. The
/// kernel calls it with no argument, in hard interrupt context (no
/// sleeping, no `GFP_KERNEL`, no mutex), possibly on another CPU than the
/// submitter's.
pub(crate) struct QueueIrq<P: Pending>(pub(crate) Arc<QueuePair<P>>);

impl<P: Pending> Handler for QueueIrq<P> {
    fn handle(&self) -> IrqReturn {
        // A shared vector also fires for the other queues on it (and a
        // shared INTx line for other devices): "not ours" when there was
        // nothing to reap lets the kernel tell a stuck line.
        // The block requests among them (stage 13), each finished with the
        // queue's lock released: finishing one may submit its next piece.
        // The first comes with the reap, in one lock round trip, and the
        // lock is taken again only if the reap left more. (Each `Finished`
        // is taken apart where it comes back: kept in a variable the loop
        // assigns again, it was one more copy of the request per interrupt.)
        let (reaped, first) = self.0.reap_first();
        if let Some(Finished { cqe, request, more }) = first {
            request.finish(&self.0, cqe);
            if more {
                while let Some(Finished { cqe, request, more }) = self.0.take_finished() {
                    request.finish(&self.0, cqe);
                    if !more {
                        break;
                    }
                }
            }
        }
        if reaped > 0 {
            IrqReturn::Handled
        } else {
            IrqReturn::None
        }
    }
}
// ANCHOR_END: handler
