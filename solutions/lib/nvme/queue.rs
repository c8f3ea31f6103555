// SPDX-License-Identifier: GPL-2.0

//! A queue pair (the admin queue, or an I/O queue), shared by the
//! submitters (process context) and its interrupt handler: a submitter
//! writes its command and rings the doorbell under a lock, then sleeps; the
//! handler reaps the completions, hands each to its submitter and wakes
//! them.
//!
//! Part of the NVMe library (`nvme::queue`), from stage 08 on, where the
//! admin queue is the only one and is still polled; from stage 11 on every
//! queue pair shares the registers (`Registers`) with the others. Stage 08
//! writes the loop that reaps (`reap_locked`, in `reap.rs`), which its given
//! polled wait calls (`poll_wait.rs`); stage 09 writes the wait that sleeps
//! until the interrupt handler has reaped (`wait_for`, in `wait.rs`), and
//! the handler calls [`QueuePair::reap`], below.
//!
//! A queue also carries commands nobody sleeps on: a block request's
//! (stage 13). What such a command carries is the queue's parameter `P`
//! ([`Pending`]): the admin queue carries none ([`NoRequests`]), the disk's
//! I/O queues carry its in-flight requests. `issue` submits one with its
//! tag as identifier, and the handler takes each finished one
//! (`take_finished`) and ends it (`Pending::finish`) after it has dropped
//! the lock. The queue knows nothing else of them: no two of the library's
//! files and the disk import each other.
//!
//! A command the controller never answers must not hang anyone (stage 17).
//! Each request's slot remembers when it was issued, so a watchdog can find
//! the oldest (`oldest_request`); and when the controller is given up (a
//! timeout it would not abort, or the device is gone), `cancel_next` hands
//! every request back with a status the driver makes up, as the controller
//! would have failed it, and the queue refuses new commands. Passthrough
//! commands from user space share an I/O queue with the disk's requests:
//! they take identifiers above the tags (`reserve_tags`).
//!
//! The speed stage deepens the I/O queues (up to 1024 entries: the
//! finished requests are a list, not a bitmap of 64 bits), hands the
//! handler its first finished request in the reap's lock round trip, and
//! rings doorbells through shadow doorbells ([`QueuePair::use_shadow`])
//! when the controller offers them. A request stays in its slot from
//! `issue` until the handler takes it: a block request's is 128 bytes,
//! and each move of it a `memcpy` call or sixteen steps of `rep movsq`
//! (QEMU's instruction count, `scripts/insns-nvme.sh`, found eight moves
//! per I/O before it stayed).

use core::cell::Cell;

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::Coherent,
    io::{
        io_project,
        io_read,
        Io, //
    },
    new_condvar,
    new_spinlock_irq,
    prelude::*,
    sync::{
        barrier::{
            dma_mb,
            Read, //
        },
        Arc,
        CondVar,
        SpinLockIrq, //
    },
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
};

use super::{
    command::{
        phase_of,
        Command,
        Completion,
        Status, //
    },
    doorbell_buffer::DoorbellBuffer,
    registers::Registers,
    ring::{
        CqRing,
        SqRing, //
    }, //
};

// ANCHOR: pending
/// What a command that nobody sleeps on carries while the controller works
/// on it (a block request), and how it ends.
pub(crate) trait Pending: Sized + Send + 'static {
    /// Ends the command with its completion: called by the interrupt
    /// handler (or, for a cancelled command, by whoever gave the controller
    /// up) with no lock of the queue held, so it may submit again to
    /// `queue` (the next piece of a transfer).
    fn finish(self, queue: &QueuePair<Self>, cqe: Completion);
}

/// The parameter of a queue that carries no requests (the admin queue, and
/// stage 11's I/O queues): there is no value of this type, so `issue`
/// cannot be called on such a queue.
pub(crate) enum NoRequests {}

impl Pending for NoRequests {
    fn finish(self, _queue: &QueuePair<Self>, _cqe: Completion) {
        match self {}
    }
}

/// The admin queue: it carries no requests.
pub(crate) type AdminQueue = QueuePair<NoRequests>;

