// SPDX-License-Identifier: GPL-2.0

//! What stage 20's driver pays that the C driver does not, removed: the
//! queue depth (31 requests in flight per queue, against C's 1023), a
//! doorbell register write per request where C writes one per batch that
//! finds the controller asleep (shadow doorbells), and a 512 KiB bounce
//! buffer per tag, which a deeper queue cannot afford.
//!
//! The library does the rest: its queue pair takes up to 1024 entries (the
//! finished requests are a list, no longer a 64-bit map) and hands its
//! interrupt handler the first of them in the reap's lock round trip; its
//! `doorbell_buffer` writes the shadow doorbells and asks this stage's
//! `need_event` (`event_index.rs`) whether the register must be written
//! too.

use kernel::{
    block::mq::{
        Operations,
        Request, //
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
        Arc, //
    }, //
};

use crate::{
    disk::{
        NvmeDisk,
        Speedups,
        Transfer, //
    },
    disk_limits::{
        FullDisk,
        MAX_REQUEST, //
    },
    event_index::need_event,
    io_queues::IoQueue,
    kshim::{
        dma_piece::DmaPiece,
        request, //
    },
    nvme::{
        cap::Cap,
        cmd_buffer::{
            Claim,
            CmdBuffer,
            View, //
        },
        command::{
            nvm_opc,
            Command, //
        },
        ctrl::Controller,
        doorbell_buffer::{
            DoorbellBuffer,
            OACS_DBBUF, //
        },
        identify::IdCtrl,
        prp::{
            self,
            Prps, //
        },
        queue::{
            Pending,
            ADMIN_TIMEOUT,
            MAX_DEPTH, //
        }, //
    }, //
};

/// The memory page size the driver uses (CC.MPS).
const PAGE: usize = 4096;
/// Bounce buffers of `MAX_REQUEST` per hardware queue, for the requests
/// whose pages cannot be mapped (or all of them, with `zero_copy=0`): as
/// many as the benchmark's 128 KiB reads keep in flight (8), twice.
pub(crate) const POOL: usize = 16;

// ANCHOR: queue_depth
/// Entries of each I/O queue for a controller whose capabilities are
/// `cap`: as many as it takes, at most the library's `MAX_DEPTH` (1024,
/// the C driver's `io_queue_depth`).
pub(crate) fn queue_depth(cap: &Cap) -> u16 {
    // TODO (exercise 2): Return the entries of each I/O queue. The
    // contract:
    // - as many as the controller takes: CAP.MQES (`cap.mqes`) is 0's
    //   based, `Cap::max_queue_entries` adds the one;
    // - at most `MAX_DEPTH` (1024): the most the library's queue pair
    //   takes (`QueuePair::new` refuses more: the probe fails), and the C
    //   driver's default `io_queue_depth`.
    // Why could stage 20 not go past 64 entries, and what replaced the
    // limit in `queue.rs`? (The chapter asks, and answers.)
    // Tests: "the I/O queues have 1024 entries" and "the disk takes 1023
    // requests per hardware queue".
    let _ = (cap.max_queue_entries(), MAX_DEPTH);
    crate::io_queues::IO_DEPTH
}
// ANCHOR_END: queue_depth

// ANCHOR: shadow_doorbells
/// Shadow doorbells for the I/O queues `io`, if the controller offers them
/// (`id`'s OACS bit 8): the two pages, Doorbell Buffer Config sent, and
/// each I/O queue told to use them. Called while no command is in flight on
/// an I/O queue (the disk does not exist yet). Returns how many queues use
/// them (0: the controller offers none, or refused).
pub(crate) fn shadow_doorbells<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    id: &IdCtrl,
    io: &[IoQueue<P>],
) -> Result<usize> {
    // TODO (exercise 2): Turn shadow doorbells on for the I/O queues. The
    // contract:
    // - only if the controller offers them: Identify Controller's OACS
    //   (`id.oacs`) has bit 8 (`OACS_DBBUF`); else log "no shadow
    //   doorbells: the controller does not offer them" and return 0;
    // - the two pages: `DoorbellBuffer::new(pdev.as_ref(), need_event)`
    //   (your answer to exercise 1 decides for every doorbell);
    // - Doorbell Buffer Config (`DoorbellBuffer::command`: PRP1 the shadow
    //   doorbells, PRP2 the event indices) on the admin queue, waiting at
    //   most ADMIN_TIMEOUT; if it fails, the driver goes on without:
    //   `dev_warn!` and return 0;
    // - then every I/O queue of `io` uses them (`QueuePair::use_shadow`),
    //   the admin queue does not; log "shadow doorbells on for N I/O
    //   queues" (`dev_info!`) and return N.
    // Why must no command be in flight on an I/O queue meanwhile? (QEMU
    // reads a tail from the shadow page as soon as the buffer is
    // configured.)
    // Tests: "shadow doorbells on for every I/O queue", "fewer SQ doorbell
    // register writes than half the I/Os" and "the driver's count".
    let _ = (pdev, ctrl, id, io, OACS_DBBUF, ADMIN_TIMEOUT);
    let _ = (DoorbellBuffer::new, DoorbellBuffer::command, need_event);
    Err(ENOSYS)
}
// ANCHOR_END: shadow_doorbells

