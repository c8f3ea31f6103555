//! The stateful harness of r9p's session logic: a sequence of requests and
//! fake-VFS mutations, decoded from bytes (what the `p9_session` fuzz
//! target and the replayed inputs of `r9p_session_tests.rs` give it), run
//! against a `Session` over the fake of `r9p_fake.rs`, with the invariants
//! checked after every step.
//!
//! The input is a small grammar, so that libFuzzer's byte mutations stay
//! meaningful: the first byte is the configuration (`cross_mounts`,
//! `allow_root`, the limits), then each operation is an opcode byte and
//! its argument bytes (fids 0..8, names from a dictionary of the fake's
//! names and the hostile ones: `..`, `.`, `a/f`, NUL, 300 bytes). A missing
//! byte reads as 0, so every input is a valid program.
//!
//! The invariants (each failure names the one it broke):
//! 1. **Confinement**: the VFS is never asked about a file outside the
//!    export, nor for `.` or `..`, nor for a name with `/` or NUL; never
//!    about a file on another mount without `cross_mounts` (the fake).
//! 2. **Users**: every VFS call a request makes is made as the user who
//!    attached the fid it names (after root squash), whom the user database
//!    listed at that attach (the harness's model).
//! 3. **No blocking, no oops**: no FIFO opened, no open that would wait
//!    for a lease, no call on the FUSE mount that never answers, no magic
//!    link read, no `O_NOATIME` for a non-owner, no open without `open(2)`'s
//!    `MAY_OPEN` check before it (the fake).
//! 4. **Memory**: the handles alive never exceed the walked-name budget
//!    (plus the roots), the open files never exceed the fids, and once the
//!    session is dropped nothing is left.
//! 5. **Protocol**: nothing but `Rversion` or `Rlerror` before a
//!    `Tversion` was agreed to; every reply decodes and has the request's
//!    tag.
//! 6. **Qids**: two files (file system, inode number) never share a qid
//!    path, over the whole run.

use crate::p9::{
    self,
    frame::NOFID,
    request::{
        Tattach, Tauth, Tclunk, Tflush, Tgetattr, Tlopen, Tread, Treaddir, Treadlink, Tstatfs,
        Tversion, Twalk, Txattrwalk, WalkNames,
    },
    Reply, Request,
};
use crate::r9p_fake::{Buf, Config, FUser, Fake};
use crate::r9p_session::{Limits, Session, ANONYMOUS_UID, NONUNAME};

/// What the harness's session reaches: all of it, as stage 33's server
/// does (stage 29's walk, stage 30's listing).
use crate::listing::Listed as Full;
use std::collections::{BTreeMap, HashMap};

/// The names a walk picks from.
const NAMES: [&[u8]; 24] = [
    b".", b"..", b"a", b"b", b"f", b"private", b"g", b"link", b"fifo", b"leased", b"deep", b"d",
    b"mnt", b"x", b"proc", b"self", b"cwd", b"hang", b"y", b"secret", b"", b"a/f", b"a\0",
    b"a.old",
];

/// The `p9_session` fuzz target's seeds: a session that versions and
/// attaches, and one that walks, opens, reads and lists a little. The rest
/// is the fuzzer's to find.
pub fn seed_programs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("attach", vec![0, 0, 0, 2, 1, 0, 1, 0]),
        (
            "tour",
            vec![
                0, 0, 0, 2, 1, 0, 1, 0, 2, 0, 1, 2, 2, 4, 4, 1, 0, 5, 1, 0, 100, 0, 2, 0, 2, 1, 2,
                4, 2, 0, 6, 2, 4, 7, 1, 10, 1, 10, 2,
            ],
        ),
    ]
}

/// The paths of the fake a path walk picks from (op 15): what the
/// environment has that a random walk of names rarely reaches.
const PATHS: [&[&[u8]]; 12] = [
    &[b"a", b"f"],
    &[b"a", b"private"],
    &[b"b", b"g"],
    &[b"proc", b"cwd"],
    &[b"proc", b"self"],
    &[b"mnt", b"x"],
    &[b"hang", b"y"],
    &[b"deep", b"d", b"d", b"d"],
    &[b"leased"],
    &[b"fifo"],
    &[b"link"],
    &[b"a", b"..", b"..", b"secret"],
];

/// What a run did, for the statistics.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Requests answered.
    pub requests: usize,
    /// Of which answered with `Rlerror`.
    pub errors: usize,
}

