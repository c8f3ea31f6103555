// SPDX-License-Identifier: GPL-2.0

//! Async sockets: the non-blocking calls of `socket.rs`, retried whenever the
//! reactor (`reactor.rs`) says the socket became ready.
//!
//! Each operation is the same loop: try; on `EAGAIN`, await readiness; try
//! again. One task at a time may use an [`AsyncStream`] (its waiter keeps one
//! waker).

use crate::{
    reactor::SockWaiter,
    socket::{
        TcpListener,
        TcpStream, //
    },
};
use kernel::{
    bindings,
    prelude::*, //
};

// ANCHOR: listener
/// A listening socket whose `accept` is a future.
pub(crate) struct AsyncListener {
    // Declared first, so dropped first: it must leave the socket's wait
    // queue before the socket is released (`SockWaiter::new`'s contract).
    waiter: Pin<KBox<SockWaiter>>,
    listener: TcpListener,
}

impl AsyncListener {
    /// Hooks `listener` up to the reactor.
    pub(crate) fn new(listener: TcpListener) -> Result<Self> {
        // SAFETY: The waiter is dropped before the socket: it is declared
        // before `listener` in `Self`, and we move both into `Self` here.
        let waiter = KBox::pin_init(unsafe { SockWaiter::new(listener.socket()) }, GFP_KERNEL)?;
        Ok(Self { waiter, listener })
    }

    /// Waits for a connection and returns it.
    pub(crate) async fn accept(&self) -> Result<AsyncStream> {
        loop {
            match self.listener.try_accept() {
                Err(e) if e == EAGAIN => {}
                result => return AsyncStream::new(result?),
            }
            self.waiter
                .ready(self.listener.socket(), bindings::POLLIN)
                .await;
        }
    }
}
// ANCHOR_END: listener

// ANCHOR: stream
/// A connected socket whose reads and writes are futures.
pub(crate) struct AsyncStream {
    // First, so dropped first (see `AsyncListener`).
    waiter: Pin<KBox<SockWaiter>>,
    stream: TcpStream,
}

impl AsyncStream {
    /// Hooks `stream` up to the reactor.
    fn new(stream: TcpStream) -> Result<Self> {
        // SAFETY: As in `AsyncListener::new`: the waiter is dropped first.
        let waiter = KBox::pin_init(unsafe { SockWaiter::new(stream.socket()) }, GFP_KERNEL)?;
        Ok(Self { waiter, stream })
    }

    // ANCHOR: read
    /// Reads into `buf` once something has arrived; 0 means end of stream.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> Result<usize> {
        // TODO: Loop like `AsyncListener::accept`: `self.stream.try_recv(buf)`;
        // on `EAGAIN` await `self.waiter.ready(self.stream.socket(), mask)`
        // with `mask` = `bindings::POLLIN | bindings::POLLRDHUP` and try
        // again; anything else (bytes, 0 for the end, an error) is the
        // result.
        let _ = (buf, &self.waiter, TcpStream::try_recv);
        Err(ENOSYS)
    }

    /// Writes all of `buf`, waiting for buffer space as often as it takes.
    pub(crate) async fn write_all(&self, buf: &[u8]) -> Result {
        // TODO: Until `buf` is empty: `self.stream.try_send(buf)`:
        // - `Ok(0)` on a non-empty buffer: the connection is gone, `EPIPE`;
        // - `Ok(sent)`: go on with `buf = buf.get(sent..).ok_or(EINVAL)?;`
        //   (make the parameter `mut buf`);
        // - `EAGAIN`: the send buffer is full: await
        //   `self.waiter.ready(self.stream.socket(), bindings::POLLOUT)`;
        // - any other error is the result.
        let _ = (buf, &self.stream, TcpStream::try_send);
        Err(ENOSYS)
    }
    // ANCHOR_END: read
}
// ANCHOR_END: stream
