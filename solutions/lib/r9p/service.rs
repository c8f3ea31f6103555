// SPDX-License-Identifier: GPL-2.0

//! The module around the 9P server of stages 28 to 31 and 33: the parameters'
//! checks, the listener, the accept task, and stopping.
//!
//! Each of these stages has a crate root of its own (its `module!`, its
//! parameters, the files it includes) and a server that can do more: stage
//! 28 serves the export's root alone, stage 29 walks the tree, stage 30
//! lists its directories, stages 31 and 33 harden it. What differs is the
//! namespace the connections are served with (`server::Namespace`) and the
//! policy (`policy::Policy`), so this file is generic over both, and each
//! crate root names its own: `type: service::Server<Confined>` (the policy
//! is `Trusting` unless named: `service::Server<Listed, Limited>`).
//!
//! It reads the parameters the crate root declares: `port` and `workers` in
//! `module!`, the strings `ROOT` and `ADDR` with `param::string_param!`.

use crate::{
    accept_retry::{
        AcceptRetry,
        Next, //
    },
    async_socket::AsyncStream,
    executor::{
        yield_now,
        Executor, //
    },
    policy::{
        Policy,
        Trusting, //
    },
    reactor::{
        self,
        AsyncListener, //
    },
    server::{
        self,
        Namespace, //
    },
    sleep::sleep,
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
    sync::Arc,
    time::Delta, //
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
/// The accept loop, one task: a task per connection the policy admits,
/// each served with the namespace `N`; a connection it does not admit is
/// closed at once. It ends only when the executor shuts down (rmmod).
async fn accept_loop<N: Namespace, P: Policy>(
    executor: Arc<Executor>,
    listener: AsyncListener,
    root: File,
    policy: Arc<P>,
    served: Arc<AtomicU64>,
) {
    // What to do when `accept` or a spawn fails: `accept_retry.rs`, where
    // the host tests check it with every errno.
    let mut retry = AcceptRetry::new(ECONNABORTED, ESHUTDOWN);
    loop {
        let stream = match listener.accept().await {
            Ok(stream) => {
                if let Some(failures) = retry.accepted() {
                    pr_info!("accepting again, after {} failures\n", failures);
                }
                if let Some(bytes) = policy.socket_buffer() {
                    // Before the first read: a connection is never served
                    // beyond the bound. (It cannot fail on a TCP socket.)
                    if stream.get().limit_buffers(bytes).is_err() {
                        continue;
                    }
                }
                AsyncStream::new(stream)
            }
            Err(e) => match retry.accept_failed(e) {
                Next::Accept => continue,
                Next::Pause { ms, warn } => {
                    if warn {
                        pr_warn!("accept failed ({:?}): trying again\n", e);
                    }
                    match sleep(Delta::from_millis(i64::from(ms))) {
                        Ok(pause) => pause.await,
                        // Not even a timer: let the other tasks run first.
                        Err(_) => yield_now().await,
                    }
                    continue;
                }
                Next::Stop => return,
            },
        };
        let Some(place) = policy.admit() else {
            // Dropping the stream closes it: the client sees the end of
            // the stream before its first reply.
            drop(stream);
            continue;
        };
        match executor.spawn(server::serve::<N, P>(
            stream,
            root.clone(),
            policy.clone(),
            place,
        )) {
            Ok(handle) => {
                drop(handle);
                served.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => match retry.spawn_failed(e) {
                Next::Stop => return,
                _ => pr_warn!("dropped a connection: {:?}\n", e),
            },
        }
    }
}
// ANCHOR_END: accept

// ANCHOR: module
/// The module: owns the executor, which owns every task and, through them,
/// every socket, fid and open file. `N` is the namespace its connections
/// are served with: what the stage's server can walk and list; `P` its
/// policy.
pub(crate) struct Server<N, P: Policy = Trusting> {
    executor: Arc<Executor>,
    /// Connections accepted since the module was loaded.
    served: Arc<AtomicU64>,
    /// The policy, shared with every connection.
    policy: Arc<P>,
    /// `N` is a type, never a value: `fn() -> N` keeps `Server` `Send` and
    /// `Sync` whatever `N` is.
    namespace: PhantomData<fn() -> N>,
}

impl<N, P: Policy> Drop for Server<N, P> {
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
        self.policy.stopped();
    }
}
// ANCHOR_END: module

impl<N: Namespace, P: Policy> kernel::Module for Server<N, P> {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let port = crate::module_parameters::port.value();
        let workers = crate::module_parameters::workers.value();
        let policy = Arc::new(P::new()?, GFP_KERNEL)?;
        let Some(addr) = parse_ipv4(crate::ADDR.value().to_bytes()) else {
            pr_err!("addr= must be an IPv4 address such as 127.0.0.1\n");
            return Err(EINVAL);
        };
        let listener = reactor::listen(addr, port, workers, BACKLOG)?;
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
        // From here on, an error drops `this`, which shuts the executor down.
        let this = Self {
            executor: Executor::new(c"r9p", workers)?,
            served: Arc::new(AtomicU64::new(0), GFP_KERNEL)?,
            policy,
            namespace: PhantomData,
        };
        let handle = this.executor.spawn(accept_loop::<N, P>(
            this.executor.clone(),
            listener,
            root,
            this.policy.clone(),
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
