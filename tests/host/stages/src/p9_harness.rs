//! Entry points shared by the fuzz targets, the benchmark and the tests.
//!
//! The codec's items are `pub(crate)` (a kernel module needs that), so code
//! outside this crate reaches it only through these `pub` functions.

use crate::p9;
use crate::p9::dirent::encode_rreaddir;
use crate::p9::{Error, Reply, Request};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The `msize` values every fuzz input is decoded under: none, tiny, the
/// Linux default and unlimited.
const MSIZES: [u32; 4] = [0, 64, 8192, u32::MAX];

/// Fuzz target `decode`: decoding arbitrary bytes must not panic, and what
/// it accepts must be consistent with the frame header.
pub fn decode_any(data: &[u8]) {
    for msize in MSIZES {
        let header = p9::frame::read_header(data, msize);
        let request = p9::decode_request(data, msize);
        let reply = p9::decode_reply(data, msize);
        if let Ok(frame) = &request {
            let header = header.expect("a decoded request has a valid header");
            assert_eq!(frame.tag, header.tag);
            assert_eq!(header.ty % 2, 0, "requests have even type codes");
            touch_request(&frame.body);
        }
        if let Ok(frame) = &reply {
            let header = header.expect("a decoded reply has a valid header");
            assert_eq!(frame.tag, header.tag);
            assert_eq!(header.ty % 2, 1, "replies have odd type codes");
            touch_reply(&frame.body);
        }
        assert!(
            request.is_err() || reply.is_err(),
            "a frame is a request or a reply, never both"
        );
        if header.is_err() {
            assert!(request.is_err() && reply.is_err());
        }
    }
}

/// Reads everything a decoded request borrows, as a server would.
fn touch_request(request: &Request<'_>) {
    if let Request::Walk(walk) = request {
        let names = walk.names.iter().inspect(|name| {
            black_box(name);
        });
        assert_eq!(names.count(), walk.names.len());
        assert!(walk.names.len() <= p9::frame::MAX_WALK_ELEMENTS);
    }
}

/// Reads everything a decoded reply borrows, as a client would.
fn touch_reply(reply: &Reply<'_>) {
    match reply {
        Reply::Walk(walk) => {
            assert_eq!(walk.qids.iter().count(), walk.qids.len());
            assert!(walk.qids.len() <= p9::frame::MAX_WALK_ELEMENTS);
        }
        Reply::Readdir(readdir) => {
            let len: usize = readdir.data.iter().map(|d| d.wire_len()).sum();
            assert_eq!(len, readdir.data.as_bytes().len());
        }
        _ => {}
    }
}

/// Fuzz target `roundtrip`: a frame that decodes re-encodes to exactly its
/// own bytes, which decode to the same message; one byte less of buffer is
/// `BufferTooSmall`.
pub fn roundtrip(data: &[u8]) {
    let msize = u32::MAX;
    let Ok(header) = p9::frame::read_header(data, msize) else {
        return;
    };
    let size = header.size as usize;
    let frame_bytes = &data[..size];
    let mut out = vec![0u8; size];
    if let Ok(frame) = p9::decode_request(data, msize) {
        let len = p9::encode_request(frame.tag, &frame.body, &mut out)
            .expect("a decoded request re-encodes into its own size");
        assert_eq!(len, size);
        assert_eq!(out, frame_bytes, "re-encoding changed the bytes");
        let again = p9::decode_request(&out, msize).expect("re-encoded request decodes");
        assert_eq!(again, frame);
        assert_eq!(
            p9::encode_request(frame.tag, &frame.body, &mut out[..size - 1]),
            Err(Error::BufferTooSmall)
        );
    }
    if let Ok(frame) = p9::decode_reply(data, msize) {
        let len = p9::encode_reply(frame.tag, &frame.body, &mut out)
            .expect("a decoded reply re-encodes into its own size");
        assert_eq!(len, size);
        assert_eq!(out, frame_bytes, "re-encoding changed the bytes");
        let again = p9::decode_reply(&out, msize).expect("re-encoded reply decodes");
        assert_eq!(again, frame);
        assert_eq!(
            p9::encode_reply(frame.tag, &frame.body, &mut out[..size - 1]),
            Err(Error::BufferTooSmall)
        );
        // The server's dirent encoder must produce the same frame too.
        if let Reply::Readdir(readdir) = frame.body {
            let count = readdir.data.as_bytes().len() as u32;
            let mut again = vec![0u8; size];
            let outcome = encode_rreaddir(frame.tag, count, readdir.data.iter(), &mut again)
                .expect("the entries fit in their own count");
            assert_eq!(outcome.len, size);
            assert_eq!(outcome.entries, readdir.data.iter().count());
            assert_eq!(again, frame_bytes);
        }
    }
}

