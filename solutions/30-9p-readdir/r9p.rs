// SPDX-License-Identifier: GPL-2.0

//! Stage 30: the 9P server lists directories: a read-only file server that
//! Linux mounts and `diff -r` finds identical to its export.
//!
//! Stage 28's server and stage 29's walk, unchanged; this stage's
//! namespace, `Listed` (`listing.rs`), walks as stage 29's does and answers
//! `Treaddir`: entries that fit the client's count, each with the position
//! where the listing continues after it.
//!
//! How to run: `make run STEP=30`, then in the VM
//! `mkdir -p /tmp/e /tmp/m && echo hi >/tmp/e/f && insmod ... root=/tmp/e`,
//! `mount -t 9p -o trans=tcp,port=5640,version=9p2000.L 127.0.0.1 /tmp/m`,
//! `ls -l /tmp/m`.

use kernel::prelude::*;

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
// Stage 24's timer future: the accept loop pauses with it after a failure.
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
// Stage 28's server and what it needs around it, and stage 29's walk,
// unchanged.
#[path = "../../solutions/lib/r9p/kvfs.rs"]
mod kvfs;
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
#[path = "../../solutions/29-9p-walk/walk.rs"]
mod walk;
// New in stage 30: listing.
mod listing;
#[path = "../../solutions/lib/kshim/vfs.rs"]
mod vfs;

/// `cross_mounts=`: may walks cross into mounts inside the export?
fn cross_mounts() -> bool {
    module_parameters::cross_mounts.value()
}

module! {
    type: service::Server<listing::Listed>,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 30: a read-only 9P2000.L server",
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
    },
}

// ANCHOR: params
param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(ADDR, c"addr", 16, b"127.0.0.1");
// ANCHOR_END: params
