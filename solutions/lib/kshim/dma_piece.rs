// SPDX-License-Identifier: GPL-2.0

//! A request whose data is one physically contiguous piece (the usual
//! 4 KiB read or write), mapped for the controller with one call and
//! nothing else: what the C driver's simple path does (`dma_map_bvec` in
//! `nvme_setup_prp_simple`). Stage 19's `Mapping` walks the request page by
//! page and records each piece; for one piece that is most of its work.
//!
//! Part of the kernel shim (`kshim::dma_piece`), from stage 21 on: it names
//! only `kernel::` and its sibling `request`. TODO: it goes when the
//! `kernel` crate can map a request for DMA (C: `blk_rq_dma_map_iter_start`,
//! which 7.3's C has and its Rust does not offer).

use kernel::{
    bindings,
    block::mq::{
        Operations,
        Request, //
    },
    device::Device,
    dma::DataDirection, //
};

use super::request;

/// What `dma_map_page_attrs` returns on failure (`DMA_MAPPING_ERROR`, all
/// ones; `dma_mapping_error` is an inline function bindgen cannot call).
pub(crate) const DMA_MAPPING_ERROR: u64 = u64::MAX;

// ANCHOR: dma_piece
/// The data of one request, one contiguous piece of it mapped for the
/// controller. Dropping it unmaps it, which must happen before the request
/// ends (with an IOMMU or swiotlb, unmapping is what makes a read's data
/// visible to the CPU).
///
/// # Invariants
///
/// `addr` is `len` bytes mapped with `dma_map_page_attrs` on `dev` in
/// direction `dir`, unmapped only by `drop`. `dev` is valid as long as the
/// piece: the disk, whose requests own their mappings, is deleted (all its
/// requests ended) before the device's driver data is dropped.
pub(crate) struct DmaPiece {
    dev: *mut bindings::device,
    addr: u64,
    len: u32,
    dir: bindings::dma_data_direction,
}

// SAFETY: The DMA API may be called from any thread; the piece is owned by
// one request at a time.
unsafe impl Send for DmaPiece {}

impl DmaPiece {
    /// Maps the data of `rq` (`to_device`: a Write) if it is one contiguous
    /// piece (`request::contiguous`) that starts on a dword and ends at most
    /// `reach` bytes after the start of its first page; else `None`, and
    /// nothing is mapped.
    #[inline]
    pub(crate) fn map<T: Operations>(
        dev: &Device,
        rq: &Request<T>,
        to_device: bool,
        reach: usize,
    ) -> Option<DmaPiece> {
        let (page, in_page, len) = request::contiguous(rq)?;
        if in_page % 4 != 0 || len % 4 != 0 || in_page + len > reach {
            return None;
        }
        let dir = if to_device {
            DataDirection::ToDevice.into()
        } else {
            DataDirection::FromDevice.into()
        };
        // CAST: `Device` is `#[repr(transparent)]` over the C `struct device`
        // (its `as_raw` is the kernel crate's own).
        let dev: *mut bindings::device = core::ptr::from_ref(dev).cast_mut().cast();
        let len32 = u32::try_from(len).ok()?;
        // SAFETY: `page`, `in_page` and `len` are the request's data, which
        // stays the driver's until the request ends, after this piece is
        // dropped; its pages are physically contiguous (one vector entry).
        // `dev` is bound as long as the piece lives: the piece is dropped
        // before its request ends, and the disk (whose deletion waits for
        // its requests) is deleted before the driver is unbound.
        let addr = unsafe { bindings::dma_map_page_attrs(dev, page, in_page, len, dir, 0) };
        if addr == DMA_MAPPING_ERROR {
            return None;
        }
        // INVARIANT: mapped just above, on `dev`, in `dir`, `len` bytes.
        Some(DmaPiece {
            dev,
            addr,
            len: len32,
            dir,
        })
    }

    /// The bus address of the piece's first byte.
    pub(crate) fn address(&self) -> u64 {
        self.addr
    }

    /// The bytes mapped.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }
}

impl Drop for DmaPiece {
    fn drop(&mut self) {
        // SAFETY: Mapped on `dev` in `dir` for `len` bytes, and unmapped
        // once, here (type invariant).
        unsafe {
            bindings::dma_unmap_page_attrs(self.dev, self.addr, self.len as usize, self.dir, 0)
        };
    }
}
// ANCHOR_END: dma_piece
