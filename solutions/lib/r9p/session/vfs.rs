// SPDX-License-Identifier: GPL-2.0

//! What the session asks of the world: the [`Vfs`] it serves from, and the
//! [`Table`]s and [`Buffer`]s it keeps its state in.
//!
//! The session's logic uses `core` only, so that the same files build into
//! the kernel module (where the VFS is `kshim/vfs.rs`, a table an `RBTree`
//! and a buffer a `KVVec`) and into the host tests and fuzzer (where the
//! VFS is a fake with adversarial behaviours, and the tables `BTreeMap`s).
//! Everything that allocates, sleeps or touches a file is behind these
//! traits; every rule about what a client may reach, and as whom, is in the
//! session's files, which call them.

use crate::p9::reply::{
    Rgetattr,
    Rstatfs, //
};

/// An errno, positive, as `Rlerror` carries it.
pub(crate) type Errno = u32;

/// What every call here returns.
pub(crate) type VResult<T> = core::result::Result<T, Errno>;

/// `S_IFMT` and the file types the session tells apart (`stat.h`).
pub(crate) mod mode {
    /// The type bits of `st_mode`.
    pub(crate) const S_IFMT: u32 = 0o170_000;
    /// A directory.
    pub(crate) const S_IFDIR: u32 = 0o040_000;
    /// A regular file.
    pub(crate) const S_IFREG: u32 = 0o100_000;
    /// A symbolic link.
    pub(crate) const S_IFLNK: u32 = 0o120_000;
}

/// `inode_permission`'s mask bits (`fs.h`).
pub(crate) mod may {
    /// Read access.
    pub(crate) const MAY_READ: u32 = 0x4;
    /// The check is for an `open(2)`: an LSM, or NFS, tells it from an
    /// `access(2)` by this bit.
    pub(crate) const MAY_OPEN: u32 = 0x20;
}

/// `open(2)` flags the session opens with (x86-64 and the generic values).
pub(crate) mod open_flags {
    /// Never wait: a file under a lease gets `EAGAIN` at once.
    pub(crate) const O_NONBLOCK: u32 = 0o4000;
    /// Offsets past 2 GiB.
    pub(crate) const O_LARGEFILE: u32 = 0o100_000;
    /// Reads do not update the access time: the owner's privilege only.
    pub(crate) const O_NOATIME: u32 = 0o1_000_000;
}

// ANCHOR: attr
/// What `getattr` reports of a file: `Rgetattr`'s fields, as `struct kstat`
/// has them (its qid is the session's to make: left at its default), and
/// what the qid and the link rules need besides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Attr {
    /// The status, as the reply carries it.
    pub(crate) st: Rgetattr,
    /// The file system's device: inode numbers are unique within one.
    pub(crate) dev: u64,
    /// The inode number.
    pub(crate) ino: u64,
    /// The file system reads this symlink itself (`i_op->readlink`): one
    /// of /proc's "magic" links (`/proc/<pid>/cwd`, `fd/N`, `ns/*`), which
    /// no server may read (see `Session::readlink`).
    pub(crate) own_readlink: bool,
}
// ANCHOR_END: attr

impl Attr {
    /// The type bits of the mode.
    pub(crate) fn file_type(&self) -> u32 {
        self.st.mode & mode::S_IFMT
    }
}

/// One directory entry, as the file system reports it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DirEntry<'a> {
    /// The name, borrowed for the callback only.
    pub(crate) name: &'a [u8],
    /// The entry's own position: listing from here starts with it.
    pub(crate) pos: u64,
    /// The inode number.
    pub(crate) ino: u64,
    /// `DT_DIR`, `DT_REG`, `DT_LNK`, ...
    pub(crate) dtype: u8,
}