/// Bytes, read one at a time; 0 once they run out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The harness's model of the session: what the client was told.
struct Model {
    versioned: bool,
    /// Fid to the uid it acts for.
    fids: BTreeMap<u32, u32>,
    /// Qid path to (file system, inode number).
    qids: HashMap<u64, (u64, u64)>,
    /// The offset the last `Treaddir` of each fid ended at.
    last_offset: BTreeMap<u32, u64>,
    allow_root: bool,
    /// Each request and its answer, for the tests.
    trace: Vec<String>,
    /// The server closed the connection (a frame larger than `msize`).
    closed: bool,
}

/// Runs the program `data`; `Err` names the first invariant it broke.
pub fn run(data: &[u8]) -> Result<Stats, String> {
    run_traced(data).0
}

/// Runs the program `data`, and says what each request was answered
/// (`Twalk: Rwalk 2`, `Tlopen: errno 11`, ...).
pub fn run_traced(data: &[u8]) -> (Result<Stats, String>, Vec<String>) {
    let mut trace = Vec::new();
    let result = run_inner(data, &mut trace);
    (result, trace)
}

fn run_inner(data: &[u8], trace: &mut Vec<String>) -> Result<Stats, String> {
    let mut input = Input(data);
    let config = input.byte();
    let cross_mounts = config & 1 != 0;
    let allow_root = config & 2 != 0;
    let limits = Limits {
        max_msize: 65536,
        max_fids: 16 << ((config >> 2) & 1),
        max_names: 64 << ((config >> 3) & 1),
        allow_root,
        cross_mounts,
    };
    let fake = Fake::new(Config { cross_mounts });
    let root = fake.handle(fake.export);
    let root_attr = crate::r9p_session::vfs::Vfs::getattr(&fake, &FUser { uid: 0, gid: 0 }, &root)
        .map_err(|e| format!("the export root: errno {e}"))?;
    fake.take_calls();
    let mut session = Session::new(
        fake,
        root,
        root_attr,
        limits,
        Buf::default(),
        Buf::default(),
    )
    .map_err(|e| format!("Session::new: errno {e}"))?;
    let mut model = Model {
        versioned: false,
        fids: BTreeMap::new(),
        qids: HashMap::new(),
        last_offset: BTreeMap::new(),
        allow_root,
        trace: Vec::new(),
        closed: false,
    };
    let mut stats = Stats::default();
    let mut tag = 0u16;
    let mut steps = 0;
    while !input.is_empty() && !model.closed && steps < 400 {
        steps += 1;
        tag = tag.wrapping_add(1) % 0xfff0;
        let result = step(
            &mut session,
            &mut model,
            &mut input,
            tag,
            &limits,
            &mut stats,
        )
        .and_then(|()| check(&session, &mut model, &limits));
        trace.append(&mut model.trace);
        result?;
    }
    // Nothing is left once the session is gone.
    let (handles, files) = leftovers(session);
    if handles != 0 || files != 0 {
        return Err(format!(
            "memory: {handles} handles and {files} open files left once the session was dropped"
        ));
    }
    Ok(stats)
}

/// Drops the session; what it left alive in its fake.
fn leftovers(session: Session<Fake, Full>) -> (usize, usize) {
    // The counters outlive the fake, which the session owns.
    let counters = session.vfs().counters();
    drop(session);
    (counters.0.get(), counters.1.get())
}

