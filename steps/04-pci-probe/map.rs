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
    // TODO (exercise 2): Bring the controller's registers within reach:
    // - turn on memory decoding (`pdev.enable_device_mem()?`) and bus
    //   mastering (`pdev.set_master()`);
    // - map BAR0: `pdev.iomap_region_sized::<BAR0_SIZE>(0, c"rnvme")?`;
    // - read CAP, 64 bits at `regs::CAP` (`bar.try_read64(..)?`), and
    //   decode it with `Cap::from_raw`; read VS with `bar.read(regs::VS)`;
    // - log them with `log_identity`, refuse a controller without the NVM
    //   command set (ENODEV, see `Cap::supports_nvm`), and return
    //   `Ok((bar, cap))`.
    // Tests: "rnvme is bound to the NVMe controller ..." and, as the stage
    // stops there while probe fails, every check after it.
    let _ = (pdev, log_identity, BAR0_SIZE, regs::CAP, Cap::from_raw);
    Err(ENOSYS)
}
// ANCHOR_END: map
