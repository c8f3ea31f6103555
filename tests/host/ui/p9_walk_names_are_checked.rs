// Lesson: walk names can only come from `WalkNames::decode` or
// `WalkNames::from_list`, which both refuse more than 16 names. The field
// that holds them is private, so no code outside the codec can build an
// unchecked `WalkNames`.
#![allow(dead_code, unused)]

#[path = "../../../solutions/27-9p-protocol/p9.rs"]
mod p9;

fn main() {
    let _forged = p9::request::WalkNames { repr: todo!() };
}