/// One operation of the program.
fn step(
    session: &mut Session<Fake, Full>,
    model: &mut Model,
    input: &mut Input<'_>,
    tag: u16,
    limits: &Limits,
    stats: &mut Stats,
) -> Result<(), String> {
    let op = input.byte();
    let fid = u32::from(input.byte() % 8);
    let request = match op % 16 {
        0 => {
            let b = input.byte();
            let msize = [4096, 8192, 65536, 1000][usize::from(b & 3)];
            let version: &[u8] = if b & 4 == 0 { b"9P2000.L" } else { b"9P2000" };
            Request::Version(Tversion { msize, version })
        }
        1 => {
            let (uname, n_uname): (&[u8], u32) = match input.byte() % 8 {
                0 => (b"", 0),
                1 => (b"", 1000),
                2 => (b"", 1001),
                3 => (b"", 1002),
                4 => (b"root", NONUNAME),
                5 => (b"alice", NONUNAME),
                6 => (b"carol", NONUNAME),
                _ => (b"", 42),
            };
            let afid = if input.byte() == 0xff { 7 } else { NOFID };
            Request::Attach(Tattach {
                fid,
                afid,
                uname,
                aname: b"",
                n_uname,
            })
        }
        15 => {
            let newfid = u32::from(input.byte() % 8);
            let path = PATHS[usize::from(input.byte()) % PATHS.len()];
            return send_walk(session, model, tag, fid, newfid, path, limits, stats);
        }
        2 | 3 => {
            let newfid = u32::from(input.byte() % 8);
            let n = if op % 16 == 3 {
                16
            } else {
                usize::from(input.byte() % 5)
            };
            let mut names: Vec<&[u8]> = Vec::new();
            let long = [b'n'; 300];
            for _ in 0..n {
                let pick = input.byte();
                names.push(match pick {
                    // A deep walk repeats `d`, or climbs back.
                    _ if op % 16 == 3 && pick < 0xf0 => b"d",
                    0xff => &long,
                    _ => NAMES[usize::from(pick) % NAMES.len()],
                });
            }
            return send_walk(session, model, tag, fid, newfid, &names, limits, stats);
        }
        4 => {
            let flags = [0, 0o4000, 1, 0o1000000, 0o100][usize::from(input.byte() % 5)];
            Request::Lopen(Tlopen { fid, flags })
        }
        5 => {
            let offset = u64::from(input.byte());
            let count = u32::from(input.u16());
            Request::Read(Tread { fid, offset, count })
        }
        6 => {
            let b = input.byte();
            let offset = if b & 1 == 0 {
                0
            } else {
                *model.last_offset.get(&fid).unwrap_or(&0)
            };
            let count = [40, 64, 8192, 0][usize::from((b >> 1) & 3)];
            Request::Readdir(Treaddir { fid, offset, count })
        }
        7 => Request::Getattr(Tgetattr {
            fid,
            request_mask: !0,
        }),
        8 => Request::Readlink(Treadlink { fid }),
        9 => Request::Statfs(Tstatfs { fid }),
        10 => Request::Clunk(Tclunk { fid }),
        11 => match input.byte() % 3 {
            0 => Request::Xattrwalk(Txattrwalk {
                fid,
                newfid: 7,
                name: b"user.x",
            }),
            1 => Request::Flush(Tflush { oldtag: 1 }),
            _ => Request::Auth(Tauth {
                afid: fid,
                uname: b"alice",
                aname: b"",
                n_uname: 1000,
            }),
        },
        12 => {
            session.vfs().mutate(input.byte());
            return Ok(());
        }
        13 => {
            // A frame of raw bytes behind a valid size and tag.
            let len = usize::from(input.byte() % 40);
            let mut frame = vec![0u8; 7 + len];
            frame[0..4].copy_from_slice(&((7 + len) as u32).to_le_bytes());
            frame[4] = input.byte();
            frame[5..7].copy_from_slice(&tag.to_le_bytes());
            for b in &mut frame[7..] {
                *b = input.byte();
            }
            return exchange(session, model, &frame, tag, None, Acting::Unchecked, stats)
                .map(|_| ());
        }
        _ => {
            // `Tmkdir`: a write, which the codec does not know.
            let frame = [11, 0, 0, 0, 72, tag as u8, (tag >> 8) as u8, 0, 0, 0, 0];
            return exchange(session, model, &frame, tag, None, Acting::Unchecked, stats)
                .map(|_| ());
        }
    };
    let mut frame = vec![0u8; 8192];
    let len = p9::encode_request(tag, &request, &mut frame).map_err(|e| format!("encode: {e}"))?;
    let acting = match request {
        Request::Version(_) | Request::Attach(_) | Request::Flush(_) | Request::Auth(_) => {
            Acting::Nobody
        }
        _ => Acting::Fid(fid),
    };
    let reply = exchange(
        session,
        model,
        &frame[..len],
        tag,
        Some(&request),
        acting,
        stats,
    )?;
    // The model follows what the client was told.
    match (request, reply) {
        (Request::Version(_), Some(Seen::Version(agreed))) => {
            model.fids.clear();
            model.versioned = agreed;
        }
        (Request::Version(_), _) => model.fids.clear(),
        (Request::Attach(t), Some(Seen::Attach)) => {
            let by_uid = (t.n_uname != NONUNAME).then_some(t.n_uname);
            let Some((uid, _)) = session.vfs().account(by_uid, t.uname) else {
                return Err(format!(
                    "users: attached uid {by_uid:?} or name {:?}, whom the user database does not list",
                    String::from_utf8_lossy(t.uname)
                ));
            };
            let uid = if uid == 0 && !model.allow_root {
                ANONYMOUS_UID
            } else {
                uid
            };
            model.fids.insert(t.fid, uid);
        }
        (Request::Clunk(t), Some(Seen::Clunk)) => {
            model.fids.remove(&t.fid);
        }
        (Request::Readdir(t), Some(Seen::Readdir(Some(last)))) => {
            model.last_offset.insert(t.fid, last);
        }
        _ => {}
    }
    Ok(())
}

