//! A fake file system and user database for r9p's session logic
//! (`solutions/lib/r9p/session.rs`), with the behaviours the security
//! review found the kernel's VFS has (`shared/notes/review-2026-12-05`):
//!
//! - a secret *outside* the export, which the file system's own `..` and
//!   a symlink lead to;
//! - a `/proc` mount with "magic" links (`own_readlink`: reading one is
//!   the kernel's NULL dereference);
//! - a FUSE mount whose daemon never answers (`hang`: any call on it
//!   blocks the worker for ever), a FIFO (opening it blocks), a file under
//!   a lease (opening it without `O_NONBLOCK` blocks for 45 s);
//! - a tmpfs mount whose inode numbers are the export's own (`mnt`);
//! - a tree as deep as a client walks (`deep/d/d/...`, made on demand);
//! - mutations between requests: a directory renamed into another, or
//!   swapped for a symlink to `/`, a mode changed, a user added or removed.
//!
//! It does not block or crash: it records a *violation* instead, and the
//! harness (`r9p_session_harness.rs`) fails the input. It also checks every
//! call as the kernel would leave it unchecked: a handle outside the
//! export, on another mount without `cross_mounts`, an open without
//! `open(2)`'s permission check before it, `O_NOATIME` for a non-owner.
//! And it counts the handles and open files alive, for the memory bound.

use crate::p9::{
    error::errno::*,
    reply::{Rgetattr, Rstatfs},
};
use crate::r9p_session::vfs::{
    may::*,
    mode::*,
    open_flags::*,
    Attr,
    Buffer,
    DirEntry,
    Table,
    VResult,
    Vfs, //
};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The export root's file system.
pub const EXPORT_DEV: u64 = 1;
/// /proc, mounted at `export/proc`.
pub const PROC_DEV: u64 = 2;
/// A tmpfs at `export/mnt`, whose inode numbers repeat the export's.
pub const TMP_DEV: u64 = 3;
/// A FUSE file system at `export/hang`, whose daemon never answers.
pub const HANG_DEV: u64 = 4;
/// A FIFO's type bits.
const S_IFIFO: u32 = 0o010_000;
/// `DT_*` of the types the fake has.
const DT_FIFO: u8 = 1;

/// A counter of live things (handles, open files): each token counts one.
#[derive(Debug)]
pub struct Token(Rc<Cell<usize>>);

impl Token {
    fn new(counter: &Rc<Cell<usize>>) -> Self {
        counter.set(counter.get() + 1);
        Token(counter.clone())
    }
}

impl Clone for Token {
    fn clone(&self) -> Self {
        Token::new(&self.0)
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

/// A path handle: a node of the fake tree.
#[derive(Debug, Clone)]
pub struct FHandle {
    /// The node's index.
    pub node: usize,
    _live: Token,
}

/// An open file.
#[derive(Debug)]
pub struct FFile {
    node: usize,
    uid: u32,
    _open: Token,
}

/// Credentials: who, and whether they are root (every capability).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FUser {
    /// The user id.
    pub uid: u32,
    /// The primary group.
    pub gid: u32,
}

/// One file of the fake tree.
#[derive(Debug, Clone)]
struct FNode {
    name: Vec<u8>,
    parent: usize,
    mode: u32,
    uid: u32,
    gid: u32,
    dev: u64,
    ino: u64,
    children: Vec<usize>,
    target: Vec<u8>,
    data: Vec<u8>,
    /// /proc's magic links.
    magic: bool,
    /// A lease is held on it.
    lease: bool,
    /// `deep/d/d/...`: its child `d` is made on demand.
    deep: bool,
}

/// The fake's configuration (the module parameters it stands for).
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Walks may cross into mounts.
    pub cross_mounts: bool,
}

