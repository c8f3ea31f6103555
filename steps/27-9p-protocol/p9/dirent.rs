// SPDX-License-Identifier: GPL-2.0

//! Directory entries: the payload of `Rreaddir`, and the encoder that packs
//! as many as fit into the client's `count`.

use super::error::Error;
use super::frame;
use super::qid::Qid;
use super::wire::{
    Reader,
    Writer, //
};

/// `Dirent.ty` of a directory (`DT_DIR`).
pub(crate) const DT_DIR: u8 = 4;
/// `Dirent.ty` of a regular file (`DT_REG`).
pub(crate) const DT_REG: u8 = 8;
/// `Dirent.ty` of a symbolic link (`DT_LNK`).
pub(crate) const DT_LNK: u8 = 10;

// ANCHOR: dirent
/// One directory entry: `qid[13] offset[8] type[1] name[s]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dirent<'a> {
    /// The entry's qid.
    pub(crate) qid: Qid,
    /// The offset a `Treaddir` passes to continue after this entry.
    pub(crate) offset: u64,
    /// The `d_type` of the entry (`DT_DIR`, `DT_REG`, `DT_LNK`, ...).
    pub(crate) ty: u8,
    /// The entry's name.
    pub(crate) name: &'a [u8],
}
// ANCHOR_END: dirent

impl<'a> Dirent<'a> {
    /// The bytes before the name: `qid[13] offset[8] type[1]` and `len[2]`.
    pub(crate) const FIXED_SIZE: usize = Qid::WIRE_SIZE + 8 + 1 + 2;

    /// How many bytes this entry takes on the wire.
    pub(crate) fn wire_len(&self) -> usize {
        Self::FIXED_SIZE.saturating_add(self.name.len())
    }

    /// Decodes one entry.
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(Dirent {
            qid: r.qid()?,
            offset: r.u64()?,
            ty: r.u8()?,
            name: r.string()?,
        })
    }

    /// Encodes one entry.
    pub(crate) fn encode(&self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.qid(&self.qid)?;
        w.u64(self.offset)?;
        w.u8(self.ty)?;
        w.string(self.name)
    }
}

/// The `data` of an `Rreaddir`: whole entries back to back, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dirents<'a> {
    /// Exactly the bytes of the entries.
    bytes: &'a [u8],
}

impl<'a> Dirents<'a> {
    /// Checks that `bytes` is a sequence of whole entries and keeps it.
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        let mut r = Reader::new(bytes);
        while r.remaining() > 0 {
            Dirent::decode(&mut r)?;
        }
        Ok(Dirents { bytes })
    }

    /// The entries' bytes as they are on the wire.
    pub(crate) fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The entries, borrowed from the message.
    pub(crate) fn iter(&self) -> DirentsIter<'a> {
        DirentsIter {
            reader: Reader::new(self.bytes),
        }
    }
}

/// The iterator of `Dirents::iter`.
#[derive(Debug, Clone)]
pub(crate) struct DirentsIter<'a> {
    /// The entries not yet returned.
    reader: Reader<'a>,
}

impl<'a> Iterator for DirentsIter<'a> {
    type Item = Dirent<'a>;

    fn next(&mut self) -> Option<Dirent<'a>> {
        // `Dirents::new` checked the bytes; an error here only ends the
        // iteration early and cannot read out of bounds.
        Dirent::decode(&mut self.reader).ok()
    }
}

/// What `encode_rreaddir` wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReaddirOutcome {
    /// The length of the whole `Rreaddir` frame in the buffer.
    pub(crate) len: usize,
    /// How many entries it holds; the next `Treaddir` continues from the
    /// `offset` of the last of them.
    pub(crate) entries: usize,
}

// ANCHOR: encode_rreaddir
// ANCHOR: encode_rreaddir_signature
/// Encodes `size[4] Rreaddir tag[2] count[4] data[count]` into `buf`, with as
/// many of `entries` as fit both in `count` bytes of data and in `buf`.
///
/// It stops before the first entry that would not fit; that entry and the
/// rest are not consumed into the reply, and the client asks for them again
/// from the last offset it got. An empty iterator gives an empty reply: the
/// end of the directory. If not even the first entry fits, the reply would
/// wrongly say "end of directory", so that is `Error::BufferTooSmall`.
pub(crate) fn encode_rreaddir<'e, I>(
    tag: u16,
    count: u32,
    entries: I,
    buf: &mut [u8],
) -> Result<ReaddirOutcome, Error>
where
    I: IntoIterator<Item = Dirent<'e>>,
    // ANCHOR_END: encode_rreaddir_signature
{
    // TODO (exercise 2): encode `size[4] Rreaddir tag[2] count[4] data[count]`.
    // - Make a `Writer::new(buf)` and start the frame with
    //   `frame::begin(&mut w, frame::RREADDIR, tag)?`.
    // - Note `w.position()` and write a placeholder `w.u32(0)?` for `count`:
    //   the real value is known only when the entries are written.
    // - The data may take at most `limit` bytes: the smaller of `count`
    //   (as a `usize`) and `w.space()`, what is left of `buf`.
    // - For each entry: if the bytes used so far plus `entry.wire_len()`
    //   exceed `limit`, stop; but if no entry was written yet, return
    //   `Err(Error::BufferTooSmall)` instead, because an empty reply would
    //   tell the client "end of directory". Else `entry.encode(&mut w)?`.
    // - Patch the data's length over the placeholder with
    //   `w.patch_u32(at, len)?`, close the frame with `frame::end(w)?` (it
    //   patches `size` and returns the frame's length) and return
    //   `Ok(ReaddirOutcome { len, entries })`.
    // Tests: `p9_vectors::rreaddir*`, `p9_proptest::rreaddir_fills_up_to_the_limit`.
    let _ = (tag, count, entries.into_iter(), buf, frame::RREADDIR); // delete this line
    Err(Error::BufferTooSmall)
}
// ANCHOR_END: encode_rreaddir