/// Entries in each admin queue.
pub(crate) const ADMIN_DEPTH: u16 = 32;
/// How long an admin command may take before its submitter gives up.
pub(crate) const ADMIN_TIMEOUT: Delta = Delta::from_secs(5);
/// The most entries a queue pair may have: the most identifiers the
/// finished list and the slots are sized for (the C driver's default
/// `io_queue_depth`).
pub(crate) const MAX_DEPTH: u16 = 1024;
// ANCHOR_END: pending

// ANCHOR: slot
/// What a command identifier (CID) is doing. The identifier is the index
/// of its slot.
pub(super) enum Slot<P> {
    /// Free for the next command.
    Free,
    /// Submitted; its submitter waits until its completion is reaped.
    Waiting,
    /// Completed; the submitter has not taken the completion yet.
    Done(Completion),
    /// The submitter stopped waiting (timeout or signal). The controller
    /// may still answer with this identifier, so it is not handed out again
    /// until it has: the handler frees it then. A controller reset (the
    /// queue is dropped) ends it too.
    Abandoned,
    /// A block request's command, submitted by `issue` (the identifier is
    /// the request's tag); nobody sleeps on it. The request stays here
    /// until the handler takes it: its completion only changes the
    /// [`Progress`].
    Request(P, Progress),
}

/// Where a block request's command is.
pub(super) enum Progress {
    /// With the controller since the given time. (`None`: not read at
    /// submission, see [`QueuePair::stamp_lazily`]; the watchdog stamps it
    /// when it first sees it.)
    Issued(Option<Instant<Monotonic>>),
    /// Its completion came; the handler finishes it (`take_finished`).
    Done(Completion),
}
// ANCHOR_END: slot

// ANCHOR: finished
/// A block request the handler took out of its slot, to finish with the
/// lock released.
pub(crate) struct Finished<P> {
    pub(crate) cqe: Completion,
    pub(crate) request: P,
    /// More finished requests wait (else the handler need not take the
    /// lock again: see [`QueuePair::reap_first`]).
    pub(crate) more: bool,
}
// ANCHOR_END: finished

// ANCHOR: rings
/// What the submitters and the handler share, under the lock.
pub(super) struct Rings<P> {
    pub(super) sq: SqRing,
    pub(super) cq: CqRing,
    /// One slot per command identifier (up to 1024: maybe more than
    /// kmalloc gives in one piece).
    slots: KVVec<Slot<P>>,
    /// Where the search for a free identifier starts: identifiers go round,
    /// as a hint for the reader of a trace.
    next_cid: u16,
    /// Completions reaped, in all: by the interrupt handler, or (stage 08)
    /// by the submitters' polling.
    pub(super) reaped: u64,
    /// The identifiers whose request's completion came (`Progress::Done`),
    /// for the handler to take: its capacity is the depth, so that pushing
    /// never allocates (an identifier goes in once, when its progress
    /// turns from `Issued` to `Done`).
    finished: KVec<u16>,
    /// The first identifier `submit` may use: the ones below are the disk's
    /// tags, which `issue` uses.
    first_cid: u16,
    /// The controller was given up: nothing is submitted any more.
    dead: bool,
    /// Commands are in the SQ whose tail doorbell is not rung yet (`issue`
    /// without `ring`; `commit` rings it).
    unrung: bool,
    /// Set before the queue pair is deleted: its doorbells are not rung
    /// any more (see [`QueuePair::close_doorbells`]).
    doorbells_closed: bool,
    /// Whether `issue` reads the clock for each request (else the
    /// watchdog stamps it: [`QueuePair::stamp_lazily`]).
    stamp_at_issue: bool,
    /// The shadow doorbells, once the controller was told of them (only
    /// I/O queues: see [`QueuePair::use_shadow`]).
    shadow: Option<Arc<DoorbellBuffer>>,
    /// Doorbell register writes, and new values the shadow alone carried
    /// (a `Cell`: `ring_doorbell` sees the rings shared, under the lock).
    mmio_doorbells: Cell<u64>,
    shadow_only: Cell<u64>,
}

impl<P> Rings<P> {
    // ANCHOR: claim_cid
    /// Claims a free identifier for a new command.
    fn claim_cid(&mut self) -> Option<u16> {
        let n = self.slots.len();
        let first = usize::from(self.first_cid);
        for i in 0..n.saturating_sub(first) {
            let cid = first + (usize::from(self.next_cid) + i) % (n - first);
            if let Some(slot @ Slot::Free) = self.slots.get_mut(cid) {
                *slot = Slot::Waiting;
                let cid = u16::try_from(cid).ok()?;
                self.next_cid = cid.wrapping_add(1);
                return Some(cid);
            }
        }
        None
    }
    // ANCHOR_END: claim_cid

