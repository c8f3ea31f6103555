// SPDX-License-Identifier: GPL-2.0

//! One 9P2000.L session: the requests of one connection, answered from a
//! [`Vfs`], with every rule of what a client may reach, as whom, and at
//! what cost.
//!
//! This module tree uses `core` only, and names only itself and the codec
//! (`crate::p9`): what touches files, users or memory is behind the traits
//! of `session/vfs.rs`. The kernel's server (`server.rs`) frames the bytes
//! of a socket and hands each whole frame to [`Session::handle`]; the host
//! tests and the fuzzer (`tests/host`) hand it frames too, with a fake file
//! system that misbehaves on purpose, and check after every request that
//! the session never left the export, never acted with another user's
//! rights, and never held more than its limits.
//!
//! It owns:
//! - `Tversion` first: every other request before one is `EPROTO`;
//! - the dispatch of each message, and `Rlerror` for all that fails;
//! - the fid table and its limit, the walked nodes and their budget
//!   (`session/fids.rs`, `session/nodes.rs`);
//! - the walk rules: one component at a time, `..` along the chain of
//!   nodes and clipped at the export root, `EXDEV` at a mount unless
//!   allowed (`nodes.rs`'s `step`);
//! - which user acts: the attach rules and root squash ([`Session::attach`]);
//! - what may be opened, and how ([`Session::lopen`]); which links may be
//!   read ([`Session::readlink`]); the qids ([`nodes::qid_of`]).
#![forbid(unsafe_code)]

#[path = "session/fids.rs"]
pub(crate) mod fids;
#[path = "session/nodes.rs"]
pub(crate) mod nodes;
#[path = "session/vfs.rs"]
pub(crate) mod vfs;

use crate::p9::error::errno::*;
use crate::p9::{
    self,
    frame::{
        self,
        HEADER_SIZE,
        MAX_WALK_ELEMENTS,
        NOFID,
        RREAD_HEADER_SIZE, //
    },
    qid::Qid,
    reply::{
        Rattach,
        Rgetattr,
        Rlerror,
        Rlopen,
        Rread,
        Rreadlink,
        Rversion,
        Rwalk,
        WalkQids,
        GETATTR_BASIC, //
    },
    request::{
        Tattach,
        Tgetattr,
        Tlopen,
        Tread,
        Treaddir,
        Tversion,
        Twalk, //
    },
    Reply,
    Request, //
};
use core::marker::PhantomData;
use fids::{
    Fid,
    Fids, //
};
use nodes::{
    NodeId,
    Nodes, //
};
use vfs::{
    may::*,
    mode,
    open_flags::*,
    Attr,
    Buffer,
    Errno,
    VResult,
    Vfs, //
};

/// The smallest `msize` the server agrees to (v9fs itself needs 4 KiB).
pub(crate) const MIN_MSIZE: u32 = 4096;
/// The buffer size before `Tversion` set the real one.
pub(crate) const FIRST_MSIZE: u32 = 8192;
/// `n_uname` when the client names its user by `uname` only.
pub(crate) const NONUNAME: u32 = !0;
/// The uid a squashed root acts as (NFS's default `anonuid`).
pub(crate) const ANONYMOUS_UID: u32 = 65534;

/// 9P2000.L `Tlopen` flags that ask for writing (`P9_DOTL_WRONLY`,
/// `P9_DOTL_RDWR`, `P9_DOTL_CREATE`, `P9_DOTL_TRUNC`, `P9_DOTL_APPEND`).
const WRITE_FLAGS: u32 = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000;

/// Message types that would change the export (`Tlcreate`, `Tsymlink`,
/// `Tmknod`, `Trename`, `Tsetattr`, `Txattrcreate`, `Tlink`, `Tmkdir`,
/// `Trenameat`, `Tunlinkat`, `Tcreate`, `Twrite`, `Tremove`): the codec
/// does not know them, the server answers them with `EROFS`.
const WRITE_TYPES: [u8; 13] = [14, 16, 18, 20, 26, 32, 70, 72, 74, 76, 114, 118, 122];

