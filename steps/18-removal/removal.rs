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
        self,
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
    // TODO (exercise 1): Delete the disk in `disk`, if there is one, and
    // keep the module while it is still open. The contract:
    // - the disk leaves `disk` (none there: nothing to do) and is deleted
    //   by dropping it (`del_gendisk` waits for its requests in flight);
    //   then "disk rnvmeXn1 deleted" is logged (`dev_info!`, X its number);
    // - "is it still open?" is asked of a hold on its block device
    //   (`OpenDisk`), which only a disk that exists can give; the answer
    //   must be final: nobody may open the disk after you asked. When is
    //   that true?
    // - still open: the hold goes to `lingering::linger(open, "rnvme",
    //   number)`, which logs "rnvmeXn1 is still open (mounted?): deleted,
    //   its I/O fails; rmmod waits until it is closed" and makes `rmmod`
    //   wait; its error, if any, is logged with `dev_err!`.
    // You have: `SendDisk::number` and `gen_disk`, `OpenDisk::of` and
    // `OpenDisk::is_open`, `lingering::linger`.
    // Until then, this deletes the disk as stage 17 does: `rmmod` with the
    // disk mounted does not wait (and the kernel would crash at umount).
    // Tests: "rmmod with the disk mounted waits", "rnvme says why", "after
    // the umount, rmmod finishes" in make check STEP=18.
    let _ = (
        OpenDisk::of::<crate::disk::NvmeDisk<Z>>,
        OpenDisk::is_open,
        lingering::linger,
    );
    disk::delete(dev, disk);
}
// ANCHOR_END: delete_disk
