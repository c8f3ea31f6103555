// SPDX-License-Identifier: GPL-2.0

//! The R-messages a read-only server sends back, and how each is laid out
//! after the `size[4] type[1] tag[2]` header.

use super::dirent::Dirents;
use super::error::Error;
use super::frame::{
    self,
    MAX_WALK_ELEMENTS, //
};
use super::qid::Qid;
use super::wire::{
    Reader,
    Writer, //
};

/// `Rgetattr.valid` bit: `mode` is filled in.
pub(crate) const GETATTR_MODE: u64 = 0x0000_0001;
/// `Rgetattr.valid` bit: `nlink`.
pub(crate) const GETATTR_NLINK: u64 = 0x0000_0002;
/// `Rgetattr.valid` bit: `uid`.
pub(crate) const GETATTR_UID: u64 = 0x0000_0004;
/// `Rgetattr.valid` bit: `gid`.
pub(crate) const GETATTR_GID: u64 = 0x0000_0008;
/// `Rgetattr.valid` bit: `rdev`.
pub(crate) const GETATTR_RDEV: u64 = 0x0000_0010;
/// `Rgetattr.valid` bit: `atime_*`.
pub(crate) const GETATTR_ATIME: u64 = 0x0000_0020;
/// `Rgetattr.valid` bit: `mtime_*`.
pub(crate) const GETATTR_MTIME: u64 = 0x0000_0040;
/// `Rgetattr.valid` bit: `ctime_*`.
pub(crate) const GETATTR_CTIME: u64 = 0x0000_0080;
/// `Rgetattr.valid` bit: `qid.path` (the inode number).
pub(crate) const GETATTR_INO: u64 = 0x0000_0100;
/// `Rgetattr.valid` bit: `size`.
pub(crate) const GETATTR_SIZE: u64 = 0x0000_0200;
/// `Rgetattr.valid` bit: `blocks`.
pub(crate) const GETATTR_BLOCKS: u64 = 0x0000_0400;
/// The fields of a classic `stat`: everything up to `GETATTR_BLOCKS`.
pub(crate) const GETATTR_BASIC: u64 = 0x0000_07ff;

/// `size[4] Rversion tag[2] msize[4] version[s]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rversion<'a> {
    /// The `msize` both sides use from now on (at most the client's).
    pub(crate) msize: u32,
    /// `9P2000.L`, or `unknown` to refuse.
    pub(crate) version: &'a [u8],
}

/// `size[4] Rattach tag[2] qid[13]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rattach {
    /// The qid of the tree's root.
    pub(crate) qid: Qid,
}

/// `size[4] Rwalk tag[2] nwqid[2] nwqid*(wqid[13])`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rwalk<'a> {
    /// One qid per name walked; fewer than asked means the walk stopped.
    pub(crate) qids: WalkQids<'a>,
}

/// `size[4] Rlopen tag[2] qid[13] iounit[4]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rlopen {
    /// The opened file's qid.
    pub(crate) qid: Qid,
    /// The largest read that is atomic, or 0 for "`msize` minus headers".
    pub(crate) iounit: u32,
}

/// `size[4] Rread tag[2] count[4] data[count]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rread<'a> {
    /// The bytes read; empty at the end of the file.
    pub(crate) data: &'a [u8],
}

/// `size[4] Rreaddir tag[2] count[4] data[count]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rreaddir<'a> {
    /// The entries; none at the end of the directory.
    pub(crate) data: Dirents<'a>,
}

