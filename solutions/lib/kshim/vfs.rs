// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers around the VFS calls the server makes: an owned
//! `struct file` reference ([`File`]) and what can be done with it.
//!
//! The kernel crate has no VFS abstraction for this, so the calls are the C
//! functions of `include/linux/fs.h` through `kernel::bindings`. Every call
//! here may sleep: the server makes them from its executor's workers
//! (process context), never from the reactor's wake callbacks.
//!
//! Part of the kernel shim (`solutions/lib/kshim/`), from stage 28 on. TODO:
//! replace with the `kernel` crate's own file abstraction once it can open
//! and walk (7.3's `kernel::fs::File` only wraps a `struct file` a file
//! descriptor already names: no `file_open_root`, `dentry_open`, `vfs_getattr`
//! or `iterate_dir`).

use core::{
    ffi::{
        c_int,
        c_long,
        c_uint, //
    },
    ptr::NonNull, //
};
use kernel::{
    bindings,
    error::{
        from_err_ptr,
        to_result, //
    },
    ffi::c_char,
    prelude::*, //
};

// ANCHOR: file
/// One reference to an open `struct file`: dropping it calls `fput`.
///
/// Two kinds exist: *path handles* (opened with `O_PATH`), which name a file
/// without opening it for I/O (the server's fids), and files opened for
/// reading.
///
/// # Invariants
///
/// `self.0` points at a valid `struct file` on which this value owns one
/// reference, taken by the call that returned it (`filp_open`,
/// `file_open_root` or `dentry_open`); `Drop` gives it back.
pub(crate) struct File(NonNull<bindings::file>);

// SAFETY: a file reference is not tied to the thread that took it: any
// thread may use the file and `fput` it.
unsafe impl Send for File {}
// SAFETY: the calls made through `&File` (`kernel_read`, `iterate_dir`,
// `vfs_getattr`, ...) may run concurrently on one file; the VFS locks what
// it must.
unsafe impl Sync for File {}

impl File {
    /// Takes ownership of the result of a C call that returns a new file
    /// reference or an `ERR_PTR`.
    ///
    /// # Safety
    ///
    /// `ptr` is an `ERR_PTR`, or a file on which the caller owns one
    /// reference that it hands over.
    pub(crate) unsafe fn from_result(ptr: *mut bindings::file) -> Result<Self> {
        let ptr = from_err_ptr(ptr)?;
        // INVARIANT: not an error, so a file reference the caller gave us.
        NonNull::new(ptr).map(Self).ok_or(ENOENT)
    }

    /// The raw pointer, for the C calls (and for the other wrappers of the
    /// shim, such as stage 34's kiocbs).
    pub(crate) fn as_ptr(&self) -> *mut bindings::file {
        self.0.as_ptr()
    }

    /// The file's `struct path` (mount and dentry), valid while `self` is.
    pub(crate) fn path(&self) -> *const bindings::path {
        // SAFETY: by the type invariant the file is valid; `f_path` is set
        // when the file is opened and never changes.
        unsafe { &raw const (*self.as_ptr()).__bindgen_anon_1.f_path }
    }
    // ANCHOR_END: file

    // ANCHOR: open_dir
    /// A path handle on the directory `path` (an absolute path, resolved
    /// from the calling task's root: `insmod`'s), following symlinks.
    pub(crate) fn open_dir(path: &CStr) -> Result<Self> {
        let flags = bindings::O_PATH | bindings::O_DIRECTORY;
        // SAFETY: `path` is NUL-terminated; `filp_open` returns a new
        // reference or an `ERR_PTR`.
        unsafe { Self::from_result(bindings::filp_open(path.as_char_ptr(), flags as c_int, 0)) }
    }
    // ANCHOR_END: open_dir

