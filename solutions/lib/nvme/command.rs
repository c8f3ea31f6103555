// SPDX-License-Identifier: GPL-2.0

//! NVMe commands (64-byte submission queue entries) and completions
//! (16-byte completion queue entries), as the specification lays them out
//! (NVMe 1.4, 4.2 and 4.6), status decoding, and every opcode, feature and
//! Identify CNS value the driver uses, each written once here.
//!
//! Part of the NVMe library (`nvme::command`). `core` only: the host tests
//! check these layouts byte by byte.
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
    /// PSDT 01b (CDW0 bits 15:14): PRP1 and PRP2 hold an SGL descriptor
    /// instead of PRP entries (stage 19's zero copy, on controllers that
    /// take SGLs).
    pub(crate) sgl: bool,
}

impl Command {
    /// Identify (CNS in CDW10) into the 4 KiB page at bus address `prp1`.
    pub(crate) const fn identify(cns: u32, nsid: u32, prp1: u64) -> Command {
        Command {
            opcode: admin_opc::IDENTIFY,
            nsid,
            prp1,
            prp2: 0,
            cdw: [cns, 0, 0, 0, 0, 0],
            sgl: false,
        }
    }

    // ANCHOR: builders
    /// Set Features: feature `fid` (CDW10) to `value` (CDW11), for features
    /// whose value fits in CDW11 (no data buffer).
    pub(crate) const fn set_features(fid: u32, value: u32) -> Command {
        Command {
            opcode: admin_opc::SET_FEATURES,
            nsid: 0,
            prp1: 0,
            prp2: 0,
            cdw: [fid, value, 0, 0, 0, 0],
            sgl: false,
        }
    }

    /// Abort the command with identifier `cid` on submission queue `sqid`.
    pub(crate) const fn abort(sqid: u16, cid: u16) -> Command {
        Command {
            opcode: admin_opc::ABORT,
            nsid: 0,
            prp1: 0,
            prp2: 0,
            // Submission queue in 15:0, command identifier in 31:16.
            cdw: [(cid as u32) << 16 | sqid as u32, 0, 0, 0, 0, 0],
            sgl: false,
        }
    }

    /// An Asynchronous Event Request: the controller completes it when an
    /// event occurs, which may be never.
    pub(crate) const fn async_event_request() -> Command {
        Command {
            opcode: admin_opc::ASYNC_EVENT_REQUEST,
            nsid: 0,
            prp1: 0,
            prp2: 0,
            cdw: [0; 6],
            sgl: false,
        }
    }

    /// Get Log Page `lid` (controller-wide), its first `dwords` dwords into
    /// the page at bus address `prp1` (at most 4 KiB: one PRP).
    pub(crate) const fn get_log_page(lid: u32, dwords: u16, prp1: u64) -> Command {
        Command {
            opcode: admin_opc::GET_LOG_PAGE,
            // All namespaces: the controller-wide log.
            nsid: 0xffff_ffff,
            prp1,
            prp2: 0,
            // Number of Dwords Lower, 0's based, in 31:16; the page in 7:0.
            cdw: [lid | (dwords.saturating_sub(1) as u32) << 16, 0, 0, 0, 0, 0],
            sgl: false,
        }
    }
    // ANCHOR_END: builders

