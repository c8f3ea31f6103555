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
    if len == 0 {
        return Err(PrpError::Empty);
    }
    if page < 4096 || !page.is_power_of_two() || list_addr % u64::from(page) != 0 {
        return Err(PrpError::Page);
    }
    if addr % 4 != 0 {
        return Err(PrpError::Unaligned);
    }
    let page = u64::from(page);
    // The first entry may start anywhere in its page; every other entry is
    // a whole page (the last one used only in part).
    let first = page - addr % page;
    let mut rest = u64::from(len).saturating_sub(first);
    let mut next = addr - addr % page + page;
    let mut prps = Prps {
        prp1: addr,
        ..Prps::default()
    };
    if rest == 0 {
        return Ok(prps);
    }
    if rest <= page {
        prps.prp2 = next;
        return Ok(prps);
    }
    prps.prp2 = list_addr;
    let per_page = (page / 8) as usize;
    let mut i = 0;
    while rest > 0 {
        let slot = list.get_mut(i).ok_or(PrpError::ListTooSmall)?;
        // The last slot of a list page, with more than one data page to
        // go: it chains to the next list page.
        if i % per_page == per_page - 1 && rest > page {
            *slot = list_addr + (i as u64 + 1) * 8;
        } else {
            *slot = next;
            next += page;
            rest = rest.saturating_sub(page);
        }
        i += 1;
    }
    prps.list_entries = i;
    Ok(prps)
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
