// SPDX-License-Identifier: GPL-2.0

//! The disk: a blk-mq tag set with one hardware queue per I/O queue, a
//! `GenDisk` named `rnvmeXn1`, and the path of a request, from `queue_rq`
//! (a Read, Write or Flush on the queue of the submitting CPU) to its end
//! in the queue's interrupt handler.
//!
//! Data goes through a bounce buffer per tag: one piece of DMA memory,
//! contiguous, whose PRP list is built once per command. The request's own
//! pages are copied in (Write) or out (Read). Stage 10 maps them for DMA
//! instead.

use kernel::{
    bindings,
    block::mq::{
        gen_disk::{
            GenDisk,
            GenDiskBuilder, //
        },
        Operations,
        Request,
        TagSet, //
    },
    device::Core,
    dma::Coherent,
    pci,
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        ArcBorrow, //
    }, //
};

use crate::{
    io_queues::{
        IoQueue,
        IO_DEPTH, //
    },
    nvme::{
        command::{
            feature,
            nvm_opc,
            Command,
            Completion, //
        },
        ctrl::Controller,
        identify::IdCtrl,
        io_command::{
            flush,
            io_error,
            next_chunk,
            read_write,
            IoError, //
        },
        prp,
        queue::{
            AdminQueue,
            Pending,
            QueuePair,
            ADMIN_TIMEOUT, //
        }, //
    },
    request, //
};

/// The namespace the disk shows.
const NSID: u32 = 1;
/// The memory page size the driver uses (CC.MPS): 4 KiB.
const PAGE: u32 = 4096;
/// Requests in flight per hardware queue: one less than the queue's
/// entries, so a submission queue is never full when `queue_rq` comes.
const TAGS: u16 = IO_DEPTH - 1;

// ANCHOR: bounce
/// Bytes per bounce buffer: the largest request blk-mq sends with its
/// default limits (255 sectors; the 7.3 `GenDiskBuilder` cannot raise
/// them), rounded up to whole pages.
const BOUNCE_SIZE: usize = 128 * 1024;

/// What each tag owns for the life of the disk.
pub(crate) struct Bounce {
    /// The data of the tag's request, as the controller reads or writes it.
    data: Coherent<[u8]>,
    /// The PRP list of the piece of it in flight.
    list: Coherent<[u64]>,
}

impl Bounce {
    fn new(pdev: &pci::Device<Core<'_>>) -> Result<Arc<Bounce>> {
        let entries = prp::list_entries_for(BOUNCE_SIZE as u32, PAGE);
        Ok(Arc::new(
            Bounce {
                data: Coherent::zeroed_slice(pdev.as_ref(), BOUNCE_SIZE, GFP_KERNEL)?,
                list: Coherent::zeroed_slice(pdev.as_ref(), entries.max(1), GFP_KERNEL)?,
            },
            GFP_KERNEL,
        )?)
    }
}
// ANCHOR_END: bounce

// ANCHOR: in_flight
/// A block request whose command is in flight on an I/O queue. A transfer
/// larger than the controller takes in one command (MDTS) goes in pieces,
/// one after the other, under the same tag.
pub(crate) struct InFlight {
    rq: ARef<Request<NvmeDisk>>,
    bounce: Arc<Bounce>,
    /// Read, Write or Flush.
    opcode: u8,
    /// The request's first logical block.
    lba: u64,
    /// log2 of the logical block size.
    lba_shift: u32,
    /// Force Unit Access.
    fua: bool,
    /// Bytes of the whole request.
    len: u32,
    /// Bytes done by the pieces before the one in flight.
    done: u32,
    /// Bytes of the piece in flight.
    piece: u32,
    /// Bytes one command may carry.
    max_piece: u32,
}
// ANCHOR_END: in_flight

