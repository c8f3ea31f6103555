// SPDX-License-Identifier: GPL-2.0

//! Fids: the client's numbers for files, and what the server keeps for each.
//!
//! A [`Fid`] is a node (`node.rs`: a file the client reached by walking)
//! plus, once the client opened it, the open file. Each connection has its
//! own [`FidTable`], owned by its task: no lock.

use crate::{
    node::Node,
    vfs::File, //
};
use kernel::{
    prelude::*,
    rbtree::RBTree,
    sync::Arc, //
};

/// The most fids one connection may hold: a v9fs mount with `cache=loose`
/// keeps one per cached dentry.
const MAX_FIDS: usize = 1 << 16;

// ANCHOR: fid
/// What a fid stands for.
pub(crate) struct Fid {
    /// The file.
    pub(crate) node: Arc<Node>,
    /// The file opened for reading, after `Tlopen`.
    pub(crate) open: Option<File>,
}

/// One connection's fids.
pub(crate) struct FidTable {
    /// Fid number to fid.
    fids: RBTree<u32, Fid>,
    /// How many there are.
    len: usize,
}

impl FidTable {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Self {
            fids: RBTree::new(),
            len: 0,
        }
    }

    /// The fid numbered `fid`; `EBADF` if there is none.
    pub(crate) fn get(&self, fid: u32) -> Result<&Fid> {
        self.fids.get(&fid).ok_or(EBADF)
    }

    /// The fid numbered `fid`, to change it; `EBADF` if there is none.
    pub(crate) fn get_mut(&mut self, fid: u32) -> Result<&mut Fid> {
        self.fids.get_mut(&fid).ok_or(EBADF)
    }

    /// Whether `fid` is in use.
    pub(crate) fn contains(&self, fid: u32) -> bool {
        self.fids.get(&fid).is_some()
    }

    /// Adds a fid for `node`; `EEXIST` if the number is in use (a client
    /// must clunk a fid before it reuses its number).
    pub(crate) fn insert(&mut self, fid: u32, node: Arc<Node>) -> Result {
        if self.contains(fid) {
            return Err(EEXIST);
        }
        if self.len >= MAX_FIDS {
            return Err(ENFILE);
        }
        self.fids
            .try_create_and_insert(fid, Fid { node, open: None }, GFP_KERNEL)?;
        self.len += 1;
        Ok(())
    }

    /// Forgets `fid` (`Tclunk`); `EBADF` if there is none. Dropping it
    /// closes its files.
    pub(crate) fn remove(&mut self, fid: u32) -> Result<Fid> {
        let removed = self.fids.remove(&fid).ok_or(EBADF)?;
        self.len -= 1;
        Ok(removed)
    }

    /// Forgets every fid (a new `Tversion` starts a new session).
    pub(crate) fn clear(&mut self) {
        self.fids = RBTree::new();
        self.len = 0;
    }
}
// ANCHOR_END: fid
