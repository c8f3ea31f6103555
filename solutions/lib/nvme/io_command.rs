// SPDX-License-Identifier: GPL-2.0

//! The NVM command set's Read, Write and Flush (NVMe 1.4, 6.8, 6.9, 6.15),
//! transfers split at the controller's maximum size, and what a failed
//! status means for the block layer.
//!
//! Part of the NVMe library (`nvme::io_command`). `core` only: the host
//! tests check the command layouts, that the pieces of a split transfer
//! cover it exactly, and that no failed status maps to success.
#![forbid(unsafe_code)]

use super::{
    command::{
        nvm_opc,
        Command,
        Status, //
    },
    prp::Prps, //
};

// ANCHOR: fua
/// Command Dword 12, Force Unit Access: the data is on non-volatile media
/// when the command completes.
const CDW12_FUA: u32 = 1 << 30;
// ANCHOR_END: fua

// ANCHOR: rw
/// A Read or Write (`opcode`) of `blocks` logical blocks of namespace
/// `nsid`, from block `lba`, at the memory `prps` describe. `None` for a
/// block count the command cannot carry (0, or more than 65536).
pub(crate) fn read_write(
    opcode: u8,
    nsid: u32,
    lba: u64,
    blocks: u32,
    fua: bool,
    prps: Prps,
) -> Option<Command> {
    // Number of Logical Blocks, 0's based, in CDW12 bits 15:0.
    let nlb = blocks.checked_sub(1).filter(|n| *n <= 0xffff)?;
    Some(Command {
        opcode,
        nsid,
        prp1: prps.prp1,
        prp2: prps.prp2,
        // Starting LBA in CDW10 (low half) and CDW11 (high half).
        cdw: [
            lba as u32,
            (lba >> 32) as u32,
            nlb | if fua { CDW12_FUA } else { 0 },
            0,
            0,
            0,
        ],
        sgl: false,
    })
}

/// A Flush of namespace `nsid`: whatever its volatile write cache holds
/// goes to non-volatile media.
pub(crate) fn flush(nsid: u32) -> Command {
    Command {
        opcode: nvm_opc::FLUSH,
        nsid,
        ..Command::default()
    }
}
// ANCHOR_END: rw

// ANCHOR: chunk
/// The next piece of a transfer of `len` bytes of which `done` are done,
/// when one command may carry at most `max` bytes (the controller's MDTS):
/// its length, or `None` when nothing is left (or `max` is 0).
pub(crate) fn next_chunk(done: u32, len: u32, max: u32) -> Option<u32> {
    let left = len.checked_sub(done).filter(|l| *l > 0)?;
    Some(left.min(max)).filter(|n| *n > 0)
}
// ANCHOR_END: chunk

// ANCHOR: io_error
/// What a failed completion means for the block layer (each maps to one
/// block status, as the C driver's `nvme_error_status` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoError {
    /// LBA Out of Range: the request lies beyond the namespace.
    Target,
    /// Capacity Exceeded: the namespace is full.
    NoSpace,
    /// The controller does not know the opcode, a field, or the namespace.
    NotSupported,
    /// The media failed: a write fault, an unrecovered read error, access
    /// denied, or a block never written.
    Medium,
    /// Anything else.
    Io,
}

/// `Ok` for a successful status, else what went wrong.
#[inline]
pub(crate) fn io_error(status: Status) -> Result<(), IoError> {
    if status.is_success() {
        return Ok(());
    }
    // Status Code Type 0: generic; 2: media and data integrity errors.
    Err(match (status.sct(), status.sc()) {
        (0, 0x80) => IoError::Target,
        (0, 0x81) => IoError::NoSpace,
        (0, 0x01 | 0x02 | 0x0b) => IoError::NotSupported,
        (2, 0x80 | 0x81 | 0x86 | 0x87) => IoError::Medium,
        _ => IoError::Io,
    })
}
// ANCHOR_END: io_error
