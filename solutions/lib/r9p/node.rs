// SPDX-License-Identifier: GPL-2.0

//! Nodes: the files a client reached by walking from the export root.
//!
//! A [`Node`] is a path handle (`O_PATH`), its qid, and the node it was
//! reached from. The chain of parents is what `..` walks back along, so
//! `..` can never leave the export: the root has no parent.

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
    sync::Arc, //
};

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
