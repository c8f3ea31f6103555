// SPDX-License-Identifier: GPL-2.0

//! Stage 04's idea: bringing a PCI device's registers within reach, and
//! what the NVMe controller says about itself in them.
//!
//! Part of the NVMe library (`nvme::map`): every later stage's `probe`
//! starts with `map`.

use kernel::{
    device::Core,
    io::Io,
    pci,
    prelude::*, //
};

use super::{
    cap::Cap,
    regs::{
        self,
        log_identity,
        Bar0,
        BAR0_SIZE, //
    }, //
};

// ANCHOR: map
/// Turns on memory decoding and bus mastering, maps BAR0, reads CAP and VS
/// and logs them. Refuses (`ENODEV`) a controller without the NVM command
/// set. The mapping lives as long as the binding (`'b`).
pub(crate) fn map<'b>(pdev: &'b pci::Device<Core<'_>>) -> Result<(Bar0<'b>, Cap)> {
    // Memory decoding on, and let the device master the bus (DMA, later).
    pdev.enable_device_mem()?;
    pdev.set_master();
    let bar: Bar0<'b> = pdev.iomap_region_sized::<BAR0_SIZE>(0, c"rnvme")?;

    let cap = Cap::from_raw(bar.try_read64(regs::CAP)?);
    let vs = bar.read(regs::VS);
    log_identity(pdev, &cap, &vs);
    if !cap.supports_nvm() {
        dev_err!(pdev, "the NVM command set is not supported\n");
        return Err(ENODEV);
    }
    Ok((bar, cap))
}
// ANCHOR_END: map
