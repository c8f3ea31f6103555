// SPDX-License-Identifier: GPL-2.0

//! The reactor: wakes tasks when their sockets become ready.
//!
//! The kernel wakes a socket's wait queue on every change of state: data
//! arrived, send-buffer space freed, a connection to accept, a shutdown, a
//! reset. `poll(2)` and `epoll` hook an entry into that queue; so does a
//! [`SockWaiter`], with a callback that wakes the task waiting on the socket.
//! No thread sleeps: the callback runs inside the network stack (softirq),
//! queues the task's work item, and returns.

use crate::socket::Socket;
use core::{
    ffi::{
        c_int,
        c_uint,
        c_void, //
    },
    future::Future,
    pin::Pin,
    task::{
        Context,
        Poll,
        Waker, //
    },
};
use kernel::{
    bindings,
    new_spinlock_irq,
    prelude::*,
    sync::SpinLockIrq,
    types::Opaque, //
};

// ANCHOR: waiter
/// An entry in one socket's wait queue that wakes the task awaiting the
/// socket. One task at a time may wait on it (it keeps one waker).
///
/// # Invariants
///
/// While the value exists, `entry` is in the wait queue `head`, with
/// [`sock_wake`] as its function, and `head` is valid.
#[pin_data(PinnedDrop)]
pub(crate) struct SockWaiter {
    /// The wait-queue entry; the kernel links it into the socket's queue.
    #[pin]
    entry: Opaque<bindings::wait_queue_entry>,
    /// The waker of the task waiting on the socket. Taken in softirq
    /// context by `sock_wake` and in process context by `poll_ready`: an
    /// irq-disabling spinlock.
    #[pin]
    waker: SpinLockIrq<Option<Waker>>,
    /// The socket's wait queue.
    head: *mut bindings::wait_queue_head,
}

// SAFETY: `head` is only used for calls the kernel allows from any thread
// (the wait-queue functions take the queue's lock).
unsafe impl Send for SockWaiter {}
// SAFETY: Shared access only reads the pointers or takes `waker`'s lock.
unsafe impl Sync for SockWaiter {}

impl SockWaiter {
    /// A waiter on `sock`'s wait queue.
    ///
    /// # Safety
    ///
    /// `sock` must outlive the waiter: drop the waiter first. Pass the same
    /// socket to [`SockWaiter::poll_ready`].
    pub(crate) unsafe fn new(sock: &Socket) -> impl PinInit<Self, Error> + '_ {
        try_pin_init!(Self {
            entry <- Opaque::ffi_init(|entry: *mut bindings::wait_queue_entry| {
                // SAFETY: `entry` points at the (uninitialised) entry, which
                // `init_wait` initialises; then we set its function.
                unsafe {
                    bindings::init_wait(entry);
                    (*entry).func = Some(sock_wake);
                }
            }),
            waker <- new_spinlock_irq!(None),
            head: sock.wait_queue(),
        })
        .pin_chain(|this| {
            // INVARIANT: the entry goes into the queue now, at its final
            // address (the value is pinned), and leaves it in `drop`; the
            // caller guarantees that the socket outlives us.
            // SAFETY: `head` is the valid wait queue of the socket, `entry`
            // is initialised and in no queue yet.
            unsafe { bindings::add_wait_queue(this.head, this.entry.get()) };
            Ok(())
        })
    }
    // ANCHOR_END: waiter

    // ANCHOR: poll_ready
    /// Ready once `sock` (the socket this waits on) is ready for one of the
    /// events in `mask` (`POLLIN`, `POLLOUT`, ...; errors and hang-ups always
    /// count); otherwise arranges for the task to be woken when the socket's
    /// state changes.
    pub(crate) fn poll_ready(&self, sock: &Socket, cx: &mut Context<'_>, mask: u32) -> Poll<()> {
        // TODO: Decide, without losing a wakeup (about 12 lines):
        // - first store a clone of `cx.waker()` in `self.waker`:
        //   `let old = self.waker.lock().replace(cx.waker().clone());` (the
        //   guard ends at the `;`), then `drop(old)`, outside the lock;
        // - then look at the socket: `sock.readiness()` is a `POLL*` mask;
        // - if it has a bit of `mask | bindings::POLLERR | bindings::POLLHUP`,
        //   take the waker back out (we are not waiting after all) and return
        //   `Poll::Ready(())`; otherwise `Poll::Pending`: `sock_wake` will
        //   wake the waker when the socket's state changes.
        // Why this order: looking first and storing second loses a change
        // that happens in between; no wake would ever come.
        let _ = (&self.waker, sock.readiness(), cx, mask);
        Poll::Pending
    }
    // ANCHOR_END: poll_ready

    // ANCHOR: ready
    /// A future for [`SockWaiter::poll_ready`].
    pub(crate) fn ready<'a>(
        &'a self,
        sock: &'a Socket,
        mask: u32,
    ) -> impl Future<Output = ()> + 'a {
        core::future::poll_fn(move |cx| self.poll_ready(sock, cx, mask))
    }
    // ANCHOR_END: ready
}

// ANCHOR: sock_wake
/// The wait-queue function: the kernel calls it, in softirq context and under
/// the wait queue's lock, whenever the socket's state changes.
///
/// # Safety
///
/// `entry` is the `entry` field of a live [`SockWaiter`]: the only entries
/// with this function are those, and each leaves the queue (under the same
/// lock) before it is freed.
unsafe extern "C" fn sock_wake(
    entry: *mut bindings::wait_queue_entry,
    _mode: c_uint,
    _flags: c_int,
    _key: *mut c_void,
) -> c_int {
    // TODO: Wake the task waiting on this socket (about 10 lines):
    // - get the `SockWaiter` from `entry` with `kernel::container_of!`: the
    //   entry is the waiter's `entry` field, an
    //   `Opaque<bindings::wait_queue_entry>`, so pass
    //   `entry.cast::<Opaque<bindings::wait_queue_entry>>()` (an `unsafe`
    //   block: say why the waiter is alive in its `// SAFETY:` comment);
    // - take the waker out of `waiter.waker` (lock, `take()`), unlock, and
    //   wake it if there was one.
    // Not an exclusive wait: return 0 (the kernel goes on waking the others).
    let _ = entry;
    0
}
// ANCHOR_END: sock_wake

// ANCHOR: drop
#[pinned_drop]
impl PinnedDrop for SockWaiter {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant the entry is in the valid queue
        // `head`. Removing it takes the queue's lock, so once this returns
        // `sock_wake` is not running on it and never will again.
        unsafe { bindings::remove_wait_queue(self.head, self.entry.get()) };
    }
}
// ANCHOR_END: drop
