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
use core::sync::atomic::{
    AtomicUsize,
    Ordering, //
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
    /// The budget of walked names of the connection whose walk made this
    /// node (inherited from the parent): a node takes a name from it when
    /// made, and gives it back when dropped. `None` for the export root
    /// the module holds, and the nodes of nobody's walk.
    names: Option<Arc<Names>>,
    /// Whether this node took a name from `names` (a connection's root did
    /// not).
    charged: bool,
}

impl Node {
    /// A node for `file`, reached from `parent` (`None`: the export root).
    /// `EMFILE` if the connection whose node `parent` is holds all the
    /// walked names it may.
    pub(crate) fn new(file: File, parent: Option<Arc<Node>>) -> Result<Arc<Self>> {
        let stat = file.getattr()?;
        let export_dev = parent.as_ref().map_or(stat.dev, |p| p.export_dev);
        let qid = qid_of(&stat, export_dev);
        let names = parent.as_ref().and_then(|p| p.names.clone());
        if let Some(names) = &names {
            names.take()?;
        }
        // From here on the node's `Drop` gives the name back, even if the
        // allocation fails (`Arc::new` drops what it could not place).
        let node = Node {
            file,
            qid,
            export_dev,
            parent,
            charged: names.is_some(),
            names,
        };
        Ok(Arc::new(node, GFP_KERNEL)?)
    }

    // ANCHOR: connection_root
    /// A connection's own node for the export root `root` (the same file,
    /// one more reference), whose descendants take their names from
    /// `names`: what one connection's walks keep alive is counted, and
    /// bounded, whichever of its fids holds it.
    pub(crate) fn connection_root(root: &Node, names: Arc<Names>) -> Result<Arc<Self>> {
        let node = Node {
            file: root.file.clone(),
            qid: root.qid,
            export_dev: root.export_dev,
            parent: None,
            names: Some(names),
            charged: false,
        };
        Ok(Arc::new(node, GFP_KERNEL)?)
    }
    // ANCHOR_END: connection_root

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
        if self.charged {
            if let Some(names) = &self.names {
                names.give_back();
            }
        }
        let mut next = self.parent.take();
        while let Some(node) = next {
            next = Arc::into_unique_or_drop(node).and_then(|mut last| last.as_mut().parent.take());
        }
    }
}
// ANCHOR_END: node

// ANCHOR: names
/// One connection's budget of walked names: the nodes its walks made that
/// are still alive (a fid holds its node, and through it every node it was
/// walked through), and how many there may be (`Policy::max_names`).
pub(crate) struct Names {
    live: AtomicUsize,
    max: usize,
}

impl Names {
    /// A budget of `max` names, none taken.
    pub(crate) fn new(max: usize) -> Result<Arc<Self>> {
        Ok(Arc::new(
            Self {
                live: AtomicUsize::new(0),
                max,
            },
            GFP_KERNEL,
        )?)
    }

    /// Takes a name for a new node: `EMFILE` if all `max` are taken (the
    /// client gets `Rlerror`, and may clunk fids and go on).
    fn take(&self) -> Result {
        self.live
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| EMFILE)
    }

    /// Gives back the name of a node that is dropped.
    fn give_back(&self) {
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}
// ANCHOR_END: names

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
