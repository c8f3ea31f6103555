// SPDX-License-Identifier: GPL-2.0

//! Shadow doorbells' event index arithmetic: when a driver that moved a
//! doorbell in memory must also write its register (NVMe 1.3, 7.13; the C
//! driver's `nvme_dbbuf_need_event`).
//!
//! `core` only: the host tests check it against every event index around
//! every move of up to a queue's depth, wrapping or not.
#![forbid(unsafe_code)]

// ANCHOR: need_event
/// Whether a doorbell that moved from `old` to `new` must be written to its
/// register, the controller's event index being `event_idx`: the
/// controller asks for a write once the value passes the index, that is
/// when `event_idx` is one of the entries just added, `old` to `new - 1`
/// (all of it modulo 2^16: the values wrap with the queue, and so does the
/// distance between them).
pub(crate) fn need_event(event_idx: u16, new: u16, old: u16) -> bool {
    new.wrapping_sub(event_idx).wrapping_sub(1) < new.wrapping_sub(old)
}
// ANCHOR_END: need_event
