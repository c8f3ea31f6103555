// SPDX-License-Identifier: GPL-2.0

//! One connection: read a request, answer it, repeat.
//!
//! Each connection is one task on the executor. It reads whole frames from
//! its socket (awaiting the reactor when nothing has arrived), decodes them
//! with the stage-27 codec, calls the VFS (blocking is fine: a task runs on
//! a worker thread), and writes the reply. Requests are answered one at a
//! time, in order: so by the time a `Tflush` arrives, the request it names
//! was answered already, and `Rflush` is all there is to say.
//!
//! Walking a name and listing a directory are the [`Namespace`] the
//! connection is served with: stages 29 and 30 write them, and plug them in
//! without changing this file. What a client may cost and whom its requests
//! act for are its [`Policy`] (`policy.rs`): stages 31 and 33 harden the
//! server the same way.

use crate::{
    async_socket::AsyncStream,
    executor::yield_now,
    fid::FidTable,
    node::{
        qid_of,
        Names,
        Node, //
    },
    p9::{
        self,
        error::errno,
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
            Rstatfs,
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
    },
    policy::Policy,
    vfs::File, //
};
use kernel::{
    bindings,
    prelude::*,
    sync::Arc,
    time::{
        Instant,
        Monotonic, //
    }, //
};

/// The smallest `msize` the server agrees to (v9fs itself needs 4 KiB).
const MIN_MSIZE: u32 = 4096;
/// The buffer size before `Tversion` set the real one.
const FIRST_MSIZE: u32 = 8192;
/// Requests a connection answers before it lets other tasks have a turn.
const TURNS: u32 = 16;

/// 9P2000.L `Tlopen` flags that ask for writing (`P9_DOTL_WRONLY`,
/// `P9_DOTL_RDWR`, `P9_DOTL_CREATE`, `P9_DOTL_TRUNC`, `P9_DOTL_APPEND`).
const WRITE_FLAGS: u32 = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000;

/// Message types that would change the export (`Tlcreate`, `Tsymlink`,
/// `Tmknod`, `Trename`, `Tsetattr`, `Txattrcreate`, `Tlink`, `Tmkdir`,
/// `Trenameat`, `Tunlinkat`, `Tcreate`, `Twrite`, `Tremove`): the codec
/// does not know them, the server answers them with `EROFS`.
const WRITE_TYPES: [u8; 13] = [14, 16, 18, 20, 26, 32, 70, 72, 74, 76, 114, 118, 122];

// ANCHOR: namespace
/// What the next stages add to the server: walking a name (stage 29) and
/// listing a directory (stage 30). A connection is served with one
/// namespace, a type the crate root defines and names
/// (`service::Server<N>`); `Twalk` and `Treaddir` go through it. The
/// defaults refuse, with `EOPNOTSUPP`: stage 28's namespace has only them.
pub(crate) trait Namespace: 'static {
    /// The node `name` names in the directory `dir`: one step of a walk.
    fn step(_dir: &Arc<Node>, _name: &[u8]) -> Result<Arc<Node>> {
        Err(EOPNOTSUPP)
    }

    /// Answers `t` for the directory `file` (open): encodes in `out` an
    /// `Rreaddir` with `tag` of as many entries as fit in `limit` bytes
    /// (what the client's `count` and `msize` allow), and returns its
    /// length.
    fn readdir(
        _file: &File,
        _t: Treaddir,
        _limit: usize,
        _tag: u16,
        _out: &mut [u8],
    ) -> Result<usize> {
        Err(EOPNOTSUPP)
    }
}

// ANCHOR_END: namespace

// ANCHOR: serve
/// One connection's task, served with the namespace `N` and the policy `P`.
/// Dropping the stream at the end closes it; dropping `place` gives the
/// connection's place back (`Policy::admit`).
pub(crate) async fn serve<N: Namespace, P: Policy>(
    stream: AsyncStream,
    root: Arc<Node>,
    policy: Arc<P>,
    place: impl Send,
) {
    let result = serve_requests::<N, P>(&stream, root, policy.clone()).await;
    policy.ended(result);
    drop(place);
}
// ANCHOR_END: serve

