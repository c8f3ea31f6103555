// SPDX-License-Identifier: GPL-2.0

//! The reactor: wakes tasks when their sockets become ready.
//!
//! The kernel wakes a socket's wait queue on every change of state: data
//! arrived, send-buffer space freed, a connection to accept, a shutdown, a
//! reset. `poll(2)` and `epoll` hook an entry into that queue; so does a
//! [`Watched`] socket, with a callback that wakes the task waiting on it.
//! No thread sleeps: the callback runs inside the network stack (softirq),
//! queues the task's work item, and returns.
//!
//! All of the reactor's `unsafe` is in this file: a [`Watched`] owns its
//! socket together with the wait-queue entry, so the entry provably leaves
//! the queue before the socket goes, and what is built on it is safe code:
//! [`AsyncListener`] (given, at the end of this file), stage 25's greeter,
//! and stage 26's async sockets (`async_socket.rs`).

use crate::socket::{
    Socket,
    TcpListener,
    TcpStream, //
};
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
    }, //
};
use kernel::{
    bindings,
    new_spinlock_irq,
    prelude::*,
    sync::SpinLockIrq,
    types::Opaque, //
};

// ANCHOR: waiter
/// A socket the reactor watches: it owns the socket `S` and an entry in the
/// socket's wait queue that wakes the task awaiting the socket. One task at a
/// time may wait on it (it keeps one waker).
///
/// # Invariants
///
/// While the value exists, `waiter.entry` is in the wait queue `head` of
/// `sock`, with [`sock_wake`] as its function. (The entry leaves the queue in
/// `drop`, which runs before the fields, so before `sock` is released.)
#[pin_data(PinnedDrop)]
pub(crate) struct Watched<S: AsSocket> {
    #[pin]
    waiter: SockWaiter,
    /// The socket's wait queue (it lives as long as the socket).
    head: *mut bindings::wait_queue_head,
    sock: S,
}

/// What [`sock_wake`] finds from the entry the kernel hands it.
#[pin_data]
struct SockWaiter {
    /// The wait-queue entry; the kernel links it into the socket's queue.
    #[pin]
    entry: Opaque<bindings::wait_queue_entry>,
    /// The waker of the task waiting on the socket. Taken in softirq
    /// context by `sock_wake` and in process context by `poll_ready`: an
    /// irq-disabling spinlock.
    #[pin]
    waker: SpinLockIrq<Option<Waker>>,
}

// SAFETY: The entry is only touched by the wait-queue functions, which the
// kernel allows from any thread (they take the queue's lock); the rest is
// behind `waker`'s lock.
unsafe impl Send for SockWaiter {}
// SAFETY: Shared access only reads the entry's address or takes `waker`'s
// lock.
unsafe impl Sync for SockWaiter {}
// SAFETY: `head` is only passed to the wait-queue functions (see
// `SockWaiter`); the socket is `Send` itself.
unsafe impl<S: AsSocket + Send> Send for Watched<S> {}
// SAFETY: Shared access reads `head` and uses `waiter` and `sock` through
// shared references, which are `Sync`.
unsafe impl<S: AsSocket + Sync> Sync for Watched<S> {}

/// The sockets a [`Watched`] can own: anything with a kernel socket inside.
pub(crate) trait AsSocket {
    /// The kernel socket, alive as long as `self`.
    fn socket(&self) -> &Socket;
}

impl AsSocket for TcpListener {
    fn socket(&self) -> &Socket {
        TcpListener::socket(self)
    }
}

impl AsSocket for TcpStream {
    fn socket(&self) -> &Socket {
        TcpStream::socket(self)
    }
}

impl<S: AsSocket> Watched<S> {
    /// Takes `sock` over and hooks it up to the reactor.
    pub(crate) fn new(sock: S) -> impl PinInit<Self, Error> {
        let head = sock.socket().wait_queue();
        try_pin_init!(Self {
            waiter <- pin_init!(SockWaiter {
                entry <- Opaque::ffi_init(|entry: *mut bindings::wait_queue_entry| {
                    // SAFETY: `entry` points at the (uninitialised) entry,
                    // which `init_wait` initialises; then we set its function.
                    unsafe {
                        bindings::init_wait(entry);
                        (*entry).func = Some(sock_wake);
                    }
                }),
                waker <- new_spinlock_irq!(None),
            }),
            head,
            sock,
        })
        .pin_chain(|this| {
            // INVARIANT: the entry goes into the queue of the socket we own
            // now, at its final address (the value is pinned), and leaves it
            // in `drop`, before `sock` is released.
            // SAFETY: `head` is the valid wait queue of `this.sock`, `entry`
            // is initialised and in no queue yet.
            unsafe { bindings::add_wait_queue(this.head, this.waiter.entry.get()) };
            Ok(())
        })
    }
    // ANCHOR_END: waiter

    /// The socket, for its non-blocking calls.
    pub(crate) fn get(&self) -> &S {
        &self.sock
    }