    /// The slot of identifier `cid`, if there is one.
    pub(super) fn slot(&mut self, cid: u16) -> Option<&mut Slot<P>> {
        self.slots.get_mut(usize::from(cid))
    }

    // ANCHOR: take_done
    /// Takes the completion of identifier `cid`, if it has come (its slot
    /// is `Done`): the identifier is free again.
    pub(super) fn take_done(&mut self, cid: u16) -> Option<Completion> {
        let slot = self.slot(cid)?;
        let Slot::Done(cqe) = slot else {
            return None;
        };
        let cqe = *cqe;
        *slot = Slot::Free;
        Some(cqe)
    }
    // ANCHOR_END: take_done

    /// The controller is given up: nothing is submitted any more, and no
    /// doorbell is rung, not even for commands `issue_batched` left unrung
    /// (see `commit`).
    fn give_up(&mut self) {
        self.dead = true;
        self.unrung = false;
    }

    /// Completion `cqe` is a block request's (its slot is
    /// `Slot::Request`): it is `Done`, for the interrupt handler to take
    /// (`QueuePair::take_finished`) once the lock is dropped: finishing a
    /// request may submit again, to this queue. The request is not moved.
    #[inline]
    pub(super) fn finish_later(&mut self, cqe: Completion) {
        if let Some(Slot::Request(_, progress @ Progress::Issued(_))) = self.slot(cqe.cid) {
            *progress = Progress::Done(cqe);
            // Within capacity: `cid` was not in the list (it was issued, not
            // done), and the list holds every identifier.
            let _ = self.finished.push_within_capacity(cqe.cid);
        }
    }
}
// ANCHOR_END: rings

// ANCHOR: queue
/// A queue pair whose block requests (if any) carry a `P`. Shared in an
/// `Arc` by the driver data and the interrupt handler.
///
/// # Invariants
///
/// The controller no longer uses the queue memory when it is freed: `drop`
/// disables the controller (a no-op when `unbind` has done it already). An
/// I/O queue deleted with Delete I/O SQ/CQ is not used either, but drop
/// cannot know that it was, so it always disables.
#[pin_data(PinnedDrop)]
pub(crate) struct QueuePair<P: Pending> {
    /// The queue ID: 0 for the admin queue, 1.. for I/O queues.
    qid: u16,
    /// Entries in each ring.
    depth: u16,
    /// The registers: the handler rings the CQ head doorbell.
    regs: Arc<Registers>,
    /// Submission queue entries: 64-byte commands, read by the controller.
    sq_mem: Coherent<[[u32; 16]]>,
    /// Completion queue entries: 16 bytes each, written by the controller.
    cq_mem: Coherent<[[u32; 4]]>,
    sq_doorbell: usize,
    pub(super) cq_doorbell: usize,
    /// Taken by the handler in hard interrupt context, so the lock
    /// disables interrupts (a plain spinlock held by a submitter when the
    /// interrupt arrives on the same CPU would deadlock).
    #[pin]
    pub(super) rings: SpinLockIrq<Rings<P>>,
    /// Submitters sleep on it; the handler wakes them all after it reaped
    /// (stage 09). Stage 08's polling submitters sleep on it one jiffy at a
    /// time, and nobody wakes them.
    #[pin]
    pub(super) completed: CondVar,
}
// ANCHOR_END: queue