    // ANCHOR: lookup
    /// A path handle on `name` in this directory: exactly one component
    /// (the caller checked there is no `/` in it, and that it is not `.` or
    /// `..`), and a symlink is not followed: the handle names the link.
    pub(crate) fn lookup(&self, name: &CStr) -> Result<Self> {
        let flags = bindings::O_PATH | bindings::O_NOFOLLOW;
        // SAFETY: `self.path()` is valid while `self` is (we hold the file);
        // `file_open_root` only reads it and `name` during the call, takes
        // its own references, and returns a new reference or an `ERR_PTR`.
        unsafe {
            Self::from_result(bindings::file_open_root(
                self.path(),
                name.as_char_ptr(),
                flags as c_int,
                0,
            ))
        }
    }
    // ANCHOR_END: lookup

    // ANCHOR: same_mount
    /// Whether this file and `other` are on the same mount (`f_path.mnt`):
    /// a lookup that lands on a file system mounted on the name does not.
    pub(crate) fn same_mount(&self, other: &File) -> bool {
        // SAFETY: both paths are valid while the files are (type
        // invariant); only the pointers are compared.
        unsafe { (*self.path()).mnt == (*other.path()).mnt }
    }
    // ANCHOR_END: same_mount

    // ANCHOR: open_read
    /// Opens the file this path handle names, read-only, with the
    /// credentials `creds_of` was opened with. The caller checked that it is
    /// a regular file or a directory (opening a FIFO would wait for a
    /// writer; a symlink has no file operations).
    ///
    /// Reads then update the access time, as `read(2)`'s do: `O_NOATIME`
    /// is the file owner's privilege (`may_open` refuses it to anyone
    /// else), and `dentry_open` would not check it.
    ///
    /// The open never waits: with `O_NONBLOCK`, a file under a lease
    /// (`F_SETLEASE`) gets `EWOULDBLOCK` at once, where `break_lease`
    /// would otherwise sleep up to `lease-break-time` (45 s) in a worker
    /// every connection shares. nfsd opens the same way, and QEMU's 9p
    /// server since CVE-2023-2861. It changes no read of a regular file or
    /// a directory.
    pub(crate) fn open_read(&self, creds_of: &File) -> Result<Self> {
        let flags = bindings::O_RDONLY | bindings::O_LARGEFILE | bindings::O_NONBLOCK;
        // SAFETY: both files are valid (type invariant); `f_cred` is set at
        // open and lives as long as its file; `dentry_open` takes its own
        // references on the path and the credentials, and returns a new
        // reference or an `ERR_PTR`.
        unsafe {
            let creds = (*creds_of.as_ptr()).f_cred;
            Self::from_result(bindings::dentry_open(self.path(), flags as c_int, creds))
        }
    }
    // ANCHOR_END: open_read

    // ANCHOR: getattr
    /// `stat`: the file's type, mode, owner, size, times, ...
    pub(crate) fn getattr(&self) -> Result<bindings::kstat> {
        let mut stat = bindings::kstat::default();
        // SAFETY: the path is valid while `self` is; `stat` is a writable
        // `kstat` that `vfs_getattr` fills in.
        to_result(unsafe {
            bindings::vfs_getattr(
                self.path(),
                &mut stat,
                bindings::STATX_BASIC_STATS | bindings::STATX_BTIME,
                bindings::AT_STATX_SYNC_AS_STAT,
            )
        })?;
        Ok(stat)
    }
    // ANCHOR_END: getattr

    /// `statfs`: the numbers `df` shows for the file system holding the file.
    pub(crate) fn statfs(&self) -> Result<KStatfs> {
        let mut st = KStatfs::default();
        // SAFETY: the path is valid; `KStatfs` has the layout of `struct
        // kstatfs`, which `vfs_statfs` fills in.
        to_result(unsafe { bindings::vfs_statfs(self.path(), (&raw mut st).cast()) })?;
        Ok(st)
    }