// ANCHOR: serve_requests
/// Reads frames from `stream` and answers each, until the client closes the
/// connection or sends a frame that cannot be answered (its size field is
/// wrong: the stream cannot be resynchronised). What waits for the client
/// mid-frame goes through `policy.within`.
async fn serve_requests<N: Namespace, P: Policy>(
    stream: &AsyncStream,
    root: Arc<Node>,
    policy: Arc<P>,
) -> Result {
    // TODO (exercise 1): Answer the client's requests, one whole frame at a
    // time, until it closes the connection (a read of 0 bytes: `Ok(())`).
    // The contract:
    // - A frame is `size[4]` (the whole frame, this field included), then
    //   `type[1] tag[2]`; `frame_size` reads the size once 4 bytes are in.
    //   Bytes arrive in any pieces: one read may hold half a frame, or
    //   several frames. Nothing received may be lost or answered twice.
    // - Each whole frame gets exactly one reply: `Session::handle` encodes
    //   it, `Session::send` sends it. Read with `Session::receive`, which
    //   needs to know whether the client is in the middle of a frame
    //   (stage 31's policy waits only so long for the rest of one).
    // - A size that can never be a frame, below `HEADER_SIZE` or above the
    //   negotiated `session.msize`, ends the connection (the stream cannot
    //   be resynchronised): send `Session::refuse`'s `Rlerror`, then return
    //   `Err(EPROTO)`. Why must a size below the header end it too?
    // - A `Tversion` may raise `session.msize` to 1 MiB: from then on a
    //   frame that big must fit in the input buffer (`FIRST_MSIZE` at first).
    // - Other connections share the workers: after each request answered,
    //   `session.take_turn().await` (every `TURNS` requests it yields).
    // - Slice with `get`/`get_mut` and `ok_or(EINVAL)?`: a panic is an oops.
    // `make hint STEP=28` shows the loop's shape, then a sketch.
    // Tests: the "mount msize=... cache=..." checks (while no mount works,
    // the stage stops after them) and every check after them, in particular
    // "raw 9P: msize, Tauth, fids reused, ..., a 60 KiB request", "raw 9P: a
    // frame announcing more than msize bytes, or fewer than its 7-byte
    // header, gets one Rlerror EPROTO, then the connection closes" and "raw
    // 9P, one worker: a connection flooding it ... takes turns".
    let _ = (stream, root, policy, frame_size, HEADER_SIZE);
    let _ = (
        Session::<P>::handle::<N>,
        Session::<P>::send,
        Session::<P>::receive,
    );
    let _ = Session::<P>::take_turn;
    Err(ENOSYS)
}

/// The `size` field of the frame at the start of `buf`, once it has arrived.
fn frame_size(buf: &[u8]) -> Option<usize> {
    let size: [u8; 4] = buf.get(..4)?.try_into().ok()?;
    usize::try_from(u32::from_le_bytes(size)).ok()
}
// ANCHOR_END: serve_requests

/// The `errno` of an error, as `Rlerror` carries it (positive).
fn ecode(e: Error) -> u32 {
    e.to_errno().unsigned_abs()
}

/// What a handler answers: the length of the reply it encoded in
/// `Session::out`, or the errno of the `Rlerror` to send instead.
type Answer = core::result::Result<usize, u32>;

// ANCHOR: session
/// The state of one connection.
struct Session<P: Policy> {
    /// The export root: where `Tattach` starts.
    root: Arc<Node>,
    /// The module's policy.
    policy: Arc<P>,
    /// The client's fids.
    fids: FidTable<P::User>,
    /// The negotiated maximum message size.
    msize: u32,
    /// Whether a `Tversion` was agreed to: until then, every other request
    /// gets `EPROTO`.
    versioned: bool,
    /// Where replies are encoded (`msize` bytes).
    out: KVVec<u8>,
    /// Where `Tread` and `Treadlink` put their data before it is encoded.
    data: KVVec<u8>,
    /// When the client was first waited for, for the rest of the frame it
    /// is sending; `None` between frames.
    frame_began: Option<Instant<Monotonic>>,
    /// When the connection began, or last answered a request while it held
    /// a fid: a connection without one waits from here for its next frame.
    idle_since: Instant<Monotonic>,
    /// Requests answered since the task last let the others have a turn.
    turns: u32,
}
// ANCHOR_END: session

