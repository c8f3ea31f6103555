//! Stage 12: `prp::describe` and `prp::list_entries_for` against a model
//! of how a controller reads PRPs, for any buffer, length and page size,
//! plus a few vectors worked out by hand.
//!
//! The model is written from the specification (NVMe 1.4, 4.3 "Physical
//! Region Page Entry and List"), not from `prp.rs`. The controller, given
//! PRP1, PRP2 and the transfer length:
//!
//! - reads data from PRP1 up to the end of its memory page (or of the
//!   transfer); PRP1 may have an offset, dword aligned (bits 1:0 are 0);
//! - if nothing is left, PRP2 is not used (reserved: 0);
//! - if the rest fits in one memory page, PRP2 is that page's entry;
//! - else PRP2 is a PRP List pointer: the controller reads 8-byte entries
//!   from there, in order, each a data page (offset 0) used whole or, for
//!   the last, in part; the last entry of a list memory page, when more
//!   than one data page is still to go, is instead a pointer to the next
//!   list page, where the controller carries on.
//!
//! What must hold: the data pages the controller reads are exactly
//! `[addr, addr + len)`, every byte once and in order; every data entry but
//! PRP1 is page aligned; chain pointers sit only at the last slot of a list
//! page and point to the next page of the list memory; `list_entries` is
//! the number of slots the controller reads, and `describe` writes no slot
//! past it; a list of `list_entries_for(len, page)` slots is always enough,
//! and one slot fewer than the walk needs is `ListTooSmall`.

use crate::nvme_io_command::next_chunk;
use crate::nvme_prp::{describe, list_entries_for, PrpError, Prps};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

const KIB: u32 = 1024;
const MIB: u32 = 1024 * KIB;

/// What a slot of the list holds before `describe` runs: not a possible
/// entry (bits 1:0 set), so that a slot it did not write shows.
const UNWRITTEN: u64 = 0xdead_beef_dead_beef;

/// What the controller did with a command's PRPs.
#[derive(Debug, Default)]
struct Walk {
    /// The data it moved, in order: (bus address, length).
    data: Vec<(u64, u64)>,
    /// How many list slots it read (the highest slot read, plus one).
    slots_read: usize,
    /// The list slots that held a pointer to the next list page.
    chains: Vec<usize>,
}

/// The controller's reading of `prps` for a transfer of `len` bytes with
/// memory pages of `page` bytes, its list memory being `list` at bus
/// address `list_addr`. An error for anything the specification forbids
/// or that would make the controller read outside the list memory.
fn walk(prps: &Prps, len: u32, page: u32, list: &[u64], list_addr: u64) -> Result<Walk, String> {
    let page = u64::from(page);
    let mut left = u64::from(len);
    let mut w = Walk::default();
    if prps.prp1 & 3 != 0 {
        return Err(format!("PRP1 {:#x} is not dword aligned", prps.prp1));
    }
    let first = left.min(page - prps.prp1 % page);
    w.data.push((prps.prp1, first));
    left -= first;
    if left == 0 {
        if prps.prp2 != 0 {
            return Err(format!(
                "PRP2 {:#x} is unused (reserved) and not 0",
                prps.prp2
            ));
        }
        return Ok(w);
    }
    if left <= page {
        if prps.prp2 % page != 0 {
            return Err(format!("PRP2 {:#x}, a data page, has an offset", prps.prp2));
        }
        w.data.push((prps.prp2, left));
        return Ok(w);
    }
    // A PRP List pointer: qword aligned.
    if prps.prp2 & 7 != 0 {
        return Err(format!(
            "PRP2 {:#x}, a list pointer, is not qword aligned",
            prps.prp2
        ));
    }
    let mut at = prps.prp2;
    while left > 0 {
        let slot = at
            .checked_sub(list_addr)
            .map(|off| (off / 8) as usize)
            .filter(|&slot| list_addr + slot as u64 * 8 == at && slot < list.len())
            .ok_or_else(|| format!("reads {at:#x}, outside the list memory"))?;
        w.slots_read = w.slots_read.max(slot + 1);
        let entry = list[slot];
        if at % page == page - 8 && left > page {
            // The last entry of a list page, more than one data page to go.
            if entry != at + 8 {
                return Err(format!(
                    "slot {slot}: chain pointer {entry:#x}, not the next list page {:#x}",
                    at + 8
                ));
            }
            w.chains.push(slot);
            at = entry;
            continue;
        }
        if entry % page != 0 {
            return Err(format!("slot {slot}: data entry {entry:#x} has an offset"));
        }
        let n = left.min(page);
        w.data.push((entry, n));
        left -= n;
        at += 8;
    }
    Ok(w)
}

