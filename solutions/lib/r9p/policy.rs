// SPDX-License-Identifier: GPL-2.0

//! What a client may cost the server, and whom its requests act for.
//!
//! Stage 28's server trusts its clients: it serves any number of
//! connections, messages as large as v9fs sends, 65536 fids each, walks as
//! deep as they like, waits as long as a client likes for the rest of a
//! frame, and answers every request as the kernel (uid 0, every
//! capability). Stages 31 and 33 harden it
//! without changing `server.rs`: each is a [`Policy`] its crate root makes
//! and names beside the namespace (`service::Server<Listed, Limited>`).
//! [`Trusting`] is stage 28's, and every item's default is what it does.

use crate::vfs::File;
use core::future::Future;
use kernel::{
    prelude::*,
    time::{
        Instant,
        Monotonic, //
    }, //
};

/// The largest message the server accepts or sends: the v9fs TCP transport
/// allows at most 1 MiB, too.
pub(crate) const MAX_MSIZE: u32 = 1024 * 1024;
/// The most fids one connection may hold: a v9fs mount with `cache=loose`
/// keeps one per cached dentry.
pub(crate) const MAX_FIDS: usize = 1 << 16;

// ANCHOR: policy
/// How far the server trusts its clients. One value for the module, made
/// at load time; every connection's task holds a reference to it.
pub(crate) trait Policy: Sized + Send + Sync + 'static {
    /// Whom a fid's requests act for, set at `Tattach` and inherited by
    /// every fid walked from it: a user's credentials in stage 33, nobody in
    /// particular (`()`) before.
    type User: Clone + Send + Sync;

    /// The policy, from the module parameters, before the server listens:
    /// an error fails the load.
    fn new() -> Result<Self>;

    /// The user `Tattach` names: by number (`n_uname`), or by name if the
    /// number is `NONUNAME` (`!0`). An error is the client's `Rlerror`.
    fn attach(&self, uname: &[u8], n_uname: u32) -> Result<Self::User>;

    /// Runs `f`, one request on a fid of `user`'s, as that user.
    fn run<R>(_user: &Self::User, f: impl FnOnce() -> R) -> R {
        f()
    }

    /// Opens `node` for reading (`Tlopen`), for `user`. `root` is the
    /// export root: its file carries the credentials the module was loaded
    /// with, which stage 28 opens everything with.
    fn open(_user: &Self::User, file: &File, root: &File) -> Result<File> {
        file.open_read(root)
    }

    // ANCHOR: read
    /// Reads into `buf` from byte `offset` of `file` (`Tread`): the bytes
    /// read. Stage 28 reads in the worker, which sleeps while the disk
    /// works; stage 35 awaits stage 34's file reactor instead.
    fn read<'a>(
        &'a self,
        file: &'a File,
        buf: &'a mut [u8],
        offset: u64,
    ) -> impl Future<Output = Result<usize>> + Send + 'a {
        async move { file.read_at(buf, offset) }
    }
    // ANCHOR_END: read

    /// The largest `msize` agreed to in `Tversion`.
    fn max_msize(&self) -> u32 {
        MAX_MSIZE
    }

    /// The most fids one connection may hold; the next gets `EMFILE`.
    fn max_fids(&self) -> usize {
        MAX_FIDS
    }

    /// The most walked names one connection may hold: the nodes its walks
    /// made that its fids keep alive (`node.rs`'s `Names`); a walk past it
    /// gets `EMFILE`.
    fn max_names(&self) -> usize {
        usize::MAX
    }

    /// What each direction of a connection's socket may queue, in bytes of
    /// data (the kernel doubles it for its bookkeeping), or `None` for the
    /// kernel's default, which TCP's autotuning grows with the traffic (to
    /// 6 MiB received and 4 MiB to send, for a client that pipelines
    /// requests and never reads its replies).
    fn socket_buffer(&self) -> Option<u32> {
        None
    }

    /// A place for one more connection, or `None` to close it at once. The
    /// place is the value returned: the connection's task holds it, and
    /// dropping it gives it back.
    fn admit(&self) -> Option<impl Send + 'static> {
        Some(())
    }

    /// Awaits `fut`, which waits for the client: for more of a frame it
    /// began sending at `since`, for room for a reply it does not read
    /// (`since` is now), or for the next frame of a connection that holds
    /// no fid (`since`: when it connected, or last held one). Stage 31
    /// gives up with `ETIMEDOUT` once the client has had its time since
    /// `since`; stage 28 waits as long as it takes.
    fn within<F: Future + Send>(
        &self,
        _since: Instant<Monotonic>,
        fut: F,
    ) -> impl Future<Output = Result<F::Output>> + Send {
        async move { Ok(fut.await) }
    }

    /// A connection's task ended with `result`.
    fn ended(&self, result: Result) {
        log_end(result);
    }

    /// The module is being unloaded: the policy's last word.
    fn stopped(&self) {}
}
// ANCHOR_END: policy

/// Logs how a connection ended, unless it ended as connections do.
pub(crate) fn log_end(result: Result) {
    match result {
        Ok(()) => {}
        // The client went away without a goodbye: an everyday event.
        Err(e) if e == ECONNRESET || e == EPIPE => {}
        Err(e) => pr_info!("a connection ended with an error: {:?}\n", e),
    }
}

// ANCHOR: trusting
/// Stage 28's policy: every default, and every request acts for the kernel.
pub(crate) struct Trusting;

impl Policy for Trusting {
    type User = ();

    fn new() -> Result<Self> {
        Ok(Self)
    }

    fn attach(&self, _uname: &[u8], _n_uname: u32) -> Result {
        Ok(())
    }
}
// ANCHOR_END: trusting
