// SPDX-License-Identifier: GPL-2.0

//! The qid: a server's 13-byte identity for a file.

/// `qid.type` bit: the file is a directory.
pub(crate) const QTDIR: u8 = 0x80;
/// `qid.type` bit: the file is a symbolic link.
pub(crate) const QTSYMLINK: u8 = 0x02;
/// `qid.type` of a plain file: no bits set.
pub(crate) const QTFILE: u8 = 0x00;

// ANCHOR: qid
/// A qid: `type[1] version[4] path[8]` on the wire.
///
/// `path` plays the role of an inode number: two qids with the same `path`
/// name the same file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Qid {
    /// What kind of file this is (`QTDIR`, `QTSYMLINK`, `QTFILE`, ...).
    pub(crate) ty: u8,
    /// A version number that changes when the file does.
    pub(crate) version: u32,
    /// The server's unique number for the file.
    pub(crate) path: u64,
}
// ANCHOR_END: qid

impl Qid {
    /// The number of bytes a qid takes on the wire.
    pub(crate) const WIRE_SIZE: usize = 13;
}
