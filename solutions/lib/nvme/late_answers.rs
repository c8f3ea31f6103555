// SPDX-License-Identifier: GPL-2.0

//! For the tests of stages 08 and 09: abandoned commands whose answers come
//! late (`late=N`), and a wait woken by other commands' completions
//! (`woken_ms=N`).
//!
//! Part of the NVMe library (`nvme::late_answers`), in stages 08 and 09
//! only.

use core::sync::atomic::{
    AtomicBool,
    AtomicU32,
    Ordering::Relaxed, //
};
use kernel::{
    device::{
        Core,
        Device, //
    },
    dma::Coherent,
    io::poll::read_poll_timeout,
    pci,
    prelude::*,
    sync::{
        aref::ARef,
        Arc,
        Completion, //
    },
    time::{
        Delta,
        Instant,
        Monotonic, //
    },
    workqueue, //
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
            Ok(_) => return Err(answered_early(pdev)),
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

// ANCHOR: woken
/// The other submitter of [`woken_while_waiting`]: told when to stop, and
/// saying when it has.
#[pin_data]
struct Busy {
    stop: AtomicBool,
    /// How many commands it completed.
    commands: AtomicU32,
    /// It stopped on its own, its time up, not told to by the waiter.
    ran_out: AtomicBool,
    #[pin]
    done: Completion,
}

/// For the test of stage 09 (`woken_ms=N`): an Asynchronous Event Request,
/// which the controller holds, waited for `ms` while a second submitter, on
/// a workqueue, keeps other commands completing. Each completion wakes every
/// waiter (`notify_all`), so the request's submitter is woken again and again
/// before its time is up: its wait must still end `ms` after it began, not
/// `ms` after its last wake-up. Logs how long it waited, and whether the
/// completions were still coming when it ended: a wait that sleeps the whole
/// timeout again after each wake-up ends only after they stop, however fast
/// or slow the machine, which is what the test looks at (not the time).
pub(crate) fn woken_while_waiting(
    pdev: &pci::Device<Core<'_>>,
    admin: &Arc<AdminQueue>,
    ms: u32,
) -> Result {
    if ms == 0 {
        return Ok(());
    }
    if ms > 10_000 {
        dev_err!(pdev, "woken_ms={} is more than 10000\n", ms);
        return Err(EINVAL);
    }
    let busy = Arc::pin_init(
        pin_init!(Busy {
            stop: AtomicBool::new(false),
            commands: AtomicU32::new(0),
            ran_out: AtomicBool::new(false),
            done <- Completion::new(),
        }),
        GFP_KERNEL,
    )?;
    let other = {
        let admin = admin.clone();
        let busy = busy.clone();
        let dev: ARef<Device> = pdev.as_ref().into();
        // At most 20 × `ms`: a wait that never ends on its own still ends
        // then, after this submitter ran out of time (`ran_out`).
        let until = Delta::from_millis(20 * i64::from(ms));
        move || {
            let start = Instant::<Monotonic>::now();
            // A threshold no temperature reaches: no event, nothing changes.
            let cmd = Command::set_features(feature::TEMPERATURE_THRESHOLD, 0xffff);
            while !busy.stop.load(Relaxed) {
                if start.elapsed() >= until {
                    busy.ran_out.store(true, Relaxed);
                    break;
                }
                if admin.submit(&dev, &cmd, ADMIN_TIMEOUT).is_err() {
                    break;
                }
                busy.commands.fetch_add(1, Relaxed);
            }
            busy.done.complete_all();
        }
    };
    // The long-running work queue: this item runs for up to seconds (and
    // 7.3 deprecates `system()`'s `system_wq`, with a warning).
    workqueue::system_long().try_spawn(GFP_KERNEL, other)?;
    let start = Instant::<Monotonic>::now();
    let result = admin.submit(
        pdev.as_ref(),
        &Command::async_event_request(),
        Delta::from_millis(i64::from(ms)),
    );
    let waited = start.elapsed().as_millis();
    let still_coming = !busy.ran_out.load(Relaxed);
    busy.stop.store(true, Relaxed);
    // The work item uses `pdev`'s device and the queue: done before we go on.
    busy.done.wait_for_completion();
    match result {
        Err(e) if e == ETIMEDOUT => {
            dev_info!(
                pdev,
                "woken while waiting: an Asynchronous Event Request timed out after {} ms (of {}), while {} other commands completed, {}\n",
                waited,
                ms,
                busy.commands.load(Relaxed),
                if still_coming {
                    "and more were coming"
                } else {
                    "after they had stopped"
                }
            );
            Ok(())
        }
        Err(e) => Err(e),
        Ok(_) => Err(answered_early(pdev)),
    }
}
// ANCHOR_END: woken

/// An Asynchronous Event Request answered with no event behind it: the
/// controller (or a test's device) breaks the rule both checks rely on.
fn answered_early(pdev: &pci::Device<Core<'_>>) -> Error {
    dev_err!(
        pdev,
        "an Asynchronous Event Request was answered before any event\n"
    );
    EPROTO
}
