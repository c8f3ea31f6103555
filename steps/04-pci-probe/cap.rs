// SPDX-License-Identifier: GPL-2.0

//! The Controller Capabilities register (CAP, NVMe 1.4, section 3.1.1),
//! decoded from its raw 64 bits, and what follows from it: queue sizes,
//! timeouts, page sizes and where each queue's doorbells are.
//!
//! Part of the NVMe library (`nvme::cap`). This file uses nothing but
//! `core`: the host tests compile the very same file and check it against
//! values worked out from the specification.
#![forbid(unsafe_code)]

// ANCHOR: cap
/// Controller Capabilities (CAP, offset 0x00, 64 bits), decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cap {
    /// Maximum Queue Entries Supported, 0's based (bits 15:0).
    pub(crate) mqes: u16,
    /// Contiguous Queues Required (bit 16).
    pub(crate) cqr: bool,
    /// Timeout: worst-case time to become ready, in 500 ms units (31:24).
    pub(crate) to: u8,
    /// Doorbell Stride: doorbells are `4 << dstrd` bytes apart (35:32).
    pub(crate) dstrd: u8,
    /// Command Sets Supported, a bit mask (44:37); bit 0 is the NVM set.
    pub(crate) css: u8,
    /// Memory Page Size Minimum: `4096 << mpsmin` bytes (51:48).
    pub(crate) mpsmin: u8,
    /// Memory Page Size Maximum: `4096 << mpsmax` bytes (55:52).
    pub(crate) mpsmax: u8,
}

/// Bits `hi..=lo` of `raw`, as a `u64`.
const fn bits(raw: u64, hi: u32, lo: u32) -> u64 {
    (raw >> lo) & ((1u64 << (hi - lo + 1)) - 1)
}

impl Cap {
    // ANCHOR: from_raw
    /// Decodes the raw 64-bit register.
    pub(crate) const fn from_raw(raw: u64) -> Cap {
        // TODO (exercise 1): Decode each field from its bit range (NVMe 1.4,
        // 3.1.1; the ranges are in the field docs above) with
        // `bits(raw, hi, lo)`, e.g. `mqes: bits(raw, 15, 0) as u16`; CQR is a
        // bool (`== 1`).
        // Tests: "rnvme is bound to the NVMe controller ..." (with CSS decoded
        // as 0, probe refuses the controller), "logs CAP.MQES, CQR and DSTRD
        // ..." and "logs CAP.TO, CSS, MPSMIN and MPSMAX ..."; on the host,
        // `nvme_vectors::*` and `nvme_proptest::*`
        // (`scripts/host-test.sh --tree steps --filter nvme`).
        let _ = bits(raw, 0, 0);
        Cap {
            mqes: 0,
            cqr: false,
            to: 0,
            dstrd: 0,
            css: 0,
            mpsmin: 0,
            mpsmax: 0,
        }
    }
    // ANCHOR_END: from_raw

    /// The most entries a queue may have (MQES is 0's based).
    pub(crate) const fn max_queue_entries(&self) -> u32 {
        self.mqes as u32 + 1
    }

    /// Bytes between two doorbell registers.
    pub(crate) const fn doorbell_stride(&self) -> usize {
        4 << self.dstrd
    }

    /// How long the controller may take to become (not) ready, in ms.
    pub(crate) const fn timeout_ms(&self) -> u32 {
        self.to as u32 * 500
    }

    /// Smallest memory page size the controller supports, in bytes.
    pub(crate) const fn min_page_size(&self) -> usize {
        4096 << self.mpsmin
    }

    /// Largest memory page size the controller supports, in bytes.
    pub(crate) const fn max_page_size(&self) -> usize {
        4096 << self.mpsmax
    }

    /// Whether the controller implements the NVM command set.
    pub(crate) const fn supports_nvm(&self) -> bool {
        self.css & 1 != 0
    }

    // ANCHOR: doorbells
    /// Offset in BAR0 of queue `qid`'s submission queue tail doorbell.
    pub(crate) const fn sq_tail_doorbell(&self, qid: u16) -> usize {
        0x1000 + (2 * qid as usize) * self.doorbell_stride()
    }

    /// Offset in BAR0 of queue `qid`'s completion queue head doorbell.
    pub(crate) const fn cq_head_doorbell(&self, qid: u16) -> usize {
        0x1000 + (2 * qid as usize + 1) * self.doorbell_stride()
    }
    // ANCHOR_END: doorbells
}
// ANCHOR_END: cap
