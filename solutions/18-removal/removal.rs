// SPDX-License-Identifier: GPL-2.0

//! Removal with the disk still in use: the disk of a controller that goes
//! (unbind, hot-unplug, `rmmod`) may still be open, mounted even. Deleting
//! it is fine: `del_gendisk` marks it dead, waits for its requests, and its
//! users get I/O errors from then on, as with the C driver. Unloading the
//! module is not: the kernel keeps calling the disk's operations, which
//! are the module's code, until the last user closes it.
//!
//! So unbind deletes the disk and, if it was open, hands it to the kernel
//! shim's `lingering` work, which holds the module until it is closed:
//! `delete_disk`, which the driver's `unbind` passes to stage 17's
//! `watchdog::unbind` as the way its disk goes.

use kernel::{
    device::Device,
    prelude::*,
    sync::Mutex, //
};

use crate::{
    disk::{
        SendDisk,
        Speedups, //
    },
    kshim::lingering::{
        self,
        OpenDisk, //
    },
};

// ANCHOR: delete_disk
/// Unbind's way to delete a disk that may still be open: deletes it
/// (`del_gendisk` waits for its requests in flight), says so, and, if it
/// is still open, hands what is left of it to the lingering work, so that
/// `rmmod` waits until its last user has closed it.
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
