//! Stage 21: `need_event`, the shadow doorbells' "write the register too?",
//! against its definition (NVMe 1.3, 7.13): the controller's event index is
//! the last value it saw; it wants a register write when the doorbell moves
//! past it, that is when the index is one of the values the move stepped
//! over, `old`, `old + 1`, ..., `new - 1`, all modulo 2^16.
//!
//! The model walks those values one by one; the tests compare it with
//! `need_event` for every index near every move of up to 1024 entries (the
//! deepest queue), at the start of the range, in the middle and across the
//! wrap of the 16-bit values.

use crate::nvme_event_index::need_event;

/// The definition, step by step: is `event_idx` among the values the
/// doorbell stepped over from `old` to `new`?
fn model(event_idx: u16, new: u16, old: u16) -> bool {
    let mut v = old;
    while v != new {
        if v == event_idx {
            return true;
        }
        v = v.wrapping_add(1);
    }
    false
}

fn check_around(old: u16) {
    for step in [0u16, 1, 2, 3, 16, 31, 32, 511, 1023, 1024] {
        let new = old.wrapping_add(step);
        // Every index from a little before `old` to a little after `new`.
        for d in 0..u32::from(step) + 8 {
            let event_idx = old.wrapping_sub(4).wrapping_add(d as u16);
            assert_eq!(
                need_event(event_idx, new, old),
                model(event_idx, new, old),
                "need_event(event_idx {event_idx}, new {new}, old {old})"
            );
        }
    }
}

#[test]
fn nvme_event_index_sleeping_controller_always_rings() {
    // A controller that has read everything set its index to the old tail:
    // any new entry needs the register, or it never hears of it.
    for old in [0u16, 1, 500, 1023, 65535] {
        for step in [1u16, 2, 32, 1023] {
            assert!(
                need_event(old, old.wrapping_add(step), old),
                "old {old}, {step} new entries, event index {old}: the register must be written"
            );
        }
    }
}

#[test]
fn nvme_event_index_no_move_no_write() {
    for v in [0u16, 7, 65535] {
        for event_idx in [v.wrapping_sub(1), v, v.wrapping_add(1)] {
            assert!(!need_event(event_idx, v, v), "a doorbell that did not move needs no write");
        }
    }
}

#[test]
fn nvme_event_index_matches_the_definition() {
    for old in [0u16, 1, 100, 1000, 32767, 32768, 65000, 65530, 65535] {
        check_around(old);
    }
}
