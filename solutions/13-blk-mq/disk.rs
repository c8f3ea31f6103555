// SPDX-License-Identifier: GPL-2.0

//! The disk: a blk-mq tag set with one hardware queue per I/O queue, a
//! `GenDisk` named `rnvmeXn1`, and the path of a request, from `queue_rq`
//! (a Read, Write or Flush on the queue of the submitting CPU) to its end
//! in the queue's interrupt handler.
//!
//! Data goes through a bounce buffer per tag: one piece of DMA memory,
//! contiguous, whose PRP list is built once per command. The request's own
//! pages are copied in (Write) or out (Read).
//!
//! How a request ends is a function the stage passes to [`create`]: stage
//! 13's [`finish_whole`] ends a request of one piece; stage 14's
//! `pieces::finish` sends the next piece of a larger one first.
//!
//! Stage 19 includes this file unchanged: what it changes (the request's
//! own pages mapped for the controller instead of the bounce buffer, one
//! doorbell per batch) it plugs in as a [`Speedups`]. Stage 13's is
//! [`Bounced`]: neither. Stage 20 plugs in the rest of the disk a user
//! sees the same way: larger requests, the write cache kept on, discards.

use core::{
    convert::Infallible,
    marker::PhantomData, //
};

use kernel::{
    bindings,
    block::mq::{
        gen_disk::GenDiskBuilder,
        Operations,
        Request,
        TagSet, //
    },
    device::{
        Core,
        Device, //
    },
    pci,
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        ArcBorrow,
        Mutex, //
    }, //
};

use crate::{
    io_queues::IoQueue,
    kshim::{
        request,
        send_disk::SendGenDisk, //
    },
    nvme::{
        cmd_buffer::{
            Claim,
            CmdBuffer,
            View, //
        },
        command::{
            feature,
            nvm_opc,
            Command,
            Completion, //
        },
        controller::PAGE_SHIFT,
        ctrl::Controller,
        identify::IdCtrl,
        io_command::{
            flush,
            io_error,
            next_chunk,
            read_write,
            IoError, //
        },
        prp::{
            self,
            Prps, //
        },
        queue::{
            AdminQueue,
            Pending,
            QueuePair,
            ADMIN_TIMEOUT, //
        }, //
    }, //
};

/// The namespace the disk shows.
pub(crate) const NSID: u32 = 1;
/// The memory page size the driver uses (CC.MPS): 4 KiB.
const PAGE: u32 = 1 << PAGE_SHIFT;

// ANCHOR: bounce
/// Bytes per bounce buffer: the largest request blk-mq sends with its
/// default limits (255 sectors; the 7.3 `GenDiskBuilder` cannot raise
/// them), rounded up to whole pages. (Stage 20's `Speedups::BOUNCE_SIZE`.)
const BOUNCE_SIZE: usize = 128 * 1024;
/// Entries of a bounce buffer's PRP list: for up to 512 KiB (stage 20's).
const LIST_ENTRIES: usize = prp::list_entries_for(512 * 1024, PAGE);

/// What each tag owns for the life of the disk: its bounce buffer, with a
/// PRP list for it (and the SGL segment a stage's `Speedups` asks for).
fn bounce<Z: Speedups>(pdev: &pci::Device<Core<'_>>) -> Result<Arc<CmdBuffer>> {
    CmdBuffer::new(pdev.as_ref(), Z::TAG_BYTES, LIST_ENTRIES, Z::SGL_ENTRIES)
}
// ANCHOR_END: bounce

