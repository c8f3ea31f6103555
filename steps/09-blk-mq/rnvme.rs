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
    irq,
    new_mutex,
    pci::{
        self,
        IrqTypes,
        IrqVectorRegistration, //
    },
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    }, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;
// Stage 08's file, unchanged: the I/O queues.
#[path = "../../solutions/08-io-queues/io_queues.rs"]
mod io_queues;
// New in stage 09: the disk and its requests.
mod disk;
#[path = "../../solutions/09-blk-mq/request.rs"]
mod request;

use disk::{
    InFlight,
    SendDisk, //
};
use nvme::{
    bring_up::{
        bring_up,
        start,
        BringUpTests, //
    },
    cap::Cap,
    controller,
    identify::{
        ascii,
        IdCtrl, //
    },
    irq_handler::{
        QueueIrq,
        QueueIrqs, //
    },
    map::map,
    queue::{
        AdminQueue,
        NoRequests,
        ADMIN_DEPTH, //
    },
    registers::Registers, //
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
/// What the driver keeps per bound controller.
///
/// `irq` and `io_irqs` borrow `vectors` (a sibling field): the driver data
/// is pinned, so `vectors` does not move, and fields drop in the order they
/// are declared, so the handlers are unregistered before the vectors are
/// freed, and all before the queues (which disable the controller) are
/// dropped.
#[pin_data]
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The disk: deleted by `unbind` (which waits for its requests) before
    /// the I/O queues are.
    #[pin]
    disk: Mutex<Option<SendDisk>>,
    /// The I/O queues' handlers, one per queue: dropped first.
    io_irqs: QueueIrqs<'b, InFlight>,
    /// The I/O queue pairs: deleted by `unbind`.
    io: KVec<IoQueue<InFlight>>,
    /// The admin queue's handler: `free_irq` when dropped, which waits for
    /// a handler still running on another CPU.
    #[pin]
    irq: irq::Registration<'b, QueueIrq<NoRequests>>,
    /// The device's interrupt vectors: `pci_free_irq_vectors` when dropped.
    vectors: IrqVectorRegistration<'b>,
    /// The capabilities read at probe time.
    cap: Cap,
    /// The admin queue pair, shared with its handler.
    admin: Arc<AdminQueue>,
    /// The registers, shared by every queue.
    regs: Arc<Registers>,
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
            controller::disable(pdev.as_ref(), &bar, &cap)?;
            let page_shift = match module_parameters::fault.value() {
                1 => PAGE_SHIFT + u32::from(cap.mpsmax) + 1,
                2 => {
                    controller::wait_ready_never(pdev.as_ref(), &bar, &cap)?;
                    return Err(EINVAL);
                }
                _ => PAGE_SHIFT,
            };
            // ANCHOR_END: probe

            // ANCHOR: enable
            // Every queue and handler rings doorbells: the registers move
            // into an `Arc` every queue holds, as a device-managed
            // `DevresBar`. From here on, an error drops `admin`, which
            // disables the controller before its memory is freed.
            let regs = Registers::new(bar.into_devres()?, cap)?;
            let admin = AdminQueue::new(pdev.as_ref(), regs.clone(), 0, ADMIN_DEPTH)?;
            // ANCHOR_END: enable

            // ANCHOR: register
            let pdev_data: &'b pci::Device = pdev;
            // One vector for the admin queue and one per CPU for the I/O
            // queues, if the device has that many; at least one.
            let cpus = cpu::nr_cpu_ids();
            Ok(try_pin_init!(RNvme {
                cap,
                admin: admin.clone(),
                regs: regs.clone(),
                // MSI-X if the device and the platform can, else MSI, else
                // the legacy INTx pin.
                vectors: pdev.alloc_irq_vectors(1, cpus.saturating_add(1), IrqTypes::all())?,
                // ANCHOR: irq
                irq <- {
                    // SAFETY: `vectors` is initialised (fields are
                    // initialised in the order written here), it lives in
                    // the pinned driver data, so it does not move, and it is
                    // dropped after `irq` (declaration order): the borrow
                    // outlives every use of it.
                    let vectors: &'b IrqVectorRegistration<'b> = unsafe { &*core::ptr::from_ref(vectors) };
                    let request = vectors.index(0)?.into();
                    // SAFETY: The registration becomes a field of the driver
                    // data, which the driver core drops on unbind: it is
                    // never forgotten.
                    unsafe {
                        irq::Registration::new(
                            request,
                            irq::Flags::SHARED,
                            c"rnvme",
                            Ok::<_, Error>(QueueIrq(admin.clone())),
                        )
                    }
                },
                // ANCHOR_END: irq
                // Only now, with the vectors allocated and the handler
                // registered, start the controller: it sets up the admin
                // completion queue's interrupt when it starts, and QEMU's
                // model (as some real devices) uses an MSI-X vector only if
                // MSI-X was on by then.
                _: {
                    start(pdev, regs, admin, cap, page_shift)?;
                },
                // Commands can complete now.
                id: bring_up(pdev, admin, cap, vectors, BringUpTests::default())?,
                // ANCHOR: io_fields
                // One I/O queue pair per CPU, as many as the controller
                // grants; then their handlers; then a first real I/O.
                io: {
                    let wanted = u16::try_from(cpus).unwrap_or(u16::MAX);
                    let granted = io_queues::negotiate(pdev, admin, wanted)?;
                    let count = wanted.min(granted);
                    let vecs = u32::try_from(vectors.len())?;
                    dev_info!(
                        pdev,
                        "I/O queues: {} granted, {} created for {} CPUs; {} vector(s) of type {:?}\n",
                        granted,
                        count,
                        cpus,
                        vecs,
                        vectors.irq_type()
                    );
                    io_queues::create(pdev, admin, regs, count, vecs)?
                },
                io_irqs: {
                    // SAFETY: As for `irq` above: `vectors` is initialised,
                    // pinned, and dropped after `io_irqs`.
                    let vectors: &'b IrqVectorRegistration<'b> = unsafe { &*core::ptr::from_ref(vectors) };
                    io_queues::register(vectors, io)?
                },
                _: {
                    io_queues::exercise(pdev, admin, io, module_parameters::io_reads.value().clamp(1, 1000))?;
                },
                // ANCHOR_END: io_fields
                // ANCHOR: disk_field
                // Last, with every queue proven: the disk. From here on the
                // block layer may send requests (it reads the partition
                // table at once).
                disk <- {
                    let extra = if module_parameters::fault.value() == 3 { 8 } else { 0 };
                    new_mutex!(Some(disk::create(pdev, admin, io, id, cap, extra)?), "rnvme_disk")
                },
                // ANCHOR_END: disk_field
                // (Last: each field initialised above is a binding of that
                // name below it, and would hide the `pdev` of probe.)
                pdev: pdev_data,
            }))
            // ANCHOR_END: register
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
        match io_queues::delete(pdev, &this.admin, &this.io) {
            Ok(n) => dev_info!(this.pdev, "deleted {} I/O queue pairs\n", n),
            Err(e) => dev_err!(this.pdev, "deleting the I/O queues failed ({:?})\n", e),
        }
        let disabled = this
            .regs
            .bar(pdev.as_ref())
            .and_then(|bar| controller::disable(pdev.as_ref(), bar, &this.cap));
        match disabled {
            Ok(()) => dev_info!(
                this.pdev,
                "controller disabled; {} completions came by interrupt\n",
                this.admin.reaped()
            ),
            Err(e) => dev_err!(this.pdev, "disabling failed ({:?})\n", e),
        }
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
