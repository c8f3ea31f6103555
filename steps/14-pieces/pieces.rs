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
    // with the matching error (`to_errno`), and log it with `pr_err!` (no
    // device in a request), in exactly this form, which the test reads:
    //   rnvme: queue 1 tag 21: 0x02 at block 131072 failed: Target (SCT 0, SC 0x80)
    // (queue id, command identifier, opcode as {:#04x}, the piece's first
    // block, the `IoError` with {:?}, SCT, SC as {:#04x}). On success, count
    // the piece as done, then issue the next piece's command
    // (`InFlight::next_command`) on `queue` with the same identifier, or,
    // when there is none, copy a Read's data out (`copy_out`) and end the
    // request (`InFlight::end`). Every request must end exactly once, or
    // `del_gendisk` waits forever.
    // `make hint STEP=14` shows the shape, then a sketch.
    // Tests: "MDTS 16 KiB: the pattern reads back in 1 MiB reads" and the
    // checks after it; a failed status: "a read past the namespace's end
    // fails in user space ..." and "rnvme logs the controller's status: ...".
    let _ = (queue, cqe, io_error, to_errno, InFlight::<Z>::next_command);
    let _ = (InFlight::<Z>::copy_out, QueuePair::<InFlight<Z>>::issue);
    r.end(Err(ENOSYS));
}
// ANCHOR_END: finish