impl InFlight {
    // ANCHOR: next_command
    /// The command for the next piece of the transfer, with its PRP list
    /// written; `None` when all of it is done.
    fn next_command(&mut self) -> Result<Option<Command>> {
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
        // SAFETY: The tag's list is this request's: no command of the tag
        // is in flight while its next one is built.
        let list = unsafe { self.bounce.list.as_mut() };
        let prps = prp::describe(
            self.bounce.data.dma_address() + u64::from(self.done),
            n,
            PAGE,
            list,
            self.bounce.list.dma_address(),
        )
        .map_err(|_| EINVAL)?;
        let lba = self.lba + u64::from(self.done >> self.lba_shift);
        let cmd = read_write(self.opcode, NSID, lba, n >> self.lba_shift, self.fua, prps)
            .ok_or(EINVAL)?;
        self.piece = n;
        Ok(Some(cmd))
    }
    // ANCHOR_END: next_command
}

// ANCHOR: pending
impl Pending for InFlight {
    // ANCHOR: finish
    /// Called by the queue's interrupt handler with the completion of the
    /// piece in flight: sends the next piece, or ends the request (with
    /// the data copied out, for a Read), or fails it.
    fn finish(self, queue: &QueuePair<Self>, cqe: Completion) {
        // TODO (exercise 3): on a failed status (`io_error`), end the request
        // with the matching error (`to_errno`), and log it; on success, count
        // the piece as done, then issue the next piece's command on `queue`
        // (same identifier), or, when there is none, copy a Read's data out
        // (`copy_out`) and end the request (`request::end`). Every request must
        // end exactly once, or `del_gendisk` waits forever.
        // Tests: "the host's pattern reads back bit for bit (4 KiB reads)" and
        // the data checks after it; a failed status: "a read past the
        // namespace's end fails in user space ..." and "rnvme logs the
        // controller's status: ...".
        let _ = (queue, cqe, io_error, to_errno, InFlight::copy_out);
        request::end(self.rq, Err(ENOSYS));
    }
    // ANCHOR_END: finish
}
// ANCHOR_END: pending

impl InFlight {
    /// For a Read: the data, from the bounce buffer to the request's pages.
    fn copy_out(&self) -> Result {
        if self.opcode != nvm_opc::READ {
            return Ok(());
        }
        let data = &self.bounce.data;
        // SAFETY: The controller has written the buffer (its completion came
        // before), and no other command of the tag is in flight.
        unsafe { request::copy_from_buffer(&self.rq, data.as_ptr().cast(), data.len()) }
    }
}

/// The error a block request ends with, for a failed NVMe status.
fn to_errno(e: IoError) -> Error {
    match e {
        IoError::Target => EREMOTEIO,
        IoError::NoSpace => ENOSPC,
        IoError::NotSupported => EOPNOTSUPP,
        IoError::Medium => ENODATA,
        IoError::Io => EIO,
    }
}

/// One hardware queue of the disk: an I/O queue and its tags' buffers.
struct HwQueue {
    queue: Arc<QueuePair<InFlight>>,
    bounces: KVec<Arc<Bounce>>,
}

/// What blk-mq hands back to `queue_rq`: everything a request needs.
pub(crate) struct Disk {
    /// Hardware queue `i` is I/O queue `i + 1`.
    queues: KVec<HwQueue>,
    lba_shift: u32,
    max_piece: u32,
}

// ANCHOR: queue_rq
impl Disk {
    /// Starts `rq` on the I/O queue of its hardware queue: its data into
    /// the tag's bounce buffer (for a Write), its first command submitted.
    fn queue_rq(&self, rq: ARef<Request<NvmeDisk>>) -> Result {
        // TODO (exercise 2): start the request:
        // - its hardware queue (`request::hw_queue`) picks the `HwQueue`,
        //   its tag (`request::tag`) the bounce buffer (and is the command
        //   identifier);
        // - its operation (`request::op`: `bindings::req_op_REQ_OP_READ`,
        //   `_WRITE`, `_FLUSH`) the opcode; anything else is EOPNOTSUPP;
        // - its length (`request::bytes`) must fit the bounce buffer and be
        //   whole blocks; a Write's data goes into the buffer first
        //   (`request::copy_to_buffer`);
        // - an `InFlight` with the first block (`request::sector` is in
        //   512-byte units), then `next_command` and `HwQueue::queue.issue`.
        // Tests: "the host's pattern reads back bit for bit (4 KiB reads)" and
        // the data checks after it (1 MiB reads, fio, mkfs.ext4, the MDTS
        // split, fault=3), and "I/O queue Q carried the I/O of its CPU".
        let _ = (
            rq,
            self.lba_shift,
            self.max_piece,
            bindings::req_op_REQ_OP_READ,
            nvm_opc::WRITE,
        );
        let _ = self.queues.first().map(|hw| (&hw.queue, &hw.bounces));
        let _ = (
            request::op::<NvmeDisk>,
            request::bytes::<NvmeDisk>,
            request::sector::<NvmeDisk>,
        );
        let _ = (
            request::tag::<NvmeDisk>,
            request::hw_queue::<NvmeDisk>,
            request::is_fua::<NvmeDisk>,
        );
        let _ = (
            request::copy_to_buffer::<NvmeDisk>,
            InFlight::next_command,
            QueuePair::<InFlight>::issue,
        );
        Err(ENOSYS)
    }
}
// ANCHOR_END: queue_rq

