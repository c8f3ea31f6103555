// SPDX-License-Identifier: GPL-2.0

//! Bringing a controller up once its registers are mapped: what it says
//! about itself, starting it with the admin queues, and the first admin
//! commands (Identify, and what the tests ask for). Stage 07's code in
//! `rnvme.rs`, moved here unchanged (but for the queue type) so that later
//! stages include it instead of copying it.

use kernel::{
    device::Core,
    dma::Coherent,
    irq::IrqRequest,
    pci::{
        self,
        IrqVectorRegistration, //
    },
    prelude::*,
    time::Delta, //
};

use crate::{
    nvme::{
        controller,
        cap::Cap,
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
        queue::AdminQueue,
        registers::Registers, //
    },
    ADMIN_DEPTH,
    ADMIN_TIMEOUT, //
};

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
fn identify_again(pdev: &pci::Device<Core<'_>>, admin: &AdminQueue, page: &Coherent<[u8]>) -> Result {
    let repeat = crate::module_parameters::repeat.value();
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
        identify_again(pdev, admin, &page)?;
        Ok(id)
    });
    match result {
        Ok(_) => dev_info!(pdev, "{} completions came by interrupt\n", admin.reaped()),
        // An Identify that timed out may still be written by the
        // controller: stop it before the page is freed.
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
fn async_event_request(pdev: &pci::Device<Core<'_>>, admin: &AdminQueue) -> Result {
    let ms = crate::module_parameters::aer_wait_ms.value();
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
