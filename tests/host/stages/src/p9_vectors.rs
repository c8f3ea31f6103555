//! Byte-exact vectors for every message, worked out by hand from the
//! protocol documents (the 9P2000.L spec, `include/net/9p/9p.h` for the type
//! codes, `net/9p/protocol.c` for the field order), not produced by our
//! encoder. Each vector is decoded and compared with the expected message,
//! and the message is encoded and compared with the vector.
//!
//! Every integer is little-endian: 8192 = 0x2000 is `00 20 00 00`.
//! Every frame starts `size[4] type[1] tag[2]`, and `size` counts itself.

use crate::p9::dirent::{encode_rreaddir, Dirent, ReaddirOutcome, DT_DIR, DT_REG};
use crate::p9::error::errno;
use crate::p9::frame::{read_header, Header, NOFID, NOTAG};
use crate::p9::qid::{Qid, QTDIR, QTFILE};
use crate::p9::reply::*;
use crate::p9::request::*;
use crate::p9::{decode_reply, decode_request, encode_reply, encode_request, Error, Frame};

const MSIZE: u32 = 8192;

/// Decodes `bytes` as a request and encodes `expected` back to `bytes`; every
/// shorter buffer must be refused, for decoding and for encoding.
fn check_request(bytes: &[u8], tag: u16, expected: Request<'_>) {
    assert_eq!(
        bytes.len(),
        u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize,
        "the vector's size field is its length"
    );
    let frame = decode_request(bytes, MSIZE).expect("the vector decodes");
    assert_eq!(
        frame,
        Frame {
            tag,
            body: expected
        }
    );
    let mut buf = [0u8; 256];
    let len = encode_request(tag, &expected, &mut buf).expect("the message encodes");
    assert_eq!(&buf[..len], bytes, "encoding gives the vector");
    for short in 0..bytes.len() {
        assert_eq!(
            encode_request(tag, &expected, &mut buf[..short]),
            Err(Error::BufferTooSmall),
            "encoding into {short} bytes"
        );
        assert!(
            decode_request(&bytes[..short], MSIZE).is_err(),
            "decoding {short} bytes"
        );
    }
}

/// As `check_request`, for replies.
fn check_reply(bytes: &[u8], tag: u16, expected: Reply<'_>) {
    assert_eq!(
        bytes.len(),
        u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize,
        "the vector's size field is its length"
    );
    let frame = decode_reply(bytes, MSIZE).expect("the vector decodes");
    assert_eq!(
        frame,
        Frame {
            tag,
            body: expected
        }
    );
    let mut buf = [0u8; 256];
    let len = encode_reply(tag, &expected, &mut buf).expect("the message encodes");
    assert_eq!(&buf[..len], bytes, "encoding gives the vector");
    for short in 0..bytes.len() {
        assert_eq!(
            encode_reply(tag, &expected, &mut buf[..short]),
            Err(Error::BufferTooSmall),
            "encoding into {short} bytes"
        );
        assert!(
            decode_reply(&bytes[..short], MSIZE).is_err(),
            "decoding {short} bytes"
        );
    }
}

// size = 7 + msize[4] + len[2] + 8 = 21 = 0x15
const TVERSION: &[u8] = &[
    0x15, 0x00, 0x00, 0x00, // size 21
    100,  // Tversion
    0xff, 0xff, // tag NOTAG
    0x00, 0x20, 0x00, 0x00, // msize 8192
    0x08, 0x00, b'9', b'P', b'2', b'0', b'0', b'0', b'.', b'L', // version[s]
];

#[test]
fn tversion() {
    let m = Tversion {
        msize: 8192,
        version: b"9P2000.L",
    };
    check_request(TVERSION, NOTAG, Request::Version(m));
}

#[test]
fn rversion() {
    // The server may lower msize: 4096 = 0x1000. size = 21.
    let bytes = [
        0x15, 0x00, 0x00, 0x00, 101, 0xff, 0xff, // size, Rversion, NOTAG
        0x00, 0x10, 0x00, 0x00, // msize 4096
        0x08, 0x00, b'9', b'P', b'2', b'0', b'0', b'0', b'.', b'L',
    ];
    let m = Rversion {
        msize: 4096,
        version: b"9P2000.L",
    };
    check_reply(&bytes, NOTAG, Reply::Version(m));
}

