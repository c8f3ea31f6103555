// SPDX-License-Identifier: GPL-2.0

//! Physical Region Pages: how a Read or Write tells the controller where
//! its data is (NVMe 1.4, 4.3 "Physical Region Page Entry and List").
//!
//! `core` only: the host tests check, for any buffer, length and page size,
//! that the entries cover every byte of the transfer exactly once, that
//! every entry but the first is page aligned, and that list pages are
//! chained correctly.
#![forbid(unsafe_code)]

// ANCHOR: prps
/// The two PRP fields of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Prps {
    /// The first page: the transfer's bus address, with its offset.
    pub(crate) prp1: u64,
    /// Nothing (0) when the transfer fits the first page; the second page
    /// when it ends there; else the bus address of the PRP list.
    pub(crate) prp2: u64,
    /// How many list entries `describe` wrote (0 without a list).
    pub(crate) list_entries: usize,
}

/// Why a transfer cannot be described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrpError {
    /// No bytes to transfer.
    Empty,
    /// The page size is not a power of two of at least 4 KiB, or the list
    /// is not page aligned.
    Page,
    /// The data does not start on a 4-byte boundary (PRP offsets are dword
    /// aligned).
    Unaligned,
    /// The list memory has too few entries for this transfer.
    ListTooSmall,
}
// ANCHOR_END: prps

// ANCHOR: describe
/// Describes `len` bytes at bus address `addr`, contiguous in bus address
/// space, for a controller with memory pages of `page` bytes.
///
/// A transfer that touches more than two pages needs a PRP list: its
/// entries go into `list`, which the controller reads at bus address
/// `list_addr` (page aligned). A list page holds `page / 8` entries; when
/// more remain than fit, the last entry of a list page points to the next
/// list page instead of to data.
pub(crate) fn describe(
    addr: u64,
    len: u32,
    page: u32,
    list: &mut [u64],
    list_addr: u64,
) -> Result<Prps, PrpError> {
    // TODO (exercise 1): describe the transfer as the controller reads it
    // (NVMe 1.4, 4.3), checking the arguments first (`PrpError` says what is
    // wrong):
    // - PRP1 is `addr` itself, with its offset in its page;
    // - a transfer that ends in PRP1's page needs nothing more (PRP2 = 0);
    // - one that ends in the next page: PRP2 is that page;
    // - else PRP2 is `list_addr`, and `list` gets the address of every
    //   following page, in order; when more than one page is still to go
    //   at the last slot of a list page (`page / 8` entries each), that
    //   slot points to the next list page instead;
    // - `list_entries` says how many slots were used.
    // Tests: on the host, `nvme_prp_*`
    // (`scripts/host-test.sh --tree steps --filter nvme_prp`); in the VM,
    // the probe's transfers, which log "PRP transfers: N Reads of 1 to 256
    // blocks at 3 offsets read the host's pattern (M with a PRP list)" and
    // "PRP transfers: 128 KiB written at block 2048 and read back".
    let _ = (addr, len, page, list, list_addr);
    let _ = (PrpError::Page, PrpError::Unaligned, PrpError::ListTooSmall);
    Err(PrpError::Empty)
}
// ANCHOR_END: describe

/// How many list entries a transfer of at most `len` bytes needs, wherever
/// it starts, chain entries included: the size to allocate a list for.
pub(crate) const fn list_entries_for(len: u32, page: u32) -> usize {
    let per_page = (page / 8) as usize;
    // Pages touched after the first, with the first at worst one byte
    // before a page boundary.
    let pages = (len as usize).div_ceil(page as usize);
    if pages <= 1 {
        return 0;
    }
    // One chain entry per full list page.
    pages + pages / (per_page - 1)
}