impl<P: Policy> Session<P> {
    /// A session before `Tversion`. Its root is a node of its own on the
    /// export root (`Node::connection_root`): the nodes its walks make
    /// count against its budget of walked names.
    fn new(root: Arc<Node>, policy: Arc<P>) -> Result<Self> {
        let names = Names::new(policy.max_names())?;
        Ok(Self {
            root: Node::connection_root(&root, names)?,
            fids: FidTable::new(policy.max_fids()),
            policy,
            msize: FIRST_MSIZE,
            versioned: false,
            out: KVVec::from_elem(0u8, FIRST_MSIZE as usize, GFP_KERNEL)?,
            data: KVVec::new(),
            frame_began: None,
            idle_since: Instant::now(),
            turns: 0,
        })
    }

    // ANCHOR: io
    /// Sends the reply `handle` or `refuse` encoded (its first `len` bytes).
    async fn send(&self, stream: &AsyncStream, len: usize) -> Result {
        let reply = self.out.get(..len).ok_or(EINVAL)?;
        self.policy
            .within(Instant::now(), stream.write_all(reply))
            .await?
    }

    // ANCHOR: receive
    /// Reads what has arrived into `buf`, waiting for it if nothing has:
    /// the number of bytes, 0 once the client closed the connection.
    /// `mid_frame` says the client began a frame it has not finished, and
    /// owes the rest (which the policy may not wait for long). Between
    /// frames, a client that holds a fid is a mount nobody uses, and may
    /// be idle for hours; one that holds none is not a mount (yet), and
    /// has the policy's time in all from `idle_since`, however many frames
    /// it sends meanwhile: a place among `max_conns` is not kept for
    /// connections that never attach.
    async fn receive(
        &mut self,
        stream: &AsyncStream,
        buf: &mut [u8],
        mid_frame: bool,
    ) -> Result<usize> {
        if !mid_frame {
            if self.fids.is_empty() {
                return self
                    .policy
                    .within(self.idle_since, stream.read(buf))
                    .await?;
            }
            return stream.read(buf).await;
        }
        // The clock starts at the first wait and runs until `handle` takes
        // the whole frame: the client has its time for the frame, not for
        // each piece (a byte now and then must not hold a connection).
        let began = *self.frame_began.get_or_insert_with(Instant::now);
        self.policy.within(began, stream.read(buf)).await?
    }
    // ANCHOR_END: receive
    // ANCHOR_END: io

    /// Counts one request answered; every `TURNS` of them, lets the other
    /// tasks have the worker. A client that pipelines its requests never
    /// makes a read wait, and would otherwise keep the worker to itself.
    async fn take_turn(&mut self) {
        self.turns += 1;
        if self.turns == TURNS {
            self.turns = 0;
            yield_now().await;
        }
    }

    /// Encodes `Rlerror` for the frame at the start of `frame` that cannot be
    /// decoded; returns its length (0: nothing to send).
    fn refuse(&mut self, frame: &[u8]) -> usize {
        let tag = frame
            .get(5..7)
            .map_or(frame::NOTAG, |t| u16::from_le_bytes([t[0], t[1]]));
        self.lerror(tag, errno::EPROTO)
    }

    /// Encodes `Rlerror` with `ecode` and `tag`; returns its length.
    fn lerror(&mut self, tag: u16, ecode: u32) -> usize {
        let reply = Reply::Lerror(Rlerror { ecode });
        p9::encode_reply(tag, &reply, &mut self.out).unwrap_or(0)
    }

    // ANCHOR: handle
    /// Answers the request in `frame` (one whole frame); returns the length
    /// of the reply in `self.out`. Every request gets a reply: an error, a
    /// malformed message, an unknown type all get `Rlerror`.
    fn handle<N: Namespace>(&mut self, frame: &[u8]) -> usize {
        self.frame_began = None;
        if !self.fids.is_empty() {
            self.idle_since = Instant::now();
        }
        let (tag, answer) = match p9::decode_request(frame, self.msize) {
            Ok(request) => (request.tag, self.dispatch::<N>(request.tag, request.body)),
            Err(e) => {
                // The header was checked before: its tag and type are there.
                let header = frame::read_header(frame, self.msize).ok();
                let ecode = match e {
                    p9::Error::UnknownType(ty) if WRITE_TYPES.contains(&ty) => errno::EROFS,
                    e => e.errno(),
                };
                (header.map_or(frame::NOTAG, |h| h.tag), Err(ecode))
            }
        };
        match answer {
            Ok(len) => len,
            Err(ecode) => self.lerror(tag, ecode),
        }
    }

