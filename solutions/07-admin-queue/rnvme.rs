// SPDX-License-Identifier: GPL-2.0

//! Stage 07: the admin queue: commands in DMA memory, doorbells, completions
//! with phase tags, and the controller's answer to Identify.
//!
//! How to run: `make run STEP=07` boots the VM with `-device nvme`; the
//! module binds to it (PCI ID 1b36:0010), enables it and logs who it is.

use kernel::{
    device::Core,
    dma::{
        Coherent,
        Device as _,
        DmaMask, //
    },
    pci,
    prelude::*,
    types::ScopeGuard, //
};

// The NVMe library, as far as this stage uses it: `nvme.rs` lists its files.
mod nvme;
// New in stage 07: the command layouts, Identify parsing, and the queue
// pair in DMA memory (its ring arithmetic is stage 06's `ring.rs`).
mod queue;

use nvme::{
    cap::Cap,
    command::{
        admin_opc,
        cns,
        Command, //
    },
    controller,
    identify::{
        ascii,
        IdCtrl,
        IdNs,
        IDENTIFY_SIZE, //
    },
    identify_log::{
        log_controller,
        log_namespace, //
    },
    map::map,
    regs::{
        self,
        log_admin_queues,
        Bar0, //
    }, //
};
use queue::QueuePair;

// ANCHOR: table
kernel::pci_device_table!(
    PCI_TABLE,
    <RNvmeDriver as pci::Driver>::IdInfo,
    [(pci::DeviceId::from_id(pci::Vendor::REDHAT, 0x0010), ())]
);
// ANCHOR_END: table

/// Entries in each admin queue.
const ADMIN_DEPTH: u16 = 32;

// ANCHOR: data
/// What the driver keeps per bound controller.
struct RNvme<'b> {
    pdev: &'b pci::Device,
    /// The registers: unmapped (and the region released) when dropped.
    bar: Bar0<'b>,
    /// The capabilities read at probe time.
    cap: Cap,
    /// The admin queue pair. The controller may access its memory while it
    /// is enabled: `unbind` disables it before this is freed.
    _admin: QueuePair,
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
        // Stage 04's `map`: the registers in reach, CAP and VS logged.
        let (bar, cap) = map(pdev)?;
        // ANCHOR_END: probe

        // ANCHOR: reset
        // SAFETY: Nothing else allocates or maps DMA memory for this device
        // while it probes, and no allocation exists yet.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        let mut admin = QueuePair::new(pdev.as_ref(), &cap, 0, ADMIN_DEPTH)?;

        // One page for the controller to write Identify data into; 4 KiB
        // aligned, as every allocation of a page or more is, so one PRP entry
        // covers it. Allocated before the controller starts, so that on an
        // error it is freed only after the guard below has stopped it.
        let page = Coherent::<u8>::zeroed_slice(pdev.as_ref(), IDENTIFY_SIZE, GFP_KERNEL)?;

        // Whatever state firmware or a previous driver left: start disabled.
        controller::disable(pdev.as_ref(), &bar, &cap)?;
        // For the test: `fault` asks for a controller that fails to start.
        let fault = module_parameters::fault.value();
        let page_shift = controller::page_shift_for(pdev.as_ref(), &bar, &cap, fault)?;
        // ANCHOR: stop_guard
        // From here on the controller may be running: until probe succeeds,
        // every way out stops it before the queue memory and the page (both
        // declared before the guard, so dropped after it) are freed.
        let stop = ScopeGuard::new(|| {
            let _ = controller::disable(pdev.as_ref(), &bar, &cap);
        });
        // ANCHOR_END: stop_guard
        controller::enable(
            pdev.as_ref(),
            &bar,
            &cap,
            admin.sq_address(),
            admin.cq_address(),
            ADMIN_DEPTH,
            page_shift,
        )?;
        log_admin_queues(pdev, ADMIN_DEPTH, admin.sq_address(), admin.cq_address());
        // ANCHOR_END: reset

        let id = identify(pdev, &bar, &cap, &mut admin, &page)?;
        identify_again(pdev, &bar, &mut admin, &page)?;
        if fault == 3 {
            refused(pdev, &bar, &mut admin)?;
        }
        // ANCHOR: dismiss
        // Up and identified: the controller stays on (unbind stops it).
        stop.dismiss();
        // ANCHOR_END: dismiss

        Ok(RNvme {
            pdev,
            bar,
            cap,
            _admin: admin,
            id,
        })
    }

    // ANCHOR: unbind
    fn unbind<'b>(pdev: &'b pci::Device<Core<'_>>, this: Pin<&RNvme<'b>>) {
        dev_info!(this.pdev, "unbinding {}\n", ascii(&this.id.mn));
        // Stop the controller before `RNvme` is dropped, right after this:
        // that frees the queue memory, which it must no longer touch.
        match controller::disable(pdev.as_ref(), &this.bar, &this.cap) {
            Ok(()) => dev_info!(this.pdev, "controller disabled\n"),
            Err(e) => dev_err!(this.pdev, "disabling failed ({:?})\n", e),
        }
    }
    // ANCHOR_END: unbind
}