/// The result of `bench_decode`.
#[derive(Debug, Clone, Copy)]
pub struct BenchReport {
    /// Messages decoded.
    pub messages: u64,
    /// Bytes decoded.
    pub bytes: u64,
    /// Time spent.
    pub elapsed: Duration,
}

impl BenchReport {
    /// Messages decoded per second.
    pub fn messages_per_sec(&self) -> f64 {
        self.messages as f64 / self.elapsed.as_secs_f64()
    }
}

/// The frames of a typical client session's hot path: for every walk to a
/// file three reads of it, as `cat` of files a few directories deep does.
pub fn bench_frames() -> Vec<Vec<u8>> {
    use p9::request::{Tread, Twalk, WalkNames};
    let paths: [&[&[u8]]; 4] = [
        &[b"usr", b"share", b"doc", b"README"],
        &[b"etc", b"hostname"],
        &[b"proc", b"self", b"status"],
        &[
            b"home",
            b"learner",
            b"rust-kernel-workshop",
            b"book",
            b"src",
            b"14.md",
        ],
    ];
    let mut frames = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let walk = Request::Walk(Twalk {
            fid: 0,
            newfid: i as u32 + 1,
            names: WalkNames::from_list(path).expect("at most 16 names"),
        });
        frames.push(encode(i as u16, &walk));
        for n in 0..3u64 {
            let read = Request::Read(Tread {
                fid: i as u32 + 1,
                offset: n * 8168,
                count: 8168,
            });
            frames.push(encode(100 + n as u16, &read));
        }
    }
    frames
}

/// Encodes one request into a fresh vector.
fn encode(tag: u16, request: &Request<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; 8192];
    let len = p9::encode_request(tag, request, &mut buf).expect("fits in 8 KiB");
    buf.truncate(len);
    buf
}

/// Decodes the `bench_frames` mix over and over for about `duration`,
/// touching every field a server would use.
pub fn bench_decode(duration: Duration) -> BenchReport {
    let frames = bench_frames();
    let mut messages = 0u64;
    let mut bytes = 0u64;
    let start = Instant::now();
    while start.elapsed() < duration {
        for _ in 0..1000 {
            for frame in &frames {
                let decoded = p9::decode_request(black_box(frame), 8192).expect("valid frame");
                match decoded.body {
                    Request::Walk(walk) => {
                        for name in walk.names.iter() {
                            black_box(name);
                        }
                    }
                    Request::Read(read) => {
                        black_box(read.offset);
                    }
                    _ => unreachable!(),
                }
                bytes += frame.len() as u64;
            }
            messages += frames.len() as u64;
        }
    }
    BenchReport {
        messages,
        bytes,
        elapsed: start.elapsed(),
    }
}