// ANCHOR: speedups
/// What stage 19 changes in this disk without copying it: the request's
/// own pages for the controller instead of the bounce buffer, and one
/// doorbell per batch of requests. (And stage 20: the items with a
/// default.)
pub(crate) trait Speedups: Send + Sync + Sized + 'static {
    /// A request's pages, mapped for the controller; unmapped when dropped.
    type Mapping: Send;
    /// Entries of the SGL segment each tag's buffer needs (0: none).
    const SGL_ENTRIES: usize;
    /// Whether `queue_rq` leaves the doorbell to the last request of a
    /// batch (and `commit_rqs`).
    const BATCH: bool;
    /// Bytes of each tag's bounce buffer (at most 512 KiB, what the PRP
    /// lists hold): the largest request the disk takes.
    const BOUNCE_SIZE: usize = BOUNCE_SIZE;
    /// Bytes of data each tag owns (the speed stage's: a page).
    const TAG_BYTES: usize = Self::BOUNCE_SIZE;
    /// Maps the data of `rq` for one command (`transfer`), and writes its
    /// data pointer (PRPs, or an SGL) with `view`'s lists: the mapping, the
    /// pointer, and whether it is an SGL. `None`: the request goes through
    /// the bounce buffer.
    fn map<T: Operations>(
        &self,
        rq: &Request<T>,
        transfer: Transfer,
        view: &mut View<'_>,
    ) -> Option<(Self::Mapping, Prps, bool)>;
    /// A bounce buffer for `rq` if its tag's is too small (`None`: try
    /// again later).
    fn large_bounce<T: Operations>(&self, _rq: &Request<T>) -> Option<Claim> {
        None
    }
    /// Whether the disk keeps the controller's volatile write cache on
    /// (stage 20, which tells the block layer); else `create` turns it off.
    fn write_cache(&self) -> bool {
        false
    }
    /// The command for a Discard (stage 20): Dataset Management, with the
    /// request's ranges written into `view`'s data. Before stage 20 the
    /// block layer sends none.
    fn discard(
        &self,
        _rq: &Request<NvmeDisk<Self>>,
        _lba_shift: u32,
        _view: &mut View<'_>,
    ) -> Result<Command> {
        Err(EOPNOTSUPP)
    }
}

/// What a request asks to transfer (read by stage 19's `Speedups`).
#[derive(Clone, Copy)]
#[allow(dead_code)]
pub(crate) struct Transfer {
    /// Read, Write or Flush.
    pub(crate) opcode: u8,
    /// Bytes of the whole request.
    pub(crate) len: u32,
    /// Bytes one command may carry.
    pub(crate) max_piece: u32,
}

/// Stage 13: every request through its tag's bounce buffer, and a doorbell
/// for each.
pub(crate) struct Bounced;

impl Speedups for Bounced {
    type Mapping = Infallible;
    const SGL_ENTRIES: usize = 0;
    const BATCH: bool = false;

    fn map<T: Operations>(
        &self,
        _: &Request<T>,
        _: Transfer,
        _: &mut View<'_>,
    ) -> Option<(Infallible, Prps, bool)> {
        None
    }
}
// ANCHOR_END: speedups

// ANCHOR: in_flight
/// A block request whose command is in flight on an I/O queue. A transfer
/// larger than the controller takes in one command (MDTS) goes in pieces,
/// one after the other, under the same tag.
pub(crate) struct InFlight<Z: Speedups> {
    rq: ARef<Request<NvmeDisk<Z>>>,
    /// The tag's bounce buffer, claimed for this request.
    bounce: Claim,
    /// The request's own pages, mapped for the controller (stage 19): then
    /// the bounce buffer's data is not used.
    mapping: Option<Z::Mapping>,
    /// Read, Write or Flush.
    pub(crate) opcode: u8,
    /// The request's first logical block.
    pub(crate) lba: u64,
    /// log2 of the logical block size.
    pub(crate) lba_shift: u32,
    /// Force Unit Access.
    fua: bool,
    /// Bytes of the whole request.
    pub(crate) len: u32,
    /// Bytes done by the pieces before the one in flight.
    pub(crate) done: u32,
    /// Bytes of the piece in flight.
    pub(crate) piece: u32,
    /// Bytes one command may carry.
    max_piece: u32,
    /// What the queue's handler calls with each completion (the disk's).
    finish: Finish<Z>,
}
// ANCHOR_END: in_flight

// ANCHOR: finish_type
/// How a request's command completes: the queue's handler calls the
/// disk's with the request and the completion, and the function issues the
/// next piece on the queue, or ends the request. Stage 13 passes
/// [`finish_whole`] to [`create`], stage 14 its `pieces::finish`.
pub(crate) type Finish<Z> = fn(InFlight<Z>, &QueuePair<InFlight<Z>>, Completion);
// ANCHOR_END: finish_type

