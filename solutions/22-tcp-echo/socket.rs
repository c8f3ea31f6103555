// SPDX-License-Identifier: GPL-2.0

//! A safe wrapper around kernel TCP sockets: [`TcpListener`] and [`TcpStream`].
//!
//! The kernel crate has no socket abstraction, so this file builds one over
//! the C functions of `include/linux/net.h` (`sock_create_kern`,
//! `kernel_bind`, `kernel_listen`, `kernel_accept`, `kernel_sendmsg`,
//! `kernel_recvmsg`, `kernel_sock_shutdown`, `sock_release`). Ownership is in
//! the types: each value owns one `struct socket`, and dropping it releases
//! the socket. Errors come back as [`Result`]; nothing here can panic.

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
        let sock = Socket::new_tcp()?;
        // SAFETY: The socket is valid (type invariant) and `sock_create_kern`
        // gave it its `struct sock`, so `sk` is valid too.
        unsafe { sock_set_reuseaddr((*sock.as_ptr()).sk) };

        // The address and the port are in network byte order: `addr` is
        // already in that order as bytes, the port is converted.
        let mut sin = bindings::sockaddr_in {
            sin_family: bindings::AF_INET as bindings::__kernel_sa_family_t,
            sin_port: port.to_be(),
            sin_addr: bindings::in_addr {
                s_addr: u32::from_ne_bytes(addr),
            },
            ..Default::default()
        };
        // SAFETY: The socket is valid; `sin` is a valid `sockaddr_in` that
        // lives for the call, and its size is the length passed with it.
        to_result(unsafe {
            bindings::kernel_bind(
                sock.as_ptr(),
                (&raw mut sin).cast(),
                size_of::<bindings::sockaddr_in>() as c_int,
            )
        })?;
        let backlog = c_int::try_from(backlog)?;
        // SAFETY: The socket is valid and bound.
        to_result(unsafe { bindings::kernel_listen(sock.as_ptr(), backlog) })?;
        // INVARIANT: bound and listening.
        Ok(Self { sock })
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
        let len = buf.len();
        let mut msg = bindings::msghdr::default();
        let mut vec = bindings::kvec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        // SAFETY: The socket is valid (type invariant). `vec` describes `buf`,
        // which is writable for `len` bytes and borrowed mutably for the whole
        // call; `msg` and `vec` live until the call returns, and the kernel
        // keeps no pointer to them afterwards.
        let ret =
            unsafe { bindings::kernel_recvmsg(self.sock.as_ptr(), &mut msg, &mut vec, 1, len, 0) };
        len_or_error(ret)
    }
    // ANCHOR_END: recv

    // ANCHOR: send
    /// Sends from `buf`; returns how many bytes were sent, which may be
    /// fewer than `buf.len()`.
    pub(crate) fn send(&self, buf: &[u8]) -> Result<usize> {
        let len = buf.len();
        let mut msg = bindings::msghdr {
            // A kernel thread gets no SIGPIPE, but say it anyway: a peer that
            // went away is an `EPIPE` error, nothing else.
            msg_flags: bindings::MSG_NOSIGNAL,
            ..Default::default()
        };
        let mut vec = bindings::kvec {
            // `kernel_sendmsg` only reads through the pointer (the `kvec`
            // type has no `const` variant).
            iov_base: buf.as_ptr().cast_mut().cast(),
            iov_len: len,
        };
        // SAFETY: The socket is valid (type invariant). `vec` describes `buf`,
        // readable for `len` bytes and borrowed for the whole call; the
        // kernel does not write to it. `msg` and `vec` outlive the call.
        let ret =
            unsafe { bindings::kernel_sendmsg(self.sock.as_ptr(), &mut msg, &mut vec, 1, len) };
        len_or_error(ret)
    }

    /// Sends all of `buf`, in as many `send`s as it takes.
    pub(crate) fn send_all(&self, mut buf: &[u8]) -> Result {
        while !buf.is_empty() {
            let sent = self.send(buf)?;
            if sent == 0 {
                // No progress on a non-empty buffer: the connection is gone.
                return Err(EPIPE);
            }
            buf = buf.get(sent..).ok_or(EINVAL)?;
        }
        Ok(())
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
