// SPDX-License-Identifier: GPL-2.0

//! Walking: one name at a time, from a directory the client holds, and never
//! out of the export. The confinement argument of chapter 29 lives here.
//!
//! Stage 28's server answers `Twalk` by calling its namespace's `step` for
//! each name; the namespace of stage 29 (and 28) calls [`step`].

use crate::node::Node;
use core::ffi::CStr;
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// The longest name a walk may use (`NAME_MAX`).
const NAME_MAX: usize = 255;

// ANCHOR: step
/// Walks one name from the directory `dir`: the confinement lives here.
///
/// - A name is one component: never empty, no `/`, no NUL.
/// - `.` is `dir` itself; `..` is the node `dir` was reached from, and the
///   export root, which has none, is its own parent.
/// - Any other name is looked up in `dir` by the VFS, relative to `dir`'s
///   own path handle, without following a symlink: a symlink is a node like
///   any other (the client reads it with `Treadlink`), and walking on from
///   it fails, because it is not a directory.
/// - A name on which another file system is mounted is refused with
///   `EXDEV`, as diod refuses it, unless the module was loaded with
///   `cross_mounts=1` ([`may_cross`]): the lookup lands on the mount's
///   root, which is not on `dir`'s mount.
pub(crate) fn step(dir: &Arc<Node>, name: &[u8]) -> Result<Arc<Node>> {
    // TODO (exercise 1): Walk one name from `dir`, confined to the export,
    // by the rules in this function's documentation. Think about what each
    // rule stops: the name reaches the VFS as a C string, one component,
    // so what would `..`, `a/b` or `one\0x` reach if passed on as it is?
    // Errors: `dir` not a directory `ENOTDIR`; an empty name `ENOENT`; a
    // `/` or a NUL byte `EINVAL`; longer than `NAME_MAX` `ENAMETOOLONG`;
    // else what `dir.file.lookup` (one component, symlinks not followed)
    // returns; a file found on another mount than `dir`'s
    // (`File::same_mount`) `EXDEV`, unless `may_cross()`; the node found is
    // `Node::new(file, Some(dir.clone()))`.
    // `make hint STEP=29` shows the match's shape, then a sketch.
    // Tests: "every file reads back by its path ..." and the checks after
    // it, "raw 9P: '..', names with '/', NULs, symlinks, walks from a
    // file ..." (which walks "one\0x" too), and "raw 9P: a walk onto a
    // mount inside the export gets EXDEV ...".
    let _ = (dir, name, CStr::from_bytes_until_nul, may_cross);
    Err(ENOSYS)
}
// ANCHOR_END: step

// ANCHOR: may_cross
/// Whether walks may cross into file systems mounted inside the export
/// (`cross_mounts=1`). Off by default: a mount inside the export may be
/// one its owner never meant to export (a FUSE file system whose daemon
/// never answers would hang a worker), and its inode numbers are another
/// file system's (`node.rs`'s `qid_of` folds the device into the qid).
fn may_cross() -> bool {
    crate::module_parameters::cross_mounts.value()
}
// ANCHOR_END: may_cross
