// SPDX-License-Identifier: GPL-2.0

//! The admin queue's interrupt handler.

use kernel::{
    irq::{
        Handler,
        IrqReturn, //
    },
    sync::Arc, //
};

use crate::queue::AdminQueue;

// ANCHOR: handler
/// The handler owns what it needs: a reference to the admin queue. The
/// kernel calls it with no argument, in hard interrupt context (no
/// sleeping, no `GFP_KERNEL`, no mutex), possibly on another CPU than the
/// submitter's.
pub(crate) struct AdminIrq(pub(crate) Arc<AdminQueue>);

impl Handler for AdminIrq {
    fn handle(&self) -> IrqReturn {
        // A shared INTx line also fires for other devices: "not ours" when
        // there was nothing to reap lets the kernel tell a stuck line.
        if self.0.reap() > 0 {
            IrqReturn::Handled
        } else {
            IrqReturn::None
        }
    }
}
// ANCHOR_END: handler