// ANCHOR: speed_disk
/// Stage 20's disk, with tags that own a page each (the PRP list, the SGL
/// segment, and the data of a Dataset Management or of a request of a
/// page at most through a bounce buffer), and a pool of larger bounce
/// buffers per hardware queue.
pub(crate) struct SpeedDisk {
    full: FullDisk,
    /// Per hardware queue, its bounce buffers of `MAX_REQUEST`.
    pools: KVec<KVec<Arc<CmdBuffer>>>,
    /// The device, if zero copy is on: a request of one piece is then
    /// mapped in one call ([`SpeedDisk::map_one`]).
    one_piece: Option<ARef<Device>>,
    /// Requests mapped that way (said at unload, for the test).
    mapped_whole: Atomic<u64>,
}
// ANCHOR_END: speed_disk

impl SpeedDisk {
    /// `full`, with a pool for each of `queues` hardware queues; requests of
    /// one piece mapped in one call if `one_piece` (zero copy is on).
    pub(crate) fn new(
        pdev: &pci::Device<Core<'_>>,
        full: FullDisk,
        queues: usize,
        one_piece: bool,
    ) -> Result<Self> {
        let entries = prp::list_entries_for(MAX_REQUEST as u32, PAGE as u32);
        let mut pools = KVec::with_capacity(queues, GFP_KERNEL)?;
        for _ in 0..queues {
            let mut pool = KVec::with_capacity(POOL, GFP_KERNEL)?;
            for _ in 0..POOL {
                pool.push(
                    CmdBuffer::new(pdev.as_ref(), MAX_REQUEST, entries, 0)?,
                    GFP_KERNEL,
                )?;
            }
            pools.push(pool, GFP_KERNEL)?;
        }
        Ok(SpeedDisk {
            full,
            pools,
            one_piece: one_piece.then(|| ARef::from(&**pdev.as_ref())),
            mapped_whole: Atomic::new(0),
        })
    }

    // ANCHOR: map_one
    /// C's simple path: a request whose data is one contiguous piece that
    /// ends within the second page from where it starts (a 4 KiB request,
    /// aligned or not) is mapped in one call, and two PRPs describe it: the
    /// piece, and the start of its second page if it reaches one. No walk
    /// page by page, no list, nothing recorded but the one mapping.
    #[inline]
    fn map_one<T: Operations>(
        &self,
        rq: &Request<T>,
        t: Transfer,
    ) -> Option<(OneOrMore, Prps, bool)> {
        let dev = self.one_piece.as_deref()?;
        if t.opcode == nvm_opc::FLUSH || t.len > t.max_piece {
            return None;
        }
        let piece = DmaPiece::map(dev, rq, t.opcode == nvm_opc::WRITE, 2 * PAGE)?;
        if piece.len() != t.len {
            return None;
        }
        // One or two pages: the PRPs need no list (stage 12's `describe`,
        // given no room for one, refuses a longer piece).
        let prps = prp::describe(piece.address(), piece.len(), PAGE as u32, &mut [], 0).ok()?;
        self.mapped_whole.fetch_add(1, Relaxed);
        Some((OneOrMore::One(piece), prps, false))
    }
    // ANCHOR_END: map_one
}

/// A request's pages mapped for the controller: in one piece (stage 21's
/// [`SpeedDisk::map_one`]), or piece by piece (stage 19's `Mapping`).
/// Either unmaps when dropped: held for that alone.
#[expect(dead_code, reason = "held until the request ends, to be dropped")]
pub(crate) enum OneOrMore {
    One(DmaPiece),
    More(<FullDisk as Speedups>::Mapping),
}

impl Speedups for SpeedDisk {
    type Mapping = OneOrMore;
    const SGL_ENTRIES: usize = FullDisk::SGL_ENTRIES;
    const BOUNCE_SIZE: usize = MAX_REQUEST;
    const BATCH: bool = FullDisk::BATCH;
    const TAG_BYTES: usize = PAGE;

    #[inline]
    fn map<T: Operations>(
        &self,
        rq: &Request<T>,
        transfer: Transfer,
        view: &mut View<'_>,
    ) -> Option<(Self::Mapping, Prps, bool)> {
        if let Some(one) = self.map_one(rq, transfer) {
            self.full.count(rq, transfer);
            return Some(one);
        }
        let (more, prps, sgl) = self.full.map(rq, transfer, view)?;
        Some((OneOrMore::More(more), prps, sgl))
    }

    // ANCHOR: large_bounce
    fn large_bounce<T: Operations>(&self, rq: &Request<T>) -> Option<Claim> {
        // The request's own hardware queue: a buffer it gives back ends a
        // request of that queue, and that is when blk-mq runs it again.
        let pool = self.pools.get(request::hw_queue(rq))?;
        pool.iter().find_map(|b| b.claim())
    }
    // ANCHOR_END: large_bounce

    fn write_cache(&self) -> bool {
        self.full.write_cache()
    }

    fn discard(
        &self,
        rq: &Request<NvmeDisk<Self>>,
        block_shift: u32,
        tag_page: &mut View<'_>,
    ) -> Result<Command> {
        self.full.discard_of(rq, block_shift, tag_page)
    }
}

impl Drop for SpeedDisk {
    fn drop(&mut self) {
        pr_info!(
            "{} requests mapped in one piece\n",
            self.mapped_whole.load(Relaxed)
        );
    }
}