    /// Answers one decoded request: as the user of the fid it names, if it
    /// names one. Before a `Tversion` was agreed to, only `Tversion` is
    /// answered: a session starts with one (the protocol's rule), and a
    /// server that served a `Tattach` first would let a client skip the
    /// one request that sets what the session may cost.
    fn dispatch<N: Namespace>(&mut self, tag: u16, request: Request<'_>) -> Answer {
        if !self.versioned && !matches!(request, Request::Version(_)) {
            return Err(errno::EPROTO);
        }
        let Some(fid) = acting_fid(&request) else {
            return self.answer::<N>(tag, request);
        };
        let user = self.fids.get(fid).map_err(ecode)?.user.clone();
        P::run(&user, || self.answer::<N>(tag, request))
    }

    /// Answers one decoded request, as whoever `dispatch` runs it as.
    fn answer<N: Namespace>(&mut self, tag: u16, request: Request<'_>) -> Answer {
        let reply = match request {
            Request::Version(t) => return self.version(tag, t),
            // No authentication: attach with afid = NOFID.
            Request::Auth(_) => return Err(errno::EOPNOTSUPP),
            Request::Attach(t) => self.attach(t).map_err(ecode)?,
            // Requests are answered in order: the one to flush is answered.
            Request::Flush(_) => Reply::Flush,
            Request::Walk(t) => return self.walk::<N>(tag, t),
            Request::Lopen(t) => self.lopen(t).map_err(ecode)?,
            Request::Read(t) => return self.read(tag, t),
            Request::Readdir(t) => return self.readdir::<N>(tag, t),
            Request::Getattr(t) => self.getattr(t).map_err(ecode)?,
            Request::Readlink(t) => return self.readlink(tag, t.fid),
            Request::Statfs(t) => self.statfs(t.fid).map_err(ecode)?,
            // No extended attributes: "no such attribute" for any name.
            Request::Xattrwalk(t) => {
                self.fids.get(t.fid).map_err(ecode)?;
                return Err(errno::ENODATA);
            }
            Request::Clunk(t) => {
                self.fids.remove(t.fid).map_err(ecode)?;
                Reply::Clunk
            }
        };
        p9::encode_reply(tag, &reply, &mut self.out).map_err(|e| e.errno())
    }
    // ANCHOR_END: handle