    /// The 16 dwords of the submission queue entry, with identifier `cid`.
    ///
    /// Dwords are little-endian in memory; on x86 a `u32` already is.
    pub(crate) const fn to_dwords(self, cid: u16) -> [u32; 16] {
        [
            // CDW0: opcode, fused operation 0, PSDT (00b PRPs, 01b an SGL),
            // identifier.
            self.opcode as u32 | (self.sgl as u32) << 14 | (cid as u32) << 16,
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

// ANCHOR: opcodes
// ANCHOR: admin_opc
/// Admin command set opcodes (NVMe 1.4, figure 139).
pub(crate) mod admin_opc {
    pub(crate) const DELETE_IO_SQ: u8 = 0x00;
    pub(crate) const CREATE_IO_SQ: u8 = 0x01;
    pub(crate) const GET_LOG_PAGE: u8 = 0x02;
    pub(crate) const DELETE_IO_CQ: u8 = 0x04;
    pub(crate) const CREATE_IO_CQ: u8 = 0x05;
    pub(crate) const IDENTIFY: u8 = 0x06;
    pub(crate) const ABORT: u8 = 0x08;
    pub(crate) const SET_FEATURES: u8 = 0x09;
    pub(crate) const GET_FEATURES: u8 = 0x0a;
    pub(crate) const ASYNC_EVENT_REQUEST: u8 = 0x0c;
    pub(crate) const KEEP_ALIVE: u8 = 0x18;
    pub(crate) const DOORBELL_BUFFER_CONFIG: u8 = 0x7c;
}
// ANCHOR_END: admin_opc

/// NVM command set opcodes (NVMe 1.4, figure 346).
pub(crate) mod nvm_opc {
    pub(crate) const FLUSH: u8 = 0x00;
    pub(crate) const WRITE: u8 = 0x01;
    pub(crate) const READ: u8 = 0x02;
    pub(crate) const WRITE_UNCORRECTABLE: u8 = 0x04;
    pub(crate) const WRITE_ZEROES: u8 = 0x08;
    pub(crate) const DATASET_MANAGEMENT: u8 = 0x09;
    pub(crate) const VERIFY: u8 = 0x0c;
}

/// Feature identifiers for Set/Get Features (NVMe 1.4, figure 271).
pub(crate) mod feature {
    pub(crate) const ARBITRATION: u32 = 0x01;
    pub(crate) const TEMPERATURE_THRESHOLD: u32 = 0x04;
    pub(crate) const VOLATILE_WRITE_CACHE: u32 = 0x06;
    pub(crate) const NUMBER_OF_QUEUES: u32 = 0x07;
    pub(crate) const ASYNC_EVENT_CONFIG: u32 = 0x0b;
    pub(crate) const AUTONOMOUS_POWER_STATE: u32 = 0x0c;
    pub(crate) const HOST_MEMORY_BUFFER: u32 = 0x0d;
    pub(crate) const TIMESTAMP: u32 = 0x0e;
    pub(crate) const HOST_IDENTIFIER: u32 = 0x81;
}

/// Identify's Controller or Namespace Structure values (CNS, CDW10 7:0).
pub(crate) mod cns {
    /// The namespace data structure of `nsid`.
    pub(crate) const NAMESPACE: u32 = 0x00;
    /// The controller data structure.
    pub(crate) const CONTROLLER: u32 = 0x01;
}

/// Log page identifiers for Get Log Page (NVMe 1.4, figure 191).
pub(crate) mod log_page {
    /// SMART / Health Information.
    pub(crate) const SMART: u32 = 0x02;
}
// ANCHOR_END: opcodes

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

    /// The status the driver makes up for a command it cancels: Status
    /// Code Type 3 (path related), Status Code 0x71, "Command Aborted By
    /// Host", as the C driver does (`NVME_SC_HOST_ABORTED_CMD`).
    pub(crate) const HOST_ABORTED: Status = Status((3 << 8) | 0x71);

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

impl Status {
    /// The status as the driver logs it, with `{:?}` (the kernel's `{}`
    /// takes only the kernel's own `Display`, which a host-tested file
    /// cannot name): "invalid field in command (SCT 0, SC 0x02)", with ", do
    /// not retry" if DNR is set.
    pub(crate) const fn explained(self) -> Explained {
        Explained(self)
    }
}

/// A [`Status`], formatted for the log (see [`Status::explained`]).
pub(crate) struct Explained(Status);

impl core::fmt::Debug for Explained {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let s = self.0;
        let dnr = if s.dnr() { ", do not retry" } else { "" };
        write!(
            f,
            "{} (SCT {}, SC {:#04x}{})",
            s.describe(),
            s.sct(),
            s.sc(),
            dnr
        )
    }
}
// ANCHOR_END: completion

const _: () = assert!(
    core::mem::size_of::<[u32; 16]>() == 64,
    "an SQE is 64 bytes"
);
const _: () = assert!(core::mem::size_of::<[u32; 4]>() == 16, "a CQE is 16 bytes");
