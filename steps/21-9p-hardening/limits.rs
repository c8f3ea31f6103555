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
//! Check your work with `make check STEP=21`.

use crate::sleep::{
    sleep,
    Sleep, //
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
    time::Delta, //
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
    /// How long a connection may hold half a frame (or a reply the client
    /// does not read) before it is closed.
    pub(crate) idle: Delta,
}

/// What the server keeps for one fid, at most: the fid and its node (tens
/// of bytes each, in the red-black tree and an `Arc`), the node's path
/// handle and an open file (a `struct file` each, about 256 bytes), with
/// room to spare.
pub(crate) const FID_COST: usize = 1024;
/// What a connection costs besides its buffers and fids: its task, socket
/// and waiter, the session, and the first 8 KiB buffers, rounded up.
pub(crate) const CONN_COST: usize = 32 * 1024;

impl Limits {
    /// The most memory the server can hold for its clients: per
    /// connection, a receive buffer, a reply buffer and a data buffer of
    /// `msize` bytes each, its fids, and its fixed cost.
    pub(crate) fn worst_case_bytes(&self) -> usize {
        let per_conn = 3 * self.max_msize as usize + self.max_fids * FID_COST + CONN_COST;
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
        // TODO (exercise 3): Add one to `live` only if it is below `max`, in
        // one atomic step (`fetch_update`: two tasks must not both take the
        // last place); then `Some(Admission(self.clone()))`. At the limit,
        // count the refusal in `refused` and return `None`. (As it is, every
        // connection is admitted and never counted.)
        // Tests: "connection N+1 (over max_conns=N) is closed at once" and "the
        // server counted the refused and the stalled connections".
        let _ = max;
        Some(Admission(self.clone()))
    }
}

/// One connection's place among the `max_conns`.
pub(crate) struct Admission(Arc<Connections>);

impl Admission {
    /// The server's counts.
    pub(crate) fn connections(&self) -> &Connections {
        &self.0
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        // TODO (exercise 3): Give the place back: one less in `live`.
        // Tests: "then N connections at once are served again" (without it,
        // each connection keeps its place).
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
    // TODO (exercise 3): Race `fut` against a timer, in one `poll_fn` closure:
    // - pin `fut` on the stack (`pin!`) and keep an `Option<Sleep>`, `None`
    //   until `fut` first returns `Pending`;
    // - in the closure: poll `fut`; `Ready(output)` is `Ready(Ok(output))`;
    //   otherwise start the timer if there is none yet (`sleep(limit)`,
    //   whose error is `Ready(Err(e))`), poll it (`Pin::new(alarm)`), and
    //   turn its `Ready(())` into `Ready(Err(ETIMEDOUT))`.
    // (As it is, nothing ever times out.)
    // Tests: "the N stalled connections are closed after idle_ms=...", "and
    // their memory is back" and "the server counted the refused and the stalled
    // connections".
    let _ = limit;
    Ok(fut.await)
}
// ANCHOR_END: within
