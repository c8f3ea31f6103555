// SPDX-License-Identifier: GPL-2.0

//! Bringing a controller up once its registers are mapped and its admin
//! queue's handler is registered: starting it with the admin queues, then
//! the first admin commands (Identify, and what the tests ask for).
//!
//! Part of the NVMe library (`nvme::bring_up`), from stage 07 on. What the
//! stage tests ask for comes in as [`BringUpTests`] (the stage's module
//! parameters), so that this file names nothing of the stage that includes
//! it.

use kernel::{
    device::Core,
    irq::IrqRequest,
    pci::{
        self,
        IrqVectorRegistration, //
    },
    prelude::*,
    time::Delta, //
};

use super::{
    cap::Cap,
    command::Command,
    controller,
    identify::{
        ascii,
        IdCtrl, //
    },
    identify_page::IdentifyPage,
    queue::{
        AdminQueue,
        ADMIN_DEPTH,
        ADMIN_TIMEOUT, //
    },
    registers::Registers, //
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
        let ns = page.namespace(pdev.as_ref(), admin, 1, ADMIN_TIMEOUT)?;
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

// ANCHOR: start
/// Tells the controller where the admin queues are and enables it.
pub(crate) fn start(
    pdev: &pci::Device<Core<'_>>,
    regs: &Registers,
    admin: &AdminQueue,
    cap: &Cap,
    page_shift: u32,
) -> Result {
    controller::enable(
        pdev.as_ref(),
        regs.bar(pdev.as_ref())?,
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
pub(crate) fn bring_up(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    cap: &Cap,
    vectors: &IrqVectorRegistration<'_>,
    tests: BringUpTests,
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
    let mut page = IdentifyPage::new(pdev.as_ref())?;
    let result = identify(pdev, cap, admin, &mut page).and_then(|id| {
        async_event_request(pdev, admin, tests.aer_wait_ms)?;
        identify_again(pdev, admin, &mut page, tests.repeat)?;
        Ok(id)
    });
    match result {
        Ok(_) => dev_info!(pdev, "{} completions came by interrupt\n", admin.reaped()),
        // A command that timed out may still be carried out: stop the
        // controller before what it may write to is freed.
        Err(_) => {
            let _ = admin.disable_controller();
        }
    }
    result
}
// ANCHOR_END: bring_up

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
