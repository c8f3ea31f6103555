// SPDX-License-Identifier: GPL-2.0

//! Stage 18: a read-only 9P2000.L file server in the kernel.
//!
//! The server exports one directory (`root=`) over TCP, and Linux's own 9P
//! client mounts it: `mount -t 9p -o trans=tcp,port=5640,version=9p2000.L
//! 127.0.0.1 /mnt`. It is stage 16's async server, speaking stage 17's
//! codec: every connection is a task on the executor, the reactor wakes it
//! when a request arrives, and the task answers it with VFS calls.
//!
//! 9P2000.L has no authentication, so the server listens on 127.0.0.1
//! unless `addr=` says otherwise, and it never writes: every request that
//! would change the export gets `EROFS`.
//!
//! How to run: `make run STEP=18`, then in the VM
//! `mkdir -p /tmp/e /tmp/m && echo hi >/tmp/e/f && insmod ... root=/tmp/e`,
//! `mount -t 9p -o trans=tcp,port=5640,version=9p2000.L 127.0.0.1 /tmp/m`.

use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

// Stage 15's files, unchanged: the executor, its run queue, the task
// states, the waker.
#[path = "../../solutions/15-executor/executor.rs"]
mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
#[path = "../../solutions/15-executor/waker.rs"]
mod waker;
// Stage 16's files, unchanged: the reactor, the sockets and their futures.
#[path = "../../solutions/16-reactor/async_socket.rs"]
mod async_socket;
#[path = "../../solutions/16-reactor/reactor.rs"]
mod reactor;
#[path = "../../solutions/lib/kshim/socket.rs"]
mod socket;
// Stage 17's codec, unchanged: the server uses half of it (it decodes
// requests and encodes replies; the host tests use the other half).
#[allow(dead_code)]
#[path = "../../solutions/17-9p-protocol/p9.rs"]
mod p9;
// New in stage 18: the fids, the parameters, the server, the VFS calls.
#[path = "../../solutions/lib/r9p/fid.rs"]
mod fid;
#[path = "../../solutions/lib/kshim/param.rs"]
mod param;
mod server;
#[path = "../../solutions/lib/kshim/vfs.rs"]
mod vfs;

use async_socket::{
    AsyncListener,
    AsyncStream, //
};
use executor::Executor;
use fid::Node;
use socket::TcpListener;
use vfs::File;

module! {
    type: R9pModule,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 18: a read-only 9P2000.L server",
    license: "GPL",
    params: {
        port: u16 {
            default: 5640,
            description: "TCP port to listen on (1..=65535)",
        },
        workers: u32 {
            default: 4,
            description: "Work items the executor runs at once (1..=64)",
        },
    },
}

// ANCHOR: params
param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(ADDR, c"addr", 16, b"127.0.0.1");
// ANCHOR_END: params

/// Connections the kernel may queue before `accept` takes them.
const BACKLOG: u32 = 64;

/// Parses a dotted IPv4 address (`127.0.0.1`).
fn parse_ipv4(s: &[u8]) -> Option<[u8; 4]> {
    let mut addr = [0u8; 4];
    let mut parts = s.split(|&c| c == b'.');
    for byte in addr.iter_mut() {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let value = part.iter().fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
        *byte = u8::try_from(value).ok()?;
    }
    parts.next().is_none().then_some(addr)
}

// ANCHOR: accept
/// The accept loop, one task: a task per connection.
async fn accept_loop(
    executor: Arc<Executor>,
    listener: AsyncListener,
    root: Arc<Node>,
    served: Arc<AtomicU64>,
) {
    loop {
        let stream: AsyncStream = match listener.accept().await {
            Ok(stream) => stream,
            Err(e) if e == ECONNABORTED => continue,
            Err(e) => {
                pr_err!("accept failed ({:?}): no longer accepting connections\n", e);
                return;
            }
        };
        match executor.spawn(server::serve(stream, root.clone())) {
            Ok(handle) => {
                drop(handle);
                served.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e == ESHUTDOWN => return,
            Err(e) => pr_warn!("dropped a connection: {:?}\n", e),
        }
    }
}
// ANCHOR_END: accept

// ANCHOR: module
/// The module: owns the executor, which owns every task and, through them,
/// every socket, fid and open file.
struct R9pModule {
    executor: Arc<Executor>,
    /// Connections accepted since the module was loaded.
    served: Arc<AtomicU64>,
}

impl kernel::Module for R9pModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = module_parameters::port.value();
        let workers = module_parameters::workers.value();
        if port == 0 || !(1..=64).contains(&workers) {
            pr_err!("out of range: port 1..=65535, workers 1..=64\n");
            return Err(EINVAL);
        }
        let Some(addr) = parse_ipv4(ADDR.value().to_bytes()) else {
            pr_err!("addr= must be an IPv4 address such as 127.0.0.1\n");
            return Err(EINVAL);
        };
        let listener = TcpListener::listen(addr, port, BACKLOG).inspect_err(|&e| {
            if e == EADDRINUSE {
                pr_err!(
                    "port {} is already in use (EADDRINUSE): pick another with port=N\n",
                    port
                );
            } else {
                pr_err!("cannot listen on port {}: {:?}\n", port, e);
            }
        })?;
        let listener = AsyncListener::new(listener)?;
        let root_path = ROOT.value();
        if root_path.to_bytes().first() != Some(&b'/') {
            pr_err!("root= must name the directory to export, as an absolute path\n");
            return Err(EINVAL);
        }
        let root = File::open_dir(root_path).inspect_err(|e| {
            pr_err!(
                "cannot open the export root {}: {:?}\n",
                root_path.to_str().unwrap_or("?"),
                e
            );
        })?;
        let root = Node::new(root, None)?;
        // From here on, an error drops `this`, which shuts the executor down.
        let this = Self {
            executor: Executor::new(c"r9p", workers)?,
            served: Arc::new(AtomicU64::new(0), GFP_KERNEL)?,
        };
        let handle = this.executor.spawn(accept_loop(
            this.executor.clone(),
            listener,
            root,
            this.served.clone(),
        ))?;
        drop(handle);
        let [a, b, c, d] = addr;
        pr_info!(
            "serving {} read-only over 9P2000.L on {}.{}.{}.{}:{}\n",
            root_path.to_str().unwrap_or("?"),
            a,
            b,
            c,
            d,
            port
        );
        Ok(this)
    }
}

impl Drop for R9pModule {
    fn drop(&mut self) {
        // Cancelling a task drops its future: its socket closes (the client
        // sees the connection end) and its fids and open files go.
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