// ANCHOR: open_flags
/// How `Tlopen` opens: read-only, and never waiting. With `O_NONBLOCK`, a
/// file under a lease (`F_SETLEASE`) gets `EAGAIN` at once, where
/// `break_lease` would otherwise sleep up to `lease-break-time` (45 s) in
/// a worker every connection shares (nfsd opens the same way, and QEMU's
/// 9p server since CVE-2023-2861). No `O_NOATIME`: reads update the access
/// time, as `read(2)`'s do (`may_open` grants it to the file's owner only).
pub(crate) const OPEN_FLAGS: u32 = O_LARGEFILE | O_NONBLOCK;
// ANCHOR_END: open_flags

// ANCHOR: limits
/// What a session may cost, and what it may reach: the module parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The largest `msize` agreed to in `Tversion`.
    pub(crate) max_msize: u32,
    /// The most fids the connection may hold; the next gets `EMFILE`.
    pub(crate) max_fids: usize,
    /// The most walked names its fids may hold between them; a walk past
    /// it gets `EMFILE`.
    pub(crate) max_names: usize,
    /// Whether an attach as uid 0 acts as root (`allow_root=1`), or as the
    /// anonymous user.
    pub(crate) allow_root: bool,
    /// Whether walks may cross into file systems mounted in the export.
    pub(crate) cross_mounts: bool,
}
// ANCHOR_END: limits

/// What a handler answers: the length of the reply it encoded in `out`, or
/// the errno of the `Rlerror` to send instead.
pub(crate) type Answer = core::result::Result<usize, Errno>;

// ANCHOR: reach
/// What a stage's server reaches under the export root: walking a name
/// (stage 29's `walk.rs`) and listing a directory (stage 30's
/// `listing.rs`), the rules of each in a file of its own. The defaults
/// refuse, with `EOPNOTSUPP`: stage 28's reach has only them, and serves
/// the export root alone.
pub(crate) trait Reach: 'static {
    /// Walks one name from the directory `dir`: returns the node reached,
    /// with one hold (the caller's).
    fn step<V: Vfs>(_w: Walk<'_, V>, _dir: NodeId, _name: &[u8]) -> VResult<NodeId> {
        Err(EOPNOTSUPP)
    }

    /// Answers a `Treaddir`: encodes the reply in `l.out`; its length.
    fn readdir<V: Vfs>(_l: Listing<'_, V>) -> Answer {
        Err(EOPNOTSUPP)
    }

    /// Whether walks may cross into file systems mounted in the export.
    fn cross_mounts() -> bool {
        false
    }
}
// ANCHOR_END: reach

// ANCHOR: walk_step
/// What walking one name needs: the connection's nodes, the file system,
/// as whom, and whether mounts may be crossed.
pub(crate) struct Walk<'a, V: Vfs> {
    pub(crate) nodes: &'a mut Nodes<V>,
    pub(crate) vfs: &'a V,
    pub(crate) user: &'a V::User,
    pub(crate) cross_mounts: bool,
}
// ANCHOR_END: walk_step

// ANCHOR: listing
/// What answering one `Treaddir` needs: the open directory, as whom, and
/// where the entries go.
pub(crate) struct Listing<'a, V: Vfs> {
    /// The file system, and the acting user.
    pub(crate) vfs: &'a V,
    pub(crate) user: &'a V::User,
    /// The open directory.
    pub(crate) file: &'a V::File,
    /// The directory's file system, and the export root's: the entries'
    /// qids are folded with them (`nodes::qid_path`).
    pub(crate) dir_dev: u64,
    pub(crate) export_dev: u64,
    /// The request's `offset` and `count`, and the most bytes of entries
    /// the reply may carry (`count`, and what fits in `msize`).
    pub(crate) offset: u64,
    pub(crate) count: u32,
    pub(crate) limit: usize,
    /// The reply's tag.
    pub(crate) tag: u16,
    /// Room for the entries while they wait for their offsets (`msize`
    /// bytes), and where the reply is encoded.
    pub(crate) scratch: &'a mut [u8],
    pub(crate) out: &'a mut [u8],
}
// ANCHOR_END: listing

