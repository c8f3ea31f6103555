// SPDX-License-Identifier: GPL-2.0

//! Listing a directory: the answer to `Treaddir`, and the offsets that let
//! a client continue where a reply ended. The idea of chapter 30 lives
//! here, in the core session's terms (`session.rs`'s [`Reach`]): the
//! kernel module and the host tests build this same file.
#![forbid(unsafe_code)]

use crate::p9::{
    dirent::{
        encode_rreaddir,
        Dirent, //
    },
    error::errno::EMSGSIZE,
    qid::{
        Qid,
        QTDIR,
        QTFILE,
        QTSYMLINK, //
    }, //
};
use crate::session::{
    nodes::{
        self,
        NodeId, //
    },
    vfs::{
        DirEntry,
        VResult,
        Vfs, //
    },
    Answer,
    Listing,
    Reach,
    Walk, //
};

// ANCHOR: readdir
/// `Treaddir`: as many entries as fit in `l.limit`, from `l.offset`.
///
/// Each entry carries the offset the client passes to continue *after*
/// it: the position of the entry that follows it. The file system
/// hands an entry its own position, so each entry learns its offset
/// from the next one, and the last from what `readdir` returns: the
/// position of the first entry it did not take. The entries wait in
/// `l.scratch` meanwhile ([`Record`]: each takes fewer bytes there than
/// in the reply, which fits in `msize`).
pub(crate) fn readdir<V: Vfs>(l: Listing<'_, V>) -> Answer {
    let (mut used, mut kept, mut full) = (0usize, 0usize, false);
    let scratch = l.scratch;
    let end = l.vfs.readdir(l.user, l.file, l.offset, &mut |e| {
        let size = Dirent::FIXED_SIZE + e.name.len();
        if used + size > l.limit || !Record::put(scratch, &mut kept, &e) {
            full = true;
            return false;
        }
        used += size;
        true
    })?;
    // Not even one entry fits in `limit`: an empty reply would say "end
    // of directory".
    if kept == 0 && full {
        return Err(EMSGSIZE);
    }
    let rest = scratch.get(..kept).unwrap_or(&[]);
    let mut records = Records { rest }.enumerate().peekable();
    let dirents = core::iter::from_fn(|| {
        let (_i, r) = records.next()?;
        // Where the client continues after `r`: the next entry's
        // position, or, after the last, where the listing stopped.
        let offset = records.peek().map_or(end, |(_, next)| next.pos);
        Some(Dirent {
            qid: Qid {
                ty: qid_type(r.dtype),
                version: 0,
                // An entry is on its directory's file system.
                path: nodes::qid_path(l.dir_dev, r.ino, l.export_dev),
            },
            offset,
            ty: r.dtype,
            name: r.name,
        })
    });
    // What `limit` let in fits `out` (`msize` bytes): an error here would
    // be an entry that does not fit after all.
    encode_rreaddir(l.tag, l.count, dirents, l.out)
        .map(|outcome| outcome.len)
        .map_err(|_| EMSGSIZE)
}
// ANCHOR_END: readdir

// ANCHOR: listed
/// Stage 30's reach: the export's tree, walked as in stage 29
/// (`walk.rs`), and its directories listed by [`readdir`].
pub(crate) struct Listed;

impl Reach for Listed {
    fn step<V: Vfs>(w: Walk<'_, V>, dir: NodeId, name: &[u8]) -> VResult<NodeId> {
        crate::walk::step(w, dir, name)
    }

    fn readdir<V: Vfs>(l: Listing<'_, V>) -> Answer {
        readdir(l)
    }

    fn cross_mounts() -> bool {
        crate::cross_mounts()
    }
}
// ANCHOR_END: listed

/// A qid type for a directory entry's `d_type`.
fn qid_type(dtype: u8) -> u8 {
    match dtype {
        crate::p9::dirent::DT_DIR => QTDIR,
        crate::p9::dirent::DT_LNK => QTSYMLINK,
        _ => QTFILE,
    }
}

/// One directory entry waiting in the data buffer for its offset:
/// `pos[8] ino[8] dtype[1] len[2] name[len]`, 19 bytes and the name,
/// fewer than its `Dirent` takes in the reply (24 and the name).
struct Record<'a> {
    pos: u64,
    ino: u64,
    dtype: u8,
    name: &'a [u8],
}

impl Record<'_> {
    /// The bytes before the name.
    const FIXED: usize = 8 + 8 + 1 + 2;

    /// Appends `e` at `*at` in `buf`; `false` if it does not fit.
    fn put(buf: &mut [u8], at: &mut usize, e: &DirEntry<'_>) -> bool {
        let Ok(len) = u16::try_from(e.name.len()) else {
            return false;
        };
        let Some(slot) = buf.get_mut(*at..*at + Self::FIXED + e.name.len()) else {
            return false;
        };
        let (fixed, name) = slot.split_at_mut(Self::FIXED);
        fixed[..8].copy_from_slice(&e.pos.to_le_bytes());
        fixed[8..16].copy_from_slice(&e.ino.to_le_bytes());
        fixed[16] = e.dtype;
        fixed[17..].copy_from_slice(&len.to_le_bytes());
        name.copy_from_slice(e.name);
        *at += slot.len();
        true
    }
}

/// The records in a buffer, in the order they were put.
struct Records<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let fixed = self.rest.get(..Record::FIXED)?;
        let len = usize::from(u16::from_le_bytes([fixed[17], fixed[18]]));
        let name = self.rest.get(Record::FIXED..Record::FIXED + len)?;
        let record = Record {
            pos: u64::from_le_bytes(fixed[..8].try_into().ok()?),
            ino: u64::from_le_bytes(fixed[8..16].try_into().ok()?),
            dtype: fixed[16],
            name,
        };
        self.rest = self.rest.get(Record::FIXED + len..)?;
        Some(record)
    }
}
