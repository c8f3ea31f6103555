// SPDX-License-Identifier: GPL-2.0

//! Per-user access: each request runs with the credentials of the user
//! who attached the fid it names.
//!
//! The server's workers are kernel threads, and a kernel thread's
//! credentials are the kernel's own: uid 0 and every capability, so a
//! stage-28 server opens any file for anyone. diod, in user space, switches
//! its fsuid and fsgid (`setfsuid`, `setfsgid`) to the attached user before
//! each operation. In the kernel, the same thing is a `struct cred` of our
//! own ([`User`]) installed as the worker's subjective credentials for the
//! duration of one request ([`User::run`]): the VFS checks every lookup and
//! open against `current_cred()`, so it checks them against that user.
//! The user's supplementary groups come with it, from a group file, as
//! diod's `initgroups()` finds them.

use crate::{
    group::{
        self,
        MAX_GROUPS, //
    },
    passwd::{
        self,
        Account,
        Who, //
    },
    vfs::File, //
};
use core::{
    ffi::{
        c_int,
        CStr, //
    },
    ptr::NonNull, //
};
use kernel::{
    bindings,
    error::to_result,
    prelude::*, //
};

/// The largest passwd or group file the server reads.
const MAX_USER_FILE: usize = 1 << 20;

// ANCHOR: user
/// The credentials of one user, as the server acts for them.
///
/// # Invariants
///
/// `self.cred` points at a `struct cred` on which this value owns one
/// reference, and which nobody changes any more: it was filled in by
/// [`User::new`] before anyone else could see it.
pub(crate) struct User {
    cred: NonNull<bindings::cred>,
}

// SAFETY: a `struct cred` is reference-counted with atomics and never changes
// once it is shared (type invariant): any thread may use and put it.
unsafe impl Send for User {}
// SAFETY: `&User` only installs the credentials on the calling task, which
// reads them; nothing writes through it.
unsafe impl Sync for User {}

impl User {
    /// Credentials for `account`: a copy of the calling worker's (the
    /// kernel's: uid 0, every capability) with every uid and gid changed,
    /// `groups` as its supplementary groups and, unless the uid is 0, every
    /// capability dropped.
    pub(crate) fn new(account: Account<'_>, groups: &[u32]) -> Result<Self> {
        // SAFETY: may be called from any task; returns a new `cred` with one
        // reference, which we own, or NULL.
        let cred = NonNull::new(unsafe { bindings::prepare_creds() }).ok_or(ENOMEM)?;
        let uid = bindings::kuid_t { val: account.uid };
        let gid = bindings::kgid_t { val: account.gid };
        // SAFETY: `cred` is valid, and only we know it: writing its fields
        // races with nobody. The ids are in the initial user namespace (the
        // one the worker's credentials are in), where a kuid is the uid.
        unsafe {
            let c = cred.as_ptr();
            (*c).uid = uid;
            (*c).euid = uid;
            (*c).suid = uid;
            (*c).fsuid = uid;
            (*c).gid = gid;
            (*c).egid = gid;
            (*c).sgid = gid;
            (*c).fsgid = gid;
            if account.uid != 0 {
                // What makes root root to the VFS: CAP_DAC_OVERRIDE,
                // CAP_DAC_READ_SEARCH, CAP_FOWNER, ... Gone.
                let none = bindings::kernel_cap_t { val: 0 };
                (*c).cap_effective = none;
                (*c).cap_permitted = none;
                (*c).cap_inheritable = none;
                (*c).cap_ambient = none;
            }
        }
        // ANCHOR: set_groups
        // Owned from here on: an error below puts it (`Drop`).
        let user = Self { cred };
        // At most `MAX_GROUPS`, so the count fits a `c_int`.
        let n = c_int::try_from(groups.len()).map_err(|_| EINVAL)?;
        // SAFETY: `cred` is still ours alone (nobody has seen it), and
        // `groups` is valid for reading `n` gids; the helper copies them.
        to_result(unsafe { r9p_set_groups(user.cred.as_ptr(), groups.as_ptr(), n) })?;
        // ANCHOR_END: set_groups
        // INVARIANT: we own the one reference, and stop writing here.
        Ok(user)
    }
    // ANCHOR_END: user

