// SPDX-License-Identifier: GPL-2.0

//! The disk a user sees: as large requests as the controller takes, its
//! volatile write cache kept on (and `fsync` reaching it as a Flush),
//! discards as Dataset Management, and the disk under its controller in
//! sysfs.
//!
//! Stage 19's disk had the block layer's default limits (255 sectors a
//! request), the controller's write cache turned off, no discard, and sat
//! in `/sys/devices/virtual/block`. The limits come from Identify
//! Controller here ([`limits`], set by the kernel shim's `queue_limits`),
//! and the disk's `Speedups` ([`FullDisk`]: stage 19's zero copy, and what
//! this stage adds) keeps the cache and turns discards into commands
//! ([`dsm`]).

use kernel::{
    block::mq::{
        Operations,
        Request, //
    },
    device::Core,
    pci,
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

use crate::{
    disk::{
        NvmeDisk,
        SendDisk,
        Speedups,
        Transfer,
        NSID, //
    },
    dma_map::{
        ZeroCopy,
        MAX_PIECES, //
    },
    kshim::{
        queue_limits::{
            self,
            Limits, //
        },
        request, //
    },
    nvme::{
        cmd_buffer::View,
        command::{
            nvm_opc,
            Command, //
        },
        identify::{
            IdCtrl,
            IdNs, //
        },
        prp::Prps, //
    },
};

/// The memory page size the driver uses (CC.MPS): one PRP entry per page.
const PAGE: usize = 4096;
/// The largest request: QEMU's MDTS (7: 4 KiB << 7), and the size of each
/// tag's bounce buffer, which must hold any request when zero copy cannot
/// map it (or `zero_copy=0`).
pub(crate) const MAX_REQUEST: usize = 512 * 1024;
// Stage 19's zero copy maps a request in page pieces: a request of
// MAX_REQUEST starting mid-page has one piece more than its pages.
const _: () = assert!(MAX_REQUEST / PAGE < MAX_PIECES);

// ANCHOR: dsm_consts
/// Ranges in one Dataset Management: what a 4 KiB page holds (16 bytes
/// each; C: `NVME_DSM_MAX_RANGES`).
pub(crate) const DSM_MAX_RANGES: usize = 256;
/// Bytes of a range (NVMe 1.4, figure 364): Context Attributes (bytes
/// 3:0), Length in logical blocks (7:4), Starting LBA (15:8).
const DSM_RANGE_SIZE: usize = 16;
/// Dataset Management's Attribute - Deallocate (CDW11 bit 2): the ranges'
/// blocks are deallocated (not just described).
const DSM_AD: u32 = 1 << 2;
// ANCHOR_END: dsm_consts

// ANCHOR: limits
/// The limits of the disk of a controller with Identify Controller `id`,
/// whose minimum memory page size (CAP.MPSMIN, MDTS's unit) is
/// `min_page_size`, and whose blocks are `block` bytes.
pub(crate) fn limits(id: &IdCtrl, min_page_size: usize, block: u32) -> Limits {
    // MDTS is a power of two of minimum pages, 0 for no limit; the bounce
    // buffers hold MAX_REQUEST (as `disk::create` computes `max_piece`).
    let max = id
        .max_transfer(min_page_size)
        .map_or(MAX_REQUEST, |m| m.min(MAX_REQUEST));
    let discard = id.supports_dsm();
    Limits {
        max_hw_sectors: (max >> 9) as u32,
        // One PRP entry per page, and a first piece that may start mid-page
        // (C: `nvme_max_drv_segments`).
        max_segments: (max / PAGE + 1) as u16,
        // PRPs: every piece but the first starts at a page, every piece
        // but the last ends at one; the block layer splits requests so.
        virt_boundary_mask: (PAGE - 1) as u64,
        // PRP offsets are dword aligned.
        dma_alignment: 3,
        write_cache: id.has_write_cache(),
        // A discard is one Dataset Management of up to a page of ranges,
        // each up to 2^32 blocks (C: `UINT_MAX` sectors).
        max_discard_sectors: if discard { u32::MAX } else { 0 },
        max_discard_segments: if discard { DSM_MAX_RANGES as u16 } else { 1 },
        discard_granularity: block,
    }
}
// ANCHOR_END: limits

// ANCHOR: set_up
/// Sets the limits on `disk` (`limits`, from Identify Controller `id`, the
/// minimum memory page size `min_page_size` and the block size `block`),
/// moves the disk under its controller in sysfs, and says so.
pub(crate) fn set_up<Z: Speedups>(
    pdev: &pci::Device<Core<'_>>,
    disk: &SendDisk<Z>,
    id: &IdCtrl,
    min_page_size: usize,
    block: u32,
) -> Result {
    let limits = limits(id, min_page_size, block);
    queue_limits::apply(disk.gen_disk(), &limits)?;
    queue_limits::set_parent(disk.gen_disk(), pdev.as_ref())?;
    dev_info!(
        pdev,
        "disk rnvme{}n1 limits: {} KiB per request, {} segments, write cache {}, {} discard ranges per command\n",
        disk.number(),
        limits.max_hw_sectors / 2,
        limits.max_segments,
        if limits.write_cache { "on" } else { "off" },
        if limits.max_discard_sectors > 0 {
            limits.max_discard_segments
        } else {
            0
        }
    );
    Ok(())
}
// ANCHOR_END: set_up

// ANCHOR: dsm
/// Dataset Management for the discard `rq`, on a namespace with blocks of
/// `1 << lba_shift` bytes: one range per bio of the request, written into
/// the tag's buffer (`view`'s data, a page), and the command that points
/// there; and how many ranges it holds.
pub(crate) fn dsm<T: Operations>(
    rq: &Request<T>,
    lba_shift: u32,
    view: &mut View<'_>,
) -> Result<(Command, usize)> {
    // TODO (exercise 1): Build the Dataset Management that deallocates the
    // blocks of the discard `rq`, and return it with its number of ranges.
    // The contract:
    // - One range per bio of the request (`request::for_each_discard_range`
    //   gives each one's first 512-byte sector and its length in bytes), in
    //   order, at most DSM_MAX_RANGES (more: `EIO`; none: `EIO`).
    // - Range i is DSM_RANGE_SIZE bytes at byte `i * DSM_RANGE_SIZE` of the
    //   tag's buffer (`View::write`), little-endian: Context Attributes 0
    //   (bytes 3:0), the length in logical blocks of `1 << lba_shift`
    //   bytes (7:4), the starting logical block (15:8). Which of the two
    //   counts is 0's based, and which unit is each in?
    // - The command: opcode `nvm_opc::DATASET_MANAGEMENT`, namespace NSID,
    //   PRP1 the buffer (`View::data_address`; the ranges fit its first
    //   page), PRP2 0; CDW10 the Number of Ranges, 0's based; CDW11 the
    //   Attribute - Deallocate (DSM_AD).
    // Tests: "it is one Dataset Management (1 range, Deallocate) of blocks
    // 40960 to 43007", "the discarded blocks read back as zeroes", "three
    // files removed together: one Dataset Management of ... ranges",
    // "fstrim on the ext4", "the files kept are intact after the discards"
    // and "Flushes, FUA writes and discards sent".
    let _ = (
        rq,
        lba_shift,
        view,
        DSM_AD,
        DSM_RANGE_SIZE,
        DSM_MAX_RANGES,
        NSID,
    );
    let _ = (View::data_address, View::write);
    let _ = |f: fn(u64, u32) -> Result| request::for_each_discard_range(rq, f);
    let _ = nvm_opc::DATASET_MANAGEMENT;
    Err(ENOSYS)
}
// ANCHOR_END: dsm

// ANCHOR: full_disk
/// Stage 19's zero copy, and what this stage adds: the write cache kept,
/// discards, and what they did.
pub(crate) struct FullDisk {
    zero_copy: ZeroCopy,
    /// Whether the controller has a volatile write cache (kept on).
    write_cache: bool,
    /// Flushes and FUA writes sent, Dataset Managements and their ranges.
    flushes: Atomic<u64>,
    fua_writes: Atomic<u64>,
    discards: Atomic<u64>,
    ranges: Atomic<u64>,
}

impl FullDisk {
    /// `zero_copy`, and what Identify Controller and Namespace say of the
    /// write cache and discards (said in the log for the test).
    pub(crate) fn new(
        pdev: &pci::Device<Core<'_>>,
        zero_copy: ZeroCopy,
        id: &IdCtrl,
        ns: &IdNs,
    ) -> Self {
        let cache = if id.has_write_cache() {
            "a volatile write cache (kept on: fsync flushes it)"
        } else {
            "no volatile write cache"
        };
        // DLFEAT bits 2:0: what a deallocated block reads as.
        let reads = match ns.dlfeat & 0b111 {
            0b001 => "zeroes",
            0b010 => "ones",
            _ => "anything",
        };
        if id.supports_dsm() {
            dev_info!(
                pdev,
                "the controller has {}, and deallocates (a discarded block reads as {})\n",
                cache,
                reads
            );
        } else {
            dev_info!(pdev, "the controller has {}, and no discard\n", cache);
        }
        FullDisk {
            zero_copy,
            write_cache: id.has_write_cache(),
            flushes: Atomic::new(0),
            fua_writes: Atomic::new(0),
            discards: Atomic::new(0),
            ranges: Atomic::new(0),
        }
    }
}

impl Speedups for FullDisk {
    type Mapping = <ZeroCopy as Speedups>::Mapping;
    const SGL_ENTRIES: usize = ZeroCopy::SGL_ENTRIES;
    const BATCH: bool = ZeroCopy::BATCH;
    const BOUNCE_SIZE: usize = MAX_REQUEST;

    fn map<T: Operations>(
        &self,
        rq: &Request<T>,
        t: Transfer,
        view: &mut View<'_>,
    ) -> Option<(Self::Mapping, Prps, bool)> {
        self.count(rq, t);
        self.zero_copy.map(rq, t, view)
    }

    fn write_cache(&self) -> bool {
        self.write_cache
    }

    fn discard(
        &self,
        rq: &Request<NvmeDisk<Self>>,
        lba_shift: u32,
        view: &mut View<'_>,
    ) -> Result<Command> {
        self.discard_of(rq, lba_shift, view)
    }
}
// ANCHOR_END: full_disk

impl FullDisk {
    /// Counts a Flush or a FUA Write (said at unload): `map` counts those it
    /// sees, and a disk that builds on this one and maps some requests its
    /// own way (the speed stage's) counts those.
    pub(crate) fn count<T: Operations>(&self, rq: &Request<T>, t: Transfer) {
        if t.opcode == nvm_opc::FLUSH {
            self.flushes.fetch_add(1, Relaxed);
        } else if t.opcode == nvm_opc::WRITE && request::is_fua(rq) {
            self.fua_writes.fetch_add(1, Relaxed);
        }
    }

    /// `Speedups::discard` for a disk of any `Speedups` that builds on this
    /// one (the speed stage's): the command, with the ranges counted.
    pub(crate) fn discard_of<T: Operations>(
        &self,
        rq: &Request<T>,
        lba_shift: u32,
        view: &mut View<'_>,
    ) -> Result<Command> {
        let (cmd, ranges) = dsm(rq, lba_shift, view)?;
        self.discards.fetch_add(1, Relaxed);
        self.ranges.fetch_add(ranges as u64, Relaxed);
        Ok(cmd)
    }
}

impl Drop for FullDisk {
    fn drop(&mut self) {
        pr_info!(
            "{} flushes, {} FUA writes, {} discards ({} ranges) sent\n",
            self.flushes.load(Relaxed),
            self.fua_writes.load(Relaxed),
            self.discards.load(Relaxed),
            self.ranges.load(Relaxed)
        );
    }
}
