// SPDX-License-Identifier: GPL-2.0

//! A safe wrapper around kernel TCP sockets: [`TcpListener`] and [`TcpStream`].
//!
//! The kernel crate has no socket abstraction, so this file builds one over
//! the C functions of `include/linux/net.h` (`sock_create_kern`,
//! `kernel_bind`, `kernel_listen`, `kernel_accept`, `kernel_sendmsg`,
//! `kernel_recvmsg`, `kernel_sock_shutdown`, `sock_release`). Ownership is in
//! the types: each value owns one `struct socket`, and dropping it releases
//! the socket. Errors come back as [`Result`]; nothing here can panic.
//!
//! Exercises: `TcpListener::listen`, then `TcpStream::recv`, `send` and
//! `send_all`. Check your work with `make check STEP=22`.

use core::{
    ffi::c_int,
    ptr::NonNull, //
};
use kernel::{
    bindings,
    error::to_result,
    prelude::*, //
};

// ANCHOR: extern
extern "C" {
    /// `SO_REUSEADDR` for a kernel socket (`net/core/sock.c`). It is exported,
    /// but `include/net/sock.h` is not in the kernel crate's bindings, so the
    /// prototype is declared here by hand.
    fn sock_set_reuseaddr(sk: *mut bindings::sock);
}
// ANCHOR_END: extern

// ANCHOR: socket
/// One kernel socket, owned: dropping it calls `sock_release`.
///
/// # Invariants
///
/// `self.0` points at a valid `struct socket` that this value owns: nothing
/// else releases it, and it stays valid until `Drop` releases it.
struct Socket(NonNull<bindings::socket>);

// SAFETY: A `struct socket` is not tied to the thread that created it: any
// thread may use and release it.
unsafe impl Send for Socket {}
// SAFETY: The socket calls used through `&Socket` (`kernel_accept`,
// `kernel_sendmsg`, `kernel_recvmsg`, `kernel_sock_shutdown`) take the
// socket's own lock (`lock_sock`), so they may run concurrently from several
// threads, as the same system calls on one file descriptor may.
unsafe impl Sync for Socket {}

impl Socket {
    /// A new, unconnected TCP/IPv4 socket in the initial network namespace.
    fn new_tcp() -> Result<Self> {
        let mut raw: *mut bindings::socket = core::ptr::null_mut();
        // SAFETY: `init_net` is the initial network namespace, which lives as
        // long as the kernel; `raw` is a valid place for the result.
        to_result(unsafe {
            bindings::sock_create_kern(
                &raw mut bindings::init_net,
                bindings::AF_INET as c_int,
                bindings::sock_type_SOCK_STREAM as c_int,
                bindings::IPPROTO_TCP as c_int,
                &mut raw,
            )
        })?;
        // INVARIANT: `sock_create_kern` succeeded, so `raw` is a new socket
        // that nobody else holds.
        NonNull::new(raw).map(Self).ok_or(ENOMEM)
    }

    /// The raw pointer, for the C calls.
    fn as_ptr(&self) -> *mut bindings::socket {
        self.0.as_ptr()
    }

    /// Shuts down both directions. Threads blocked in `accept`, `recv` or
    /// `send` on this socket wake up: `accept` fails with `EINVAL`, `recv`
    /// returns 0 (end of stream), `send` fails with `EPIPE`.
    fn shutdown(&self) -> Result {
        // SAFETY: By the type invariant the socket is valid; shutting down is
        // allowed concurrently with the other calls (it takes the socket lock).
        to_result(unsafe {
            bindings::kernel_sock_shutdown(self.as_ptr(), bindings::sock_shutdown_cmd_SHUT_RDWR)
        })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the socket, and `drop` has the
        // last reference to `self`: no other call on it can be running.
        unsafe { bindings::sock_release(self.as_ptr()) };
    }
}
// ANCHOR_END: socket

/// Converts the return value of a C call that returns a byte count or a
/// negative errno.
fn len_or_error(ret: c_int) -> Result<usize> {
    if ret < 0 {
        Err(Error::from_errno(ret))
    } else {
        // A non-negative `c_int` always fits in `usize`.
        Ok(ret as usize)
    }
}

