// SPDX-License-Identifier: GPL-2.0

//! What the 7.3 `Request` abstraction does not offer yet, over the C
//! `struct request`: its operation, position and size, its tag and
//! hardware queue, copying its data to and from DMA memory, and ending it
//! with an error. Every `unsafe` of the data path is in this file.
//!
//! Part of the kernel shim (`kshim::request`), from stage 13 on: it names
//! only `kernel::`. TODO: each function goes when the `kernel` crate's
//! `Request` has its accessor (upstream has none of them in 7.3; the C
//! equivalents are `req_op`, `blk_rq_pos`, `blk_rq_bytes`, `rq_for_each_segment`
//! and `blk_mq_end_request`).
//!
//! All of it relies on one fact: a `&Request<T>` exists only while the
//! request is the driver's, between `queue_rq` and its end (the invariant
//! of `Request`), and blk-mq does not change these fields meanwhile.

use kernel::{
    bindings,
    block::mq::{
        Operations,
        Request, //
    },
    dma::Coherent,
    prelude::*,
    sync::aref::ARef, //
};

/// The operation is in the low 8 bits of `cmd_flags` (`REQ_OP_MASK`, a
/// macro bindgen does not translate).
const REQ_OP_MASK: u32 = 0xff;

// ANCHOR: raw
/// The C request behind `rq`: `Request` is `#[repr(transparent)]` over it
/// (the cast is also what `ARef::into_raw` gives back, in `end`).
fn raw<T: Operations>(rq: &Request<T>) -> *mut bindings::request {
    core::ptr::from_ref(rq).cast_mut().cast()
}

/// What the request asks for: `REQ_OP_READ`, `REQ_OP_WRITE`, ...
pub(crate) fn op<T: Operations>(rq: &Request<T>) -> u32 {
    // SAFETY: `rq` is a live request owned by the driver (see the module
    // documentation); reading a field that does not change meanwhile.
    unsafe { (*raw(rq)).cmd_flags & REQ_OP_MASK }
}
// ANCHOR_END: raw

/// Whether the data must be on non-volatile media when the request ends.
pub(crate) fn is_fua<T: Operations>(rq: &Request<T>) -> bool {
    // SAFETY: As in `op`.
    let flags = unsafe { (*raw(rq)).cmd_flags };
    flags & (1 << bindings::req_flag_bits___REQ_FUA) != 0
}

/// The first 512-byte sector.
pub(crate) fn sector<T: Operations>(rq: &Request<T>) -> u64 {
    // SAFETY: As in `op`.
    unsafe { (*raw(rq)).__sector }
}

/// The number of bytes of data to transfer: 0 for a flush, and for a
/// discard, whose size is that of the blocks it deallocates, with no data
/// (its ranges: [`for_each_discard_range`]).
pub(crate) fn bytes<T: Operations>(rq: &Request<T>) -> u32 {
    if op(rq) == bindings::req_op_REQ_OP_DISCARD {
        return 0;
    }
    // SAFETY: As in `op`.
    unsafe { (*raw(rq)).__data_len }
}

// ANCHOR: discard_ranges
/// Calls `f` with each range of a discard request in turn: its first
/// 512-byte sector and its length in bytes, one per bio (the block layer
/// merges discards of different places into one request, up to the disk's
/// `max_discard_segments`). C: `__rq_for_each_bio`. For other requests the
/// ranges are those of their bios' data.
pub(crate) fn for_each_discard_range<T: Operations>(
    rq: &Request<T>,
    mut f: impl FnMut(u64, u32) -> Result,
) -> Result {
    // SAFETY: As in `op`; the bios are the request's until it ends.
    let mut bio = unsafe { (*raw(rq)).bio };
    while !bio.is_null() {
        // SAFETY: `bio` is one of the request's bios (above); its iterator
        // says where it starts and how long it is.
        let iter = unsafe { (*bio).bi_iter };
        f(iter.bi_sector, iter.bi_size)?;
        // SAFETY: As above, for the link to the next bio (or null).
        bio = unsafe { (*bio).bi_next };
    }
    Ok(())
}
// ANCHOR_END: discard_ranges

/// The request's tag: unique among the requests in flight on its hardware
/// queue, below the tag set's depth.
pub(crate) fn tag<T: Operations>(rq: &Request<T>) -> Result<u16> {
    // SAFETY: As in `op`.
    let tag = unsafe { (*raw(rq)).tag };
    u16::try_from(tag).map_err(|_| EINVAL)
}