    // ANCHOR: poll_ready
    /// Ready once the socket is ready for one of the events in `mask`
    /// (`POLLIN`, `POLLOUT`, ...; errors and hang-ups always count);
    /// otherwise arranges for the task to be woken when the socket's state
    /// changes.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, mask: u32) -> Poll<()> {
        let (waiter, sock) = (&self.waiter, self.sock.socket());
        // TODO (exercise 1): Ready if the socket is ready for `mask`;
        // otherwise Pending, with `sock_wake` sure to wake this task (about
        // 12 lines). The contract:
        // - ready: `sock.readiness()`, a `POLL*` mask, has a bit of `mask`,
        //   or POLLERR or POLLHUP (errors and hang-ups always count: the
        //   operation will not block);
        // - no lost wakeup: `sock_wake` wakes the waker stored in
        //   `waiter.waker` at each change of the socket's state. A change
        //   between your look at the socket and your return must still wake
        //   the task: which comes first, storing the waker or looking?
        // - the waker stored is this poll's (`cx.waker()`); the one it
        //   replaces is dropped outside the lock (dropping a waker can run
        //   any code);
        // - a Ready return leaves no waker stored: the task is not waiting
        //   after all.
        // You have: `waiter.waker` (a `SpinLockIrq<Option<Waker>>`),
        // `sock.readiness()`, `cx.waker()`, `bindings::POLLERR` and
        // `bindings::POLLHUP`.
        // Tests: "a client is greeted" (until the accept task is woken, no
        // connection is served and the stage stops there) and every check
        // after it; "a greeted client that stays silent keeps its
        // connection" fails if `mask` is not heeded.
        let _ = (&waiter.waker, sock.readiness(), cx, mask);
        Poll::Pending
    }
    // ANCHOR_END: poll_ready

    // ANCHOR: ready
    /// A future for [`Watched::poll_ready`].
    pub(crate) fn ready(&self, mask: u32) -> impl Future<Output = ()> + '_ {
        core::future::poll_fn(move |cx| self.poll_ready(cx, mask))
    }
    // ANCHOR_END: ready
}

// ANCHOR: sock_wake
/// The wait-queue function: the kernel calls it, in softirq context and under
/// the wait queue's lock, whenever the socket's state changes.
///
/// # Safety
///
/// `entry` is the `entry` field of a live `SockWaiter`: the only entries
/// with this function are those (in a [`Watched`]), and each leaves the
/// queue (under the same lock) before it is freed.
unsafe extern "C" fn sock_wake(
    entry: *mut bindings::wait_queue_entry,
    _mode: c_uint,
    _flags: c_int,
    _key: *mut c_void,
) -> c_int {
    // TODO (exercise 2): Wake the task waiting on this socket, if there is
    // one (about 10 lines). The contract:
    // - `entry` is the `entry` field, an `Opaque<bindings::wait_queue_entry>`,
    //   of a live `SockWaiter` (this function's `# Safety`): the waiter is
    //   reached from it, in an `unsafe` block whose `// SAFETY:` says why
    //   the waiter is alive;
    // - its stored waker wakes once: it is taken out of `waiter.waker`, and
    //   woken after that lock is released (this runs in softirq context,
    //   under the wait queue's lock: waking only queues a work item);
    // - not an exclusive wait: return 0, and the kernel goes on waking the
    //   other entries.
    // You have: `kernel::container_of!`, `SockWaiter`'s `waker`,
    // `Waker::wake`.
    // Tests: "a client is greeted" (until the accept task is woken, no
    // connection is served and the stage stops there) and every check after it.
    let _ = entry;
    0
}
// ANCHOR_END: sock_wake

// ANCHOR: drop
#[pinned_drop]
impl<S: AsSocket> PinnedDrop for Watched<S> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant the entry is in the valid queue
        // `head` (the socket is released only after this, with the fields).
        // Removing it takes the queue's lock, so once this returns
        // `sock_wake` is not running on it and never will again.
        unsafe { bindings::remove_wait_queue(self.head, self.waiter.entry.get()) };
    }
}
// ANCHOR_END: drop

// ANCHOR: listener
/// A listening socket whose `accept` is a future.
pub(crate) struct AsyncListener {
    listener: Pin<KBox<Watched<TcpListener>>>,
}

impl AsyncListener {
    /// Hooks `listener` up to the reactor.
    pub(crate) fn new(listener: TcpListener) -> Result<Self> {
        let listener = KBox::pin_init(Watched::new(listener), GFP_KERNEL)?;
        Ok(Self { listener })
    }

    /// Waits for a connection and returns it, hooked up to the reactor.
    pub(crate) async fn accept(&self) -> Result<Pin<KBox<Watched<TcpStream>>>> {
        loop {
            match self.listener.get().try_accept() {
                Err(e) if e == EAGAIN => {}
                result => return KBox::pin_init(Watched::new(result?), GFP_KERNEL),
            }
            self.listener.ready(bindings::POLLIN).await;
        }
    }
}
// ANCHOR_END: listener

// ANCHOR: listen
/// What every server on the reactor does first (stages 25 and 26, and the
/// 9P server of stages 28 to 33): checks the two parameters they all take,
/// `port` (1..=65535) and `workers` (1..=64), listens on `addr:port` and
/// hooks the listener up to the reactor. Logs why not.
pub(crate) fn listen(
    addr: [u8; 4],
    port: u16,
    workers: u32,
    backlog: u32,
) -> Result<AsyncListener> {
    if port == 0 || !(1..=64).contains(&workers) {
        pr_err!("out of range: port 1..=65535, workers 1..=64\n");
        return Err(EINVAL);
    }
    let listener = TcpListener::listen(addr, port, backlog).inspect_err(|&e| {
        let [a, b, c, d] = addr;
        if e == EADDRINUSE {
            pr_err!(
                "port {} is already in use (EADDRINUSE): pick another with port=N\n",
                port
            );
        } else {
            pr_err!(
                "cannot listen on {}.{}.{}.{}:{}: {:?}\n",
                a,
                b,
                c,
                d,
                port,
                e
            );
        }
    })?;
    AsyncListener::new(listener)
}
// ANCHOR_END: listen
