// SPDX-License-Identifier: GPL-2.0

//! Stage 12: PRP lists. Stage 11's commands moved one page; here one
//! command moves up to 32 pages of a buffer of the driver's, at any place
//! in it, its data described by PRP1, PRP2 and a PRP list
//! (`prp::describe`, this stage's exercise, tested on the host too).
//!
//! How to run: `make run STEP=12`, then `dmesg | grep PRP` in the VM.

use kernel::{
    device::Core,
    dma::{
        Device as _,
        DmaMask, //
    },
    pci,
    prelude::*, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its
// files, among them this stage's new one, `transfers.rs`.
mod nvme;
// Stage 10's file, unchanged: how many I/O queues.
#[path = "../../solutions/10-queue-count/queue_count.rs"]
mod queue_count;
// Stage 11's file, unchanged: the I/O queues. (Its `exercise`, stage 11's
// check of every queue, is not called: the transfers below replace it.)
#[allow(dead_code)]
#[path = "../../solutions/11-io-queues/io_queues.rs"]
mod io_queues;

use io_queues::IoQueue;
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
    queue::NoRequests,
    transfers, //
};

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

// ANCHOR: data
/// What the driver keeps per bound controller: stage 11's. Fields drop in
/// the order they are declared: the handlers are unregistered before the
/// controller's queues are dropped.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// What Identify Controller said.
    id: IdCtrl,
    /// The I/O queue pairs: deleted by `unbind`.
    io: KVec<IoQueue<NoRequests>>,
    /// The vectors and the handlers on them, kept for their drop.
    _irqs: Interrupts<'b, NoRequests>,
    /// The registers and the admin queue pair.
    ctrl: Controller,
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
        // Stage 11's probe, up to working I/O queues (no test knobs).
        let (bar, cap) = map(pdev)?;
        // SAFETY: As in stage 11: this is `probe`, no DMA memory of the
        // device exists yet, and nothing else allocates any meanwhile.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        let ctrl = Controller::new(pdev, bar, cap)?;
        // SAFETY: As in stage 11: `irqs` goes into the driver data, which
        // the driver core drops at unbind, or is dropped on an error.
        let mut irqs =
            unsafe { Interrupts::new(pdev, queue_count::vectors_wanted(), ctrl.admin()) }?;
        let (id, io) = io_queues::start(pdev, &ctrl, &mut irqs, 0, BringUpTests::default())?;
        // New: transfers of many pages, through the first I/O queue.
        transfers::check(pdev, &ctrl, &io.first().ok_or(ENODEV)?.queue)?;
        Ok(RNvme {
            pdev,
            id,
            io,
            _irqs: irqs,
            ctrl,
        })
    }
    // ANCHOR_END: probe

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        io_queues::stop(pdev, &this.ctrl, &this.io);
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 12: NVMe PRP lists",
    license: "GPL",
}
