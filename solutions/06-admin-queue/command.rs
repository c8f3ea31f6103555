// SPDX-License-Identifier: GPL-2.0

//! NVMe commands (64-byte submission queue entries) and completions
//! (16-byte completion queue entries), as the specification lays them out
//! (NVMe 1.4, 4.2 and 4.6), and status decoding.
//!
//! `core` only: the host tests check these layouts byte by byte.
#![forbid(unsafe_code)]

// ANCHOR: command
/// An admin or I/O command, before it is given a command identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Command {
    /// Opcode (CDW0 bits 7:0).
    pub(crate) opcode: u8,
    /// Namespace identifier (CDW1).
    pub(crate) nsid: u32,
    /// PRP entry 1: bus address of the first data page (CDW6-7).
    pub(crate) prp1: u64,
    /// PRP entry 2 (CDW8-9).
    pub(crate) prp2: u64,
    /// Command-specific dwords 10 to 15.
    pub(crate) cdw: [u32; 6],
}

/// Admin opcode: Identify.
pub(crate) const OPC_IDENTIFY: u8 = 0x06;
/// Identify CNS: the namespace data structure of `nsid`.
pub(crate) const CNS_NAMESPACE: u32 = 0x00;
/// Identify CNS: the controller data structure.
pub(crate) const CNS_CONTROLLER: u32 = 0x01;

impl Command {
    /// Identify (CNS in CDW10) into the 4 KiB page at bus address `prp1`.
    pub(crate) const fn identify(cns: u32, nsid: u32, prp1: u64) -> Command {
        Command {
            opcode: OPC_IDENTIFY,
            nsid,
            prp1,
            prp2: 0,
            cdw: [cns, 0, 0, 0, 0, 0],
        }
    }

    /// The 16 dwords of the submission queue entry, with identifier `cid`.
    ///
    /// Dwords are little-endian in memory; on x86 a `u32` already is.
    pub(crate) const fn to_dwords(self, cid: u16) -> [u32; 16] {
        [
            // CDW0: opcode, fused operation 0, PRPs (PSDT 0), identifier.
            self.opcode as u32 | (cid as u32) << 16,
            self.nsid,
            0,
            0,
            // Metadata pointer: unused.
            0,
            0,
            self.prp1 as u32,
            (self.prp1 >> 32) as u32,
            self.prp2 as u32,
            (self.prp2 >> 32) as u32,
            self.cdw[0],
            self.cdw[1],
            self.cdw[2],
            self.cdw[3],
            self.cdw[4],
            self.cdw[5],
        ]
    }
}
// ANCHOR_END: command

// ANCHOR: completion
/// A completion queue entry, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    /// Command-specific result (DW0).
    pub(crate) result: u32,
    /// How far the controller has consumed the submission queue (DW2 15:0).
    pub(crate) sq_head: u16,
    /// Which submission queue the command came from (DW2 31:16).
    pub(crate) sq_id: u16,
    /// The identifier of the command this completes (DW3 15:0).
    pub(crate) cid: u16,
    /// The phase tag (DW3 bit 16): flips each time the queue wraps.
    pub(crate) phase: bool,
    /// The status field (DW3 31:17).
    pub(crate) status: Status,
}

impl Completion {
    /// Decodes the four dwords of a completion queue entry.
    pub(crate) const fn from_dwords(dw: [u32; 4]) -> Completion {
        Completion {
            result: dw[0],
            sq_head: dw[2] as u16,
            sq_id: (dw[2] >> 16) as u16,
            cid: dw[3] as u16,
            phase: (dw[3] >> 16) & 1 == 1,
            status: Status((dw[3] >> 17) as u16),
        }
    }
}

/// The phase tag of a completion entry's DW3, read alone while polling.
pub(crate) const fn phase_of(dw3: u32) -> bool {
    (dw3 >> 16) & 1 == 1
}

/// A completion's status field (15 bits, without the phase tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Status(pub(crate) u16);

impl Status {
    /// Status Code (bits 7:0).
    pub(crate) const fn sc(self) -> u8 {
        self.0 as u8
    }

    /// Status Code Type (bits 10:8): 0 generic, 1 command specific,
    /// 2 media errors, 3 path errors, 7 vendor specific.
    pub(crate) const fn sct(self) -> u8 {
        ((self.0 >> 8) & 0x7) as u8
    }

    /// Do Not Retry (bit 14): the same command would fail again.
    pub(crate) const fn dnr(self) -> bool {
        self.0 & (1 << 14) != 0
    }

    /// Whether the command succeeded.
    pub(crate) const fn is_success(self) -> bool {
        self.sct() == 0 && self.sc() == 0
    }

    /// A short description of the generic status codes the driver may see.
    pub(crate) const fn describe(self) -> &'static str {
        match (self.sct(), self.sc()) {
            (0, 0x00) => "success",
            (0, 0x01) => "invalid command opcode",
            (0, 0x02) => "invalid field in command",
            (0, 0x04) => "data transfer error",
            (0, 0x06) => "internal error",
            (0, 0x0b) => "invalid namespace or format",
            (0, 0x13) => "PRP offset invalid",
            (1, _) => "command specific error",
            (2, _) => "media error",
            _ => "other error",
        }
    }
}
// ANCHOR_END: completion

const _: () = assert!(
    core::mem::size_of::<[u32; 16]>() == 64,
    "an SQE is 64 bytes"
);
const _: () = assert!(core::mem::size_of::<[u32; 4]>() == 16, "a CQE is 16 bytes");
