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
//! Stage 25 makes every call non-blocking: `try_accept`, `try_recv` and
//! `try_send` fail with `EAGAIN` instead of waiting, and [`Socket`] tells
//! the reactor (`reactor.rs`) what it needs to wait instead: the socket's
//! wait queue and its readiness mask.
//!
//! Part of the kernel shim (`solutions/lib/kshim/`), from stage 25 on. TODO:
//! replace with a `kernel::net` socket abstraction once there is one
//! upstream (7.3's `kernel::net` has PHY drivers and netlink only).

use core::{
    ffi::{
        c_int,
        c_uint,
        c_void, //
    },
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
    /// `SO_RCVBUF` for a kernel socket (`net/core/sock.c`, exported, declared
    /// in `include/net/sock.h`): the receive queue's size, doubled for the
    /// kernel's bookkeeping and locked (no autotuning).
    fn sock_set_rcvbuf(sk: *mut bindings::sock, val: c_int);
    /// `setsockopt(2)` for a kernel socket (`net/core/sock.c`, exported,
    /// declared in `include/net/sock.h`); 7.3 has no `sock_set_sndbuf`.
    /// `sock` is a `struct socket *`, typed `c_void` here: rustc deems
    /// bindgen's `socket` not FFI-safe (a zero-length array member).
    fn sock_setsockopt(
        sock: *mut c_void,
        level: c_int,
        op: c_int,
        optval: bindings::sockptr_t,
        optlen: c_uint,
    ) -> c_int;
}
// ANCHOR_END: extern

// ANCHOR: socket
/// One kernel socket, owned: dropping it calls `sock_release`.
///
/// # Invariants
///
/// `self.0` points at a valid `struct socket` that this value owns: nothing
/// else releases it, and it stays valid until `Drop` releases it.
pub(crate) struct Socket(NonNull<bindings::socket>);

// SAFETY: A `struct socket` is not tied to the thread that created it: any
// thread may use and release it.
unsafe impl Send for Socket {}
// SAFETY: The socket calls used through `&Socket` (`kernel_accept`,
// `kernel_sendmsg`, `kernel_recvmsg`, the `poll` operation) take the
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

    // ANCHOR: readiness
    /// The wait queue the kernel wakes whenever the socket's state changes
    /// (data arrived, buffer space freed, a connection to accept, a shutdown
    /// or a reset): the queue `poll` and `epoll` wait on. It lives as long
    /// as the socket.
    pub(crate) fn wait_queue(&self) -> *mut bindings::wait_queue_head {
        // SAFETY: The socket is valid (type invariant); this only computes
        // the address of a field.
        unsafe { &raw mut (*self.as_ptr()).wq.wait }
    }

    /// What the socket is ready for now: a mask of `POLLIN`, `POLLOUT`,
    /// `POLLHUP`, `POLLERR`, ... as `poll(2)` would report it.
    pub(crate) fn readiness(&self) -> u32 {
        // SAFETY: The socket is valid (type invariant), and so is its `ops`
        // table, which `sock_create_kern`/`kernel_accept` set.
        let ops = unsafe { &*(*self.as_ptr()).ops };
        match ops.poll {
            // SAFETY: The socket is valid. With no file and no poll table,
            // TCP's `poll` (`tcp_poll`) only computes the mask: it neither
            // sleeps nor registers anything.
            Some(poll) => unsafe {
                poll(core::ptr::null_mut(), self.as_ptr(), core::ptr::null_mut())
            },
            // No `poll`: say "error", so that the caller tries the operation
            // and sees its error instead of waiting forever.
            None => bindings::POLLERR,
        }
    }
    // ANCHOR_END: readiness
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
/// `sock` is bound to an address and in the listening state.
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

    /// Takes a connection if one is waiting; fails with `EAGAIN` if none is.
    pub(crate) fn try_accept(&self) -> Result<TcpStream> {
        let mut raw: *mut bindings::socket = core::ptr::null_mut();
        // SAFETY: The socket is valid and listening (type invariants); `raw` is
        // a valid place for the result. On failure `kernel_accept` releases
        // the socket it allocated itself and leaves nothing for us to free.
        to_result(unsafe {
            bindings::kernel_accept(self.sock.as_ptr(), &mut raw, bindings::O_NONBLOCK as c_int)
        })?;
        let raw = NonNull::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: `kernel_accept` succeeded: `raw` is a new, connected
        // socket that only we hold.
        Ok(TcpStream { sock: Socket(raw) })
    }

    /// The socket, for the reactor.
    pub(crate) fn socket(&self) -> &Socket {
        &self.sock
    }
}
// ANCHOR_END: listener

