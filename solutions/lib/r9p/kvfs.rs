// SPDX-License-Identifier: GPL-2.0

//! The kernel's side of the core session (`session.rs`): its [`Vfs`] over
//! the kernel shim's files (`kshim/vfs.rs`, where the unsafe calls are),
//! its tables (`RBTree`s) and its buffers (`KVVec`s).
//!
//! Nothing here decides what a client may reach: the session's rules do,
//! and call these for the file system's answers.

use crate::{
    p9::{
        error::errno,
        reply::{
            Rgetattr,
            Rstatfs, //
        },
    },
    policy::Policy,
    session::vfs::{
        Attr,
        Buffer,
        DirEntry,
        Errno,
        Table,
        VResult,
        Vfs, //
    },
    vfs::File,
};
use core::ffi::CStr;
use kernel::{
    bindings,
    prelude::*,
    rbtree::RBTree,
    sync::Arc, //
};

/// The errno of a kernel error, as `Rlerror` carries it (positive).
pub(crate) fn errno_of(e: Error) -> Errno {
    e.to_errno().unsigned_abs()
}

/// A session's table: a red-black tree keyed by number.
pub(crate) struct Tree<T>(RBTree<u64, T>);

impl<T> Default for Tree<T> {
    fn default() -> Self {
        Self(RBTree::new())
    }
}

impl<T> Table<T> for Tree<T> {
    fn get(&self, k: u64) -> Option<&T> {
        self.0.get(&k)
    }

    fn get_mut(&mut self, k: u64) -> Option<&mut T> {
        self.0.get_mut(&k)
    }

    fn insert(&mut self, k: u64, v: T) -> VResult<()> {
        self.0
            .try_create_and_insert(k, v, GFP_KERNEL)
            .map(|_| ())
            .map_err(|_| errno::ENOMEM)
    }

    fn remove(&mut self, k: u64) -> Option<T> {
        self.0.remove(&k)
    }
}

/// A session's buffer.
pub(crate) struct Bytes(KVVec<u8>);