#[test]
fn tauth() {
    // size = 7 + afid[4] + (2 + 4) + (2 + 0) + n_uname[4] = 23 = 0x17
    let bytes = [
        0x17, 0x00, 0x00, 0x00, 102, 0x01, 0x00, // size, Tauth, tag 1
        0x05, 0x00, 0x00, 0x00, // afid 5
        0x04, 0x00, b'r', b'o', b'o', b't', // uname "root"
        0x00, 0x00, // aname ""
        0x00, 0x00, 0x00, 0x00, // n_uname 0
    ];
    let m = Tauth {
        afid: 5,
        uname: b"root",
        aname: b"",
        n_uname: 0,
    };
    check_request(&bytes, 1, Request::Auth(m));
}

#[test]
fn tattach() {
    // size = 7 + fid[4] + afid[4] + (2 + 4) + (2 + 4) + n_uname[4] = 31
    let bytes = [
        0x1f, 0x00, 0x00, 0x00, 104, 0x01, 0x00, // size 31, Tattach, tag 1
        0x00, 0x00, 0x00, 0x00, // fid 0
        0xff, 0xff, 0xff, 0xff, // afid NOFID
        0x04, 0x00, b'r', b'o', b'o', b't', // uname "root"
        0x04, 0x00, b'/', b's', b'r', b'v', // aname "/srv"
        0xe8, 0x03, 0x00, 0x00, // n_uname 1000
    ];
    let m = Tattach {
        fid: 0,
        afid: NOFID,
        uname: b"root",
        aname: b"/srv",
        n_uname: 1000,
    };
    check_request(&bytes, 1, Request::Attach(m));
}

#[test]
fn rattach() {
    // size = 7 + qid[13] = 20
    let bytes = [
        0x14, 0x00, 0x00, 0x00, 105, 0x01, 0x00, // size 20, Rattach, tag 1
        0x80, // qid.type QTDIR
        0x00, 0x00, 0x00, 0x00, // qid.version 0
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // qid.path 1
    ];
    let qid = Qid {
        ty: QTDIR,
        version: 0,
        path: 1,
    };
    check_reply(&bytes, 1, Reply::Attach(Rattach { qid }));
}

#[test]
fn tflush_rflush() {
    let tflush = [0x09, 0x00, 0x00, 0x00, 108, 0x02, 0x00, 0x01, 0x00]; // oldtag 1
    check_request(&tflush, 2, Request::Flush(Tflush { oldtag: 1 }));
    let rflush = [0x07, 0x00, 0x00, 0x00, 109, 0x02, 0x00];
    check_reply(&rflush, 2, Reply::Flush);
}

// size = 7 + fid[4] + newfid[4] + nwname[2] + (2 + 3) + (2 + 3) = 27 = 0x1b
const TWALK: &[u8] = &[
    0x1b, 0x00, 0x00, 0x00, 110, 0x03, 0x00, // size 27, Twalk, tag 3
    0x00, 0x00, 0x00, 0x00, // fid 0
    0x01, 0x00, 0x00, 0x00, // newfid 1
    0x02, 0x00, // nwname 2
    0x03, 0x00, b'u', b's', b'r', // "usr"
    0x03, 0x00, b'l', b'i', b'b', // "lib"
];

#[test]
fn twalk() {
    let names: &[&[u8]] = &[b"usr", b"lib"];
    let m = Twalk {
        fid: 0,
        newfid: 1,
        names: WalkNames::from_list(names).unwrap(),
    };
    check_request(TWALK, 3, Request::Walk(m));
    let Request::Walk(walk) = decode_request(TWALK, MSIZE).unwrap().body else {
        panic!("not a walk")
    };
    assert_eq!(walk.names.len(), 2);
    assert_eq!(walk.names.iter().collect::<Vec<_>>(), names);
}

