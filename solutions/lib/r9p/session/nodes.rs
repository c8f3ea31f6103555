// SPDX-License-Identifier: GPL-2.0

//! Nodes: the files a client reached by walking from the export root
//! (the walk rules that keep it inside are stage 29's `walk.rs`).
//!
//! A [`Node`] is a path handle, its qid, and the node it was reached from.
//! The chain of parents is what `..` walks back along, so `..` can never
//! leave the export: the root has no parent. A connection's nodes live in
//! its own table ([`Nodes`]), counted against its budget of walked names,
//! and each counts the fids and child nodes that hold it: the last release
//! drops it, and its parent's hold with it.

use super::vfs::{
    mode,
    Attr,
    Table,
    VResult,
    Vfs, //
};
use crate::p9::{
    error::errno::*,
    qid::{
        Qid,
        QTDIR,
        QTFILE,
        QTSYMLINK, //
    }, //
};

/// The longest name a walk may use (`NAME_MAX`).
pub(crate) const NAME_MAX: usize = 255;

/// A node's number in its connection's table.
pub(crate) type NodeId = u64;

/// The connection's root: the export root, held for the session's life.
pub(crate) const ROOT: NodeId = 0;

// ANCHOR: node
/// A file reached by walking from the export root.
pub(crate) struct Node<V: Vfs> {
    /// A path handle on the file: a symlink's names the link itself.
    pub(crate) handle: V::Handle,
    /// The file's qid, from `getattr` when the node was made.
    pub(crate) qid: Qid,
    /// The file system the file is on (its entries' qids are folded with it).
    pub(crate) dev: u64,
    /// The directory this node was walked to from; `None` for the root.
    pub(crate) parent: Option<NodeId>,
    /// The fids and child nodes that hold this one.
    holds: usize,
}
// ANCHOR_END: node

impl<V: Vfs> Node<V> {
    /// Whether the node is a directory.
    pub(crate) fn is_dir(&self) -> bool {
        self.qid.ty & QTDIR != 0
    }

    /// Whether the node is a symlink.
    pub(crate) fn is_symlink(&self) -> bool {
        self.qid.ty & QTSYMLINK != 0
    }
}

// ANCHOR: nodes
/// One connection's nodes, and its budget of walked names: the nodes its
/// walks made that are still held (a fid holds its node, and through it
/// every node it was walked through).
pub(crate) struct Nodes<V: Vfs> {
    table: V::Table<Node<V>>,
    /// Nodes besides the root.
    live: usize,
    /// How many there may be (`Limits::max_names`).
    max: usize,
    /// The number the next node gets.
    next: NodeId,
    /// The device of the export root's file system.
    export_dev: u64,
}
// ANCHOR_END: nodes

impl<V: Vfs> Nodes<V> {
    /// A table holding the root, `root` (whose status is `attr`), for a
    /// connection that may hold `max` walked names.
    pub(crate) fn new(root: V::Handle, attr: &Attr, max: usize) -> VResult<Self> {
        let mut table = V::Table::<Node<V>>::default();
        let node = Node {
            handle: root,
            qid: qid_of(attr, attr.dev),
            dev: attr.dev,
            parent: None,
            holds: 1,
        };
        table.insert(ROOT, node)?;
        Ok(Self {
            table,
            live: 0,
            max,
            next: ROOT + 1,
            export_dev: attr.dev,
        })
    }

    /// The node numbered `id`; `EBADF` if there is none (a bug).
    pub(crate) fn get(&self, id: NodeId) -> VResult<&Node<V>> {
        self.table.get(id).ok_or(EBADF)
    }

    /// The walked names held, the root not counted.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// One more hold on `id`.
    pub(crate) fn hold(&mut self, id: NodeId) -> VResult<()> {
        let node = self.table.get_mut(id).ok_or(EBADF)?;
        node.holds += 1;
        Ok(())
    }

    // ANCHOR: release
    /// Gives back one hold on `id`: the last drops the node, and its hold
    /// on its parent, one node at a time (a deep chain is a loop, not a
    /// recursion).
    pub(crate) fn release(&mut self, id: NodeId) {
        let mut next = Some(id);
        while let Some(id) = next.take() {
            let Some(node) = self.table.get_mut(id) else {
                return;
            };
            node.holds = node.holds.saturating_sub(1);
            if node.holds > 0 || id == ROOT {
                return;
            }
            if let Some(node) = self.table.remove(id) {
                self.live -= 1;
                next = node.parent;
            }
        }
    }
    // ANCHOR_END: release

    /// A new node for `handle` (status `attr`) reached from `parent`,
    /// with one hold (the caller's); `EMFILE` once `max` names are held.
    pub(crate) fn add(
        &mut self,
        handle: V::Handle,
        attr: &Attr,
        parent: NodeId,
    ) -> VResult<NodeId> {
        if self.live >= self.max {
            return Err(EMFILE);
        }
        let mut id = self.next;
        // Numbers are 64-bit and never reused before they wrap; after,
        // skip the ones still held.
        while id == ROOT || self.table.get(id).is_some() {
            id = id.wrapping_add(1);
        }
        self.next = id.wrapping_add(1);
        let node = Node {
            handle,
            qid: qid_of(attr, self.export_dev),
            dev: attr.dev,
            parent: Some(parent),
            holds: 1,
        };
        self.hold(parent)?;
        if let Err(e) = self.table.insert(id, node) {
            self.release(parent);
            return Err(e);
        }
        self.live += 1;
        Ok(id)
    }
}

// ANCHOR: qid_of
/// The qid of a file with status `attr`, in an export whose root is on the
/// device `export_dev`: its type from the mode, and a path unique among
/// the export's files ([`qid_path`]).
pub(crate) fn qid_of(attr: &Attr, export_dev: u64) -> Qid {
    let ty = match attr.file_type() {
        mode::S_IFDIR => QTDIR,
        mode::S_IFLNK => QTSYMLINK,
        _ => QTFILE,
    };
    Qid {
        ty,
        version: 0,
        path: qid_path(attr.dev, attr.ino, export_dev),
    }
}

/// A file of another file system than the export root's (a mount crossed
/// with `cross_mounts=1`) has this bit set in its qid path.
const FOREIGN: u64 = 1 << 63;

/// The qid path of inode `ino` of the file system `dev`: v9fs takes it for
/// the inode's identity (and, with `cache=loose`, finds cached pages by
/// it), so two files must never share one. An inode number is unique on
/// one file system only: on the export root's, the path is the inode
/// number; on another, it is the device folded in above the low 32 bits,
/// with [`FOREIGN`] set (QEMU's `multidevs=remap` keeps a table of device
/// prefixes for the same reason). Exact while the other file systems'
/// inode numbers fit in 32 bits (tmpfs, ext4), their devices too, and the
/// export's inode numbers stay below 2^63.
pub(crate) fn qid_path(dev: u64, ino: u64, export_dev: u64) -> u64 {
    if dev == export_dev {
        ino
    } else {
        FOREIGN | ((dev << 32) ^ ino)
    }
}
// ANCHOR_END: qid_of
