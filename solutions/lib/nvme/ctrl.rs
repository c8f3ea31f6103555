// SPDX-License-Identifier: GPL-2.0

//! The controller (the C driver's `struct nvme_ctrl`): its registers, its
//! admin queue pair and what CAP said, with what is done to it as a whole:
//! start it, bring it up (Identify, and what a stage's test asks for), ask
//! it about a namespace, stop it.
//!
//! Part of the NVMe library (`nvme::ctrl`), from stage 08 on. What a
//! stage's test asks bring-up to do comes in as [`BringUpTests`] (the
//! stage's module parameters), so that this file names nothing of the
//! stage that includes it.

use kernel::{
    device::Core,
    io::Io,
    irq::IrqRequest,
    pci::{
        self,
        IrqVectorRegistration, //
    },
    prelude::*,
    sync::{
        atomic::{
            AtomicFlag,
            Relaxed, //
        },
        Arc, //
    },
    time::Delta, //
};

use super::{
    cap::Cap,
    command::Command,
    controller,
    identify::{
        IdCtrl,
        IdNs, //
    },
    identify_log::{
        log_controller,
        log_namespace, //
    },
    identify_page::IdentifyPage,
    queue::{
        AdminQueue,
        ADMIN_DEPTH,
        ADMIN_TIMEOUT, //
    },
    registers::Registers, //
    regs::{
        log_admin_queues,
        Bar0,
        CSTS, //
    },
};

// ANCHOR: tests
/// What a stage's test asks bring-up to do besides Identify (its module
/// parameters).
#[derive(Clone, Copy, Default)]
pub(crate) struct BringUpTests {
    /// Send an Asynchronous Event Request and wait this long for it, in
    /// milliseconds (0: do not).
    pub(crate) aer_wait_ms: u32,
    /// Send Identify Controller this many more times (at most 10000), so
    /// that the admin queues wrap.
    pub(crate) repeat: u32,
}
// ANCHOR_END: tests