    // ANCHOR: run
    /// Runs `f` with this user's credentials as the calling task's
    /// subjective credentials, then puts the old ones back.
    ///
    /// A closure, not a guard object: a guard could be leaked with
    /// `mem::forget`, leaving a kernel worker with credentials that are
    /// freed later. And `f` cannot `.await`: the credentials belong to the
    /// worker thread, which runs other tasks as soon as this one yields.
    pub(crate) fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: the credentials stay valid during `f`: `self` is borrowed
        // until we return, and they are swapped out again below, before
        // this task can run anything else.
        let old = unsafe { r9p_override_creds(self.cred.as_ptr()) };
        let result = f();
        // SAFETY: `old` is what the task had: valid, the task still holds a
        // reference on it (as its objective credentials, `real_cred`).
        unsafe { r9p_revert_creds(old) };
        result
    }
    // ANCHOR_END: run
}

impl Drop for User {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we own one reference; this puts it,
        // once. Files opened as the user took references of their own.
        unsafe { bindings::put_cred(self.cred.as_ptr()) };
    }
}

// `override_creds`, `revert_creds` and `current_cred` are static inline
// functions (or a macro) in `<linux/cred.h>`, so there are no bindings for
// them: `cred_helpers.c` wraps each in a real function, declared here. And
// it fills the supplementary groups, whose `struct group_info` is no
// layout for Rust to write (`__randomize_layout`).
// ANCHOR: helpers
// (`struct cred` leads, through its pointers, to a C struct without fields,
// which rustc flags in an `extern` block; behind a pointer it is harmless,
// and the kernel crate's bindings allow it the same way.)
#[allow(improper_ctypes)]
extern "C" {
    /// Installs `new` as the calling task's subjective credentials, without
    /// taking a reference; returns the old ones.
    fn r9p_override_creds(new: *const bindings::cred) -> *const bindings::cred;
    /// Puts back what `r9p_override_creds` returned.
    fn r9p_revert_creds(old: *const bindings::cred) -> *const bindings::cred;
    /// The calling task's subjective credentials.
    fn r9p_current_cred() -> *const bindings::cred;
    /// Gives `new`, which nobody else has seen yet, the `n` supplementary
    /// groups at `gids` (copied); 0 or `-ENOMEM`.
    fn r9p_set_groups(new: *mut bindings::cred, gids: *const u32, n: c_int) -> c_int;
}
// ANCHOR_END: helpers

/// Where the users and their groups are listed: a passwd file and a group
/// file (`passwd=` and `group=`).
pub(crate) struct UserFiles {
    /// `name:password:uid:gid:...`, one user a line.
    pub(crate) passwd: UserFile,
    /// `name:password:gid:user,user,...`, one group a line.
    pub(crate) group: UserFile,
}

// ANCHOR: user_file
/// A passwd or group file, as its directory (a path handle opened at load
/// time, where the path means what the administrator meant) and its name
/// in it, opened again at each `Tattach`: `useradd`, `usermod` and `vipw`
/// write a new file and rename it over the old one, and a file opened once
/// would be the old one for ever.
pub(crate) struct UserFile {
    dir: File,
    /// The file's name in `dir`, NUL-terminated.
    name: KVec<u8>,
}
// ANCHOR_END: user_file

impl UserFile {
    /// The file at `path` (absolute, or relative to `insmod`'s working
    /// directory), which must open now: a missing file fails the load.
    pub(crate) fn new(path: &CStr) -> Result<Self> {
        let bytes = path.to_bytes();
        let (dir, name) = match bytes.iter().rposition(|&c| c == b'/') {
            Some(0) => (&b"/"[..], bytes.get(1..)),
            Some(slash) => (bytes.get(..slash).ok_or(EINVAL)?, bytes.get(slash + 1..)),
            None => (&b"."[..], Some(bytes)),
        };
        let name = name.filter(|n| !n.is_empty()).ok_or(EINVAL)?;
        let mut dir_path = KVec::new();
        dir_path.extend_from_slice(dir, GFP_KERNEL)?;
        dir_path.push(0, GFP_KERNEL)?;
        let dir = File::open_dir(CStr::from_bytes_with_nul(&dir_path).map_err(|_| EINVAL)?)?;
        let mut owned = KVec::new();
        owned.extend_from_slice(name, GFP_KERNEL)?;
        owned.push(0, GFP_KERNEL)?;
        let file = Self { dir, name: owned };
        file.open()?;
        Ok(file)
    }

