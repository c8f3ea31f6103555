// SPDX-License-Identifier: GPL-2.0

//! The admin queue pair, shared by the submitters (process context) and the
//! interrupt handler: a submitter writes its command and rings the doorbell
//! under a lock, then sleeps; the handler reaps the completions, hands each
//! to its submitter and wakes them.
//!
//! Stage 06's `QueuePair` polled; this one sleeps, and gives up after a
//! timeout without giving the command's identifier back to anyone until the
//! controller has answered.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::Coherent,
    io::{
        io_project,
        io_read,
        poll::read_poll_timeout,
        Io, //
    },
    new_condvar,
    new_spinlock_irq,
    pci,
    prelude::*,
    sync::{
        barrier::{
            dma_mb,
            Read, //
        },
        Arc,
        CondVar,
        CondVarTimeoutResult,
        SpinLockIrq,
        SpinLockIrqGuard, //
    },
    time::{
        msecs_to_jiffies,
        Delta, //
    }, //
};

use crate::nvme::{
    cap::Cap,
    command::{
        phase_of,
        Command,
        Completion, //
    },
    regs::{
        Bar0,
        BAR0_SIZE,
        CC,
        CSTS, //
    },
    ring::{
        CqRing,
        SqRing, //
    }, //
};

// ANCHOR: slot
/// What a command identifier (CID) is doing. The identifier is the index
/// of its slot.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Free for the next command.
    Free,
    /// Submitted; its submitter sleeps until the handler fills it in.
    Waiting,
    /// Completed; the submitter has not taken the completion yet.
    Done(Completion),
    /// The submitter stopped waiting (timeout or signal). The controller
    /// may still answer with this identifier, so it is not handed out again
    /// until it has: the handler frees it then. A controller reset (the
    /// queue is dropped) ends it too.
    Abandoned,
}
// ANCHOR_END: slot

/// What the submitters and the handler share, under the lock.
struct Rings {
    sq: SqRing,
    cq: CqRing,
    /// One slot per command identifier.
    slots: KVec<Slot>,
    /// Where the search for a free identifier starts: identifiers go round,
    /// as a hint for the reader of a trace.
    next_cid: u16,
    /// Completions reaped by the interrupt handler, in all.
    reaped: u64,
}

impl Rings {
    /// Claims a free identifier for a new command.
    fn claim_cid(&mut self) -> Option<u16> {
        let n = self.slots.len();
        for i in 0..n {
            let cid = (usize::from(self.next_cid) + i) % n;
            if let Some(slot @ Slot::Free) = self.slots.get_mut(cid) {
                *slot = Slot::Waiting;
                let cid = u16::try_from(cid).ok()?;
                self.next_cid = cid.wrapping_add(1);
                return Some(cid);
            }
        }
        None
    }

    /// The slot of identifier `cid`, if there is one.
    fn slot(&mut self, cid: u16) -> Option<&mut Slot> {
        self.slots.get_mut(usize::from(cid))
    }
}

// ANCHOR: queue
/// The admin queue pair. Shared in an `Arc` by the driver data and the
/// interrupt handler.
///
/// # Invariants
///
/// The controller is disabled before the queue memory is freed: `drop`
/// disables it (it may have been enabled with this memory).
#[pin_data(PinnedDrop)]
pub(crate) struct AdminQueue {
    /// The registers: the handler rings the CQ head doorbell. A `DevresBar`
    /// (not a `Bar<'b>`) because it lives in an `Arc`, which must not borrow
    /// the device; access is revoked when the driver is unbound.
    bar: pci::DevresBar<BAR0_SIZE>,
    cap: Cap,
    /// Submission queue entries: 64-byte commands, read by the controller.
    sq_mem: Coherent<[[u32; 16]]>,
    /// Completion queue entries: 16 bytes each, written by the controller.
    cq_mem: Coherent<[[u32; 4]]>,
    sq_doorbell: usize,
    cq_doorbell: usize,
    /// Taken by the handler in hard interrupt context, so the lock
    /// disables interrupts (a plain spinlock held by a submitter when the
    /// interrupt arrives on the same CPU would deadlock).
    #[pin]
    rings: SpinLockIrq<Rings>,
    /// Submitters sleep on it; the handler wakes them all after it reaped.
    #[pin]
    completed: CondVar,
}
// ANCHOR_END: queue

