// SPDX-License-Identifier: GPL-2.0

//! Stage 22: a blocking TCP echo server in the kernel, on loopback.
//!
//! The module listens on `127.0.0.1:port` (a module parameter) through the
//! safe socket wrapper of `socket.rs`. One work item accepts connections; each
//! connection gets a work item of its own that sends back whatever it
//! receives. Everything runs on a workqueue the module owns, and unloading
//! stops it all: no work item can run module code after `rmmod` returns.
//!
//! How to run: `make run STEP=22`, then in the VM:
//!
//! ```text
//! echo hello | python3 -c 'import socket,sys
//! s=socket.create_connection(("127.0.0.1",7007))
//! s.sendall(sys.stdin.buffer.read()); s.shutdown(1); print(s.recv(100))'
//! ```

use core::ptr::NonNull;
use kernel::{
    bindings,
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
    workqueue::Queue, //
};

mod socket;

use socket::{
    TcpListener,
    TcpStream, //
};

module! {
    type: RTcpModule,
    name: "rtcp",
    authors: ["rust-kernel-workshop"],
    description: "Stage 22: a blocking TCP echo server on loopback",
    license: "GPL",
    params: {
        port: u16 {
            default: 7007,
            description: "TCP port to listen on at 127.0.0.1 (1..=65535)",
        },
    },
}

/// The address the server listens on: loopback only.
const LOOPBACK: [u8; 4] = [127, 0, 0, 1];
/// Connections the kernel may queue before `accept` takes them.
const BACKLOG: u32 = 64;
/// Bytes each connection receives (and echoes) at a time.
const CHUNK: usize = 16 * 1024;

// ANCHOR: queue
/// A workqueue of the module's own. Destroying it waits until every work
/// item on it has returned, so no work item can outlive the module.
///
/// # Invariants
///
/// `self.0` points at a workqueue from `alloc_workqueue`, destroyed only by
/// `Drop`.
struct OwnedQueue(NonNull<bindings::workqueue_struct>);

// SAFETY: The workqueue API may be called from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: Queueing and flushing work are thread-safe.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// An unbound workqueue named `name`: its work items may block as long
    /// as they like, each on a worker thread of its own.
    fn new(name: &'static CStr) -> Result<Self> {
        // SAFETY: `"%s"` with one C string argument is a valid format for
        // `alloc_workqueue`, and `name` is NUL-terminated and 'static.
        let wq = unsafe {
            bindings::alloc_workqueue_noprof(
                c"%s".as_char_ptr(),
                bindings::wq_flags_WQ_UNBOUND,
                0,
                name.as_char_ptr(),
            )
        };
        // INVARIANT: a non-NULL result is a new workqueue that we own.
        NonNull::new(wq).map(Self).ok_or(ENOMEM)
    }

    /// The queue, to put work on it.
    fn queue(&self) -> &Queue {
        // SAFETY: The workqueue is valid until `Drop` (type invariant), which
        // cannot run while `self` is borrowed.
        unsafe { Queue::from_raw(self.0.as_ptr()) }
    }

    /// Waits until every work item queued so far has finished running.
    fn flush(&self) {
        // SAFETY: The workqueue is valid (type invariant).
        unsafe { bindings::__flush_workqueue(self.0.as_ptr()) };
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: The workqueue is valid and nothing uses it after this (we
        // are its owner, being dropped). It waits for remaining work.
        unsafe { bindings::destroy_workqueue(self.0.as_ptr()) };
    }
}
// ANCHOR_END: queue

// ANCHOR: server
/// The connections, and whether the server is stopping.
struct Conns {
    /// Set once by [`Server::stop`]: no new connection is served after it.
    stopping: bool,
    /// Every connection a work item is serving, to shut them down at stop.
    live: KVec<Arc<TcpStream>>,
    /// Connections served since the module was loaded.
    served: u64,
}

/// The server: shared by the module and every work item.
///
/// It must not be dropped on its own workqueue (`destroy_workqueue` would
/// wait for itself): the module holds one reference until the workqueue is
/// flushed, so the module's reference is always the last one.
#[pin_data]
struct Server {
    /// The listening socket.
    listener: TcpListener,
    /// The live connections and the stop flag, under one lock.
    #[pin]
    conns: Mutex<Conns>,
    /// The workqueue every work item of the module runs on.
    queue: OwnedQueue,
}
// ANCHOR_END: server

impl Server {
    // ANCHOR: accept
    /// The accept loop, one work item: takes connections until the listener
    /// is shut down.
    fn accept_loop(self: Arc<Self>) {
        loop {
            match self.listener.accept() {
                Ok(stream) => {
                    if let Err(e) = Self::spawn_connection(&self, stream) {
                        if e == ESHUTDOWN {
                            break;
                        }
                        pr_warn!("dropped a connection: {:?}\n", e);
                    }
                }
                // The client gave up before we accepted it: not our problem.
                Err(e) if e == ECONNABORTED => continue,
                Err(e) => {
                    // `stop` shut the listener down (`EINVAL`), or the
                    // listener is broken: either way, stop accepting.
                    if !self.conns.lock().stopping {
                        pr_err!("accept failed ({:?}): no longer accepting connections\n", e);
                    }
                    break;
                }
            }
        }
    }