#[test]
fn twalk_borrows_names_from_the_buffer() {
    let Request::Walk(walk) = decode_request(TWALK, MSIZE).unwrap().body else {
        panic!("not a walk")
    };
    let first = walk.names.iter().next().unwrap();
    // "usr" starts at byte 19 of the frame: the name is not a copy.
    assert!(std::ptr::eq(first.as_ptr(), TWALK[19..].as_ptr()));
}

#[test]
fn twalk_without_names_clones_the_fid() {
    // size = 7 + 4 + 4 + 2 = 17
    let bytes = [
        0x11, 0x00, 0x00, 0x00, 110, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00,
    ];
    let m = Twalk {
        fid: 0,
        newfid: 1,
        names: WalkNames::from_list(&[]).unwrap(),
    };
    check_request(&bytes, 3, Request::Walk(m));
}

#[test]
fn twalk_sixteen_names_is_the_limit() {
    // nwname 16 names "a": 7 + 4 + 4 + 2 + 16 * 3 = 65 = 0x41
    let mut bytes = vec![
        0x41, 0x00, 0x00, 0x00, 110, 0x03, 0x00, 0, 0, 0, 0, 1, 0, 0, 0, 16, 0,
    ];
    for _ in 0..16 {
        bytes.extend_from_slice(&[0x01, 0x00, b'a']);
    }
    let names: Vec<&[u8]> = vec![b"a"; 16];
    let m = Twalk {
        fid: 0,
        newfid: 1,
        names: WalkNames::from_list(&names).unwrap(),
    };
    check_request(&bytes, 3, Request::Walk(m));

    // The 17th name: nwname 17, size 68 = 0x44.
    bytes[0] = 0x44;
    bytes[15] = 17;
    bytes.extend_from_slice(&[0x01, 0x00, b'a']);
    assert_eq!(
        decode_request(&bytes, MSIZE),
        Err(Error::TooManyWalkElements(17))
    );
    let names: Vec<&[u8]> = vec![b"a"; 17];
    assert_eq!(
        WalkNames::from_list(&names),
        Err(Error::TooManyWalkElements(17))
    );
}

#[test]
fn twalk_bad_counts_are_refused() {
    // nwname says 3, but only two names follow.
    let mut bytes = TWALK.to_vec();
    bytes[15] = 3;
    assert_eq!(decode_request(&bytes, MSIZE), Err(Error::Truncated));
    // nwname says 1: the second name is left over in the frame.
    bytes[15] = 1;
    assert_eq!(decode_request(&bytes, MSIZE), Err(Error::TrailingBytes(5)));
    // nwname 0xffff: over the limit, refused before any name is looked at.
    bytes[15] = 0xff;
    bytes[16] = 0xff;
    assert_eq!(
        decode_request(&bytes, MSIZE),
        Err(Error::TooManyWalkElements(0xffff))
    );
    // The second name's length runs past the frame.
    let mut bytes = TWALK.to_vec();
    bytes[22] = 4;
    assert_eq!(decode_request(&bytes, MSIZE), Err(Error::Truncated));
}

#[test]
fn rwalk() {
    // size = 7 + nwqid[2] + 2 * 13 = 35 = 0x23
    let bytes = [
        0x23, 0x00, 0x00, 0x00, 111, 0x03, 0x00, // size 35, Rwalk, tag 3
        0x02, 0x00, // nwqid 2
        0x80, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, // dir, v0, 2
        0x00, 0x07, 0x00, 0x00, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02,
        0x01, // file, v7
    ];
    let qids = [
        Qid {
            ty: QTDIR,
            version: 0,
            path: 2,
        },
        Qid {
            ty: QTFILE,
            version: 7,
            path: 0x0102_0304_0506_0708,
        },
    ];
    let m = Rwalk {
        qids: WalkQids::from_list(&qids).unwrap(),
    };
    check_reply(&bytes, 3, Reply::Walk(m));
    let Reply::Walk(walk) = decode_reply(&bytes, MSIZE).unwrap().body else {
        panic!("not a walk")
    };
    assert_eq!(walk.qids.iter().collect::<Vec<_>>(), qids);
}

