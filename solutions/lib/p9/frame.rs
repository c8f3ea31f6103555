// SPDX-License-Identifier: GPL-2.0

//! The frame around every message: `size[4] type[1] tag[2]`, the type codes,
//! and the checks made before a message body is looked at.

use super::error::Error;
use super::wire::{
    Reader,
    Writer, //
};

/// The bytes before a message's own fields: `size[4] type[1] tag[2]`.
pub(crate) const HEADER_SIZE: usize = 7;

/// The bytes of an `Rread` or `Rreaddir` before its data: the header and
/// `count[4]`. A server clamps a read's `count` to `msize` minus this.
pub(crate) const RREAD_HEADER_SIZE: usize = HEADER_SIZE + 4;

/// The tag of a message outside any transaction (`Tversion`).
pub(crate) const NOTAG: u16 = !0;

/// The fid that stands for "no fid" (`afid` of an unauthenticated attach).
pub(crate) const NOFID: u32 = !0;

/// The most names one `Twalk` may carry (`P9_MAXWELEM`).
pub(crate) const MAX_WALK_ELEMENTS: usize = 16;

/// The protocol version this codec speaks.
pub(crate) const VERSION_9P2000_L: &[u8] = b"9P2000.L";

// ANCHOR: types
/// `Rlerror`: the 9P2000.L error reply.
pub(crate) const RLERROR: u8 = 7;
/// `Tstatfs`: file system statistics.
pub(crate) const TSTATFS: u8 = 8;
/// `Rstatfs`.
pub(crate) const RSTATFS: u8 = 9;
/// `Tlopen`: open a fid.
pub(crate) const TLOPEN: u8 = 12;
/// `Rlopen`.
pub(crate) const RLOPEN: u8 = 13;
/// `Treadlink`: read a symbolic link's target.
pub(crate) const TREADLINK: u8 = 22;
/// `Rreadlink`.
pub(crate) const RREADLINK: u8 = 23;
/// `Tgetattr`: `stat` a fid.
pub(crate) const TGETATTR: u8 = 24;
/// `Rgetattr`.
pub(crate) const RGETATTR: u8 = 25;
/// `Txattrwalk`: open an extended attribute.
pub(crate) const TXATTRWALK: u8 = 30;
/// `Treaddir`: read directory entries.
pub(crate) const TREADDIR: u8 = 40;
/// `Rreaddir`.
pub(crate) const RREADDIR: u8 = 41;
/// `Tversion`: negotiate version and `msize`.
pub(crate) const TVERSION: u8 = 100;
/// `Rversion`.
pub(crate) const RVERSION: u8 = 101;
/// `Tauth`: start authentication.
pub(crate) const TAUTH: u8 = 102;
/// `Tattach`: get a fid for the root of a tree.
pub(crate) const TATTACH: u8 = 104;
/// `Rattach`.
pub(crate) const RATTACH: u8 = 105;
/// `Tflush`: abort a pending request.
pub(crate) const TFLUSH: u8 = 108;
/// `Rflush`.
pub(crate) const RFLUSH: u8 = 109;
/// `Twalk`: walk a fid down a path.
pub(crate) const TWALK: u8 = 110;
/// `Rwalk`.
pub(crate) const RWALK: u8 = 111;
/// `Tread`: read from an open fid.
pub(crate) const TREAD: u8 = 116;
/// `Rread`.
pub(crate) const RREAD: u8 = 117;
/// `Tclunk`: forget a fid.
pub(crate) const TCLUNK: u8 = 120;
/// `Rclunk`.
pub(crate) const RCLUNK: u8 = 121;
// ANCHOR_END: types

// ANCHOR: header
/// The header of a frame, read before its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The whole frame's length, `size` field included.
    pub(crate) size: u32,
    /// The message type code.
    pub(crate) ty: u8,
    /// The tag that pairs a reply with its request.
    pub(crate) tag: u16,
}

/// Reads and checks the header at the start of `buf`.
///
/// A server calls this first when a message fails to decode: the tag lets it
/// answer even an unknown message with an `Rlerror`.
pub(crate) fn read_header(buf: &[u8], msize: u32) -> Result<Header, Error> {
    let mut r = Reader::new(buf);
    let size = r.u32()?;
    let ty = r.u8()?;
    let tag = r.u16()?;
    if (size as usize) < HEADER_SIZE {
        return Err(Error::BadSize(size));
    }
    if size > msize {
        return Err(Error::TooLarge { size, msize });
    }
    if size as usize > buf.len() {
        return Err(Error::Truncated);
    }
    Ok(Header { size, ty, tag })
}
// ANCHOR_END: header

/// Checks the header and returns it with a reader over the body only.
///
/// Bytes after `size` belong to the next frame and are not looked at.
pub(crate) fn open(buf: &[u8], msize: u32) -> Result<(Header, Reader<'_>), Error> {
    let header = read_header(buf, msize)?;
    let body = buf
        .get(HEADER_SIZE..header.size as usize)
        .ok_or(Error::Truncated)?;
    Ok((header, Reader::new(body)))
}

// ANCHOR: frame
/// A decoded message with its tag; `M` is a `Request` or a `Reply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame<M> {
    /// The tag that pairs a reply with its request.
    pub(crate) tag: u16,
    /// The message.
    pub(crate) body: M,
}
// ANCHOR_END: frame

/// Starts a frame: a placeholder `size`, then `type` and `tag`.
pub(crate) fn begin(w: &mut Writer<'_>, ty: u8, tag: u16) -> Result<(), Error> {
    w.u32(0)?;
    w.u8(ty)?;
    w.u16(tag)
}

/// Ends a frame: patches `size` now that it is known; returns it.
pub(crate) fn end(mut w: Writer<'_>) -> Result<usize, Error> {
    let len = w.position();
    let size = u32::try_from(len).map_err(|_| Error::BufferTooSmall)?;
    w.patch_u32(0, size)?;
    Ok(len)
}
