// SPDX-License-Identifier: GPL-2.0

//! p9wire: the workshop's 9P2000.L codec, built for the host, so that the
//! tests' raw client (`tests/p9raw.py`) frames its requests with the very
//! files the servers of stages 28 to 35 include and cannot drift from them.
//! (Both trees' servers include `solutions/27-9p-protocol/p9.rs`.)
//!
//! It speaks lines on stdin and stdout. First it prints the codec's
//! constants, `NAME=VALUE ...` on one line. Then, for each line it reads:
//!
//! - `KIND TAG FIELD...`: the request `KIND`, one of the codec's `Request`
//!   variants in lower case (`version`, `walk`, ...), with its fields in the
//!   order its struct declares them (a walk's names last), encoded by
//!   `p9::encode_request`: it prints the frame in hex.
//! - `decode MSIZE FRAME`: the frame decoded by `p9::decode_request`: it
//!   prints the `KIND TAG FIELD...` line that encodes it.
//!
//! A field is a decimal number, or a string written `x` and its bytes in
//! hex (`x` alone is the empty string). A line the codec refuses prints
//! `! ERROR` (its `Error`, as `{:?}`).
//!
//! `scripts/build-p9wire.sh` builds it; `tests/tooling/test_p9wire.py`
//! tests it through p9raw.py.

use std::fmt::Write as _;
use std::io::{
    self,
    BufRead,
    Write, //
};

#[allow(dead_code)]
#[path = "../solutions/27-9p-protocol/p9.rs"]
mod p9;

use p9::error::errno::*;
use p9::frame::*;
use p9::qid::*;
use p9::reply::GETATTR_BASIC;
use p9::request::*;
use p9::Request;

/// `NAME=VALUE` for each constant named, as p9raw.py reads them.
macro_rules! constants {
    ($($name:ident),* $(,)?) => {
        [$(format!("{}={}", stringify!($name), u64::from($name))),*]
    };
}

/// The constants a raw client needs: message types, limits, qid types and
/// the errnos a server answers with; `VERSION` is the protocol's name.
fn constants() -> String {
    let mut line = constants!(
        RLERROR,
        TSTATFS,
        RSTATFS,
        TLOPEN,
        RLOPEN,
        TREADLINK,
        RREADLINK,
        TGETATTR,
        RGETATTR,
        TXATTRWALK,
        TREADDIR,
        RREADDIR,
        TVERSION,
        RVERSION,
        TAUTH,
        TATTACH,
        RATTACH,
        TFLUSH,
        RFLUSH,
        TWALK,
        RWALK,
        TREAD,
        RREAD,
        TCLUNK,
        RCLUNK,
        NOTAG,
        NOFID,
        QTDIR,
        QTSYMLINK,
        QTFILE,
        GETATTR_BASIC,
        ENOENT,
        EIO,
        EBADF,
        EAGAIN,
        ENOMEM,
        EACCES,
        EEXIST,
        EXDEV,
        ENOTDIR,
        EISDIR,
        EINVAL,
        EMFILE,
        EROFS,
        ENAMETOOLONG,
        ENOSYS,
        ELOOP,
        ENODATA,
        EPROTO,
        EMSGSIZE,
        EOPNOTSUPP,
    )
    .join(" ");
    // usize constants (`u64::from` takes none).
    for (name, value) in [
        ("HEADER_SIZE", HEADER_SIZE),
        ("RREAD_HEADER_SIZE", RREAD_HEADER_SIZE),
        ("MAX_WALK_ELEMENTS", MAX_WALK_ELEMENTS),
        ("QID_SIZE", Qid::WIRE_SIZE),
    ] {
        let _ = write!(line, " {name}={value}");
    }
    let _ = write!(line, " VERSION={}", string(VERSION_9P2000_L));
    line
}

/// A string field: `x` and its bytes in hex.
fn string(bytes: &[u8]) -> String {
    bytes.iter().fold(String::from("x"), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The fields of one line, read in order.
struct Fields<'a> {
    /// The words not read yet.
    words: std::str::SplitAsciiWhitespace<'a>,
}

impl Fields<'_> {
    /// The next field, a number that fits `T`.
    fn number<T: TryFrom<u64>>(&mut self) -> Result<T, String> {
        let word = self.words.next().ok_or("a number is missing")?;
        let n: u64 = word.parse().map_err(|_| format!("not a number: {word}"))?;
        T::try_from(n).map_err(|_| format!("out of range: {word}"))
    }

    /// The next field, a string.
    fn string(&mut self) -> Result<Vec<u8>, String> {
        let word = self.words.next().ok_or("a string is missing")?;
        let hex = word
            .strip_prefix('x')
            .filter(|h| h.len() % 2 == 0)
            .ok_or_else(|| format!("not a string: {word}"))?;
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<_, _>>()
            .map_err(|_| format!("not a string: {word}"))
    }

    /// Every field left, each a string.
    fn strings(&mut self) -> Result<Vec<Vec<u8>>, String> {
        let mut all = Vec::new();
        while self.words.clone().next().is_some() {
            all.push(self.string()?);
        }
        Ok(all)
    }

    /// Fails if a field is left over.
    fn end(mut self) -> Result<(), String> {
        match self.words.next() {
            None => Ok(()),
            Some(word) => Err(format!("a field too many: {word}")),
        }
    }
}

/// The codec's error, as the client sees it.
fn codec(e: p9::Error) -> String {
    format!("{e:?}")
}

