// SPDX-License-Identifier: GPL-2.0

//! A page of DMA memory for Identify data, and how the driver reads what
//! the controller wrote there: copied out with the kernel's I/O accessors
//! (`Io::copy_to_slice`), so no `unsafe` is needed.
//!
//! Part of the NVMe library (`nvme::identify_page`), from stage 09 on.
//! (Stage 07's polled queue reads its page in `rnvme.rs`, with the
//! reasoning spelled out where the learner meets it.)

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::Coherent,
    io::Io,
    prelude::*,
    time::Delta, //
};

use super::{
    command::{
        cns,
        Command, //
    },
    identify::{
        IdCtrl,
        IdNs,
        IDENTIFY_SIZE, //
    },
    queue::AdminQueue, //
};

// ANCHOR: identify_page
/// A 4 KiB page in coherent DMA memory that Identify commands fill in, and
/// the driver's copy of what they wrote.
///
/// # Invariants
///
/// The page is not freed while the controller may still write it: when
/// the wait for an Identify fails (the command may still be carried out),
/// [`IdentifyPage::identify`] disables the controller before it returns,
/// so a late answer cannot land in memory the page no longer owns. (That
/// is not a Rust soundness matter, since the driver reads the page only
/// through the DMA accessors, but a freed page written by a device
/// corrupts whatever the kernel put there next.)
pub(crate) struct IdentifyPage {
    page: Coherent<[u8]>,
    /// The last Identify data, copied out of the page.
    data: KVec<u8>,
}

impl IdentifyPage {
    /// A zeroed page for the device `dev`.
    pub(crate) fn new(dev: &Device<Bound>) -> Result<IdentifyPage> {
        Ok(IdentifyPage {
            page: Coherent::<u8>::zeroed_slice(dev, IDENTIFY_SIZE, GFP_KERNEL)?,
            data: KVec::from_elem(0, IDENTIFY_SIZE, GFP_KERNEL)?,
        })
    }

    /// Sends Identify `cns` (for namespace `nsid`) into the page on `admin`,
    /// waits for it at most `timeout`, and returns what the controller
    /// wrote.
    pub(crate) fn identify(
        &mut self,
        dev: &Device,
        admin: &AdminQueue,
        cns: u32,
        nsid: u32,
        timeout: Delta,
    ) -> Result<&[u8]> {
        let cmd = Command::identify(cns, nsid, self.page.dma_address());
        if let Err(e) = admin.submit(dev, &cmd, timeout) {
            if e == ETIMEDOUT || e == EINTR {
                // INVARIANT: the controller may still carry the command out
                // into the page: stop it before the page can be freed.
                let _ = admin.disable_controller();
            }
            return Err(e);
        }
        // The controller wrote the page before it posted the completion
        // `submit` waited for; a copy through the DMA accessors reads it
        // whatever the device does.
        (&self.page).copy_to_slice(&mut self.data);
        Ok(&self.data)
    }

    /// Identify Controller, parsed.
    pub(crate) fn controller(
        &mut self,
        dev: &Device,
        admin: &AdminQueue,
        timeout: Delta,
    ) -> Result<IdCtrl> {
        IdCtrl::parse(self.identify(dev, admin, cns::CONTROLLER, 0, timeout)?).ok_or(EIO)
    }

    /// Identify Namespace `nsid`, parsed.
    pub(crate) fn namespace(
        &mut self,
        dev: &Device,
        admin: &AdminQueue,
        nsid: u32,
        timeout: Delta,
    ) -> Result<IdNs> {
        let ns =
            IdNs::parse(self.identify(dev, admin, cns::NAMESPACE, nsid, timeout)?).ok_or(EIO)?;
        // A format the driver cannot drive is refused here, where the
        // driver first sees it, and said why: a namespace formatted with
        // metadata (by another driver, or another host) would otherwise be
        // driven as if it had none.
        if ns.block_size().is_none() {
            dev_err!(
                dev,
                "namespace {}: LBA format {} (2^{}-byte blocks, {} bytes of metadata each) is not one rnvme drives\n",
                nsid,
                ns.format,
                ns.lbads,
                ns.ms
            );
            return Err(EOPNOTSUPP);
        }
        Ok(ns)
    }
}
// ANCHOR_END: identify_page
