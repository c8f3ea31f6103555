// SPDX-License-Identifier: GPL-2.0

//! Stage 14: the disk of stage 13, whose requests may now be larger than
//! one command carries. Each goes in pieces (`pieces.rs`), and a command
//! the controller fails is logged with its status.
//!
//! How to run: `make run STEP=14`, then `fio` or `dd` on `/dev/rnvme1n1`,
//! the disk of the controller whose MDTS is 16 KiB.

use kernel::{
    device::Core,
    dma::{
        Device as _,
        DmaMask, //
    },
    new_mutex,
    pci,
    prelude::*,
    sync::Mutex, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;
// Stage 10's file, unchanged: how many I/O queues.
#[path = "../../solutions/10-queue-count/queue_count.rs"]
mod queue_count;
// Stage 11's file, unchanged: the I/O queues (its `exercise` is not run:
// stage 13's test checked the queues with it).
#[allow(dead_code)]
#[path = "../../solutions/11-io-queues/io_queues.rs"]
mod io_queues;
// The kernel shim: what 7.3's block layer abstraction lacks.
mod kshim;
// Stage 13's disk, unchanged (its `finish_whole` is stage 13's).
#[allow(dead_code)]
#[path = "../../solutions/13-blk-mq/disk.rs"]
mod disk;
// New in stage 14: a request's pieces, and the controller's status.
mod pieces;

use disk::{
    Bounced,
    InFlight,
    SendDisk, //
};
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
    map::map, //
};

/// What this stage's I/O queues carry: the disk's requests.
type IoRequest = InFlight<Bounced>;

kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);

/// What the driver keeps per bound controller, as in stage 13 (fields drop
/// in the order they are declared).
#[pin_data]
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// Deleted first, by `unbind`.
    #[pin]
    disk: Mutex<Option<SendDisk<Bounced>>>,
    io: KVec<IoQueue<IoRequest>>,
    _irqs: Interrupts<'b, IoRequest>,
    ctrl: Controller,
    id: IdCtrl,
}

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
        pin_init::pin_init_scope(move || {
            // Stage 13's probe, up to working I/O queues.
            let (bar, cap) = map(pdev)?;
            // SAFETY: This is `probe`: no DMA memory of the device exists
            // yet, and nothing else allocates any for it meanwhile.
            unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
            let ctrl = Controller::new(pdev, bar, cap)?;
            // SAFETY: `irqs` is dropped on an error, else it goes into the
            // driver data, which the driver core drops at unbind.
            let mut irqs =
                unsafe { Interrupts::new(pdev, queue_count::vectors_wanted(), ctrl.admin()) }?;
            let fault = module_parameters::fault.value();
            let (id, io) =
                io_queues::start(pdev, &ctrl, &mut irqs, fault, BringUpTests::default())?;
            // The disk of stage 13, whose commands complete in this stage's
            // `pieces::finish`.
            let extra = if fault == 3 { 8 } else { 0 };
            let disk = disk::create(pdev, &ctrl, &io, &id, Bounced, pieces::finish, extra)?;
            Ok(try_pin_init!(RNvme {
                pdev,
                disk <- new_mutex!(Some(disk), "rnvme_disk"),
                io,
                _irqs: irqs,
                ctrl,
                id,
            }))
        })
    }
    // ANCHOR_END: probe

    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // The disk first (stage 13's `unbind`): its requests need the queues.
        disk::delete(this.pdev.as_ref(), &this.disk);
        io_queues::stop(pdev, &this.ctrl, &this.io);
    }
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 14: an NVMe disk whose requests go in pieces",
    license: "GPL",
    params: {
        fault: u32 {
            default: 0,
            description: "For the tests: 1 and 2 as in stage 05, 3 = a disk 8 blocks larger than the namespace",
        },
    },
}
