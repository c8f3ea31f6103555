// Lesson: MQES is 0's based, and `Cap::from_raw` is a `const fn`, so the
// compiler can decode a register value itself. Computing "entries per queue"
// as `mqes + 1` in the field's own type overflows for a controller that
// reports MQES = 0xffff (65536 entries): the compiler evaluates the constant
// and refuses it. That is why `Cap::max_queue_entries` widens to `u32` first.
#![allow(dead_code, unused)]

#[path = "../../../solutions/04-pci-probe/cap.rs"]
mod cap;

const LARGEST: cap::Cap = cap::Cap::from_raw(0xffff);
const ENTRIES: u16 = LARGEST.mqes + 1;

fn main() {}
