// SPDX-License-Identifier: GPL-2.0

//! Removal with the disk still in use: the disk of a controller that goes
//! (unbind, hot-unplug, `rmmod`) may still be open, mounted even. Deleting
//! it is fine: `del_gendisk` marks it dead, waits for its requests, and its
//! users get I/O errors from then on, as with the C driver. Unloading the
//! module is not: the kernel keeps calling the disk's operations, which
//! are the module's code, until the last user closes it.
//!
//! So unbind deletes the disk and, if it was open, hands it to the kernel
//! shim's `lingering` work, which holds the module until it is closed.

use kernel::{
    device::{
        Core,
        Device, //
    },
    pci,
    prelude::*,
    sync::Mutex, //
};

use crate::{
    disk::{
        InFlight,
        SendDisk,
        Speedups, //
    },
    io_queues::{
        self,
        IoQueue, //
    },
    kshim::lingering::{
        self,
        OpenDisk, //
    },
    nvme::ctrl::Controller,
    watchdog::Watchdog,
};

// ANCHOR: delete_disk
/// Unbind's first step, for a disk that may still be open: deletes it
/// (`del_gendisk` waits for its requests in flight), says so, and, if
/// it is still open, hands what is left of it to the lingering work, so
/// that `rmmod` waits until its last user has closed it.
pub(crate) fn delete_disk<Z: Speedups>(dev: &Device, disk: &Mutex<Option<SendDisk<Z>>>) {
    let disk = disk.lock().take();
    let Some(disk) = disk else {
        return;
    };
    let number = disk.number();
    // A hold on its block device, taken while the disk exists ...
    let held = OpenDisk::of(disk.gen_disk());
    drop(disk);
    dev_info!(dev, "disk rnvme{}n1 deleted\n", number);
    // ... and asked once it is deleted: nobody can open it now, so the
    // answer is final (asked before, an open could slip in between).
    if let Some(open) = held.filter(OpenDisk::is_open) {
        if let Err(e) = lingering::linger(open, "rnvme", number) {
            dev_err!(
                dev,
                "cannot wait for rnvme{}n1 to be closed ({:?})\n",
                number,
                e
            );
        }
    }
}
// ANCHOR_END: delete_disk

// ANCHOR: unbind
/// `unbind` of stages 13 and 14, once the driver data is in hand: a device
/// that is gone (surprise removal) will answer nothing, so what is in
/// flight ends now rather than after a timeout; then the disk (its
/// requests end, or the watchdog ends them), the watchdog, the queues and
/// the controller (whose queue memory is freed when the driver data is
/// dropped, right after). A file still open on an nvme-cli node keeps the
/// queues: from then on they refuse every command.
pub(crate) fn unbind<Z: Speedups>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    watchdog: &Watchdog<InFlight<Z>>,
    disk: &Mutex<Option<SendDisk<Z>>>,
    io: &[IoQueue<InFlight<Z>>],
) {
    if ctrl.is_gone(pdev) {
        watchdog.give_up("the device is gone");
    }
    delete_disk(pdev.as_ref(), disk);
    watchdog.stop();
    io_queues::stop(pdev, ctrl, io);
    for q in io {
        while q.queue.cancel_next().is_some() {}
    }
}
// ANCHOR_END: unbind
