//! Owned messages for the property tests and the cross-check: proptest
//! generates these, and each test borrows a codec message from one.

use crate::p9::dirent::Dirents;
use crate::p9::qid::Qid;
use crate::p9::reply::*;
use crate::p9::request::*;
use crate::p9::{Reply, Request};
use proptest::collection::vec;
use proptest::prelude::*;

/// A request that owns its strings.
#[derive(Debug, Clone)]
pub(crate) enum Req {
    Version(u32, Vec<u8>),
    Auth(u32, Vec<u8>, Vec<u8>, u32),
    Attach(u32, u32, Vec<u8>, Vec<u8>, u32),
    Flush(u16),
    Walk(u32, u32, Vec<Vec<u8>>),
    Lopen(u32, u32),
    Read(u32, u64, u32),
    Readdir(u32, u64, u32),
    Getattr(u32, u64),
    Readlink(u32),
    Statfs(u32),
    Xattrwalk(u32, u32, Vec<u8>),
    Clunk(u32),
}

/// One directory entry that owns its name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) qid: Qid,
    pub(crate) offset: u64,
    pub(crate) ty: u8,
    pub(crate) name: Vec<u8>,
}

/// A reply that owns its strings and data.
#[derive(Debug, Clone)]
pub(crate) enum Rep {
    Version(u32, Vec<u8>),
    Attach(Qid),
    Flush,
    Walk(Vec<Qid>),
    Lopen(Qid, u32),
    Read(Vec<u8>),
    Readdir(Vec<Entry>),
    Getattr(Rgetattr),
    Readlink(Vec<u8>),
    Statfs(Rstatfs),
    Clunk,
    Lerror(u32),
}

impl Req {
    /// Calls `f` with the codec's view of this request.
    pub(crate) fn with<T>(&self, f: impl FnOnce(Request<'_>) -> T) -> T {
        let names: Vec<&[u8]> = match self {
            Req::Walk(_, _, names) => names.iter().map(Vec::as_slice).collect(),
            _ => Vec::new(),
        };
        f(match self {
            Req::Version(msize, v) => Request::Version(Tversion {
                msize: *msize,
                version: v,
            }),
            Req::Auth(afid, u, a, n) => Request::Auth(Tauth {
                afid: *afid,
                uname: u,
                aname: a,
                n_uname: *n,
            }),
            Req::Attach(fid, afid, u, a, n) => Request::Attach(Tattach {
                fid: *fid,
                afid: *afid,
                uname: u,
                aname: a,
                n_uname: *n,
            }),
            Req::Flush(oldtag) => Request::Flush(Tflush { oldtag: *oldtag }),
            Req::Walk(fid, newfid, _) => Request::Walk(Twalk {
                fid: *fid,
                newfid: *newfid,
                names: WalkNames::from_list(&names).expect("at most 16 names"),
            }),
            Req::Lopen(fid, flags) => Request::Lopen(Tlopen {
                fid: *fid,
                flags: *flags,
            }),
            Req::Read(fid, offset, count) => Request::Read(Tread {
                fid: *fid,
                offset: *offset,
                count: *count,
            }),
            Req::Readdir(fid, offset, count) => Request::Readdir(Treaddir {
                fid: *fid,
                offset: *offset,
                count: *count,
            }),
            Req::Getattr(fid, mask) => Request::Getattr(Tgetattr {
                fid: *fid,
                request_mask: *mask,
            }),
            Req::Readlink(fid) => Request::Readlink(Treadlink { fid: *fid }),
            Req::Statfs(fid) => Request::Statfs(Tstatfs { fid: *fid }),
            Req::Xattrwalk(fid, newfid, name) => Request::Xattrwalk(Txattrwalk {
                fid: *fid,
                newfid: *newfid,
                name,
            }),
            Req::Clunk(fid) => Request::Clunk(Tclunk { fid: *fid }),
        })
    }
}

/// The wire bytes of `entries`, written here byte by byte (not by the
/// codec's dirent encoder, which the tests check against this).
pub(crate) fn dirent_bytes(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        out.push(e.qid.ty);
        out.extend_from_slice(&e.qid.version.to_le_bytes());
        out.extend_from_slice(&e.qid.path.to_le_bytes());
        out.extend_from_slice(&e.offset.to_le_bytes());
        out.push(e.ty);
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&e.name);
    }
    out
}

