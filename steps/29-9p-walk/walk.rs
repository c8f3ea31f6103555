// SPDX-License-Identifier: GPL-2.0

//! Walking: one name at a time, from a directory the client holds, and
//! never out of the export. The confinement argument of chapter 29 lives
//! here, in the core session's terms (`session.rs`'s `Reach`): the kernel
//! module and the host tests build this same file.
#![forbid(unsafe_code)]

use crate::p9::error::errno::*;
use crate::session::{
    nodes::{
        NodeId,
        NAME_MAX, //
    },
    vfs::{
        VResult,
        Vfs, //
    },
    Reach,
    Walk, //
};

// ANCHOR: step
/// Walks one name from the directory `dir`, as `user`: the confinement
/// lives here. Returns the node reached, with one hold (the caller's).
///
/// - A name is one component: never empty, no `/`, no NUL.
/// - `.` is `dir` itself; `..` is the node `dir` was reached from, and
///   the export root, which has none, is its own parent. The VFS is
///   never asked for `..`: its `..` is the file system's, which leads
///   out of the export.
/// - Any other name is looked up in `dir`'s own handle, without
///   following a symlink: a symlink is a node like any other (the
///   client reads it with `Treadlink`), and walking on from it fails,
///   because it is not a directory.
/// - A name on which another file system is mounted is refused with
///   `EXDEV` unless `cross_mounts`, *before* anything else is asked of
///   the file: a FUSE mount whose daemon never answers would hang the
///   worker in `getattr`.
pub(crate) fn step<V: Vfs>(w: Walk<'_, V>, dir: NodeId, name: &[u8]) -> VResult<NodeId> {
    // TODO (exercise 1): Walk one name from the directory `dir`, confined to
    // the export, by the rules in this function's documentation. Think
    // about what each rule stops: the name reaches the VFS as a C string,
    // one component, so what would `..`, `a/b` or `one\0x` reach if passed
    // on as it is?
    // Errors: `dir` not a directory (`Node::is_dir`) `ENOTDIR`; an empty
    // name `ENOENT`; a `/` or a NUL byte `EINVAL`; longer than `NAME_MAX`
    // `ENAMETOOLONG`; else what `w.vfs.lookup(w.user, &node.handle, name)`
    // (one component, symlinks not followed) returns; a file found on
    // another mount than `dir`'s (`Vfs::same_mount`) `EXDEV`, unless
    // `w.cross_mounts`, checked before anything else is asked of it. The
    // node reached is held once for the caller: `.` and `..` with
    // `w.nodes.hold`, a looked-up file is
    // `w.nodes.add(handle, &w.vfs.getattr(w.user, &handle)?, dir)`.
    // `make hint STEP=29` shows the match's shape, then a sketch.
    // Tests: "every file reads back by its path ..." and the checks after
    // it, "raw 9P: '..', names with '/', NULs, symlinks, walks from a
    // file ..." (which walks "one\0x" too), and "raw 9P: a walk onto a
    // mount inside the export gets EXDEV ...".
    let _ = (w, dir, name, NAME_MAX);
    Err(ENOSYS)
}
// ANCHOR_END: step

// ANCHOR: confined
/// Stage 29's reach: the export's tree, walked one name at a time by
/// [`step`]; listing a directory still gets `EOPNOTSUPP`.
pub(crate) struct Confined;

impl Reach for Confined {
    fn step<V: Vfs>(w: Walk<'_, V>, dir: NodeId, name: &[u8]) -> VResult<NodeId> {
        step(w, dir, name)
    }

    fn cross_mounts() -> bool {
        crate::cross_mounts()
    }
}
// ANCHOR_END: confined
