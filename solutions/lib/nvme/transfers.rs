// SPDX-License-Identifier: GPL-2.0

//! Transfers of many pages with one command: the data in a buffer of the
//! driver's, described by PRP1, PRP2 and, past two pages, a PRP list that
//! `prp::describe` (this stage's exercise) writes.
//!
//! At probe, on I/O queue 1: Reads of the host's pattern of every length
//! from one block to the whole buffer, at three places in the buffer (at a
//! page boundary, 512 bytes into a page, 512 bytes before the end of one),
//! each compared block by block; then the whole buffer written past the
//! pattern and read back. A wrong PRP entry shows as a wrong block, or as
//! an error QEMU's NVMe model logs (its trace: the test reads it).
//!
//! Part of the NVMe library (`nvme::transfers`), for stage 12, whose new
//! idea it is: it lives here, not beside stage 12's answer (`prp.rs`),
//! so that the skeleton can include it from where the solution does.

use kernel::{
    device::{
        Core,
        Device, //
    },
    pci,
    prelude::*,
    sync::Arc, //
};

use super::{
    cmd_buffer::{
        Claim,
        CmdBuffer, //
    },
    command::nvm_opc,
    controller::PAGE_SHIFT,
    ctrl::Controller,
    io_command::read_write,
    pattern::{
        is_pattern,
        PATTERN_BLOCK,
        PATTERN_BLOCKS, //
    },
    prp,
    queue::{
        Pending,
        QueuePair,
        ADMIN_TIMEOUT, //
    },
};

/// The namespace the transfers use.
const NSID: u32 = 1;
/// The memory page size the driver uses (CC.MPS).
const PAGE: u32 = 1 << PAGE_SHIFT;
/// Bytes of the buffer: 32 pages, the most one command carries in the
/// tests' controllers (MDTS).
const BUFFER: usize = 128 * 1024;
/// Entries of its PRP list (`prp::list_entries_for`).
const LIST_ENTRIES: usize = prp::list_entries_for(BUFFER as u32, PAGE);
/// Where in the buffer the transfers start: at a page boundary, 512 bytes
/// into a page, and 512 bytes before the end of one (so the first "page"
/// of PRP1 holds one block).
const OFFSETS: [usize; 3] = [0, 512, 4096 - 512];

// ANCHOR: transfer
/// What the transfers use: the queue, the buffer (claimed for them) and the
/// namespace's block size.
struct Transfers<'a, P: Pending> {
    dev: &'a Device,
    queue: &'a QueuePair<P>,
    claim: Claim,
    block: usize,
}

impl<P: Pending> Transfers<'_, P> {
    /// One Read or Write of `len` bytes at block `lba`, through the buffer
    /// from byte `at`: the PRP list written first, then the command sent
    /// and waited for.
    fn run(&mut self, opcode: u8, lba: u64, at: usize, len: usize) -> Result {
        let mut view = self.claim.view();
        // The list, written in ordinary memory, then copied into the DMA
        // memory the controller reads it from.
        let mut list = [0u64; LIST_ENTRIES];
        let prps = prp::describe(
            view.data_address() + at as u64,
            u32::try_from(len)?,
            PAGE,
            &mut list,
            view.prp_list_address(),
        )
        .map_err(|e| {
            dev_err!(self.dev, "prp::describe: {:?}\n", e);
            EINVAL
        })?;
        view.write_prp_list(list.get(..prps.list_entries).ok_or(EINVAL)?)?;
        let blocks = u32::try_from(len / self.block)?;
        let cmd = read_write(opcode, NSID, lba, blocks, false, prps).ok_or(EINVAL)?;
        self.queue.submit(self.dev, &cmd, ADMIN_TIMEOUT)?;
        Ok(())
    }
}
// ANCHOR_END: transfer

/// The lengths the Reads try, in blocks: every one up to 24 (one, two and
/// three pages and a PRP list, whatever the offset), then every 7th, and
/// the longest, `max`.
fn lengths(max: usize) -> impl Iterator<Item = usize> {
    (1..=max).filter(move |&n| n <= 24 || (n - 24) % 7 == 0 || n == max)
}

