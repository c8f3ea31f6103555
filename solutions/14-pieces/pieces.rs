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
pub(crate) fn finish<Z: Speedups>(
    mut r: InFlight<Z>,
    queue: &QueuePair<InFlight<Z>>,
    cqe: Completion,
) {
    let result = match io_error(cqe.status) {
        Err(e) => {
            pr_err!(
                "queue {} tag {}: {:#04x} at block {} failed: {:?} (SCT {}, SC {:#04x})\n",
                queue.qid(),
                cqe.cid,
                r.opcode,
                r.lba + u64::from(r.done >> r.lba_shift),
                e,
                cqe.status.sct(),
                cqe.status.sc()
            );
            Err(to_errno(e))
        }
        Ok(()) => {
            r.done += r.piece;
            match r.next_command() {
                Ok(Some(cmd)) => match queue.issue(cqe.cid, &cmd, r) {
                    // The request lives on, in the queue's slot.
                    Ok(()) => return,
                    Err((e, back)) => {
                        r = back;
                        Err(e)
                    }
                },
                Ok(None) => r.copy_out(),
                Err(e) => Err(e),
            }
        }
    };
    r.end(result);
}
// ANCHOR_END: finish
