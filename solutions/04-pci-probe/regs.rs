// SPDX-License-Identifier: GPL-2.0

//! NVMe controller registers in BAR0, for the kernel's `register!` macro.

use kernel::io::register;

/// Bytes of BAR0 the driver maps: the registers (0x0-0xfff) and the first
/// page of doorbells (0x1000-0x1fff). QEMU's BAR0 is larger; a smaller one
/// makes the mapping fail, so probe fails cleanly.
pub(crate) const BAR0_SIZE: usize = 0x2000;

/// Offset of CAP: 64 bits, which 7.3's `register!` cannot describe on a PCI
/// BAR (its accesses are at most 32 bits there), so `spec::Cap` decodes it.
pub(crate) const CAP: usize = 0x00;

// ANCHOR: vs
register! {
    /// Version (VS): major, minor and tertiary version of the specification.
    pub(crate) VS(u32) @ 0x08 {
        31:16 mjr;
        15:8 mnr;
        7:0 ter;
    }
}
// ANCHOR_END: vs