impl<Z: Speedups> InFlight<Z> {
    // ANCHOR: new
    /// Request `rq`, of `len` bytes from block `lba`, with the tag's
    /// buffer claimed: nothing of it done yet, its pages not mapped.
    fn new(
        disk: &Disk<Z>,
        rq: ARef<Request<NvmeDisk<Z>>>,
        bounce: Claim,
        opcode: u8,
        lba: u64,
        len: u32,
    ) -> Self {
        InFlight {
            fua: request::is_fua(&rq),
            rq,
            bounce,
            mapping: None,
            opcode,
            lba,
            lba_shift: disk.lba_shift,
            len,
            done: 0,
            piece: 0,
            max_piece: disk.max_piece,
            finish: disk.finish,
        }
    }
    // ANCHOR_END: new

    // ANCHOR: first_command
    /// The request's first command: its own pages, if the stage maps them
    /// (`Speedups::map`), else the bounce buffer, with a Write's data
    /// copied in first (a Discard: the stage's, with its ranges there).
    fn first_command(&mut self, speedups: &Z) -> Result<Command> {
        let transfer = Transfer {
            opcode: self.opcode,
            len: self.len,
            max_piece: self.max_piece,
        };
        {
            let mut view = self.bounce.view();
            if self.opcode == nvm_opc::DATASET_MANAGEMENT {
                return speedups.discard(&self.rq, self.lba_shift, &mut view);
            }
            if let Some((mapping, prps, sgl)) = speedups.map(&self.rq, transfer, &mut view) {
                self.mapping = Some(mapping);
                self.piece = self.len;
                let blocks = self.len >> self.lba_shift;
                return Ok(Command {
                    // PRP1/PRP2 hold an SGL descriptor, not PRP entries.
                    sgl,
                    ..read_write(self.opcode, NSID, self.lba, blocks, self.fua, prps)
                        .ok_or(EINVAL)?
                });
            }
        }
        self.bounce_fitting(speedups)?;
        if self.opcode == nvm_opc::WRITE {
            request::copy_to_dma(&self.rq, self.bounce.view().data())?;
        }
        self.next_command()?.ok_or(EIO)
    }
    // ANCHOR_END: first_command

    /// The bounce buffer for a request whose pages are not mapped: the
    /// tag's, if the request fits it, else a larger one of the stage's
    /// (`Speedups::large_bounce`; none free: `EBUSY`, and blk-mq tries
    /// again once a request of the queue has ended).
    fn bounce_fitting(&mut self, speedups: &Z) -> Result {
        if self.len as usize > self.bounce.len() {
            self.bounce = speedups.large_bounce(&self.rq).ok_or(EBUSY)?;
        }
        Ok(())
    }

    // ANCHOR: next_command
    /// The command for the next piece of the transfer, with its PRP list
    /// written; `None` when all of it is done.
    pub(crate) fn next_command(&mut self) -> Result<Option<Command>> {
        if self.opcode == nvm_opc::FLUSH {
            return Ok(if self.done == 0 && self.piece == 0 {
                self.piece = 1;
                Some(flush(NSID))
            } else {
                None
            });
        }
        let Some(n) = next_chunk(self.done, self.len, self.max_piece) else {
            return Ok(None);
        };
        // No command of this request is in flight: its previous piece has
        // completed (`finish` calls this with its completion), or there was
        // none (`first_command`); the claim keeps other requests' out.
        let mut view = self.bounce.view();
        // The list is written here, then copied into the DMA memory.
        let mut list = [0u64; LIST_ENTRIES];
        let prps = prp::describe(
            view.data_address() + u64::from(self.done),
            n,
            PAGE,
            &mut list,
            view.prp_list_address(),
        )
        .map_err(|_| EINVAL)?;
        view.write_prp_list(list.get(..prps.list_entries).ok_or(EINVAL)?)?;
        let lba = self.lba + u64::from(self.done >> self.lba_shift);
        let cmd = read_write(self.opcode, NSID, lba, n >> self.lba_shift, self.fua, prps)
            .ok_or(EINVAL)?;
        self.piece = n;
        Ok(Some(cmd))
    }
    // ANCHOR_END: next_command
}

// ANCHOR: pending
impl<Z: Speedups> Pending for InFlight<Z> {
    /// Called by the queue's interrupt handler, with the lock released,
    /// with the completion of the piece in flight: the disk's `finish`.
    fn finish(self, queue: &QueuePair<Self>, cqe: Completion) {
        (self.finish)(self, queue, cqe)
    }
}
// ANCHOR_END: pending

