// SPDX-License-Identifier: GPL-2.0

//! Stage 11: I/O queues. Stage 10 counted them; here the driver creates
//! one I/O queue pair per CPU (at most as many as the controller grants),
//! each with its interrupt vector (shared when there are fewer vectors
//! than queues), and proves each one with real Reads and Writes before
//! anything uses it.
//!
//! How to run: `make run STEP=11` (4 vCPUs, three controllers with
//! different limits), then `dmesg | grep queue` and `grep rnvme
//! /proc/interrupts` in the VM.

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
// Stage 10's file, unchanged: how many I/O queues, and the bring-up
// before them.
#[path = "../../solutions/10-queue-count/queue_count.rs"]
mod queue_count;
// New in stage 11: the I/O queues.
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
/// What the driver keeps per bound controller. Fields drop in the order
/// they are declared: the handlers are unregistered before the queues
/// (whose last reference disables the controller) are dropped.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The I/O queue pairs: deleted by `unbind`.
    io: KVec<IoQueue<NoRequests>>,
    /// The vectors, and the handlers of the admin and I/O queues on them,
    /// kept for their drop.
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
        let tests = BringUpTests {
            aer_wait_ms: module_parameters::aer_wait_ms.value(),
            repeat: module_parameters::repeat.value(),
        };
        // As stage 09 begins (stage 04's `map`, the DMA mask, the controller
        // reset), with more vectors: one per CPU besides the admin queue's.
        let (bar, cap) = map(pdev)?;
        // SAFETY: Nothing else allocates or maps DMA memory for this device
        // while it probes, and no allocation exists yet.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        let ctrl = Controller::new(pdev, bar, cap)?;
        // SAFETY: `irqs` goes into the driver data, which the driver core
        // drops at unbind, or is dropped on an error.
        let mut irqs =
            unsafe { Interrupts::new(pdev, queue_count::vectors_wanted(), ctrl.admin()) }?;
        // Up to working I/O queues.
        let fault = module_parameters::fault.value();
        let (id, io) = io_queues::start(pdev, &ctrl, &mut irqs, fault, tests)?;
        // Then a first real I/O through each.
        let reads = module_parameters::io_reads.value().clamp(1, 1000);
        io_queues::exercise(pdev, ctrl.admin(), &io, reads)?;
        Ok(RNvme {
            pdev,
            io,
            _irqs: irqs,
            ctrl,
            id,
        })
    }
    // ANCHOR_END: probe

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        io_queues::stop(pdev, &this.ctrl, &this.io);
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 11: NVMe I/O queues",
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
        io_reads: u32 {
            default: 70,
            description: "Pattern blocks each I/O queue reads at probe (1..=1000): the default, more than twice the queue depth, makes every ring wrap",
        },
        aer_wait_ms: u32 {
            default: 0,
            description: "For the tests: send an Asynchronous Event Request and wait this long for it (0: do not)",
        },
    },
}