impl AdminQueue {
    // ANCHOR: new
    /// Allocates the admin queue pair (queue 0) with `depth` entries in each
    /// ring, and one identifier per entry.
    pub(crate) fn new(
        dev: &Device<Bound>,
        bar: pci::DevresBar<BAR0_SIZE>,
        cap: Cap,
        depth: u16,
    ) -> Result<Arc<AdminQueue>> {
        let mut slots = KVec::with_capacity(depth.into(), GFP_KERNEL)?;
        for _ in 0..depth {
            slots.push(Slot::Free, GFP_KERNEL)?;
        }
        let rings = Rings {
            sq: SqRing::new(depth).ok_or(EINVAL)?,
            cq: CqRing::new(depth).ok_or(EINVAL)?,
            slots,
            next_cid: 0,
            reaped: 0,
        };
        Arc::pin_init(
            try_pin_init!(AdminQueue {
                sq_mem: Coherent::zeroed_slice(dev, depth.into(), GFP_KERNEL)?,
                cq_mem: Coherent::zeroed_slice(dev, depth.into(), GFP_KERNEL)?,
                sq_doorbell: cap.sq_tail_doorbell(0),
                cq_doorbell: cap.cq_head_doorbell(0),
                bar,
                cap,
                rings <- new_spinlock_irq!(rings, "rnvme_admin_rings"),
                completed <- new_condvar!("rnvme_admin_completed"),
            }),
            GFP_KERNEL,
        )
    }
    // ANCHOR_END: new

    /// The registers, for process context (the caller proves the device is
    /// bound).
    pub(crate) fn bar<'a>(&'a self, dev: &'a Device<Bound>) -> Result<&'a Bar0<'a>> {
        self.bar.access(dev)
    }

    /// Bus address of the submission queue, for ASQ.
    pub(crate) fn sq_address(&self) -> u64 {
        self.sq_mem.dma_address()
    }

    /// Bus address of the completion queue, for ACQ.
    pub(crate) fn cq_address(&self) -> u64 {
        self.cq_mem.dma_address()
    }

    /// Completions the interrupt handler has reaped so far.
    pub(crate) fn reaped(&self) -> u64 {
        self.rings.lock().reaped
    }

    /// Writes `value` to the doorbell at `offset`, if the device is still
    /// bound (in any context: the access is RCU-protected).
    fn ring_doorbell(&self, value: u16, offset: usize) -> Result {
        let bar = self.bar.try_access().ok_or(ENXIO)?;
        bar.try_write32(u32::from(value), offset)
    }

    // ANCHOR: submit
    /// Submits `cmd` and sleeps until it completes, for at most `timeout`.
    ///
    /// A failed status is an `EIO`; no completion in time an `ETIMEDOUT`, a
    /// signal an `EINTR`: then the command's identifier stays reserved
    /// until the controller answers (see [`Slot::Abandoned`]).
    pub(crate) fn submit(&self, dev: &Device, cmd: &Command, timeout: Delta) -> Result<Completion> {
        let mut rings = self.rings.lock();
        let cid = rings.claim_cid().ok_or(EBUSY)?;
        let Some(slot) = rings.sq.push() else {
            if let Some(s) = rings.slot(cid) {
                *s = Slot::Free;
            }
            return Err(EBUSY);
        };
        // The entry, then the tail doorbell (an MMIO write, ordered after
        // the memory write), both under the lock: two submitters ring
        // their tails in the order of their slots.
        io_project!(self.sq_mem, [try: usize::from(slot)]).copy_write(cmd.to_dwords(cid));
        self.ring_doorbell(rings.sq.tail(), self.sq_doorbell)?;

        let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX);
        let cqe = self.wait_for(&mut rings, cid, ms).inspect_err(|e| {
            dev_err!(
                dev,
                "admin command {:#04x} (cid {}) not completed: {:?}; cid {} stays reserved until the controller answers\n",
                cmd.opcode,
                cid,
                e,
                cid
            )
        })?;
        drop(rings);

        if !cqe.status.is_success() {
            dev_err!(
                dev,
                "admin command {:#04x} failed: {} (SCT {}, SC {:#04x}{})\n",
                cmd.opcode,
                cqe.status.describe(),
                cqe.status.sct(),
                cqe.status.sc(),
                if cqe.status.dnr() {
                    ", do not retry"
                } else {
                    ""
                }
            );
            return Err(EIO);
        }
        Ok(cqe)
    }
    // ANCHOR_END: submit

    // ANCHOR: wait
    /// Sleeps until the handler has completed identifier `cid`, for at most
    /// `ms` milliseconds, and frees the identifier; or marks it abandoned.
    fn wait_for(
        &self,
        rings: &mut SpinLockIrqGuard<'_, Rings>,
        cid: u16,
        ms: u32,
    ) -> Result<Completion> {
        let mut left = msecs_to_jiffies(ms);
        loop {
            // The handler may have come before we sleep, or between two
            // wake-ups for other commands: always look first.
            let slot = rings.slot(cid).ok_or(EINVAL)?;
            if let Slot::Done(cqe) = *slot {
                *slot = Slot::Free;
                return Ok(cqe);
            }
            // Releases the lock while asleep, takes it again before return.
            let err = match self.completed.wait_interruptible_timeout(rings, left) {
                CondVarTimeoutResult::Woken { jiffies } => {
                    left = jiffies;
                    continue;
                }
                CondVarTimeoutResult::Timeout => ETIMEDOUT,
                CondVarTimeoutResult::Signal { .. } => EINTR,
            };
            // Out of time: one last look, then leave the identifier to the
            // controller.
            let slot = rings.slot(cid).ok_or(EINVAL)?;
            if let Slot::Done(cqe) = *slot {
                *slot = Slot::Free;
                return Ok(cqe);
            }
            *slot = Slot::Abandoned;
            return Err(err);
        }
    }
    // ANCHOR_END: wait

    // ANCHOR: reap
    /// Reaps every new completion; called by the interrupt handler. Returns
    /// how many there were (0: the interrupt was not ours).
    pub(crate) fn reap(&self) -> u32 {
        let mut rings = self.rings.lock();
        let mut n = 0;
        while let Ok(Some(cqe)) = self.next_completion(&rings.cq) {
            rings.cq.advance();
            rings.sq.consumed_up_to(cqe.sq_head);
            n += 1;
            match rings.slot(cqe.cid) {
                // Its submitter sleeps: hand the completion over.
                Some(slot) if matches!(slot, Slot::Waiting) => *slot = Slot::Done(cqe),
                // Its submitter gave up: the identifier is free again now.
                Some(slot) if matches!(slot, Slot::Abandoned) => *slot = Slot::Free,
                // An answer to a command nobody sent: nothing to hand over.
                _ => {}
            }
        }
        if n > 0 {
            // Hand the entries back; for INTx this also lowers the line.
            let _ = self.ring_doorbell(rings.cq.head(), self.cq_doorbell);
            rings.reaped += u64::from(n);
            self.completed.notify_all();
        }
        n
    }
    // ANCHOR_END: reap

    /// The completion at the CQ's head, if the controller has posted a new
    /// one there.
    fn next_completion(&self, cq: &CqRing) -> Result<Option<Completion>> {
        let head = usize::from(cq.head());
        // A new entry shows by its phase tag; the barrier keeps the reads
        // of the rest of the entry after that of the tag.
        if !cq.is_new(phase_of(io_read!(self.cq_mem, [try: head][build: 3]))) {
            return Ok(None);
        }
        dma_mb(Read);
        Ok(Some(Completion::from_dwords(
            io_project!(self.cq_mem, [try: head]).copy_read(),
        )))
    }
}

