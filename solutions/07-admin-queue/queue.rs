// SPDX-License-Identifier: GPL-2.0

//! The admin queue pair in coherent DMA memory, and commands submitted to
//! it and polled for until they complete.

use kernel::{
    device::Device,
    dma::Coherent,
    io::{
        io_project,
        io_read,
        poll::read_poll_timeout,
        Io, //
    },
    prelude::*,
    sync::barrier::{
        dma_mb,
        Read, //
    },
    time::Delta, //
};

use crate::nvme::{
    cap::Cap,
    command::{
        phase_of,
        Command,
        Completion, //
    },
    regs::Bar0,
    ring::{
        CqRing,
        SqRing, //
    }, //
};

/// How long an admin command may take before the driver gives up on it.
const ADMIN_TIMEOUT: Delta = Delta::from_secs(5);

// ANCHOR: queue
/// A submission queue and its completion queue, as the controller sees them
/// (memory) and as the driver tracks them (rings).
pub(crate) struct QueuePair {
    /// Submission queue entries: 64-byte commands, read by the controller.
    sq_mem: Coherent<[[u32; 16]]>,
    /// Completion queue entries: 16 bytes each, written by the controller.
    cq_mem: Coherent<[[u32; 4]]>,
    sq: SqRing,
    cq: CqRing,
    /// Offsets of the SQ tail and CQ head doorbells in BAR0.
    sq_doorbell: usize,
    cq_doorbell: usize,
    /// The identifier of the next command.
    next_cid: u16,
}
// ANCHOR_END: queue

impl QueuePair {
    // ANCHOR: new
    /// Allocates queue `qid` with `depth` entries in each ring.
    pub(crate) fn new(
        dev: &Device<kernel::device::Bound>,
        cap: &Cap,
        qid: u16,
        depth: u16,
    ) -> Result<QueuePair> {
        Ok(QueuePair {
            sq_mem: Coherent::zeroed_slice(dev, depth.into(), GFP_KERNEL)?,
            cq_mem: Coherent::zeroed_slice(dev, depth.into(), GFP_KERNEL)?,
            sq: SqRing::new(depth).ok_or(EINVAL)?,
            cq: CqRing::new(depth).ok_or(EINVAL)?,
            sq_doorbell: cap.sq_tail_doorbell(qid),
            cq_doorbell: cap.cq_head_doorbell(qid),
            next_cid: 0,
        })
    }
    // ANCHOR_END: new

    /// Bus address of the submission queue, for ASQ (or Create I/O SQ).
    pub(crate) fn sq_address(&self) -> u64 {
        self.sq_mem.dma_address()
    }

    /// Bus address of the completion queue, for ACQ (or Create I/O CQ).
    pub(crate) fn cq_address(&self) -> u64 {
        self.cq_mem.dma_address()
    }

    // ANCHOR: submit
    /// Submits `cmd` and polls until it completes; a failed status is an
    /// `EIO`, a command that never completes an `ETIMEDOUT`.
    pub(crate) fn submit_sync(
        &mut self,
        dev: &Device,
        bar: &Bar0<'_>,
        cmd: &Command,
    ) -> Result<Completion> {
        let slot = self.sq.push().ok_or(EBUSY)?;
        let cid = self.next_cid;
        self.next_cid = self.next_cid.wrapping_add(1);

        // Write the entry, then tell the controller with the tail doorbell.
        // The doorbell is an MMIO write (`writel`), which the kernel orders
        // after earlier writes to memory: the controller cannot see the new
        // tail before the entry.
        io_project!(self.sq_mem, [try: usize::from(slot)]).copy_write(cmd.to_dwords(cid));
        bar.try_write32(u32::from(self.sq.tail()), self.sq_doorbell)?;

        // A new completion shows by its phase tag. Poll only that dword;
        // the barrier keeps the reads of the rest of the entry after it.
        let head = usize::from(self.cq.head());
        let cq = &self.cq;
        let cq_mem = &self.cq_mem;
        read_poll_timeout(
            || Ok(io_read!(cq_mem, [try: head][build: 3])),
            |dw3| cq.is_new(phase_of(*dw3)),
            Delta::from_micros(50),
            ADMIN_TIMEOUT,
        )
        .inspect_err(|_| {
            dev_err!(
                dev,
                "admin command {:#04x} (cid {}) timed out\n",
                cmd.opcode,
                cid
            )
        })?;
        dma_mb(Read);
        let cqe = Completion::from_dwords(io_project!(self.cq_mem, [try: head]).copy_read());

        // Hand the entry back to the controller with the head doorbell.
        self.cq.advance();
        self.sq.consumed_up_to(cqe.sq_head);
        bar.try_write32(u32::from(self.cq.head()), self.cq_doorbell)?;

        if cqe.cid != cid {
            dev_err!(dev, "completion for cid {}, expected {}\n", cqe.cid, cid);
            return Err(EIO);
        }
        if !cqe.status.is_success() {
            dev_err!(
                dev,
                "admin command {:#04x} failed: {:?}\n",
                cmd.opcode,
                cqe.status.explained()
            );
            return Err(EIO);
        }
        Ok(cqe)
    }
    // ANCHOR_END: submit
}
