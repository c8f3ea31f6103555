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
    // TODO (exercise 2): Bring the controller's registers within reach, and
    // return BAR0, mapped, with CAP decoded. The contract:
    // - afterwards the device answers at its memory BAR and may do DMA (bus
    //   mastering): later stages hand it queues in memory;
    // - BAR0 is requested under the name "rnvme" (what /proc/iomem shows)
    //   and mapped whole, `BAR0_SIZE` bytes; it stays mapped as long as the
    //   binding (`'b`);
    // - CAP is one 64-bit register: read it as one (two 32-bit reads could
    //   tear); VS is a 32-bit one;
    // - what the controller is gets logged (`log_identity`) before anything
    //   is decided, so that a refused controller still shows itself;
    // - a controller without the NVM command set is refused with ENODEV;
    //   any other failure on the way returns its own error.
    // You have: `pdev.enable_device_mem`, `set_master` and
    // `iomap_region_sized`; `Bar0::try_read64` and `read`; `regs::CAP` and
    // `regs::VS`; `Cap::from_raw` and `Cap::supports_nvm`; `log_identity`.
    // Tests: "rnvme is bound to the NVMe controller ..." and, as the stage
    // stops there while probe fails, every check after it.
    let _ = (pdev, log_identity, BAR0_SIZE, regs::CAP, Cap::from_raw);
    Err(ENOSYS)
}
// ANCHOR_END: map
