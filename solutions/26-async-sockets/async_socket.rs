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
        loop {
            match self.stream.get().try_recv(buf) {
                Err(e) if e == EAGAIN => {}
                result => return result,
            }
            self.stream
                .ready(bindings::POLLIN | bindings::POLLRDHUP)
                .await;
        }
    }

    /// Writes all of `buf`, waiting for buffer space as often as it takes.
    pub(crate) async fn write_all(&self, mut buf: &[u8]) -> Result {
        while !buf.is_empty() {
            match self.stream.get().try_send(buf) {
                Ok(0) => return Err(EPIPE),
                Ok(sent) => buf = buf.get(sent..).ok_or(EINVAL)?,
                Err(e) if e == EAGAIN => self.stream.ready(bindings::POLLOUT).await,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    // ANCHOR_END: read
}
// ANCHOR_END: stream
