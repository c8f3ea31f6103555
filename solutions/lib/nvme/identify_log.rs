// SPDX-License-Identifier: GPL-2.0

//! What Identify said, in the kernel log: the lines the tests compare with
//! what nvme-cli and QEMU say.
//!
//! Part of the NVMe library (`nvme::identify_log`), from stage 07 on.

use kernel::{
    pci,
    prelude::*, //
};

use super::{
    cap::Cap,
    identify::{
        ascii,
        IdCtrl,
        IdNs, //
    }, //
};

// ANCHOR: log_controller
/// Logs who the controller is and what it can take.
pub(crate) fn log_controller(pdev: &pci::Device, id: &IdCtrl, cap: &Cap) {
    dev_info!(
        pdev,
        "model \"{}\", serial \"{}\", firmware \"{}\", PCI vendor {:#06x}\n",
        ascii(&id.mn),
        ascii(&id.sn),
        ascii(&id.fr),
        id.vid
    );
    match id.max_transfer(cap.min_page_size()) {
        Some(bytes) => dev_info!(
            pdev,
            "MDTS {}: at most {} bytes per transfer\n",
            id.mdts,
            bytes
        ),
        None => dev_info!(pdev, "MDTS 0: no transfer size limit\n"),
    }
    dev_info!(
        pdev,
        "controller ID {}, {} namespace(s)\n",
        id.cntlid,
        id.nn
    );
}
// ANCHOR_END: log_controller

/// Logs the size of namespace `nsid`; `EIO` if its block size is not one
/// the driver can use.
pub(crate) fn log_namespace(pdev: &pci::Device, nsid: u32, ns: &IdNs) -> Result {
    let block = ns.block_size().ok_or(EIO)?;
    dev_info!(
        pdev,
        "namespace {}: {} blocks of {} bytes (LBA format {}), {} MiB\n",
        nsid,
        ns.nsze,
        block,
        ns.format,
        ns.nsze.saturating_mul(u64::from(block)) >> 20
    );
    Ok(())
}
