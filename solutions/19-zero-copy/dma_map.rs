// SPDX-License-Identifier: GPL-2.0

//! Zero copy: the controller reads and writes the request's own pages.
//!
//! Stage 13 copied every byte through a bounce buffer. Here the pages of a
//! request are mapped for DMA, one page piece at a time, and described with
//! PRPs, which can say "this page from this offset, then these whole
//! pages": so every piece but the first must start at a page boundary, and
//! every piece but the last must end at one. Pieces of any other shape
//! (user buffers of odd alignment, many small segments) are described with
//! a Scatter Gather List, which takes any address and length, if the
//! controller supports SGLs (Identify Controller's SGLS field). Else, or
//! for a request larger than one command may carry, the bounce buffer.
//!
//! Stage 13's disk takes this as its `Speedups` ([`ZeroCopy`], at the end
//! of this file), with one doorbell per batch of requests.
//!
//! `Mapping` is this stage's wrapper for what 7.3 lacks: every `unsafe` of
//! the zero-copy path is in it. It goes once the `kernel` crate can do it:
//! its `scatterlist::SGTable` (7.3 has it, mapped for DMA as a whole), once
//! `Request` can fill one with its segments (C: `blk_rq_map_sg`).

use kernel::{
    bindings,
    block::mq::{
        Operations,
        Request, //
    },
    device::{
        Core,
        Device, //
    },
    dma::DataDirection,
    pci,
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Relaxed, //
        }, //
    }, //
};

use crate::{
    disk::{
        InFlight,
        Speedups,
        Transfer, //
    },
    kshim::{
        dma_align,
        dma_piece::DMA_MAPPING_ERROR,
        request, //
    },
    nvme::{
        cmd_buffer::View,
        command::nvm_opc,
        identify::IdCtrl,
        prp::Prps, //
    }, //
};

/// Pieces a mapping holds: a request has at most 128 segments (blk-mq's
/// default), cut at page boundaries into at most 32 more pieces.
pub(crate) const MAX_PIECES: usize = 160;
/// SGL descriptor identifiers (NVMe 1.4, figure 115): type in bits 7:4.
const SGL_DATA_BLOCK: u64 = 0x0;
const SGL_LAST_SEGMENT: u64 = 0x3;

// ANCHOR: map
/// The pages of one request, mapped for the controller: each piece's bus
/// address and length. Dropping it unmaps them, which must happen before
/// the request ends (with an IOMMU or bounce buffering, unmapping is what
/// makes the data visible to the CPU).
///
/// # Invariants
///
/// The first `count` pieces were mapped with `dma_map_page_attrs` on `dev`
/// in direction `dir`, and are unmapped only by `drop`. `dev` is valid as
/// long as the mapping: the disk, whose requests own mappings, is deleted
/// (all its requests ended) before the device's driver data is dropped.
pub(crate) struct Mapping {
    dev: *mut bindings::device,
    dir: bindings::dma_data_direction,
    pieces: Pieces,
    count: usize,
    /// Whether PRPs can describe the pieces (else: an SGL).
    prp_shape: bool,
}

// SAFETY: The DMA API may be called from any thread; the mapping is owned
// by one request at a time.
unsafe impl Send for Mapping {}

/// Pieces a mapping keeps in itself: a request of a page or two (the usual
/// one, a 4 KiB read into any buffer) maps with no allocation, as in the C
/// driver's simple path.
const INLINE_PIECES: usize = 2;

/// Where a mapping's pieces are written: in the mapping, or, from the
/// third one on, in a box of `MAX_PIECES` (2.5 KiB, allocated only then).
enum Pieces {
    Inline([(u64, u32); INLINE_PIECES]),
    Boxed(KBox<[(u64, u32); MAX_PIECES]>),
}

impl Pieces {
    /// Where piece `i` goes (the pieces before it move into a box when the
    /// inline ones are full); `None` past `MAX_PIECES`, or with no memory
    /// for the box (`GFP_NOWAIT`: `queue_rq` may not sleep).
    fn slot(&mut self, i: usize) -> Option<&mut (u64, u32)> {
        if let Pieces::Inline(inline) = self {
            if i >= INLINE_PIECES {
                // Zeroed in place: no 2.5 KiB built on the stack and copied.
                let mut boxed: KBox<[(u64, u32); MAX_PIECES]> =
                    KBox::init(pin_init::init_zeroed(), GFP_NOWAIT).ok()?;
                boxed.get_mut(..INLINE_PIECES)?.copy_from_slice(inline);
                *self = Pieces::Boxed(boxed);
            }
        }
        match self {
            Pieces::Inline(a) => a.get_mut(i),
            Pieces::Boxed(b) => b.get_mut(i),
        }
    }

    /// All the slots, the first `count` of them pieces.
    fn slots(&self) -> &[(u64, u32)] {
        match self {
            Pieces::Inline(a) => a,
            Pieces::Boxed(b) => &b[..],
        }
    }
}

