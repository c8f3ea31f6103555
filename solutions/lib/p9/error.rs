// SPDX-License-Identifier: GPL-2.0

//! The one error type of the codec, and the errno a server replies with.

use core::fmt;

/// Linux errno values used in `Rlerror` replies (from `errno.h`).
///
/// The codec is `core`-only, so it cannot name `kernel::error::code`; these
/// are the same numbers the v9fs client turns back into `-errno`.
pub(crate) mod errno {
    /// No such file or directory.
    pub(crate) const ENOENT: u32 = 2;
    /// Input/output error.
    pub(crate) const EIO: u32 = 5;
    /// Bad file descriptor: no such fid, or a fid not open.
    pub(crate) const EBADF: u32 = 9;
    /// Resource temporarily unavailable (a lease, with `O_NONBLOCK`).
    pub(crate) const EAGAIN: u32 = 11;
    /// Out of memory.
    pub(crate) const ENOMEM: u32 = 12;
    /// Permission denied.
    pub(crate) const EACCES: u32 = 13;
    /// The fid number is in use.
    pub(crate) const EEXIST: u32 = 17;
    /// The name is on another file system (a mount inside the export).
    pub(crate) const EXDEV: u32 = 18;
    /// Not a directory.
    pub(crate) const ENOTDIR: u32 = 20;
    /// Is a directory.
    pub(crate) const EISDIR: u32 = 21;
    /// Invalid argument.
    pub(crate) const EINVAL: u32 = 22;
    /// Too many fids, or walked names.
    pub(crate) const EMFILE: u32 = 24;
    /// Read-only file system.
    pub(crate) const EROFS: u32 = 30;
    /// A name longer than `NAME_MAX`, or a link target longer than `msize`.
    pub(crate) const ENAMETOOLONG: u32 = 36;
    /// Function not implemented: a skeleton's exercise, not done yet.
    pub(crate) const ENOSYS: u32 = 38;
    /// A symlink where a file was wanted.
    pub(crate) const ELOOP: u32 = 40;
    /// No data available (no such extended attribute).
    pub(crate) const ENODATA: u32 = 61;
    /// Protocol error.
    pub(crate) const EPROTO: u32 = 71;
    /// Message too long.
    pub(crate) const EMSGSIZE: u32 = 90;
    /// Operation not supported.
    pub(crate) const EOPNOTSUPP: u32 = 95;
}

// ANCHOR: error
/// Everything that can go wrong while decoding or encoding a 9P message.
///
/// Decoding never panics: every malformed input maps to one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Error {
    /// The buffer ends before the frame, or a field inside it, does.
    Truncated,
    /// The `size` field is smaller than the 7-byte header it includes.
    BadSize(u32),
    /// The `size` field exceeds the negotiated `msize`.
    TooLarge {
        /// The frame's `size` field.
        size: u32,
        /// The negotiated maximum message size.
        msize: u32,
    },
    /// The message's fields end this many bytes before its frame does.
    TrailingBytes(usize),
    /// A type code this codec does not implement in this direction.
    UnknownType(u8),
    /// A reply's type code where a request was expected, or vice versa
    /// (requests have even codes, replies odd ones).
    WrongDirection(u8),
    /// A `Twalk` or `Rwalk` with more than 16 elements.
    TooManyWalkElements(u16),
    /// Encoding: the caller's buffer cannot hold the message.
    BufferTooSmall,
    /// Encoding: a string longer than the 65535 bytes its `u16` length allows.
    StringTooLong(usize),
}
// ANCHOR_END: error

impl Error {
    /// The errno a server puts in the `Rlerror` it answers a bad request with.
    pub(crate) fn errno(&self) -> u32 {
        match self {
            Error::UnknownType(_) | Error::WrongDirection(_) => errno::EOPNOTSUPP,
            Error::TooLarge { .. } | Error::BufferTooSmall | Error::StringTooLong(_) => {
                errno::EMSGSIZE
            }
            Error::Truncated
            | Error::BadSize(_)
            | Error::TrailingBytes(_)
            | Error::TooManyWalkElements(_) => errno::EPROTO,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated => f.write_str("message truncated"),
            Error::BadSize(size) => write!(f, "frame size {size} is below the 7-byte header"),
            Error::TooLarge { size, msize } => {
                write!(f, "frame size {size} exceeds msize {msize}")
            }
            Error::TrailingBytes(n) => write!(f, "{n} trailing bytes after the message"),
            Error::UnknownType(ty) => write!(f, "unknown message type {ty}"),
            Error::WrongDirection(ty) => write!(f, "message type {ty} in the wrong direction"),
            Error::TooManyWalkElements(n) => write!(f, "{n} walk elements (at most 16)"),
            Error::BufferTooSmall => f.write_str("output buffer too small"),
            Error::StringTooLong(n) => write!(f, "string of {n} bytes (at most 65535)"),
        }
    }
}