// ANCHOR: session
/// The state of one connection.
pub(crate) struct Session<V: Vfs, R: Reach> {
    /// The file system, and the users.
    vfs: V,
    /// The export root, and its status: where every `Tversion` starts anew.
    root: V::Handle,
    root_attr: Attr,
    limits: Limits,
    /// The client's fids.
    fids: Fids<V>,
    /// The nodes its walks made, and its budget of walked names.
    nodes: Nodes<V>,
    /// The negotiated maximum message size.
    msize: u32,
    /// Whether a `Tversion` was agreed to: until then, every other request
    /// gets `EPROTO`.
    versioned: bool,
    /// Where replies are encoded (`msize` bytes).
    out: V::Buf,
    /// Where `Tread`, `Treadlink` and `Treaddir` put their data before it
    /// is encoded (`msize` bytes).
    data: V::Buf,
    /// What the stage's server reaches: a type, no state (a function
    /// type, so that the session is `Send` whatever `R` is).
    reach: PhantomData<fn() -> R>,
}
// ANCHOR_END: session

// ANCHOR: begun
/// What [`Session::begin`] made of a frame.
pub(crate) enum Begun<'s, V: Vfs> {
    /// The reply is encoded: its length ([`Session::reply`]).
    Answered(usize),
    /// A `Tread` that passed every check, whose read is the caller's.
    Read(ReadTarget<'s, V>),
}

/// A `Tread` to do: read into `buf` from byte `offset` of `file` (for
/// `user`, through `vfs`, or any other way: `file` was opened as `user`),
/// then hand the result to [`Session::finish_read`] with `tag`. It borrows
/// the session: nothing else is answered meanwhile.
pub(crate) struct ReadTarget<'s, V: Vfs> {
    pub(crate) tag: u16,
    pub(crate) vfs: &'s V,
    pub(crate) user: &'s V::User,
    pub(crate) file: &'s V::File,
    pub(crate) offset: u64,
    /// As many bytes as the reply may carry: the client's count, within
    /// `msize`.
    pub(crate) buf: &'s mut [u8],
}
// ANCHOR_END: begun

impl<V: Vfs, R: Reach> Session<V, R> {
    /// A session before `Tversion`, serving `root` from `vfs` within
    /// `limits`; `out` and `data` become its buffers.
    pub(crate) fn new(
        vfs: V,
        root: V::Handle,
        root_attr: Attr,
        limits: Limits,
        mut out: V::Buf,
        mut data: V::Buf,
    ) -> VResult<Self> {
        out.resize(FIRST_MSIZE as usize)?;
        data.resize(FIRST_MSIZE as usize)?;
        Ok(Self {
            nodes: Nodes::new(root.clone(), &root_attr, limits.max_names)?,
            fids: Fids::new(limits.max_fids),
            vfs,
            root,
            root_attr,
            limits,
            msize: FIRST_MSIZE,
            versioned: false,
            out,
            data,
            reach: PhantomData,
        })
    }

    /// The file system the session serves from.
    pub(crate) fn vfs(&self) -> &V {
        &self.vfs
    }

    /// The negotiated `msize`: no frame may be larger.
    pub(crate) fn msize(&self) -> u32 {
        self.msize
    }

    /// How many fids the client holds (none: not a mount, yet).
    pub(crate) fn fid_count(&self) -> usize {
        self.fids.len()
    }

    /// How many walked names its fids hold.
    pub(crate) fn names_held(&self) -> usize {
        self.nodes.live()
    }

