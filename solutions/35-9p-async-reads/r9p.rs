// SPDX-License-Identifier: GPL-2.0

//! Stage 35: the 9P server reads through stage 34's file reactor, and serves the
//! ext4 on the NVMe driver's disk.
//!
//! Stage 31's server, with its limits, answers `Tread` by awaiting a
//! [`FileReactor`] read (`file_reactor.rs`): the executor's workers never
//! sleep on a disk. A read the page cache cannot answer waits for its page
//! with a wait-page entry (`kiocb.rs`) that the disk's interrupt wakes; with
//! `direct=1`, aligned reads go to the disk with a completion function. What
//! cannot wait that way goes to a small blocking pool (`blocking=`), whose
//! use the module counts and logs when it is unloaded.
//!
//! How to run: `make run STEP=35`, then in the VM load stage 20's rnvme,
//! `mkfs.ext4 /dev/rnvme0n1`, mount it on /tmp/e, `insmod ... root=/tmp/e`,
//! `mount -t 9p -o trans=tcp,port=5640,version=9p2000.L 127.0.0.1 /tmp/m`,
//! read files, `rmmod r9p`, and `dmesg` says how the reads went.

use core::future::Future;
use file_reactor::FileReactor;
use kernel::{
    prelude::*,
    time::{
        Instant,
        Monotonic, //
    }, //
};
use limits::Limited;
use policy::Policy;
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
// Stage 27's codec, unchanged: the server uses half of it.
#[allow(dead_code)]
#[path = "../../solutions/27-9p-protocol/p9.rs"]
mod p9;
// Stage 28's server and what it needs around it, stage 29's walk, stage
// 30's listing and stage 31's limits, unchanged.
#[path = "../../solutions/lib/r9p/kvfs.rs"]
mod kvfs;
#[path = "../../solutions/31-9p-limits/limits.rs"]
mod limits;
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
// Stage 34's file reactor and its kiocbs, unchanged.
#[path = "../../solutions/34-kiocb-reactor/file_reactor.rs"]
mod file_reactor;
#[path = "../../solutions/34-kiocb-reactor/kiocb.rs"]
mod kiocb;

/// `cross_mounts=`: may walks cross into mounts inside the export?
fn cross_mounts() -> bool {
    module_parameters::cross_mounts.value()
}

module! {
    type: service::Server<listing::Listed, Reactored>,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 35: a read-only 9P2000.L server whose reads never hold a worker",
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
        blocking: u32 {
            default: 2,
            description: "Reads the blocking pool does at once, for files that cannot be read without sleeping (1..=16)",
        },
        direct: bool {
            default: false,
            description: "Read page-aligned ranges from the disk directly (O_DIRECT), completed in its interrupt",
        },
    },
}

// ANCHOR: params
param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(ADDR, c"addr", 16, b"127.0.0.1");
// ANCHOR_END: params

// ANCHOR: reactored
/// Stage 35's policy: stage 31's limits, and reads through the file reactor.
struct Reactored {
    limited: Limited,
    reactor: FileReactor,
}

impl Policy for Reactored {
    type User = ();

    fn new() -> Result<Self> {
        let blocking = module_parameters::blocking.value();
        if !(1..=16).contains(&blocking) {
            pr_err!("out of range: blocking 1..=16\n");
            return Err(EINVAL);
        }
        Ok(Self {
            limited: Limited::new()?,
            reactor: FileReactor::new(blocking, module_parameters::direct.value())?,
        })
    }

    fn attach(&self, _uname: &[u8], _n_uname: u32) -> Result {
        Ok(())
    }

    fn read<'a>(
        &'a self,
        file: &'a File,
        buf: &'a mut [u8],
        pos: u64,
    ) -> impl Future<Output = Result<usize>> + Send + 'a {
        self.reactor.read_at(file, buf, pos)
    }

    // ANCHOR: stopped
    /// The last word: how the reads went (the test reads it).
    fn stopped(&self) {
        self.reactor.counts.log();
        self.limited.stopped();
    }
    // ANCHOR_END: stopped
    // ANCHOR_END: reactored

    // Stage 31's limits, unchanged.
    fn within<F: Future + Send>(
        &self,
        since: Instant<Monotonic>,
        fut: F,
    ) -> impl Future<Output = Result<F::Output>> + Send {
        Limited::within(&self.limited, since, fut)
    }

    fn max_names(&self) -> usize {
        self.limited.max_names()
    }

    fn admit(&self) -> Option<impl Send + 'static> {
        self.limited.admit()
    }

    fn ended(&self, result: Result) {
        self.limited.ended(result);
    }

    fn socket_buffer(&self) -> Option<u32> {
        self.limited.socket_buffer()
    }

    fn max_msize(&self) -> u32 {
        self.limited.max_msize()
    }

    fn max_fids(&self) -> usize {
        self.limited.max_fids()
    }
}
