// SPDX-License-Identifier: GPL-2.0

//! What one client may cost the server, and what happens when it asks for
//! more.
//!
//! Every resource a client can make the server hold has a ceiling, set by a
//! module parameter: connections, the message size (which sizes every
//! buffer of a connection), fids per connection, and how long a connection
//! may sit on half a frame. Hitting a ceiling is answered, never fatal to
//! anyone else: an extra connection is closed at once, a fid too many gets
//! `Rlerror`, a stalled frame closes its own connection.
//!
//! The ceilings are a policy ([`Limited`]) the stage-28 server is served
//! with: it asks the policy how large a message and how many fids may be,
//! whether to admit a connection, and awaits the client through it.

use crate::{
    module_parameters,
    policy::{
        self,
        Policy, //
    },
    sleep::{
        sleep,
        Sleep, //
    }, //
};
use core::{
    future::{
        poll_fn,
        Future, //
    },
    pin::pin,
    sync::atomic::{
        AtomicU64,
        AtomicUsize,
        Ordering, //
    },
    task::Poll, //
};
use kernel::{
    prelude::*,
    sync::Arc,
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
};

// ANCHOR: limits
/// The ceilings, from the module parameters.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    /// Connections served at once.
    pub(crate) max_conns: usize,
    /// The largest `msize` agreed to in `Tversion`.
    pub(crate) max_msize: u32,
    /// Fids one connection may hold.
    pub(crate) max_fids: usize,
    /// Walked names one connection's fids may hold between them.
    pub(crate) max_names: usize,
    /// How long a connection may hold half a frame (or a reply the client
    /// does not read), or go without a fid, before it is closed.
    pub(crate) idle: Delta,
}

/// What the server keeps for one fid itself, at most: its entry in the
/// red-black tree, and an open file (a `struct file`, about 256 bytes),
/// with room to spare.
pub(crate) const FID_COST: usize = 512;
/// What one walked name keeps alive: a `Node` (an `Arc` of about 64 bytes)
/// and its path handle (a `struct file`, about 256 bytes), which pins a
/// dentry (about 192 bytes) and its inode (about 1.1 KiB on ext4) that the
/// kernel could otherwise reclaim; rounded up.
pub(crate) const NAME_COST: usize = 2048;
/// What a connection costs besides its buffers and fids: its task, socket
/// and waiter, the session, and the first 8 KiB buffers, rounded up.
pub(crate) const CONN_COST: usize = 32 * 1024;
/// What each direction of a connection's socket may queue, in bytes of
/// data: a client that pipelines `Tread`s and never reads its replies fills
/// the server's send queue, then its receive queue, and no more.
pub(crate) const SOCKET_BUFFER: u32 = 64 * 1024;
/// What the kernel may hold for one connection's socket: each queue is
/// capped at twice [`SOCKET_BUFFER`] (the kernel doubles it, for its
/// `sk_buff`s), and may pass its cap by one packet, at most 64 KiB of data
/// (the loopback's largest) and its `sk_buff`: 2 x (128 + 64) KiB.
pub(crate) const SOCKET_COST: usize = 2 * (2 * SOCKET_BUFFER as usize + 64 * 1024);

impl Limits {
    /// The most memory the server can hold for its clients: per
    /// connection, a receive buffer, a reply buffer and a data buffer of
    /// `msize` bytes each, its fids, the walked names they hold, its
    /// fixed cost, and what the kernel queues on its socket.
    pub(crate) fn worst_case_bytes(&self) -> usize {
        let per_conn = 3 * self.max_msize as usize
            + self.max_fids * FID_COST
            + self.max_names * NAME_COST
            + CONN_COST
            + SOCKET_COST;
        self.max_conns * per_conn
    }
}
// ANCHOR_END: limits

// ANCHOR: admit
/// The connections being served, and counts for the unload message.
pub(crate) struct Connections {
    live: AtomicUsize,
    /// Connections closed at once because `live` was at the limit.
    pub(crate) refused: AtomicU64,
    /// Connections closed because they stalled.
    pub(crate) timed_out: AtomicU64,
}

impl Connections {
    /// No connection yet.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Ok(Arc::new(
            Self {
                live: AtomicUsize::new(0),
                refused: AtomicU64::new(0),
                timed_out: AtomicU64::new(0),
            },
            GFP_KERNEL,
        )?)
    }

    /// A place for one more connection, or `None` if `max` are served.
    /// The place is given back when the [`Admission`] is dropped: when the
    /// connection's task ends or is cancelled.
    pub(crate) fn admit(self: &Arc<Self>, max: usize) -> Option<Admission> {
        let admitted = self
            .live
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok();
        if !admitted {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        admitted.then(|| Admission(self.clone()))
    }
}

/// One connection's place among the `max_conns`.
pub(crate) struct Admission(Arc<Connections>);

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::Relaxed);
    }
}
// ANCHOR_END: admit