/// Checks that `w` moved exactly the bytes `[addr, addr + len)`, once each,
/// in order.
fn covers(w: &Walk, addr: u64, len: u32) -> Result<(), String> {
    let mut next = addr;
    for (i, &(start, n)) in w.data.iter().enumerate() {
        if start != next {
            return Err(format!("data entry {i} at {start:#x}, expected {next:#x}"));
        }
        next += n;
    }
    if next != addr + u64::from(len) {
        return Err(format!(
            "the entries end at {next:#x}, not {:#x}",
            addr + u64::from(len)
        ));
    }
    Ok(())
}

/// `describe` into a list of `slots` slots, then the controller's walk,
/// checked: coverage, `list_entries`, and no slot written past it.
fn describe_and_walk(
    addr: u64,
    len: u32,
    page: u32,
    slots: usize,
    list_addr: u64,
) -> Result<(Prps, Walk), TestCaseError> {
    let mut list = vec![UNWRITTEN; slots];
    let prps = describe(addr, len, page, &mut list, list_addr)
        .map_err(|e| TestCaseError::fail(format!("describe: {e:?} with a list of {slots}")))?;
    let w = walk(&prps, len, page, &list, list_addr).map_err(TestCaseError::fail)?;
    covers(&w, addr, len).map_err(TestCaseError::fail)?;
    prop_assert_eq!(prps.prp1, addr, "PRP1 is the data's address");
    prop_assert_eq!(
        prps.list_entries,
        w.slots_read,
        "list_entries, the slots the controller reads"
    );
    for chain in &w.chains {
        let per_page = (page / 8) as usize;
        prop_assert_eq!(
            chain % per_page,
            per_page - 1,
            "a chain at slot {} is not a page's last",
            chain
        );
    }
    let written = list
        .iter()
        .rposition(|&e| e != UNWRITTEN)
        .map_or(0, |i| i + 1);
    prop_assert!(
        written <= prps.list_entries,
        "slot {} written, beyond list_entries",
        written - 1
    );
    Ok((prps, w))
}

/// The page sizes the driver meets: 4 KiB (QEMU, most controllers), 8 KiB,
/// 64 KiB.
fn page() -> impl Strategy<Value = u32> {
    prop_oneof![Just(4 * KIB), Just(8 * KIB), Just(64 * KIB)]
}

/// A dword aligned bus address in a page of `page` bytes, its offset often
/// 0 or the last dword of the page.
fn addr(page: u32) -> impl Strategy<Value = u64> {
    let offset = prop_oneof![
        Just(0u32),
        Just(page - 4),
        (0..page / 4).prop_map(|d| d * 4),
        (1u32..16).prop_map(move |d| page - 4 * d),
    ];
    (0u64..1 << 32, offset).prop_map(move |(n, off)| n * u64::from(page) + u64::from(off))
}

/// A length in 1..=`max`, often whole pages give or take a few bytes, or
/// around the numbers of pages that fill a list page (`page / 8 - 1` data
/// entries and a chain).
fn len(page: u32, max: u32) -> impl Strategy<Value = u32> {
    let pages = max / page;
    let per_page = page / 8;
    prop_oneof![
        1..=max,
        1u32..=64,
        (1..=pages, -8i64..=8).prop_map(move |(k, d)| (i64::from(k * page) + d) as u32),
        (1u32..=2, -3i64..=3, -8i64..=8)
            .prop_map(move |(m, k, d)| {
                (i64::from(m * (per_page - 1) + 1) + k).max(1) * i64::from(page) + d
            })
            .prop_map(|l| l as u32),
    ]
    .prop_map(move |l| l.clamp(1, max))
}

/// A page aligned bus address for the list memory.
fn list_addr(page: u32) -> impl Strategy<Value = u64> {
    (1u64..1 << 30).prop_map(move |n| n * u64::from(page))
}

/// A length that makes a transfer from `addr` end within 8 bytes of a page
/// boundary, often the first few.
fn len_to_boundary(addr: u64, page: u32, max: u32) -> impl Strategy<Value = u32> {
    let offset = i64::try_from(addr % u64::from(page)).expect("below a page");
    (prop_oneof![1..=4i64, 1..=i64::from(max / page)], -8i64..=8)
        .prop_map(move |(k, d)| (k * i64::from(page) - offset + d).clamp(1, i64::from(max)) as u32)
}