impl AdminQueue {
    // ANCHOR: disable
    /// Disables the controller without proof that the device is bound (as
    /// in `drop`): every register access takes the registers for itself
    /// (`try_access`: an RCU read-side section, in which nothing may
    /// sleep), and the wait sleeps between them. `controller::disable` does
    /// the same with a `&Bar0` held all along, for process context.
    fn disable(&self) -> Result {
        {
            let bar = self.bar.try_access().ok_or(ENXIO)?;
            let cc = bar.read(CC);
            if cc.en() {
                bar.write_reg(cc.with_en(false));
            }
        }
        read_poll_timeout(
            || self.bar.try_access().map(|bar| bar.read(CSTS)).ok_or(ENXIO),
            |csts| !csts.rdy(),
            Delta::from_millis(1),
            Delta::from_millis(i64::from(self.cap.timeout_ms())),
        )
        .map(|_| ())
    }
    // ANCHOR_END: disable
}

#[pinned_drop]
impl PinnedDrop for AdminQueue {
    fn drop(self: Pin<&mut Self>) {
        // INVARIANT: stop the controller before the queue memory is freed
        // (with the fields, right after this). After a successful unbind it
        // is stopped already, and this returns at once.
        if let Err(e) = self.disable() {
            dev_err!(self.bar.device(), "disabling failed ({:?})\n", e);
        }
    }
}