    /// The file `fid` names, its qid and its user's uid (for the checks of
    /// the host tests).
    pub(crate) fn fid_info(&self, fid: u32) -> Option<(&V::Handle, Qid, u32)> {
        let f = self.fids.get(fid).ok()?;
        let node = self.nodes.get(f.node).ok()?;
        Some((&node.handle, node.qid, f.uid))
    }

    /// The first `len` bytes of the reply buffer: what `handle` or
    /// `refuse` encoded.
    pub(crate) fn reply(&self, len: usize) -> &[u8] {
        self.out.as_ref().get(..len).unwrap_or(&[])
    }

    // ANCHOR: refuse
    /// Encodes `Rlerror` (`EPROTO`) for the frame at the start of `frame`,
    /// whose size field is out of bounds: the stream cannot be
    /// resynchronised, and the caller closes it after sending this.
    /// Returns the reply's length (0: nothing to send).
    pub(crate) fn refuse(&mut self, frame: &[u8]) -> usize {
        let tag = frame
            .get(5..7)
            .map_or(frame::NOTAG, |t| u16::from_le_bytes([t[0], t[1]]));
        self.lerror(tag, EPROTO)
    }
    // ANCHOR_END: refuse

    /// Encodes `Rlerror` with `ecode` and `tag`; returns its length.
    fn lerror(&mut self, tag: u16, ecode: Errno) -> usize {
        lerror(self.out.as_mut(), tag, ecode)
    }

    /// Encodes `reply`; its length.
    fn encode(&mut self, tag: u16, reply: &Reply<'_>) -> Answer {
        p9::encode_reply(tag, reply, self.out.as_mut()).map_err(|e| e.errno())
    }

    // ANCHOR: handle
    /// Answers the request in `frame` (one whole frame, at most `msize`
    /// bytes); returns the length of the reply (`reply`). Every request
    /// gets a reply: an error, a malformed message, an unknown type all get
    /// `Rlerror`. A `Tread` reads through the `Vfs` here; a server that
    /// reads some other way (stage 35 awaits a reactor) calls [`begin`]
    /// and [`finish_read`] instead.
    ///
    /// [`begin`]: Session::begin
    /// [`finish_read`]: Session::finish_read
    pub(crate) fn handle(&mut self, frame: &[u8]) -> usize {
        match self.begin(frame) {
            Begun::Answered(len) => len,
            Begun::Read(ReadTarget {
                tag,
                vfs,
                user,
                file,
                offset,
                buf,
            }) => {
                let result = vfs.read(user, file, offset, buf);
                self.finish_read(tag, result)
            }
        }
    }
    // ANCHOR_END: handle