/// The index of the hardware queue the request was queued on (`queue_rq`
/// is not told).
pub(crate) fn hw_queue<T: Operations>(rq: &Request<T>) -> usize {
    // SAFETY: As in `op`; `mq_hctx` is set before `queue_rq` and points to
    // the hardware context, which outlives its requests.
    let index = unsafe { (*(*raw(rq)).mq_hctx).queue_num };
    index as usize
}

/// Calls `f` with each piece of the request's data in turn: a kernel
/// address and a length, at most to the end of a page, in order.
///
/// The pieces are mapped (`kmap_local_page`) only for the time of the call;
/// they may be user pages that user space can touch meanwhile (`O_DIRECT`),
/// so they are handed over as raw pointers, never as Rust references.
fn for_each_piece<T: Operations>(
    rq: &Request<T>,
    mut f: impl FnMut(*mut u8, usize) -> Result,
) -> Result {
    for_each_page(rq, |page, in_page, len| {
        // SAFETY: `page` is a page of the request's data (`for_each_page`);
        // `kmap_local_page` maps it until the `kunmap_local` below, on this
        // CPU.
        let base = unsafe { bindings::kmap_local_page(page) };
        // SAFETY: `base` maps a whole page; `in_page + len` is inside it.
        let result = f(unsafe { base.cast::<u8>().add(in_page) }, len);
        // SAFETY: `base` came from `kmap_local_page` just above, and the
        // mappings are undone in reverse order (there is only one).
        unsafe { bindings::kunmap_local(base) };
        result
    })
}

// ANCHOR: segments
/// Calls `f` with each piece of the request's data in turn: its page, the
/// offset in that page and a length, at most to the end of the page, in
/// order. (Stage 19 maps these pages for the controller instead of copying
/// them.)
pub(crate) fn for_each_page<T: Operations>(
    rq: &Request<T>,
    mut f: impl FnMut(*mut bindings::page, usize, usize) -> Result,
) -> Result {
    let page_size = bindings::PAGE_SIZE;
    // SAFETY: As in `op`; the bios are the request's until it ends.
    let mut bio = unsafe { (*raw(rq)).bio };
    while !bio.is_null() {
        // SAFETY: `bio` is one of the request's bios (above). Its iterator
        // says where its data starts in its vector of pages and how much
        // of it there is; a copy is ours to advance.
        let (mut iter, vecs) = unsafe { ((*bio).bi_iter, (*bio).bi_io_vec) };
        while iter.bi_size > 0 {
            // SAFETY: While `bi_size` is left, `bi_idx` is inside the vector.
            let bv = unsafe { *vecs.add(iter.bi_idx as usize) };
            let offset = bv.bv_offset as usize + iter.bi_offset as usize;
            // A vector entry may span several physically contiguous pages:
            // one at a time.
            let in_page = offset % page_size;
            let len = (bv.bv_len - iter.bi_offset)
                .min(iter.bi_size)
                .min((page_size - in_page) as u32);
            f(
                // SAFETY: The entry's pages are contiguous, so their `struct
                // page`s are too (one `mem_map`): this is the one that holds
                // `offset`.
                unsafe { bv.bv_page.add(offset / page_size) },
                in_page,
                len as usize,
            )?;
            iter.bi_size -= len;
            iter.bi_offset += len;
            if iter.bi_offset == bv.bv_len {
                iter.bi_idx += 1;
                iter.bi_offset = 0;
            }
        }
        // SAFETY: As above, for the link to the next bio (or null).
        bio = unsafe { (*bio).bi_next };
    }
    Ok(())
}
// ANCHOR_END: segments

