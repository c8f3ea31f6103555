// SPDX-License-Identifier: GPL-2.0

//! Stage 34: a file reactor, and a module that reads one file through it.
//!
//! `file_reactor.rs` turns a file read into a future that never puts an
//! executor worker to sleep: the page cache answers at once
//! (`IOCB_NOWAIT`), or the task waits for its page with a wait-page entry
//! that the disk's interrupt wakes (`IOCB_WAITQ`), or, with `direct=1`, the
//! disk reads straight into the reactor's buffer and its interrupt calls
//! the kiocb's `ki_complete`. What cannot be read that way goes to a small
//! blocking pool. `kiocb.rs` holds the kiocbs and all the `unsafe`.
//!
//! This module reads the file `name` in the directory `root` from its
//! first byte to its end, `chunk` bytes a read, on stage 23's executor,
//! and logs how many bytes it read, their FNV-1a hash (the test computes
//! it too) and how the reads went.
//!
//! How to run: `make run STEP=34`, then in the VM load stage 20's rnvme,
//! `mkfs.ext4 /dev/rnvme0n1`, mount it on /tmp/e, write a file there,
//! `echo 3 >/proc/sys/vm/drop_caches`, `insmod ... root=/tmp/e name=FILE`
//! and `dmesg | tail`.
//!
//! Check your work with `make check STEP=34` (the exercises are in
//! `file_reactor.rs`: `FileReactor::read_at`, and `kiocb.rs`: `page_wake`).

use file_reactor::FileReactor;
use kernel::{
    prelude::*,
    sync::Arc, //
};
use vfs::File;
use workloads::Workloads;

// Stage 23's executor, unchanged, and the shell that starts it and shuts
// it down at `rmmod`. (One task that never yields, spawned by the shell:
// `yield_now` and `Workloads::executor` go unused.)
#[allow(dead_code)]
#[path = "../../solutions/23-executor/executor.rs"]
mod executor;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
mod queue;
#[path = "../../solutions/lib/exec/task_state.rs"]
mod task_state;
#[path = "../../solutions/23-executor/waker.rs"]
mod waker;
#[allow(dead_code)]
#[path = "../../solutions/lib/exec/workloads.rs"]
mod workloads;
// The string parameters, and the VFS wrapper of the 9P server (stage 28):
// this module opens and reads, no more.
#[path = "../../solutions/lib/kshim/param.rs"]
mod param;
#[allow(dead_code)]
#[path = "../../solutions/lib/kshim/vfs.rs"]
mod vfs;
// New: the file reactor and its kiocbs.
mod file_reactor;
mod kiocb;

module! {
    type: KRead,
    name: "kread",
    authors: ["rust-kernel-workshop"],
    description: "Stage 34: reads a file through a kiocb reactor",
    license: "GPL",
    params: {
        chunk: u32 {
            default: 131072,
            description: "Bytes a read asks for (1..=1048576)",
        },
        workers: u32 {
            default: 1,
            description: "Work items the executor runs at once (1..=64)",
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

param::string_param!(ROOT, c"root", 256, b"");
param::string_param!(NAME, c"name", 256, b"");

/// FNV-1a, 64 bits: the hash of what was read, which the test computes
/// over the file too.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash = (hash ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    hash
}

// ANCHOR: read_file
/// Reads `file` from byte 0 to its end through the reactor, and logs what
/// it read and how.
async fn read_file(reactor: Arc<FileReactor>, file: File, chunk: usize) -> Result {
    let mut buf = KVVec::from_elem(0u8, chunk, GFP_KERNEL)?;
    let (mut pos, mut reads, mut hash) = (0u64, 0u64, FNV_OFFSET);
    loop {
        // A short read is no end: only 0 bytes is (what was in memory, or
        // up to a page that must be waited for, comes back first).
        let n = reactor.read_at(&file, &mut buf, pos).await?;
        if n == 0 {
            break;
        }
        hash = fnv1a(hash, buf.get(..n).ok_or(EIO)?);
        pos += n as u64;
        reads += 1;
    }
    pr_info!(
        "{}: {} bytes in {} read(s), fnv1a64 {:016x}\n",
        NAME.value().to_str().unwrap_or("?"),
        pos,
        reads,
        hash
    );
    reactor.counts.log();
    Ok(())
}
// ANCHOR_END: read_file

/// The module: owns the executor (and through its task, the reactor and
/// the file) until unload.
struct KRead {
    _workloads: Workloads,
}

impl kernel::Module for KRead {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let chunk = module_parameters::chunk.value();
        let workers = module_parameters::workers.value();
        let blocking = module_parameters::blocking.value();
        if !(1..=1 << 20).contains(&chunk)
            || !(1..=64).contains(&workers)
            || !(1..=16).contains(&blocking)
        {
            pr_err!("out of range: chunk 1..=1048576, workers 1..=64, blocking 1..=16\n");
            return Err(EINVAL);
        }
        let (root, name) = (ROOT.value(), NAME.value());
        if root.to_bytes().first() != Some(&b'/')
            || name.is_empty()
            || name.to_bytes().contains(&b'/')
            || name == c"."
            || name == c".."
        {
            pr_err!("root= must be an absolute path, name= a file in it\n");
            return Err(EINVAL);
        }
        let dir = File::open_dir(root)?;
        let file = dir.lookup(name)?.open_read(&dir)?;
        let reactor = Arc::new(
            FileReactor::new(blocking, module_parameters::direct.value())?,
            GFP_KERNEL,
        )?;
        // From here on, an error drops `workloads`, which shuts the executor
        // down; at `rmmod`, a read still in flight is cancelled.
        let workloads = Workloads::start(c"kread", workers)?;
        workloads.spawn_logged("read", read_file(reactor, file, chunk as usize))?;
        Ok(Self {
            _workloads: workloads,
        })
    }
}