// ANCHOR: listener
/// A TCP socket listening for connections.
///
/// # Invariants
///
/// `sock` is bound to an address and in the listening state (until
/// [`TcpListener::shutdown`] closes it for good).
pub(crate) struct TcpListener {
    /// The listening socket.
    sock: Socket,
}

impl TcpListener {
    // ANCHOR: listen
    /// Listens on IPv4 address `addr` (e.g. `[127, 0, 0, 1]`), TCP `port`,
    /// with a queue of up to `backlog` connections not accepted yet.
    ///
    /// Fails with `EADDRINUSE` when another socket listens on that port.
    pub(crate) fn listen(addr: [u8; 4], port: u16, backlog: u32) -> Result<Self> {
        // TODO (exercise 1): Make a TCP socket that listens on `addr`,
        // `port`, with a queue of up to `backlog` connections, and return
        // it. The contract:
        // - each failure returns the kernel's own error, unchanged (a port
        //   another socket listens on: EADDRINUSE, which `init` reports),
        //   and leaks nothing (a `Socket` is released when dropped);
        // - a reloaded module can listen on the port at once, while old
        //   connections linger in TIME_WAIT (SO_REUSEADDR);
        // - the address is IPv4 (`AF_INET`): the port in network byte
        //   order, `addr`'s four bytes as they are (already in network
        //   order), the rest of the `sockaddr_in` zero;
        // - a `backlog` beyond a `c_int` is an error, never a wrapped value;
        // - an `// INVARIANT:` comment says why the result keeps
        //   `TcpListener`'s invariant; each `unsafe` block has its
        //   `// SAFETY:`.
        // You have: `Socket::new_tcp` and `Socket::as_ptr`;
        // `sock_set_reuseaddr` (top of this file), on the socket's `struct
        // sock`, `(*sock.as_ptr()).sk`; `bindings::sockaddr_in`,
        // `bindings::kernel_bind` and `bindings::kernel_listen` (0 or a
        // negative errno: `to_result`); `c_int`.
        // Tests: "insmod rtcp port=7007" (the stage stops there while it fails)
        // and every check after it; "insmod on a port another program listens
        // on fails with EADDRINUSE" and "and the kernel log says why, naming
        // the port" need `kernel_bind`'s error unchanged.
        let _ = (
            addr,
            port,
            backlog,
            Socket::new_tcp,
            sock_set_reuseaddr as unsafe extern "C" fn(_),
        );
        Err(ENOSYS)
    }
    // ANCHOR_END: listen

    // ANCHOR: accept
    /// Waits for a connection and returns it.
    ///
    /// Fails with `EINVAL` once [`TcpListener::shutdown`] has been called
    /// (also if it is called while this waits).
    pub(crate) fn accept(&self) -> Result<TcpStream> {
        let mut raw: *mut bindings::socket = core::ptr::null_mut();
        // SAFETY: The socket is valid and listening (type invariants); `raw` is
        // a valid place for the result. On failure `kernel_accept` releases
        // the socket it allocated itself and leaves nothing for us to free.
        to_result(unsafe { bindings::kernel_accept(self.sock.as_ptr(), &mut raw, 0) })?;
        let raw = NonNull::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: `kernel_accept` succeeded: `raw` is a new, connected
        // socket that only we hold.
        Ok(TcpStream { sock: Socket(raw) })
    }

    /// Stops listening for good: the pending and every future `accept` fail.
    pub(crate) fn shutdown(&self) -> Result {
        self.sock.shutdown()
    }
    // ANCHOR_END: accept
}
// ANCHOR_END: listener

// ANCHOR: stream
/// A connected TCP socket.
///
/// `recv` and `send` take `&self`, like the system calls on a shared file
/// descriptor: one thread may block in `recv` while another calls
/// [`TcpStream::shutdown`] to wake it up.
///
/// # Invariants
///
/// `sock` is a socket returned by `kernel_accept`: connected (or, after a
/// shutdown or a reset by the peer, closed, where every call fails or
/// returns 0 at once).
pub(crate) struct TcpStream {
    /// The connected socket.
    sock: Socket,
}