    // ANCHOR: attach
    /// `Tattach`: a new fid for the export root, acting for the user the
    /// policy finds for `uname` and `n_uname`.
    fn attach(&mut self, t: Tattach<'_>) -> Result<Reply<'static>> {
        // No authentication: attach with afid = NOFID.
        if t.afid != NOFID {
            return Err(EINVAL);
        }
        if self.fids.contains(t.fid) {
            return Err(EEXIST);
        }
        let user = self.policy.attach(t.uname, t.n_uname)?;
        self.fids.insert(t.fid, self.root.clone(), user)?;
        Ok(Reply::Attach(Rattach { qid: self.root.qid }))
    }
    // ANCHOR_END: attach

    // ANCHOR: version
    /// `Tversion`: agree on the protocol and `msize` (at most what the
    /// policy allows); forget every fid.
    fn version(&mut self, tag: u16, t: Tversion<'_>) -> Answer {
        self.fids.clear();
        let msize = t.msize.min(self.policy.max_msize());
        let version = if t.version == frame::VERSION_9P2000_L && msize >= MIN_MSIZE {
            // Buffers first: if they cannot grow, the old msize stays.
            let len = msize as usize;
            self.out
                .resize(len, 0, GFP_KERNEL)
                .map_err(|_| ecode(ENOMEM))?;
            self.data
                .resize(len, 0, GFP_KERNEL)
                .map_err(|_| ecode(ENOMEM))?;
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
        p9::encode_reply(tag, &reply, &mut self.out).map_err(|e| e.errno())
    }
    // ANCHOR_END: version

    // ANCHOR: walk
    /// `Twalk`: from `fid`, walk the names one at a time; if all of them
    /// could be walked, `newfid` names the file reached. Otherwise the reply
    /// lists the qids of the names that could be (an error if not even the
    /// first could), and `newfid` is not created.
    fn walk<N: Namespace>(&mut self, tag: u16, t: Twalk<'_>) -> Answer {
        let from = self.fids.get(t.fid).map_err(ecode)?;
        let (mut node, user) = (from.node.clone(), from.user.clone());
        if t.newfid != t.fid && self.fids.contains(t.newfid) {
            return Err(ecode(EEXIST));
        }
        let mut qids = [Qid::default(); MAX_WALK_ELEMENTS];
        let mut walked = 0;
        for name in t.names.iter() {
            match N::step(&node, name) {
                Ok(next) => {
                    // Decoding checked there are at most 16 names.
                    if let Some(slot) = qids.get_mut(walked) {
                        *slot = next.qid;
                    }
                    walked += 1;
                    node = next;
                }
                Err(e) if walked == 0 => return Err(ecode(e)),
                Err(_) => break,
            }
        }
        if walked == t.names.len() {
            if t.newfid == t.fid {
                let fid = self.fids.get_mut(t.fid).map_err(ecode)?;
                fid.node = node;
                fid.open = None;
            } else {
                self.fids.insert(t.newfid, node, user).map_err(ecode)?;
            }
        }
        let qids = qids.get(..walked).unwrap_or(&[]);
        let reply = Reply::Walk(Rwalk {
            qids: WalkQids::from_list(qids).map_err(|e| e.errno())?,
        });
        p9::encode_reply(tag, &reply, &mut self.out).map_err(|e| e.errno())
    }
    // ANCHOR_END: walk

    // ANCHOR: lopen
    /// `Tlopen`: open a fid for reading, if the policy lets its user. Write
    /// flags get `EROFS`; only regular files and directories are opened.
    fn lopen(&mut self, t: Tlopen) -> Result<Reply<'static>> {
        if t.flags & WRITE_FLAGS != 0 {
            return Err(EROFS);
        }
        let fid = self.fids.get_mut(t.fid)?;
        if fid.open.is_some() {
            return Err(EBADF);
        }
        let node = fid.node.clone();
        let mode = u32::from(node.file.getattr()?.mode) & bindings::S_IFMT;
        match mode {
            bindings::S_IFREG | bindings::S_IFDIR => {}
            // Never open a symlink: the client resolves it, not the server.
            bindings::S_IFLNK => return Err(ELOOP),
            // A FIFO would block the worker until a writer came.
            _ => return Err(EOPNOTSUPP),
        }
        fid.open = Some(P::open(&fid.user, &node, &self.root)?);
        Ok(Reply::Lopen(Rlopen {
            qid: node.qid,
            iounit: 0,
        }))
    }
    // ANCHOR_END: lopen

    // ANCHOR: read
    /// `Tread`: up to `count` bytes (and what fits in `msize`) from `offset`.
    fn read(&mut self, tag: u16, t: Tread) -> Answer {
        let max = (self.msize as usize).saturating_sub(RREAD_HEADER_SIZE);
        let count = (t.count as usize).min(max);
        let fid = self.fids.get(t.fid).map_err(ecode)?;
        let file = fid.open.as_ref().ok_or(ecode(EBADF))?;
        // A directory is listed with `Treaddir`: `kernel_read` on one fails
        // too, but logs a warning first ("kernel read not supported"),
        // which a client could repeat at will.
        if fid.node.is_dir() {
            return Err(ecode(EISDIR));
        }
        let buf = self.data.get_mut(..count).ok_or(ecode(EINVAL))?;
        let n = file.read_at(buf, t.offset).map_err(ecode)?;
        let data = self.data.get(..n).ok_or(ecode(EINVAL))?;
        let reply = Reply::Read(Rread { data });
        p9::encode_reply(tag, &reply, &mut self.out).map_err(|e| e.errno())
    }
    // ANCHOR_END: read

    // ANCHOR: readdir
    /// `Treaddir`: the namespace lists the open directory, into what
    /// `count` and `msize` allow.
    fn readdir<N: Namespace>(&mut self, tag: u16, t: Treaddir) -> Answer {
        let fid = self.fids.get(t.fid).map_err(ecode)?;
        let file = fid.open.as_ref().ok_or(ecode(EBADF))?;
        let limit = (t.count as usize).min((self.msize as usize).saturating_sub(RREAD_HEADER_SIZE));
        N::readdir(file, t, limit, tag, &mut self.out).map_err(ecode)
    }
    // ANCHOR_END: readdir

    // ANCHOR: getattr
    /// `Tgetattr`: the basic `stat` fields (all of them, whatever the mask).
    fn getattr(&self, t: Tgetattr) -> Result<Reply<'static>> {
        let node = &self.fids.get(t.fid)?.node;
        let st = node.file.getattr()?;
        let (btime_sec, btime_nsec) = if st.result_mask & bindings::STATX_BTIME != 0 {
            (st.btime.tv_sec as u64, st.btime.tv_nsec as u64)
        } else {
            (0, 0)
        };
        Ok(Reply::Getattr(Rgetattr {
            valid: GETATTR_BASIC,
            qid: qid_of(&st, node.export_dev),
            mode: u32::from(st.mode),
            uid: st.uid.val,
            gid: st.gid.val,
            nlink: u64::from(st.nlink),
            rdev: encode_dev(st.rdev),
            size: st.size as u64,
            blksize: u64::from(st.blksize),
            blocks: st.blocks,
            atime_sec: st.atime.tv_sec as u64,
            atime_nsec: st.atime.tv_nsec as u64,
            mtime_sec: st.mtime.tv_sec as u64,
            mtime_nsec: st.mtime.tv_nsec as u64,
            ctime_sec: st.ctime.tv_sec as u64,
            ctime_nsec: st.ctime.tv_nsec as u64,
            btime_sec,
            btime_nsec,
            gen: 0,
            data_version: 0,
        }))
    }
    // ANCHOR_END: getattr

