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
    if !dir.is_dir() {
        return Err(ENOTDIR);
    }
    match name {
        b"" => Err(ENOENT),
        b"." => Ok(dir.clone()),
        b".." => Ok(dir.parent.clone().unwrap_or_else(|| dir.clone())),
        _ if name.contains(&b'/') || name.contains(&0) => Err(EINVAL),
        _ if name.len() > NAME_MAX => Err(ENAMETOOLONG),
        _ => {
            let mut buf = [0u8; NAME_MAX + 1];
            buf.get_mut(..name.len())
                .ok_or(ENAMETOOLONG)?
                .copy_from_slice(name);
            let cname = CStr::from_bytes_until_nul(&buf).map_err(|_| EINVAL)?;
            let file = dir.file.lookup(cname)?;
            if !may_cross() && !file.same_mount(&dir.file) {
                return Err(EXDEV);
            }
            Node::new(file, Some(dir.clone()))
        }
    }
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
