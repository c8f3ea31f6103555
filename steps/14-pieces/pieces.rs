// SPDX-License-Identifier: GPL-2.0

//! A request in pieces: how the disk of stage 13 finishes a command when
//! the request may need more than one (a transfer larger than the
//! controller's MDTS), and what it says when the controller fails one.
//! The disk calls [`finish`] through the function `disk::create` was given.

use kernel::prelude::*;

use crate::{
    disk::{
        to_errno,
        InFlight,
        Speedups, //
    },
    nvme::{
        command::Completion,
        io_command::io_error,
        queue::QueuePair, //
    }, //
};

// ANCHOR: finish
/// The disk's `Finish`, called by the queue's interrupt handler (the lock
/// released) with the completion of `r`'s piece in flight: sends the next
/// piece on `queue`, or ends the request (with the data copied out, for a
/// Read), or fails it.
pub(crate) fn finish<Z: Speedups>(r: InFlight<Z>, queue: &QueuePair<InFlight<Z>>, cqe: Completion) {
    // TODO (exercise 1): on a failed status (`io_error`), end the request
    // with the matching error (`to_errno`); on success, send its next piece
    // or, once every piece is in, end it. The contract:
    // - a failed status is logged with `pr_err!` (no device in a request),
    //   in exactly this form, which the test reads:
    //   rnvme: queue 1 tag 21: 0x02 at block 131072 failed: Target (SCT 0, SC 0x80)
    //   (queue id, command identifier, opcode as {:#04x}, the piece's first
    //   block, the `IoError` with {:?}, SCT, SC as {:#04x});
    // - the piece that succeeded counts as done (`done`, `piece`) before
    //   the next one is made: each piece starts where the last one ended;
    // - the next piece goes on the same `queue` with the same command
    //   identifier (the tag: the request keeps its bounce buffer);
    // - a Read's data goes to the request (`copy_out`) only once every
    //   piece is in;
    // - every request ends exactly once (`InFlight::end`), with success or
    //   its error (a piece that cannot be made or issued included), or
    //   `del_gendisk` waits forever; one that lives on in the queue's slot
    //   must not end here.
    // You have: `io_error`, `to_errno`, `InFlight::next_command`,
    // `copy_out` and `end`, `QueuePair::issue` (which gives the `InFlight`
    // back on an error).
    // Tests: "MDTS 16 KiB: the pattern reads back in 1 MiB reads" and the
    // checks after it; a failed status: "a read past the namespace's end
    // fails in user space ..." and "rnvme logs the controller's status: ...".
    let _ = (queue, cqe, io_error, to_errno, InFlight::<Z>::next_command);
    let _ = (InFlight::<Z>::copy_out, QueuePair::<InFlight<Z>>::issue);
    r.end(Err(ENOSYS));
}
// ANCHOR_END: finish
