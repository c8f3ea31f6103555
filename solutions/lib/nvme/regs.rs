// SPDX-License-Identifier: GPL-2.0

//! NVMe controller registers in BAR0 (NVMe 1.4, section 3.1), for the
//! kernel's `register!` macro: every register the driver touches, once.
//!
//! CAP is 64 bits wide, which 7.3's `register!` cannot describe on a PCI BAR
//! (its accesses there are at most 32 bits): the driver reads it with
//! `try_read64(CAP)` and [`super::cap::Cap`] decodes it; the doorbells'
//! offsets depend on CAP's stride, so `Cap` computes them too.

use kernel::{
    io::{
        register,
        Io, //
    },
    pci,
    prelude::*, //
};

use super::cap::Cap;

/// Bytes of BAR0 the driver maps: the registers (0x0-0xfff) and the first
/// page of doorbells (0x1000-0x1fff). QEMU's BAR0 is larger; a smaller one
/// makes the mapping fail, so probe fails cleanly.
pub(crate) const BAR0_SIZE: usize = 0x2000;

/// BAR0, mapped for as long as the driver is bound.
pub(crate) type Bar0<'b> = pci::Bar<'b, BAR0_SIZE>;

/// Offset of CAP: 64 bits, decoded by [`super::cap::Cap::from_raw`].
pub(crate) const CAP: usize = 0x00;
// ANCHOR: admin
/// Offset of ASQ, the admin submission queue's bus address (64 bits).
pub(crate) const ASQ: usize = 0x28;
/// Offset of ACQ, the admin completion queue's bus address (64 bits).
pub(crate) const ACQ: usize = 0x30;
// ANCHOR_END: admin

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

// ANCHOR: cc
register! {
    /// Controller Configuration (CC).
    pub(crate) CC(u32) @ 0x14 {
        /// I/O completion queue entry size, log2 bytes (16 bytes: 4).
        23:20 iocqes;
        /// I/O submission queue entry size, log2 bytes (64 bytes: 6).
        19:16 iosqes;
        /// Shutdown notification.
        15:14 shn;
        /// Arbitration mechanism (0: round robin).
        13:11 ams;
        /// Memory page size: 4096 << mps bytes.
        10:7 mps;
        /// I/O command set (0: NVM).
        6:4 css;
        /// Enable.
        0:0 en => bool;
    }

    /// Controller Status (CSTS).
    pub(crate) CSTS(u32) @ 0x1c {
        /// Shutdown status.
        3:2 shst;
        /// Controller fatal status: it gave up, only a reset helps.
        1:1 cfs => bool;
        /// Ready: follows CC.EN once the controller has finished enabling
        /// or disabling.
        0:0 rdy => bool;
    }

    /// Admin Queue Attributes (AQA): queue sizes, 0's based.
    pub(crate) AQA(u32) @ 0x24 {
        27:16 acqs;
        11:0 asqs;
    }
}
// ANCHOR_END: cc

// ANCHOR: log_identity
/// Logs what the controller says about itself (the test compares these
/// lines with the registers as user space sees them).
pub(crate) fn log_identity(pdev: &pci::Device, cap: &Cap, vs: &VS) {
    dev_info!(
        pdev,
        "NVMe {}.{}.{} controller, PCI {:04x}:{:04x}\n",
        vs.mjr().get(),
        vs.mnr().get(),
        vs.ter().get(),
        pdev.vendor_id().as_raw(),
        pdev.device_id()
    );
    dev_info!(
        pdev,
        "CAP: MQES {} ({} entries/queue), CQR {}, DSTRD {} ({}-byte doorbell stride)\n",
        cap.mqes,
        cap.max_queue_entries(),
        cap.cqr,
        cap.dstrd,
        cap.doorbell_stride()
    );
    dev_info!(
        pdev,
        "CAP: TO {} ({} ms), CSS {:#x} (NVM: {}), MPSMIN {} ({} bytes), MPSMAX {} ({} bytes)\n",
        cap.to,
        cap.timeout_ms(),
        cap.css,
        cap.supports_nvm(),
        cap.mpsmin,
        cap.min_page_size(),
        cap.mpsmax,
        cap.max_page_size()
    );
}
// ANCHOR_END: log_identity

/// Logs where the admin queues are, once the controller is enabled with
/// them (ASQ, ACQ and AQA as written).
pub(crate) fn log_admin_queues(pdev: &pci::Device, depth: u16, asq: u64, acq: u64) {
    dev_info!(
        pdev,
        "controller enabled: admin queues of {} entries at {:#x} and {:#x}\n",
        depth,
        asq,
        acq
    );
}

/// Logs VS once more as the driver data is dropped, right after `unbind`:
/// the mapping is still valid then (stages 04 to 07 hold the BAR itself).
pub(crate) fn log_released(pdev: &pci::Device, bar: &Bar0<'_>) {
    dev_info!(pdev, "released (VS {:#010x})\n", bar.read(VS).into_raw());
}