    // ANCHOR: readlink
    /// Appends the target of this symlink to `out` (`EINVAL` if the file is
    /// not a symlink). The link is read, never followed.
    ///
    /// A link whose file system reads it itself (`i_op->readlink`: /proc's
    /// "magic" links, `/proc/<pid>/cwd`, `fd/N`, `ns/*`) is refused with
    /// `EOPNOTSUPP`: their `get_link` jumps the caller's own path walk
    /// (`nd_jump_link` uses `current->nameidata`, which a worker does not
    /// have: a NULL dereference), and their `readlink` writes to user
    /// memory. `vfs_readlink` hands these to `i_op->readlink` for the same
    /// reason.
    pub(crate) fn readlink(&self, out: &mut KVVec<u8>) -> Result {
        if self.reads_own_link() {
            return Err(EOPNOTSUPP);
        }
        let mut done = bindings::delayed_call::default();
        // SAFETY: the dentry is valid while `self` is (the file holds a
        // reference on its path). `vfs_get_link` returns an `ERR_PTR`, or a
        // NUL-terminated string that stays valid until `done` is called.
        let target = unsafe { bindings::vfs_get_link((*self.path()).dentry, &mut done) };
        let result = from_err_ptr(target.cast_mut()).and_then(|target| {
            // SAFETY: a NUL-terminated string, valid until `done` is called
            // below.
            let bytes = unsafe { CStr::from_char_ptr(target) }.to_bytes();
            Ok(out.extend_from_slice(bytes, GFP_KERNEL)?)
        });
        // `do_delayed_call`, an inline function: frees what `vfs_get_link`
        // allocated for the string, if anything.
        if let Some(free) = done.fn_ {
            // SAFETY: the function and argument `vfs_get_link` set, called
            // once, after the last use of the string.
            unsafe { free(done.arg) };
        }
        result
    }
    // ANCHOR_END: readlink

    /// Whether the file system reads this symlink itself
    /// (`i_op->readlink`): one of /proc's "magic" links, which
    /// [`File::readlink`] refuses.
    pub(crate) fn reads_own_link(&self) -> bool {
        // SAFETY: the dentry is valid while `self` is (the file holds a
        // reference on its path), and so is its inode (an `O_PATH` file
        // pins a positive dentry); `i_op` is set when the inode is made and
        // points at its file system's static operations.
        unsafe {
            let inode = (*(*self.path()).dentry).d_inode;
            !inode.is_null() && (*(*inode).i_op).readlink.is_some()
        }
    }

    // ANCHOR: read
    /// Reads into `buf` from byte `offset` of a file opened for reading;
    /// returns how many bytes it read (0 at or past the end).
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<usize> {
        let mut pos = i64::try_from(offset).map_err(|_| EINVAL)?;
        // SAFETY: the file is valid; `buf` is writable for `buf.len()` bytes
        // and `pos` is a valid `loff_t`, both only used during the call.
        let n = unsafe {
            bindings::kernel_read(self.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut pos)
        };
        if n < 0 {
            Err(Error::from_errno(n as c_int))
        } else {
            Ok(n as usize)
        }
    }
    // ANCHOR_END: read