// ANCHOR: rgetattr
/// `size[4] Rgetattr tag[2] valid[8] qid[13] mode[4] uid[4] gid[4] nlink[8]
/// rdev[8] size[8] blksize[8] blocks[8] atime_sec[8] atime_nsec[8]
/// mtime_sec[8] mtime_nsec[8] ctime_sec[8] ctime_nsec[8] btime_sec[8]
/// btime_nsec[8] gen[8] data_version[8]`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rgetattr {
    /// Which fields are filled in (`GETATTR_*` bits).
    pub(crate) valid: u64,
    /// The file's qid; `qid.path` is its inode number.
    pub(crate) qid: Qid,
    /// `st_mode`: type and permission bits.
    pub(crate) mode: u32,
    /// `st_uid`.
    pub(crate) uid: u32,
    /// `st_gid`.
    pub(crate) gid: u32,
    /// `st_nlink`.
    pub(crate) nlink: u64,
    /// `st_rdev`.
    pub(crate) rdev: u64,
    /// `st_size`, in bytes.
    pub(crate) size: u64,
    /// `st_blksize`.
    pub(crate) blksize: u64,
    /// `st_blocks`, in 512-byte units.
    pub(crate) blocks: u64,
    /// Last access, seconds.
    pub(crate) atime_sec: u64,
    /// Last access, nanoseconds.
    pub(crate) atime_nsec: u64,
    /// Last modification, seconds.
    pub(crate) mtime_sec: u64,
    /// Last modification, nanoseconds.
    pub(crate) mtime_nsec: u64,
    /// Last status change, seconds.
    pub(crate) ctime_sec: u64,
    /// Last status change, nanoseconds.
    pub(crate) ctime_nsec: u64,
    /// Birth, seconds (reserved: Linux ignores it).
    pub(crate) btime_sec: u64,
    /// Birth, nanoseconds (reserved).
    pub(crate) btime_nsec: u64,
    /// Inode generation (reserved).
    pub(crate) gen: u64,
    /// Data version (reserved).
    pub(crate) data_version: u64,
}
// ANCHOR_END: rgetattr

impl Rgetattr {
    /// Decodes the 153 bytes after the header, in wire order.
    fn decode(r: &mut Reader<'_>) -> Result<Self, Error> {
        Ok(Rgetattr {
            valid: r.u64()?,
            qid: r.qid()?,
            mode: r.u32()?,
            uid: r.u32()?,
            gid: r.u32()?,
            nlink: r.u64()?,
            rdev: r.u64()?,
            size: r.u64()?,
            blksize: r.u64()?,
            blocks: r.u64()?,
            atime_sec: r.u64()?,
            atime_nsec: r.u64()?,
            mtime_sec: r.u64()?,
            mtime_nsec: r.u64()?,
            ctime_sec: r.u64()?,
            ctime_nsec: r.u64()?,
            btime_sec: r.u64()?,
            btime_nsec: r.u64()?,
            gen: r.u64()?,
            data_version: r.u64()?,
        })
    }

    // ANCHOR: rgetattr_encode
    /// Encodes the fields after the header, in wire order.
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), Error> {
        w.u64(self.valid)?;
        w.qid(&self.qid)?;
        w.u32(self.mode)?;
        w.u32(self.uid)?;
        w.u32(self.gid)?;
        for v in [
            self.nlink,
            self.rdev,
            self.size,
            self.blksize,
            self.blocks,
            self.atime_sec,
            self.atime_nsec,
            self.mtime_sec,
            self.mtime_nsec,
            self.ctime_sec,
            self.ctime_nsec,
            self.btime_sec,
            self.btime_nsec,
            self.gen,
            self.data_version,
        ] {
            w.u64(v)?;
        }
        Ok(())
    }
    // ANCHOR_END: rgetattr_encode
}

/// `size[4] Rreadlink tag[2] target[s]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rreadlink<'a> {
    /// Where the link points.
    pub(crate) target: &'a [u8],
}

/// `size[4] Rstatfs tag[2] type[4] bsize[4] blocks[8] bfree[8] bavail[8]
/// files[8] ffree[8] fsid[8] namelen[4]`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rstatfs {
    /// The file system's magic number (`f_type`).
    pub(crate) fs_type: u32,
    /// The block size.
    pub(crate) bsize: u32,
    /// Total blocks.
    pub(crate) blocks: u64,
    /// Free blocks.
    pub(crate) bfree: u64,
    /// Free blocks for unprivileged users.
    pub(crate) bavail: u64,
    /// Total inodes.
    pub(crate) files: u64,
    /// Free inodes.
    pub(crate) ffree: u64,
    /// File system id.
    pub(crate) fsid: u64,
    /// Longest file name.
    pub(crate) namelen: u32,
}

/// `size[4] Rlerror tag[2] ecode[4]`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rlerror {
    /// A Linux errno, positive (`ENOENT` is 2).
    pub(crate) ecode: u32,
}