/// The fake file system and user database.
pub struct Fake {
    nodes: RefCell<Vec<FNode>>,
    users: RefCell<Vec<(Vec<u8>, u32, u32)>>,
    /// The export root's index.
    pub export: usize,
    config: Config,
    handles: Rc<Cell<usize>>,
    files: Rc<Cell<usize>>,
    /// The last `permission` check: node, uid, mask.
    last_check: Cell<Option<(usize, u32, u32)>>,
    /// What went wrong, in the order it did.
    violations: RefCell<Vec<String>>,
    /// The uid of every call since the harness last took them.
    calls: RefCell<Vec<(&'static str, u32)>>,
}

/// The inode numbers the deep chain starts at.
const DEEP_INO: u64 = 1_000_000;

impl Fake {
    /// The tree of the module comment, users root, alice (1000), bob (1001)
    /// and nobody (65534).
    pub fn new(config: Config) -> Self {
        let fake = Fake {
            nodes: RefCell::new(Vec::new()),
            users: RefCell::new(vec![
                (b"root".to_vec(), 0, 0),
                (b"alice".to_vec(), 1000, 1000),
                (b"bob".to_vec(), 1001, 1001),
                (b"nobody".to_vec(), 65534, 65534),
            ]),
            export: 2,
            config,
            handles: Rc::new(Cell::new(0)),
            files: Rc::new(Cell::new(0)),
            last_check: Cell::new(None),
            violations: RefCell::new(Vec::new()),
            calls: RefCell::new(Vec::new()),
        };
        let dir = |mode| S_IFDIR | mode;
        let root = fake.add(0, b"", dir(0o755), 0, EXPORT_DEV, 2);
        fake.add_file(root, b"secret", 0o600, 0, 3, b"the host's secret");
        let export = fake.add(root, b"export", dir(0o755), 0, EXPORT_DEV, 10);
        assert_eq!(export, fake.export);
        let a = fake.add(export, b"a", dir(0o755), 1000, EXPORT_DEV, 11);
        fake.add_file(a, b"f", 0o644, 1000, 12, b"hello");
        fake.add_file(a, b"private", 0o600, 1000, 13, b"alice's");
        let b = fake.add(export, b"b", dir(0o700), 1001, EXPORT_DEV, 14);
        fake.add_file(b, b"g", 0o644, 1001, 15, b"bob's");
        fake.add_link(export, b"link", b"../secret", EXPORT_DEV, 16, false);
        fake.add(export, b"fifo", S_IFIFO | 0o666, 0, EXPORT_DEV, 17);
        let leased = fake.add_file(export, b"leased", 0o644, 1001, 18, b"leased");
        fake.nodes.borrow_mut()[leased].lease = true;
        let deep = fake.add(export, b"deep", dir(0o755), 0, EXPORT_DEV, 19);
        fake.nodes.borrow_mut()[deep].deep = true;
        // Mount roots stand where their mount points are.
        let mnt = fake.add(export, b"mnt", dir(0o755), 0, TMP_DEV, 11);
        fake.add_file(mnt, b"x", 0o644, 0, 12, b"tmpfs's");
        let proc_ = fake.add(export, b"proc", dir(0o555), 0, PROC_DEV, 1);
        fake.add_link(proc_, b"self", b"1", PROC_DEV, 2, false);
        fake.add_link(proc_, b"cwd", b"/", PROC_DEV, 3, true);
        let hang = fake.add(export, b"hang", dir(0o755), 0, HANG_DEV, 1);
        fake.add_file(hang, b"y", 0o644, 0, 2, b"never");
        fake
    }

    fn add(&self, parent: usize, name: &[u8], mode: u32, uid: u32, dev: u64, ino: u64) -> usize {
        let mut nodes = self.nodes.borrow_mut();
        let id = nodes.len();
        nodes.push(FNode {
            name: name.to_vec(),
            parent,
            mode,
            uid,
            gid: uid,
            dev,
            ino,
            children: Vec::new(),
            target: Vec::new(),
            data: Vec::new(),
            magic: false,
            lease: false,
            deep: false,
        });
        if id != parent {
            nodes[parent].children.push(id);
        }
        id
    }

