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
    // TODO (exercise 1): Make a waker that owns `task`'s reference: its
    // data pointer is that reference, given up as a raw pointer, and its
    // table is `vtable::<W>()`. `Waker::from_raw` is `unsafe`: its
    // `// SAFETY:` comment says why the four functions below keep
    // `RawWaker`'s contract (a clone is an equivalent waker, wake and drop
    // consume one, every function may run on any thread).
    // You have: `Arc::into_raw`, `RawWaker::new`, `Waker::from_raw`.
    // Until then every task gets a waker that does nothing, so no task ever
    // runs a second time.
    // Tests: "10000 short tasks run, each yields once, and one task joins them
    // all" (the stage stops there while it fails) and "no task failed"; a
    // reference count off by one shows in "kernel log has no oops, warning,
    // KASAN or lockdep report; no taint" or "kmemleak: nothing the module
    // allocated is left after rmmod".
    let _ = (task, vtable::<W>());
    Waker::noop().clone()
}

/// Makes a second waker for the same task: one more reference.
///
/// # Safety
///
/// `data` comes from [`Arc::into_raw`] on an `Arc<W>` whose reference the
/// calling waker still owns.
unsafe fn clone<W: Wake>(data: *const ()) -> RawWaker {
    // TODO (exercise 1): A second waker for the same task, with a reference
    // of its own: the count goes up by one, and the calling waker keeps its
    // reference (nothing here may give it up).
    // You have: `Arc::from_raw` (the reference back as an `Arc`: dropping
    // that gives it up), `core::mem::ManuallyDrop`, `Arc::into_raw`,
    // `RawWaker::new`, `vtable::<W>()`.
    // Tests: "10000 short tasks run, ..." and "no task failed"; a count off by
    // one: "kernel log has no oops, ..." or "kmemleak: ...".
    RawWaker::new(data, vtable::<W>())
}

/// Wakes the task and consumes the waker: its reference goes with it.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn wake<W: Wake>(data: *const ()) {
    // TODO (exercise 1): Wake the task, and give up this waker's reference
    // with it: the count goes down by one.
    // You have: `Arc::from_raw`, `W::wake` (which consumes an `Arc<W>`).
    // Tests: "10000 short tasks run, ..." and "no task failed"; a count off by
    // one: "kernel log has no oops, ..." or "kmemleak: ...".
    let _ = (data, W::wake);
}

/// Wakes the task and keeps the waker.
///
/// # Safety
///
/// As for [`clone`].
unsafe fn wake_by_ref<W: Wake>(data: *const ()) {
    // TODO (exercise 1): Wake the task and keep the waker: the count is the
    // same when this returns.
    // You have: what `clone` uses, `W::wake_by_ref` (which takes an
    // `&Arc<W>`).
    // Tests: "10000 short tasks run, ..." and "no task failed"; a count off by
    // one: "kernel log has no oops, ..." or "kmemleak: ...".
    let _ = data;
}

/// Drops the waker, and with it its reference.
///
/// # Safety
///
/// As for [`clone`]; the caller gives up its reference.
unsafe fn drop<W: Wake>(data: *const ()) {
    // TODO (exercise 1): Give up this waker's reference: the count goes down
    // by one (the last reference frees the task).
    // You have: `Arc::from_raw`, `core::mem::drop` (in here, plain `drop` is
    // this very function).
    // Tests: "10000 short tasks run, ..." and "no task failed"; a count off by
    // one: "kernel log has no oops, ..." or "kmemleak: ...".
    let _ = data;
}
// ANCHOR_END: waker
