// SPDX-License-Identifier: GPL-2.0

//! Stage 33: the 9P server acts for its users.
//!
//! Check your work with `make check STEP=33` (the exercise is in
//! `user.rs`).
//!
//! A kernel worker's credentials are the kernel's: uid 0 and every
//! capability, so stages 28 to 31 open any file for any client. Here each
//! request runs with the credentials of the user who attached its fid
//! (`user.rs`), looked up in a passwd file (stage 32's `passwd.rs`), with
//! the groups a group file lists it in (`group.rs`). Stage 31's limits
//! still hold: the policy, [`Users`], asks [`Limited`] about everything
//! but users.
//!
//! How to run: `make run STEP=33`, then in the VM
//! `mkdir -p /tmp/e /tmp/m && echo hi >/tmp/e/f && chmod 600 /tmp/e/f &&
//! insmod ... root=/tmp/e`, `mount -t 9p -o
//! trans=tcp,port=5640,version=9p2000.L 127.0.0.1 /tmp/m`, and
//! `setpriv --reuid=1000 cat /tmp/m/f` is refused.

use core::{
    ffi::CStr,
    future::Future, //
};
use kernel::{
    prelude::*,
    sync::Arc,
    time::{
        Instant,
        Monotonic, //
    }, //
};
use limits::Limited;
use passwd::Who;
use policy::Policy;
use user::{
    Squash,
    User,
    UserFile,
    UserFiles, //
};
use vfs::File;

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
// Stage 24's timer future, which `limits::within` races a client against
// (and the accept loop pauses with after a failure).
#[path = "../../solutions/24-sleep/sleep.rs"]
mod sleep;
// Unchanged: stage 26's async streams, stage 25's reactor (and listener)
// and the sockets.
#[path = "../../solutions/26-async-sockets/async_socket.rs"]
mod async_socket;
#[path = "../../solutions/25-reactor/reactor.rs"]
mod reactor;
#[path = "../../solutions/lib/kshim/socket.rs"]
mod socket;
// Stage 27's codec, unchanged: the server uses half of it (it decodes
// requests and encodes replies; the host tests use the other half).
#[allow(dead_code)]
#[path = "../../solutions/27-9p-protocol/p9.rs"]
mod p9;
// Stage 28's server and what it needs around it, stage 29's walk and
// stage 30's listing, unchanged.
#[path = "../../solutions/lib/r9p/kvfs.rs"]
mod kvfs;
#[path = "../../solutions/30-9p-readdir/listing.rs"]
mod listing;
#[path = "../../solutions/lib/kshim/param.rs"]
mod param;
#[path = "../../solutions/lib/r9p/policy.rs"]
mod policy;
#[path = "../../solutions/28-9p-server/server.rs"]
mod server;
// What the accept loop does when `accept` fails (core only: host-tested).
#[path = "../../solutions/lib/r9p/accept_retry.rs"]
mod accept_retry;
#[path = "../../solutions/lib/r9p/service.rs"]
mod service;
// The host tests' accessors of the session are unused here.
#[allow(dead_code)]
#[path = "../../solutions/lib/r9p/session.rs"]
mod session;
#[path = "../../solutions/lib/kshim/vfs.rs"]
mod vfs;
#[path = "../../solutions/29-9p-walk/walk.rs"]
mod walk;
// Stage 31's limits, unchanged.
#[path = "../../solutions/31-9p-limits/limits.rs"]
mod limits;
// The group file, given with stage 32.
#[path = "../../solutions/lib/r9p/group.rs"]
mod group;
// Stage 32's passwd file, unchanged.
#[path = "../../solutions/32-9p-passwd/passwd.rs"]
mod passwd;
// New in stage 33: the users' credentials.
mod user;

/// `cross_mounts=`: may walks cross into mounts inside the export?
fn cross_mounts() -> bool {
    module_parameters::cross_mounts.value()
}