// ANCHOR: identify
/// Asks the controller who it is, and about namespace 1, and logs it.
fn identify(
    pdev: &pci::Device<Core<'_>>,
    cap: &Cap,
    admin: &AdminQueue,
    page: &mut IdentifyPage,
) -> Result<IdCtrl> {
    let id = page.controller(pdev.as_ref(), admin, ADMIN_TIMEOUT)?;
    log_controller(pdev, &id, cap);
    if id.nn >= 1 {
        let ns = page.namespace(pdev.as_ref(), admin, 1, ADMIN_TIMEOUT)?;
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
    admin: &AdminQueue,
    page: &mut IdentifyPage,
    repeat: u32,
) -> Result {
    if repeat == 0 {
        return Ok(());
    }
    if repeat > 10_000 {
        dev_err!(pdev, "repeat={} is more than 10000\n", repeat);
        return Err(EINVAL);
    }
    for _ in 0..repeat {
        page.controller(pdev.as_ref(), admin, ADMIN_TIMEOUT)?;
    }
    dev_info!(pdev, "{} more Identify commands completed\n", repeat);
    Ok(())
}

// ANCHOR: controller
/// A controller: its registers, shared by every queue, and its admin queue
/// pair, shared with the admin queue's interrupt handler (from stage 09
/// on).
///
/// Dropping it drops the driver's reference to the admin queue pair; the
/// last reference disables the controller before the queue memory is freed
/// (`QueuePair`'s drop).
pub(crate) struct Controller {
    regs: Arc<Registers>,
    admin: Arc<AdminQueue>,
    cap: Cap,
    /// Brought up without interrupts (stage 08): the completions are
    /// reaped by polling, and the log lines that count them say so.
    polled: AtomicFlag,
}
// ANCHOR_END: controller

impl Controller {
    // ANCHOR: new
    /// Takes over the controller `map` found: disables it (whatever ran
    /// before may have left it enabled), shares the registers as a
    /// device-managed `DevresBar` (every queue and handler rings doorbells)
    /// and allocates the admin queue pair. The controller stays disabled
    /// until [`Controller::start`].
    pub(crate) fn new(pdev: &pci::Device<Core<'_>>, bar: Bar0<'_>, cap: Cap) -> Result<Controller> {
        controller::disable(pdev.as_ref(), &bar, &cap)?;
        let regs = Registers::new(bar.into_devres()?, cap)?;
        // From here on, an error drops `admin`, which disables the
        // controller before its memory is freed.
        let admin = AdminQueue::new(pdev.as_ref(), regs.clone(), 0, ADMIN_DEPTH)?;
        Ok(Controller {
            regs,
            admin,
            cap,
            polled: AtomicFlag::new(false),
        })
    }
    // ANCHOR_END: new

    /// The admin queue pair.
    pub(crate) fn admin(&self) -> &Arc<AdminQueue> {
        &self.admin
    }

    /// The registers, for the I/O queue pairs.
    pub(crate) fn regs(&self) -> &Arc<Registers> {
        &self.regs
    }

    /// What CAP said.
    pub(crate) fn cap(&self) -> &Cap {
        &self.cap
    }

    /// The registers, for process context.
    pub(crate) fn bar<'a>(&'a self, pdev: &'a pci::Device<Core<'_>>) -> Result<&'a Bar0<'a>> {
        self.regs.bar(pdev.as_ref())
    }

    // ANCHOR: fault
    /// The page size to start with, or, for a stage's test (its `fault`
    /// parameter), a failure to show (stage 05's `page_shift_for`).
    pub(crate) fn page_shift_for(&self, pdev: &pci::Device<Core<'_>>, fault: u32) -> Result<u32> {
        controller::page_shift_for(pdev.as_ref(), self.bar(pdev)?, &self.cap, fault)
    }
    // ANCHOR_END: fault

    // ANCHOR: start
    /// Tells the controller where the admin queues are and enables it, with
    /// memory pages of `1 << page_shift` bytes.
    ///
    /// The admin queue's interrupt handler must be registered first: the
    /// controller sets up the admin completion queue's interrupt when it
    /// starts, and QEMU's model (as some real devices) uses an MSI-X vector
    /// only if MSI-X was on by then.
    pub(crate) fn start(&self, pdev: &pci::Device<Core<'_>>, page_shift: u32) -> Result {
        let (sq, cq) = (self.admin.sq_address(), self.admin.cq_address());
        let bar = self.bar(pdev)?;
        controller::enable(
            pdev.as_ref(),
            bar,
            &self.cap,
            sq,
            cq,
            ADMIN_DEPTH,
            page_shift,
        )?;
        log_admin_queues(pdev, ADMIN_DEPTH, sq, cq);
        Ok(())
    }
    // ANCHOR_END: start

    // ANCHOR: bring_up
    /// Once started: says which interrupts the device got (none: the
    /// completions are polled, as in stage 08), asks the controller who it
    /// is, and runs what the test asked for.
    pub(crate) fn bring_up(
        &self,
        pdev: &pci::Device<Core<'_>>,
        vectors: Option<&IrqVectorRegistration<'_>>,
        tests: BringUpTests,
    ) -> Result<IdCtrl> {
        let admin = &*self.admin;
        match vectors {
            Some(vectors) => {
                let irq = IrqRequest::from(vectors.index(0)?).irq();
                dev_info!(
                    pdev,
                    "interrupts: {} vector(s) of type {:?}, admin queue on IRQ {}\n",
                    vectors.len(),
                    vectors.irq_type(),
                    irq
                );
            }
            None => self.polled.store(true, Relaxed),
        }
        // One page for Identify data; it is freed when this returns.
        let mut page = IdentifyPage::new(pdev.as_ref())?;
        let result = identify(pdev, &self.cap, admin, &mut page).and_then(|id| {
            async_event_request(pdev, admin, tests.aer_wait_ms)?;
            identify_again(pdev, admin, &mut page, tests.repeat)?;
            Ok(id)
        });
        match result {
            Ok(_) => self.log_reaped(pdev, ""),
            // A command that timed out may still be carried out: stop the
            // controller before what it may write to is freed.
            Err(_) => {
                let _ = admin.disable_controller();
            }
        }
        result
    }
    // ANCHOR_END: bring_up

    /// Logs how many completions were reaped so far, and how, after
    /// `before` ("" or what was done first).
    fn log_reaped(&self, pdev: &pci::Device<Core<'_>>, before: &str) {
        let n = self.admin.reaped();
        if self.polled.load(Relaxed) {
            dev_info!(pdev, "{}{} completions reaped by polling\n", before, n);
        } else {
            dev_info!(pdev, "{}{} completions came by interrupt\n", before, n);
        }
    }

    /// Asks Identify Namespace about namespace `nsid`.
    pub(crate) fn identify_namespace(
        &self,
        pdev: &pci::Device<Core<'_>>,
        nsid: u32,
    ) -> Result<IdNs> {
        IdentifyPage::new(pdev.as_ref())?.namespace(pdev.as_ref(), &self.admin, nsid, ADMIN_TIMEOUT)
    }

    // ANCHOR: gone
    /// Whether the device has gone (surprise removal): its registers read
    /// as all ones, and it will answer nothing more.
    pub(crate) fn is_gone(&self, pdev: &pci::Device<Core<'_>>) -> bool {
        self.bar(pdev)
            .map_or(true, |bar| u32::from(bar.read(CSTS)) == u32::MAX)
    }
    // ANCHOR_END: gone

    // ANCHOR: stop
    /// Disables the controller (unbind): afterwards it touches no queue
    /// memory, so the queues may be freed. A command still waiting on the
    /// admin queue (a file open on a node, stage 16) is refused.
    pub(crate) fn stop(&self, pdev: &pci::Device<Core<'_>>) {
        match self
            .bar(pdev)
            .and_then(|bar| controller::disable(pdev.as_ref(), bar, &self.cap))
        {
            Ok(()) => self.log_reaped(pdev, "controller disabled; "),
            Err(e) => dev_err!(pdev, "disabling failed ({:?})\n", e),
        }
        while self.admin.cancel_next().is_some() {}
    }
    // ANCHOR_END: stop
}

// ANCHOR: aer
/// For the test: an Asynchronous Event Request, which the controller holds
/// until an event occurs (here: none), waited for `aer_wait_ms`.
fn async_event_request(pdev: &pci::Device<Core<'_>>, admin: &AdminQueue, ms: u32) -> Result {
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
