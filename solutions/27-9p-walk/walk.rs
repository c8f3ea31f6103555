// SPDX-License-Identifier: GPL-2.0

//! Walking: one name at a time, from a directory the client holds, and never
//! out of the export. The confinement argument of chapter 27 lives here.
//!
//! Stage 26's server answers `Twalk` by calling its namespace's `step` for
//! each name; the namespace of stage 27 (and 28) calls [`step`].

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
            Node::new(dir.file.lookup(cname)?, Some(dir.clone()))
        }
    }
}
// ANCHOR_END: step