// ANCHOR: identify
/// Asks the controller who it is, and about namespace 1, and logs it.
fn identify(
    pdev: &pci::Device<Core<'_>>,
    bar: &Bar0<'_>,
    cap: &Cap,
    admin: &mut QueuePair,
    page: &Coherent<[u8]>,
) -> Result<IdCtrl> {
    let cmd = Command::identify(cns::CONTROLLER, 0, page.dma_address());
    admin.submit_sync(pdev.as_ref(), bar, &cmd)?;
    // SAFETY: The controller wrote the page before it posted the completion
    // `submit_sync` reaped, and no other command refers to the page: nothing
    // writes it while this reference lives.
    let id = IdCtrl::parse(unsafe { page.as_ref() }).ok_or(EIO)?;
    log_controller(pdev, &id, cap);
    if id.nn >= 1 {
        let cmd = Command::identify(cns::NAMESPACE, 1, page.dma_address());
        admin.submit_sync(pdev.as_ref(), bar, &cmd)?;
        // SAFETY: As above, for the second command's completion.
        let ns = IdNs::parse(unsafe { page.as_ref() }).ok_or(EIO)?;
        log_namespace(pdev, 1, &ns)?;
    }
    Ok(id)
}
// ANCHOR_END: identify

/// For the test: sends Identify Controller `repeat` more times, so that the
/// admin queues wrap (twice with 64 commands or more) and QEMU's trace of the
/// doorbells can be checked against the ring arithmetic.
fn identify_again(
    pdev: &pci::Device<Core<'_>>,
    bar: &Bar0<'_>,
    admin: &mut QueuePair,
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
        admin.submit_sync(pdev.as_ref(), bar, &cmd)?;
    }
    dev_info!(pdev, "{} more Identify commands completed\n", repeat);
    Ok(())
}

/// For the test (`fault=3`): a command the controller must refuse with a
/// status whose code is 0 but whose type is not. Deleting completion queue
/// 0, the admin queue's, is never allowed: QEMU answers "Completion Queue
/// Invalid" (Status Code Type 1, Status Code 0x00), so a driver that looks
/// at the code alone takes it for a success.
fn refused(pdev: &pci::Device<Core<'_>>, bar: &Bar0<'_>, admin: &mut QueuePair) -> Result {
    let cmd = Command {
        opcode: admin_opc::DELETE_IO_CQ,
        ..Command::default()
    };
    match admin.submit_sync(pdev.as_ref(), bar, &cmd) {
        Err(e) => {
            dev_info!(pdev, "Delete I/O CQ 0 refused ({:?}), as it must be\n", e);
            Ok(())
        }
        Ok(_) => {
            dev_err!(pdev, "Delete I/O CQ 0 taken for a success\n");
            Err(EIO)
        }
    }
}

impl Drop for RNvme<'_> {
    fn drop(&mut self) {
        // Reading VS once more shows the mapping is still valid here.
        regs::log_released(self.pdev, &self.bar);
    }
}

kernel::module_pci_driver! {
    type: RNvmeDriver,
    name: "rnvme",
    authors: ["rust-kernel-workshop"],
    description: "Stage 07: NVMe admin queue and Identify",
    license: "GPL",
    params: {
        fault: u32 {
            default: 0,
            description: "For the tests: 1 = ask for an unsupported page size, 2 = wait for a ready state that never comes, 3 = a command refused with SCT 1, SC 0",
        },
        repeat: u32 {
            default: 0,
            description: "For the tests: send Identify this many more times (0..=10000), so the admin queues wrap",
        },
    },
}
