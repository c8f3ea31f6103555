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
    // TODO (exercise 1): Walk one name from `dir`, confined to the export,
    // by the rules in this function's documentation. Think about what each
    // rule stops: the name reaches the VFS as a C string, one component,
    // so what would `..`, `a/b` or `one\0x` reach if passed on as it is?
    // Errors: `dir` not a directory `ENOTDIR`; an empty name `ENOENT`; a
    // `/` or a NUL byte `EINVAL`; longer than `NAME_MAX` `ENAMETOOLONG`;
    // else what `dir.file.lookup` (one component, symlinks not followed)
    // returns; the node found is `Node::new(file, Some(dir.clone()))`.
    // `make hint STEP=27` shows the match's shape, then a sketch.
    // Tests: "every file reads back by its path ..." and the checks after
    // it, and "raw 9P: '..', names with '/', NULs, symlinks, walks from a
    // file ..." (which walks "one\0x" too).
    let _ = (dir, name, CStr::from_bytes_until_nul);
    Err(ENOSYS)
}
// ANCHOR_END: step
