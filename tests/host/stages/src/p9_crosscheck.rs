//! Cross-check against rs9p, an independent 9P2000.L implementation from
//! crates.io (a dev-dependency only): for random messages, both encoders
//! produce the same bytes, our decoder reads what rs9p writes, and rs9p reads
//! what we write.
//!
//! rs9p frames messages without the `size[4]` field (its transport adds it),
//! so the tests add or strip those four bytes.
//!
//! Two differences of rs9p are worked around, not copied:
//! - it always writes zeros for Rgetattr's four reserved fields and drops
//!   them when reading, so the model keeps them zero here;
//! - it reads Rreaddir's `count` as a number of entries, where the protocol
//!   (and rs9p's own encoder, and Linux) says bytes; so our Rreaddir data is
//!   checked with rs9p's per-entry decoder instead of its message decoder.

use crate::p9::frame as types;
use crate::p9::frame::HEADER_SIZE;
use crate::p9::qid::Qid;
use crate::p9::{decode_reply, decode_request, encode_reply, encode_request, Frame};
use crate::p9_model::{self, Entry, Rep, Req};
use proptest::prelude::*;
use rs9p::serialize::{read_msg, write_msg, Decodable};
use rs9p::{
    Data, DirEntry, DirEntryData, FCall, GetAttrMask, Msg, MsgType, QId, QIdType, Stat, StatFs,
    Time,
};
use std::io::Cursor;

fn s(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("the model makes ASCII for the cross-check")
}

fn qid(q: &Qid) -> QId {
    QId {
        typ: QIdType::from_bits_retain(q.ty),
        version: q.version,
        path: q.path,
    }
}

/// The same request, as rs9p's message type.
fn theirs_request(m: &Req) -> FCall {
    match m {
        Req::Version(msize, v) => FCall::TVersion {
            msize: *msize,
            version: s(v),
        },
        Req::Auth(afid, u, a, n) => FCall::TAuth {
            afid: *afid,
            uname: s(u),
            aname: s(a),
            n_uname: *n,
        },
        Req::Attach(fid, afid, u, a, n) => FCall::TAttach {
            fid: *fid,
            afid: *afid,
            uname: s(u),
            aname: s(a),
            n_uname: *n,
        },
        Req::Flush(oldtag) => FCall::TFlush { oldtag: *oldtag },
        Req::Walk(fid, newfid, names) => FCall::TWalk {
            fid: *fid,
            newfid: *newfid,
            wnames: names.iter().map(|n| s(n)).collect(),
        },
        Req::Lopen(fid, flags) => FCall::TlOpen {
            fid: *fid,
            flags: *flags,
        },
        Req::Read(fid, offset, count) => FCall::TRead {
            fid: *fid,
            offset: *offset,
            count: *count,
        },
        Req::Readdir(fid, offset, count) => FCall::TReadDir {
            fid: *fid,
            offset: *offset,
            count: *count,
        },
        Req::Getattr(fid, mask) => FCall::TGetAttr {
            fid: *fid,
            req_mask: GetAttrMask::from_bits_retain(*mask),
        },
        Req::Readlink(fid) => FCall::TReadLink { fid: *fid },
        Req::Statfs(fid) => FCall::TStatFs { fid: *fid },
        Req::Xattrwalk(fid, newfid, name) => FCall::TxAttrWalk {
            fid: *fid,
            newfid: *newfid,
            name: s(name),
        },
        Req::Clunk(fid) => FCall::TClunk { fid: *fid },
    }
}

fn dir_entry(e: &Entry) -> DirEntry {
    DirEntry {
        qid: qid(&e.qid),
        offset: e.offset,
        typ: e.ty,
        name: s(&e.name),
    }
}

/// The same reply, as rs9p's message type.
fn theirs_reply(m: &Rep) -> FCall {
    match m {
        Rep::Version(msize, v) => FCall::RVersion {
            msize: *msize,
            version: s(v),
        },
        Rep::Attach(q) => FCall::RAttach { qid: qid(q) },
        Rep::Flush => FCall::RFlush,
        Rep::Walk(qids) => FCall::RWalk {
            wqids: qids.iter().map(qid).collect(),
        },
        Rep::Lopen(q, iounit) => FCall::RlOpen {
            qid: qid(q),
            iounit: *iounit,
        },
        Rep::Read(data) => FCall::RRead {
            data: Data(data.clone()),
        },
        Rep::Readdir(entries) => FCall::RReadDir {
            data: DirEntryData::with(entries.iter().map(dir_entry).collect()),
        },
        Rep::Getattr(a) => FCall::RGetAttr {
            valid: GetAttrMask::from_bits_retain(a.valid),
            qid: qid(&a.qid),
            stat: Stat {
                mode: a.mode,
                uid: a.uid,
                gid: a.gid,
                nlink: a.nlink,
                rdev: a.rdev,
                size: a.size,
                blksize: a.blksize,
                blocks: a.blocks,
                atime: Time {
                    sec: a.atime_sec,
                    nsec: a.atime_nsec,
                },
                mtime: Time {
                    sec: a.mtime_sec,
                    nsec: a.mtime_nsec,
                },
                ctime: Time {
                    sec: a.ctime_sec,
                    nsec: a.ctime_nsec,
                },
            },
        },
        Rep::Readlink(target) => FCall::RReadLink { target: s(target) },
        Rep::Statfs(f) => FCall::RStatFs {
            statfs: StatFs {
                typ: f.fs_type,
                bsize: f.bsize,
                blocks: f.blocks,
                bfree: f.bfree,
                bavail: f.bavail,
                files: f.files,
                ffree: f.ffree,
                fsid: f.fsid,
                namelen: f.namelen,
            },
        },
        Rep::Clunk => FCall::RClunk,
        Rep::Lerror(ecode) => FCall::RlError { ecode: *ecode },
    }
}

