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
    let Walk {
        nodes,
        vfs,
        user,
        cross_mounts,
    } = w;
    let node = nodes.get(dir)?;
    if !node.is_dir() {
        return Err(ENOTDIR);
    }
    match name {
        b"" => Err(ENOENT),
        b"." => {
            nodes.hold(dir)?;
            Ok(dir)
        }
        b".." => {
            let up = node.parent.unwrap_or(dir);
            nodes.hold(up)?;
            Ok(up)
        }
        _ if name.contains(&b'/') || name.contains(&0) => Err(EINVAL),
        _ if name.len() > NAME_MAX => Err(ENAMETOOLONG),
        _ => {
            let handle = vfs.lookup(user, &node.handle, name)?;
            if !cross_mounts && !vfs.same_mount(&handle, &node.handle) {
                return Err(EXDEV);
            }
            let attr = vfs.getattr(user, &handle)?;
            nodes.add(handle, &attr, dir)
        }
    }
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