#[test]
fn rwalk_over_sixteen_qids_is_refused() {
    let mut bytes = vec![0u8; 7 + 2 + 17 * 13];
    bytes[..7].copy_from_slice(&[(7 + 2 + 17 * 13) as u8, 0, 0, 0, 111, 3, 0]);
    bytes[7] = 17;
    assert_eq!(
        decode_reply(&bytes, MSIZE),
        Err(Error::TooManyWalkElements(17))
    );
    assert_eq!(
        WalkQids::from_list(&[Qid::default(); 17]),
        Err(Error::TooManyWalkElements(17))
    );
}

#[test]
fn tlopen_rlopen() {
    // flags O_RDONLY | O_LARGEFILE = 0o100000 = 0x8000
    let tlopen = [
        0x0f, 0x00, 0x00, 0x00, 12, 0x04, 0x00, // size 15, Tlopen, tag 4
        0x01, 0x00, 0x00, 0x00, // fid 1
        0x00, 0x80, 0x00, 0x00, // flags
    ];
    check_request(
        &tlopen,
        4,
        Request::Lopen(Tlopen {
            fid: 1,
            flags: 0o100000,
        }),
    );
    // size = 7 + 13 + 4 = 24
    let rlopen = [
        0x18, 0x00, 0x00, 0x00, 13, 0x04, 0x00, // size 24, Rlopen, tag 4
        0x00, 0x01, 0x00, 0x00, 0x00, 0x2a, 0, 0, 0, 0, 0, 0, 0, // qid file, v1, 42
        0x00, 0x00, 0x00, 0x00, // iounit 0
    ];
    let qid = Qid {
        ty: QTFILE,
        version: 1,
        path: 42,
    };
    check_reply(&rlopen, 4, Reply::Lopen(Rlopen { qid, iounit: 0 }));
}

// size = 7 + fid[4] + offset[8] + count[4] = 23
const TREAD: &[u8] = &[
    0x17, 0x00, 0x00, 0x00, 116, 0x05, 0x00, // size 23, Tread, tag 5
    0x01, 0x00, 0x00, 0x00, // fid 1
    0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // offset 4096
    0xf5, 0x1f, 0x00, 0x00, // count 8181 = 8192 - 11
];

#[test]
fn tread() {
    check_request(
        TREAD,
        5,
        Request::Read(Tread {
            fid: 1,
            offset: 4096,
            count: 8181,
        }),
    );
}

#[test]
fn rread() {
    // size = 7 + count[4] + 6 = 17
    let bytes = [
        0x11, 0x00, 0x00, 0x00, 117, 0x05, 0x00, // size 17, Rread, tag 5
        0x06, 0x00, 0x00, 0x00, b'h', b'e', b'l', b'l', b'o', b'\n',
    ];
    check_reply(&bytes, 5, Reply::Read(Rread { data: b"hello\n" }));
    // An empty Rread is how the end of a file looks.
    let eof = [
        0x0b, 0x00, 0x00, 0x00, 117, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];
    check_reply(&eof, 5, Reply::Read(Rread { data: b"" }));
}

#[test]
fn rread_count_is_checked_against_the_frame() {
    // count 0xffffffff with 6 bytes of data: truncated, not a huge read.
    let bytes = [
        0x11, 0x00, 0x00, 0x00, 117, 0x05, 0x00, 0xff, 0xff, 0xff, 0xff, b'h', b'e', b'l', b'l',
        b'o', b'\n',
    ];
    assert_eq!(decode_reply(&bytes, MSIZE), Err(Error::Truncated));
}

#[test]
fn treaddir() {
    let bytes = [
        0x17, 0x00, 0x00, 0x00, 40, 0x06, 0x00, // size 23, Treaddir, tag 6
        0x02, 0x00, 0x00, 0x00, // fid 2
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // offset 0
        0xe8, 0x1f, 0x00, 0x00, // count 8168
    ];
    check_request(
        &bytes,
        6,
        Request::Readdir(Treaddir {
            fid: 2,
            offset: 0,
            count: 8168,
        }),
    );
}

