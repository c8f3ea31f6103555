// SPDX-License-Identifier: GPL-2.0

//! Disks still open when their controller goes (unbind, hot-unplug, rmmod
//! with the disk mounted).
//!
//! Deleting such a disk is fine: `del_gendisk` marks it dead and its users
//! get I/O errors, as with the C driver. Unloading the module is not: the
//! kernel keeps reading the disk's `block_device_operations` until the last
//! user has closed it (`bdev_release`), and the 7.3 `GenDisk` keeps them in
//! the module without an owner (`gen_disk.rs`: "TODO: Set to
//! `THIS_MODULE`"), so nothing stops `rmmod`. Seen: `umount` after such an
//! `rmmod` oopses in `blkdev_put_whole`, reading freed module memory.
//!
//! So a disk deleted while open is handed to a work item on the module's
//! own workqueue that waits until it is closed, and the module's exit,
//! which destroys that workqueue, waits for it: `rmmod` waits until the
//! disk is unmounted.
//!
//! Part of the kernel shim (`kshim::lingering`), from stage 18 on. TODO:
//! goes once 7.3's `GenDisk` sets its operations' owner (`THIS_MODULE`):
//! then the block layer holds the module while the disk is open.

use core::ptr::NonNull;
use kernel::{
    bindings,
    block::mq::Operations,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc, //
    },
    time::{
        delay::fsleep,
        Delta, //
    },
    workqueue::Queue, //
};

use super::{
    owned_queue::OwnedQueue,
    send_disk::SendGenDisk, //
};

/// How often a lingering disk is looked at.
const POLL: Delta = Delta::from_millis(200);

// ANCHOR: open_disk
/// A reference on a disk's whole-disk block device, taken while the disk
/// exists, kept past its deletion: after `del_gendisk` nobody can open it
/// any more, so whether it is open is then a question with a final answer.
///
/// # Invariants
///
/// `self.0` points to the `block_device` of a disk's partition 0, and this
/// value holds one reference on its `bd_device`, which keeps the block
/// device and its `gendisk` valid.
pub(crate) struct OpenDisk(NonNull<bindings::block_device>);

// SAFETY: A device reference may be dropped on any thread, and the fields
// read are atomic.
unsafe impl Send for OpenDisk {}

impl OpenDisk {
    /// A reference on `disk`'s block device, taken now: ask [`is_open`]
    /// once the disk is deleted. `None` if the disk has no block device.
    ///
    /// [`is_open`]: OpenDisk::is_open
    pub(crate) fn of<T: Operations>(disk: &SendGenDisk<T>) -> Option<OpenDisk> {
        // `TagSet` is `#[repr(transparent)]` over the C `blk_mq_tag_set`.
        let set = Arc::as_ptr(disk.tag_set()).cast::<bindings::blk_mq_tag_set>();
        // SAFETY: The tag set is alive (the disk holds an `Arc` of it), and
        // the disk is not deleted (`disk` borrows it, and it is deleted
        // only when dropped): its request queue is on the set's `tag_list`,
        // it is the only one, and its `disk` and `part0` are valid.
        let part0 = unsafe {
            let first = (*set).tag_list.next;
            let q = kernel::container_of!(first, bindings::request_queue, tag_set_list);
            (*(*q).disk).part0
        };
        let part0 = NonNull::new(part0)?;
        // SAFETY: `part0` is valid (above); `get_device` takes a reference.
        unsafe { bindings::get_device(&raw mut (*part0.as_ptr()).bd_device) };
        // INVARIANT: we took the reference just above.
        Some(OpenDisk(part0))
    }

    /// Whether anyone has the disk or one of its partitions open. Once the
    /// disk is deleted nobody can open it again: a `false` is final.
    pub(crate) fn is_open(&self) -> bool {
        // SAFETY: The block device and its disk stay valid while we hold a
        // reference (type invariant); `bd_openers` is an atomic, and
        // `open_partitions` an `unsigned` read once (a stale value only
        // means one more look).
        unsafe {
            let part0 = self.0.as_ptr();
            let openers = core::ptr::read_volatile(&raw const (*part0).bd_openers.counter);
            let partitions =
                core::ptr::read_volatile(&raw const (*(*part0).bd_disk).open_partitions);
            openers > 0 || partitions > 0
        }
    }
}

impl Drop for OpenDisk {
    fn drop(&mut self) {
        // SAFETY: We hold one reference (type invariant), given back here.
        unsafe { bindings::put_device(&raw mut (*self.0.as_ptr()).bd_device) };
    }
}
// ANCHOR_END: open_disk

// ANCHOR: lingering
/// The module's workqueue for lingering disks, reachable from `unbind`.
static LINGERING: Atomic<*const Queue> = Atomic::new(core::ptr::null());

/// The workqueue the module's exit waits for. Created before the driver is
/// registered and dropped after it is unregistered (field order of the
/// module), so every `unbind` finds it.
pub(crate) struct Lingering {
    /// Destroyed when the module goes: waits for the lingering disks.
    _wq: OwnedQueue,
}

impl Lingering {
    /// The workqueue, named `name`.
    pub(crate) fn new(name: &'static CStr) -> Result<Lingering> {
        let wq = OwnedQueue::new(name, 0)?;
        LINGERING.store(core::ptr::from_ref(wq.queue()), Relaxed);
        Ok(Lingering { _wq: wq })
    }
}

impl Drop for Lingering {
    fn drop(&mut self) {
        LINGERING.store(core::ptr::null(), Relaxed);
        // Then `OwnedQueue`'s drop destroys the workqueue, which waits for
        // every disk still open to be closed.
    }
}

/// Waits, in the background, until `disk` (`{prefix}{number}n1`, deleted)
/// is closed; the module's exit waits for that.
pub(crate) fn linger(disk: OpenDisk, prefix: &'static str, number: u32) -> Result {
    let wq = LINGERING.load(Relaxed);
    if wq.is_null() {
        return Err(ENODEV);
    }
    pr_warn!(
        "{}{}n1 is still open (mounted?): deleted, its I/O fails; rmmod waits until it is closed\n",
        prefix,
        number
    );
    // SAFETY: A non-null `LINGERING` is the queue of the module's
    // `Lingering`, which is dropped only after the driver is unregistered,
    // that is, after every `unbind` (our caller) has returned.
    let wq = unsafe { &*wq };
    wq.try_spawn(GFP_KERNEL, move || {
        while disk.is_open() {
            fsleep(POLL);
        }
        // The last user's `bdev_release` reads the operations once more
        // after it stopped counting as open: give it time to return.
        fsleep(POLL);
        pr_info!("{}{}n1 is closed now\n", prefix, number);
        drop(disk);
    })?;
    Ok(())
}
// ANCHOR_END: lingering