// ANCHOR: stream
/// A connected TCP socket.
///
/// `try_recv` and `try_send` take `&self`, like the system calls on a
/// shared file descriptor.
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
    // ANCHOR: limit_buffers
    /// Caps what the kernel queues for this connection: `bytes` of data
    /// each way, which the kernel doubles for its bookkeeping (`sk_rcvbuf`
    /// and `sk_sndbuf` are then `2 * bytes`, in `truesize`), and locks both
    /// sizes: TCP's autotuning would otherwise let one connection's queues
    /// grow to `tcp_rmem[2]` and `tcp_wmem[2]` (6 and 4 MiB by default). The
    /// send side is also capped by `net.core.wmem_max`, as `setsockopt(2)`'s
    /// `SO_SNDBUF` is: never more than asked.
    pub(crate) fn limit_buffers(&self, bytes: u32) -> Result {
        let val = c_int::try_from(bytes)?;
        let sock = self.sock.as_ptr();
        // SAFETY: The socket is valid (type invariant) and connected, so its
        // `sk` is valid; `sock_set_rcvbuf` takes the socket's lock itself.
        unsafe { sock_set_rcvbuf((*sock).sk, val) };
        // `KERNEL_SOCKPTR(&val)`: an option value in kernel memory.
        let mut optval = bindings::sockptr_t::default();
        optval.__bindgen_anon_1.kernel = (&raw const val).cast_mut().cast();
        optval.set_is_kernel(true);
        // SAFETY: The socket is valid (type invariant); `optval` points at
        // `val`, a `c_int` that lives for the call and that the kernel only
        // reads (`copy_from_sockptr`), and `optlen` is its size.
        to_result(unsafe {
            sock_setsockopt(
                sock.cast(),
                bindings::SOL_SOCKET as c_int,
                bindings::SO_SNDBUF as c_int,
                optval,
                size_of::<c_int>() as c_uint,
            )
        })
    }
    // ANCHOR_END: limit_buffers

    // ANCHOR: recv
    /// Receives into `buf` what has arrived; fails with `EAGAIN` if nothing
    /// has.
    ///
    /// Returns the number of bytes received, at most `buf.len()`; 0 means
    /// the peer closed its end (or the stream was shut down).
    pub(crate) fn try_recv(&self, buf: &mut [u8]) -> Result<usize> {
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
        let ret = unsafe {
            bindings::kernel_recvmsg(
                self.sock.as_ptr(),
                &mut msg,
                &mut vec,
                1,
                len,
                bindings::MSG_DONTWAIT as c_int,
            )
        };
        len_or_error(ret)
    }
    // ANCHOR_END: recv

    // ANCHOR: send
    /// Sends from `buf` what fits in the socket's buffer now; returns how
    /// many bytes were sent, which may be fewer than `buf.len()`, or fails
    /// with `EAGAIN` if none fit.
    pub(crate) fn try_send(&self, buf: &[u8]) -> Result<usize> {
        let len = buf.len();
        let mut msg = bindings::msghdr {
            // A kernel thread gets no SIGPIPE, but say it anyway: a peer that
            // went away is an `EPIPE` error, nothing else.
            msg_flags: bindings::MSG_NOSIGNAL | bindings::MSG_DONTWAIT,
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

    // ANCHOR_END: send

    /// The socket, for the reactor.
    pub(crate) fn socket(&self) -> &Socket {
        &self.sock
    }
}
// ANCHOR_END: stream