/// rs9p's bytes for a message, with the `size[4]` it leaves to its transport.
fn theirs_encode(tag: u16, body: FCall) -> Vec<u8> {
    let mut unsized_frame = Vec::new();
    write_msg(&mut unsized_frame, &Msg { tag, body }).expect("rs9p encodes");
    let mut framed = ((unsized_frame.len() + 4) as u32).to_le_bytes().to_vec();
    framed.extend_from_slice(&unsized_frame);
    framed
}

/// rs9p's reading of our frame (without its `size[4]`).
fn theirs_decode(frame: &[u8]) -> Msg {
    read_msg(&mut Cursor::new(&frame[4..])).expect("rs9p decodes our frame")
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000, failure_persistence: None, ..ProptestConfig::default()
    })]

    #[test]
    fn requests_agree_with_rs9p(m in p9_model::request(true), tag in any::<u16>()) {
        let theirs = theirs_encode(tag, theirs_request(&m));
        m.with(|ours| {
            let mut buf = vec![0u8; 1024];
            let len = encode_request(tag, &ours, &mut buf).unwrap();
            prop_assert_eq!(&buf[..len], &theirs[..], "same bytes");
            prop_assert_eq!(decode_request(&theirs, 8192), Ok(Frame { tag, body: ours }));
            prop_assert_eq!(theirs_decode(&buf[..len]), Msg { tag, body: theirs_request(&m) });
            Ok(())
        })?;
    }

    #[test]
    fn replies_agree_with_rs9p(m in p9_model::reply(true), tag in any::<u16>()) {
        let theirs = theirs_encode(tag, theirs_reply(&m));
        m.with(|ours| {
            let mut buf = vec![0u8; 4096];
            let len = encode_reply(tag, &ours, &mut buf).unwrap();
            prop_assert_eq!(&buf[..len], &theirs[..], "same bytes");
            prop_assert_eq!(decode_reply(&theirs, 8192), Ok(Frame { tag, body: ours }));
            if let Rep::Readdir(entries) = &m {
                // rs9p's Rreaddir decoder miscounts (see the top of the file):
                // read our data entry by entry with its dirent decoder.
                let mut data = Cursor::new(&buf[HEADER_SIZE + 4..len]);
                let back: Vec<DirEntry> = entries
                    .iter()
                    .map(|_| DirEntry::decode(&mut data).expect("rs9p reads our dirent"))
                    .collect();
                prop_assert_eq!(data.position() as usize, len - HEADER_SIZE - 4);
                prop_assert_eq!(back, entries.iter().map(dir_entry).collect::<Vec<_>>());
            } else {
                prop_assert_eq!(theirs_decode(&buf[..len]), Msg { tag, body: theirs_reply(&m) });
            }
            Ok(())
        })?;
    }
}

#[test]
fn type_codes_agree_with_rs9p() {
    let pairs = [
        (types::RLERROR, MsgType::RlError),
        (types::TSTATFS, MsgType::TStatFs),
        (types::RSTATFS, MsgType::RStatFs),
        (types::TLOPEN, MsgType::TlOpen),
        (types::RLOPEN, MsgType::RlOpen),
        (types::TREADLINK, MsgType::TReadLink),
        (types::RREADLINK, MsgType::RReadLink),
        (types::TGETATTR, MsgType::TGetAttr),
        (types::RGETATTR, MsgType::RGetAttr),
        (types::TXATTRWALK, MsgType::TxAttrWalk),
        (types::TREADDIR, MsgType::TReadDir),
        (types::RREADDIR, MsgType::RReadDir),
        (types::TVERSION, MsgType::TVersion),
        (types::RVERSION, MsgType::RVersion),
        (types::TAUTH, MsgType::TAuth),
        (types::TATTACH, MsgType::TAttach),
        (types::RATTACH, MsgType::RAttach),
        (types::TFLUSH, MsgType::TFlush),
        (types::RFLUSH, MsgType::RFlush),
        (types::TWALK, MsgType::TWalk),
        (types::RWALK, MsgType::RWalk),
        (types::TREAD, MsgType::TRead),
        (types::RREAD, MsgType::RRead),
        (types::TCLUNK, MsgType::TClunk),
        (types::RCLUNK, MsgType::RClunk),
    ];
    for (ours, theirs) in pairs {
        assert_eq!(ours, theirs as u8, "{theirs:?}");
    }
}

#[test]
fn rs9p_reads_rreaddir_count_as_entries() {
    // Documents the rs9p difference worked around above, so that the
    // workaround is dropped when rs9p changes: two entries, count 58 bytes.
    let entries = [
        Entry {
            qid: Qid {
                ty: 0x80,
                version: 0,
                path: 1,
            },
            offset: 1,
            ty: 4,
            name: b".".to_vec(),
        },
        Entry {
            qid: Qid::default(),
            offset: 2,
            ty: 8,
            name: b"hello.txt".to_vec(),
        },
    ];
    let theirs = theirs_encode(6, theirs_reply(&Rep::Readdir(entries.to_vec())));
    assert_eq!(
        &theirs[7..11],
        &58u32.to_le_bytes(),
        "rs9p writes count in bytes"
    );
    assert!(
        read_msg(&mut Cursor::new(&theirs[4..])).is_err(),
        "but reads 58 entries"
    );
}
