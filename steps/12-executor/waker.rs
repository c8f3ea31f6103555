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
    // TODO: Turn `task` into the waker's data pointer with
    // `Arc::into_raw(task).cast::<()>()`, and build the waker with
    // `Waker::from_raw(RawWaker::new(data, &VTABLE))` (an `unsafe` call: say
    // in its `// SAFETY:` comment why the four functions below keep
    // `RawWaker`'s contract). Until then every task gets a waker that does
    // nothing, so no task ever runs a second time.
    let _ = (task, &VTABLE);
    Waker::noop().clone()
}

/// Makes a second waker for the same task: one more reference.
///
/// # Safety
///
/// `data` comes from [`Arc::into_raw`] on an `Arc<Task>` whose reference the
/// calling waker still owns.
unsafe fn clone(data: *const ()) -> RawWaker {
    // TODO: Borrow the task without taking the caller's reference:
    // `core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(data.cast::<Task>()) })`,
    // clone the `Arc` inside (one more reference, for the new waker):
    // `let copy: Arc<Task> = (*task).clone();` (`task.clone()` would clone the
    // `ManuallyDrop` wrapper), and return
    // `RawWaker::new(Arc::into_raw(copy).cast::<()>(), &VTABLE)`.
    RawWaker::new(data, &VTABLE)
}

/// Wakes the task and consumes the waker: its reference goes with it.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn wake(data: *const ()) {
    // TODO: Take the reference back (`Arc::from_raw`) and call
    // `Task::wake(&task)`; the reference is dropped at the end.
    let _ = (data, Task::wake);
}

/// Wakes the task and keeps the waker.
///
/// # Safety
///
/// As for [`clone`].
unsafe fn wake_by_ref(data: *const ()) {
    // TODO: As in `clone`, borrow the task through `ManuallyDrop`, then call
    // `Task::wake(&task)`.
    let _ = data;
}

/// Drops the waker, and with it its reference.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn drop(data: *const ()) {
    // TODO: Take the reference back and drop it:
    // `core::mem::drop(unsafe { Arc::from_raw(..) })` (in here, plain `drop`
    // is this very function).
    let _ = data;
}
// ANCHOR_END: waker