    fn add_file(
        &self,
        parent: usize,
        name: &[u8],
        perm: u32,
        uid: u32,
        ino: u64,
        data: &[u8],
    ) -> usize {
        let dev = self.nodes.borrow()[parent].dev;
        let id = self.add(parent, name, S_IFREG | perm, uid, dev, ino);
        self.nodes.borrow_mut()[id].data = data.to_vec();
        id
    }

    fn add_link(&self, parent: usize, name: &[u8], target: &[u8], dev: u64, ino: u64, magic: bool) {
        let id = self.add(parent, name, S_IFLNK | 0o777, 0, dev, ino);
        let mut nodes = self.nodes.borrow_mut();
        nodes[id].target = target.to_vec();
        nodes[id].magic = magic;
    }

    /// A handle on node `node` (for the harness: the export root).
    pub fn handle(&self, node: usize) -> FHandle {
        FHandle {
            node,
            _live: Token::new(&self.handles),
        }
    }

    /// Handles alive (held by the session, or the harness).
    pub fn live_handles(&self) -> usize {
        self.handles.get()
    }

    /// The counters of live handles and open files.
    pub fn counters(&self) -> (Rc<Cell<usize>>, Rc<Cell<usize>>) {
        (self.handles.clone(), self.files.clone())
    }

    /// Files open.
    pub fn open_files(&self) -> usize {
        self.files.get()
    }

    /// The violations so far.
    pub fn violations(&self) -> Vec<String> {
        self.violations.borrow().clone()
    }

    /// The calls made since the last `take_calls`, with their users' uids.
    pub fn take_calls(&self) -> Vec<(&'static str, u32)> {
        std::mem::take(&mut *self.calls.borrow_mut())
    }

    /// The file system and inode number of `node`.
    pub fn identity(&self, node: usize) -> (u64, u64) {
        let nodes = self.nodes.borrow();
        (nodes[node].dev, nodes[node].ino)
    }

    /// The uid and gid the database lists for the user of uid `uid`, or
    /// (`uid` is `None`) of name `name`, if it lists the user.
    pub fn account(&self, uid: Option<u32>, name: &[u8]) -> Option<(u32, u32)> {
        self.users
            .borrow()
            .iter()
            .find(|u| uid.map_or(u.0 == name, |uid| u.1 == uid))
            .map(|u| (u.1, u.2))
    }

    fn violation(&self, what: String) {
        self.violations.borrow_mut().push(what);
    }

    /// The export root is an ancestor of `node` (or `node` itself).
    fn inside(&self, mut node: usize) -> bool {
        let nodes = self.nodes.borrow();
        loop {
            if node == self.export {
                return true;
            }
            if node == 0 {
                return false;
            }
            node = nodes[node].parent;
        }
    }

