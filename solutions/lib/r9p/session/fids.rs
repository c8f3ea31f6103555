// SPDX-License-Identifier: GPL-2.0

//! Fids: the client's numbers for files, and what the session keeps for
//! each: the node, once opened the open file, and the user it acts for.

use super::{
    nodes::NodeId,
    vfs::{
        Table,
        VResult,
        Vfs, //
    }, //
};
use crate::p9::error::errno::*;

// ANCHOR: fid
/// What a fid stands for.
pub(crate) struct Fid<V: Vfs> {
    /// The file (a node of the connection's table, which the fid holds).
    pub(crate) node: NodeId,
    /// The file opened for reading, after `Tlopen`.
    pub(crate) open: Option<V::File>,
    /// Whom requests on this fid act for.
    pub(crate) user: V::User,
    /// That user's uid (65534 for a squashed root).
    pub(crate) uid: u32,
}

/// One connection's fids.
pub(crate) struct Fids<V: Vfs> {
    table: V::Table<Fid<V>>,
    /// How many there are.
    len: usize,
    /// How many there may be.
    max: usize,
}
// ANCHOR_END: fid

impl<V: Vfs> Fids<V> {
    /// An empty table for at most `max` fids.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            table: Default::default(),
            len: 0,
            max,
        }
    }

    /// The fid numbered `fid`; `EBADF` if there is none.
    pub(crate) fn get(&self, fid: u32) -> VResult<&Fid<V>> {
        self.table.get(u64::from(fid)).ok_or(EBADF)
    }

    /// The fid numbered `fid`, to change it; `EBADF` if there is none.
    pub(crate) fn get_mut(&mut self, fid: u32) -> VResult<&mut Fid<V>> {
        self.table.get_mut(u64::from(fid)).ok_or(EBADF)
    }

    /// How many fids the connection holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether `fid` is in use.
    pub(crate) fn contains(&self, fid: u32) -> bool {
        self.table.get(u64::from(fid)).is_some()
    }

    // ANCHOR: insert
    /// Adds `new` as `fid`; `EEXIST` if the number is in use (a client
    /// must clunk a fid before it reuses its number), `EMFILE` if the
    /// connection holds `max` fids already. On an error `new` is dropped,
    /// and the caller releases its node.
    pub(crate) fn insert(&mut self, fid: u32, new: Fid<V>) -> VResult<()> {
        if self.contains(fid) {
            return Err(EEXIST);
        }
        if self.len >= self.max {
            return Err(EMFILE);
        }
        self.table.insert(u64::from(fid), new)?;
        self.len += 1;
        Ok(())
    }
    // ANCHOR_END: insert

    /// Forgets `fid` (`Tclunk`); `EBADF` if there is none. The caller
    /// releases its node.
    pub(crate) fn remove(&mut self, fid: u32) -> VResult<Fid<V>> {
        let removed = self.table.remove(u64::from(fid)).ok_or(EBADF)?;
        self.len -= 1;
        Ok(removed)
    }
}