impl<P: Pending> QueuePair<P> {
    // ANCHOR: new
    /// Allocates queue pair `qid` with `depth` entries in each ring, and one
    /// identifier per entry.
    pub(crate) fn new(
        dev: &Device<Bound>,
        regs: Arc<Registers>,
        qid: u16,
        depth: u16,
    ) -> Result<Arc<Self>> {
        if depth > MAX_DEPTH {
            return Err(EINVAL);
        }
        let mut slots = KVVec::with_capacity(depth.into(), GFP_KERNEL)?;
        for _ in 0..depth {
            slots.push(Slot::Free, GFP_KERNEL)?;
        }
        let rings = Rings {
            sq: SqRing::new(depth).ok_or(EINVAL)?,
            cq: CqRing::new(depth).ok_or(EINVAL)?,
            slots,
            next_cid: 0,
            reaped: 0,
            finished: KVec::with_capacity(depth.into(), GFP_KERNEL)?,
            first_cid: 0,
            dead: false,
            unrung: false,
            doorbells_closed: false,
            stamp_at_issue: true,
            shadow: None,
            mmio_doorbells: Cell::new(0),
            shadow_only: Cell::new(0),
        };
        Arc::pin_init(
            try_pin_init!(Self {
                sq_mem: Coherent::zeroed_slice(dev, depth.into(), GFP_KERNEL)?,
                cq_mem: Coherent::zeroed_slice(dev, depth.into(), GFP_KERNEL)?,
                sq_doorbell: regs.cap().sq_tail_doorbell(qid),
                cq_doorbell: regs.cap().cq_head_doorbell(qid),
                qid,
                depth,
                regs,
                rings <- new_spinlock_irq!(rings, "rnvme_admin_rings"),
                completed <- new_condvar!("rnvme_admin_completed"),
            }),
            GFP_KERNEL,
        )
    }
    // ANCHOR_END: new

    /// Disables the controller: afterwards it touches no queue's memory.
    pub(crate) fn disable_controller(&self) -> Result {
        self.regs.disable()
    }

    /// The queue ID.
    pub(crate) fn qid(&self) -> u16 {
        self.qid
    }

    /// Entries in each ring.
    pub(crate) fn depth(&self) -> u16 {
        self.depth
    }

    // ANCHOR: use_shadow
    /// From now on this queue's doorbells go through `shadow` (the speed
    /// stage): the controller was sent Doorbell Buffer Config for it, while
    /// nothing was in flight on the queue. An admin queue never does (the
    /// C driver's does not either; QEMU copies its register writes).
    pub(crate) fn use_shadow(&self, shadow: &Arc<DoorbellBuffer>) {
        self.rings.lock().shadow = Some(shadow.clone());
    }
    // ANCHOR_END: use_shadow

    // ANCHOR: stamp_lazily
    /// From now on `issue` does not read the clock (the speed stage): the
    /// watchdog stamps a request the first time it looks
    /// (`oldest_request`), so a request's age is counted from at most one
    /// of the watchdog's periods after it was submitted, and a request that
    /// never completes is aborted that much later.
    pub(crate) fn stamp_lazily(&self) {
        self.rings.lock().stamp_at_issue = false;
    }
    // ANCHOR_END: stamp_lazily

    /// Doorbell register writes so far, and new doorbell values that only
    /// the shadow doorbells carried.
    pub(crate) fn doorbell_writes(&self) -> (u64, u64) {
        let rings = self.rings.lock();
        (rings.mmio_doorbells.get(), rings.shadow_only.get())
    }

    /// Bus address of the submission queue, for ASQ or Create I/O SQ.
    pub(crate) fn sq_address(&self) -> u64 {
        self.sq_mem.dma_address()
    }

    /// Bus address of the completion queue, for ACQ or Create I/O CQ.
    pub(crate) fn cq_address(&self) -> u64 {
        self.cq_mem.dma_address()
    }

    // ANCHOR: reserve_tags
    /// Keeps identifiers `0..tags` for `issue` (the disk's tags): `submit`
    /// takes the ones above.
    pub(crate) fn reserve_tags(&self, tags: u16) {
        let mut rings = self.rings.lock();
        rings.first_cid = tags;
        rings.next_cid = 0;
    }
    // ANCHOR_END: reserve_tags

    /// Completions reaped so far.
    pub(crate) fn reaped(&self) -> u64 {
        self.rings.lock().reaped
    }

    // ANCHOR: reap
    /// Reaps every new completion (`reap_locked`, stage 08's exercise) and
    /// wakes the submitters if there were any. Called by the interrupt
    /// handler (stage 09), and by whoever polls for an answer nobody waits
    /// for. Returns how many there were: 0 tells the kernel the interrupt
    /// was not ours.
    pub(crate) fn reap(&self) -> u32 {
        let mut rings = self.rings.lock();
        self.reap_and_wake(&mut rings)
    }

