// SPDX-License-Identifier: GPL-2.0

//! Stage 05: reset QEMU's NVMe controller: disable it, give it admin queue
//! memory, enable it, honouring its timeout.
//!
//! How to run: `make run STEP=05` boots the VM with `-device nvme`; the
//! module binds to it (PCI ID 1b36:0010), resets and enables it.

use kernel::{
    device::Core,
    dma::{
        Coherent,
        Device as _,
        DmaMask, //
    },
    pci,
    prelude::*, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its
// files. New in stage 05: the controller reset, `controller.rs`.
mod nvme;

use nvme::{
    cap::Cap,
    controller,
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

/// Entries in each admin queue.
const ADMIN_DEPTH: u16 = 32;
/// Bytes of an admin submission queue entry (a command).
const SQE_SIZE: usize = 64;
/// Bytes of an admin completion queue entry.
const CQE_SIZE: usize = 16;

// ANCHOR: data
/// What the driver keeps per bound controller.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The registers: unmapped (and the region released) when dropped.
    bar: Bar0<'b>,
    /// The capabilities read at probe time.
    cap: Cap,
    /// Admin submission queue memory. The controller may read it while it
    /// is enabled: `unbind` disables it before this is freed.
    _asq: Coherent<[u8]>,
    /// Admin completion queue memory, written by the controller.
    _acq: Coherent<[u8]>,
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
        // Stage 04's `map`: the registers in reach, CAP and VS logged.
        let (bar, cap) = map(pdev)?;
        // ANCHOR_END: probe

        // ANCHOR: reset
        // SAFETY: Nothing else allocates or maps DMA memory for this device
        // while it probes, and no allocation exists yet.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        let asq = Coherent::<u8>::zeroed_slice(
            pdev.as_ref(),
            usize::from(ADMIN_DEPTH) * SQE_SIZE,
            GFP_KERNEL,
        )?;
        let acq = Coherent::<u8>::zeroed_slice(
            pdev.as_ref(),
            usize::from(ADMIN_DEPTH) * CQE_SIZE,
            GFP_KERNEL,
        )?;

        // Whatever state firmware or a previous driver left: start disabled.
        controller::disable(pdev.as_ref(), &bar, &cap)?;
        // For the test: `fault` asks for a controller that fails to start.
        let fault = module_parameters::fault.value();
        let page_shift = controller::page_shift_for(pdev.as_ref(), &bar, &cap, fault)?;
        if let Err(e) = controller::enable(
            pdev.as_ref(),
            &bar,
            &cap,
            asq.dma_address(),
            acq.dma_address(),
            ADMIN_DEPTH,
            page_shift,
        ) {
            // It may have started: stop it before the queue memory is freed.
            let _ = controller::disable(pdev.as_ref(), &bar, &cap);
            return Err(e);
        }
        regs::log_admin_queues(pdev, ADMIN_DEPTH, asq.dma_address(), acq.dma_address());
        // ANCHOR_END: reset

        Ok(RNvme {
            pdev,
            bar,
            cap,
            _asq: asq,
            _acq: acq,
        })
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding (MQES was {})\n", this.cap.mqes);
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        match controller::disable(pdev.as_ref(), &this.bar, &this.cap) {
            Ok(()) => dev_info!(this.pdev, "controller disabled\n"),
            Err(e) => dev_err!(this.pdev, "disabling failed ({:?})\n", e),
        }
    }
    // ANCHOR_END: unbind
}

impl Drop for RNvme<'_> {
    fn drop(&mut self) {
        // Reading VS once more shows the mapping is still valid here.
        regs::log_released(self.pdev, &self.bar);
    }
}

// ANCHOR: module
kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 05: NVMe controller reset",
    license: "GPL",
    params: {
        fault: u32 {
            default: 0,
            description: "For the tests: 1 = ask for an unsupported page size, 2 = wait for a ready state that never comes",
        },
    },
}
// ANCHOR_END: module