// Two dirents, `qid[13] offset[8] type[1] name[s]` each:
//   "."         13 + 8 + 1 + 2 + 1 = 25 bytes
//   "hello.txt" 13 + 8 + 1 + 2 + 9 = 33 bytes
// count = 58 = 0x3a; size = 7 + 4 + 58 = 69 = 0x45
const RREADDIR: &[u8] = &[
    0x45, 0x00, 0x00, 0x00, 41, 0x06, 0x00, // size 69, Rreaddir, tag 6
    0x3a, 0x00, 0x00, 0x00, // count 58
    0x80, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // qid dir 1
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // offset 1
    0x04, // DT_DIR
    0x01, 0x00, b'.', // "."
    0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, // qid file 2
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // offset 2
    0x08, // DT_REG
    0x09, 0x00, b'h', b'e', b'l', b'l', b'o', b'.', b't', b'x', b't', // "hello.txt"
];

fn dirents() -> [Dirent<'static>; 2] {
    [
        Dirent {
            qid: Qid {
                ty: QTDIR,
                version: 0,
                path: 1,
            },
            offset: 1,
            ty: DT_DIR,
            name: b".",
        },
        Dirent {
            qid: Qid {
                ty: QTFILE,
                version: 0,
                path: 2,
            },
            offset: 2,
            ty: DT_REG,
            name: b"hello.txt",
        },
    ]
}

#[test]
fn rreaddir_decodes_to_entries() {
    let frame = decode_reply(RREADDIR, MSIZE).unwrap();
    assert_eq!(frame.tag, 6);
    let Reply::Readdir(readdir) = frame.body else {
        panic!("not a readdir")
    };
    assert_eq!(readdir.data.iter().collect::<Vec<_>>(), dirents());
    check_reply(RREADDIR, 6, Reply::Readdir(readdir));
}

#[test]
fn rreaddir_encodes_entries() {
    let mut buf = [0u8; 256];
    let outcome = encode_rreaddir(6, 8168, dirents(), &mut buf);
    assert_eq!(
        outcome,
        Ok(ReaddirOutcome {
            len: RREADDIR.len(),
            entries: 2
        })
    );
    assert_eq!(&buf[..RREADDIR.len()], RREADDIR);
}

#[test]
fn rreaddir_stops_before_the_count_limit() {
    let mut buf = [0u8; 256];
    // Exactly 58 bytes of count: both entries fit.
    let outcome = encode_rreaddir(6, 58, dirents(), &mut buf).unwrap();
    assert_eq!(outcome.entries, 2);
    // One byte less: only "." (25 bytes) fits; count says 25, size 36.
    let outcome = encode_rreaddir(6, 57, dirents(), &mut buf).unwrap();
    assert_eq!(
        outcome,
        ReaddirOutcome {
            len: 36,
            entries: 1
        }
    );
    let mut expected = vec![
        0x24, 0x00, 0x00, 0x00, 41, 0x06, 0x00, 0x19, 0x00, 0x00, 0x00,
    ];
    expected.extend_from_slice(&RREADDIR[11..36]);
    assert_eq!(&buf[..36], &expected[..]);
    // Not even "." fits: an empty reply would mean "end of directory".
    assert_eq!(
        encode_rreaddir(6, 24, dirents(), &mut buf),
        Err(Error::BufferTooSmall)
    );
}

#[test]
fn rreaddir_stops_before_the_end_of_the_buffer() {
    // Room for the 11-byte header and 40 bytes: "." only, whatever count says.
    let mut buf = [0u8; 51];
    let outcome = encode_rreaddir(6, 8168, dirents(), &mut buf).unwrap();
    assert_eq!(
        outcome,
        ReaddirOutcome {
            len: 36,
            entries: 1
        }
    );
    assert_eq!(&buf[7..11], &[0x19, 0x00, 0x00, 0x00]);
    // No room for the header.
    assert_eq!(
        encode_rreaddir(6, 8168, dirents(), &mut buf[..10]),
        Err(Error::BufferTooSmall)
    );
}