    // ANCHOR: begin
    /// Answers the request in `frame` as [`handle`](Session::handle) does,
    /// except a `Tread` that passed every check: its read is the caller's,
    /// into the target's buffer, and its reply is
    /// [`finish_read`](Session::finish_read)'s.
    pub(crate) fn begin(&mut self, frame: &[u8]) -> Begun<'_, V> {
        let (tag, answer) = match p9::decode_request(frame, self.msize) {
            Ok(request) => match request.body {
                Request::Read(t) if self.versioned => return self.begin_read(request.tag, t),
                body => (request.tag, self.dispatch(request.tag, body)),
            },
            Err(e) => {
                // The header was checked before: its tag and type are there.
                let header = frame::read_header(frame, self.msize).ok();
                let ecode = match e {
                    p9::Error::UnknownType(ty) if WRITE_TYPES.contains(&ty) => EROFS,
                    e => e.errno(),
                };
                (header.map_or(frame::NOTAG, |h| h.tag), Err(ecode))
            }
        };
        Begun::Answered(match answer {
            Ok(len) => len,
            Err(ecode) => self.lerror(tag, ecode),
        })
    }

    /// Encodes the reply to the `Tread` of `tag` that [`begin`] handed
    /// out, now that its read returned `result` (the bytes read into the
    /// target's buffer, from its start); returns the reply's length.
    ///
    /// [`begin`]: Session::begin
    pub(crate) fn finish_read(&mut self, tag: u16, result: VResult<usize>) -> usize {
        let data = &self.data;
        let out = &mut self.out;
        let answer = result.and_then(|n| {
            // A read never returns more than it was given room for; if one
            // did, the bytes past it would be a previous reply's.
            let data = data.as_ref().get(..n).ok_or(EIO)?;
            p9::encode_reply(tag, &Reply::Read(Rread { data }), out.as_mut()).map_err(|e| e.errno())
        });
        match answer {
            Ok(len) => len,
            Err(ecode) => self.lerror(tag, ecode),
        }
    }
    // ANCHOR_END: begin

    /// Answers one decoded request. Before a `Tversion` was agreed to,
    /// only `Tversion` is answered: a session starts with one (the
    /// protocol's rule), and a server that served a `Tattach` first would
    /// let a client skip the one request that sets what the session may
    /// cost.
    fn dispatch(&mut self, tag: u16, request: Request<'_>) -> Answer {
        if !self.versioned && !matches!(request, Request::Version(_)) {
            return Err(EPROTO);
        }
        let reply = match request {
            Request::Version(t) => return self.version(tag, t),
            // No authentication: attach with afid = NOFID.
            Request::Auth(_) => return Err(EOPNOTSUPP),
            Request::Attach(t) => self.attach(t)?,
            // Requests are answered in order: the one to flush is answered.
            Request::Flush(_) => Reply::Flush,
            Request::Walk(t) => return self.walk(tag, t),
            Request::Lopen(t) => self.lopen(t)?,
            // `begin` reads, or hands the read out.
            Request::Read(_) => return Err(EPROTO),
            Request::Readdir(t) => return self.readdir(tag, t),
            Request::Getattr(t) => self.getattr(t)?,
            Request::Readlink(t) => return self.readlink(tag, t.fid),
            Request::Statfs(t) => self.statfs(t.fid)?,
            // No extended attributes: "no such attribute" for any name.
            Request::Xattrwalk(t) => {
                self.fids.get(t.fid)?;
                return Err(ENODATA);
            }
            Request::Clunk(t) => {
                let fid = self.fids.remove(t.fid)?;
                self.nodes.release(fid.node);
                Reply::Clunk
            }
        };
        self.encode(tag, &reply)
    }
    // ANCHOR_END: handle

    // ANCHOR: version
    /// `Tversion`: agree on the protocol and `msize` (at most the limit);
    /// forget every fid.
    fn version(&mut self, tag: u16, t: Tversion<'_>) -> Answer {
        // A new session: every fid and walked name goes.
        self.fids = Fids::new(self.limits.max_fids);
        self.nodes = Nodes::new(self.root.clone(), &self.root_attr, self.limits.max_names)?;
        let msize = t.msize.min(self.limits.max_msize);
        let version = if t.version == frame::VERSION_9P2000_L && msize >= MIN_MSIZE {
            // Buffers first: if they cannot grow, the old msize stays.
            let len = msize as usize;
            self.out.resize(len)?;
            self.data.resize(len)?;
            self.msize = msize;
            self.versioned = true;
            frame::VERSION_9P2000_L
        } else {
            // No session: the client may try another version.
            self.versioned = false;
            b"unknown"
        };
        let reply = Reply::Version(Rversion {
            msize: self.msize,
            version,
        });
        self.encode(tag, &reply)
    }
    // ANCHOR_END: version

    // ANCHOR: attach
    /// `Tattach`: a new fid for the export root, acting for the user
    /// `n_uname` names, or `uname` if it is `NONUNAME`, looked up anew at
    /// every attach (the user database may have changed). 9P2000.L has no
    /// authentication: any client that can connect may *say* it is uid 0,
    /// so root acts as the anonymous user unless `allow_root`, as NFS's
    /// `root_squash` maps it.
    fn attach(&mut self, t: Tattach<'_>) -> VResult<Reply<'static>> {
        if t.afid != NOFID {
            return Err(EINVAL);
        }
        if self.fids.contains(t.fid) {
            return Err(EEXIST);
        }
        let (mut uid, mut user) = if t.n_uname == NONUNAME {
            self.vfs.user_by_name(t.uname)?
        } else {
            (t.n_uname, self.vfs.user_by_uid(t.n_uname)?)
        };
        if uid == 0 && !self.limits.allow_root {
            user = self.vfs.anonymous()?;
            uid = ANONYMOUS_UID;
        }
        let qid = self.nodes.get(nodes::ROOT)?.qid;
        self.add_fid(t.fid, nodes::ROOT, user, uid)?;
        Ok(Reply::Attach(Rattach { qid }))
    }
    // ANCHOR_END: attach

    /// Adds `fid` for `node`, which it holds from now on: the node is held
    /// once more here, and released again if the fid cannot be added.
    fn add_fid(&mut self, fid: u32, node: NodeId, user: V::User, uid: u32) -> VResult<()> {
        self.nodes.hold(node)?;
        let new = Fid {
            node,
            open: None,
            user,
            uid,
        };
        self.fids
            .insert(fid, new)
            .inspect_err(|_| self.nodes.release(node))
    }

    // ANCHOR: walk
    /// `Twalk`: from `fid`, walk the names one at a time, as its user; if
    /// all of them could be walked, `newfid` names the file reached, for the
    /// same user. Otherwise the reply lists the qids of the names that
    /// could be (an error if not even the first could), and `newfid` is not
    /// created.
    fn walk(&mut self, tag: u16, t: Twalk<'_>) -> Answer {
        let from = self.fids.get(t.fid)?;
        let (start, user, uid) = (from.node, from.user.clone(), from.uid);
        if t.newfid != t.fid && self.fids.contains(t.newfid) {
            return Err(EEXIST);
        }
        let mut qids = [Qid::default(); MAX_WALK_ELEMENTS];
        let mut walked = 0;
        // `node` is held by the walk from here on.
        let mut node = start;
        self.nodes.hold(node)?;
        let mut failed = None;
        for name in t.names.iter() {
            let cross = self.limits.cross_mounts;
            let w = Walk {
                nodes: &mut self.nodes,
                vfs: &self.vfs,
                user: &user,
                cross_mounts: cross,
            };
            match R::step(w, node, name) {
                Ok(next) => {
                    self.nodes.release(node);
                    node = next;
                    // Decoding checked there are at most 16 names.
                    if let (Some(slot), Ok(n)) = (qids.get_mut(walked), self.nodes.get(node)) {
                        *slot = n.qid;
                    }
                    walked += 1;
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let result = match failed {
            Some(e) if walked == 0 => Err(e),
            Some(_) => Ok(()),
            None if t.newfid == t.fid => self.move_fid(t.fid, node),
            None => self.add_fid(t.newfid, node, user, uid),
        };
        self.nodes.release(node);
        result?;
        let qids = qids.get(..walked).unwrap_or(&[]);
        let reply = Reply::Walk(Rwalk {
            qids: WalkQids::from_list(qids).map_err(|e| e.errno())?,
        });
        self.encode(tag, &reply)
    }
    // ANCHOR_END: walk

    /// Points `fid` at `node` (a walk with `newfid == fid`): closed if it
    /// was open, and its old node released.
    fn move_fid(&mut self, fid: u32, node: NodeId) -> VResult<()> {
        self.nodes.hold(node)?;
        let f = match self.fids.get_mut(fid) {
            Ok(f) => f,
            Err(e) => {
                self.nodes.release(node);
                return Err(e);
            }
        };
        let old = core::mem::replace(&mut f.node, node);
        f.open = None;
        self.nodes.release(old);
        Ok(())
    }

    // ANCHOR: lopen
    /// `Tlopen`: open a fid for reading, as its user. Write flags get
    /// `EROFS`; only regular files and directories are opened (a FIFO would
    /// block the worker until a writer came; a symlink is the client's to
    /// resolve). The permission check is `open(2)`'s (`MAY_OPEN`): the open
    /// itself checks nothing.
    fn lopen(&mut self, t: Tlopen) -> VResult<Reply<'static>> {
        if t.flags & WRITE_FLAGS != 0 {
            return Err(EROFS);
        }
        let fid = self.fids.get(t.fid)?;
        if fid.open.is_some() {
            return Err(EBADF);
        }
        let node = self.nodes.get(fid.node)?;
        match self.vfs.getattr(&fid.user, &node.handle)?.file_type() {
            mode::S_IFREG | mode::S_IFDIR => {}
            mode::S_IFLNK => return Err(ELOOP),
            _ => return Err(EOPNOTSUPP),
        }
        self.vfs
            .permission(&fid.user, &node.handle, MAY_OPEN | MAY_READ)?;
        let file = self.vfs.open(&fid.user, &node.handle, OPEN_FLAGS)?;
        let qid = node.qid;
        self.fids.get_mut(t.fid)?.open = Some(file);
        Ok(Reply::Lopen(Rlopen { qid, iounit: 0 }))
    }
    // ANCHOR_END: lopen

    /// `Tread`: the checks of [`read_target`]; the read is
    /// [`begin`](Session::begin)'s caller's.
    fn begin_read(&mut self, tag: u16, t: Tread) -> Begun<'_, V> {
        // Borrowed field by field: the target borrows the fid's file and
        // the data buffer, and an error is encoded into `out` beside them.
        let Self {
            vfs,
            fids,
            nodes,
            data,
            out,
            msize,
            ..
        } = self;
        match read_target(vfs, fids, nodes, data.as_mut(), *msize, tag, t) {
            Ok(target) => Begun::Read(target),
            Err(ecode) => Begun::Answered(lerror(out.as_mut(), tag, ecode)),
        }
    }

    // ANCHOR: readdir
    /// `Treaddir`: the stage's reach lists the open directory, into what
    /// `count` and `msize` allow.
    fn readdir(&mut self, tag: u16, t: Treaddir) -> Answer {
        let fid = self.fids.get(t.fid)?;
        let file = fid.open.as_ref().ok_or(EBADF)?;
        let dir = self.nodes.get(fid.node)?;
        if !dir.is_dir() {
            return Err(ENOTDIR);
        }
        let limit = (t.count as usize).min((self.msize as usize).saturating_sub(RREAD_HEADER_SIZE));
        R::readdir(Listing {
            vfs: &self.vfs,
            user: &fid.user,
            file,
            dir_dev: dir.dev,
            export_dev: self.root_attr.dev,
            offset: t.offset,
            count: t.count,
            limit,
            tag,
            scratch: self.data.as_mut(),
            out: self.out.as_mut(),
        })
    }
    // ANCHOR_END: readdir

    // ANCHOR: getattr
    /// `Tgetattr`: the basic `stat` fields (all of them, whatever the mask).
    fn getattr(&self, t: Tgetattr) -> VResult<Reply<'static>> {
        let fid = self.fids.get(t.fid)?;
        let node = self.nodes.get(fid.node)?;
        let attr = self.vfs.getattr(&fid.user, &node.handle)?;
        Ok(Reply::Getattr(Rgetattr {
            valid: GETATTR_BASIC,
            qid: nodes::qid_of(&attr, self.root_attr.dev),
            ..attr.st
        }))
    }
    // ANCHOR_END: getattr

    /// `Tstatfs`: the numbers of the file system the fid is on.
    fn statfs(&self, fid: u32) -> VResult<Reply<'static>> {
        let fid = self.fids.get(fid)?;
        let node = self.nodes.get(fid.node)?;
        Ok(Reply::Statfs(self.vfs.statfs(&fid.user, &node.handle)?))
    }

    // ANCHOR: readlink
    /// `Treadlink`: the target of a symlink fid, as it is stored.
    ///
    /// A link whose file system reads it itself (`Attr::own_readlink`:
    /// /proc's "magic" links, `/proc/<pid>/cwd`, `fd/N`, `ns/*`) is refused
    /// with `EOPNOTSUPP`: their `get_link` jumps the caller's own path walk
    /// (`nd_jump_link` uses `current->nameidata`, which a worker does not
    /// have: a NULL dereference). `vfs_readlink` hands these to
    /// `i_op->readlink` for the same reason.
    fn readlink(&mut self, tag: u16, fid: u32) -> Answer {
        let fid = self.fids.get(fid)?;
        let node = self.nodes.get(fid.node)?;
        if !node.is_symlink() {
            return Err(EINVAL);
        }
        if self.vfs.getattr(&fid.user, &node.handle)?.own_readlink {
            return Err(EOPNOTSUPP);
        }
        let n = self
            .vfs
            .readlink(&fid.user, &node.handle, self.data.as_mut())?;
        let target = self.data.as_ref().get(..n).ok_or(EINVAL)?;
        let reply = Reply::Readlink(Rreadlink { target });
        p9::encode_reply(tag, &reply, self.out.as_mut()).map_err(|e| e.errno())
    }
    // ANCHOR_END: readlink
}

