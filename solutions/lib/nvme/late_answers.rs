// SPDX-License-Identifier: GPL-2.0

//! For the tests of stages 08 and 09: abandoned commands whose answers come
//! late (`late=N`).
//!
//! Part of the NVMe library (`nvme::late_answers`), in stages 08 and 09
//! only.

use kernel::{
    device::Core,
    dma::Coherent,
    io::poll::read_poll_timeout,
    pci,
    prelude::*,
    time::Delta, //
};

use super::{
    command::{
        feature,
        log_page,
        Command, //
    },
    identify::IDENTIFY_SIZE,
    queue::{
        AdminQueue,
        ADMIN_TIMEOUT, //
    }, //
};

// ANCHOR: late
/// For the test: `late` Asynchronous Event Requests, each given no time to
/// wait, so each is abandoned; then an event (the temperature is over a
/// threshold of 0 K) makes the controller answer it, after its submitter gave
/// up. The late answer must free the identifier: with more requests than
/// the queue has identifiers, the queue would run out of them (EBUSY).
pub(crate) fn answered_late(pdev: &pci::Device<Core<'_>>, admin: &AdminQueue, late: u32) -> Result {
    if late == 0 {
        return Ok(());
    }
    if late > 1000 {
        dev_err!(pdev, "late={} is more than 1000\n", late);
        return Err(EINVAL);
    }
    // A page for the SMART log; it is freed when this returns.
    let page = Coherent::<u8>::zeroed_slice(pdev.as_ref(), IDENTIFY_SIZE, GFP_KERNEL)?;
    let result = abandon_and_answer(pdev, admin, &page, late);
    if result.is_err() {
        // A Get Log Page that timed out may still be carried out into the
        // page: stop the controller before the page is freed.
        let _ = admin.disable_controller();
    }
    result
}

/// `answered_late`, with the page for the SMART log.
fn abandon_and_answer(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    page: &Coherent<[u8]>,
    late: u32,
) -> Result {
    let dev = pdev.as_ref();
    let set = Command::set_features;
    let aer = Command::async_event_request();
    // The SMART / Health log, 128 dwords; reading it (RAE clear) re-arms
    // the event.
    let smart_log = Command::get_log_page(log_page::SMART, 128, page.dma_address());
    // Report temperature events (SMART critical warning bit 1).
    admin.submit(
        dev,
        &set(feature::ASYNC_EVENT_CONFIG, 1 << 1),
        ADMIN_TIMEOUT,
    )?;
    for _ in 0..late {
        let before = admin.reaped();
        match admin.submit(dev, &aer, Delta::ZERO) {
            Err(e) if e == ETIMEDOUT => {}
            Err(e) => return Err(e),
            Ok(_) => {
                dev_err!(
                    pdev,
                    "an Asynchronous Event Request was answered before any event\n"
                );
                return Err(EPROTO);
            }
        }
        admin.submit(dev, &set(feature::TEMPERATURE_THRESHOLD, 0), ADMIN_TIMEOUT)?;
        // Both answers: the Set Features and the abandoned request's. Reaped
        // here too: in stage 08 no handler reaps an answer nobody waits for.
        read_poll_timeout(
            || {
                admin.reap();
                Ok(admin.reaped())
            },
            |&reaped| reaped >= before + 2,
            Delta::from_millis(1),
            ADMIN_TIMEOUT,
        )?;
        admin.submit(dev, &smart_log, ADMIN_TIMEOUT)?;
        admin.submit(
            dev,
            &set(feature::TEMPERATURE_THRESHOLD, 0xffff),
            ADMIN_TIMEOUT,
        )?;
    }
    dev_info!(
        pdev,
        "{} Asynchronous Event Requests abandoned, each answered later\n",
        late
    );
    Ok(())
}
// ANCHOR_END: late
