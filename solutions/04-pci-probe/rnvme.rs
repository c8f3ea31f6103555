// SPDX-License-Identifier: GPL-2.0

//! Stage 04: a PCI driver for QEMU's NVMe controller that maps its registers
//! and decodes its capabilities.
//!
//! How to run: `make run STEP=04` boots the VM with `-device nvme`; the
//! module binds to it (PCI ID 1b36:0010) and logs what the controller can do.

use kernel::{
    device::Core,
    pci,
    prelude::*, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;

use nvme::{
    cap::Cap,
    map::map,
    regs::{
        self,
        Bar0, //
    },
};

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

// ANCHOR: data
/// What the driver keeps per bound controller.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The registers: unmapped (and the region released) when dropped.
    bar: Bar0<'b>,
    /// The capabilities read at probe time.
    cap: Cap,
}
// ANCHOR_END: data

/// The driver: `probe` and `unbind` for every matching device.
struct RNvmeDriver;

impl pci::Driver for RNvmeDriver {
    type IdInfo = ();
    type Data<'b> = RNvme<'b>;
    const ID_TABLE: pci::IdTable<()> = &PCI_TABLE;

    // ANCHOR: probe
    fn probe<'b>(
        pdev: &'b pci::Device<Core<'_>>,
        _info: Option<&'b ()>,
    ) -> impl PinInit<RNvme<'b>, Error> + 'b {
        // Stage 04's exercise is `map` (in `map.rs`): probe is done when
        // the registers are in reach.
        let (bar, cap) = map(pdev)?;
        Ok(RNvme { pdev, bar, cap })
    }
    // ANCHOR_END: probe

    // ANCHOR: unbind
    fn unbind<'b>(_pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        // Nothing to quiesce yet: the controller was never enabled. The
        // mapping is released when `RNvme` is dropped, right after this.
        dev_info!(this.pdev, "unbinding (MQES was {})\n", this.cap.mqes);
    }
    // ANCHOR_END: unbind
}

impl Drop for RNvme<'_> {
    fn drop(&mut self) {
        // Reading VS once more shows the mapping is still valid here.
        regs::log_released(self.pdev, &self.bar);
    }
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 04: PCI probe of an NVMe controller",
    license: "GPL",
}
