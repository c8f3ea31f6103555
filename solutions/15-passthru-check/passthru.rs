// SPDX-License-Identifier: GPL-2.0

//! The NVMe passthrough ioctls nvme-cli uses, as user space lays them out
//! (`include/uapi/linux/nvme_ioctl.h`), and the rules a command from user
//! space must follow before the driver lets it reach the controller.
//!
//! `core` only (and the NVMe library's opcodes): the host tests feed `parse` and `check` every malformed
//! command they can think of. The kernel side (`chardev.rs`) copies the
//! bytes in and the result out.
#![forbid(unsafe_code)]

use core::mem::{
    offset_of,
    size_of, //
};

use crate::nvme::command::{
    admin_opc,
    feature,
    nvm_opc, //
};

// ANCHOR: layout
/// `struct nvme_passthru_cmd` (`NVME_IOCTL_ADMIN_CMD`, `NVME_IOCTL_IO_CMD`)
/// with `R = u32`, and `struct nvme_passthru_cmd64` (`NVME_IOCTL_ADMIN64_CMD`,
/// `NVME_IOCTL_IO64_CMD`) with `R = u64`: the same up to `timeout_ms`, then
/// the result (the 64-bit one after 4 bytes the header calls `rsvd2`, here
/// the padding `repr(C)` puts before a `u64`), mirrored field by field. The
/// driver never casts user bytes to it: it gives the offsets and the size,
/// which the asserts below pin to the header's.
#[repr(C)]
pub(crate) struct PassthruCmdOf<R> {
    pub(crate) opcode: u8,
    pub(crate) flags: u8,
    pub(crate) rsvd1: u16,
    pub(crate) nsid: u32,
    pub(crate) cdw2: u32,
    pub(crate) cdw3: u32,
    pub(crate) metadata: u64,
    pub(crate) addr: u64,
    pub(crate) metadata_len: u32,
    pub(crate) data_len: u32,
    pub(crate) cdw10: [u32; 6],
    pub(crate) timeout_ms: u32,
    pub(crate) result: R,
}

/// `struct nvme_passthru_cmd`: a 32-bit result.
pub(crate) type PassthruCmd = PassthruCmdOf<u32>;
/// `struct nvme_passthru_cmd64`: a 64-bit result.
pub(crate) type PassthruCmd64 = PassthruCmdOf<u64>;

const _: () = assert!(size_of::<PassthruCmd>() == 72);
const _: () = assert!(size_of::<PassthruCmd64>() == 80);
const _: () = assert!(offset_of!(PassthruCmd, data_len) == 36);
const _: () = assert!(offset_of!(PassthruCmd64, timeout_ms) == offset_of!(PassthruCmd, timeout_ms));
const _: () = assert!(offset_of!(PassthruCmd64, result) == 72);
// ANCHOR_END: layout

