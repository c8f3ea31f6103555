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
    /// The device of the export root's file system (`qid_of` folds any
    /// other into the qid).
    pub(crate) export_dev: bindings::dev_t,
    /// The directory this node was walked to from; `None` for the root.
    pub(crate) parent: Option<Arc<Node>>,
}

impl Node {
    /// A node for `file`, reached from `parent` (`None`: the export root).
    pub(crate) fn new(file: File, parent: Option<Arc<Node>>) -> Result<Arc<Self>> {
        let stat = file.getattr()?;
        let export_dev = parent.as_ref().map_or(stat.dev, |p| p.export_dev);
        let qid = qid_of(&stat, export_dev);
        Ok(Arc::new(
            Node {
                file,
                qid,
                export_dev,
                parent,
            },
            GFP_KERNEL,
        )?)
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

// ANCHOR: qid_of
/// The qid of a file with status `stat`, in an export whose root is on the
/// device `export_dev`: its type from the mode, and a path unique among the
/// export's files ([`unique_path`]).
pub(crate) fn qid_of(stat: &bindings::kstat, export_dev: bindings::dev_t) -> Qid {
    let ty = match u32::from(stat.mode) & bindings::S_IFMT {
        bindings::S_IFDIR => QTDIR,
        bindings::S_IFLNK => QTSYMLINK,
        _ => QTFILE,
    };
    Qid {
        ty,
        version: 0,
        path: unique_path(stat, export_dev),
    }
}

/// A file of another file system than the export root's (a mount crossed
/// with `cross_mounts=1`) has this bit set in its qid path.
const FOREIGN: u64 = 1 << 63;

/// The qid path of a file: v9fs takes it for the inode's identity (and,
/// with `cache=loose`, finds cached pages by it), so two files must never
/// share one. An inode number is unique on one file system only: on the
/// export root's, the path is the inode number; on another, it is the
/// device folded in above the low 32 bits, with [`FOREIGN`] set (QEMU's
/// `multidevs=remap` keeps a table of device prefixes for the same
/// reason). Exact while the other file systems' inode numbers fit in 32
/// bits (tmpfs, ext4) and the export's stay below 2^63.
fn unique_path(stat: &bindings::kstat, export_dev: bindings::dev_t) -> u64 {
    if stat.dev == export_dev {
        stat.ino
    } else {
        FOREIGN | ((u64::from(stat.dev) << 32) ^ stat.ino)
    }
}
// ANCHOR_END: qid_of