// ANCHOR: operations
/// The blk-mq operations of the disk.
pub(crate) struct NvmeDisk;

#[vtable]
impl Operations for NvmeDisk {
    type QueueData = Arc<Disk>;

    fn queue_rq(disk: ArcBorrow<'_, Disk>, rq: ARef<Request<Self>>, _is_last: bool) -> Result {
        disk.queue_rq(rq)
    }

    /// Nothing to commit: `queue_rq` rings the doorbell for every request.
    fn commit_rqs(_disk: ArcBorrow<'_, Disk>) {}

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
/// The disk, as driver data.
///
/// `GenDisk` is `Send` only if its `Arc<TagSet>` is, and `TagSet` (an
/// `Opaque` C struct) is neither `Send` nor `Sync` in 7.3, while the driver
/// data of a PCI driver must be `Send`.
pub(crate) struct SendDisk {
    /// Dropped first: `del_gendisk` waits for the requests in flight.
    _disk: GenDisk<NvmeDisk>,
    id: DiskId,
    /// The disk's tag set (the disk holds it too): the way to the disk's
    /// request queue, which stage 10 needs when it is unbound while open.
    pub(crate) _tag_set: Arc<TagSet<NvmeDisk>>,
}

// SAFETY: The tag set is a C `blk_mq_tag_set`, which blk-mq uses from any
// CPU under its own locking; the driver never touches it after `create`,
// and dropping the disk (`del_gendisk`, `put_disk`) may run on any thread.
unsafe impl Send for SendDisk {}
// ANCHOR_END: send_disk

impl SendDisk {
    /// Its number: the X of `rnvmeXn1`.
    pub(crate) fn number(&self) -> u32 {
        self.id.0
    }
}

// ANCHOR: create
/// Creates `rnvmeXn1` over namespace 1, with one hardware queue per I/O
/// queue. `extra_blocks` claims that many blocks more than the namespace
/// has (for the test: reads there fail on the controller).
pub(crate) fn create(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    io: &[IoQueue<InFlight>],
    id: &IdCtrl,
    extra_blocks: u64,
) -> Result<SendDisk> {
    let ns = ctrl.identify_namespace(pdev, NSID)?;
    let block = ns.block_size().ok_or(EIO)?;
    GenDiskBuilder::validate_block_size(block)?;
    let lba_shift = block.trailing_zeros();
    // MDTS: what one command may carry; the bounce buffer is the limit
    // otherwise.
    let max_piece = id
        .max_transfer(ctrl.cap().min_page_size())
        .map_or(BOUNCE_SIZE, |m| m.min(BOUNCE_SIZE)) as u32;

    let mut queues = KVec::with_capacity(io.len(), GFP_KERNEL)?;
    for q in io {
        let mut bounces = KVec::with_capacity(TAGS.into(), GFP_KERNEL)?;
        for _ in 0..TAGS {
            bounces.push(Bounce::new(pdev)?, GFP_KERNEL)?;
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
        },
        GFP_KERNEL,
    )?;

    write_through(pdev, ctrl.admin());
    let number = DiskId::claim()?;
    let tagset = Arc::pin_init(
        TagSet::new(u32::try_from(io.len())?, TAGS.into(), 1),
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
        TAGS,
        max_piece
    );
    Ok(SendDisk {
        _disk: gendisk,
        id: number,
        _tag_set: tagset,
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