    /// Registers a new connection and queues a work item to serve it; fails
    /// with `ESHUTDOWN` (dropping, so closing, `stream`) once stopping.
    fn spawn_connection(this: &Arc<Self>, stream: TcpStream) -> Result {
        let stream = Arc::new(stream, GFP_KERNEL)?;
        // Checking the flag and queueing under the same lock as `stop` sets
        // it: either `stop` sees this connection in `live` and shuts it down,
        // or we see `stopping` and never queue it.
        let mut conns = this.conns.lock();
        if conns.stopping {
            return Err(ESHUTDOWN);
        }
        conns.live.push(stream.clone(), GFP_KERNEL)?;
        let server = this.clone();
        let work_stream = stream.clone();
        if this
            .queue
            .queue()
            .try_spawn(GFP_KERNEL, move || server.serve(work_stream))
            .is_err()
        {
            conns.live.retain(|c| !Arc::ptr_eq(c, &stream));
            return Err(ENOMEM);
        }
        conns.served += 1;
        Ok(())
    }
    // ANCHOR_END: accept

    // ANCHOR: serve
    /// One connection's work item: echo, then unregister. Dropping the last
    /// `Arc` of the stream releases the socket.
    fn serve(self: Arc<Self>, stream: Arc<TcpStream>) {
        match echo(&stream) {
            Ok(()) => {}
            // The client went away without a goodbye: an everyday event.
            Err(e) if e == ECONNRESET || e == EPIPE => {}
            Err(e) => pr_info!("a connection ended with an error: {:?}\n", e),
        }
        self.conns.lock().live.retain(|c| !Arc::ptr_eq(c, &stream));
    }
    // ANCHOR_END: serve

    // ANCHOR: stop
    /// Stops everything and returns once no work item is left: sets the
    /// flag, wakes every blocked `accept`, `recv` and `send` by shutting the
    /// sockets down, then waits for the work items to return.
    fn stop(&self) {
        let mut conns = self.conns.lock();
        conns.stopping = true;
        for stream in conns.live.iter() {
            // An error means the stream is closed already: nothing to wake.
            let _ = stream.shutdown();
        }
        let served = conns.served;
        drop(conns);
        let _ = self.listener.shutdown();
        // Every work item was queued before `stopping` was set, and each one
        // now returns promptly: its socket is shut down.
        self.queue.flush();
        pr_info!("stopped after {} connections\n", served);
    }
    // ANCHOR_END: stop
}

// ANCHOR: echo
/// Sends back everything received on `stream`, until the peer closes its end.
fn echo(stream: &TcpStream) -> Result {
    // On the heap: kernel stacks are small.
    let mut buf = KVec::from_elem(0u8, CHUNK, GFP_KERNEL)?;
    loop {
        let n = stream.recv(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        stream.send_all(buf.get(..n).ok_or(EINVAL)?)?;
    }
}
// ANCHOR_END: echo

// ANCHOR: module
/// The module: owns the server until unload.
struct RTcpModule {
    /// The server, shared with the work items.
    server: Arc<Server>,
}

impl kernel::Module for RTcpModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = module_parameters::port.value();
        if port == 0 {
            pr_err!("port=0 refused: pick a port between 1 and 65535\n");
            return Err(EINVAL);
        }
        let listener = TcpListener::listen(LOOPBACK, port, BACKLOG).inspect_err(|&e| {
            if e == EADDRINUSE {
                pr_err!(
                    "port {} is already in use (EADDRINUSE): pick another with port=N\n",
                    port
                );
            } else {
                pr_err!("cannot listen on 127.0.0.1:{}: {:?}\n", port, e);
            }
        })?;
        let server = Arc::pin_init(
            try_pin_init!(Server {
                listener,
                conns <- new_mutex!(Conns {
                    stopping: false,
                    live: KVec::new(),
                    served: 0,
                }),
                queue: OwnedQueue::new(c"rtcp")?,
            }),
            GFP_KERNEL,
        )?;
        let accepting = server.clone();
        server
            .queue
            .queue()
            .try_spawn(GFP_KERNEL, move || accepting.accept_loop())?;
        pr_info!("echo server listening on 127.0.0.1:{}\n", port);
        Ok(Self { server })
    }
}

impl Drop for RTcpModule {
    fn drop(&mut self) {
        // After `stop`, no work item is left: ours is the last reference, and
        // dropping it releases the listener and destroys the (empty) queue.
        self.server.stop();
    }
}
// ANCHOR_END: module
