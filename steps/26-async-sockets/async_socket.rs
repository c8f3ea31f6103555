// SPDX-License-Identifier: GPL-2.0

//! Async sockets: the non-blocking calls of `socket.rs`, retried whenever the
//! reactor (stage 25's `reactor.rs`) says the socket became ready.
//!
//! Each operation is the same loop as stage 25's `AsyncListener::accept`:
//! try; on `EAGAIN`, await readiness; try again. One task at a time may use
//! an [`AsyncStream`] (its waiter keeps one waker). No `unsafe` here: the
//! reactor's [`Watched`] owns each socket together with its wait-queue
//! entry.

#![forbid(unsafe_code)]

use crate::{
    reactor::Watched,
    socket::TcpStream, //
};
use kernel::{
    bindings,
    prelude::*, //
};

// ANCHOR: stream
/// A connected socket whose reads and writes are futures.
pub(crate) struct AsyncStream {
    stream: Pin<KBox<Watched<TcpStream>>>,
}

impl AsyncStream {
    /// Takes over a connection the reactor watches (as
    /// `AsyncListener::accept` returns it).
    pub(crate) fn new(stream: Pin<KBox<Watched<TcpStream>>>) -> Self {
        Self { stream }
    }

    // ANCHOR: read
    /// Reads into `buf` once something has arrived; 0 means end of stream.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> Result<usize> {
        // TODO (exercise 1): Receive into `buf`; when nothing has come yet,
        // the task waits (awaits), never the worker. The contract:
        // - the result is the first receive that does not block: a byte
        //   count, 0 for the end of the stream, or an error;
        // - a receive that would block (`EAGAIN`) is no result: wait until
        //   the socket has data or its peer has closed its end (POLLRDHUP:
        //   a half-closed socket must wake its reader), then try again.
        // You have: `self.stream.get().try_recv` (non-blocking),
        // `self.stream.ready(mask)` (a future), `bindings::POLLIN` and
        // `bindings::POLLRDHUP`; `AsyncListener::accept` (stage 25) waits
        // the same way.
        // Tests: "a client gets its echo" (the stage stops there while it
        // fails) and the echo checks after it: "one client: 15 sizes ...", "8
        // concurrent clients, each 15 sizes", "256 connections open at once on
        // 2 workers, 20 messages each", "a slow reader, a half-closed socket
        // and idle clients stall nobody", ...
        let _ = (buf, &self.stream, TcpStream::try_recv, bindings::POLLIN);
        Err(ENOSYS)
    }

    /// Writes all of `buf`, waiting for buffer space as often as it takes.
    pub(crate) async fn write_all(&self, buf: &[u8]) -> Result {
        // TODO (exercise 2): Send every byte of `buf`, waiting for buffer
        // space as often as it takes; the task waits, never the worker. The
        // contract:
        // - a send may take part of `buf`: the rest goes next;
        // - a send that takes 0 bytes of a non-empty buffer means the
        //   connection is gone: EPIPE (else this loops for ever);
        // - a full send buffer (`EAGAIN`) is no error: wait until the socket
        //   is writable (POLLOUT), then go on;
        // - any other error is the result; no index may panic.
        // You have: `self.stream.get().try_send` (non-blocking),
        // `self.stream.ready(mask)`, `bindings::POLLOUT`, `<[u8]>::get`.
        // Tests: "a client gets its echo" (the stage stops there while it
        // fails) and the echo checks after it: "one client: 15 sizes from 0
        // bytes to 1 MiB, partial sends and receives", "a slow reader, a
        // half-closed socket and idle clients stall nobody", ...
        let _ = (buf, &self.stream, TcpStream::try_send);
        Err(ENOSYS)
    }
    // ANCHOR_END: read
}
// ANCHOR_END: stream
