// SPDX-License-Identifier: GPL-2.0

//! Stage 13: a disk. The I/O queues of stage 11 become the hardware queues
//! of a blk-mq disk, `/dev/rnvme0n1`: the block layer hands the driver
//! Reads, Writes and Flushes, the driver turns them into NVMe commands, and
//! the queues' interrupts end them.
//!
//! How to run: `make run STEP=13`, then `lsblk`, `mkfs.ext4 /dev/rnvme0n1`
//! or `fio` in the VM.

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
// Stage 11's file, unchanged: the I/O queues.
#[path = "../../solutions/11-io-queues/io_queues.rs"]
mod io_queues;
// The kernel shim: what 7.3's block layer abstraction lacks.
mod kshim;
// New in stage 13: the disk.
mod disk;

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

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

// ANCHOR: data
/// What the driver keeps per bound controller. Fields drop in the order
/// they are declared: the disk before the queues its requests use, the
/// handlers before the queues (whose last reference disables the
/// controller).
#[pin_data]
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The disk: deleted by `unbind` (which waits for its requests) before
    /// the I/O queues are.
    #[pin]
    disk: Mutex<Option<SendDisk<Bounced>>>,
    /// The I/O queue pairs: deleted by `unbind`.
    io: KVec<IoQueue<InFlight<Bounced>>>,
    /// The vectors, and the handlers of the admin and I/O queues on them,
    /// kept for their drop.
    _irqs: Interrupts<'b, InFlight<Bounced>>,
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
            // Stage 11's probe, up to working I/O queues, then its first
            // real I/O through each.
            let (bar, cap) = map(pdev)?;
            // SAFETY: Nothing else allocates or maps DMA memory for this
            // device while it probes, and no allocation exists yet.
            unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
            let ctrl = Controller::new(pdev, bar, cap)?;
            let vectors = queue_count::vectors_wanted();
            // SAFETY: `irqs` goes into the driver data, which the driver
            // core drops at unbind, or is dropped on an error.
            let mut irqs = unsafe { Interrupts::new(pdev, vectors, ctrl.admin()) }?;
            let fault = module_parameters::fault.value();
            let tests = BringUpTests::default();
            let (id, io) = io_queues::start(pdev, &ctrl, &mut irqs, fault, tests)?;
            let reads = module_parameters::io_reads.value().clamp(1, 1000);
            io_queues::exercise(pdev, ctrl.admin(), &io, reads)?;
            // ANCHOR_END: probe

            // ANCHOR: disk_field
            // Last, with every queue proven: the disk. From here on the
            // block layer may send requests (it reads the partition table
            // at once).
            let extra = if fault == 3 { 8 } else { 0 };
            let disk = disk::create(pdev, &ctrl, &io, &id, Bounced, disk::finish_whole, extra)?;
            Ok(try_pin_init!(RNvme {
                pdev,
                disk <- new_mutex!(Some(disk), "rnvme_disk"),
                io,
                _irqs: irqs,
                ctrl,
                id,
            }))
            // ANCHOR_END: disk_field
        })
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // The disk first: `del_gendisk` waits for the requests in flight,
        // which need the I/O queues (and their interrupts) to end.
        disk::delete(this.pdev.as_ref(), &this.disk);
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
    description: "Stage 13: an NVMe disk on blk-mq",
    license: "GPL",
    params: {
        fault: u32 {
            default: 0,
            description: "For the tests: 1 = ask for an unsupported page size, 2 = wait for a ready state that never comes, 3 = a disk 8 blocks larger than the namespace",
        },
        io_reads: u32 {
            default: 70,
            description: "Pattern blocks each I/O queue reads at probe (1..=1000): the default, more than twice the queue depth, makes every ring wrap",
        },
    },
}