// ANCHOR: finish_whole
/// Stage 13's [`Finish`], for requests that fit one command: ends the
/// request with the controller's status, a Read's data copied out first.
/// A request with pieces left (larger than the controller's MDTS) fails
/// with `EIO`: stage 14 sends them.
pub(crate) fn finish_whole<Z: Speedups>(
    mut request: InFlight<Z>,
    _: &QueuePair<InFlight<Z>>,
    cqe: Completion,
) {
    let status = io_error(cqe.status).map_err(to_errno);
    let result = if status.is_err() {
        status
    } else if request.done + request.piece < request.len {
        Err(EIO)
    } else {
        request.copy_out()
    };
    request.end(result);
}
// ANCHOR_END: finish_whole

impl<Z: Speedups> InFlight<Z> {
    /// For a Read through the bounce buffer: the data, to the request's
    /// pages. (The controller has written it: its completion came first.)
    #[inline]
    pub(crate) fn copy_out(&mut self) -> Result {
        if self.opcode != nvm_opc::READ || self.mapping.is_some() {
            return Ok(());
        }
        request::copy_from_dma(&self.rq, self.bounce.view().data())
    }

    // ANCHOR: end
    /// Ends the request with `result`. Its pages are unmapped and its
    /// buffer given back first: once it has ended, blk-mq may hand its tag
    /// to the next request at once.
    #[inline]
    pub(crate) fn end(self, result: Result) {
        let InFlight {
            rq,
            bounce,
            mapping,
            ..
        } = self;
        drop(mapping);
        drop(bounce);
        request::end(rq, result);
    }
    // ANCHOR_END: end
}

// ANCHOR: to_errno
/// The error a block request ends with, for a failed NVMe status.
pub(crate) fn to_errno(e: IoError) -> Error {
    match e {
        IoError::Target => EREMOTEIO,
        IoError::NoSpace => ENOSPC,
        IoError::NotSupported => EOPNOTSUPP,
        IoError::Medium => ENODATA,
        IoError::Io => EIO,
    }
}
// ANCHOR_END: to_errno

/// One hardware queue of the disk: an I/O queue and its tags' buffers.
struct HwQueue<Z: Speedups> {
    queue: Arc<QueuePair<InFlight<Z>>>,
    bounces: KVec<Arc<CmdBuffer>>,
}

/// What blk-mq hands back to `queue_rq`: everything a request needs.
pub(crate) struct Disk<Z: Speedups> {
    /// Hardware queue `i` is I/O queue `i + 1`.
    queues: KVec<HwQueue<Z>>,
    lba_shift: u32,
    max_piece: u32,
    speedups: Z,
    /// How its requests' commands complete (`create`'s `finish`).
    finish: Finish<Z>,
}

// ANCHOR: opcode_of
/// NVMe's opcode for a block request's operation (`request::op`): Read,
/// Write, Flush or (stage 20) Discard; anything else is not supported.
fn opcode_of(op: u32) -> Result<u8> {
    match op {
        bindings::req_op_REQ_OP_READ => Ok(nvm_opc::READ),
        bindings::req_op_REQ_OP_WRITE => Ok(nvm_opc::WRITE),
        bindings::req_op_REQ_OP_FLUSH => Ok(nvm_opc::FLUSH),
        bindings::req_op_REQ_OP_DISCARD => Ok(nvm_opc::DATASET_MANAGEMENT),
        _ => Err(EOPNOTSUPP),
    }
}
// ANCHOR_END: opcode_of

// ANCHOR: queue_rq
impl<Z: Speedups> Disk<Z> {
    /// Starts `rq` on the I/O queue of its hardware queue: the tag's
    /// bounce buffer claimed, the first command submitted, the doorbell
    /// rung if `ring`.
    fn queue_rq(&self, rq: ARef<Request<NvmeDisk<Z>>>, ring: bool) -> Result {
        let hw = self.queues.get(request::hw_queue(&rq)).ok_or(EIO)?;
        let tag = request::tag(&rq)?;
        // The previous request of the tag gave its buffer back before it
        // ended; if not (it cannot happen), blk-mq tries again later.
        let bounce = hw
            .bounces
            .get(usize::from(tag))
            .ok_or(EIO)?
            .claim()
            .ok_or(EBUSY)?;
        let opcode = opcode_of(request::op(&rq))?;
        let len = request::bytes(&rq);
        if len as usize > Z::BOUNCE_SIZE || len % (1 << self.lba_shift) != 0 {
            pr_err!("a {}-byte request does not fit the bounce buffer\n", len);
            return Err(EIO);
        }
        let lba = request::sector(&rq) >> (self.lba_shift - 9);
        let mut r = InFlight::new(self, rq, bounce, opcode, lba, len);
        let cmd = r.first_command(&self.speedups)?;
        // On an error the request is dropped here; blk-mq ends it with the
        // error (or, for EBUSY, queues it again later). (A `match`, not
        // `map_err`: one call fewer per request, chapter 21.)
        match hw.queue.issue_batched(tag, &cmd, r, ring) {
            Ok(()) => Ok(()),
            Err((e, _request)) => Err(e),
        }
    }
}
// ANCHOR_END: queue_rq

