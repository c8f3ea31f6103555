// SPDX-License-Identifier: GPL-2.0

//! A disk the driver data may hold.
//!
//! Part of the kernel shim (`kshim::send_disk`), from stage 13 on. TODO:
//! goes once 7.3's `TagSet` is `Send` and `Sync` upstream: then `GenDisk`
//! and `Arc<TagSet>` are `Send` by the kernel crate's own rule.

use kernel::{
    block::mq::{
        gen_disk::GenDisk,
        Operations,
        TagSet, //
    },
    sync::Arc, //
};

// ANCHOR: send_disk
/// A `GenDisk` and its tag set, `Send`: the driver data of a PCI driver
/// must be, and in 7.3 neither is, because `TagSet` (an `Opaque` C struct)
/// is neither `Send` nor `Sync`.
pub(crate) struct SendGenDisk<T: Operations> {
    /// Dropped first: `del_gendisk` waits for the requests in flight.
    disk: GenDisk<T>,
    /// The disk's tag set (the disk holds it too): the way to the disk's
    /// request queue.
    tag_set: Arc<TagSet<T>>,
}

// SAFETY: `GenDisk` and `TagSet` own C objects (`gendisk`,
// `blk_mq_tag_set`) that the block layer uses from any CPU under its own
// locking; dropping them (`del_gendisk` and `put_disk`,
// `blk_mq_free_tag_set`) may run on any thread, and `TagSet`'s `&self`
// methods only read. What the disk's requests reach (`T::QueueData`) must
// be `Send` itself.
unsafe impl<T: Operations> Send for SendGenDisk<T> where T::QueueData: Send {}
// ANCHOR_END: send_disk

impl<T: Operations> SendGenDisk<T> {
    /// `disk`, built on `tag_set`.
    pub(crate) fn new(disk: GenDisk<T>, tag_set: Arc<TagSet<T>>) -> Self {
        SendGenDisk { disk, tag_set }
    }

    /// The disk's tag set.
    pub(crate) fn tag_set(&self) -> &Arc<TagSet<T>> {
        &self.tag_set
    }
}