impl Rep {
    /// Calls `f` with the codec's view of this reply.
    pub(crate) fn with<T>(&self, f: impl FnOnce(Reply<'_>) -> T) -> T {
        let dirents = match self {
            Rep::Readdir(entries) => dirent_bytes(entries),
            _ => Vec::new(),
        };
        f(match self {
            Rep::Version(msize, v) => Reply::Version(Rversion {
                msize: *msize,
                version: v,
            }),
            Rep::Attach(qid) => Reply::Attach(Rattach { qid: *qid }),
            Rep::Flush => Reply::Flush,
            Rep::Walk(qids) => Reply::Walk(Rwalk {
                qids: WalkQids::from_list(qids).expect("at most 16"),
            }),
            Rep::Lopen(qid, iounit) => Reply::Lopen(Rlopen {
                qid: *qid,
                iounit: *iounit,
            }),
            Rep::Read(data) => Reply::Read(Rread { data }),
            Rep::Readdir(_) => Reply::Readdir(Rreaddir {
                data: Dirents::new(&dirents).expect("well-formed dirents"),
            }),
            Rep::Getattr(attr) => Reply::Getattr(*attr),
            Rep::Readlink(target) => Reply::Readlink(Rreadlink { target }),
            Rep::Statfs(statfs) => Reply::Statfs(*statfs),
            Rep::Clunk => Reply::Clunk,
            Rep::Lerror(ecode) => Reply::Lerror(Rlerror { ecode: *ecode }),
        })
    }
}

/// Strings: any bytes when `utf8` is false, else printable ASCII (the
/// cross-check crate keeps strings as Rust `String`s).
pub(crate) fn string(utf8: bool, max: usize) -> BoxedStrategy<Vec<u8>> {
    if utf8 {
        vec(0x20u8..0x7f, 0..max).boxed()
    } else {
        vec(any::<u8>(), 0..max).boxed()
    }
}

pub(crate) fn qid() -> impl Strategy<Value = Qid> {
    (any::<u8>(), any::<u32>(), any::<u64>()).prop_map(|(ty, version, path)| Qid {
        ty,
        version,
        path,
    })
}

/// Any request; `utf8` limits strings to what the cross-check crate takes,
/// and getattr masks to the bits it knows.
pub(crate) fn request(utf8: bool) -> impl Strategy<Value = Req> {
    let s = move || string(utf8, 24);
    let mask = if utf8 {
        (0..0x4000u64).boxed()
    } else {
        any::<u64>().boxed()
    };
    prop_oneof![
        (any::<u32>(), s()).prop_map(|(m, v)| Req::Version(m, v)),
        (any::<u32>(), s(), s(), any::<u32>()).prop_map(|(a, u, n, i)| Req::Auth(a, u, n, i)),
        (any::<u32>(), any::<u32>(), s(), s(), any::<u32>())
            .prop_map(|(f, a, u, n, i)| Req::Attach(f, a, u, n, i)),
        any::<u16>().prop_map(Req::Flush),
        (any::<u32>(), any::<u32>(), vec(string(utf8, 12), 0..=16))
            .prop_map(|(f, n, names)| Req::Walk(f, n, names)),
        (any::<u32>(), any::<u32>()).prop_map(|(f, l)| Req::Lopen(f, l)),
        (any::<u32>(), any::<u64>(), any::<u32>()).prop_map(|(f, o, c)| Req::Read(f, o, c)),
        (any::<u32>(), any::<u64>(), any::<u32>()).prop_map(|(f, o, c)| Req::Readdir(f, o, c)),
        (any::<u32>(), mask).prop_map(|(f, m)| Req::Getattr(f, m)),
        any::<u32>().prop_map(Req::Readlink),
        any::<u32>().prop_map(Req::Statfs),
        (any::<u32>(), any::<u32>(), s()).prop_map(|(f, n, s)| Req::Xattrwalk(f, n, s)),
        any::<u32>().prop_map(Req::Clunk),
    ]
}

pub(crate) fn entry(utf8: bool) -> impl Strategy<Value = Entry> {
    (qid(), any::<u64>(), any::<u8>(), string(utf8, 20)).prop_map(|(qid, offset, ty, name)| Entry {
        qid,
        offset,
        ty,
        name,
    })
}

fn rgetattr(reserved: bool) -> impl Strategy<Value = Rgetattr> {
    (
        (
            any::<u64>(),
            qid(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
        ),
        any::<[u64; 11]>(),
        any::<[u64; 4]>(),
    )
        .prop_map(move |((valid, qid, mode, uid, gid), a, b)| Rgetattr {
            // The cross-check crate knows only these bits, and writes
            // zeros for the four reserved fields.
            valid: if reserved { valid } else { valid & 0x3fff },
            qid,
            mode,
            uid,
            gid,
            nlink: a[0],
            rdev: a[1],
            size: a[2],
            blksize: a[3],
            blocks: a[4],
            atime_sec: a[5],
            atime_nsec: a[6],
            mtime_sec: a[7],
            mtime_nsec: a[8],
            ctime_sec: a[9],
            ctime_nsec: a[10],
            btime_sec: if reserved { b[0] } else { 0 },
            btime_nsec: if reserved { b[1] } else { 0 },
            gen: if reserved { b[2] } else { 0 },
            data_version: if reserved { b[3] } else { 0 },
        })
}

fn rstatfs() -> impl Strategy<Value = Rstatfs> {
    (any::<u32>(), any::<u32>(), any::<[u64; 6]>(), any::<u32>()).prop_map(|(t, b, n, l)| Rstatfs {
        fs_type: t,
        bsize: b,
        blocks: n[0],
        bfree: n[1],
        bavail: n[2],
        files: n[3],
        ffree: n[4],
        fsid: n[5],
        namelen: l,
    })
}

/// Any reply; `utf8` as for `request`.
pub(crate) fn reply(utf8: bool) -> impl Strategy<Value = Rep> {
    prop_oneof![
        (any::<u32>(), string(utf8, 24)).prop_map(|(m, v)| Rep::Version(m, v)),
        qid().prop_map(Rep::Attach),
        Just(Rep::Flush),
        vec(qid(), 0..=16).prop_map(Rep::Walk),
        (qid(), any::<u32>()).prop_map(|(q, i)| Rep::Lopen(q, i)),
        vec(any::<u8>(), 0..200).prop_map(Rep::Read),
        vec(entry(utf8), 0..8).prop_map(Rep::Readdir),
        rgetattr(!utf8).prop_map(Rep::Getattr),
        string(utf8, 40).prop_map(Rep::Readlink),
        rstatfs().prop_map(Rep::Statfs),
        Just(Rep::Clunk),
        any::<u32>().prop_map(Rep::Lerror),
    ]
}
