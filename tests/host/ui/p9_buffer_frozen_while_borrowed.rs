// Lesson: while a decoded message is alive, its buffer cannot be changed.
// A transport that reuses its receive buffer must finish with one request
// (or copy what it keeps) before it receives the next.
#![allow(dead_code, unused)]

#[path = "../../../solutions/27-9p-protocol/p9.rs"]
mod p9;

fn main() {
    let mut buf = [0x0b, 0, 0, 0, 120, 1, 0, 1, 0, 0, 0]; // Tclunk
    let frame = p9::decode_request(&buf, 8192);
    buf[7] = 2; // the next message arrives
    println!("{frame:?}");
}