impl Mapping {
    /// Maps the pages of `rq` (`to_device`: a Write) if PRPs can describe
    /// them, or, with `sgl`, an SGL; `None` if they cannot (or a mapping
    /// fails): then the bounce buffer it is.
    ///
    /// The mapping is small (two pieces in it); a request of more pieces
    /// gets a box for them (`GFP_NOWAIT`: `queue_rq` may not sleep), and
    /// without memory for it, the bounce buffer.
    pub(crate) fn map<T: Operations>(
        dev: &Device,
        rq: &Request<T>,
        to_device: bool,
        sgl: bool,
    ) -> Option<Mapping> {
        if bindings::PAGE_SIZE != 4096 {
            return None;
        }
        // INVARIANT: no piece mapped yet.
        let mut m = Mapping {
            // `Device` is `#[repr(transparent)]` over the C `struct device`
            // (its `as_raw` is the kernel crate's own).
            dev: core::ptr::from_ref(dev).cast_mut().cast(),
            dir: if to_device {
                DataDirection::ToDevice.into()
            } else {
                DataDirection::FromDevice.into()
            },
            pieces: Pieces::Inline([(0, 0); INLINE_PIECES]),
            count: 0,
            prp_shape: true,
        };
        let mut last_ended_page = true;
        let mapped = request::for_each_page(rq, |page, in_page, len| {
            // The PRP shape: the first piece starts anywhere dword aligned,
            // the others at a page boundary, and only the last may end
            // before the end of its page.
            let fits = if m.count == 0 {
                in_page % 4 == 0
            } else {
                in_page == 0 && last_ended_page
            };
            m.prp_shape &= fits;
            // An SGL takes any piece of whole dwords.
            let sgl_fits = sgl && in_page % 4 == 0 && len % 4 == 0;
            if !(m.prp_shape || sgl_fits) {
                return Err(EINVAL);
            }
            last_ended_page = in_page + len == 4096;
            // Everything that can fail does so before the piece is mapped:
            // a piece mapped is a piece recorded.
            let (dev, dir, i) = (m.dev, m.dir, m.count);
            let piece_len = u32::try_from(len)?;
            let slot = m.pieces.slot(i).ok_or(ENOMEM)?;
            // SAFETY: `page` is a page of the request's data, which stays
            // the driver's until the request ends, after this mapping is
            // dropped; `in_page + len` is inside the page; `dev` is our
            // bound device.
            let addr = unsafe { bindings::dma_map_page_attrs(dev, page, in_page, len, dir, 0) };
            if addr == DMA_MAPPING_ERROR {
                return Err(ENOMEM);
            }
            *slot = (addr, piece_len);
            // INVARIANT: the piece is counted as soon as it is mapped.
            m.count = i + 1;
            Ok(())
        });
        // On an error, dropping `m` unmaps what was mapped.
        mapped.ok().filter(|()| m.count > 0).map(|()| m)
    }
    // ANCHOR_END: map

    /// The pieces mapped.
    fn pieces(&self) -> &[(u64, u32)] {
        self.pieces.slots().get(..self.count).unwrap_or(&[])
    }

    /// Whether the command must say "SGL" (PSDT 01b) instead of "PRPs".
    pub(crate) fn is_sgl(&self) -> bool {
        !self.prp_shape
    }

    /// The command's data pointer: PRPs (with the tag's PRP list) if they
    /// can describe the pieces, else an SGL (with its SGL segment).
    pub(crate) fn data_pointer(&self, view: &mut View<'_>) -> Result<Prps> {
        if self.prp_shape {
            self.prps(view)
        } else {
            self.sgl(view)
        }
    }

    // ANCHOR: sgl
    /// An SGL: one Data Block descriptor (address, length) per piece. A
    /// single one goes into the command itself (its 16 bytes are PRP1 and
    /// PRP2); more go into the tag's SGL segment, and the command holds a
    /// Last Segment descriptor that points to it.
    fn sgl(&self, view: &mut View<'_>) -> Result<Prps> {
        let descriptor = |addr: u64, len: u32, kind: u64| [addr, u64::from(len) | (kind << 60)];
        let pieces = self.pieces();
        let [prp1, prp2] = match pieces {
            [] => return Err(EINVAL),
            [(addr, len)] => descriptor(*addr, *len, SGL_DATA_BLOCK),
            _ => {
                for (i, &(addr, len)) in pieces.iter().enumerate() {
                    view.set_sgl(i, descriptor(addr, len, SGL_DATA_BLOCK))?;
                }
                descriptor(
                    view.sgl_address(),
                    u32::try_from(pieces.len() * 16)?,
                    SGL_LAST_SEGMENT,
                )
            }
        };
        Ok(Prps {
            prp1,
            prp2,
            list_entries: 0,
        })
    }
    // ANCHOR_END: sgl

