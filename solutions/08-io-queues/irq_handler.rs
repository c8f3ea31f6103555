// SPDX-License-Identifier: GPL-2.0

//! A queue's interrupt handler (the admin queue's, or an I/O queue's).

use kernel::{
    irq::{
        Handler,
        IrqReturn, //
    },
    sync::Arc, //
};

use crate::queue::Queue;

// ANCHOR: handler
/// The handler owns what it needs: a reference to its queue. The
/// kernel calls it with no argument, in hard interrupt context (no
/// sleeping, no `GFP_KERNEL`, no mutex), possibly on another CPU than the
/// submitter's.
pub(crate) struct QueueIrq(pub(crate) Arc<Queue>);

impl Handler for QueueIrq {
    fn handle(&self) -> IrqReturn {
        // A shared vector also fires for the other queues on it (and a
        // shared INTx line for other devices): "not ours" when there was
        // nothing to reap lets the kernel tell a stuck line.
        if self.0.reap() > 0 {
            IrqReturn::Handled
        } else {
            IrqReturn::None
        }
    }
}
// ANCHOR_END: handler
