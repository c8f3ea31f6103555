// SPDX-License-Identifier: GPL-2.0

//! Stage 25: a greeter in the kernel, on loopback, on stage 23's executor.
//!
//! Every connection is a task, not a thread. It sends the client one line,
//! then waits until the client answers or hangs up, and closes the
//! connection. A task that waits gives its worker back; the reactor
//! (`reactor.rs`) wakes it when its socket changes. Two workers hold
//! hundreds of waiting connections. Unloading cancels every task: dropping
//! a task's future closes its socket.
//!
//! How to run: `make run STEP=25`, then in the VM:
//!
//! ```text
//! python3 -c 'import socket
//! s=socket.create_connection(("127.0.0.1",7008)); print(s.recv(100))'
//! ```

use kernel::{
    bindings,
    prelude::*,
    sync::Arc, //
};

// Stage 23's files, unchanged: the executor, its run queue, the task
// states, the waker. (A greeter never yields: `yield_now` waits for stage
// 26's echo server.)
#[allow(dead_code)]
#[path = "../../solutions/23-executor/executor.rs"]
mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
#[path = "../../solutions/23-executor/waker.rs"]
mod waker;
// Stage 22's socket, changed: calls that do not wait, and readiness. (A
// greeter reads nothing: `try_recv` waits for stage 26.)
#[allow(dead_code)]
#[path = "../../solutions/lib/kshim/socket.rs"]
mod socket;
// New in stage 25: the reactor.
mod reactor;

use executor::Executor;
use reactor::{
    AsyncListener,
    Watched, //
};
use socket::TcpStream;

module! {
    type: RGreetModule,
    name: "rgreet",
    authors: ["rust-kernel-workshop"],
    description: "Stage 25: a greeter on loopback, on an executor and a reactor",
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
/// What every client is sent, once.
const GREETING: &[u8] = b"hello from the kernel's reactor\n";

// ANCHOR: accept
/// The accept loop, one task: a task per connection.
async fn accept_loop(executor: Arc<Executor>, listener: AsyncListener) {
    loop {
        match listener.accept().await {
            // Detached: the task owns its socket and ends by itself.
            Ok(stream) => match executor.spawn(greet(stream)) {
                Ok(handle) => drop(handle),
                // Shutting down: dropping the socket closes it.
                Err(e) if e == ESHUTDOWN => return,
                Err(e) => pr_warn!("dropped a connection: {:?}\n", e),
            },
            // The client gave up before we accepted it: not our problem.
            Err(e) if e == ECONNABORTED => {}
            Err(e) => {
                pr_err!("accept failed ({:?}): no longer accepting connections\n", e);
                return;
            }
        }
    }
}
// ANCHOR_END: accept

// ANCHOR: greet
/// One connection's task: one line, then wait for the client. Dropping the
/// socket at the end closes it.
async fn greet(stream: Pin<KBox<Watched<TcpStream>>>) {
    // A fresh connection's send buffer is empty: one send that does not
    // wait takes the whole line. (Sending more than fits, waiting for room,
    // is stage 26's `write_all`.)
    match stream.get().try_send(GREETING) {
        Ok(sent) if sent == GREETING.len() => {}
        // The client reset the connection already: nothing to wait for.
        _ => return,
    }
    // Until the client sends something or closes its side (`POLLRDHUP`; a
    // reset counts too), the task waits here and holds no worker.
    stream.ready(bindings::POLLIN | bindings::POLLRDHUP).await;
}
// ANCHOR_END: greet

// ANCHOR: module
/// The module: owns the executor, which owns every task and, through them,
/// every socket.
struct RGreetModule {
    executor: Arc<Executor>,
}

impl kernel::Module for RGreetModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = module_parameters::port.value();
        let workers = module_parameters::workers.value();
        let listener = reactor::listen(LOOPBACK, port, workers, BACKLOG)?;
        // From here on, an error drops `this`, which shuts the executor down.
        let this = Self {
            executor: Executor::new(c"rgreet", workers)?,
        };
        let handle = this
            .executor
            .spawn(accept_loop(this.executor.clone(), listener))?;
        drop(handle);
        pr_info!("greeting on 127.0.0.1:{} ({} workers)\n", port, workers);
        Ok(this)
    }
}

impl Drop for RGreetModule {
    fn drop(&mut self) {
        // Cancelling a task drops its future, and with it its socket: the
        // listener and every waiting connection close here.
        let cancelled = self.executor.shutdown();
        pr_info!(
            "stopped: {} tasks spawned, {} cancelled\n",
            self.executor.spawned(),
            cancelled
        );
    }
}
// ANCHOR_END: module