/// One valid frame of every message the codec knows, as seeds for the
/// fuzzers: mutating real frames reaches deeper than random bytes do.
pub fn seed_frames() -> Vec<(&'static str, Vec<u8>)> {
    use p9::dirent::Dirent;
    use p9::qid::Qid;
    use p9::reply::*;
    use p9::request::*;
    let qid = Qid {
        ty: p9::qid::QTDIR,
        version: 1,
        path: 2,
    };
    let names: &[&[u8]] = &[b"usr", b"lib", b"os-release"];
    let requests: Vec<(&str, Request<'_>)> = vec![
        (
            "tversion",
            Request::Version(Tversion {
                msize: 8192,
                version: b"9P2000.L",
            }),
        ),
        (
            "tauth",
            Request::Auth(Tauth {
                afid: 1,
                uname: b"root",
                aname: b"",
                n_uname: 0,
            }),
        ),
        (
            "tattach",
            Request::Attach(Tattach {
                fid: 0,
                afid: p9::frame::NOFID,
                uname: b"root",
                aname: b"/",
                n_uname: 0,
            }),
        ),
        ("tflush", Request::Flush(Tflush { oldtag: 3 })),
        (
            "twalk",
            Request::Walk(Twalk {
                fid: 0,
                newfid: 1,
                names: WalkNames::from_list(names).unwrap(),
            }),
        ),
        ("tlopen", Request::Lopen(Tlopen { fid: 1, flags: 0 })),
        (
            "tread",
            Request::Read(Tread {
                fid: 1,
                offset: 0,
                count: 8181,
            }),
        ),
        (
            "treaddir",
            Request::Readdir(Treaddir {
                fid: 1,
                offset: 0,
                count: 8181,
            }),
        ),
        (
            "tgetattr",
            Request::Getattr(Tgetattr {
                fid: 1,
                request_mask: GETATTR_BASIC,
            }),
        ),
        ("treadlink", Request::Readlink(Treadlink { fid: 1 })),
        ("tstatfs", Request::Statfs(Tstatfs { fid: 1 })),
        (
            "txattrwalk",
            Request::Xattrwalk(Txattrwalk {
                fid: 1,
                newfid: 2,
                name: b"user.x",
            }),
        ),
        ("tclunk", Request::Clunk(Tclunk { fid: 1 })),
    ];
    let qids = [
        qid,
        Qid {
            ty: 0,
            version: 0,
            path: 3,
        },
    ];
    let attr = Rgetattr {
        valid: GETATTR_BASIC,
        qid,
        mode: 0o40755,
        nlink: 2,
        ..Default::default()
    };
    let replies: Vec<(&str, Reply<'_>)> = vec![
        (
            "rversion",
            Reply::Version(Rversion {
                msize: 8192,
                version: b"9P2000.L",
            }),
        ),
        ("rattach", Reply::Attach(Rattach { qid })),
        ("rflush", Reply::Flush),
        (
            "rwalk",
            Reply::Walk(Rwalk {
                qids: WalkQids::from_list(&qids).unwrap(),
            }),
        ),
        ("rlopen", Reply::Lopen(Rlopen { qid, iounit: 0 })),
        (
            "rread",
            Reply::Read(Rread {
                data: b"hello, world\n",
            }),
        ),
        ("rgetattr", Reply::Getattr(attr)),
        (
            "rreadlink",
            Reply::Readlink(Rreadlink { target: b"../lib" }),
        ),
        (
            "rstatfs",
            Reply::Statfs(Rstatfs {
                bsize: 4096,
                namelen: 255,
                ..Default::default()
            }),
        ),
        ("rclunk", Reply::Clunk),
        (
            "rlerror",
            Reply::Lerror(Rlerror {
                ecode: p9::error::errno::ENODATA,
            }),
        ),
    ];
    let mut frames = Vec::new();
    let mut buf = vec![0u8; 8192];
    for (name, request) in requests {
        let len = p9::encode_request(1, &request, &mut buf).unwrap();
        frames.push((name, buf[..len].to_vec()));
    }
    for (name, reply) in replies {
        let len = p9::encode_reply(1, &reply, &mut buf).unwrap();
        frames.push((name, buf[..len].to_vec()));
    }
    let entries = [
        Dirent {
            qid,
            offset: 1,
            ty: p9::dirent::DT_DIR,
            name: b".",
        },
        Dirent {
            qid,
            offset: 2,
            ty: p9::dirent::DT_DIR,
            name: b"..",
        },
        Dirent {
            qid: qids[1],
            offset: 3,
            ty: p9::dirent::DT_REG,
            name: b"hello.txt",
        },
    ];
    let outcome = p9::dirent::encode_rreaddir(1, 8181, entries, &mut buf).unwrap();
    frames.push(("rreaddir", buf[..outcome.len].to_vec()));
    frames
}
