// SPDX-License-Identifier: GPL-2.0

//! Stage 21: as fast as the C driver. Stage 20's driver, with I/O queues
//! as deep as the controller takes (up to 1024 entries: C's), shadow
//! doorbells where the controller offers them, and tags that own a page
//! each instead of a 512 KiB bounce buffer (`speed`).
//!
//! How to run: `make run STEP=21`, then `cat
//! /sys/block/rnvme0n1/queue/nr_requests`, fio at QD32 on `/dev/rnvme0n1`,
//! and `dmesg | tail` after `rmmod rnvme` (each queue's doorbell register
//! writes, and the new values the shadow doorbells alone carried). Its
//! speed: `scripts/bench-nvme.sh`, with `BENCH_NVME_STAGE=21-speed`.
//!
//! Check your work with `make check STEP=21` (the exercises: `need_event`
//! in `event_index.rs`; `queue_depth` and `shadow_doorbells` in
//! `speed.rs`).

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
// The kernel shim, stage 20's, unchanged: what 7.3's `kernel` crate lacks,
// as far as this stage needs it (`kshim.rs` lists its files).
#[path = "../../solutions/20-disk-limits/kshim.rs"]
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
// Stage 20's disk limits, write cache and discards, unchanged.
#[path = "../../solutions/20-disk-limits/disk_limits.rs"]
mod disk_limits;
// New: the queue depth, shadow doorbells and the bounce pool; the event
// index arithmetic of shadow doorbells.
mod event_index;
mod speed;

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
use io_queues::IoQueue;
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
use speed::SpeedDisk;
use watchdog::Watchdog;

/// A block request in flight on an I/O queue.
type IoRequest = InFlight<SpeedDisk>;

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
    disk: Mutex<Option<SendDisk<SpeedDisk>>>,
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
            // New: queues as deep as the controller takes (or as the
            // `io_depth` parameter says, to measure what depth buys).
            let most = module_parameters::io_depth.value().clamp(2, 1024);
            let depth = speed::queue_depth(ctrl.cap()).min(u16::try_from(most)?);
            let (id, io) = io_queues::start_deep(pdev, &ctrl, &mut irqs, 0, tests, depth)?;
            // ANCHOR_END: probe
            // ANCHOR: shadow
            // New: shadow doorbells, while nothing is in flight on the I/O
            // queues.
            if module_parameters::shadow_doorbells.value() != 0 {
                speed::shadow_doorbells(pdev, &ctrl, &id, &io)?;
            }
            dev_info!(pdev, "{} I/O queues of {} entries\n", io.len(), depth);
            // ANCHOR_END: shadow

            // What the nvme-cli nodes will need (it asks Identify Namespace
            // for the block size: before the disk, whose first request may
            // time out and stop the controller).
            let passthrough = Passthrough::new(pdev, &ctrl, &io.first().ok_or(ENODEV)?.queue)?;
            // ANCHOR: watchdog_field
            // The watchdog, before the disk: the block layer reads the
            // partition table as soon as the disk exists, and a controller
            // that does not answer must not hang the probe.
            let ms = module_parameters::io_timeout_ms.value().clamp(100, 600_000);
            let timeout = Delta::from_millis(ms.into());
            let watchdog = Watchdog::start(pdev.as_ref(), ctrl.admin(), &io, timeout)?;
            // ANCHOR_END: watchdog_field
            // ANCHOR: disk_field
            // Last, with every queue proven: the disk. From here on the
            // block layer may send requests (it reads the partition table
            // at once). Its requests use identifiers 0..TAGS of each I/O
            // queue (their tags); passthrough commands the ones above.
            for q in io.iter() {
                q.queue.reserve_tags(depth - 1);
                // New, to measure: no clock read per request.
                if module_parameters::lazy_stamps.value() != 0 {
                    q.queue.stamp_lazily();
                }
            }
            // Stage 20's disk (stage 19's zero copy, the write cache,
            // discards and, below, the limits), and new: tags of a page,
            // and a pool of large bounce buffers.
            let zero_copy = module_parameters::zero_copy.value() != 0;
            let sgl = module_parameters::sgl.value() != 0;
            let ns = ctrl.identify_namespace(pdev, disk::NSID)?;
            let zero_copy = ZeroCopy::new(pdev, &id, zero_copy, sgl);
            // New: requests of one piece mapped in one call, when zero copy
            // is on (the `zero_copy` parameter: off, every request is
            // bounced).
            let one_piece = zero_copy.device().is_some();
            let full = FullDisk::new(pdev, zero_copy, &id, &ns);
            let speedups = SpeedDisk::new(pdev, full, io.len(), one_piece)?;
            let disk = disk::create(pdev, &ctrl, &io, &id, speedups, pieces::finish, 0)?;
            // ANCHOR: limits
            // The block layer's limits for the disk, from the controller's,
            // and the disk moved under its controller.
            let block = ns.block_size().ok_or(EIO)?;
            disk_limits::set_up(pdev, &disk, &id, ctrl.cap().min_page_size(), block)?;
            // ANCHOR_END: limits
            // Each I/O queue's interrupt to the CPUs that submit to it (the
            // tag set's map says which).
            let mut vectors = KVec::with_capacity(io.len(), GFP_KERNEL)?;
            for q in &io {
                vectors.push(q.vector, GFP_KERNEL)?;
            }
            let placed = affinity::spread(irqs.vectors(), &vectors, disk.tag_set());
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
        // New: what the shadow doorbells saved.
        for q in this.io.iter() {
            let (mmio, shadow_only) = q.queue.doorbell_writes();
            dev_info!(
                this.pdev,
                "queue {}: {} doorbell register writes, {} new values by the shadow doorbells alone\n",
                q.queue.qid(),
                mmio,
                shadow_only
            );
        }
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
    description: "Stage 21: an NVMe driver for production, as fast as the C driver",
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
        io_depth: u32 {
            default: 1024,
            description: "The most entries of an I/O queue (2..=1024; the controller may take fewer): 32 is stage 20's depth",
        },
        lazy_stamps: u32 {
            default: 0,
            description: "1: the watchdog stamps a request when it first sees it (not measured yet); 0: each request reads the clock when it is submitted (as stage 20)",
        },
        shadow_doorbells: u32 {
            default: 1,
            description: "1: shadow doorbells, if the controller offers them; 0: every doorbell on its register (as stage 20)",
        },
        io_timeout_ms: u32 {
            default: 30000,
            description: "How long a block request may wait for the controller (100..=600000 ms) before it is aborted; the C driver's default is 30 s",
        },
    },
}