    /// `reap_locked`, and the sleepers woken if a completion was not a
    /// block request's (only a sleeper's, or an abandoned one's, can be).
    #[inline]
    fn reap_and_wake(&self, rings: &mut Rings<P>) -> u32 {
        let before = rings.finished.len();
        let n = self.reap_locked(rings);
        let requests = rings.finished.len().saturating_sub(before);
        if n as usize > requests {
            // Every sleeper looks at its own slot.
            self.completed.notify_all();
        }
        n
    }

    /// The interrupt handler's reap (the speed stage's): [`QueuePair::reap`],
    /// and in the same lock round trip the first finished request, if any
    /// ([`QueuePair::take_finished`] has the others). Returns how many
    /// completions there were, and that request, which says whether more
    /// finished requests wait (`Finished::more`): if not (one completion
    /// per interrupt, the usual case at low depth), the handler need not
    /// take the lock again. That holds because the handler alone reaps an
    /// I/O queue (`reap` is for the admin queue): a request another reaper
    /// marked `Done` after this check would wait for the handler's next
    /// interrupt.
    pub(crate) fn reap_first(&self) -> (u32, Option<Finished<P>>) {
        let mut rings = self.rings.lock();
        let n = self.reap_and_wake(&mut rings);
        (n, Self::take_locked(&mut rings))
    }
    // ANCHOR_END: reap

    /// Writes `value` to the doorbell at `offset`, unless the doorbells are
    /// closed. `rings` is what the lock guards: the doorbell is rung with
    /// it held, which orders the write with [`QueuePair::close_doorbells`].
    /// With shadow doorbells (`use_shadow`), the value goes to the shadow
    /// first, and to the register only if the controller asks for it.
    #[inline]
    pub(super) fn ring_doorbell(&self, rings: &Rings<P>, value: u16, offset: usize) -> Result {
        if rings.doorbells_closed {
            return Ok(());
        }
        if let Some(shadow) = &rings.shadow {
            // A doorbell outside the pages (`entry_of` says none is) goes
            // to its register: slower, never lost.
            let entry = DoorbellBuffer::entry_of(offset);
            if let Some(Ok(false)) = entry.map(|e| shadow.update(e, value)) {
                rings.shadow_only.set(rings.shadow_only.get() + 1);
                return Ok(());
            }
        }
        rings.mmio_doorbells.set(rings.mmio_doorbells.get() + 1);
        self.regs.ring_doorbell(value, offset)
    }

    /// Closes the doorbells before the queue pair is deleted. Deleting the
    /// SQ ends the commands still in it, and their completions interrupt
    /// while the CQ's deletion is on its way: a handler that rang the CQ
    /// head doorbell then would write the doorbell of a queue that no
    /// longer exists, which the specification leaves undefined (QEMU traces
    /// `pci_nvme_ub_db_wr_invalid_cq`). Set under the lock every doorbell
    /// is rung with, so no handler is between its check and its write.
    pub(crate) fn close_doorbells(&self) {
        self.rings.lock().doorbells_closed = true;
    }

    // ANCHOR: submit
    /// Submits `cmd` and sleeps until it completes, for at most `timeout`.
    ///
    /// A failed status is an `EIO`; no completion in time an `ETIMEDOUT`, a
    /// signal an `EINTR`: then the command's identifier stays reserved
    /// until the controller answers (see [`Slot::Abandoned`]).
    pub(crate) fn submit(&self, dev: &Device, cmd: &Command, timeout: Delta) -> Result<Completion> {
        let cqe = self.submit_any(dev, cmd, timeout)?;
        if !cqe.status.is_success() {
            dev_err!(
                dev,
                "queue {} command {:#04x} failed: {:?}\n",
                self.qid,
                cmd.opcode,
                cqe.status.explained()
            );
            return Err(EIO);
        }
        Ok(cqe)
    }