// ANCHOR: contiguous
/// The request's data, if it is one physically contiguous piece: one bio
/// whose current vector entry holds all of it (the usual 4 KiB request).
/// Its first page, the offset in that page and its length; the piece may
/// run on into the pages that follow. (Stage 21 maps it with one call, as
/// the C driver's `nvme_setup_prp_simple` does. C: `req_bvec`, when
/// `blk_rq_nr_phys_segments` is 1.)
#[inline]
pub(crate) fn contiguous<T: Operations>(
    rq: &Request<T>,
) -> Option<(*mut bindings::page, usize, usize)> {
    let page_size = bindings::PAGE_SIZE;
    // SAFETY: As in `op`; the bios are the request's until it ends.
    let bio = unsafe { (*raw(rq)).bio };
    if bio.is_null() {
        return None;
    }
    // SAFETY: `bio` is the request's first bio (above): its iterator, its
    // vector of pages and the link to the next bio.
    let (iter, vecs, next) = unsafe { ((*bio).bi_iter, (*bio).bi_io_vec, (*bio).bi_next) };
    if !next.is_null() || iter.bi_size == 0 {
        return None;
    }
    // SAFETY: While `bi_size` is left, `bi_idx` is inside the vector.
    let bv = unsafe { *vecs.add(iter.bi_idx as usize) };
    if bv.bv_len.checked_sub(iter.bi_offset)? < iter.bi_size {
        return None;
    }
    let offset = bv.bv_offset as usize + iter.bi_offset as usize;
    Some((
        // SAFETY: As in `for_each_page`: the entry's pages are contiguous,
        // and this is the one that holds `offset`.
        unsafe { bv.bv_page.add(offset / page_size) },
        offset % page_size,
        iter.bi_size as usize,
    ))
}
// ANCHOR_END: contiguous

/// Copies the request's data into `buf`, from its start (for a Write).
/// `EINVAL` if it does not fit.
pub(crate) fn copy_to_dma<T: Operations>(rq: &Request<T>, buf: &Coherent<[u8]>) -> Result {
    let mut at = 0usize;
    for_each_piece(rq, |piece, len| {
        let to = dma_range(buf, at, len)?;
        // SAFETY: `piece` is mapped for `len` bytes (`for_each_piece`), and
        // `to` is `len` bytes of `buf` (`dma_range`). A `memcpy` into
        // coherent memory is the kernel's volatile copy (what `Io`'s
        // `copy_from_slice` uses): defined even if the device uses the
        // memory meanwhile, and no Rust reference to it exists.
        unsafe { bindings::memcpy(to.cast(), piece.cast(), len) };
        at += len;
        Ok(())
    })
}

/// Copies `buf` into the request's pages, from its start (for a Read).
/// `EINVAL` if the request holds more than `buf`.
pub(crate) fn copy_from_dma<T: Operations>(rq: &Request<T>, buf: &Coherent<[u8]>) -> Result {
    let mut at = 0usize;
    for_each_piece(rq, |piece, len| {
        let from = dma_range(buf, at, len)?;
        // SAFETY: As in `copy_to_dma`, the other way round; the request's
        // pages are the driver's to write until it ends.
        unsafe { bindings::memcpy(piece.cast(), from.cast(), len) };
        at += len;
        Ok(())
    })
}

/// Where `len` bytes from byte `at` of `buf` start, if they are inside it.
fn dma_range(buf: &Coherent<[u8]>, at: usize, len: usize) -> Result<*mut u8> {
    if at.checked_add(len).ok_or(EINVAL)? > buf.len() {
        return Err(EINVAL);
    }
    // Within the allocation (checked above): pointer arithmetic only.
    Ok(buf.as_mut_ptr().cast::<u8>().wrapping_add(at))
}

// ANCHOR: end
/// Ends the request: a success, or an error the block layer reports to
/// whoever waits for it (`Request::end_ok` can only say "success").
#[inline]
pub(crate) fn end<T: Operations>(rq: ARef<Request<T>>, result: Result) {
    let rq = match result {
        Ok(()) => match Request::end_ok(rq) {
            Ok(()) => return,
            // Someone else holds a reference: not in this driver, which
            // keeps exactly one. Fail it rather than leave it hanging.
            Err(rq) => rq,
        },
        Err(_) => rq,
    };
    let status = result.err().unwrap_or(EIO);
    let ptr = ARef::into_raw(rq).as_ptr().cast::<bindings::request>();
    // SAFETY: The request is the driver's (its `ARef` was the only one), and
    // this hands it back to the block layer, once: the `ARef` was consumed
    // and its count is not dropped, so no Rust reference to it remains. (The
    // abstraction's own count stays as it is; `queue_rq` sets it afresh
    // before the request is used again.)
    unsafe { bindings::blk_mq_end_request(ptr, bindings::errno_to_blk_status(status.to_errno())) };
}
// ANCHOR_END: end