    /// `Tstatfs`: the numbers of the file system the fid is on.
    fn statfs(&self, fid: u32) -> Result<Reply<'static>> {
        let st = self.fids.get(fid)?.node.file.statfs()?;
        let [lo, hi] = st.f_fsid;
        Ok(Reply::Statfs(Rstatfs {
            fs_type: st.f_type as u32,
            bsize: st.f_bsize as u32,
            blocks: st.f_blocks,
            bfree: st.f_bfree,
            bavail: st.f_bavail,
            files: st.f_files,
            ffree: st.f_ffree,
            fsid: u64::from(lo as u32) | (u64::from(hi as u32) << 32),
            namelen: st.f_namelen as u32,
        }))
    }

    /// `Treadlink`: the target of a symlink fid, as it is stored.
    fn readlink(&mut self, tag: u16, fid: u32) -> Answer {
        let node = self.fids.get(fid).map_err(ecode)?.node.clone();
        if !node.is_symlink() {
            return Err(ecode(EINVAL));
        }
        let mut target = KVVec::new();
        node.file.readlink(&mut target).map_err(ecode)?;
        let reply = Reply::Readlink(Rreadlink { target: &target });
        p9::encode_reply(tag, &reply, &mut self.out).map_err(|e| e.errno())
    }
}

/// A `dev_t` as user space encodes it (`new_encode_dev`): what v9fs decodes.
fn encode_dev(dev: bindings::dev_t) -> u64 {
    let major = u64::from(dev >> 20);
    let minor = u64::from(dev & 0xf_ffff);
    (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)
}

// ANCHOR: acting_fid
/// The fid whose user a request acts as: the one it reads, walks from,
/// opens or clunks. `None` for the requests that name no fid yet.
fn acting_fid(request: &Request<'_>) -> Option<u32> {
    match request {
        Request::Version(_) | Request::Auth(_) | Request::Attach(_) | Request::Flush(_) => None,
        Request::Walk(t) => Some(t.fid),
        Request::Lopen(t) => Some(t.fid),
        Request::Read(t) => Some(t.fid),
        Request::Readdir(t) => Some(t.fid),
        Request::Getattr(t) => Some(t.fid),
        Request::Readlink(t) => Some(t.fid),
        Request::Statfs(t) => Some(t.fid),
        Request::Xattrwalk(t) => Some(t.fid),
        Request::Clunk(t) => Some(t.fid),
    }
}
// ANCHOR_END: acting_fid
