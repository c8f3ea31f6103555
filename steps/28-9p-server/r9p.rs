// SPDX-License-Identifier: GPL-2.0

//! Stage 28: a 9P2000.L server in the kernel, answering one frame at a time.
//!
//! The server exports one directory (`root=`) over TCP, and Linux's own 9P
//! client mounts it: `mount -t 9p -o trans=tcp,port=5640,version=9p2000.L
//! 127.0.0.1 /mnt`. It is stage 26's async server, speaking stage 27's
//! codec: every connection is a task on the executor, the reactor wakes it
//! when a request arrives, and the task answers it with VFS calls.
//!
//! This stage serves the export's root alone (`RootOnly`): a mount
//! works, `stat` of it too; walking a name is stage 29, listing a directory
//! stage 30.
//!
//! 9P2000.L has no authentication, so the server listens on 127.0.0.1
//! unless `addr=` says otherwise, and it never writes: every request that
//! would change the export gets `EROFS`.
//!
//! How to run: `make run STEP=28`, then in the VM
//! `mkdir -p /tmp/e /tmp/m && insmod ... root=/tmp/e`,
//! `mount -t 9p -o trans=tcp,port=5640,version=9p2000.L 127.0.0.1 /tmp/m`.
//!
//! Check your work with `make check STEP=28` (the exercise is in
//! `server.rs`: `serve_requests`, the frame loop).

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
// New in stage 28: the server's frame loop, and what it needs around it
// (given: the core session, `session.rs`, whose accessors for the host
// tests are unused here; the kernel's side of it, `kvfs.rs`; the
// parameters, the policy, the VFS calls, the module).
#[path = "../../solutions/lib/r9p/kvfs.rs"]
mod kvfs;
#[path = "../../solutions/lib/kshim/param.rs"]
mod param;
#[path = "../../solutions/lib/r9p/policy.rs"]
mod policy;
mod server;
// What the accept loop does when `accept` fails (core only: host-tested).
#[path = "../../solutions/lib/r9p/accept_retry.rs"]
mod accept_retry;
#[path = "../../solutions/lib/r9p/service.rs"]
mod service;
#[allow(dead_code)]
#[path = "../../solutions/lib/r9p/session.rs"]
mod session;
#[path = "../../solutions/lib/kshim/vfs.rs"]
mod vfs;

module! {
    type: service::Server<RootOnly>,
    name: "r9p",
    authors: ["rust-kernel-workshop"],
    description: "Stage 28: a 9P2000.L server of the export's root",
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

// ANCHOR: namespace
/// Stage 28's namespace: the export's root, and nothing under it. It has
/// only the defaults, which refuse: a `Twalk` of a name and a `Treaddir`
/// get `EOPNOTSUPP`.
struct RootOnly;

impl session::Reach for RootOnly {}
// ANCHOR_END: namespace