    // ANCHOR: readdir
    /// Lists a directory opened for reading, from position `pos` (0, or a
    /// position this returned): calls `each` for every entry until it
    /// returns `false` (that entry is not consumed) or the directory ends.
    /// Returns the position after the last entry consumed: where the next
    /// listing continues.
    pub(crate) fn readdir(
        &self,
        pos: u64,
        each: &mut dyn FnMut(DirEntry<'_>) -> bool,
    ) -> Result<u64> {
        let pos = i64::try_from(pos).map_err(|_| EINVAL)?;
        // SAFETY: the file is valid. Seeking lets the file system check the
        // position and reset what it keeps per open directory.
        let at = unsafe { bindings::vfs_llseek(self.as_ptr(), pos, bindings::SEEK_SET as c_int) };
        if at < 0 {
            return Err(Error::from_errno(at as c_int));
        }
        let mut lister = Lister {
            ctx: bindings::dir_context {
                actor: Some(fill_dir),
                pos: 0, // iterate_dir starts from the file's position.
                count: 0,
                dt_flags_mask: 0,
            },
            each,
        };
        // SAFETY: the file is valid; `lister.ctx` is the first field of a
        // `Lister`, as `fill_dir` expects, and outlives the call.
        to_result(unsafe { bindings::iterate_dir(self.as_ptr(), &mut lister.ctx) })?;
        u64::try_from(lister.ctx.pos).map_err(|_| EINVAL)
    }
}

/// One directory entry, as the file system reports it.
pub(crate) struct DirEntry<'a> {
    /// The name (not NUL-terminated), borrowed for the callback only.
    pub(crate) name: &'a [u8],
    /// The entry's own position: listing from here starts with it.
    pub(crate) pos: u64,
    /// The inode number.
    pub(crate) ino: u64,
    /// `DT_DIR`, `DT_REG`, `DT_LNK`, ...
    pub(crate) dtype: u8,
}

/// What `iterate_dir` passes to [`fill_dir`]: the kernel's context first,
/// so that a pointer to it is a pointer to the whole.
#[repr(C)]
struct Lister<'f> {
    ctx: bindings::dir_context,
    each: &'f mut dyn FnMut(DirEntry<'_>) -> bool,
}

/// The `filldir_t` actor: called by the file system for each entry.
///
/// # Safety
///
/// `ctx` is the `ctx` field of a live [`Lister`] (only [`File::readdir`]
/// passes this function, with such a context); `name` points at `len`
/// readable bytes.
unsafe extern "C" fn fill_dir(
    ctx: *mut bindings::dir_context,
    name: *const c_char,
    len: c_int,
    pos: i64,
    ino: u64,
    dtype: c_uint,
) -> bool {
    // SAFETY: `ctx` is the first field of a `#[repr(C)]` `Lister` that
    // `readdir` owns and does not touch during `iterate_dir`.
    let lister = unsafe { &mut *ctx.cast::<Lister<'_>>() };
    let (Ok(len), Ok(pos)) = (usize::try_from(len), u64::try_from(pos)) else {
        return false;
    };
    // SAFETY: the file system passes `len` readable bytes, valid during the
    // call; the slice does not outlive it.
    let name = unsafe { core::slice::from_raw_parts(name.cast::<u8>(), len) };
    (lister.each)(DirEntry {
        name,
        pos,
        ino,
        dtype: (dtype & 0xff) as u8,
    })
}
// ANCHOR_END: readdir

impl Clone for File {
    /// Another reference to the same open file (`get_file`).
    fn clone(&self) -> Self {
        // SAFETY: the file is valid (type invariant); `get_file` takes one
        // more reference on it, which the new value owns.
        unsafe { bindings::get_file(self.as_ptr()) };
        // INVARIANT: the reference just taken.
        Self(self.0)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: by the type invariant we own one reference; this gives it
        // back, once.
        unsafe { bindings::fput(self.as_ptr()) };
    }
}

// ANCHOR: kstatfs
/// `struct kstatfs` (`include/linux/statfs.h`), which the kernel crate's
/// bindings only know as an opaque type: mirrored here, field for field.
#[repr(C)]
#[derive(Default)]
pub(crate) struct KStatfs {
    pub(crate) f_type: c_long,
    pub(crate) f_bsize: c_long,
    pub(crate) f_blocks: u64,
    pub(crate) f_bfree: u64,
    pub(crate) f_bavail: u64,
    pub(crate) f_files: u64,
    pub(crate) f_ffree: u64,
    pub(crate) f_fsid: [c_int; 2],
    pub(crate) f_namelen: c_long,
    f_frsize: c_long,
    f_flags: c_long,
    f_spare: [c_long; 4],
}
// ANCHOR_END: kstatfs
