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
    let mut entries: KVec<Entry> = KVec::new();
    let mut names: KVec<u8> = KVec::new();
    let mut used = 0usize;
    let mut failed = false;
    let mut full = false;
    let end = file.readdir(t.offset, &mut |e| {
        let size = Dirent::FIXED_SIZE + e.name.len();
        if used + size > limit {
            full = true;
            return false;
        }
        let entry = Entry {
            qid: Qid {
                ty: qid_type(e.dtype),
                version: 0,
                path: e.ino,
            },
            pos: e.pos,
            dtype: e.dtype,
            name: names.len()..names.len() + e.name.len(),
        };
        if names.extend_from_slice(e.name, GFP_KERNEL).is_err()
            || entries.push(entry, GFP_KERNEL).is_err()
        {
            failed = true;
            return false;
        }
        used += size;
        true
    })?;
    if failed {
        return Err(ENOMEM);
    }
    // Not even one entry fits in `limit`: an empty reply would say "end
    // of directory".
    if entries.is_empty() && full {
        return Err(EMSGSIZE);
    }
    // Entry i continues at entry i + 1; the last at `end`.
    let dirents = entries.iter().enumerate().map(|(i, e)| Dirent {
        qid: e.qid,
        offset: entries.get(i + 1).map_or(end, |n| n.pos),
        ty: e.dtype,
        name: names.get(e.name.clone()).unwrap_or(&[]),
    });
    // What `limit` let in fits `out` (`msize` bytes): an error here would
    // be an entry that does not fit after all.
    encode_rreaddir(tag, t.count, dirents, out)
        .map(|outcome| outcome.len)
        .map_err(|_| EMSGSIZE)
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
