// SPDX-License-Identifier: GPL-2.0

//! Stage 20: the disk a user sees. Stage 19's driver, whose disk now
//! takes requests as large as the controller does (MDTS), keeps the
//! controller's volatile write cache on (Flush and FUA for `fsync`),
//! deallocates what is discarded (Dataset Management), and sits under its
//! PCI device in sysfs (`disk_limits`).
//!
//! How to run: `make run STEP=20`, then `cat /sys/block/rnvme0n1/queue/*`,
//! `blkdiscard` and `fstrim` on `/dev/rnvme0n1`, and `dmesg | tail` after
//! `rmmod rnvme` (the flushes, FUA writes and discards sent).
//!
//! Check your work with `make check STEP=20` (the exercise: `dsm` in
//! `disk_limits.rs`).

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

// The NVMe library, as far as this stage uses it: stage 19's, unchanged
// (its `nvme.rs` lists the files).
#[path = "../../solutions/19-zero-copy/nvme.rs"]
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
// Stage 13's disk, unchanged: this stage plugs its speedups into it (and
// does not use stage 13's, `Bounced`).
#[allow(dead_code)]
#[path = "../../solutions/13-blk-mq/disk.rs"]
mod disk;
// Stage 14's file, unchanged: how a request's pieces complete.
#[path = "../../solutions/14-pieces/pieces.rs"]
mod pieces;
// Stage 16's nvme-cli nodes and their ioctls, stage 17's watchdog and
// stage 18's removal, unchanged.
#[path = "../../solutions/16-passthrough/chardev.rs"]
mod chardev;
#[path = "../../solutions/15-passthru-check/passthru.rs"]
mod passthru;
#[path = "../../solutions/18-removal/removal.rs"]
mod removal;
#[path = "../../solutions/17-timeouts/watchdog.rs"]
mod watchdog;
// Stage 19's zero copy and doorbell batching, unchanged (its `IoRequest`
// is stage 19's: this stage's requests carry more).
#[allow(dead_code)]
#[path = "../../solutions/19-zero-copy/dma_map.rs"]
mod dma_map;
// New in stage 20: the disk's limits, write cache and discards.
mod disk_limits;

use chardev::{
    Nodes,
    Passthrough, //
};
use disk::{
    InFlight,
    SendDisk, //
};
use disk_limits::FullDisk;
use dma_map::ZeroCopy;
use io_queues::{
    IoQueue,
    IO_DEPTH, //
};
use kshim::{
    affinity,
    lingering::Lingering, //
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
use watchdog::Watchdog;

/// A block request in flight on an I/O queue.
type IoRequest = InFlight<FullDisk>;

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
    disk: Mutex<Option<SendDisk<FullDisk>>>,
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
            // Stage 11's probe, up to working I/O queues: the driver's only
            // two `unsafe` blocks, the promises every PCI driver of 7.3
            // makes for its DMA mask and its interrupt handlers. (No test
            // knobs: stages 09 to 13 tried them.)
            let tests = BringUpTests::default();
            let (bar, cap) = map(pdev)?;
            // SAFETY: This is `probe`: no DMA memory of the device exists
            // yet, and nothing else allocates any for it meanwhile.
            unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
            let ctrl = Controller::new(pdev, bar, cap)?;
            // SAFETY: `irqs` is dropped on an error, else it goes into the
            // driver data, which the driver core drops at unbind.
            let mut irqs =
                unsafe { Interrupts::new(pdev, queue_count::vectors_wanted(), ctrl.admin()) }?;
            let (id, io) = io_queues::start(pdev, &ctrl, &mut irqs, 0, tests)?;
            // ANCHOR_END: probe

            // What the nvme-cli nodes will need (it asks Identify Namespace
            // for the block size: before the disk, whose first request may
            // time out and stop the controller).
            let passthrough = Passthrough::new(pdev, &ctrl, &io.first().ok_or(ENODEV)?.queue)?;
            // ANCHOR: watchdog_field
            // The watchdog, before the disk: the block layer reads the
            // partition table as soon as the disk exists, and a controller
            // that does not answer must not hang the probe.
            let ms = module_parameters::io_timeout_ms.value().clamp(100, 600_000);
            let watchdog = Watchdog::start(
                pdev.as_ref(),
                ctrl.admin(),
                &io,
                Delta::from_millis(ms.into()),
            )?;
            // ANCHOR_END: watchdog_field
            // ANCHOR: disk_field
            // Last, with every queue proven: the disk. From here on the
            // block layer may send requests (it reads the partition table
            // at once). Its requests use identifiers 0..TAGS of each I/O
            // queue (their tags); passthrough commands the ones above.
            for q in io.iter() {
                q.queue.reserve_tags(IO_DEPTH - 1);
            }
            let speedups = ZeroCopy::new(
                pdev,
                &id,
                module_parameters::zero_copy.value() != 0,
                module_parameters::sgl.value() != 0,
            );
            // New: the write cache and discards, and (below) the limits.
            let ns = ctrl.identify_namespace(pdev, disk::NSID)?;
            let speedups = FullDisk::new(pdev, speedups, &id, &ns);
            let disk = disk::create(pdev, &ctrl, &io, &id, speedups, pieces::finish, 0)?;
            // ANCHOR: limits
            // The block layer's limits for the disk, from the controller's,
            // and the disk moved under its controller.
            let block = ns.block_size().ok_or(EIO)?;
            disk_limits::set_up(pdev, &disk, &id, ctrl.cap().min_page_size(), block)?;
            // ANCHOR_END: limits
            // Each I/O queue's interrupt to the CPUs that submit to it (the
            // tag set's map says which).
            let mut hw_vectors = KVec::with_capacity(io.len(), GFP_KERNEL)?;
            for q in io.iter() {
                hw_vectors.push(q.vector, GFP_KERNEL)?;
            }
            let placed = affinity::spread(irqs.vectors(), &hw_vectors, disk.tag_set());
            dev_info!(
                pdev,
                "{} I/O queue interrupt(s) sent to their CPU\n",
                placed
            );
            let number = disk.number();
            // ANCHOR_END: disk_field
            // ANCHOR: nodes_field
            Ok(try_pin_init!(RNvme {
                // Initialised in the order written here, and on an error
                // dropped in the reverse: the nodes last, after the disk
                // (whose deletion waits for its requests, which need the
                // queues and their handlers), so none of these drops before
                // the disk.
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
            // ANCHOR_END: nodes_field
        })
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // Removal as stage 18 does it.
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
    description: "Stage 20: an NVMe driver for production: the disk a user sees",
    license: "GPL",
    params: {
        zero_copy: u32 {
            default: 1,
            description: "1: the controller reads and writes the requests' own pages where PRPs can describe them; 0: every request through a bounce buffer (as stage 13)",
        },
        sgl: u32 {
            default: 1,
            description: "1: zero-copy requests whose pages PRPs cannot describe use an SGL, if the controller takes SGLs; 0: they use the bounce buffer",
        },
        io_timeout_ms: u32 {
            default: 30000,
            description: "How long a block request may wait for the controller (100..=600000 ms) before it is aborted; the C driver's default is 30 s",
        },
    },
}