#[test]
fn rreaddir_without_entries_is_the_end() {
    let mut buf = [0u8; 64];
    let outcome = encode_rreaddir(6, 8168, [], &mut buf).unwrap();
    assert_eq!(
        outcome,
        ReaddirOutcome {
            len: 11,
            entries: 0
        }
    );
    let eof = [
        0x0b, 0x00, 0x00, 0x00, 41, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];
    assert_eq!(&buf[..11], &eof);
    let Reply::Readdir(readdir) = decode_reply(&eof, MSIZE).unwrap().body else {
        panic!("not a readdir")
    };
    assert_eq!(readdir.data.iter().count(), 0);
}

#[test]
fn rreaddir_partial_dirent_is_refused() {
    // count 57 cuts the last name short by one byte; size 68.
    let mut bytes = RREADDIR[..68].to_vec();
    bytes[0] = 68;
    bytes[7] = 57;
    assert_eq!(decode_reply(&bytes, MSIZE), Err(Error::Truncated));
}

#[test]
fn tgetattr() {
    let bytes = [
        0x13, 0x00, 0x00, 0x00, 24, 0x07, 0x00, // size 19, Tgetattr, tag 7
        0x01, 0x00, 0x00, 0x00, // fid 1
        0xff, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // request_mask GETATTR_BASIC
    ];
    check_request(
        &bytes,
        7,
        Request::Getattr(Tgetattr {
            fid: 1,
            request_mask: GETATTR_BASIC,
        }),
    );
}

// size = 7 + valid[8] + qid[13] + mode, uid, gid [3 * 4] + 15 * [8] = 160
const RGETATTR: &[u8] = &[
    0xa0, 0x00, 0x00, 0x00, 25, 0x07, 0x00, // size 160, Rgetattr, tag 7
    0xff, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // valid GETATTR_BASIC
    0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, // qid file 2
    0xa4, 0x81, 0x00, 0x00, // mode 0o100644 = 0x81a4
    0xe8, 0x03, 0x00, 0x00, // uid 1000
    0x64, 0x00, 0x00, 0x00, // gid 100
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // nlink 1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // rdev 0
    0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // size 6
    0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // blksize 4096
    0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // blocks 8
    0x00, 0xf1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00, // atime_sec 1700000000
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // atime_nsec 1
    0x00, 0xf1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00, // mtime_sec
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // mtime_nsec 2
    0x00, 0xf1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00, // ctime_sec
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // ctime_nsec 3
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // btime_sec (reserved)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // btime_nsec
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // gen
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // data_version
];

#[test]
fn rgetattr() {
    let m = Rgetattr {
        valid: GETATTR_BASIC,
        qid: Qid {
            ty: QTFILE,
            version: 0,
            path: 2,
        },
        mode: 0o100644,
        uid: 1000,
        gid: 100,
        nlink: 1,
        rdev: 0,
        size: 6,
        blksize: 4096,
        blocks: 8,
        atime_sec: 1_700_000_000,
        atime_nsec: 1,
        mtime_sec: 1_700_000_000,
        mtime_nsec: 2,
        ctime_sec: 1_700_000_000,
        ctime_nsec: 3,
        ..Rgetattr::default()
    };
    check_reply(RGETATTR, 7, Reply::Getattr(m));
}

#[test]
fn treadlink_rreadlink() {
    let treadlink = [
        0x0b, 0x00, 0x00, 0x00, 22, 0x08, 0x00, 0x03, 0x00, 0x00, 0x00,
    ]; // fid 3
    check_request(&treadlink, 8, Request::Readlink(Treadlink { fid: 3 }));
    // size = 7 + 2 + 9 = 18
    let rreadlink = [
        0x12, 0x00, 0x00, 0x00, 23, 0x08, 0x00, // size 18, Rreadlink, tag 8
        0x09, 0x00, b'h', b'e', b'l', b'l', b'o', b'.', b't', b'x', b't',
    ];
    check_reply(
        &rreadlink,
        8,
        Reply::Readlink(Rreadlink {
            target: b"hello.txt",
        }),
    );
}