/// Sends a `Twalk`; the model learns the new fid.
#[allow(clippy::too_many_arguments)]
fn send_walk(
    session: &mut Session<Fake, Full>,
    model: &mut Model,
    tag: u16,
    fid: u32,
    newfid: u32,
    names: &[&[u8]],
    _limits: &Limits,
    stats: &mut Stats,
) -> Result<(), String> {
    let names = WalkNames::from_list(names).map_err(|e| format!("walk names: {e}"))?;
    let request = Request::Walk(Twalk { fid, newfid, names });
    let mut frame = vec![0u8; 8192];
    let len = p9::encode_request(tag, &request, &mut frame).map_err(|e| format!("encode: {e}"))?;
    let reply = exchange(
        session,
        model,
        &frame[..len],
        tag,
        Some(&request),
        Acting::Fid(fid),
        stats,
    )?;
    if let Some(Seen::Walk(walked)) = reply {
        if walked == names.len() {
            if let Some(&uid) = model.fids.get(&fid) {
                model.fids.insert(newfid, uid);
            }
        }
    }
    Ok(())
}

/// Hands `frame` to the session and checks the reply and the calls it
/// made; the reply, decoded.
fn exchange(
    session: &mut Session<Fake, Full>,
    model: &mut Model,
    frame: &[u8],
    tag: u16,
    request: Option<&Request<'_>>,
    acting: Acting,
    stats: &mut Stats,
) -> Result<Option<Seen>, String> {
    session.vfs().take_calls();
    // What the kernel's framing does first: a frame larger than `msize`
    // is refused, and the connection closed.
    if !crate::r9p_session::frame_fits(frame.len(), session.msize()) {
        let len = session.refuse(frame);
        let refusal = p9::decode_reply(session.reply(len), 8192)
            .map_err(|e| format!("protocol: the refusal does not decode: {e}"))?;
        if refusal.body != Reply::Lerror(p9::reply::Rlerror { ecode: 71 }) {
            return Err(format!(
                "protocol: an oversized frame was answered {:?}",
                refusal.body
            ));
        }
        model.trace.push("oversized: errno 71, closed".to_string());
        model.closed = true;
        return Ok(None);
    }
    let len = session.handle(frame);
    stats.requests += 1;
    let bytes = session.reply(len).to_vec();
    let decoded = p9::decode_reply(&bytes, session.msize().max(8192))
        .map_err(|e| format!("protocol: the reply to {request:?} does not decode: {e}"))?;
    if decoded.tag != tag {
        return Err(format!("protocol: reply tag {} for tag {tag}", decoded.tag));
    }
    // Whatever request it answered, an `Rversion` starts a new session.
    if let Reply::Version(r) = decoded.body {
        model.fids.clear();
        model.versioned = r.version == p9::frame::VERSION_9P2000_L;
    }
    let is_error = matches!(decoded.body, Reply::Lerror(_));
    let name = request.map_or("raw".to_string(), |r| {
        format!("{:?}", r)
            .split('(')
            .next()
            .unwrap_or("")
            .to_string()
    });
    model.trace.push(match &decoded.body {
        Reply::Lerror(e) => format!("T{name}: errno {}", e.ecode),
        Reply::Walk(w) => format!("T{name}: Rwalk {}", w.qids.len()),
        other => format!(
            "T{name}: R{}",
            format!("{other:?}").split(['(', ' ']).next().unwrap_or("")
        ),
    });
    if is_error {
        stats.errors += 1;
    }
    if !model.versioned && !is_error && !matches!(decoded.body, Reply::Version(_)) {
        return Err(format!(
            "protocol: {request:?} was answered ({:?}) before a Tversion was agreed to",
            decoded.body
        ));
    }
    // Every call was made as the user of the fid the request acts on.
    let calls = session.vfs().take_calls();
    let expected = match acting {
        Acting::Fid(f) => model.fids.get(&f).copied(),
        Acting::Nobody => None,
        Acting::Unchecked => {
            // Raw bytes that decoded into a request may have made or
            // clunked fids: the model takes the session's word for them.
            for fid in 0..8 {
                match session.fid_info(fid) {
                    Some((_, _, uid)) => model.fids.insert(fid, uid),
                    None => model.fids.remove(&fid),
                };
            }
            return violations(session).map(|()| Some(Seen::of(&decoded.body)));
        }
    };
    for (op, uid) in &calls {
        if Some(*uid) != expected {
            return Err(format!(
                "users: {op} made as uid {uid} for {request:?}, whose fid acts for {expected:?}"
            ));
        }
    }
    violations(session)?;
    Ok(Some(Seen::of(&decoded.body)))
}

