// SPDX-License-Identifier: GPL-2.0

//! The controller's registers, shared by every queue: each rings its own
//! doorbells, from process context and from its interrupt handler.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    io::Io,
    pci,
    prelude::*,
    sync::Arc,
};

use crate::{
    controller,
    regs::BAR0_SIZE,
    spec::Cap,
    Bar0,
};

// ANCHOR: registers
/// BAR0 and what CAP said about it, in an `Arc` that every queue holds.
///
/// A `DevresBar` (not a `Bar<'b>`) because queues live in `Arc`s shared
/// with interrupt handlers, which must not borrow the device; access is
/// revoked when the driver is unbound.
pub(crate) struct Registers {
    bar: pci::DevresBar<BAR0_SIZE>,
    cap: Cap,
}

impl Registers {
    /// Shares `bar`.
    pub(crate) fn new(bar: pci::DevresBar<BAR0_SIZE>, cap: Cap) -> Result<Arc<Registers>> {
        Ok(Arc::new(Registers { bar, cap }, GFP_KERNEL)?)
    }

    /// The registers, for process context (the caller proves the device is
    /// bound).
    pub(crate) fn bar<'a>(&'a self, dev: &'a Device<Bound>) -> Result<&'a Bar0<'a>> {
        self.bar.access(dev)
    }

    /// What CAP said.
    pub(crate) fn cap(&self) -> &Cap {
        &self.cap
    }

    /// Writes `value` to the doorbell at `offset`, if the device is still
    /// bound (in any context: the access is RCU-protected).
    pub(crate) fn ring_doorbell(&self, value: u16, offset: usize) -> Result {
        let bar = self.bar.try_access().ok_or(ENXIO)?;
        bar.try_write32(u32::from(value), offset)
    }

    /// Disables the controller, if the device is still bound: afterwards it
    /// touches no queue memory.
    pub(crate) fn disable(&self) -> Result {
        let bar = self.bar.try_access().ok_or(ENXIO)?;
        controller::disable(self.bar.device(), &bar, &self.cap)
    }
}
// ANCHOR_END: registers
