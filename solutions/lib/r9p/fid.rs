// SPDX-License-Identifier: GPL-2.0

//! Fids: the client's numbers for files, and what the server keeps for each.
//!
//! A [`Fid`] is a node (`node.rs`: a file the client reached by walking)
//! plus, once the client opened it, the open file, and the user it acts for
//! (`U`, the policy's: `policy.rs`). Each connection has its own
//! [`FidTable`], owned by its task: no lock.

use crate::{
    node::Node,
    vfs::File, //
};
use kernel::{
    prelude::*,
    rbtree::RBTree,
    sync::Arc, //
};

// ANCHOR: fid
/// What a fid stands for.
pub(crate) struct Fid<U> {
    /// The file.
    pub(crate) node: Arc<Node>,
    /// The file opened for reading, after `Tlopen`.
    pub(crate) open: Option<File>,
    /// Whom requests on this fid act for.
    pub(crate) user: U,
}

/// One connection's fids.
pub(crate) struct FidTable<U> {
    /// Fid number to fid.
    fids: RBTree<u32, Fid<U>>,
    /// How many there are.
    len: usize,
    /// How many there may be.
    max: usize,
}
// ANCHOR_END: fid

impl<U> FidTable<U> {
    /// An empty table for at most `max` fids.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            fids: RBTree::new(),
            len: 0,
            max,
        }
    }

    /// The fid numbered `fid`; `EBADF` if there is none.
    pub(crate) fn get(&self, fid: u32) -> Result<&Fid<U>> {
        self.fids.get(&fid).ok_or(EBADF)
    }

    /// The fid numbered `fid`, to change it; `EBADF` if there is none.
    pub(crate) fn get_mut(&mut self, fid: u32) -> Result<&mut Fid<U>> {
        self.fids.get_mut(&fid).ok_or(EBADF)
    }

    /// Whether the connection holds no fid at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `fid` is in use.
    pub(crate) fn contains(&self, fid: u32) -> bool {
        self.fids.get(&fid).is_some()
    }

    // ANCHOR: insert
    /// Adds a fid for `node`, acting for `user`; `EEXIST` if the number is
    /// in use (a client must clunk a fid before it reuses its number),
    /// `EMFILE` if the connection holds `max` fids already: the client gets
    /// `Rlerror`, and may clunk some and go on.
    pub(crate) fn insert(&mut self, fid: u32, node: Arc<Node>, user: U) -> Result {
        if self.contains(fid) {
            return Err(EEXIST);
        }
        if self.len >= self.max {
            return Err(EMFILE);
        }
        let new = Fid {
            node,
            open: None,
            user,
        };
        self.fids.try_create_and_insert(fid, new, GFP_KERNEL)?;
        self.len += 1;
        Ok(())
    }
    // ANCHOR_END: insert

    /// Forgets `fid` (`Tclunk`); `EBADF` if there is none. Dropping it
    /// closes its files.
    pub(crate) fn remove(&mut self, fid: u32) -> Result<Fid<U>> {
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
