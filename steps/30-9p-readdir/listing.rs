// SPDX-License-Identifier: GPL-2.0

//! Listing a directory: `Treaddir`'s entries, each with the position where
//! the listing continues after it.
//!
//! Stage 28's server answers `Treaddir` by calling its namespace's
//! `readdir`; the namespace of stage 30, [`Listed`], calls [`readdir`].

use crate::{
    node::Node,
    p9::{
        dirent::{
            encode_rreaddir,
            Dirent, //
        },
        qid::{
            Qid,
            QTDIR,
            QTFILE,
            QTSYMLINK, //
        },
        request::Treaddir, //
    },
    server::Namespace,
    vfs::File,
    walk, //
};
use kernel::{
    bindings,
    prelude::*,
    sync::Arc, //
};

// ANCHOR: readdir
/// `Treaddir`: as many entries as fit in `limit` bytes, from `t.offset`.
///
/// Each entry carries the offset the client passes to continue *after*
/// it: the position of the entry that follows it. The file system hands
/// an entry its own position, so each entry learns its offset from the
/// next one, and the last from what `File::readdir` returns: the
/// position of the first entry it did not take.
pub(crate) fn readdir(
    file: &File,
    t: Treaddir,
    limit: usize,
    tag: u16,
    out: &mut [u8],
) -> Result<usize> {
    // TODO (exercise 1): Answer `Treaddir`: the entries of `file` (an
    // open directory) from position `t.offset`, as many as fit in
    // `limit` bytes (the server took `count` and `msize` into it); an
    // entry takes `Dirent::FIXED_SIZE` bytes and its name.
    // `File::readdir` calls a closure for each entry (return `false` to
    // stop: that entry is not taken) and returns the position of the
    // first entry it did not take, where a next listing continues.
    // The contract:
    // - An entry's `offset` is where the client resumes to get the
    //   entries *after* it. Positions belong to the file system, which
    //   gives each entry its own (`e.pos`): on tmpfs they count up, on
    //   ext4 they are 64-bit hashes of the names. Never compute one.
    // - Every entry exactly once, whatever `count` the client asks for:
    //   resuming must neither repeat nor skip an entry, and reach the end.
    // - An entry's qid path is its inode number, as in `Tgetattr`'s qid.
    // - An empty reply means "the end of the directory": when not even
    //   one entry fits, answer `EMSGSIZE`; an allocation that fails,
    //   `ENOMEM`.
    // - Encode with `encode_rreaddir(tag, t.count, dirents, out)`; the
    //   answer is the outcome's `len`.
    // `make hint STEP=30` shows the shape, then a sketch.
    // Tests: the "msize=... cache=...: diff -r of the export and the
    // mount is clean" and "... find -printf ... is identical" checks,
    // "the 2000-entry directory lists the same names", "the inode numbers
    // of the directory entries are the files'", the "an ext4 export"
    // checks, and "raw 9P: a directory listed in pieces ..."
    // (each listing has its own deadline).
    let _ = (
        file,
        t,
        limit,
        tag,
        out,
        qid_type,
        encode_rreaddir::<core::iter::Empty<Dirent<'_>>>,
    );
    Err(ENOSYS)
}
// ANCHOR_END: readdir

/// One entry of a `Treaddir` reply, before its offset is known.
struct Entry {
    qid: Qid,
    /// The entry's own position.
    pos: u64,
    dtype: u8,
    /// Where its name is in the names buffer.
    name: core::ops::Range<usize>,
}

/// A qid type for a directory entry's `d_type`.
fn qid_type(dtype: u8) -> u8 {
    match u32::from(dtype) {
        bindings::DT_DIR => QTDIR,
        bindings::DT_LNK => QTSYMLINK,
        _ => QTFILE,
    }
}

// ANCHOR: namespace
/// Stage 30's namespace: the export's tree, walked as in stage 29, and its
/// directories listed by [`readdir`].
pub(crate) struct Listed;

impl Namespace for Listed {
    fn step(dir: &Arc<Node>, name: &[u8]) -> Result<Arc<Node>> {
        walk::step(dir, name)
    }

    fn readdir(file: &File, t: Treaddir, limit: usize, tag: u16, out: &mut [u8]) -> Result<usize> {
        readdir(file, t, limit, tag, out)
    }
}
// ANCHOR_END: namespace
