// Lesson: a ring's indices are private, so only `SqRing`'s own methods can
// move them. Code elsewhere in the driver cannot make up a ring whose tail
// is past its depth, or whose head says the controller consumed entries it
// never reported (SQHD): `SqRing::new` and `consumed_up_to` are the only
// ways in, and `push` the only way to get a slot. (`Completion`, by
// contrast, is plain data with `pub(crate)` fields: nothing about it needs
// guarding.)
#![allow(dead_code, unused)]

#[path = "../../../solutions/06-nvme-rings/ring.rs"]
mod ring;

fn main() {
    let mut sq = ring::SqRing { depth: 4, tail: 9, head: 0 };
    let slot = sq.push();
}
