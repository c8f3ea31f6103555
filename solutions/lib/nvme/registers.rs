// SPDX-License-Identifier: GPL-2.0

//! The controller's registers, shared by every queue: each rings its own
//! doorbells, from process context and from its interrupt handler.
//!
//! Part of the NVMe library (`nvme::registers`), from stage 09 on.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    io::{
        poll::read_poll_timeout,
        Io, //
    },
    pci,
    prelude::*,
    sync::Arc,
    time::Delta, //
};

use super::{
    cap::Cap,
    regs::{
        Bar0,
        BAR0_SIZE,
        CC,
        CSTS, //
    }, //
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
    #[inline]
    pub(crate) fn ring_doorbell(&self, value: u16, offset: usize) -> Result {
        let bar = self.bar.try_access().ok_or(ENXIO)?;
        bar.try_write32(u32::from(value), offset)
    }

    /// Disables the controller, if the device is still bound: afterwards it
    /// touches no queue memory. Callable without proof that the device is
    /// bound (as in a queue's `drop`): every register access takes the
    /// registers for itself (`try_access`: an RCU read-side section, in
    /// which nothing may sleep), and the wait sleeps between them.
    pub(crate) fn disable(&self) -> Result {
        {
            let bar = self.bar.try_access().ok_or(ENXIO)?;
            let cc = bar.read(CC);
            if cc.en() {
                bar.write_reg(cc.with_en(false));
            }
        }
        read_poll_timeout(
            || self.bar.try_access().map(|bar| bar.read(CSTS)).ok_or(ENXIO),
            |csts| !csts.rdy(),
            Delta::from_millis(1),
            Delta::from_millis(i64::from(self.cap.timeout_ms())),
        )
        .map(|_| ())
    }
}
// ANCHOR_END: registers