/// Encodes the request `kind` with the tag and fields of `f` into `buf`;
/// returns the frame's length.
fn encode(kind: &str, mut f: Fields<'_>, buf: &mut [u8]) -> Result<usize, String> {
    let tag = f.number()?;
    // The strings a request borrows, read before it is built.
    let (s1, s2, strings, names);
    let request = match kind {
        "version" => {
            let msize = f.number()?;
            s1 = f.string()?;
            Request::Version(Tversion {
                msize,
                version: &s1,
            })
        }
        "auth" => {
            let afid = f.number()?;
            (s1, s2) = (f.string()?, f.string()?);
            Request::Auth(Tauth {
                afid,
                uname: &s1,
                aname: &s2,
                n_uname: f.number()?,
            })
        }
        "attach" => {
            let (fid, afid) = (f.number()?, f.number()?);
            (s1, s2) = (f.string()?, f.string()?);
            Request::Attach(Tattach {
                fid,
                afid,
                uname: &s1,
                aname: &s2,
                n_uname: f.number()?,
            })
        }
        "flush" => Request::Flush(Tflush {
            oldtag: f.number()?,
        }),
        "walk" => {
            let (fid, newfid) = (f.number()?, f.number()?);
            strings = f.strings()?;
            names = strings.iter().map(Vec::as_slice).collect::<Vec<_>>();
            let names = WalkNames::from_list(&names).map_err(codec)?;
            Request::Walk(Twalk { fid, newfid, names })
        }
        "lopen" => Request::Lopen(Tlopen {
            fid: f.number()?,
            flags: f.number()?,
        }),
        "read" => Request::Read(Tread {
            fid: f.number()?,
            offset: f.number()?,
            count: f.number()?,
        }),
        "readdir" => Request::Readdir(Treaddir {
            fid: f.number()?,
            offset: f.number()?,
            count: f.number()?,
        }),
        "getattr" => Request::Getattr(Tgetattr {
            fid: f.number()?,
            request_mask: f.number()?,
        }),
        "readlink" => Request::Readlink(Treadlink { fid: f.number()? }),
        "statfs" => Request::Statfs(Tstatfs { fid: f.number()? }),
        "xattrwalk" => {
            let (fid, newfid) = (f.number()?, f.number()?);
            s1 = f.string()?;
            Request::Xattrwalk(Txattrwalk {
                fid,
                newfid,
                name: &s1,
            })
        }
        "clunk" => Request::Clunk(Tclunk { fid: f.number()? }),
        _ => return Err(format!("no request {kind}")),
    };
    f.end()?;
    p9::encode_request(tag, &request, buf).map_err(codec)
}

/// The line that encodes the request in `frame`.
fn decode(mut f: Fields<'_>) -> Result<String, String> {
    let msize = f.number()?;
    let frame = f.string()?;
    f.end()?;
    let frame = p9::decode_request(&frame, msize).map_err(codec)?;
    let n = |v: u64| v.to_string();
    let fields = match frame.body {
        Request::Version(m) => vec![n(m.msize.into()), string(m.version)],
        Request::Auth(m) => vec![
            n(m.afid.into()),
            string(m.uname),
            string(m.aname),
            n(m.n_uname.into()),
        ],
        Request::Attach(m) => vec![
            n(m.fid.into()),
            n(m.afid.into()),
            string(m.uname),
            string(m.aname),
            n(m.n_uname.into()),
        ],
        Request::Flush(m) => vec![n(m.oldtag.into())],
        Request::Walk(m) => [n(m.fid.into()), n(m.newfid.into())]
            .into_iter()
            .chain(m.names.iter().map(string))
            .collect(),
        Request::Lopen(m) => vec![n(m.fid.into()), n(m.flags.into())],
        Request::Read(Tread { fid, offset, count })
        | Request::Readdir(Treaddir { fid, offset, count }) => {
            vec![n(fid.into()), n(offset), n(count.into())]
        }
        Request::Getattr(m) => vec![n(m.fid.into()), n(m.request_mask)],
        Request::Readlink(Treadlink { fid })
        | Request::Statfs(Tstatfs { fid })
        | Request::Clunk(Tclunk { fid }) => vec![n(fid.into())],
        Request::Xattrwalk(m) => vec![n(m.fid.into()), n(m.newfid.into()), string(m.name)],
    };
    // The kind is the variant's name, as `{:?}` writes it, in lower case:
    // the names `encode` matches.
    let debug = format!("{:?}", frame.body);
    let kind = debug.split('(').next().unwrap_or_default().to_lowercase();
    Ok(format!("{kind} {} {}", frame.tag, fields.join(" "))
        .trim_end()
        .to_string())
}

fn main() -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{}", constants())?;
    out.flush()?;
    // Room for the largest request: a walk of 16 names of 65535 bytes each
    // (about 1 MiB).
    let mut buf = vec![0u8; 2 << 20];
    for line in io::stdin().lock().lines() {
        let line = line?;
        let mut words = line.split_ascii_whitespace();
        let answer = match words.next() {
            Some("decode") => decode(Fields { words }),
            Some(kind) => encode(kind, Fields { words }, &mut buf)
                .map(|len| string(&buf[..len])[1..].to_string()),
            None => Err("an empty line".to_string()),
        };
        match answer {
            Ok(answer) => writeln!(out, "{answer}")?,
            Err(e) => writeln!(out, "! {e}")?,
        }
        out.flush()?;
    }
    Ok(())
}