    // ANCHOR: user_file_open
    /// The file as it is now: its name looked up again in its directory
    /// (a symlink is not followed), then opened for reading with the
    /// credentials the directory was opened with, `insmod`'s.
    pub(crate) fn open(&self) -> Result<File> {
        let name = CStr::from_bytes_with_nul(&self.name).map_err(|_| EINVAL)?;
        let handle = self.dir.lookup(name)?;
        if u32::from(handle.getattr()?.mode) & bindings::S_IFMT != bindings::S_IFREG {
            return Err(EINVAL);
        }
        handle.open_read(&self.dir)
    }
    // ANCHOR_END: user_file_open
}

// ANCHOR: squash
/// What an attach as root becomes (the module parameter `allow_root`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Squash {
    /// Root acts as root, with every capability (`allow_root=1`).
    None,
    /// Root acts as [`ANONYMOUS`], as NFS's `root_squash` maps it to
    /// `anonuid`: 9P2000.L without authentication lets any client that can
    /// connect *say* it is uid 0.
    Root,
}

/// Whom a squashed root acts for: `nobody`, uid and gid 65534 (NFS's
/// default `anonuid` and `anongid`), with no supplementary group and, as
/// every user but root, no capability.
const ANONYMOUS: Account<'static> = Account {
    name: b"nobody",
    uid: 65534,
    gid: 65534,
};
// ANCHOR_END: squash

// ANCHOR: lookup
/// The credentials of the user a `Tattach` names, looked up in the passwd
/// file, with the groups the group file lists the user in (both opened and
/// read again at each attach: a user or a membership added since is found,
/// even by a new file renamed over the old one); `EACCES`
/// if there is no such user. Root is squashed to [`ANONYMOUS`] unless
/// `squash` is `Squash::None`.
pub(crate) fn lookup(files: &UserFiles, who: Who<'_>, squash: Squash) -> Result<User> {
    let users = read_all(&files.passwd.open()?)?;
    let account = passwd::find(&users, who).ok_or(EACCES)?;
    if account.uid == 0 && squash == Squash::Root {
        return User::new(ANONYMOUS, &[]);
    }
    let mut gids = [0u32; MAX_GROUPS];
    let groups = group::groups_of(
        &read_all(&files.group.open()?)?,
        account.name,
        account.gid,
        &mut gids,
    );
    User::new(account, groups)
}
// ANCHOR_END: lookup

/// The contents of a passwd or group file, at most `MAX_USER_FILE` bytes.
fn read_all(file: &File) -> Result<KVVec<u8>> {
    let mut contents = KVVec::new();
    let mut chunk = [0u8; 512];
    loop {
        let n = file.read_at(&mut chunk, contents.len() as u64)?;
        if n == 0 {
            return Ok(contents);
        }
        if contents.len() + n > MAX_USER_FILE {
            return Err(EFBIG);
        }
        contents.extend_from_slice(chunk.get(..n).ok_or(EINVAL)?, GFP_KERNEL)?;
    }
}

impl File {
    // ANCHOR: open_checked
    /// Opens the file this path handle names, read-only, as the calling
    /// task's current user: the permission check `open(2)` makes, then the
    /// open. `dentry_open` alone checks nothing: the stage-28 server could
    /// open any file because it was root, and every file was its own.
    pub(crate) fn open_read_checked(&self) -> Result<Self> {
        let path = self.path();
        // `MAY_OPEN`, as `may_open` passes it: an LSM, or a file system
        // such as NFS, tells an open from an `access(2)` by it.
        let mask = bindings::MAY_OPEN | bindings::MAY_READ;
        // SAFETY: the path is valid while `self` is; a path handle on a
        // file that exists has a dentry with an inode, and its mount has an
        // idmap. `inode_permission` checks `current_cred()`.
        to_result(unsafe {
            bindings::inode_permission(
                (*(*path).mnt).mnt_idmap,
                (*(*path).dentry).d_inode,
                mask as c_int,
            )
        })?;
        // No `O_NOATIME`: reads update the access time, as `read(2)`'s do
        // (`may_open` grants `O_NOATIME` to the file's owner only).
        // `O_NONBLOCK`: a file under a lease gets `EWOULDBLOCK` at once,
        // instead of a worker asleep in `break_lease` for 45 s.
        let flags = bindings::O_RDONLY | bindings::O_LARGEFILE | bindings::O_NONBLOCK;
        // SAFETY: the path is valid; the task's credentials are valid while
        // it runs, and `dentry_open` takes a reference on them for the new
        // file (`f_cred`), returning a new reference or an `ERR_PTR`.
        unsafe {
            Self::from_result(bindings::dentry_open(
                path,
                flags as c_int,
                r9p_current_cred(),
            ))
        }
    }
    // ANCHOR_END: open_checked
}