/// A valid transfer: (addr, len, page, list_addr), len up to `max`.
fn transfer(max: u32) -> impl Strategy<Value = (u64, u32, u32, u64)> {
    page()
        .prop_flat_map(|page| (addr(page), Just(page), list_addr(page)))
        .prop_flat_map(move |(addr, page, list_addr)| {
            let len = prop_oneof![len(page, max), len_to_boundary(addr, page, max)];
            (Just(addr), len, Just(page), Just(list_addr))
        })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(2000))]

    /// Any transfer of up to 4 MiB, with a list of `list_entries_for`
    /// slots: the controller moves exactly the transfer's bytes, in order,
    /// through page aligned entries and well placed chains.
    #[test]
    fn nvme_prp_describe_covers_the_transfer((addr, len, page, list_addr) in transfer(4 * MIB)) {
        let slots = list_entries_for(len, page);
        let (prps, w) = describe_and_walk(addr, len, page, slots, list_addr)?;
        // The shape the specification gives PRP2, by how many pages the
        // transfer touches.
        let page64 = u64::from(page);
        let touched = (addr + u64::from(len) - 1) / page64 - addr / page64 + 1;
        match touched {
            1 => prop_assert_eq!((prps.prp2, prps.list_entries), (0, 0)),
            2 => {
                let second = addr / page64 * page64 + page64;
                prop_assert_eq!((prps.prp2, prps.list_entries), (second, 0));
            }
            _ => prop_assert_eq!(prps.prp2, list_addr, "PRP2 points to the list"),
        }
        prop_assert_eq!(w.data.len() as u64, touched, "one data entry per page touched");
    }

    /// With exactly the slots the controller reads, `describe` gives the
    /// same answer; with one slot fewer, `ListTooSmall`.
    #[test]
    fn nvme_prp_list_too_small_by_one((addr, len, page, list_addr) in transfer(4 * MIB)) {
        let (prps, _) = describe_and_walk(addr, len, page, list_entries_for(len, page), list_addr)?;
        let needed = prps.list_entries;
        let (exact, _) = describe_and_walk(addr, len, page, needed, list_addr)?;
        prop_assert_eq!(exact, prps, "the same description with an exact list");
        if needed > 0 {
            let mut short = vec![UNWRITTEN; needed - 1];
            prop_assert_eq!(
                describe(addr, len, page, &mut short, list_addr),
                Err(PrpError::ListTooSmall)
            );
        }
    }

    /// No bytes: `Empty`, whatever the (valid) rest.
    #[test]
    fn nvme_prp_empty(page in page(), a in any::<u64>(), list_addr in list_addr(64 * KIB)) {
        let mut list = vec![UNWRITTEN; 4];
        prop_assert_eq!(describe(a & !3, 0, page, &mut list, list_addr), Err(PrpError::Empty));
    }

    /// An address that is not dword aligned: `Unaligned`.
    #[test]
    fn nvme_prp_unaligned(
        (addr, len, page, list_addr) in transfer(4 * MIB),
        low in 1u64..4,
    ) {
        let mut list = vec![UNWRITTEN; list_entries_for(len, page)];
        prop_assert_eq!(
            describe(addr & !3 | low, len, page, &mut list, list_addr),
            Err(PrpError::Unaligned)
        );
    }

    /// A page size below 4 KiB or not a power of two: `Page`.
    #[test]
    fn nvme_prp_bad_page_size(
        (addr, len, _, _) in transfer(4 * MIB),
        bad in prop_oneof![
            0u32..4096,
            any::<u32>().prop_filter("not a power of two", |p| !p.is_power_of_two()),
            (0u32..12).prop_map(|s| 1 << s),
        ],
    ) {
        let mut list = vec![UNWRITTEN; list_entries_for(len, 4 * KIB)];
        prop_assert_eq!(describe(addr, len, bad, &mut list, 1 << 40), Err(PrpError::Page));
    }

    /// A list that is not page aligned: `Page`.
    #[test]
    fn nvme_prp_unaligned_list(
        (addr, len, page, list_addr) in transfer(4 * MIB),
        offset in 1u64..65536,
    ) {
        prop_assume!(offset % u64::from(page) != 0);
        let mut list = vec![UNWRITTEN; list_entries_for(len, page)];
        prop_assert_eq!(
            describe(addr, len, page, &mut list, list_addr + offset),
            Err(PrpError::Page)
        );
    }

    /// A transfer of up to `max` bytes split into pieces of at most `max`
    /// (the controller's MDTS, whole pages), each piece described with a
    /// list of `list_entries_for(max, page)` slots: the pieces' walks
    /// together cover the transfer. This is how stage 13 sizes a tag's list.
    #[test]
    fn nvme_prp_split_at_mdts(
        (addr, len, page, list_addr) in transfer(4 * MIB),
        mdts in 0u32..=6,
    ) {
        let max = page << mdts;
        let slots = list_entries_for(max, page);
        let mut done = 0;
        while let Some(n) = next_chunk(done, len, max) {
            prop_assert!(n <= max);
            describe_and_walk(addr + u64::from(done), n, page, slots, list_addr)?;
            done += n;
        }
        prop_assert_eq!(done, len);
    }
}

