// SPDX-License-Identifier: GPL-2.0

//! What the 7.3 `GenDiskBuilder` cannot say about a disk: its request
//! queue's limits (the largest request, how its pages may be laid out, the
//! write cache, discards), and its place in sysfs, under its controller.
//!
//! `GenDiskBuilder::build` zeroes a `struct queue_limits`, sets the block
//! sizes (and rotational), and calls `device_add_disk` with no parent. A C
//! driver fills the limits before `blk_mq_alloc_disk` and passes its
//! device to `device_add_disk`. Here both happen just after `build`: the
//! limits as the block layer changes a live disk's (`queue_limits_start_update`,
//! `queue_limits_commit_update_frozen`: the queue frozen, no request in
//! flight meanwhile), the parent with `device_move`, as a disk whose
//! controller moves would be.
//!
//! Part of the kernel shim (`kshim::queue_limits`), from stage 20 on. TODO:
//! goes once `GenDiskBuilder` takes the limits (C: the `queue_limits`
//! argument of `blk_mq_alloc_disk`) and a parent (C: `device_add_disk`'s
//! first argument); upstream's 7.3 builder has neither.

use kernel::{
    bindings,
    block::mq::Operations,
    device::Device,
    prelude::*,
    sync::Arc, //
};

use super::send_disk::SendGenDisk;

/// `BLK_FEAT_WRITE_CACHE` and `BLK_FEAT_FUA`: macros with a `__force`
/// cast, which bindgen does not translate (the kernel crate exports only
/// `BLK_FEAT_ROTATIONAL`).
const BLK_FEAT_WRITE_CACHE: u32 = 1 << 0;
const BLK_FEAT_FUA: u32 = 1 << 1;

// ANCHOR: limits
/// The limits of a disk's requests, as the driver's controller sets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The largest request, in 512-byte sectors.
    pub(crate) max_hw_sectors: u32,
    /// The most segments (pieces of memory) in a request.
    pub(crate) max_segments: u16,
    /// Every segment but the first starts at, and every one but the last
    /// ends at, a multiple of this plus one (a mask: PRPs need 4095).
    pub(crate) virt_boundary_mask: u64,
    /// A request's memory starts at, and its segments are, a multiple of
    /// this plus one (a mask: PRP entries need dword alignment, 3).
    pub(crate) dma_alignment: u32,
    /// Whether the disk has a volatile write cache, and takes Flush and
    /// Force Unit Access: the block layer then sends both.
    pub(crate) write_cache: bool,
    /// The largest discard, in sectors (0: the disk takes no discards).
    pub(crate) max_discard_sectors: u32,
    /// The most ranges in one discard request.
    pub(crate) max_discard_segments: u16,
    /// The unit of a discard, in bytes.
    pub(crate) discard_granularity: u32,
}
// ANCHOR_END: limits

/// The request queue of `disk`.
fn request_queue<T: Operations>(disk: &SendGenDisk<T>) -> *mut bindings::request_queue {
    // `TagSet` is `#[repr(transparent)]` over the C `blk_mq_tag_set`.
    let set = Arc::as_ptr(disk.tag_set()).cast::<bindings::blk_mq_tag_set>();
    // SAFETY: The tag set is alive (the disk holds an `Arc` of it) and the
    // disk is not deleted (`disk` borrows it; it is deleted only when
    // dropped): its request queue is on the set's `tag_list`, the only one
    // (as `lingering::OpenDisk::of` reads it).
    unsafe {
        let first = (*set).tag_list.next;
        kernel::container_of!(first, bindings::request_queue, tag_set_list)
    }
}

// ANCHOR: apply
/// Sets `limits` on `disk`'s request queue, as the block layer updates a
/// live disk's: the current limits under `limits_lock`, changed, then
/// validated and committed with the queue frozen. The block layer's
/// validation may refuse them (`EINVAL`): then nothing changed.
pub(crate) fn apply<T: Operations>(disk: &SendGenDisk<T>, limits: &Limits) -> Result {
    let q = request_queue(disk);
    // SAFETY: `q` is the disk's live request queue (`request_queue`).
    // `queue_limits_start_update` (an inline function bindgen cannot call)
    // is this: `limits_lock` taken, and the limits copied under it.
    // `queue_limits_commit_update_frozen` needs the lock held, and
    // releases it, on success and on failure alike. It sleeps (it freezes
    // the queue): this is process context (probe), not under a spinlock.
    let ret = unsafe {
        bindings::mutex_lock(&raw mut (*q).limits_lock);
        let mut lim = (*q).limits;
        lim.max_hw_sectors = limits.max_hw_sectors;
        lim.max_segments = limits.max_segments;
        lim.virt_boundary_mask = limits.virt_boundary_mask as usize;
        // With a virtual boundary a segment may be as long as it likes
        // (the boundary cuts it into pages anyway); the 64 KiB the queue
        // has from `build` would split requests for nothing.
        lim.max_segment_size = u32::MAX;
        lim.dma_alignment = limits.dma_alignment;
        if limits.write_cache {
            lim.features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
        } else {
            lim.features &= !(BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA);
        }
        lim.max_hw_discard_sectors = limits.max_discard_sectors;
        lim.max_discard_segments = limits.max_discard_segments;
        lim.discard_granularity = limits.discard_granularity;
        bindings::queue_limits_commit_update_frozen(q, &mut lim)
    };
    kernel::error::to_result(ret)
}
// ANCHOR_END: apply

// ANCHOR: parent
/// Moves `disk` (and its partitions) under `parent` in sysfs: from
/// `/sys/devices/virtual/block/` to `parent`'s `block/`, where `lsblk`,
/// udev's `by-path` names and `/sys/block/*/device` look for the hardware
/// behind a disk. The C driver's disks are added there at once.
pub(crate) fn set_parent<T: Operations>(disk: &SendGenDisk<T>, parent: &Device) -> Result {
    let q = request_queue(disk);
    // `Device` is `#[repr(transparent)]` over the C `struct device`.
    let parent = core::ptr::from_ref(parent)
        .cast_mut()
        .cast::<bindings::device>();
    // SAFETY: `q` is the disk's live request queue (`request_queue`), whose
    // `disk` is the added `gendisk` and its `part0` the whole-disk block
    // device, whose `bd_device` is the disk's device (C: `disk_to_dev`).
    // `device_move` takes a reference on the new parent (and drops the old
    // one) and sleeps: process context. `parent` is our bound device, alive
    // for the call.
    let ret = unsafe {
        let dev = &raw mut (*(*(*q).disk).part0).bd_device;
        bindings::device_move(dev, parent, bindings::dpm_order_DPM_ORDER_NONE)
    };
    kernel::error::to_result(ret)
}
// ANCHOR_END: parent