impl Bytes {
    /// An empty buffer: the session sizes it.
    pub(crate) fn new() -> Self {
        Self(KVVec::new())
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl AsMut<[u8]> for Bytes {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Buffer for Bytes {
    fn resize(&mut self, len: usize) -> VResult<()> {
        if len < self.0.len() {
            self.0.truncate(len);
            return Ok(());
        }
        self.0.resize(len, 0, GFP_KERNEL).map_err(|_| errno::ENOMEM)
    }
}

/// The kernel's file system, as the session sees it: every file is opened
/// with the credentials the export root was opened with (`insmod`'s).
pub(crate) struct Kernel<P: Policy> {
    /// The export root: its credentials open every file.
    root: File,
    /// The module's policy: it finds the users.
    policy: Arc<P>,
}

impl<P: Policy> Kernel<P> {
    /// The file system under `root`.
    pub(crate) fn new(root: File, policy: Arc<P>) -> Self {
        Self { root, policy }
    }
}

/// A `dev_t` as user space encodes it (`new_encode_dev`): what v9fs decodes.
fn encode_dev(dev: bindings::dev_t) -> u64 {
    let major = u64::from(dev >> 20);
    let minor = u64::from(dev & 0xf_ffff);
    (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)
}

/// What the session needs of a file's status.
pub(crate) fn attr_of(file: &File) -> Result<Attr> {
    let st = file.getattr()?;
    let (btime_sec, btime_nsec) = if st.result_mask & bindings::STATX_BTIME != 0 {
        (st.btime.tv_sec as u64, st.btime.tv_nsec as u64)
    } else {
        (0, 0)
    };
    Ok(Attr {
        st: Rgetattr {
            mode: u32::from(st.mode),
            uid: st.uid.val,
            gid: st.gid.val,
            nlink: u64::from(st.nlink),
            rdev: encode_dev(st.rdev),
            size: st.size as u64,
            blksize: u64::from(st.blksize),
            blocks: st.blocks,
            atime_sec: st.atime.tv_sec as u64,
            atime_nsec: st.atime.tv_nsec as u64,
            mtime_sec: st.mtime.tv_sec as u64,
            mtime_nsec: st.mtime.tv_nsec as u64,
            ctime_sec: st.ctime.tv_sec as u64,
            ctime_nsec: st.ctime.tv_nsec as u64,
            btime_sec,
            btime_nsec,
            ..Rgetattr::default()
        },
        dev: u64::from(st.dev),
        ino: st.ino,
        own_readlink: file.reads_own_link(),
    })
}

// ANCHOR: as_user
impl<P: Policy> Vfs for Kernel<P> {
    type Handle = File;
    type File = File;
    type User = P::User;
    type Table<T> = Tree<T>;
    type Buf = Bytes;

    fn lookup(&self, user: &P::User, dir: &File, name: &[u8]) -> VResult<File> {
        let mut buf = [0u8; crate::session::nodes::NAME_MAX + 1];
        buf.get_mut(..name.len())
            .ok_or(errno::ENAMETOOLONG)?
            .copy_from_slice(name);
        let cname = CStr::from_bytes_until_nul(&buf).map_err(|_| errno::EINVAL)?;
        P::run(user, || dir.lookup(cname)).map_err(errno_of)
    }

    // ANCHOR_END: as_user

    fn same_mount(&self, a: &File, b: &File) -> bool {
        a.same_mount(b)
    }

    fn getattr(&self, user: &P::User, h: &File) -> VResult<Attr> {
        P::run(user, || attr_of(h)).map_err(errno_of)
    }

    fn permission(&self, _user: &P::User, _h: &File, _mask: u32) -> VResult<()> {
        // The policy's open checks, as the user (stage 33's `MAY_OPEN`).
        Ok(())
    }

    fn open(&self, user: &P::User, h: &File, _flags: u32) -> VResult<File> {
        P::run(user, || P::open(user, h, &self.root)).map_err(errno_of)
    }

    fn read(&self, user: &P::User, f: &File, offset: u64, buf: &mut [u8]) -> VResult<usize> {
        P::run(user, || f.read_at(buf, offset)).map_err(errno_of)
    }

    fn readdir(
        &self,
        user: &P::User,
        f: &File,
        pos: u64,
        each: &mut dyn FnMut(DirEntry<'_>) -> bool,
    ) -> VResult<u64> {
        P::run(user, || {
            f.readdir(pos, &mut |e| {
                each(DirEntry {
                    name: e.name,
                    pos: e.pos,
                    ino: e.ino,
                    dtype: e.dtype,
                })
            })
        })
        .map_err(errno_of)
    }

    fn readlink(&self, user: &P::User, h: &File, out: &mut [u8]) -> VResult<usize> {
        let mut target = KVVec::new();
        P::run(user, || h.readlink(&mut target)).map_err(errno_of)?;
        out.get_mut(..target.len())
            .ok_or(errno::ENAMETOOLONG)?
            .copy_from_slice(&target);
        Ok(target.len())
    }

    fn statfs(&self, user: &P::User, h: &File) -> VResult<Rstatfs> {
        let st = P::run(user, || h.statfs()).map_err(errno_of)?;
        let [lo, hi] = st.f_fsid;
        Ok(Rstatfs {
            fs_type: st.f_type as u32,
            bsize: st.f_bsize as u32,
            blocks: st.f_blocks,
            bfree: st.f_bfree,
            bavail: st.f_bavail,
            files: st.f_files,
            ffree: st.f_ffree,
            fsid: u64::from(lo as u32) | (u64::from(hi as u32) << 32),
            namelen: st.f_namelen as u32,
        })
    }

    fn user_by_uid(&self, uid: u32) -> VResult<P::User> {
        self.policy.attach(b"", uid).map_err(errno_of)
    }

    fn user_by_name(&self, name: &[u8]) -> VResult<(u32, P::User)> {
        // The policy squashes root itself (the session's limits say
        // `allow_root`): the uid is not needed here.
        let user = self.policy.attach(name, crate::session::NONUNAME);
        Ok((crate::session::NONUNAME, user.map_err(errno_of)?))
    }

    fn anonymous(&self) -> VResult<P::User> {
        Err(errno::EACCES)
    }
}