proptest! {
    #![proptest_config(config(200))]

    /// Longer transfers (up to 64 MiB), so that 8 KiB pages need chains too.
    #[test]
    fn nvme_prp_describe_covers_long_transfers((addr, len, page, list_addr) in transfer(64 * MIB)) {
        describe_and_walk(addr, len, page, list_entries_for(len, page), list_addr)?;
    }
}

// ---- vectors, worked out by hand ------------------------------------------------

/// `describe` with a list of `slots` slots: its answer and the list.
fn run(
    addr: u64,
    len: u32,
    page: u32,
    slots: usize,
    list_addr: u64,
) -> (Result<Prps, PrpError>, Vec<u64>) {
    let mut list = vec![UNWRITTEN; slots];
    let r = describe(addr, len, page, &mut list, list_addr);
    (r, list)
}

const LIST: u64 = 0x7_0000_0000;

#[test]
fn nvme_prp_one_page() {
    // 512 bytes at offset 0x200 of a 4 KiB page: PRP1 alone.
    let (r, list) = run(0x1000_0200, 512, 4096, 4, LIST);
    assert_eq!(
        r,
        Ok(Prps {
            prp1: 0x1000_0200,
            prp2: 0,
            list_entries: 0
        })
    );
    assert_eq!(list, [UNWRITTEN; 4]);
    // A whole page, aligned; and the page's last dword.
    assert_eq!(
        run(0x1000_0000, 4096, 4096, 0, LIST).0,
        Ok(Prps {
            prp1: 0x1000_0000,
            prp2: 0,
            list_entries: 0
        })
    );
    assert_eq!(
        run(0x1000_0ffc, 4, 4096, 0, LIST).0,
        Ok(Prps {
            prp1: 0x1000_0ffc,
            prp2: 0,
            list_entries: 0
        })
    );
}

#[test]
fn nvme_prp_two_pages() {
    // 4 KiB from offset 0xe00: 0x200 bytes in the first page, 0xe00 in the
    // second, which PRP2 names.
    let (r, list) = run(0x1000_0e00, 4096, 4096, 0, LIST);
    assert_eq!(
        r,
        Ok(Prps {
            prp1: 0x1000_0e00,
            prp2: 0x1000_1000,
            list_entries: 0
        })
    );
    assert!(list.is_empty());
    // Exactly two aligned pages.
    assert_eq!(
        run(0x2000_0000, 8192, 4096, 0, LIST).0,
        Ok(Prps {
            prp1: 0x2000_0000,
            prp2: 0x2000_1000,
            list_entries: 0
        })
    );
    // 64 KiB pages: 8 bytes across a boundary.
    assert_eq!(
        run(0x1_0000_fffc, 8, 65536, 0, LIST).0,
        Ok(Prps {
            prp1: 0x1_0000_fffc,
            prp2: 0x1_0001_0000,
            list_entries: 0
        })
    );
}

#[test]
fn nvme_prp_short_list() {
    // One byte more than two aligned pages: a third page, so a list of the
    // second and third.
    let (r, list) = run(0x2000_0000, 8193, 4096, 3, LIST);
    assert_eq!(
        r,
        Ok(Prps {
            prp1: 0x2000_0000,
            prp2: LIST,
            list_entries: 2
        })
    );
    assert_eq!(list, [0x2000_1000, 0x2000_2000, UNWRITTEN]);
    // A list of one slot is too small.
    assert_eq!(
        run(0x2000_0000, 8193, 4096, 1, LIST).0,
        Err(PrpError::ListTooSmall)
    );
}