// ANCHOR: read
/// `Tread`: the read the request `t` asks for, once it passed every check: up to
/// `count` bytes (and what fits in `msize`) from `offset`, of a fid opened
/// with `Tlopen`, into `data`.
fn read_target<'s, V: Vfs>(
    vfs: &'s V,
    fids: &'s Fids<V>,
    nodes: &Nodes<V>,
    data: &'s mut [u8],
    msize: u32,
    tag: u16,
    t: Tread,
) -> VResult<ReadTarget<'s, V>> {
    let max = (msize as usize).saturating_sub(RREAD_HEADER_SIZE);
    let count = (t.count as usize).min(max);
    let fid = fids.get(t.fid)?;
    let file = fid.open.as_ref().ok_or(EBADF)?;
    // A directory is listed with `Treaddir`: `kernel_read` on one fails
    // too, but logs a warning first ("kernel read not supported"), which a
    // client could repeat at will.
    if nodes.get(fid.node)?.is_dir() {
        return Err(EISDIR);
    }
    Ok(ReadTarget {
        tag,
        vfs,
        user: &fid.user,
        file,
        offset: t.offset,
        buf: data.get_mut(..count).ok_or(EINVAL)?,
    })
}
// ANCHOR_END: read

/// Encodes `Rlerror` with `ecode` and `tag` into `out`; returns its length
/// (0 if it does not fit, which `out`'s `msize` bytes always allow).
fn lerror(out: &mut [u8], tag: u16, ecode: Errno) -> usize {
    let reply = Reply::Lerror(Rlerror { ecode });
    p9::encode_reply(tag, &reply, out).unwrap_or(0)
}

/// The `size` field of the frame at the start of `buf`, once it has
/// arrived; `None` before its first 4 bytes have.
pub(crate) fn frame_size(buf: &[u8]) -> Option<usize> {
    let size: [u8; 4] = buf.get(..4)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(size)).ok()
}

/// Whether a frame of `size` bytes may be answered under `msize`: one
/// that may not is refused (`Session::refuse`), and its connection closed.
pub(crate) fn frame_fits(size: usize, msize: u32) -> bool {
    (HEADER_SIZE..=msize as usize).contains(&size)
}
