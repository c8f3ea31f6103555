// SPDX-License-Identifier: GPL-2.0

//! Stage 09: a disk. The I/O queues of stage 08 become the hardware queues
//! of a blk-mq disk, `/dev/rnvme0n1`: the block layer hands the driver
//! Reads, Writes and Flushes, the driver turns them into NVMe commands, and
//! the queues' interrupts end them.
//!
//! How to run: `make run STEP=09`, then `lsblk`, `mkfs.ext4 /dev/rnvme0n1`
//! or `fio` in the VM.
//!
//! Check your work with `make check STEP=09` (the exercises: `describe` in
//! `prp.rs`, `Disk::queue_rq` and `InFlight::finish` in `disk.rs`).

use kernel::{
    cpu,
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
// Stage 08's file, unchanged: the I/O queues.
#[path = "../../solutions/08-io-queues/io_queues.rs"]
mod io_queues;
// The kernel shim: what 7.3's block layer abstraction lacks.
mod kshim;
// New in stage 09: the disk.
mod disk;

use disk::{
    Bounced,
    InFlight,
    SendDisk, //
};
use nvme::{
    controller,
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
use io_queues::IoQueue;

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

/// The memory page size the driver uses: 4 KiB.
const PAGE_SHIFT: u32 = 12;

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
            // Stage 04's `map`: the registers in reach, CAP and VS logged.
            let (bar, cap) = map(pdev)?;

            // SAFETY: Nothing else allocates or maps DMA memory for this
            // device while it probes, and no allocation exists yet.
            unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
            // Disabled, the registers shared, the admin queue pair allocated.
            let ctrl = Controller::new(pdev, bar, cap)?;
            let page_shift = match module_parameters::fault.value() {
                1 => PAGE_SHIFT + u32::from(cap.mpsmax) + 1,
                2 => {
                    controller::wait_ready_never(pdev.as_ref(), ctrl.bar(pdev)?, &cap)?;
                    return Err(EINVAL);
                }
                _ => PAGE_SHIFT,
            };
            // ANCHOR_END: probe

            // ANCHOR: register
            // One vector for the admin queue and one per CPU for the I/O
            // queues, if the device has that many; at least one. The admin
            // queue's handler is registered before the controller starts.
            let cpus = cpu::nr_cpu_ids();
            let mut irqs = Interrupts::new(pdev, cpus.saturating_add(1), ctrl.admin())?;
            ctrl.start(pdev, page_shift)?;
            // Commands can complete now.
            let id = ctrl.bring_up(pdev, irqs.vectors(), BringUpTests::default())?;
            // ANCHOR_END: register

            // ANCHOR: io_fields
            // One I/O queue pair per CPU, as many as the controller grants;
            // then their handlers; then a first real I/O.
            let admin = ctrl.admin();
            let wanted = u16::try_from(cpus).unwrap_or(u16::MAX);
            let granted = io_queues::negotiate(pdev, admin, wanted)?;
            let count = wanted.min(granted);
            let vecs = u32::try_from(irqs.vectors().len())?;
            dev_info!(
                pdev,
                "I/O queues: {} granted, {} created for {} CPUs; {} vector(s) of type {:?}\n",
                granted,
                count,
                cpus,
                vecs,
                irqs.vectors().irq_type()
            );
            let io = io_queues::create(pdev, admin, ctrl.regs(), count, vecs)?;
            io_queues::register(&mut irqs, &io)?;
            io_queues::exercise(pdev, admin, &io, module_parameters::io_reads.value().clamp(1, 1000))?;
            // ANCHOR_END: io_fields

            // ANCHOR: disk_field
            // Last, with every queue proven: the disk. From here on the
            // block layer may send requests (it reads the partition table
            // at once).
            let extra = if module_parameters::fault.value() == 3 { 8 } else { 0 };
            let disk = disk::create(pdev, &ctrl, &io, &id, Bounced, extra)?;
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
        let disk = this.disk.lock().take();
        if let Some(disk) = disk {
            let number = disk.number();
            drop(disk);
            dev_info!(this.pdev, "disk rnvme{}n1 deleted\n", number);
        }
        for q in &this.io {
            dev_info!(
                this.pdev,
                "queue {}: {} completions came by interrupt\n",
                q.queue.qid(),
                q.queue.reaped()
            );
        }
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        match io_queues::delete(pdev, this.ctrl.admin(), &this.io) {
            Ok(n) => dev_info!(this.pdev, "deleted {} I/O queue pairs\n", n),
            Err(e) => dev_err!(this.pdev, "deleting the I/O queues failed ({:?})\n", e),
        }
        this.ctrl.stop(pdev);
    }
    // ANCHOR_END: unbind
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 09: an NVMe disk on blk-mq",
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