// ANCHOR: numbers
/// `_IO('N', 0x40)`: which namespace a namespace node is.
pub(crate) const NVME_IOCTL_ID: u32 = 0x4e40;
/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`.
pub(crate) const NVME_IOCTL_ADMIN_CMD: u32 = ioc_rw(0x41, size_of::<PassthruCmd>());
/// `_IOWR('N', 0x43, struct nvme_passthru_cmd)`.
pub(crate) const NVME_IOCTL_IO_CMD: u32 = ioc_rw(0x43, size_of::<PassthruCmd>());
/// `_IOWR('N', 0x47, struct nvme_passthru_cmd64)`.
pub(crate) const NVME_IOCTL_ADMIN64_CMD: u32 = ioc_rw(0x47, size_of::<PassthruCmd64>());
/// `_IOWR('N', 0x48, struct nvme_passthru_cmd64)`.
pub(crate) const NVME_IOCTL_IO64_CMD: u32 = ioc_rw(0x48, size_of::<PassthruCmd64>());

/// `_IOWR('N', nr, size)` on x86: direction 3 in bits 31:30, the size in
/// 29:16, the type in 15:8, the number in 7:0.
const fn ioc_rw(nr: u32, size: usize) -> u32 {
    (3 << 30) | ((size as u32) << 16) | ((b'N' as u32) << 8) | nr
}

const _: () = assert!(NVME_IOCTL_ADMIN_CMD == 0xc048_4e41);
const _: () = assert!(NVME_IOCTL_IO_CMD == 0xc048_4e43);
const _: () = assert!(NVME_IOCTL_ADMIN64_CMD == 0xc050_4e47);
const _: () = assert!(NVME_IOCTL_IO64_CMD == 0xc050_4e48);
// ANCHOR_END: numbers

/// Which queue a passthrough command goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Admin,
    Io,
}

/// Which of the two layouts the ioctl carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// 72 bytes, a 32-bit result.
    Short,
    /// 80 bytes, a 64-bit result.
    Long,
}

impl Layout {
    /// Bytes user space passes.
    pub(crate) const fn size(self) -> usize {
        match self {
            Layout::Short => size_of::<PassthruCmd>(),
            Layout::Long => size_of::<PassthruCmd64>(),
        }
    }

    /// Where the result goes back, and how many bytes it has.
    pub(crate) const fn result_field(self) -> (usize, usize) {
        match self {
            Layout::Short => (offset_of!(PassthruCmd, result), 4),
            Layout::Long => (offset_of!(PassthruCmd64, result), 8),
        }
    }
}

/// What an ioctl number asks for, or `None` for one the driver does not
/// answer (`ENOTTY`).
pub(crate) const fn decode(cmd: u32) -> Option<(Target, Layout)> {
    match cmd {
        NVME_IOCTL_ADMIN_CMD => Some((Target::Admin, Layout::Short)),
        NVME_IOCTL_ADMIN64_CMD => Some((Target::Admin, Layout::Long)),
        NVME_IOCTL_IO_CMD => Some((Target::Io, Layout::Short)),
        NVME_IOCTL_IO64_CMD => Some((Target::Io, Layout::Long)),
        _ => None,
    }
}

/// A passthrough command as user space filled it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Passthru {
    pub(crate) opcode: u8,
    pub(crate) flags: u8,
    pub(crate) nsid: u32,
    pub(crate) cdw2: u32,
    pub(crate) cdw3: u32,
    pub(crate) metadata: u64,
    pub(crate) addr: u64,
    pub(crate) metadata_len: u32,
    pub(crate) data_len: u32,
    /// CDW10 to CDW15.
    pub(crate) cdw: [u32; 6],
    pub(crate) timeout_ms: u32,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(w)
}

// ANCHOR: parse
/// Reads the fields both layouts share from the bytes user space passed;
/// `None` if there are too few.
pub(crate) fn parse(b: &[u8]) -> Option<Passthru> {
    if b.len() < offset_of!(PassthruCmd, result) {
        return None;
    }
    let mut cdw = [0u32; 6];
    for (i, w) in cdw.iter_mut().enumerate() {
        *w = u32_at(b, offset_of!(PassthruCmd, cdw10) + 4 * i);
    }
    Some(Passthru {
        opcode: b[offset_of!(PassthruCmd, opcode)],
        flags: b[offset_of!(PassthruCmd, flags)],
        nsid: u32_at(b, offset_of!(PassthruCmd, nsid)),
        cdw2: u32_at(b, offset_of!(PassthruCmd, cdw2)),
        cdw3: u32_at(b, offset_of!(PassthruCmd, cdw3)),
        metadata: u64_at(b, offset_of!(PassthruCmd, metadata)),
        addr: u64_at(b, offset_of!(PassthruCmd, addr)),
        metadata_len: u32_at(b, offset_of!(PassthruCmd, metadata_len)),
        data_len: u32_at(b, offset_of!(PassthruCmd, data_len)),
        cdw,
        timeout_ms: u32_at(b, offset_of!(PassthruCmd, timeout_ms)),
    })
}
// ANCHOR_END: parse

/// Where a passthrough command's data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// No data.
    None,
    /// From user space to the controller (e.g. Write, Set Features).
    ToDevice,
    /// From the controller to user space (e.g. Read, Identify).
    FromDevice,
}

/// Why a passthrough command is refused before it reaches the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A field the driver does not support is set (flags, metadata), or the
    /// data does not fit the command: `EINVAL`.
    Invalid,
    /// The command is not one user space may send through this driver,
    /// whatever its fields say: it would take the driver's own queues or
    /// controller state from under it (the queues, Abort, Doorbell Buffer
    /// Config, Asynchronous Event Request), change what the driver knows
    /// of the namespace or the controller while it drives them (Format
    /// NVM, Sanitize, Firmware Commit, Namespace Management, most Set
    /// Features), or do what nothing tells the driver (vendor-specific and
    /// reserved opcodes and features, which may carry addresses the
    /// controller would DMA to): `EPERM`.
    Forbidden,
}

// ANCHOR: check
/// Checks a passthrough command for a buffer of at most `max_len` bytes and
/// a namespace of `block_size`-byte blocks, and says which way its data
/// goes.
///
/// The driver describes its whole buffer to the controller, and no
/// command `check` lets through carries another address (the allow-lists
/// of rules 2 and 3 see to that: a Host Memory Buffer or a vendor's command
/// would point the controller at memory the driver never gave it). So the
/// controller cannot DMA outside the buffer, and what `check` must also
/// make sure of is that the command cannot transfer more than `max_len`,
/// and that `data_len` is what it transfers. The rules, in the order they
/// apply (the first that refuses decides):
/// 1. `flags`, `metadata` and `metadata_len` must be 0 (not supported):
///    else `Invalid`.
/// 2. On the admin queue, only the commands that ask the controller
///    something, and change nothing the driver relies on, are user
///    space's: Get Log Page, Identify, Get Features, Set Features and Keep
///    Alive. Any other admin opcode is `Forbidden`, whatever else the
///    command says (an allow-list: a new or vendor opcode is refused, not
///    guessed at). On an I/O queue, likewise, only Flush, Write, Read,
///    Write Uncorrectable, Write Zeroes, Dataset Management and Verify.
/// 3. Get Features of a feature (FID, CDW10 bits 7:0) other than 01h-0Ch,
///    0Eh (Timestamp) and 81h (Host Identifier), and Set Features of one
///    other than 01h (Arbitration), 04h (Temperature Threshold), 0Eh and
///    81h: `Forbidden`. The others are the driver's (Number of Queues,
///    the interrupts, Volatile Write Cache, which the disk turned off),
///    would stall it (power states, Keep Alive Timer), or would give the
///    controller an address (Host Memory Buffer, 0Dh: CDW13/14 point to a
///    list of host memory it may then use as its own).
/// 4. The data direction is the opcode's bits 1:0: 00 none, 01 to the
///    device, 10 from it (no opcode rule 2 lets through has 11, both ways).
/// 5. A command without data (direction none, or Get/Set Features with
///    `data_len` 0: most features carry no data, whatever the opcode's
///    bits say) returns `Direction::None`; its `data_len` must be 0 (else
///    `Invalid`). Get/Set Features count as without data only if
///    `max_len` can hold the 4 KiB page a feature may transfer.
/// 6. With data, `data_len` is 1..=`max_len`, and the command is one whose
///    own fields bound its transfer; the transfer must fit `max_len`:
///    - Read and Write: `(CDW12 & 0xffff) + 1` blocks of `block_size`;
///      Dataset Management: `(CDW10 & 0xff) + 1` ranges of 16 bytes; Get
///      Log Page: `(CDW10 >> 16 | (CDW11 & 0xffff) << 16) + 1` dwords.
///      Each must transfer exactly `data_len`.
///    - Identify, Get/Set Features: one 4 KiB page, which must fit
///      `max_len` (the controller writes the whole page into the driver's
///      buffer); `data_len` may be less than 4096 (the caller wants only
///      the start), never more.
///    - Anything else with data: `Invalid`.
pub(crate) fn check(
    c: &Passthru,
    target: Target,
    max_len: u32,
    block_size: u32,
) -> Result<Direction, Refused> {
    if c.flags != 0 || c.metadata != 0 || c.metadata_len != 0 {
        return Err(Refused::Invalid);
    }
    // Format NVM would change the block size the driver sized its disk
    // and its checks with, Sanitize and Namespace Management the data and
    // the capacity under the disk, Firmware Commit may reset the
    // controller, an Asynchronous Event Request waits for an event that
    // may never come: none of them is user space's to send.
    if target == Target::Admin
        && !matches!(
            c.opcode,
            admin_opc::GET_LOG_PAGE
                | admin_opc::IDENTIFY
                | admin_opc::GET_FEATURES
                | admin_opc::SET_FEATURES
                | admin_opc::KEEP_ALIVE
        )
    {
        return Err(Refused::Forbidden);
    }
    // The NVM commands whose effect is on the namespace's blocks alone: a
    // vendor's (80h-FFh) may take addresses in its CDWs.
    if target == Target::Io
        && !matches!(
            c.opcode,
            nvm_opc::FLUSH
                | nvm_opc::WRITE
                | nvm_opc::READ
                | nvm_opc::WRITE_UNCORRECTABLE
                | nvm_opc::WRITE_ZEROES
                | nvm_opc::DATASET_MANAGEMENT
                | nvm_opc::VERIFY
        )
    {
        return Err(Refused::Forbidden);
    }
    let fid = c.cdw[0] & 0xff;
    let feature_allowed = match c.opcode {
        admin_opc::GET_FEATURES => matches!(
            fid,
            feature::ARBITRATION
                ..=feature::AUTONOMOUS_POWER_STATE | feature::TIMESTAMP | feature::HOST_IDENTIFIER
        ),
        admin_opc::SET_FEATURES => matches!(
            fid,
            feature::ARBITRATION
                | feature::TEMPERATURE_THRESHOLD
                | feature::TIMESTAMP
                | feature::HOST_IDENTIFIER
        ),
        _ => true,
    };
    if target == Target::Admin && !feature_allowed {
        return Err(Refused::Forbidden);
    }
    let direction = match c.opcode & 0b11 {
        0b00 => Direction::None,
        0b01 => Direction::ToDevice,
        0b10 => Direction::FromDevice,
        // Both ways: not with a single buffer (no opcode let through above
        // has these bits).
        _ => return Err(Refused::Invalid),
    };
    // Get and Set Features carry data only for some features: without
    // data they are commands without data. (A feature that does transfer,
    // at most a 4 KiB page, still lands in the buffer the driver describes,
    // which must hold that page.)
    let optional = target == Target::Admin
        && matches!(c.opcode, admin_opc::GET_FEATURES | admin_opc::SET_FEATURES)
        && max_len >= 4096;
    if direction == Direction::None || (optional && c.data_len == 0) {
        return if c.data_len == 0 {
            Ok(Direction::None)
        } else {
            Err(Refused::Invalid)
        };
    }
    if c.data_len == 0 || c.data_len > max_len {
        return Err(Refused::Invalid);
    }
    // What the command itself says it transfers, and whether that must be
    // exactly `data_len` or only fit in it.
    let (transfer, exact): (u64, bool) = match (target, c.opcode) {
        (Target::Io, nvm_opc::READ | nvm_opc::WRITE) => (
            (u64::from(c.cdw[2] & 0xffff) + 1) * u64::from(block_size),
            true,
        ),
        (Target::Io, nvm_opc::DATASET_MANAGEMENT) => ((u64::from(c.cdw[0] & 0xff) + 1) * 16, true),
        (Target::Admin, admin_opc::GET_LOG_PAGE) => {
            let numd = u64::from(c.cdw[0] >> 16) | (u64::from(c.cdw[1] & 0xffff) << 16);
            ((numd + 1) * 4, true)
        }
        (
            Target::Admin,
            admin_opc::IDENTIFY | admin_opc::GET_FEATURES | admin_opc::SET_FEATURES,
        ) => (4096, false),
        _ => return Err(Refused::Invalid),
    };
    let fits = if exact {
        transfer == u64::from(c.data_len)
    } else {
        transfer <= u64::from(max_len) && u64::from(c.data_len) <= transfer
    };
    if fits {
        Ok(direction)
    } else {
        Err(Refused::Invalid)
    }
}
// ANCHOR_END: check
