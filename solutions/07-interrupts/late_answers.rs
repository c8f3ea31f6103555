// SPDX-License-Identifier: GPL-2.0

//! For stage 07's test: abandoned commands whose answers come late
//! (`late=N`). Not an exercise; the skeleton includes this file unchanged.

use kernel::{
    device::Core,
    dma::Coherent,
    io::poll::read_poll_timeout,
    pci,
    prelude::*,
    time::Delta, //
};

use crate::{
    command::Command,
    queue::AdminQueue,
    ADMIN_TIMEOUT,
    OPC_ASYNC_EVENT_REQUEST, //
};

/// Admin opcodes: Set Features, Get Log Page.
const OPC_SET_FEATURES: u8 = 0x09;
const OPC_GET_LOG_PAGE: u8 = 0x02;
/// Feature identifiers: Temperature Threshold, Asynchronous Event
/// Configuration.
const FID_TEMPERATURE_THRESHOLD: u32 = 0x04;
const FID_ASYNC_EVENT_CONFIG: u32 = 0x0b;

// ANCHOR: late
/// For the test: `late` Asynchronous Event Requests, each given no time to
/// wait, so each is abandoned; then an event (the temperature is over a
/// threshold of 0 K) makes the controller answer it, after its submitter gave
/// up. The late answer must free the identifier: with more requests than
/// the queue has identifiers, the queue would run out of them (EBUSY).
pub(crate) fn answered_late(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    page: &Coherent<[u8]>,
    late: u32,
) -> Result {
    if late == 0 {
        return Ok(());
    }
    if late > 1000 {
        dev_err!(pdev, "late={} is more than 1000\n", late);
        return Err(EINVAL);
    }
    let dev = pdev.as_ref();
    let set = |fid: u32, value: u32| Command {
        opcode: OPC_SET_FEATURES,
        cdw: [fid, value, 0, 0, 0, 0],
        ..Command::default()
    };
    let aer = Command {
        opcode: OPC_ASYNC_EVENT_REQUEST,
        ..Command::default()
    };
    // The SMART / Health log (02h), 128 dwords; reading it (RAE clear)
    // re-arms the event.
    let smart_log = Command {
        opcode: OPC_GET_LOG_PAGE,
        nsid: u32::MAX,
        prp1: page.dma_address(),
        cdw: [0x02 | (127 << 16), 0, 0, 0, 0, 0],
        ..Command::default()
    };
    // Report temperature events (SMART critical warning bit 1).
    admin.submit(dev, &set(FID_ASYNC_EVENT_CONFIG, 1 << 1), ADMIN_TIMEOUT)?;
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
        admin.submit(dev, &set(FID_TEMPERATURE_THRESHOLD, 0), ADMIN_TIMEOUT)?;
        // Both answers: the Set Features and the abandoned request's.
        read_poll_timeout(
            || Ok(admin.reaped()),
            |&reaped| reaped >= before + 2,
            Delta::from_millis(1),
            ADMIN_TIMEOUT,
        )?;
        admin.submit(dev, &smart_log, ADMIN_TIMEOUT)?;
        admin.submit(dev, &set(FID_TEMPERATURE_THRESHOLD, 0xffff), ADMIN_TIMEOUT)?;
    }
    dev_info!(
        pdev,
        "{} Asynchronous Event Requests abandoned, each answered later\n",
        late
    );
    Ok(())
}
// ANCHOR_END: late
