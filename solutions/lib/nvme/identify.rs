// SPDX-License-Identifier: GPL-2.0

//! The Identify data structures (NVMe 1.4, figures 247 and 249): the fields
//! the driver needs, read from the 4 KiB page the controller fills in.
//!
//! Part of the NVMe library (`nvme::identify`). `core` only, and careful
//! with its input: a short or odd page gives `None` or clamped values, never
//! a panic.
#![forbid(unsafe_code)]

/// Bytes of an Identify data structure.
pub(crate) const IDENTIFY_SIZE: usize = 4096;

// ANCHOR: idctrl
/// What the driver keeps of Identify Controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdCtrl {
    /// PCI vendor ID (bytes 1:0).
    pub(crate) vid: u16,
    /// Serial number, ASCII, space padded (23:4).
    pub(crate) sn: [u8; 20],
    /// Model number, ASCII, space padded (63:24).
    pub(crate) mn: [u8; 40],
    /// Firmware revision, ASCII, space padded (71:64).
    pub(crate) fr: [u8; 8],
    /// Maximum data transfer size: `min_page_size << mdts` bytes, 0 for no
    /// limit (byte 77).
    pub(crate) mdts: u8,
    /// Controller ID (79:78).
    pub(crate) cntlid: u16,
    /// Optional Admin Command Support (257:256): bit 8, Doorbell Buffer
    /// Config (shadow doorbells).
    pub(crate) oacs: u16,
    /// Number of namespaces (519:516).
    pub(crate) nn: u32,
    /// Optional NVM Command Support (521:520): bit 2, Dataset Management.
    pub(crate) oncs: u16,
    /// Volatile Write Cache (525): bit 0, present.
    pub(crate) vwc: u8,
    /// SGL Support (539:536): bits 1:0 not 00 if NVM commands take SGLs.
    pub(crate) sgls: u32,
}

impl IdCtrl {
    /// Reads the fields from an Identify Controller page.
    pub(crate) fn parse(page: &[u8]) -> Option<IdCtrl> {
        Some(IdCtrl {
            vid: le16(page, 0)?,
            sn: array(page, 4)?,
            mn: array(page, 24)?,
            fr: array(page, 64)?,
            mdts: *page.get(77)?,
            cntlid: le16(page, 78)?,
            oacs: le16(page, 256)?,
            nn: le32(page, 516)?,
            oncs: le16(page, 520)?,
            vwc: *page.get(525)?,
            sgls: le32(page, 536)?,
        })
    }

    /// The largest transfer in bytes, given the controller's minimum page
    /// size; `None` if there is no limit. A limit too large for `usize`
    /// saturates (it is no limit in practice either, but stays a limit).
    pub(crate) fn max_transfer(&self, min_page_size: usize) -> Option<usize> {
        match self.mdts {
            0 => None,
            m => {
                let pages = 1usize.checked_shl(u32::from(m)).unwrap_or(usize::MAX);
                Some(min_page_size.saturating_mul(pages))
            }
        }
    }

    /// Whether the controller takes SGLs for NVM commands (SGLS bits 1:0
    /// not 00).
    pub(crate) const fn supports_sgl(&self) -> bool {
        self.sgls & 0b11 != 0
    }

    /// Whether the controller has a volatile write cache (VWC bit 0): then
    /// a completed Write may still be in it, until a Flush.
    pub(crate) const fn has_write_cache(&self) -> bool {
        self.vwc & 1 != 0
    }

    /// Whether the controller takes Dataset Management (ONCS bit 2), the
    /// command that deallocates blocks (a discard).
    pub(crate) const fn supports_dsm(&self) -> bool {
        self.oncs & (1 << 2) != 0
    }
}
// ANCHOR_END: idctrl

// ANCHOR: idns
/// What the driver keeps of Identify Namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IdNs {
    /// Namespace size in logical blocks (bytes 7:0).
    pub(crate) nsze: u64,
    /// Index of the LBA format in use (FLBAS bits 3:0, byte 26).
    pub(crate) format: u8,
    /// log2 of the logical block size of that format (LBADS).
    pub(crate) lbads: u8,
    /// Bytes of metadata with each block in that format (MS).
    pub(crate) ms: u16,
    /// Deallocate Logical Block Features (byte 33): bits 2:0 say what a
    /// deallocated block reads as (001b: zeroes, 010b: ones, 000b: not said).
    pub(crate) dlfeat: u8,
}

impl IdNs {
    /// Reads the fields from an Identify Namespace page.
    pub(crate) fn parse(page: &[u8]) -> Option<IdNs> {
        let format = *page.get(26)? & 0xf;
        // LBA format descriptors: 4 bytes each from byte 128; MS is the
        // descriptor's bytes 1:0, LBADS its byte 2.
        let lbaf = 128 + 4 * usize::from(format);
        let lbads = *page.get(lbaf + 2)?;
        Some(IdNs {
            nsze: le64(page, 0)?,
            format,
            lbads,
            ms: le16(page, lbaf)?,
            dlfeat: *page.get(33)?,
        })
    }

    /// The logical block size in bytes; `None` if the driver cannot drive
    /// the format: LBADS out of the range the specification allows
    /// (9..=31: 512 bytes and up), or metadata with each block (MS not 0).
    /// The driver moves data alone (its commands' metadata pointer is 0,
    /// its PRPs describe the data): the controller would DMA a separate
    /// buffer's metadata to bus address 0, or, with extended LBAs (FLBAS
    /// bit 4), every block would be MS bytes longer than the driver thinks.
    pub(crate) fn block_size(&self) -> Option<u32> {
        match (self.lbads, self.ms) {
            (9..=31, 0) => Some(1 << self.lbads),
            _ => None,
        }
    }
}
// ANCHOR_END: idns

/// The text of a space-padded ASCII field, without the padding; bytes that
/// are not printable ASCII end it.
pub(crate) fn ascii(field: &[u8]) -> &str {
    let end = field
        .iter()
        .position(|b| !(0x20..0x7f).contains(b))
        .unwrap_or(field.len());
    let text = field.get(..end).unwrap_or_default();
    let text = core::str::from_utf8(text).unwrap_or_default();
    text.trim_end_matches(' ')
}

fn array<const N: usize>(page: &[u8], at: usize) -> Option<[u8; N]> {
    page.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn le16(page: &[u8], at: usize) -> Option<u16> {
    array(page, at).map(u16::from_le_bytes)
}

fn le32(page: &[u8], at: usize) -> Option<u32> {
    array(page, at).map(u32::from_le_bytes)
}

fn le64(page: &[u8], at: usize) -> Option<u64> {
    array(page, at).map(u64::from_le_bytes)
}