// ANCHOR: within
/// Runs `fut` to completion, or gives up with `ETIMEDOUT` once it has been
/// waiting for `limit`. The timer is only started if `fut` has to wait at
/// all: a read that finds its bytes already there costs no allocation.
///
/// Dropping `fut` on a timeout cancels it: the socket operation it awaited
/// is simply not resumed (a future does nothing unless polled).
pub(crate) async fn within<F: Future>(limit: Delta, fut: F) -> Result<F::Output> {
    let mut fut = pin!(fut);
    let mut alarm: Option<Sleep> = None;
    poll_fn(|cx| {
        if let Poll::Ready(output) = fut.as_mut().poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let alarm = match &mut alarm {
            Some(alarm) => alarm,
            None => match sleep(limit) {
                Ok(new) => alarm.insert(new),
                Err(e) => return Poll::Ready(Err(e)),
            },
        };
        // Polled after `fut`, so that both wakers are in place when we
        // return `Pending`: whichever comes first wakes the task.
        match Pin::new(alarm).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(ETIMEDOUT)),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
// ANCHOR_END: within

// ANCHOR: limits_from_params
/// The ceilings the module parameters set, each checked against a range
/// that keeps the server useful and its worst case finite.
fn limits_from_params() -> Result<Limits> {
    let max_conns = module_parameters::max_conns.value();
    let max_msize = module_parameters::max_msize.value();
    let max_fids = module_parameters::max_fids.value();
    let max_names = module_parameters::max_names.value();
    let idle_ms = module_parameters::idle_ms.value();
    if !(1..=1024).contains(&max_conns)
        || !(8192..=1024 * 1024).contains(&max_msize)
        || !(16..=65536).contains(&max_fids)
        || !(64..=1 << 20).contains(&max_names)
        || !(100..=600_000).contains(&idle_ms)
    {
        pr_err!(
            "out of range: max_conns 1..=1024, max_msize 8192..=1048576, max_fids 16..=65536, max_names 64..=1048576, idle_ms 100..=600000\n"
        );
        return Err(EINVAL);
    }
    Ok(Limits {
        max_conns: max_conns as usize,
        max_msize,
        max_fids: max_fids as usize,
        max_names: max_names as usize,
        idle: Delta::from_millis(i64::from(idle_ms)),
    })
}
// ANCHOR_END: limits_from_params

// ANCHOR: limited
/// The policy of a server with ceilings: every request still acts for the
/// kernel (stage 33 changes that).
pub(crate) struct Limited {
    limits: Limits,
    connections: Arc<Connections>,
}

impl Policy for Limited {
    type User = ();

    fn new() -> Result<Self> {
        let limits = limits_from_params()?;
        pr_info!(
            "limits: {} connections, msize {}, {} fids, {} walked names and {} KiB of socket buffers each, {} ms idle: at most {} KiB for clients\n",
            limits.max_conns,
            limits.max_msize,
            limits.max_fids,
            limits.max_names,
            SOCKET_COST / 1024,
            limits.idle.as_millis(),
            limits.worst_case_bytes() / 1024
        );
        Ok(Self {
            limits,
            connections: Connections::new()?,
        })
    }

    fn attach(&self, _uname: &[u8], _n_uname: u32) -> Result {
        Ok(())
    }

    fn max_msize(&self) -> u32 {
        self.limits.max_msize
    }

    fn max_fids(&self) -> usize {
        self.limits.max_fids
    }

    fn max_names(&self) -> usize {
        self.limits.max_names
    }

    fn socket_buffer(&self) -> Option<u32> {
        Some(SOCKET_BUFFER)
    }

    fn admit(&self) -> Option<impl Send + 'static> {
        self.connections.admit(self.limits.max_conns)
    }

    fn within<F: Future + Send>(
        &self,
        since: Instant<Monotonic>,
        fut: F,
    ) -> impl Future<Output = Result<F::Output>> + Send {
        // What is left of the client's time (none left: a timer of 0).
        let left = self.limits.idle - since.elapsed();
        within(
            if left.is_negative() {
                Delta::ZERO
            } else {
                left
            },
            fut,
        )
    }

    fn ended(&self, result: Result) {
        match result {
            // Stalled: counted, not logged (a client could flood the log).
            Err(e) if e == ETIMEDOUT => {
                self.connections.timed_out.fetch_add(1, Ordering::Relaxed);
            }
            // A frame that cannot be answered (its size is out of bounds):
            // not logged either.
            Err(e) if e == EPROTO => {}
            result => policy::log_end(result),
        }
    }

    fn stopped(&self) {
        pr_info!(
            "limits: {} connections refused at the limit, {} timed out\n",
            self.connections.refused.load(Ordering::Relaxed),
            self.connections.timed_out.load(Ordering::Relaxed)
        );
    }
}
// ANCHOR_END: limited