// ANCHOR: vfs
/// The file system the session serves, and the users it acts for.
///
/// Every call that touches a file takes the acting user's credentials
/// (`user`): the implementation makes the call *as* that user (the kernel's
/// installs them as the worker's credentials for the call). A handle names
/// a file without opening it (`O_PATH`); the session never asks for `..`,
/// and never asks the implementation to follow a symlink.
pub(crate) trait Vfs: Sized {
    /// A path handle: names one file, pins it while held.
    type Handle: Clone;
    /// A file opened for reading.
    type File;
    /// A user's credentials, as a fid keeps them.
    type User: Clone;
    /// Where a session keeps its fids and the nodes its walks made (a
    /// table of any type: naming the session's own types here would make
    /// this file and theirs import each other).
    type Table<T>: Table<T>;
    /// Where a session encodes its replies.
    type Buf: Buffer;

    /// The handle of `name` (one component, never `.` or `..`, no `/` or
    /// NUL) in the directory `dir`, not following a symlink.
    fn lookup(&self, user: &Self::User, dir: &Self::Handle, name: &[u8]) -> VResult<Self::Handle>;
    /// Whether `a` and `b` are on the same mount.
    fn same_mount(&self, a: &Self::Handle, b: &Self::Handle) -> bool;
    /// `stat` of the file.
    fn getattr(&self, user: &Self::User, h: &Self::Handle) -> VResult<Attr>;
    /// `inode_permission`: may `user` access the file as `mask` says?
    fn permission(&self, user: &Self::User, h: &Self::Handle, mask: u32) -> VResult<()>;
    /// Opens the file with `flags` (`dentry_open`: checks nothing itself).
    fn open(&self, user: &Self::User, h: &Self::Handle, flags: u32) -> VResult<Self::File>;
    /// Reads into `buf` from `offset`; the number of bytes read.
    fn read(
        &self,
        user: &Self::User,
        f: &Self::File,
        offset: u64,
        buf: &mut [u8],
    ) -> VResult<usize>;
    /// Lists the open directory `f` from `pos`, calling `each` until it
    /// returns `false` (that entry is not consumed); returns the position
    /// after the last entry consumed.
    fn readdir(
        &self,
        user: &Self::User,
        f: &Self::File,
        pos: u64,
        each: &mut dyn FnMut(DirEntry<'_>) -> bool,
    ) -> VResult<u64>;
    /// Copies the target of the symlink into `out`; its length
    /// (`ENAMETOOLONG` if it does not fit).
    fn readlink(&self, user: &Self::User, h: &Self::Handle, out: &mut [u8]) -> VResult<usize>;
    /// The numbers of the file system the file is on, as `Rstatfs` has
    /// them.
    fn statfs(&self, user: &Self::User, h: &Self::Handle) -> VResult<Rstatfs>;
    /// The credentials of the user whose uid is `uid`; `EACCES` if the
    /// user database has no such user. Asked at every attach: the database
    /// may have changed since the last.
    fn user_by_uid(&self, uid: u32) -> VResult<Self::User>;
    /// The credentials of the user named `name`, and their uid; `EACCES`
    /// if the user database has no such user.
    fn user_by_name(&self, name: &[u8]) -> VResult<(u32, Self::User)>;
    /// The credentials of the anonymous user (uid and gid 65534, no
    /// group, no capability), whom a squashed root acts for.
    fn anonymous(&self) -> VResult<Self::User>;
}
// ANCHOR_END: vfs

// ANCHOR: table
/// A map from numbers to values: the fid table, the walked nodes. The
/// kernel's is an `RBTree`; inserting may fail (`ENOMEM`).
pub(crate) trait Table<T>: Default {
    /// The value numbered `k`.
    fn get(&self, k: u64) -> Option<&T>;
    /// The value numbered `k`, to change it.
    fn get_mut(&mut self, k: u64) -> Option<&mut T>;
    /// Adds `v` as `k` (which the caller checked is free).
    fn insert(&mut self, k: u64, v: T) -> VResult<()>;
    /// Takes the value numbered `k` out.
    fn remove(&mut self, k: u64) -> Option<T>;
}

/// A byte buffer the session may grow (the kernel's is a `KVVec<u8>`).
pub(crate) trait Buffer: AsRef<[u8]> + AsMut<[u8]> {
    /// Makes it `len` bytes long; `ENOMEM` leaves it as it was.
    fn resize(&mut self, len: usize) -> VResult<()>;
}
// ANCHOR_END: table
