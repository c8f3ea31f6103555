// SPDX-License-Identifier: GPL-2.0

//! A workqueue of the module's own (stage 22's `OwnedQueue`, moved to a file
//! of its own and given a limit on concurrent work items).
//!
//! Part of the kernel shim (`solutions/lib/kshim/`), from stage 17 on (the
//! watchdog's queue; stage 23's executor too): it names only `kernel::`.
//! TODO: replace with the `kernel` crate's own allocated workqueue once
//! it has one (7.3's `workqueue` module offers only the system queues and
//! `Queue::from_raw`).

use core::ptr::NonNull;
use kernel::{
    bindings,
    prelude::*,
    workqueue::Queue, //
};

// ANCHOR: queue
/// A workqueue of the module's own. Destroying it waits until every work
/// item on it has returned, so no work item can outlive the module.
///
/// # Invariants
///
/// `self.0` points at a workqueue from `alloc_workqueue`, destroyed only by
/// `Drop`.
pub(crate) struct OwnedQueue(NonNull<bindings::workqueue_struct>);

// SAFETY: The workqueue API may be called from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: Queueing and flushing work are thread-safe.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    // ANCHOR: new
    /// An unbound workqueue named `name` that runs at most `max_active` work
    /// items at once (0: the kernel's default, 256 per node).
    pub(crate) fn new(name: &'static CStr, max_active: u32) -> Result<Self> {
        let max_active = c_int::try_from(max_active)?;
        // SAFETY: `"%s"` with one C string argument is a valid format for
        // `alloc_workqueue`, and `name` is NUL-terminated and 'static.
        let wq = unsafe {
            bindings::alloc_workqueue_noprof(
                c"%s".as_char_ptr(),
                bindings::wq_flags_WQ_UNBOUND,
                max_active,
                name.as_char_ptr(),
            )
        };
        // INVARIANT: a non-NULL result is a new workqueue that we own.
        NonNull::new(wq).map(Self).ok_or(ENOMEM)
    }
    // ANCHOR_END: new

    /// The queue, to put work on it.
    pub(crate) fn queue(&self) -> &Queue {
        // SAFETY: The workqueue is valid until `Drop` (type invariant), which
        // cannot run while `self` is borrowed.
        unsafe { Queue::from_raw(self.0.as_ptr()) }
    }

    /// Waits until every work item queued so far has finished running.
    pub(crate) fn flush(&self) {
        // SAFETY: The workqueue is valid (type invariant).
        unsafe { bindings::__flush_workqueue(self.0.as_ptr()) };
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: The workqueue is valid and nothing uses it after this (we
        // are its owner, being dropped). It waits for remaining work.
        unsafe { bindings::destroy_workqueue(self.0.as_ptr()) };
    }
}
// ANCHOR_END: queue