module! {
    type: service::Server<listing::Listed, Users>,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 33: a read-only 9P2000.L server that acts for its users",
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
        cross_mounts: bool {
            default: false,
            description: "Let walks cross into file systems mounted inside the export",
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
        max_names: u32 {
            default: 32768,
            description: "Walked names one connection's fids may hold between them (64..=1048576)",
        },
        idle_ms: u32 {
            default: 10000,
            description: "Milliseconds a connection may hold half a frame, or go without a fid (100..=600000)",
        },
        allow_root: bool {
            default: false,
            description: "Honour an attach as uid 0; by default it acts as 65534 (root_squash)",
        },
    },
}

// ANCHOR: params
param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(ADDR, c"addr", 16, b"127.0.0.1");
param::string_param!(PASSWD, c"passwd", 256, b"/etc/passwd");
param::string_param!(GROUP, c"group", 256, b"/etc/group");
// ANCHOR_END: params

/// `n_uname` when the client names its user by `uname` only.
const NONUNAME: u32 = !0;

// ANCHOR: users
/// Stage 33's policy: stage 31's limits, and each fid acts for the user
/// who attached it.
struct Users {
    limited: Limited,
    /// Where `Tattach` looks its users up.
    files: UserFiles,
    /// Whether an attach as uid 0 acts as root (`allow_root=1`), or as
    /// the anonymous user (the default).
    allow_root: bool,
}

impl Policy for Users {
    type User = Arc<User>;

    fn new() -> Result<Self> {
        let open = |what, path: &CStr| {
            UserFile::new(path).inspect_err(|e| {
                pr_err!(
                    "cannot open the {} file {}: {:?}\n",
                    what,
                    path.to_str().unwrap_or("?"),
                    e
                );
            })
        };
        let files = UserFiles {
            passwd: open("passwd", PASSWD.value())?,
            group: open("group", GROUP.value())?,
        };
        let allow_root = module_parameters::allow_root.value();
        if allow_root {
            pr_warn!("allow_root=1: any client that can connect may act as root\n");
        }
        Ok(Self {
            limited: Limited::new()?,
            files,
            allow_root,
        })
    }

    // ANCHOR: attach
    /// The user `Tattach` names, from the passwd and group files: by
    /// number, or by name if the number is `NONUNAME`. A user the passwd
    /// file does not list gets `EACCES`; root (uid 0) acts as the
    /// anonymous user unless `allow_root=1`.
    fn attach(&self, uname: &[u8], n_uname: u32) -> Result<Arc<User>> {
        let who = if n_uname == NONUNAME {
            Who::Name(uname)
        } else {
            Who::Uid(n_uname)
        };
        let squash = if self.allow_root {
            Squash::None
        } else {
            Squash::Root
        };
        Ok(Arc::new(
            user::lookup(&self.files, who, squash)?,
            GFP_KERNEL,
        )?)
    }
    // ANCHOR_END: attach

    fn run<R>(user: &Arc<User>, f: impl FnOnce() -> R) -> R {
        user.run(f)
    }

    fn open(_user: &Arc<User>, file: &File, _root: &File) -> Result<File> {
        // `run` installed the user's credentials: the check is theirs.
        file.open_read_checked()
    }

    // Stage 31's limits, unchanged.
    // ANCHOR_END: users
    fn max_msize(&self) -> u32 {
        self.limited.max_msize()
    }

    fn max_fids(&self) -> usize {
        self.limited.max_fids()
    }

    fn max_names(&self) -> usize {
        self.limited.max_names()
    }

    fn socket_buffer(&self) -> Option<u32> {
        self.limited.socket_buffer()
    }

    fn admit(&self) -> Option<impl Send + 'static> {
        self.limited.admit()
    }

    fn within<F: Future + Send>(
        &self,
        since: Instant<Monotonic>,
        fut: F,
    ) -> impl Future<Output = Result<F::Output>> + Send {
        self.limited.within(since, fut)
    }

    fn ended(&self, result: Result) {
        self.limited.ended(result);
    }

    fn stopped(&self) {
        self.limited.stopped();
    }
}