/// The first violation the fake recorded, if any.
fn violations(session: &Session<Fake, Full>) -> Result<(), String> {
    match session.vfs().violations().first() {
        Some(v) => Err(v.clone()),
        None => Ok(()),
    }
}

/// Whose user the calls of a request must be made as.
#[derive(Clone, Copy)]
enum Acting {
    /// The user of this fid (the one the request names).
    Fid(u32),
    /// Nobody's: the request names no fid (`Tversion`, `Tattach`, ...).
    Nobody,
    /// Not checked: raw bytes, which may decode into any request.
    Unchecked,
}

/// What the model needs of a reply (the reply borrows the session's
/// buffer, which the next request overwrites).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// `Rversion`: whether it agreed to 9P2000.L.
    Version(bool),
    /// `Rattach`.
    Attach,
    /// `Rclunk`.
    Clunk,
    /// `Rwalk` with this many qids.
    Walk(usize),
    /// `Rreaddir`, and the offset of its last entry, if any.
    Readdir(Option<u64>),
    /// Anything else.
    Other,
}

impl Seen {
    fn of(reply: &Reply<'_>) -> Self {
        match reply {
            Reply::Version(r) => Seen::Version(r.version == p9::frame::VERSION_9P2000_L),
            Reply::Attach(_) => Seen::Attach,
            Reply::Clunk => Seen::Clunk,
            Reply::Walk(r) => Seen::Walk(r.qids.len()),
            Reply::Readdir(r) => Seen::Readdir(r.data.iter().last().map(|d| d.offset)),
            _ => Seen::Other,
        }
    }
}

/// The invariants on the session's state, after every step.
fn check(session: &Session<Fake, Full>, model: &mut Model, limits: &Limits) -> Result<(), String> {
    let fake = session.vfs();
    if session.names_held() > limits.max_names {
        return Err(format!(
            "memory: {} walked names held, over the budget of {}",
            session.names_held(),
            limits.max_names
        ));
    }
    // The session's root and its node table's: 2; each walked name one
    // more; a walk in progress is over by now.
    let bound = limits.max_names + 2;
    if fake.live_handles() > bound {
        return Err(format!(
            "memory: {} path handles alive, over the bound of {bound} (max_names {} + the roots)",
            fake.live_handles(),
            limits.max_names
        ));
    }
    if fake.open_files() > limits.max_fids || session.fid_count() > limits.max_fids {
        return Err(format!(
            "memory: {} open files and {} fids, over max_fids {}",
            fake.open_files(),
            session.fid_count(),
            limits.max_fids
        ));
    }
    for (&fid, &uid) in &model.fids {
        let Some((handle, qid, acting)) = session.fid_info(fid) else {
            return Err(format!(
                "fids: the client holds fid {fid}, the session does not"
            ));
        };
        if acting != uid {
            return Err(format!(
                "users: fid {fid} acts as uid {acting}; the user who attached it is uid {uid}"
            ));
        }
        let identity = fake.identity(handle.node);
        if let Some(other) = model.qids.insert(qid.path, identity) {
            if other != identity {
                return Err(format!(
                    "qids: (dev {}, ino {}) and (dev {}, ino {}) share the qid path {:#x}",
                    other.0, other.1, identity.0, identity.1, qid.path
                ));
            }
        }
    }
    for fid in 0..8 {
        if !model.fids.contains_key(&fid) && session.fid_info(fid).is_some() {
            return Err(format!(
                "fids: the session holds fid {fid}, which the client was never given"
            ));
        }
    }
    Ok(())
}