// ANCHOR: reply
/// A reply, as a server sends it. `'a` is the buffer its strings and data
/// live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply<'a> {
    /// `Rversion`.
    Version(Rversion<'a>),
    /// `Rattach`.
    Attach(Rattach),
    /// `Rflush`: no fields.
    Flush,
    /// `Rwalk`.
    Walk(Rwalk<'a>),
    /// `Rlopen`.
    Lopen(Rlopen),
    /// `Rread`.
    Read(Rread<'a>),
    /// `Rreaddir`.
    Readdir(Rreaddir<'a>),
    /// `Rgetattr`.
    Getattr(Rgetattr),
    /// `Rreadlink`.
    Readlink(Rreadlink<'a>),
    /// `Rstatfs`.
    Statfs(Rstatfs),
    /// `Rclunk`: no fields.
    Clunk,
    /// `Rlerror`: the answer to any request that failed.
    Lerror(Rlerror),
}
// ANCHOR_END: reply

impl<'a> Reply<'a> {
    /// The message's type code.
    pub(crate) fn message_type(&self) -> u8 {
        match self {
            Reply::Version(_) => frame::RVERSION,
            Reply::Attach(_) => frame::RATTACH,
            Reply::Flush => frame::RFLUSH,
            Reply::Walk(_) => frame::RWALK,
            Reply::Lopen(_) => frame::RLOPEN,
            Reply::Read(_) => frame::RREAD,
            Reply::Readdir(_) => frame::RREADDIR,
            Reply::Getattr(_) => frame::RGETATTR,
            Reply::Readlink(_) => frame::RREADLINK,
            Reply::Statfs(_) => frame::RSTATFS,
            Reply::Clunk => frame::RCLUNK,
            Reply::Lerror(_) => frame::RLERROR,
        }
    }

    /// Decodes the fields of a reply of type `ty` (the header is read).
    pub(crate) fn decode_body(ty: u8, r: &mut Reader<'a>) -> Result<Self, Error> {
        Ok(match ty {
            frame::RVERSION => Reply::Version(Rversion {
                msize: r.u32()?,
                version: r.string()?,
            }),
            frame::RATTACH => Reply::Attach(Rattach { qid: r.qid()? }),
            frame::RFLUSH => Reply::Flush,
            frame::RWALK => Reply::Walk(Rwalk {
                qids: WalkQids::decode(r)?,
            }),
            frame::RLOPEN => Reply::Lopen(Rlopen {
                qid: r.qid()?,
                iounit: r.u32()?,
            }),
            // ANCHOR: rread
            frame::RREAD => {
                // `count` is checked against the bytes left in the frame,
                // which `read_header` checked against `msize`.
                let count = r.u32()?;
                let len = usize::try_from(count).map_err(|_| Error::Truncated)?;
                Reply::Read(Rread {
                    data: r.bytes(len)?,
                })
            }
            // ANCHOR_END: rread
            frame::RREADDIR => {
                let count = r.u32()?;
                let len = usize::try_from(count).map_err(|_| Error::Truncated)?;
                Reply::Readdir(Rreaddir {
                    data: Dirents::new(r.bytes(len)?)?,
                })
            }
            frame::RGETATTR => Reply::Getattr(Rgetattr::decode(r)?),
            frame::RREADLINK => Reply::Readlink(Rreadlink {
                target: r.string()?,
            }),
            frame::RSTATFS => Reply::Statfs(Rstatfs {
                fs_type: r.u32()?,
                bsize: r.u32()?,
                blocks: r.u64()?,
                bfree: r.u64()?,
                bavail: r.u64()?,
                files: r.u64()?,
                ffree: r.u64()?,
                fsid: r.u64()?,
                namelen: r.u32()?,
            }),
            frame::RCLUNK => Reply::Clunk,
            frame::RLERROR => Reply::Lerror(Rlerror { ecode: r.u32()? }),
            ty if ty % 2 == 0 => return Err(Error::WrongDirection(ty)),
            ty => return Err(Error::UnknownType(ty)),
        })
    }

    /// Encodes the fields of this reply (the header is written).
    pub(crate) fn encode_body(&self, w: &mut Writer<'_>) -> Result<(), Error> {
        match self {
            Reply::Version(m) => {
                w.u32(m.msize)?;
                w.string(m.version)
            }
            Reply::Attach(Rattach { qid }) => w.qid(qid),
            Reply::Flush | Reply::Clunk => Ok(()),
            Reply::Walk(m) => m.qids.encode(w),
            Reply::Lopen(m) => {
                w.qid(&m.qid)?;
                w.u32(m.iounit)
            }
            Reply::Read(m) => data(w, m.data),
            Reply::Readdir(m) => data(w, m.data.as_bytes()),
            Reply::Getattr(m) => m.encode(w),
            Reply::Readlink(m) => w.string(m.target),
            Reply::Statfs(m) => {
                w.u32(m.fs_type)?;
                w.u32(m.bsize)?;
                w.u64(m.blocks)?;
                w.u64(m.bfree)?;
                w.u64(m.bavail)?;
                w.u64(m.files)?;
                w.u64(m.ffree)?;
                w.u64(m.fsid)?;
                w.u32(m.namelen)
            }
            Reply::Lerror(m) => w.u32(m.ecode),
        }
    }
}

/// Encodes `count[4] data[count]`.
fn data(w: &mut Writer<'_>, data: &[u8]) -> Result<(), Error> {
    let count = u32::try_from(data.len()).map_err(|_| Error::BufferTooSmall)?;
    w.u32(count)?;
    w.bytes(data)
}

/// The qids of an `Rwalk`: still in the received message (decoded, checked)
/// or a server's list (to encode).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkQids<'a> {
    /// Where the qids are.
    repr: QidsRepr<'a>,
}

/// The two places walk qids can be.
#[derive(Debug, Clone, Copy)]
enum QidsRepr<'a> {
    /// `count` qids back to back in `bytes` (13 bytes each).
    Wire {
        /// How many qids.
        count: u16,
        /// Exactly `13 * count` bytes.
        bytes: &'a [u8],
    },
    /// A server's qids, at most 16.
    List(&'a [Qid]),
}

impl<'a> WalkQids<'a> {
    /// Qids to encode; fails with more than 16.
    pub(crate) fn from_list(qids: &'a [Qid]) -> Result<Self, Error> {
        if qids.len() > MAX_WALK_ELEMENTS {
            let n = u16::try_from(qids.len()).unwrap_or(u16::MAX);
            return Err(Error::TooManyWalkElements(n));
        }
        Ok(WalkQids {
            repr: QidsRepr::List(qids),
        })
    }

    /// Decodes `nwqid[2] nwqid*(wqid[13])`, borrowing the qids.
    fn decode(r: &mut Reader<'a>) -> Result<Self, Error> {
        let count = r.u16()?;
        if usize::from(count) > MAX_WALK_ELEMENTS {
            return Err(Error::TooManyWalkElements(count));
        }
        // At most 16 * 13 bytes: the product cannot overflow.
        let bytes = r.bytes(usize::from(count) * Qid::WIRE_SIZE)?;
        Ok(WalkQids {
            repr: QidsRepr::Wire { count, bytes },
        })
    }

    /// How many qids there are.
    pub(crate) fn len(&self) -> usize {
        match self.repr {
            QidsRepr::Wire { count, .. } => usize::from(count),
            QidsRepr::List(qids) => qids.len(),
        }
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The qids in order.
    pub(crate) fn iter(&self) -> WalkQidsIter<'a> {
        match self.repr {
            QidsRepr::Wire { count, bytes } => WalkQidsIter::Wire {
                left: count,
                reader: Reader::new(bytes),
            },
            QidsRepr::List(qids) => WalkQidsIter::List(qids.iter()),
        }
    }

    /// Encodes `nwqid[2] nwqid*(wqid[13])`.
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), Error> {
        let count = u16::try_from(self.len()).map_err(|_| Error::TooManyWalkElements(u16::MAX))?;
        w.u16(count)?;
        for qid in self.iter() {
            w.qid(&qid)?;
        }
        Ok(())
    }
}

impl PartialEq for WalkQids<'_> {
    /// Equal when the qids are, wherever they are kept.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for WalkQids<'_> {}

/// The iterator of `WalkQids::iter`.
#[derive(Debug, Clone)]
pub(crate) enum WalkQidsIter<'a> {
    /// Over checked qids in a message.
    Wire {
        /// How many qids are still to come.
        left: u16,
        /// Their bytes.
        reader: Reader<'a>,
    },
    /// Over a server's list.
    List(core::slice::Iter<'a, Qid>),
}

impl Iterator for WalkQidsIter<'_> {
    type Item = Qid;

    fn next(&mut self) -> Option<Qid> {
        match self {
            WalkQidsIter::Wire { left, reader } => {
                *left = left.checked_sub(1)?;
                reader.qid().ok()
            }
            WalkQidsIter::List(qids) => qids.next().copied(),
        }
    }
}