// ANCHOR: operations
/// The blk-mq operations of the disk.
pub(crate) struct NvmeDisk<Z>(PhantomData<Z>);

#[vtable]
impl<Z: Speedups> Operations for NvmeDisk<Z> {
    type QueueData = Arc<Disk<Z>>;

    /// `is_last`: no more requests follow at once. A stage that batches
    /// (`Speedups::BATCH`, stage 19) rings the doorbell only then, once for
    /// the batch, as the C driver does; stage 13 rings it for every one.
    fn queue_rq(disk: ArcBorrow<'_, Disk<Z>>, rq: ARef<Request<Self>>, is_last: bool) -> Result {
        disk.queue_rq(rq, is_last || !Z::BATCH)
    }

    /// blk-mq stopped a batch before its last request (which would have
    /// rung): ring what is left unrung. (It does not say which hardware
    /// queue: look at each.)
    fn commit_rqs(disk: ArcBorrow<'_, Disk<Z>>) {
        if Z::BATCH {
            for hw in &disk.queues {
                hw.queue.commit();
            }
        }
    }

    /// Not used: requests end in the queue's interrupt handler.
    fn complete(rq: ARef<Request<Self>>) {
        request::end(rq, Ok(()));
    }
}
// ANCHOR_END: operations

// ANCHOR: disk_id
/// Which `rnvmeXn1` names are taken, one bit per X.
static DISK_IDS: Atomic<u32> = Atomic::new(0);

/// A disk number, taken until dropped (as the C driver's IDA does).
struct DiskId(u32);

impl DiskId {
    fn claim() -> Result<DiskId> {
        let mut used = DISK_IDS.load(Relaxed);
        loop {
            let free = (!used).trailing_zeros();
            if free >= 32 {
                return Err(ENOSPC);
            }
            match DISK_IDS.cmpxchg(used, used | (1 << free), Relaxed) {
                Ok(_) => return Ok(DiskId(free)),
                Err(now) => used = now,
            }
        }
    }
}

impl Drop for DiskId {
    fn drop(&mut self) {
        let mut used = DISK_IDS.load(Relaxed);
        while let Err(now) = DISK_IDS.cmpxchg(used, used & !(1 << self.0), Relaxed) {
            used = now;
        }
    }
}
// ANCHOR_END: disk_id

// ANCHOR: send_disk
/// The disk, as driver data: deleted when dropped.
pub(crate) struct SendDisk<Z: Speedups> {
    /// Dropped first: `del_gendisk` waits for the requests in flight.
    disk: SendGenDisk<NvmeDisk<Z>>,
    id: DiskId,
}
// ANCHOR_END: send_disk

impl<Z: Speedups> SendDisk<Z> {
    /// Its number: the X of `rnvmeXn1`.
    pub(crate) fn number(&self) -> u32 {
        self.id.0
    }

    /// The disk itself, as the kernel shim holds it (stage 18 asks it
    /// whether it is open).
    #[allow(dead_code)]
    pub(crate) fn gen_disk(&self) -> &SendGenDisk<NvmeDisk<Z>> {
        &self.disk
    }

    /// Its tag set: the way to its request queue (stage 19 uses it).
    #[allow(dead_code)]
    pub(crate) fn tag_set(&self) -> &Arc<TagSet<NvmeDisk<Z>>> {
        self.disk.tag_set()
    }
}

