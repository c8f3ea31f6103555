// SPDX-License-Identifier: GPL-2.0

//! The pattern the VM runner (`scripts/vm.sh`) writes into the first MiB of
//! every namespace before boot, so that a driver's first Reads have
//! something known to compare with: 512-byte block `b` holds
//! "rkw-lba-%08d" (`b`), 32 times.
//!
//! Part of the NVMe library (`nvme::pattern`), from stage 11 on. `core`
//! only.

/// Bytes of a pattern block.
pub(crate) const PATTERN_BLOCK: usize = 512;
/// Blocks of the pattern: 1 MiB.
pub(crate) const PATTERN_BLOCKS: u64 = 2048;

/// Whether `block` (of `PATTERN_BLOCK` bytes) is pattern block `n`.
pub(crate) fn is_pattern(block: &[u8], n: u64) -> bool {
    let mut unit = *b"rkw-lba-00000000";
    let mut v = n;
    for digit in unit[8..].iter_mut().rev() {
        *digit = b'0' + (v % 10) as u8;
        v /= 10;
    }
    block.chunks(unit.len()).all(|c| c == unit)
}