    fn path(&self, mut node: usize) -> String {
        let nodes = self.nodes.borrow();
        let mut parts = Vec::new();
        while node != 0 {
            parts.push(String::from_utf8_lossy(&nodes[node].name).into_owned());
            node = nodes[node].parent;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// What every call on a handle checks, as `op` for `user`.
    fn call(&self, op: &'static str, user: &FUser, node: usize) {
        self.calls.borrow_mut().push((op, user.uid));
        if !self.inside(node) {
            self.violation(format!("escaped the export: {op} of {}", self.path(node)));
        }
        let dev = self.nodes.borrow()[node].dev;
        if !self.config.cross_mounts && dev != EXPORT_DEV {
            self.violation(format!(
                "crossed a mount without cross_mounts: {op} of {}",
                self.path(node)
            ));
        }
        if dev == HANG_DEV && !self.config.cross_mounts {
            self.violation(format!("blocked: {op} on a FUSE mount that never answers"));
        }
    }

    /// Whether `user` may access `node` as `mask` (read 4, write 2, exec 1).
    fn may(&self, user: &FUser, node: usize, bits: u32) -> bool {
        if user.uid == 0 {
            return true;
        }
        let n = &self.nodes.borrow()[node];
        let shift = if n.uid == user.uid {
            6
        } else if n.gid == user.gid {
            3
        } else {
            0
        };
        (n.mode >> shift) & bits == bits
    }

    /// The child `name` of `dir`, making `deep`'s on demand.
    fn child(&self, dir: usize, name: &[u8]) -> Option<usize> {
        let (deep, found) = {
            let nodes = self.nodes.borrow();
            let d = &nodes[dir];
            let found = d.children.iter().copied().find(|&c| nodes[c].name == name);
            (d.deep, found)
        };
        if found.is_some() || !deep || name != b"d" {
            return found;
        }
        let ino = DEEP_INO + self.nodes.borrow().len() as u64;
        let id = self.add(dir, b"d", S_IFDIR | 0o755, 0, EXPORT_DEV, ino);
        self.nodes.borrow_mut()[id].deep = true;
        Some(id)
    }

    // ANCHOR: mutations
    /// Changes the tree or the users between two requests (what a local
    /// user, or the admin, may do meanwhile); `what` picks the change.
    pub fn mutate(&self, what: u8) {
        let export = self.export;
        match what % 5 {
            // A directory renamed into another (and back): a fid held in
            // it keeps its handle; its logical `..` is where it was walked.
            0 => {
                let Some(a) = self
                    .find(export, b"a")
                    .or_else(|| self.find(export, b"b").and_then(|b| self.find(b, b"a")))
                else {
                    return;
                };
                let b = self.find(export, b"b");
                let to = if self.nodes.borrow()[a].parent == export {
                    b
                } else {
                    Some(export)
                };
                if let Some(to) = to {
                    self.reparent(a, to);
                }
            }
            // `a` swapped for a symlink to `/` (and back): the rename race
            // of CVE-2016-9602.
            1 => {
                if let Some(a) = self.find(export, b"a") {
                    self.nodes.borrow_mut()[a].name = b"a.old".to_vec();
                    self.add_link(export, b"a", b"/", EXPORT_DEV, 40, false);
                } else if let Some(old) = self.find(export, b"a.old") {
                    let mut nodes = self.nodes.borrow_mut();
                    if let Some(link) = nodes[export]
                        .children
                        .iter()
                        .position(|&c| nodes[c].name == b"a")
                    {
                        nodes[export].children.remove(link);
                    }
                    nodes[old].name = b"a".to_vec();
                }
            }
            // A mode changed: alice's private file readable by all, or not.
            2 => {
                if let Some(p) = self.find_path(&[b"a", b"private"]) {
                    let mut nodes = self.nodes.borrow_mut();
                    nodes[p].mode ^= 0o044;
                }
            }
            // A user added, or removed (`useradd`, `userdel`: a new passwd
            // file renamed over the old one).
            3 => {
                let mut users = self.users.borrow_mut();
                if let Some(i) = users.iter().position(|u| u.0 == b"carol") {
                    users.remove(i);
                } else {
                    users.push((b"carol".to_vec(), 1002, 1002));
                }
            }
            // The lease broken, or taken again.
            _ => {
                if let Some(l) = self.find(export, b"leased") {
                    let mut nodes = self.nodes.borrow_mut();
                    nodes[l].lease = !nodes[l].lease;
                }
            }
        }
    }
    // ANCHOR_END: mutations

    fn find(&self, dir: usize, name: &[u8]) -> Option<usize> {
        let nodes = self.nodes.borrow();
        nodes[dir]
            .children
            .iter()
            .copied()
            .find(|&c| nodes[c].name == name)
    }

    fn find_path(&self, names: &[&[u8]]) -> Option<usize> {
        names
            .iter()
            .try_fold(self.export, |dir, name| self.find(dir, name))
    }

    fn reparent(&self, node: usize, to: usize) {
        let mut nodes = self.nodes.borrow_mut();
        let from = nodes[node].parent;
        nodes[from].children.retain(|&c| c != node);
        nodes[to].children.push(node);
        nodes[node].parent = to;
    }
}

/// The fake's tables: `BTreeMap`s.
pub struct Map<T>(BTreeMap<u64, T>);

impl<T> Default for Map<T> {
    fn default() -> Self {
        Map(BTreeMap::new())
    }
}

impl<T> Table<T> for Map<T> {
    fn get(&self, k: u64) -> Option<&T> {
        self.0.get(&k)
    }
    fn get_mut(&mut self, k: u64) -> Option<&mut T> {
        self.0.get_mut(&k)
    }
    fn insert(&mut self, k: u64, v: T) -> VResult<()> {
        self.0.insert(k, v);
        Ok(())
    }
    fn remove(&mut self, k: u64) -> Option<T> {
        self.0.remove(&k)
    }
}

/// The fake's buffers.
#[derive(Default)]
pub struct Buf(pub Vec<u8>);

impl AsRef<[u8]> for Buf {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl AsMut<[u8]> for Buf {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Buffer for Buf {
    fn resize(&mut self, len: usize) -> VResult<()> {
        self.0.resize(len, 0);
        Ok(())
    }
}

impl Vfs for Fake {
    type Handle = FHandle;
    type File = FFile;
    type User = FUser;
    type Table<T> = Map<T>;
    type Buf = Buf;

    fn lookup(&self, user: &FUser, dir: &FHandle, name: &[u8]) -> VResult<FHandle> {
        self.call("lookup", user, dir.node);
        let (mode, parent) = {
            let n = &self.nodes.borrow()[dir.node];
            (n.mode, n.parent)
        };
        if mode & S_IFMT != S_IFDIR {
            return Err(ENOTDIR);
        }
        if !self.may(user, dir.node, 1) {
            return Err(EACCES);
        }
        let node = match name {
            // The file system's own `..` and `.`: the session must never
            // ask (its `..` is logical), and this `..` leads out.
            b".." | b"." => {
                self.violation(format!(
                    "asked the VFS for {:?}",
                    String::from_utf8_lossy(name)
                ));
                if name == b".." {
                    parent
                } else {
                    dir.node
                }
            }
            _ if name.contains(&b'/') || name.contains(&0) || name.is_empty() => {
                self.violation(format!("asked the VFS for the name {name:?}"));
                return Err(EINVAL);
            }
            _ => self.child(dir.node, name).ok_or(ENOENT)?,
        };
        Ok(self.handle(node))
    }

    fn same_mount(&self, a: &FHandle, b: &FHandle) -> bool {
        let nodes = self.nodes.borrow();
        nodes[a.node].dev == nodes[b.node].dev
    }

    fn getattr(&self, user: &FUser, h: &FHandle) -> VResult<Attr> {
        self.call("getattr", user, h.node);
        let n = &self.nodes.borrow()[h.node];
        Ok(Attr {
            st: Rgetattr {
                mode: n.mode,
                uid: n.uid,
                gid: n.gid,
                nlink: 1,
                size: (n.data.len() + n.target.len()) as u64,
                blksize: 4096,
                ..Rgetattr::default()
            },
            dev: n.dev,
            ino: n.ino,
            own_readlink: n.magic,
        })
    }

    fn permission(&self, user: &FUser, h: &FHandle, mask: u32) -> VResult<()> {
        self.call("permission", user, h.node);
        let bits = if mask & MAY_READ != 0 { 4 } else { 0 };
        if !self.may(user, h.node, bits) {
            return Err(EACCES);
        }
        self.last_check.set(Some((h.node, user.uid, mask)));
        Ok(())
    }

    fn open(&self, user: &FUser, h: &FHandle, flags: u32) -> VResult<FFile> {
        self.call("open", user, h.node);
        let check = self.last_check.take();
        let (mode, owner, lease) = {
            let n = &self.nodes.borrow()[h.node];
            (n.mode, n.uid, n.lease)
        };
        let path = self.path(h.node);
        if mode & S_IFMT == S_IFIFO {
            self.violation(format!(
                "blocked: opened the FIFO {path}, which waits for a writer"
            ));
            return Err(EINTR_FAKE);
        }
        if lease && flags & O_NONBLOCK == 0 {
            self.violation(format!(
                "blocked: opened {path} under a lease without O_NONBLOCK"
            ));
            return Err(EINTR_FAKE);
        }
        if flags & O_NOATIME != 0 && user.uid != owner && user.uid != 0 {
            self.violation(format!(
                "O_NOATIME for uid {} on {path}, not its owner",
                user.uid
            ));
        }
        if check != Some((h.node, user.uid, MAY_OPEN | MAY_READ)) {
            self.violation(format!(
                "opened {path} for uid {} without open(2)'s permission check (MAY_OPEN | MAY_READ) just before",
                user.uid
            ));
        }
        if !self.may(user, h.node, 4) {
            self.violation(format!(
                "opened {path} for uid {}, who may not read it",
                user.uid
            ));
        }
        if lease {
            return Err(EAGAIN);
        }
        Ok(FFile {
            node: h.node,
            uid: user.uid,
            _open: Token::new(&self.files),
        })
    }

    fn read(&self, user: &FUser, f: &FFile, offset: u64, buf: &mut [u8]) -> VResult<usize> {
        self.call("read", user, f.node);
        if f.uid != user.uid {
            self.violation(format!(
                "read a file uid {} opened as uid {}",
                f.uid, user.uid
            ));
        }
        let nodes = self.nodes.borrow();
        let data = &nodes[f.node].data;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(data.len());
        let n = (data.len() - start).min(buf.len());
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }

    fn readdir(
        &self,
        user: &FUser,
        f: &FFile,
        pos: u64,
        each: &mut dyn FnMut(DirEntry<'_>) -> bool,
    ) -> VResult<u64> {
        self.call("readdir", user, f.node);
        if self.nodes.borrow()[f.node].deep {
            self.child(f.node, b"d");
        }
        let nodes = self.nodes.borrow().clone();
        let children = &nodes[f.node].children;
        let mut at = pos;
        while let Some(&c) = usize::try_from(at).ok().and_then(|i| children.get(i)) {
            let n = &nodes[c];
            let dtype = match n.mode & S_IFMT {
                S_IFDIR => 4,
                S_IFLNK => 10,
                S_IFREG => 8,
                _ => DT_FIFO,
            };
            let entry = DirEntry {
                name: &n.name,
                pos: at,
                ino: n.ino,
                dtype,
            };
            if !each(entry) {
                break;
            }
            at += 1;
        }
        Ok(at)
    }

    fn readlink(&self, user: &FUser, h: &FHandle, out: &mut [u8]) -> VResult<usize> {
        self.call("readlink", user, h.node);
        let nodes = self.nodes.borrow();
        let n = &nodes[h.node];
        if n.magic {
            drop(nodes);
            self.violation(format!(
                "read the magic link {} (the kernel's NULL dereference in nd_jump_link)",
                self.path(h.node)
            ));
            return Err(EINVAL);
        }
        if n.mode & S_IFMT != S_IFLNK {
            return Err(EINVAL);
        }
        let slot = out.get_mut(..n.target.len()).ok_or(ENAMETOOLONG)?;
        slot.copy_from_slice(&n.target);
        Ok(n.target.len())
    }

    fn statfs(&self, user: &FUser, h: &FHandle) -> VResult<Rstatfs> {
        self.call("statfs", user, h.node);
        let dev = self.nodes.borrow()[h.node].dev;
        Ok(Rstatfs {
            fs_type: 0x0102_1994,
            bsize: 4096,
            fsid: dev,
            namelen: 255,
            ..Rstatfs::default()
        })
    }

    fn user_by_uid(&self, uid: u32) -> VResult<FUser> {
        let (uid, gid) = self.account(Some(uid), b"").ok_or(EACCES)?;
        Ok(FUser { uid, gid })
    }

    fn user_by_name(&self, name: &[u8]) -> VResult<(u32, FUser)> {
        let (uid, gid) = self.account(None, name).ok_or(EACCES)?;
        Ok((uid, FUser { uid, gid }))
    }

    fn anonymous(&self) -> VResult<FUser> {
        Ok(FUser {
            uid: 65534,
            gid: 65534,
        })
    }
}

/// What a blocked call "returns" in the fake (the kernel's would not return).
const EINTR_FAKE: u32 = 4;
