// SPDX-License-Identifier: GPL-2.0

//! The module around the 9P server of stages 18 to 20: the parameters'
//! checks, the listener, the accept task, and stopping.
//!
//! Each of these stages has a crate root of its own (its `module!`, its
//! parameters, the files it includes) and a server that can do more: stage
//! 18 serves the export's root alone, stage 19 walks the tree, stage 20
//! lists its directories. What differs is the namespace the connections are
//! served with (`server::Namespace`), so this file is generic over it, and
//! each crate root defines its own and names it: `type:
//! service::Server<Confined>`.
//!
//! It reads the parameters the crate root declares: `port` and `workers` in
//! `module!`, the strings `ROOT` and `ADDR` with `param::string_param!`.

use crate::{
    async_socket::{
        AsyncListener,
        AsyncStream, //
    },
    executor::Executor,
    node::Node,
    server::{
        self,
        Namespace, //
    },
    socket::TcpListener,
    vfs::File, //
};
use core::{
    marker::PhantomData,
    sync::atomic::{
        AtomicU64,
        Ordering, //
    }, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

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
/// The accept loop, one task: a task per connection, each served with the
/// namespace `N`.
async fn accept_loop<N: Namespace>(
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
        match executor.spawn(server::serve::<N>(stream, root.clone())) {
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
/// every socket, fid and open file. `N` is the namespace its connections
/// are served with: what the stage's server can walk and list.
pub(crate) struct Server<N> {
    executor: Arc<Executor>,
    /// Connections accepted since the module was loaded.
    served: Arc<AtomicU64>,
    /// `N` is a type, never a value: `fn() -> N` keeps `Server` `Send` and
    /// `Sync` whatever `N` is.
    namespace: PhantomData<fn() -> N>,
}

impl<N: Namespace> kernel::Module for Server<N> {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = crate::module_parameters::port.value();
        let workers = crate::module_parameters::workers.value();
        if port == 0 || !(1..=64).contains(&workers) {
            pr_err!("out of range: port 1..=65535, workers 1..=64\n");
            return Err(EINVAL);
        }
        let Some(addr) = parse_ipv4(crate::ADDR.value().to_bytes()) else {
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
        let root_path = crate::ROOT.value();
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
            namespace: PhantomData,
        };
        let handle = this.executor.spawn(accept_loop::<N>(
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

impl<N> Drop for Server<N> {
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