    /// The PRPs of the mapping: PRP1 is the first piece; PRP2 the second,
    /// or, for more, the bus address of the tag's PRP list, which gets
    /// every piece after the first.
    fn prps(&self, view: &mut View<'_>) -> Result<Prps> {
        let pieces = self.pieces();
        let (&(prp1, _), rest) = pieces.split_first().ok_or(EINVAL)?;
        let prp2 = match rest {
            [] => 0,
            [(second, _)] => *second,
            _ => {
                for (i, &(addr, _)) in rest.iter().enumerate() {
                    view.set_prp(i, addr)?;
                }
                view.prp_list_address()
            }
        };
        Ok(Prps {
            prp1,
            prp2,
            list_entries: if rest.len() > 1 { rest.len() } else { 0 },
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        for &(addr, len) in self.pieces() {
            // SAFETY: Each piece was mapped on `dev` in `dir` and is
            // unmapped once, here (type invariant).
            unsafe { bindings::dma_unmap_page_attrs(self.dev, addr, len as usize, self.dir, 0) };
        }
    }
}

/// A block request in flight on an I/O queue.
pub(crate) type IoRequest = InFlight<ZeroCopy>;

// ANCHOR: zero_copy
/// Zero copy, as the module parameters allow, and what it did.
pub(crate) struct ZeroCopy {
    /// The controller, for mapping pages.
    dev: ARef<Device>,
    /// Whether to try zero copy (the `zero_copy` parameter).
    enabled: bool,
    /// Whether the controller takes SGLs (and the `sgl` parameter allows).
    sgl: bool,
    /// Requests that went zero copy (with an SGL), and through a bounce
    /// buffer.
    mapped: Atomic<u64>,
    with_sgl: Atomic<u64>,
    bounced: Atomic<u64>,
}

impl ZeroCopy {
    /// Zero copy if `enabled`, with SGLs if `sgl` and the controller takes
    /// them (Identify Controller's SGLS, said in the log for the test).
    pub(crate) fn new(pdev: &pci::Device<Core<'_>>, id: &IdCtrl, enabled: bool, sgl: bool) -> Self {
        let supported = id.supports_sgl();
        let says = if supported {
            "takes SGLs"
        } else {
            "takes no SGLs"
        };
        dev_info!(pdev, "the controller {}\n", says);
        // A mapping keeps its offset in the 4 KiB controller page, or the
        // PRPs of a buffer that starts mid-page break behind an IOMMU or
        // swiotlb (the VM boots with `swiotlb=force`). Without it, zero
        // copy would be unsafe to offer: the disk copies instead.
        let enabled = enabled
            && dma_align::set_min_align_mask(pdev, 4095)
                .inspect_err(|e| dev_warn!(pdev, "no zero copy: cannot keep offsets ({:?})\n", e))
                .is_ok();
        ZeroCopy {
            dev: ARef::from(&**pdev.as_ref()),
            enabled,
            sgl: sgl && supported,
            mapped: Atomic::new(0),
            with_sgl: Atomic::new(0),
            bounced: Atomic::new(0),
        }
    }

    /// The device to map requests for, if zero copy is on (stage 21's
    /// one-piece mappings ask too).
    pub(crate) fn device(&self) -> Option<&Device> {
        self.enabled.then_some(&*self.dev)
    }
}

impl Speedups for ZeroCopy {
    type Mapping = Mapping;
    const SGL_ENTRIES: usize = MAX_PIECES;
    const BATCH: bool = true;

    fn map<T: Operations>(
        &self,
        rq: &Request<T>,
        t: Transfer,
        view: &mut View<'_>,
    ) -> Option<(Mapping, Prps, bool)> {
        // Only when one command can carry it all.
        let mapped = match self.device() {
            Some(dev) if t.opcode != nvm_opc::FLUSH && t.len <= t.max_piece => {
                Mapping::map(dev, rq, t.opcode == nvm_opc::WRITE, self.sgl).and_then(|m| {
                    let prps = m.data_pointer(view).ok()?;
                    let sgl = m.is_sgl();
                    Some((m, prps, sgl))
                })
            }
            _ => None,
        };
        match &mapped {
            Some((_, _, sgl)) => {
                self.mapped.fetch_add(1, Relaxed);
                if *sgl {
                    self.with_sgl.fetch_add(1, Relaxed);
                }
            }
            None => {
                self.bounced.fetch_add(1, Relaxed);
            }
        }
        mapped
    }
}
// ANCHOR_END: zero_copy

impl Drop for ZeroCopy {
    fn drop(&mut self) {
        pr_info!(
            "{} requests zero copy ({} with an SGL), {} through a bounce buffer\n",
            self.mapped.load(Relaxed),
            self.with_sgl.load(Relaxed),
            self.bounced.load(Relaxed)
        );
    }
}
