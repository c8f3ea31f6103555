// SPDX-License-Identifier: GPL-2.0

//! Stage 08: the shared queue. Stage 07's admin queue becomes the NVMe
//! library's queue pair, with a lock, a slot per command identifier, and
//! commands that may be abandoned and answered late; its completions are
//! still polled (the interrupt handler that reaps them is stage 09's).
//!
//! How to run: `make run STEP=08`, then `dmesg | grep rnvme` in the VM: the
//! completions were "reaped by polling".
//!
//! Check your work with `make check STEP=08` (the exercise is in
//! `reap.rs`: `QueuePair::reap_locked`).

use kernel::{
    device::Core,
    dma::{
        Device as _,
        DmaMask, //
    },
    pci,
    prelude::*, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;

use nvme::{
    ctrl::{
        BringUpTests,
        Controller, //
    },
    identify::{
        ascii,
        IdCtrl, //
    },
    late_answers::answered_late,
    map::map, //
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
    /// The registers and the admin queue pair.
    ctrl: Controller,
    /// What Identify Controller said.
    id: IdCtrl,
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

        // SAFETY: Nothing else allocates or maps DMA memory for this device
        // while it probes, and no allocation exists yet.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        // Disabled, the registers shared, the admin queue pair allocated.
        let ctrl = Controller::new(pdev, bar, cap)?;
        // For the test: `fault` asks for a controller that fails to start.
        let page_shift = ctrl.page_shift_for(pdev, module_parameters::fault.value())?;
        ctrl.start(pdev, page_shift)?;
        // Commands can complete now; with no interrupt vectors (`None`),
        // each submitter reaps by polling.
        let id = ctrl.bring_up(
            pdev,
            None,
            BringUpTests {
                repeat: module_parameters::repeat.value(),
                aer_wait_ms: module_parameters::aer_wait_ms.value(),
            },
        )?;
        // For the test: commands abandoned, answered late. On an error it
        // has stopped the controller, or sent nothing; dropping `ctrl`
        // stops it in any case.
        answered_late(pdev, ctrl.admin(), module_parameters::late.value())?;
        Ok(RNvme { pdev, ctrl, id })
    }
    // ANCHOR_END: probe

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        this.ctrl.stop(pdev);
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 08: NVMe admin queue shared, reaped by polling",
    license: "GPL",
    params: {
        fault: u32 {
            default: 0,
            description: "For the tests: 1 = ask for an unsupported page size, 2 = wait for a ready state that never comes",
        },
        repeat: u32 {
            default: 0,
            description: "For the tests: send Identify this many more times (0..=10000), so the admin queues wrap",
        },
        aer_wait_ms: u32 {
            default: 0,
            description: "For the tests: send an Asynchronous Event Request and wait this long for it (0: do not)",
        },
        late: u32 {
            default: 0,
            description: "For the tests: abandon this many Asynchronous Event Requests (0..=1000), each answered later",
        },
    },
}