#[test]
fn nvme_prp_full_list_page_without_chain() {
    // 513 aligned 4 KiB pages: PRP1 and 512 list entries, which fill the
    // list page exactly; its last slot is the last data page, not a chain.
    let base = 0x4000_0000u64;
    let (r, list) = run(base, 513 * 4096, 4096, 600, LIST);
    assert_eq!(
        r,
        Ok(Prps {
            prp1: base,
            prp2: LIST,
            list_entries: 512
        })
    );
    for (i, &e) in list[..512].iter().enumerate() {
        assert_eq!(e, base + (i as u64 + 1) * 4096, "slot {i}");
    }
    assert!(list[512..].iter().all(|&e| e == UNWRITTEN));
}

#[test]
fn nvme_prp_chained_list() {
    // 514 aligned 4 KiB pages: 513 list entries do not fit one list page
    // (512 slots), so slot 511 points to the second list page, which holds
    // the last two data pages.
    let base = 0x4000_0000u64;
    let (r, list) = run(base, 514 * 4096, 4096, 600, LIST);
    assert_eq!(
        r,
        Ok(Prps {
            prp1: base,
            prp2: LIST,
            list_entries: 514
        })
    );
    for (i, &e) in list[..511].iter().enumerate() {
        assert_eq!(e, base + (i as u64 + 1) * 4096, "slot {i}");
    }
    assert_eq!(list[511], LIST + 4096, "the chain to the second list page");
    assert_eq!(list[512], base + 512 * 4096);
    assert_eq!(list[513], base + 513 * 4096);
    assert!(list[514..].iter().all(|&e| e == UNWRITTEN));
    // 513 slots are one too few.
    assert_eq!(
        run(base, 514 * 4096, 4096, 513, LIST).0,
        Err(PrpError::ListTooSmall)
    );
}

#[test]
fn nvme_prp_errors() {
    let mut list = [UNWRITTEN; 8];
    assert_eq!(
        describe(0x1000, 0, 4096, &mut list, LIST),
        Err(PrpError::Empty)
    );
    assert_eq!(
        describe(0x1002, 512, 4096, &mut list, LIST),
        Err(PrpError::Unaligned)
    );
    assert_eq!(
        describe(0x1001, 512, 4096, &mut list, LIST),
        Err(PrpError::Unaligned)
    );
    assert_eq!(
        describe(0x1000, 512, 2048, &mut list, LIST),
        Err(PrpError::Page)
    );
    assert_eq!(
        describe(0x1000, 512, 12288, &mut list, LIST),
        Err(PrpError::Page)
    );
    assert_eq!(
        describe(0x1000, 512, 0, &mut list, LIST),
        Err(PrpError::Page)
    );
    assert_eq!(
        describe(0x1000, 512, 4096, &mut list, LIST + 8),
        Err(PrpError::Page)
    );
    assert_eq!(
        describe(0x1000, 512, 8192, &mut list, LIST + 4096),
        Err(PrpError::Page)
    );
    assert_eq!(list, [UNWRITTEN; 8], "nothing written on an error");
}

#[test]
fn nvme_prp_list_entries_for_worst_cases() {
    // Up to one page from anywhere: at most two pages, no list.
    assert_eq!(list_entries_for(1, 4096), 0);
    assert_eq!(list_entries_for(4096, 4096), 0);
    // Two pages' worth starting at a page's last dword touches three pages:
    // two list entries at least.
    assert!(list_entries_for(8192, 4096) >= 2);
    // 4 MiB from a page's last dword: 4 bytes, then 1024 pages (the last
    // one holding 4092 bytes), which a list holds as 511 + 511 + 2 data
    // entries with 2 chains: 1026 slots.
    assert!(list_entries_for(4 * MIB, 4096) >= 1026);
    let (r, _) = run(
        0x1000_0ffc,
        4 * MIB,
        4096,
        list_entries_for(4 * MIB, 4096),
        LIST,
    );
    assert_eq!(r.map(|p| p.list_entries), Ok(1026));
    // The same with 8 KiB pages: 512 data entries, one list page of 1024.
    let (r, _) = run(
        0x1000_1ffc,
        4 * MIB,
        8192,
        list_entries_for(4 * MIB, 8192),
        LIST,
    );
    assert_eq!(r.map(|p| p.list_entries), Ok(512));
}
