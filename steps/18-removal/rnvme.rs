// SPDX-License-Identifier: GPL-2.0

//! Stage 18: removal. Stage 17's driver, for when the device goes while
//! it works: unbound, removed or hot-unplugged while fio runs, its module
//! unloaded while its disk is mounted. Every request ends, and a disk
//! still open keeps the module until it is closed (`removal`).
//!
//! How to run: `make run STEP=18`, then mount `/dev/rnvme0n1` and `rmmod
//! rnvme`: it waits for the umount.
//!
//! Check your work with `make check STEP=18` (the exercise: `delete_disk`
//! in `removal.rs`).

use kernel::{
    device::Core,
    dma::{
        Device as _,
        DmaMask, //
    },
    new_mutex,
    pci,
    prelude::*,
    sync::Mutex,
    time::Delta, //
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
// Stage 16's nvme-cli nodes and their ioctls, unchanged.
#[path = "../../solutions/16-passthrough/chardev.rs"]
mod chardev;
#[path = "../../solutions/15-passthru-check/passthru.rs"]
mod passthru;
// Stage 17's watchdog, unchanged.
#[path = "../../solutions/17-timeouts/watchdog.rs"]
mod watchdog;
// New in stage 18: removal, with the disk still open.
mod removal;

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
use kshim::lingering::Lingering;
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
use watchdog::Watchdog;

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
    /// Watches the requests in flight: stopped by `unbind` after the disk
    /// is gone.
    watchdog: Watchdog<IoRequest>,
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

            // Stage 16's nvme-cli nodes: what they will need (it asks
            // Identify Namespace for the block size: before the disk, whose
            // first request may time out and stop the controller).
            let passthrough = Passthrough::new(pdev, &ctrl, &io.first().ok_or(ENODEV)?.queue)?;
            // Stage 17's watchdog, before the disk.
            let ms = module_parameters::io_timeout_ms.value().clamp(100, 600_000);
            let timeout = Delta::from_millis(ms.into());
            let watchdog = Watchdog::start(pdev.as_ref(), ctrl.admin(), &io, timeout)?;
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
                watchdog,
                disk <- new_mutex!(Some(disk), "rnvme_disk"),
                // Last: the nodes, which user space may open at once.
                nodes <- Nodes::new(passthrough, number)?,
            }))
        })
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // Stage 17's unbind, whose disk, if still open, keeps the module.
        watchdog::unbind(pdev, &this.ctrl, &this.watchdog, &this.io, || {
            removal::delete_disk(this.pdev.as_ref(), &this.disk)
        });
    }
    // ANCHOR_END: unbind
}

// ANCHOR: module
/// The module: the driver, and the disks that are still open after their
/// controller has gone. Fields drop in declaration order: the driver is
/// unregistered (every controller unbound) before the module waits for
/// those disks to be closed.
#[pin_data]
struct RNvmeModule {
    #[pin]
    driver: kernel::driver::Registration<pci::Adapter<RNvmeDriver>>,
    lingering: Lingering,
}

impl kernel::InPlaceModule for RNvmeModule {
    fn init(module: &'static kernel::ThisModule) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            // First: an unbind may need it as soon as the driver exists.
            lingering: Lingering::new(c"rnvme_lingering")?,
            driver <- kernel::driver::Registration::new(<Self as kernel::ModuleMetadata>::NAME, module),
        })
    }
}
// ANCHOR_END: module

kernel::prelude::module! {
    type: RNvmeModule,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 18: an NVMe driver removable while in use",
    license: "GPL",
    params: {
        io_timeout_ms: u32 {
            default: 30000,
            description: "How long a block request may wait for the controller (100..=600000 ms) before it is aborted; the C driver's default is 30 s",
        },
    },
}
