// SPDX-License-Identifier: GPL-2.0

//! Fids: the client's numbers for files, and what the server keeps for each.
//!
//! A [`Node`] is a file the client reached by walking from the export root:
//! a path handle (`O_PATH`), its qid, and the node it was reached from. The
//! chain of parents is what `..` walks back along, so `..` can never leave
//! the export: the root has no parent. A [`Fid`] is a node plus, once the
//! client opened it, the open file. Each connection has its own
//! [`FidTable`], owned by its task: no lock.

use crate::{
    p9::qid::{
        Qid,
        QTDIR,
        QTFILE,
        QTSYMLINK, //
    },
    vfs::File, //
};
use kernel::{
    bindings,
    prelude::*,
    rbtree::RBTree,
    sync::Arc, //
};

/// The most fids one connection may hold: a v9fs mount with `cache=loose`
/// keeps one per cached dentry.
const MAX_FIDS: usize = 1 << 16;

// ANCHOR: node
/// A file reached by walking from the export root.
pub(crate) struct Node {
    /// A path handle on the file: it names the file without opening it, and
    /// a symlink's handle names the link itself.
    pub(crate) file: File,
    /// The file's qid, from `getattr` when the node was made.
    pub(crate) qid: Qid,
    /// The directory this node was walked to from; `None` for the root.
    pub(crate) parent: Option<Arc<Node>>,
}

impl Node {
    /// A node for `file`, reached from `parent` (`None`: the export root).
    pub(crate) fn new(file: File, parent: Option<Arc<Node>>) -> Result<Arc<Self>> {
        let qid = qid_of(&file.getattr()?);
        Ok(Arc::new(Node { file, qid, parent }, GFP_KERNEL)?)
    }

    /// Whether the node is a directory.
    pub(crate) fn is_dir(&self) -> bool {
        self.qid.ty & QTDIR != 0
    }

    /// Whether the node is a symlink.
    pub(crate) fn is_symlink(&self) -> bool {
        self.qid.ty & QTSYMLINK != 0
    }
}

impl Drop for Node {
    /// Releases the chain of parents one at a time: a recursive drop of a
    /// deep chain could overflow the kernel stack.
    fn drop(&mut self) {
        let mut next = self.parent.take();
        while let Some(node) = next {
            next = Arc::into_unique_or_drop(node).and_then(|mut last| last.as_mut().parent.take());
        }
    }
}
// ANCHOR_END: node

/// The qid of a file with status `stat`: its type from the mode, the inode
/// number as its unique path.
pub(crate) fn qid_of(stat: &bindings::kstat) -> Qid {
    let ty = match u32::from(stat.mode) & bindings::S_IFMT {
        bindings::S_IFDIR => QTDIR,
        bindings::S_IFLNK => QTSYMLINK,
        _ => QTFILE,
    };
    Qid {
        ty,
        version: 0,
        path: stat.ino,
    }
}

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