// ANCHOR: check
/// The transfers of stage 12, on I/O queue `queue`: see the module
/// documentation. Logs what was proven; on an error, says which transfer
/// failed, and stops the controller before the buffer is freed (a command
/// that timed out may still be carried out into it); the probe fails.
pub(crate) fn check<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    queue: &QueuePair<P>,
) -> Result {
    let buffer = CmdBuffer::new(pdev.as_ref(), BUFFER, LIST_ENTRIES, 0)?;
    let result = check_with(pdev, ctrl, queue, &buffer);
    if result.is_err() {
        let _ = ctrl.admin().disable_controller();
    }
    result
}

/// `check`, with the buffer.
fn check_with<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    queue: &QueuePair<P>,
    buffer: &Arc<CmdBuffer>,
) -> Result {
    let block = ctrl
        .identify_namespace(pdev, NSID)?
        .block_size()
        .ok_or(EIO)?;
    let block = usize::try_from(block)?;
    if block % PATTERN_BLOCK != 0 || block > BUFFER / 2 {
        dev_err!(
            pdev,
            "PRP transfers: {}-byte blocks are not for this test\n",
            block
        );
        return Err(EOPNOTSUPP);
    }
    let claim = buffer.claim().ok_or(EBUSY)?;
    let mut t = Transfers {
        dev: pdev.as_ref(),
        queue,
        claim,
        block,
    };
    // The driver's copy of what the controller read or is to write.
    let mut data = KVVec::from_elem(0u8, BUFFER, GFP_KERNEL)?;
    let per_block = (block / PATTERN_BLOCK) as u64;
    let (mut reads, mut listed) = (0u32, 0u32);
    for at in OFFSETS {
        for len in lengths((BUFFER - at) / block).map(|n| n * block) {
            // The pattern's blocks, a different stretch for each transfer.
            let lba = u64::from(reads) % (PATTERN_BLOCKS / per_block - (len / block) as u64);
            t.run(nvm_opc::READ, lba, at, len).inspect_err(|e| {
                dev_err!(
                    pdev,
                    "PRP transfers: a {}-byte Read into byte {} failed: {:?}\n",
                    len,
                    at,
                    e
                )
            })?;
            let got = data.get_mut(..len).ok_or(EINVAL)?;
            t.claim.view().read(at, got)?;
            let first = lba * per_block;
            if let Some((i, _)) = got
                .chunks(PATTERN_BLOCK)
                .zip(first..)
                .enumerate()
                .find(|(_, (b, n))| !is_pattern(b, *n))
            {
                dev_err!(
                    pdev,
                    "PRP transfers: a {}-byte Read into byte {}: its byte {} is not pattern block {}\n",
                    len,
                    at,
                    i * PATTERN_BLOCK,
                    first + i as u64
                );
                return Err(EIO);
            }
            reads += 1;
            // More than two memory pages touched: PRP2 points to a list.
            if (at % PAGE as usize + len).div_ceil(PAGE as usize) > 2 {
                listed += 1;
            }
        }
    }
    dev_info!(
        pdev,
        "PRP transfers: {} Reads of 1 to {} blocks at 3 offsets read the host's pattern ({} with a PRP list)\n",
        reads,
        BUFFER / block,
        listed
    );
    // The whole buffer, past the pattern: written, then read back into a
    // buffer cleared first.
    let lba = PATTERN_BLOCKS / per_block;
    for (i, b) in data.iter_mut().enumerate() {
        *b = (i / PATTERN_BLOCK) as u8 ^ 0x5a;
    }
    t.claim.view().write(0, &data)?;
    t.run(nvm_opc::WRITE, lba, 0, BUFFER)?;
    let mut back = KVVec::from_elem(0u8, BUFFER, GFP_KERNEL)?;
    t.claim.view().write(0, &back)?;
    t.run(nvm_opc::READ, lba, 0, BUFFER)?;
    t.claim.view().read(0, &mut back)?;
    if back[..] != data[..] {
        dev_err!(
            pdev,
            "PRP transfers: {} KiB written at block {} do not read back\n",
            BUFFER / 1024,
            lba
        );
        return Err(EIO);
    }
    dev_info!(
        pdev,
        "PRP transfers: {} KiB written at block {} and read back\n",
        BUFFER / 1024,
        lba
    );
    Ok(())
}
// ANCHOR_END: check
