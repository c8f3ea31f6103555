// SPDX-License-Identifier: GPL-2.0

//! Stage 31: the 9P server, with limits: what one client may cost it.
//!
//! Stage 30's server, unchanged, served with a policy (`limits.rs`) that
//! puts a ceiling on every resource a client can make the server hold:
//! connections, the message size, fids per connection, and the time a
//! connection may sit on half a frame or on a reply it does not read. Each
//! ceiling is a module parameter. The stage's test hits each on purpose,
//! then sends a live fuzzer and 64 clients at the server.
//!
//! How to run: `make run STEP=31`, then in the VM
//! `mkdir -p /tmp/e /tmp/m && echo hi >/tmp/e/f && insmod ... root=/tmp/e
//! max_conns=4`, and `dmesg` shows the limits and their worst case.

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
// New in stage 31: the limits.
mod limits;

/// `cross_mounts=`: may walks cross into mounts inside the export?
fn cross_mounts() -> bool {
    module_parameters::cross_mounts.value()
}

module! {
    type: service::Server<listing::Listed, limits::Limited>,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 31: a read-only 9P2000.L server with limits",
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
    },
}

// ANCHOR: params
param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(ADDR, c"addr", 16, b"127.0.0.1");
// ANCHOR_END: params