#[test]
fn tstatfs_rstatfs() {
    let tstatfs = [
        0x0b, 0x00, 0x00, 0x00, 8, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]; // fid 0
    check_request(&tstatfs, 9, Request::Statfs(Tstatfs { fid: 0 }));
    // size = 7 + type[4] + bsize[4] + 6 * [8] + namelen[4] = 67 = 0x43
    let rstatfs = [
        0x43, 0x00, 0x00, 0x00, 9, 0x09, 0x00, // size 67, Rstatfs, tag 9
        0x97, 0x19, 0x02, 0x01, // type V9FS_MAGIC 0x01021997
        0x00, 0x10, 0x00, 0x00, // bsize 4096
        0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // blocks 100
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // bfree 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // bavail 0
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // files 5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // ffree 0
        0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // fsid 42
        0xff, 0x00, 0x00, 0x00, // namelen 255
    ];
    let m = Rstatfs {
        fs_type: 0x0102_1997,
        bsize: 4096,
        blocks: 100,
        files: 5,
        fsid: 42,
        namelen: 255,
        ..Rstatfs::default()
    };
    check_reply(&rstatfs, 9, Reply::Statfs(m));
}

#[test]
fn txattrwalk() {
    // size = 7 + 4 + 4 + 2 + 16 = 33 = 0x21
    let bytes = [
        0x21, 0x00, 0x00, 0x00, 30, 0x0a, 0x00, // size 33, Txattrwalk, tag 10
        0x01, 0x00, 0x00, 0x00, // fid 1
        0x02, 0x00, 0x00, 0x00, // newfid 2
        0x10, 0x00, b's', b'e', b'c', b'u', b'r', b'i', b't', b'y', b'.', b's', b'e', b'l', b'i',
        b'n', b'u', b'x',
    ];
    let m = Txattrwalk {
        fid: 1,
        newfid: 2,
        name: b"security.selinux",
    };
    check_request(&bytes, 10, Request::Xattrwalk(m));
}

#[test]
fn tclunk_rclunk() {
    let tclunk = [
        0x0b, 0x00, 0x00, 0x00, 120, 0x0b, 0x00, 0x01, 0x00, 0x00, 0x00,
    ]; // fid 1
    check_request(&tclunk, 11, Request::Clunk(Tclunk { fid: 1 }));
    let rclunk = [0x07, 0x00, 0x00, 0x00, 121, 0x0b, 0x00];
    check_reply(&rclunk, 11, Reply::Clunk);
}

#[test]
fn rlerror() {
    // The read-only server's answer to Txattrwalk: ENODATA = 61 = 0x3d.
    let bytes = [
        0x0b, 0x00, 0x00, 0x00, 7, 0x0a, 0x00, 0x3d, 0x00, 0x00, 0x00,
    ];
    check_reply(
        &bytes,
        10,
        Reply::Lerror(Rlerror {
            ecode: errno::ENODATA,
        }),
    );
}

#[test]
fn header_is_checked_before_the_body() {
    assert_eq!(
        read_header(TVERSION, MSIZE),
        Ok(Header {
            size: 21,
            ty: 100,
            tag: NOTAG
        })
    );
    // Fewer than 7 bytes, or a size below 7.
    assert_eq!(decode_request(&TVERSION[..6], MSIZE), Err(Error::Truncated));
    let tiny = [0x06, 0x00, 0x00, 0x00, 100, 0xff, 0xff];
    assert_eq!(decode_request(&tiny, MSIZE), Err(Error::BadSize(6)));
    // A frame larger than msize is refused before its body is looked at.
    assert_eq!(
        decode_request(TVERSION, 20),
        Err(Error::TooLarge {
            size: 21,
            msize: 20
        })
    );
    assert_eq!(decode_request(TVERSION, 21).map(|f| f.tag), Ok(NOTAG));
    // A size beyond the buffer is truncation.
    let mut bytes = TVERSION.to_vec();
    bytes[0] = 0x16;
    assert_eq!(decode_request(&bytes, MSIZE), Err(Error::Truncated));
}

