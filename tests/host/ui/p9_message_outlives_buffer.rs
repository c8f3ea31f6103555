// Lesson: a decoded message cannot outlive the buffer it borrows from.
// `decode_request` copies nothing: the names in a `Twalk` are slices of
// `buf`, so the message must be used up before `buf` goes away.
#![allow(dead_code, unused)]

#[path = "../../../solutions/27-9p-protocol/p9.rs"]
mod p9;

fn main() {
    let request;
    {
        let buf = vec![0x0b, 0, 0, 0, 120, 1, 0, 1, 0, 0, 0]; // Tclunk
        request = p9::decode_request(&buf, 8192);
    }
    println!("{request:?}");
}
