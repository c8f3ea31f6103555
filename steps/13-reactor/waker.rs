// SPDX-License-Identifier: GPL-2.0

//! Wakers for the executor's tasks.
//!
//! A [`Waker`] is a pointer plus a table of four functions (`clone`, `wake`,
//! `wake_by_ref`, `drop`): a hand-written trait object. The standard library
//! builds one from any `Arc<impl Wake>`, but the kernel has no `alloc::task`,
//! so this file builds it over the kernel's own [`Arc`]: the data pointer is
//! an `Arc<Task>` turned into a raw pointer, and each waker owns one
//! reference count of the task.

use crate::executor::Task;
use core::task::{
    RawWaker,
    RawWakerVTable,
    Waker, //
};
use kernel::sync::Arc;

// ANCHOR: waker
/// The table of a task's waker. Every function receives the pointer made by
/// [`Arc::into_raw`] in [`new`] (or in `clone`).
static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop);

/// A waker that queues `task` when woken. It owns the reference `task`.
pub(crate) fn new(task: Arc<Task>) -> Waker {
    let data = Arc::into_raw(task).cast::<()>();
    // SAFETY: `data` is an owned reference of an `Arc<Task>`, and the
    // functions of `VTABLE` treat it as one (see each of them), so the
    // contract of `RawWaker` (clone gives an equivalent waker, wake and drop
    // consume it, all are thread-safe) is kept.
    unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) }
}

/// Makes a second waker for the same task: one more reference.
///
/// # Safety
///
/// `data` comes from [`Arc::into_raw`] on an `Arc<Task>` whose reference the
/// calling waker still owns.
unsafe fn clone(data: *const ()) -> RawWaker {
    // SAFETY: By the function's safety requirement, `data` is a live
    // `Arc<Task>` reference; `ManuallyDrop` borrows it without giving it up.
    let task = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(data.cast::<Task>()) });
    let copy: Arc<Task> = (*task).clone();
    RawWaker::new(Arc::into_raw(copy).cast::<()>(), &VTABLE)
}

/// Wakes the task and consumes the waker: its reference goes with it.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn wake(data: *const ()) {
    // SAFETY: By the function's safety requirement we may take back the
    // reference this waker owned.
    let task = unsafe { Arc::from_raw(data.cast::<Task>()) };
    Task::wake(&task);
}

/// Wakes the task and keeps the waker.
///
/// # Safety
///
/// As for [`clone`].
unsafe fn wake_by_ref(data: *const ()) {
    // SAFETY: As in `clone`: borrowed, not taken.
    let task = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(data.cast::<Task>()) });
    Task::wake(&task);
}

/// Drops the waker, and with it its reference.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn drop(data: *const ()) {
    // SAFETY: By the function's safety requirement we may take back the
    // reference this waker owned; dropping it decrements the count.
    core::mem::drop(unsafe { Arc::from_raw(data.cast::<Task>()) });
}
// ANCHOR_END: waker
