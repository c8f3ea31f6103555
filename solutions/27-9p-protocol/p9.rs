// SPDX-License-Identifier: GPL-2.0

//! 9P2000.L messages for a read-only file server: decoding without copying
//! or allocating, encoding into a caller's buffer.
//!
//! This module uses `core` only, so the same files build into the stage-23
//! kernel module (`#[path = "../27-9p-protocol/p9.rs"] mod p9;`) and into the
//! host test crate in `tests/host`, where they are unit-tested, fuzzed and
//! checked against an independent implementation.
//!
//! A server's loop, in short:
//!
//! ```ignore
//! let (tag, reply) = match p9::decode_request(&incoming, msize) {
//!     Ok(frame) => (frame.tag, handle(frame.body)),
//!     Err(e) => {
//!         // The header may still be readable: answer with its tag.
//!         let tag = p9::frame::read_header(&incoming, msize).map_or(p9::frame::NOTAG, |h| h.tag);
//!         (tag, p9::Reply::Lerror(p9::reply::Rlerror { ecode: e.errno() }))
//!     }
//! };
//! let len = p9::encode_reply(tag, &reply, &mut outgoing[..msize])?;
//! ```
//!
//! A server uses only half of the codec (it decodes requests and encodes
//! replies; the host tests use the other half), so a kernel module includes
//! it with `#[allow(dead_code)]`.
#![forbid(unsafe_code)]

// Both includers reach this file through `#[path]`, which makes rustc look
// for plain `mod x;` children next to it rather than in `p9/`; an explicit
// path is resolved from this file's folder however the file was reached.
#[path = "p9/dirent.rs"]
pub(crate) mod dirent;
#[path = "../../solutions/lib/p9/error.rs"]
pub(crate) mod error;
#[path = "../../solutions/lib/p9/frame.rs"]
pub(crate) mod frame;
#[path = "../../solutions/lib/p9/qid.rs"]
pub(crate) mod qid;
#[path = "../../solutions/lib/p9/reply.rs"]
pub(crate) mod reply;
#[path = "p9/request.rs"]
pub(crate) mod request;
#[path = "../../solutions/lib/p9/wire.rs"]
mod wire;

// Only what this file itself uses is re-exported: an unused `use` would warn
// in a kernel module that needs just part of the codec.
pub(crate) use error::Error;
pub(crate) use frame::Frame;
pub(crate) use reply::Reply;
pub(crate) use request::Request;

// ANCHOR: decode_request
/// Decodes the request at the start of `buf`, a frame of at most `msize`
/// bytes. The result borrows its strings from `buf`.
pub(crate) fn decode_request(buf: &[u8], msize: u32) -> Result<Frame<Request<'_>>, Error> {
    let (header, mut body) = frame::open(buf, msize)?;
    let request = Request::decode_body(header.ty, &mut body)?;
    body.finish()?;
    Ok(Frame {
        tag: header.tag,
        body: request,
    })
}
// ANCHOR_END: decode_request

/// Decodes the reply at the start of `buf`, a frame of at most `msize`
/// bytes. The result borrows its strings and data from `buf`.
pub(crate) fn decode_reply(buf: &[u8], msize: u32) -> Result<Frame<Reply<'_>>, Error> {
    let (header, mut body) = frame::open(buf, msize)?;
    let reply = Reply::decode_body(header.ty, &mut body)?;
    body.finish()?;
    Ok(Frame {
        tag: header.tag,
        body: reply,
    })
}

// ANCHOR: encode_reply
/// Encodes `reply` with `tag` into `buf`; returns the frame's length.
///
/// Pass `&mut out[..msize]` to keep within the negotiated size: a reply that
/// does not fit is `Error::BufferTooSmall`, never a short write.
pub(crate) fn encode_reply(tag: u16, reply: &Reply<'_>, buf: &mut [u8]) -> Result<usize, Error> {
    let mut w = wire::Writer::new(buf);
    frame::begin(&mut w, reply.message_type(), tag)?;
    reply.encode_body(&mut w)?;
    frame::end(w)
}
// ANCHOR_END: encode_reply

/// Encodes `request` with `tag` into `buf`; returns the frame's length.
pub(crate) fn encode_request(
    tag: u16,
    request: &Request<'_>,
    buf: &mut [u8],
) -> Result<usize, Error> {
    let mut w = wire::Writer::new(buf);
    frame::begin(&mut w, request.message_type(), tag)?;
    request.encode_body(&mut w)?;
    frame::end(w)
}