    /// Submits `cmd` and sleeps until it completes, as [`QueuePair::submit`],
    /// but returns its completion whatever its status (for passthrough
    /// commands, whose caller wants the status).
    pub(crate) fn submit_any(
        &self,
        dev: &Device,
        cmd: &Command,
        timeout: Delta,
    ) -> Result<Completion> {
        let mut rings = self.rings.lock();
        if rings.dead {
            return Err(ENODEV);
        }
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
        self.write_entry(slot, cmd.to_dwords(cid))?;
        self.ring_doorbell(&rings, rings.sq.tail(), self.sq_doorbell)?;
        rings.unrung = false;

        let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX);
        let cqe = self.wait_for(&mut rings, cid, ms).inspect_err(|e| {
            dev_err!(
                dev,
                "queue {} command {:#04x} (cid {}) not completed: {:?}; cid {} stays reserved until the controller answers\n",
                self.qid,
                cmd.opcode,
                cid,
                e,
                cid
            )
        })?;
        drop(rings);
        Ok(cqe)
    }
    // ANCHOR_END: submit

    // ANCHOR: issue
    /// Submits `cmd` for a block request, with identifier `tag`, and returns
    /// at once: the interrupt handler takes the request back with
    /// [`QueuePair::take_finished`]. If the identifier is in use, or the
    /// doorbell cannot be rung, the request comes back with the error.
    pub(crate) fn issue(&self, tag: u16, cmd: &Command, request: P) -> Result<(), (Error, P)> {
        self.issue_batched(tag, cmd, request, true)
    }

    /// [`QueuePair::issue`], but with `ring` false the doorbell is not
    /// rung: more commands follow, and the last one (or
    /// [`QueuePair::commit`]) rings once for all (stage 19).
    pub(crate) fn issue_batched(
        &self,
        tag: u16,
        cmd: &Command,
        request: P,
        ring: bool,
    ) -> Result<(), (Error, P)> {
        let mut rings = self.rings.lock();
        if rings.dead {
            return Err((ENODEV, request));
        }
        if !matches!(rings.slot(tag), Some(Slot::Free)) {
            return Err((EBUSY, request));
        }
        let Some(pos) = rings.sq.push() else {
            return Err((EBUSY, request));
        };
        let written = self.write_entry(pos, cmd.to_dwords(tag));
        if let Err(e) = written.and_then(|()| match ring {
            true => self.ring_doorbell(&rings, rings.sq.tail(), self.sq_doorbell),
            false => Ok(()),
        }) {
            // The device is gone (unplugged): nothing will run this command.
            return Err((e, request));
        }
        rings.unrung = !ring;
        let since = rings.stamp_at_issue.then(Instant::now);
        // The completion may come as soon as the doorbell rang, but the
        // handler takes the lock first, which we hold until the slot says
        // whose it is.
        if let Some(slot) = rings.slot(tag) {
            *slot = Slot::Request(request, Progress::Issued(since));
        }
        Ok(())
    }

    /// Writes a command into SQ entry `pos`.
    #[inline]
    fn write_entry(&self, pos: u16, dwords: [u32; 16]) -> Result {
        io_project!(self.sq_mem, [try: usize::from(pos)]).copy_write(dwords);
        Ok(())
    }

    /// Rings the SQ tail doorbell for the commands `issue` left unrung.
    pub(crate) fn commit(&self) {
        let mut rings = self.rings.lock();
        // A queue given up belongs to a disabled controller: its commands
        // were cancelled, and a doorbell now would name a queue the
        // controller no longer has (QEMU's trace: "doorbell write for
        // nonexistent queue"). blk-mq may still call `commit_rqs` after
        // the watchdog gave the controller up between two `queue_rq`s.
        if rings.unrung && !rings.dead {
            // A device that is gone answers nothing: the watchdog ends
            // these requests.
            let _ = self.ring_doorbell(&rings, rings.sq.tail(), self.sq_doorbell);
        }
        rings.unrung = false;
    }

    /// Takes a block request whose completion the handler reaped, if there
    /// is one, with its completion: its identifier is free again. And
    /// whether more wait, as [`QueuePair::reap_first`] says.
    pub(crate) fn take_finished(&self) -> Option<Finished<P>> {
        Self::take_locked(&mut self.rings.lock())
    }

    /// `take_finished`, with the lock held. The request moves once, out of
    /// its slot, straight into what this returns (a lock round trip per
    /// request costs fewer instructions than moving it through a batch;
    /// and a result the callers take apart and build again is a move more
    /// each: `scripts/insns-nvme.sh` counted two more `memcpy` calls per
    /// I/O when `more` was returned beside the request).
    #[inline]
    fn take_locked(rings: &mut Rings<P>) -> Option<Finished<P>> {
        while let Some(cid) = rings.finished.pop() {
            let Some(slot) = rings.slot(cid) else {
                continue;
            };
            if !matches!(slot, Slot::Request(_, Progress::Done(_))) {
                continue;
            }
            if let Slot::Request(request, Progress::Done(cqe)) =
                core::mem::replace(slot, Slot::Free)
            {
                let more = !rings.finished.is_empty();
                return Some(Finished { cqe, request, more });
            }
        }
        None
    }
    // ANCHOR_END: issue

    // ANCHOR: oldest
    /// The identifier of the block request in flight the longest, and for
    /// how long it has been.
    pub(crate) fn oldest_request(&self) -> Option<(u16, Delta)> {
        let mut rings = self.rings.lock();
        let now = Instant::now();
        let mut oldest: Option<(u16, Delta)> = None;
        for (cid, slot) in rings.slots.iter_mut().enumerate() {
            if let Slot::Request(_, Progress::Issued(since)) = slot {
                let age = now - *since.get_or_insert(now);
                if oldest.is_none_or(|(_, a)| age > a) {
                    oldest = Some((u16::try_from(cid).ok()?, age));
                }
            }
        }
        oldest
    }
    // ANCHOR_END: oldest

    // ANCHOR: cancel
    /// Gives the controller up for this queue: from now on nothing is
    /// submitted, a sleeping submitter wakes with a failed completion, and
    /// each call hands back one block request that was in flight with a
    /// failed completion for it, until none is left.
    ///
    /// Only after the controller is disabled (or gone): then it can no
    /// longer answer these commands, so nothing else ends them.
    pub(crate) fn cancel_next(&self) -> Option<(Completion, P)> {
        let mut rings = self.rings.lock();
        rings.give_up();
        let mut woken = false;
        let mut found = None;
        for (cid, slot) in rings.slots.iter_mut().enumerate() {
            let cqe = cancelled(self.qid, u16::try_from(cid).ok()?);
            match slot {
                Slot::Waiting => {
                    *slot = Slot::Done(cqe);
                    woken = true;
                }
                Slot::Abandoned => *slot = Slot::Free,
                // A `Done` one is the handler's to take and end.
                Slot::Request(_, Progress::Issued(_)) if found.is_none() => {
                    if let Slot::Request(r, _) = core::mem::replace(slot, Slot::Free) {
                        found = Some((cqe, r));
                    }
                }
                _ => {}
            }
        }
        if woken {
            self.completed.notify_all();
        }
        found
    }

    /// Gives the queue up before the controller is disabled: from now on
    /// nothing is submitted to it and no doorbell of it is rung (the
    /// submitters check under the lock this takes). Then the controller
    /// can be disabled and the commands cancelled (`cancel_next`) with no
    /// doorbell written to a queue the controller no longer has.
    pub(crate) fn refuse_new(&self) {
        self.rings.lock().give_up();
    }

    /// Whether an identifier waits for an answer its submitter stopped
    /// waiting for (`Slot::Abandoned`): until none does, a buffer such a
    /// command used may still be the controller's (stage 16).
    pub(crate) fn has_abandoned(&self) -> bool {
        let rings = self.rings.lock();
        rings.slots.iter().any(|s| matches!(s, Slot::Abandoned))
    }

    /// Whether the queue was given up.
    pub(crate) fn is_dead(&self) -> bool {
        self.rings.lock().dead
    }
    // ANCHOR_END: cancel

    /// The completion at the CQ's head, if the controller has posted a new
    /// one there.
    #[inline]
    pub(super) fn next_completion(&self, cq: &CqRing) -> Result<Option<Completion>> {
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

// ANCHOR: cancelled
/// The completion the driver makes up for a command it cancels
/// ([`Status::HOST_ABORTED`]).
const fn cancelled(qid: u16, cid: u16) -> Completion {
    Completion {
        result: 0,
        sq_head: 0,
        sq_id: qid,
        cid,
        phase: false,
        status: Status::HOST_ABORTED,
    }
}
// ANCHOR_END: cancelled

#[pinned_drop]
impl<P: Pending> PinnedDrop for QueuePair<P> {
    fn drop(self: Pin<&mut Self>) {
        // INVARIANT: stop the controller before the queue memory is freed
        // (with the fields, right after this). After a successful unbind it
        // is stopped already, and this returns at once.
        if let Err(e) = self.regs.disable() {
            pr_err!(
                "rnvme: disabling the controller before freeing queue {} failed ({:?})\n",
                self.qid,
                e
            );
        }
    }
}
