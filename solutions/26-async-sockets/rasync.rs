// SPDX-License-Identifier: GPL-2.0

//! Stage 26: an async TCP echo server in the kernel, on loopback.
//!
//! Stage 22's server, on stage 23's executor and stage 25's reactor: every
//! connection is a task, not a thread. A task that waits for data gives its
//! worker back; the reactor (`reactor.rs`) wakes it when its socket becomes
//! ready. A handful of workers serve hundreds of connections. Unloading
//! cancels every task: dropping a task's future closes its socket.
//!
//! How to run: `make run STEP=26`, then in the VM:
//!
//! ```text
//! echo hello | python3 -c 'import socket,sys
//! s=socket.create_connection(("127.0.0.1",7008))
//! s.sendall(sys.stdin.buffer.read()); s.shutdown(1); print(s.recv(100))'
//! ```

use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

// Stage 23's files, unchanged: the executor, its run queue, the task
// states, the waker.
#[path = "../../solutions/23-executor/executor.rs"]
mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
#[path = "../../solutions/23-executor/waker.rs"]
mod waker;
// Stage 25's files, unchanged: the sockets that do not wait, and the
// reactor (with the listener and its `accept`).
#[path = "../../solutions/25-reactor/reactor.rs"]
mod reactor;
// `TcpStream::limit_buffers` is the 9P server's (stage 31 caps its queues).
#[allow(dead_code)]
#[path = "../../solutions/lib/kshim/socket.rs"]
mod socket;
// New in stage 26: the connections' futures.
mod async_socket;

use async_socket::AsyncStream;
use executor::{
    yield_now,
    Executor, //
};
use reactor::AsyncListener;

module! {
    type: RAsyncModule,
    name: "rasync",
    authors: ["rust-kernel-workshop"],
    description: "Stage 26: an async TCP echo server on loopback",
    license: "GPL",
    params: {
        port: u16 {
            default: 7008,
            description: "TCP port to listen on at 127.0.0.1 (1..=65535)",
        },
        workers: u32 {
            default: 4,
            description: "Work items the executor runs at once (1..=64)",
        },
    },
}

/// The address the server listens on: loopback only.
const LOOPBACK: [u8; 4] = [127, 0, 0, 1];
/// Connections the kernel may queue before `accept` takes them.
const BACKLOG: u32 = 512;
/// Bytes each connection receives (and echoes) at a time.
const CHUNK: usize = 16 * 1024;
/// Chunks a connection may echo before it lets other tasks run.
const TURNS: u32 = 16;

// ANCHOR: accept
/// The accept loop, one task: a task per connection.
async fn accept_loop(executor: Arc<Executor>, listener: AsyncListener, served: Arc<AtomicU64>) {
    loop {
        let stream = match listener.accept().await {
            Ok(stream) => AsyncStream::new(stream),
            // The client gave up before we accepted it: not our problem.
            Err(e) if e == ECONNABORTED => continue,
            Err(e) => {
                pr_err!("accept failed ({:?}): no longer accepting connections\n", e);
                return;
            }
        };
        match executor.spawn(serve(stream)) {
            // Detached: the task owns its stream and ends by itself.
            Ok(handle) => {
                drop(handle);
                served.fetch_add(1, Ordering::Relaxed);
            }
            // Shutting down: dropping the stream closes it.
            Err(e) if e == ESHUTDOWN => return,
            Err(e) => pr_warn!("dropped a connection: {:?}\n", e),
        }
    }
}
// ANCHOR_END: accept

// ANCHOR: serve
/// One connection's task. Dropping the stream at the end closes it.
async fn serve(stream: AsyncStream) {
    match echo(&stream).await {
        Ok(()) => {}
        // The client went away without a goodbye: an everyday event.
        Err(e) if e == ECONNRESET || e == EPIPE => {}
        Err(e) => pr_info!("a connection ended with an error: {:?}\n", e),
    }
}

/// Sends back everything received on `stream`, until the peer closes its end.
async fn echo(stream: &AsyncStream) -> Result {
    // On the heap: an async fn's locals live in its future.
    let mut buf = KVec::from_elem(0u8, CHUNK, GFP_KERNEL)?;
    let mut turns = 0u32;
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(buf.get(..n).ok_or(EINVAL)?).await?;
        // A client that keeps sending never makes `read` wait, so this task
        // would keep its worker: every `TURNS` chunks, let the other tasks
        // have a turn. (Yielding after every chunk costs a poll per message.)
        turns += 1;
        if turns == TURNS {
            turns = 0;
            yield_now().await;
        }
    }
}
// ANCHOR_END: serve

// ANCHOR: module
/// The module: owns the executor, which owns every task and, through them,
/// every socket.
struct RAsyncModule {
    executor: Arc<Executor>,
    /// Connections accepted since the module was loaded.
    served: Arc<AtomicU64>,
}

impl kernel::Module for RAsyncModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = module_parameters::port.value();
        let workers = module_parameters::workers.value();
        let listener = reactor::listen(LOOPBACK, port, workers, BACKLOG)?;
        // From here on, an error drops `this`, which shuts the executor down.
        let this = Self {
            executor: Executor::new(c"rasync", workers)?,
            served: Arc::new(AtomicU64::new(0), GFP_KERNEL)?,
        };
        let handle = this.executor.spawn(accept_loop(
            this.executor.clone(),
            listener,
            this.served.clone(),
        ))?;
        drop(handle);
        pr_info!(
            "async echo server listening on 127.0.0.1:{} ({} workers)\n",
            port,
            workers
        );
        Ok(this)
    }
}

impl Drop for RAsyncModule {
    fn drop(&mut self) {
        // Cancelling a task drops its future, and with it its socket: the
        // listener and every connection close here.
        let cancelled = self.executor.shutdown();
        pr_info!(
            "stopped after {} connections ({} tasks spawned, {} cancelled)\n",
            self.served.load(Ordering::Relaxed),
            self.executor.spawned(),
            cancelled
        );
    }
}
// ANCHOR_END: module
