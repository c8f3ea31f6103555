// SPDX-License-Identifier: GPL-2.0

//! Stage 21: the stage-15 9P2000.L server, hardened.
//!
//! Every resource a client can make the server hold has a ceiling, a module
//! parameter (`limits.rs`): connections, message size, fids per
//! connection, and the time a connection may sit on half a frame. Every
//! request runs with the credentials of the user who attached its fid
//! (`user.rs`), looked up in a passwd file (`passwd.rs`), with the groups
//! a group file lists it in (`group.rs`). And it is fuzzed
//! live, in the VM, on the debug kernel (`tests/21-9p-hardening`).
//!
//! What stage 18 said still holds:
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

use core::{
    ffi::CStr,
    sync::atomic::{
        AtomicU64,
        Ordering, //
    }, //
};
use kernel::{
    prelude::*,
    sync::Arc,
    time::Delta, //
};

#[path = "../../solutions/16-reactor/async_socket.rs"]
mod async_socket;
#[path = "../../solutions/15-executor/executor.rs"]
mod executor;
// The codec: the server uses half of it (it decodes requests and encodes
// replies; the host tests use the other half).
#[allow(dead_code)]
#[path = "../../solutions/17-9p-protocol/p9.rs"]
mod p9;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/16-reactor/reactor.rs"]
mod reactor;
#[path = "../../solutions/15-executor/sleep.rs"]
mod sleep;
#[path = "../../solutions/lib/kshim/socket.rs"]
mod socket;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
#[path = "../../solutions/15-executor/waker.rs"]
mod waker;

#[path = "../../solutions/21-9p-hardening/fid.rs"]
mod fid;
#[path = "../../solutions/21-9p-hardening/group.rs"]
mod group;
mod limits;
// Stages 19 and 20, unchanged: walking and listing.
#[path = "../../solutions/20-9p-readdir/listing.rs"]
mod listing;
#[path = "../../solutions/lib/r9p/node.rs"]
mod node;
#[path = "../../solutions/lib/kshim/param.rs"]
mod param;
mod passwd;
#[path = "../../solutions/21-9p-hardening/server.rs"]
mod server;
mod user;
// Stage 21 opens files with `File::open_read_checked` (`user.rs`), not
// with stage 18's `open_read`.
#[allow(dead_code)]
#[path = "../../solutions/lib/kshim/vfs.rs"]
mod vfs;
#[path = "../../solutions/19-9p-walk/walk.rs"]
mod walk;

use async_socket::{
    AsyncListener,
    AsyncStream, //
};
use executor::Executor;
use limits::{
    Connections,
    Limits, //
};
use node::Node;
use socket::TcpListener;
use user::UserFiles;
use vfs::File;

module! {
    type: R9pModule,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 21: a hardened read-only 9P2000.L server",
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
        max_conns: u32 {
            default: 32,
            description: "Connections served at once; more are closed at once (1..=1024)",
        },
        max_msize: u32 {
            default: 524288,
            description: "The largest msize agreed to (8192..=1048576)",
        },
        max_fids: u32 {
            default: 8192,
            description: "Fids one connection may hold (16..=65536)",
        },
        idle_ms: u32 {
            default: 10000,
            description: "Milliseconds a connection may hold half a frame (100..=600000)",
        },
    },
}

// ANCHOR: params
param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(ADDR, c"addr", 16, b"127.0.0.1");
param::string_param!(PASSWD, c"passwd", 256, b"/etc/passwd");
param::string_param!(GROUP, c"group", 256, b"/etc/group");
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

// ANCHOR: limits_from_params
/// The ceilings the module parameters set, each checked against a range
/// that keeps the server useful and its worst case finite.
fn limits_from_params() -> Result<Limits> {
    let max_conns = module_parameters::max_conns.value();
    let max_msize = module_parameters::max_msize.value();
    let max_fids = module_parameters::max_fids.value();
    let idle_ms = module_parameters::idle_ms.value();
    if !(1..=1024).contains(&max_conns)
        || !(8192..=1024 * 1024).contains(&max_msize)
        || !(16..=65536).contains(&max_fids)
        || !(100..=600_000).contains(&idle_ms)
    {
        pr_err!(
            "out of range: max_conns 1..=1024, max_msize 8192..=1048576, max_fids 16..=65536, idle_ms 100..=600000\n"
        );
        return Err(EINVAL);
    }
    Ok(Limits {
        max_conns: max_conns as usize,
        max_msize,
        max_fids: max_fids as usize,
        idle: Delta::from_millis(i64::from(idle_ms)),
    })
}
// ANCHOR_END: limits_from_params

// ANCHOR: accept
/// The accept loop, one task: a task per connection, while there are fewer
/// than `limits.max_conns`; a connection beyond that is closed at once.
async fn accept_loop(
    executor: Arc<Executor>,
    listener: AsyncListener,
    root: Arc<Node>,
    users: Arc<UserFiles>,
    limits: Limits,
    connections: Arc<Connections>,
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
        let Some(admission) = connections.admit(limits.max_conns) else {
            // Dropping the stream closes it: the client sees the end of
            // the stream before its first reply.
            drop(stream);
            continue;
        };
        match executor.spawn(server::serve(
            stream,
            root.clone(),
            users.clone(),
            limits,
            admission,
        )) {
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
    /// Connections served now, refused, timed out.
    connections: Arc<Connections>,
}

impl kernel::Module for R9pModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = module_parameters::port.value();
        let workers = module_parameters::workers.value();
        if port == 0 || !(1..=64).contains(&workers) {
            pr_err!("out of range: port 1..=65535, workers 1..=64\n");
            return Err(EINVAL);
        }
        let limits = limits_from_params()?;
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
        let open = |what, path: &CStr| {
            File::open_regular(path).inspect_err(|e| {
                pr_err!(
                    "cannot open the {} file {}: {:?}\n",
                    what,
                    path.to_str().unwrap_or("?"),
                    e
                );
            })
        };
        let users = UserFiles {
            passwd: open("passwd", PASSWD.value())?,
            group: open("group", GROUP.value())?,
        };
        let users = Arc::new(users, GFP_KERNEL)?;
        // From here on, an error drops `this`, which shuts the executor down.
        let this = Self {
            executor: Executor::new(c"r9p", workers)?,
            served: Arc::new(AtomicU64::new(0), GFP_KERNEL)?,
            connections: Connections::new()?,
        };
        let handle = this.executor.spawn(accept_loop(
            this.executor.clone(),
            listener,
            root,
            users,
            limits,
            this.connections.clone(),
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
        pr_info!(
            "limits: {} connections, msize {}, {} fids each, {} ms idle: at most {} KiB for clients\n",
            limits.max_conns,
            limits.max_msize,
            limits.max_fids,
            module_parameters::idle_ms.value(),
            limits.worst_case_bytes() / 1024
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
            "stopped after {} connections ({} tasks spawned, {} cancelled; {} refused at the limit, {} timed out)\n",
            self.served.load(Ordering::Relaxed),
            self.executor.spawned(),
            cancelled,
            self.connections.refused.load(Ordering::Relaxed),
            self.connections.timed_out.load(Ordering::Relaxed)
        );
    }
}
// ANCHOR_END: module
