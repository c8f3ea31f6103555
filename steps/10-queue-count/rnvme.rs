// SPDX-License-Identifier: GPL-2.0

//! Stage 10: how many I/O queues. The driver asks for one interrupt vector
//! per CPU besides the admin queue's, then, once the controller is up, for
//! one I/O queue pair per CPU (Set Features, Number of Queues), and says
//! how many the controller grants and which vector each queue would use.
//! Stage 11 creates them.
//!
//! How to run: `make run STEP=10` (4 vCPUs, three controllers with
//! different limits), then `dmesg | grep queue` in the VM.
//!
//! Check your work with `make check STEP=10` (the exercise is in
//! `queue_count.rs`: `negotiate`).

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
// New in stage 10: how many I/O queues.
mod queue_count;

use nvme::{
    ctrl::{
        BringUpTests,
        Controller, //
    },
    identify::{
        ascii,
        IdCtrl, //
    },
    interrupts::Interrupts,
    map::map,
    queue::NoRequests, //
};

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

// ANCHOR: data
/// What the driver keeps per bound controller: stage 09's. Fields drop in
/// the order they are declared: the handler is unregistered before the
/// controller's admin queue (which disables it) is dropped.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The vectors, and the admin queue's handler on vector 0, kept for
    /// their drop.
    _irqs: Interrupts<'b, NoRequests>,
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
        // As stage 09 begins (stage 04's `map`, the DMA mask, the controller
        // reset), with more vectors: one per CPU besides the admin queue's.
        let (bar, cap) = map(pdev)?;
        // SAFETY: Nothing else allocates or maps DMA memory for this device
        // while it probes, and no allocation exists yet.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        let ctrl = Controller::new(pdev, bar, cap)?;
        // SAFETY: `irqs` goes into the driver data, which the driver core
        // drops at unbind, or is dropped on an error.
        let irqs = unsafe { Interrupts::new(pdev, queue_count::vectors_wanted(), ctrl.admin()) }?;
        // Started, identified, and the I/O queues counted (no test knobs:
        // stage 09 tested the bring-up), but none created: that is stage 11.
        let (id, count, vectors) =
            queue_count::bring_up_and_count(pdev, &ctrl, &irqs, 0, BringUpTests::default())?;
        for qid in 1..=count {
            dev_info!(
                pdev,
                "I/O queue {} would use vector {}\n",
                qid,
                queue_count::vector_of(qid, vectors)
            );
        }
        Ok(RNvme {
            pdev,
            _irqs: irqs,
            ctrl,
            id,
        })
    }
    // ANCHOR_END: probe

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // As in stage 09: stop the controller before `RNvme` is dropped,
        // right after this, which frees the admin queue's memory.
        this.ctrl.stop(pdev);
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 10: how many NVMe I/O queues",
    license: "GPL",
}
