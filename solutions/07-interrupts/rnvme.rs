// SPDX-License-Identifier: GPL-2.0

//! Stage 07: interrupts. Stage 06's admin queue, with completions reaped by
//! an interrupt handler (MSI-X, else MSI, else INTx) and submitters that
//! sleep until their command completes or their time is up.
//!
//! How to run: `make run STEP=07`, then `grep rnvme /proc/interrupts` in the
//! VM: one line, whose count grows with every admin command.

use kernel::{
    device::Core,
    dma::{
        Coherent,
        Device as _,
        DmaMask, //
    },
    io::Io,
    irq::{
        self,
        IrqRequest, //
    },
    pci::{
        self,
        IrqTypes,
        IrqVectorRegistration, //
    },
    prelude::*,
    sync::Arc,
    time::Delta, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;
// For the test: commands abandoned, answered late.
mod late_answers;

use nvme::{
    cap::Cap,
    controller,
    command::{
        cns,
        Command, //
    },
    identify::{
        ascii,
        IdCtrl,
        IdNs,
        IDENTIFY_SIZE, //
    },
    irq_handler::QueueIrq,
    queue::{
        AdminQueue,
        NoRequests, //
    },
    registers::Registers,
    regs::{
        self,
        log_identity,
        Bar0,
        BAR0_SIZE, //
    }, //
};

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

/// Entries in each admin queue.
const ADMIN_DEPTH: u16 = 32;
/// The memory page size the driver uses: 4 KiB.
const PAGE_SHIFT: u32 = 12;
/// How long an admin command may take before its submitter gives up.
const ADMIN_TIMEOUT: Delta = Delta::from_secs(5);
// ANCHOR: data
/// What the driver keeps per bound controller.
///
/// `irq` borrows `vectors` (a sibling field): the driver data is pinned, so
/// `vectors` does not move, and fields drop in the order they are declared,
/// so the handler is unregistered before the vectors are freed, and both
/// before the admin queue (which disables the controller) is dropped.
#[pin_data]
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The interrupt handler's registration: `free_irq` when dropped, which
    /// waits for a handler still running on another CPU.
    #[pin]
    irq: irq::Registration<'b, QueueIrq<NoRequests>>,
    /// The device's interrupt vectors: `pci_free_irq_vectors` when dropped.
    vectors: IrqVectorRegistration<'b>,
    /// The capabilities read at probe time.
    cap: Cap,
    /// The admin queue pair and the registers, shared with the handler.
    admin: Arc<AdminQueue>,
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
            pdev.enable_device_mem()?;
            pdev.set_master();
            let bar: Bar0<'b> = pdev.iomap_region_sized::<BAR0_SIZE>(0, c"rnvme")?;

            let cap = Cap::from_raw(bar.try_read64(regs::CAP)?);
            let vs = bar.read(regs::VS);
            log_identity(pdev, &cap, &vs);
            if !cap.supports_nvm() {
                dev_err!(pdev, "the NVM command set is not supported\n");
                return Err(ENODEV);
            }

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
            // The handler rings doorbells too: the registers move into the
            // shared queue, as a device-managed `DevresBar`. From here on,
            // an error drops `admin`, which disables the controller before
            // its memory is freed.
            let regs = Registers::new(bar.into_devres()?, cap)?;
            let admin = AdminQueue::new(pdev.as_ref(), regs, 0, ADMIN_DEPTH)?;
            // ANCHOR_END: enable

            // ANCHOR: register
            let pdev_data: &'b pci::Device = pdev;
            Ok(try_pin_init!(RNvme {
                cap,
                admin: admin.clone(),
                // MSI-X if the device and the platform can, else MSI, else
                // the legacy INTx pin. One vector: the admin queue's.
                vectors: pdev.alloc_irq_vectors(1, 1, IrqTypes::all())?,
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
                    start(pdev, admin.bar(pdev.as_ref())?, admin, cap, page_shift)?;
                },
                // Commands can complete now.
                id: bring_up(pdev, admin, cap, vectors)?,
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
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        let disabled = this
            .admin
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

// ANCHOR: identify
/// Asks the controller who it is, and about namespace 1, and logs it.
fn identify(
    pdev: &pci::Device<Core<'_>>,
    cap: &Cap,
    admin: &AdminQueue,
    page: &Coherent<[u8]>,
) -> Result<IdCtrl> {
    let cmd = Command::identify(cns::CONTROLLER, 0, page.dma_address());
    admin.submit(pdev.as_ref(), &cmd, ADMIN_TIMEOUT)?;
    // SAFETY: The controller wrote the page before it posted the completion
    // the handler reaped, and no other command refers to the page: nothing
    // writes it while this reference lives.
    let id = IdCtrl::parse(unsafe { page.as_ref() }).ok_or(EIO)?;
    dev_info!(
        pdev,
        "model \"{}\", serial \"{}\", firmware \"{}\", PCI vendor {:#06x}\n",
        ascii(&id.mn),
        ascii(&id.sn),
        ascii(&id.fr),
        id.vid
    );
    match id.max_transfer(cap.min_page_size()) {
        Some(bytes) => dev_info!(
            pdev,
            "MDTS {}: at most {} bytes per transfer\n",
            id.mdts,
            bytes
        ),
        None => dev_info!(pdev, "MDTS 0: no transfer size limit\n"),
    }
    dev_info!(
        pdev,
        "controller ID {}, {} namespace(s)\n",
        id.cntlid,
        id.nn
    );

    if id.nn >= 1 {
        let cmd = Command::identify(cns::NAMESPACE, 1, page.dma_address());
        admin.submit(pdev.as_ref(), &cmd, ADMIN_TIMEOUT)?;
        // SAFETY: As above, for the second command's completion.
        let ns = IdNs::parse(unsafe { page.as_ref() }).ok_or(EIO)?;
        let block = ns.block_size().ok_or(EIO)?;
        dev_info!(
            pdev,
            "namespace 1: {} blocks of {} bytes (LBA format {}), {} MiB\n",
            ns.nsze,
            block,
            ns.format,
            ns.nsze.saturating_mul(u64::from(block)) >> 20
        );
    }
    Ok(id)
}
// ANCHOR_END: identify

/// For the test: sends Identify Controller `repeat` more times, so that the
/// admin queues wrap (twice with 64 commands or more) and QEMU's trace of the
/// doorbells can be checked against the ring arithmetic.
fn identify_again(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    page: &Coherent<[u8]>,
) -> Result {
    let repeat = module_parameters::repeat.value();
    if repeat == 0 {
        return Ok(());
    }
    if repeat > 10_000 {
        dev_err!(pdev, "repeat={} is more than 10000\n", repeat);
        return Err(EINVAL);
    }
    let cmd = Command::identify(cns::CONTROLLER, 0, page.dma_address());
    for _ in 0..repeat {
        admin.submit(pdev.as_ref(), &cmd, ADMIN_TIMEOUT)?;
    }
    dev_info!(pdev, "{} more Identify commands completed\n", repeat);
    Ok(())
}

// ANCHOR: start
/// Tells the controller where the admin queues are and enables it.
fn start(
    pdev: &pci::Device<Core<'_>>,
    bar: &Bar0<'_>,
    admin: &AdminQueue,
    cap: &Cap,
    page_shift: u32,
) -> Result {
    controller::enable(
        pdev.as_ref(),
        bar,
        cap,
        admin.sq_address(),
        admin.cq_address(),
        ADMIN_DEPTH,
        page_shift,
    )?;
    dev_info!(
        pdev,
        "controller enabled: admin queues of {} entries at {:#x} and {:#x}\n",
        ADMIN_DEPTH,
        admin.sq_address(),
        admin.cq_address()
    );
    Ok(())
}
// ANCHOR_END: start

// ANCHOR: bring_up
/// With the handler registered: says which interrupts the device got, asks
/// it who it is, and runs what the test asked for.
fn bring_up(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    cap: &Cap,
    vectors: &IrqVectorRegistration<'_>,
) -> Result<IdCtrl> {
    let irq = IrqRequest::from(vectors.index(0)?).irq();
    dev_info!(
        pdev,
        "interrupts: {} vector(s) of type {:?}, admin queue on IRQ {}\n",
        vectors.len(),
        vectors.irq_type(),
        irq
    );
    // One page for Identify data; it is freed when this returns.
    let page = Coherent::<u8>::zeroed_slice(pdev.as_ref(), IDENTIFY_SIZE, GFP_KERNEL)?;
    let result = identify(pdev, cap, admin, &page).and_then(|id| {
        async_event_request(pdev, admin)?;
        late_answers::answered_late(pdev, admin, &page, module_parameters::late.value())?;
        identify_again(pdev, admin, &page)?;
        Ok(id)
    });
    match result {
        Ok(_) => dev_info!(pdev, "{} completions came by interrupt\n", admin.reaped()),
        // An Identify that timed out may still be written by the
        // controller: stop it before the page is freed.
        Err(_) => {
            let _ = admin
                .bar(pdev.as_ref())
                .and_then(|bar| controller::disable(pdev.as_ref(), bar, cap));
        }
    }
    result
}
// ANCHOR_END: bring_up

// ANCHOR: aer
/// For the test: an Asynchronous Event Request, which the controller holds
/// until an event occurs (here: none), waited for `aer_wait_ms`.
fn async_event_request(pdev: &pci::Device<Core<'_>>, admin: &AdminQueue) -> Result {
    let ms = module_parameters::aer_wait_ms.value();
    if ms == 0 {
        return Ok(());
    }
    let aer = Command::async_event_request();
    match admin.submit(pdev.as_ref(), &aer, Delta::from_millis(i64::from(ms))) {
        Err(e) if e == ETIMEDOUT => {
            dev_info!(
                pdev,
                "Asynchronous Event Request: no answer in {} ms, ETIMEDOUT\n",
                ms
            );
            Ok(())
        }
        Err(e) => Err(e),
        Ok(cqe) => {
            dev_info!(
                pdev,
                "Asynchronous Event Request answered: {:#x}\n",
                cqe.result
            );
            Ok(())
        }
    }
}
// ANCHOR_END: aer

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 07: NVMe admin queue with interrupts",
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
        aer_wait_ms: u32 {
            default: 0,
            description: "For the tests: send an Asynchronous Event Request and wait this long for it (0: do not)",
        },
        late: u32 {
            default: 0,
            description: "For the tests: abandon this many Asynchronous Event Requests (0..=1000), each answered later",
        },
    },
}
