// SPDX-License-Identifier: GPL-2.0

//! Stage 16: nvme-cli. Stage 13's disk, plus the character devices
//! `/dev/rnvmeX` and `/dev/rngXn1` that nvme-cli talks to: each passes a
//! command from user space to the controller (`chardev`), once it is
//! checked (`passthru`), and hands back its status, result and data.
//!
//! How to run: `make run STEP=16`, then `nvme id-ctrl /dev/rnvme0` or
//! `nvme read /dev/rng0n1 -s 0 -c 0 -z 512` in the VM.

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
// Stage 11's file, unchanged: the I/O queues. (Its `exercise`, stage 11's
// check of every queue with the host's pattern, is not run any more: the
// disk's data is its user's now.)
#[allow(dead_code)]
#[path = "../../solutions/11-io-queues/io_queues.rs"]
mod io_queues;
// The kernel shim: what 7.3's `kernel` crate lacks, as far as this stage
// needs it (`kshim.rs` lists its files).
mod kshim;
// Stage 13's disk, unchanged.
#[allow(dead_code)]
#[path = "../../solutions/13-blk-mq/disk.rs"]
mod disk;
// Stage 14's file, unchanged: how a request's pieces complete.
#[path = "../../solutions/14-pieces/pieces.rs"]
mod pieces;
// Stage 15's passthrough rules, unchanged.
#[path = "../../solutions/15-passthru-check/passthru.rs"]
mod passthru;
// New in stage 16: the nvme-cli nodes and their ioctls.
mod chardev;

use chardev::{
    Nodes,
    Passthrough, //
};
use disk::{
    Bounced,
    InFlight,
    SendDisk, //
};
use io_queues::{
    IoQueue,
    IO_DEPTH, //
};
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

/// What the I/O queues' commands carry: the disk's requests, through
/// stage 13's bounce buffers.
type IoRequest = InFlight<Bounced>;

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

// ANCHOR: data
/// What the driver keeps per bound controller. Fields drop in the order
/// they are declared: the nodes first (no new file opens them), the disk
/// before the queues its requests use, the handlers before the queues
/// (whose last reference disables the controller).
#[pin_data]
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// `/dev/rnvmeX` and `/dev/rngXn1`: dropped first, so no new file
    /// opens them (open files keep their `Passthrough`).
    #[pin]
    nodes: Nodes<IoRequest>,
    /// The disk: deleted by `unbind` (which waits for its requests) before
    /// the I/O queues are.
    #[pin]
    disk: Mutex<Option<SendDisk<Bounced>>>,
    /// The I/O queue pairs: deleted by `unbind`.
    io: KVec<IoQueue<IoRequest>>,
    /// The vectors, and the handlers of the admin and I/O queues on them,
    /// kept for their drop.
    _irqs: Interrupts<'b, IoRequest>,
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
            let (id, io) = io_queues::start(pdev, &ctrl, &mut irqs, 0, BringUpTests::default())?;
            // ANCHOR_END: probe

            // ANCHOR: passthrough
            // What the nvme-cli nodes will need (it asks Identify Namespace
            // for the block size: before the disk, whose first request may
            // time out and stop the controller).
            let passthrough = Passthrough::new(pdev, &ctrl, &io.first().ok_or(ENODEV)?.queue)?;
            // The disk's requests use identifiers 0..TAGS of each I/O queue
            // (their tags); passthrough commands the ones above.
            for q in io.iter() {
                q.queue.reserve_tags(IO_DEPTH - 1);
            }
            let disk = disk::create(pdev, &ctrl, &io, &id, Bounced, pieces::finish, 0)?;
            let number = disk.number();
            Ok(try_pin_init!(RNvme {
                // Initialised in the order written here, and on an error
                // dropped in the reverse: the nodes last, after the disk.
                pdev,
                ctrl,
                _irqs: irqs,
                io,
                id,
                disk <- new_mutex!(Some(disk), "rnvme_disk"),
                // Last: the nodes, which user space may open at once.
                nodes <- Nodes::new(passthrough, number)?,
            }))
            // ANCHOR_END: passthrough
        })
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        disk::delete(this.pdev.as_ref(), &this.disk);
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        io_queues::stop(pdev, &this.ctrl, &this.io);
        // A file still open on a node keeps the queues: from now on they
        // refuse every command.
        for q in this.io.iter() {
            while q.queue.cancel_next().is_some() {}
        }
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 16: an NVMe driver that nvme-cli can talk to",
    license: "GPL",
}