impl TcpStream {
    // ANCHOR: recv
    /// Receives into `buf`, waiting until at least one byte has arrived.
    ///
    /// Returns the number of bytes received, at most `buf.len()`; 0 means
    /// the peer closed its end (or the stream was shut down).
    pub(crate) fn recv(&self, buf: &mut [u8]) -> Result<usize> {
        // TODO (exercise 2): Receive into `buf`, waiting until at least one
        // byte has come, and return how many came. The contract:
        // - at most `buf.len()` bytes, straight into `buf` (the kernel is
        //   told no more room than `buf` has);
        // - 0 is the end of the stream: the peer closed its end, or the
        //   stream was shut down;
        // - the kernel returns a byte count or a negative errno: the errno
        //   is the error (`len_or_error`);
        // - the `// SAFETY:` comment says why the kernel may write to `buf`
        //   during the call and keeps no pointer after it.
        // You have: `bindings::kernel_recvmsg(sock, msg, vec, num, len,
        // flags)`, `bindings::msghdr` (empty: `default()`), `bindings::kvec`
        // (`iov_base`, `iov_len`), `len_or_error`.
        // Tests: the echo checks: "one client: 15 sizes from 0 bytes to 1 MiB,
        // partial sends and receives", "8 concurrent clients, each 15 sizes",
        // "clients that disconnect abruptly do not disturb the server", "6
        // clients connected (one blocked mid-transfer)" and "loaded on another
        // port, it echoes there".
        let _ = (buf, &self.sock, len_or_error);
        Err(ENOSYS)
    }
    // ANCHOR_END: recv

    // ANCHOR: send
    /// Sends from `buf`; returns how many bytes were sent, which may be
    /// fewer than `buf.len()`.
    pub(crate) fn send(&self, buf: &[u8]) -> Result<usize> {
        // TODO (exercise 2): The mirror image of `recv`: send from `buf`,
        // and return how many bytes went, maybe fewer than `buf.len()`. A
        // peer that went away is an EPIPE error, nothing else (no SIGPIPE:
        // `bindings::MSG_NOSIGNAL`). `kvec` has no const variant, so its
        // pointer to the shared `buf` is a `*mut`: the `// SAFETY:` comment
        // says why that is sound (the kernel only reads through it).
        // You have: `bindings::kernel_sendmsg(sock, msg, vec, num, len)`
        // (flags in `msg.msg_flags`), what `recv` uses.
        // Tests: the echo checks ("one client: 15 sizes ...", "8 concurrent
        // clients, each 15 sizes", "clients that disconnect abruptly ...", "6
        // clients connected ...", "loaded on another port, it echoes there").
        let _ = buf;
        Err(ENOSYS)
    }

    /// Sends all of `buf`, in as many `send`s as it takes.
    pub(crate) fn send_all(&self, buf: &[u8]) -> Result {
        // TODO (exercise 2): Call `send` until every byte of `buf` is sent,
        // advancing past what each call sent. A `send` that sends 0 bytes of a
        // non-empty buffer means the connection is gone: fail with EPIPE, or
        // this loops forever. Index with `buf.get(sent..)`, not `buf[sent..]`.
        // Tests: the echo checks ("one client: 15 sizes from 0 bytes to 1 MiB,
        // partial sends and receives" above all, "8 concurrent clients, each 15
        // sizes", "6 clients connected ...", "loaded on another port, it echoes
        // there").
        let _ = (buf, Self::send);
        Err(ENOSYS)
    }
    // ANCHOR_END: send

    /// Shuts down both directions: a `recv` waiting in another thread
    /// returns 0, a `send` fails with `EPIPE`, and the peer sees the end of
    /// the stream.
    pub(crate) fn shutdown(&self) -> Result {
        self.sock.shutdown()
    }
}
// ANCHOR_END: stream
