// SPDX-License-Identifier: GPL-2.0

//! Wakers over the kernel's [`Arc`], with the shape of the standard library's.
//!
//! A [`Waker`] is a pointer plus a table of four functions (`clone`, `wake`,
//! `wake_by_ref`, `drop`): a hand-written trait object. The standard library
//! builds one from any `Arc<impl Wake>` (`alloc::task::Wake`), but the
//! kernel has no `alloc::task`. This file gives the same shape over the
//! kernel's own [`Arc`]: a [`Wake`] trait, and [`new`], which turns an
//! `Arc<impl Wake>` into a `Waker` whose data pointer is that `Arc` as a raw
//! pointer; each waker owns one reference count. It knows nothing of the
//! executor: the executor's `Task` implements [`Wake`].

use core::task::{
    RawWaker,
    RawWakerVTable,
    Waker, //
};
use kernel::sync::Arc;

// ANCHOR: wake_trait
/// What a waker does when woken: `alloc::task::Wake`'s shape, over the
/// kernel's [`Arc`]. `Send + Sync + 'static`: a waker may be woken, cloned
/// and dropped on any CPU, at any later time.
pub(crate) trait Wake: Send + Sync + 'static {
    /// Wakes, consuming this reference (by default: through `wake_by_ref`).
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    /// Wakes, keeping this reference.
    fn wake_by_ref(self: &Arc<Self>);
}
// ANCHOR_END: wake_trait

// ANCHOR: waker
/// The table of the wakers of an `Arc<W>`. Every function receives the
/// pointer made by [`Arc::into_raw`] in [`new`] (or in `clone`). One table
/// per type `W` (the constant is promoted to a `'static`, as in the standard
/// library's `Wake`).
fn vtable<W: Wake>() -> &'static RawWakerVTable {
    &RawWakerVTable::new(clone::<W>, wake::<W>, wake_by_ref::<W>, drop::<W>)
}

/// A waker that wakes `task` (`W::wake`) when woken. It owns the reference
/// `task`.
pub(crate) fn new<W: Wake>(task: Arc<W>) -> Waker {
    let data = Arc::into_raw(task).cast::<()>();
    // SAFETY: `data` is an owned reference of an `Arc<W>`, and the
    // functions of `vtable::<W>()` treat it as one (see each of them), so the
    // contract of `RawWaker` (clone gives an equivalent waker, wake and drop
    // consume it, all are thread-safe) is kept.
    unsafe { Waker::from_raw(RawWaker::new(data, vtable::<W>())) }
}

/// Makes a second waker for the same task: one more reference.
///
/// # Safety
///
/// `data` comes from [`Arc::into_raw`] on an `Arc<W>` whose reference the
/// calling waker still owns.
unsafe fn clone<W: Wake>(data: *const ()) -> RawWaker {
    // SAFETY: By the function's safety requirement, `data` is a live
    // `Arc<W>` reference; `ManuallyDrop` borrows it without giving it up.
    let task = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(data.cast::<W>()) });
    let copy: Arc<W> = (*task).clone();
    RawWaker::new(Arc::into_raw(copy).cast::<()>(), vtable::<W>())
}

/// Wakes the task and consumes the waker: its reference goes with it.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn wake<W: Wake>(data: *const ()) {
    // SAFETY: By the function's safety requirement we may take back the
    // reference this waker owned.
    let task = unsafe { Arc::from_raw(data.cast::<W>()) };
    W::wake(task);
}

/// Wakes the task and keeps the waker.
///
/// # Safety
///
/// As for [`clone`].
unsafe fn wake_by_ref<W: Wake>(data: *const ()) {
    // SAFETY: As in `clone`: borrowed, not taken.
    let task = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(data.cast::<W>()) });
    W::wake_by_ref(&task);
}

/// Drops the waker, and with it its reference.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn drop<W: Wake>(data: *const ()) {
    // SAFETY: By the function's safety requirement we may take back the
    // reference this waker owned; dropping it decrements the count.
    core::mem::drop(unsafe { Arc::from_raw(data.cast::<W>()) });
}
// ANCHOR_END: waker