#[test]
fn bytes_after_the_frame_are_not_read() {
    let mut bytes = TREAD.to_vec();
    bytes.extend_from_slice(TWALK);
    let frame = decode_request(&bytes, MSIZE).unwrap();
    assert_eq!(
        frame.body,
        Request::Read(Tread {
            fid: 1,
            offset: 4096,
            count: 8181
        })
    );
}

#[test]
fn fields_must_fill_the_frame() {
    // Tclunk with size 12: one byte too many inside the frame.
    let bytes = [
        0x0c, 0x00, 0x00, 0x00, 120, 0x0b, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
    ];
    assert_eq!(decode_request(&bytes, MSIZE), Err(Error::TrailingBytes(1)));
    // A string whose length runs past the frame.
    let rreadlink = [
        0x12, 0x00, 0x00, 0x00, 23, 0x08, 0x00, 0x0a, 0x00, b'h', b'e', b'l', b'l', b'o', b'.',
        b't', b'x', b't',
    ];
    assert_eq!(decode_reply(&rreadlink, MSIZE), Err(Error::Truncated));
}

#[test]
fn unknown_types_are_reported_with_their_tag() {
    // Twrite (118): a real 9P message, but not one a read-only server takes.
    let twrite = [
        0x18, 0x00, 0x00, 0x00, 118, 0x0c, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
        b'x',
    ];
    assert_eq!(decode_request(&twrite, MSIZE), Err(Error::UnknownType(118)));
    assert_eq!(read_header(&twrite, MSIZE).map(|h| h.tag), Ok(12));
    assert_eq!(Error::UnknownType(118).errno(), errno::EOPNOTSUPP);
    let zero = [0x07, 0x00, 0x00, 0x00, 0, 0x00, 0x00];
    assert_eq!(decode_request(&zero, MSIZE), Err(Error::UnknownType(0)));
    // Rauth (103) and Rxattrwalk (31) are replies this codec does not take.
    let rxattrwalk = [
        0x0f, 0x00, 0x00, 0x00, 31, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(
        decode_reply(&rxattrwalk, MSIZE),
        Err(Error::UnknownType(31))
    );
}

#[test]
fn replies_are_not_requests() {
    let rclunk = [0x07, 0x00, 0x00, 0x00, 121, 0x0b, 0x00];
    assert_eq!(
        decode_request(&rclunk, MSIZE),
        Err(Error::WrongDirection(121))
    );
    let tclunk = [
        0x0b, 0x00, 0x00, 0x00, 120, 0x0b, 0x00, 0x01, 0x00, 0x00, 0x00,
    ];
    assert_eq!(
        decode_reply(&tclunk, MSIZE),
        Err(Error::WrongDirection(120))
    );
}

#[test]
fn long_strings_cannot_be_encoded() {
    let long = vec![b'a'; 65536];
    let m = Rreadlink { target: &long };
    let mut buf = vec![0u8; 70000];
    assert_eq!(
        encode_reply(1, &Reply::Readlink(m), &mut buf),
        Err(Error::StringTooLong(65536))
    );
    let m = Rreadlink {
        target: &long[..65535],
    };
    assert_eq!(
        encode_reply(1, &Reply::Readlink(m), &mut buf),
        Ok(7 + 2 + 65535)
    );
}

#[test]
fn errors_map_to_errnos() {
    assert_eq!(Error::Truncated.errno(), errno::EPROTO);
    assert_eq!(
        Error::TooLarge { size: 9, msize: 8 }.errno(),
        errno::EMSGSIZE
    );
    assert_eq!(Error::WrongDirection(7).errno(), errno::EOPNOTSUPP);
    assert_eq!(
        Error::TooManyWalkElements(17).to_string(),
        "17 walk elements (at most 16)"
    );
}
