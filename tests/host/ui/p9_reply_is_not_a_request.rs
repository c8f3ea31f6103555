// Lesson: a reply cannot be sent where a request is expected.
// `encode_request` takes a `Request`; `Reply` is another type, so the mistake
// is caught by the compiler instead of by a confused peer at run time.
#![allow(dead_code, unused)]

#[path = "../../../solutions/27-9p-protocol/p9.rs"]
mod p9;

fn main() {
    let mut buf = [0u8; 64];
    let reply = p9::Reply::Clunk;
    let _ = p9::encode_request(1, &reply, &mut buf);
}