// ANCHOR: delete
/// Unbind's first step: deletes the disk, if it is still there, and says
/// so. `del_gendisk` waits for the requests in flight, which need the I/O
/// queues and their interrupts to end: they go after it.
pub(crate) fn delete<Z: Speedups>(dev: &Device, disk: &Mutex<Option<SendDisk<Z>>>) {
    let disk = disk.lock().take();
    if let Some(disk) = disk {
        let number = disk.number();
        drop(disk);
        dev_info!(dev, "disk rnvme{}n1 deleted\n", number);
    }
}
// ANCHOR_END: delete

// ANCHOR: create
/// Creates `rnvmeXn1` over namespace 1, with one hardware queue per I/O
/// queue, `speedups` (stage 13: `Bounced`) and the way its requests' commands
/// complete, `finish` (stage 13: `finish_whole`). `extra_blocks` claims
/// that many blocks more than the namespace has (for the test: reads there
/// fail on the controller).
pub(crate) fn create<Z: Speedups>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    io: &[IoQueue<InFlight<Z>>],
    id: &IdCtrl,
    speedups: Z,
    finish: Finish<Z>,
    extra_blocks: u64,
) -> Result<SendDisk<Z>> {
    let ns = ctrl.identify_namespace(pdev, NSID)?;
    let block = ns.block_size().ok_or(EIO)?;
    GenDiskBuilder::validate_block_size(block)?;
    let lba_shift = block.trailing_zeros();
    // MDTS: what one command may carry; the bounce buffer is the limit
    // otherwise.
    let max_piece = id
        .max_transfer(ctrl.cap().min_page_size())
        .map_or(Z::BOUNCE_SIZE, |m| m.min(Z::BOUNCE_SIZE)) as u32;

    let tags = io.first().ok_or(ENODEV)?.queue.depth() - 1;
    let mut queues = KVec::with_capacity(io.len(), GFP_KERNEL)?;
    for q in io {
        let mut bounces = KVec::with_capacity(tags.into(), GFP_KERNEL)?;
        for _ in 0..tags {
            bounces.push(bounce::<Z>(pdev)?, GFP_KERNEL)?;
        }
        queues.push(
            HwQueue {
                queue: q.queue.clone(),
                bounces,
            },
            GFP_KERNEL,
        )?;
    }
    let disk = Arc::new(
        Disk {
            queues,
            lba_shift,
            max_piece,
            speedups,
            finish,
        },
        GFP_KERNEL,
    )?;

    if !disk.speedups.write_cache() {
        write_through(pdev, ctrl.admin());
    }
    let number = DiskId::claim()?;
    let tagset = Arc::pin_init(
        TagSet::new(u32::try_from(io.len())?, tags.into(), 1),
        GFP_KERNEL,
    )?;
    let blocks = ns.nsze + extra_blocks;
    let gendisk = GenDiskBuilder::new()
        .capacity_sectors(blocks << (lba_shift - 9))
        .logical_block_size(block)?
        .physical_block_size(block)?
        .rotational(false)
        .build(fmt!("rnvme{}n1", number.0), tagset.clone(), disk)?;
    dev_info!(
        pdev,
        "disk rnvme{}n1: {} blocks of {} bytes, {} hardware queues of {} tags, at most {} bytes per command\n",
        number.0,
        blocks,
        block,
        io.len(),
        tags,
        max_piece
    );
    Ok(SendDisk {
        disk: SendGenDisk::new(gendisk, tagset),
        id: number,
    })
}
// ANCHOR_END: create

// ANCHOR: write_through
/// Turns the controller's volatile write cache off, if it has one.
///
/// 7.3's `GenDiskBuilder` cannot tell the block layer that the disk caches
/// writes (`BLK_FEAT_WRITE_CACHE`), so the block layer never sends a Flush
/// and drops FUA: `fsync` would return while the data sits in a cache a
/// power cut loses. Write-through, a completed Write is on the media.
fn write_through(pdev: &pci::Device<Core<'_>>, admin: &AdminQueue) {
    let cmd = Command::set_features(feature::VOLATILE_WRITE_CACHE, 0);
    match admin.submit(pdev.as_ref(), &cmd, ADMIN_TIMEOUT) {
        Ok(_) => dev_info!(
            pdev,
            "volatile write cache off: every completed Write is on the media\n"
        ),
        // A controller without one says Invalid Field: nothing to do.
        Err(_) => dev_info!(pdev, "no volatile write cache to turn off\n"),
    }
}
// ANCHOR_END: write_through
