// SPDX-License-Identifier: GPL-2.0

//! A page of DMA memory for Identify data, and the only place where the
//! driver reads what the controller wrote there.
//!
//! Part of the NVMe library (`nvme::identify_page`), from stage 07 on.
//! (Stage 06's polled queue reads its page in `rnvme.rs`, with the
//! reasoning spelled out where the learner meets it.)

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::Coherent,
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
/// A 4 KiB page in coherent DMA memory that Identify commands fill in.
///
/// # Invariants
///
/// The controller writes the page only while an Identify naming it is in
/// flight, and the driver reads it only after that command's completion
/// came: [`IdentifyPage::identify`] takes `&mut self`, so no second
/// command can name the page while its bytes are borrowed, and when the
/// wait fails (the command may still be carried out), it disables the
/// controller before it returns, so nothing writes the page any more.
///
/// The upstream API that would remove the `unsafe` here: a
/// `dma::Coherent` whose device-written contents are read through a
/// typed, checked accessor (`CoherentAllocation::read()`-style) instead of
/// `as_ref()`.
pub(crate) struct IdentifyPage(Coherent<[u8]>);

impl IdentifyPage {
    /// A zeroed page for the device `dev`.
    pub(crate) fn new(dev: &Device<Bound>) -> Result<IdentifyPage> {
        Ok(IdentifyPage(Coherent::<u8>::zeroed_slice(
            dev,
            IDENTIFY_SIZE,
            GFP_KERNEL,
        )?))
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
        let cmd = Command::identify(cns, nsid, self.0.dma_address());
        if let Err(e) = admin.submit(dev, &cmd, timeout) {
            if e == ETIMEDOUT || e == EINTR {
                // INVARIANT: the controller may still carry the command out
                // into the page: stop it before anyone reads or frees it.
                let _ = admin.disable_controller();
            }
            return Err(e);
        }
        // SAFETY: The controller wrote the page before it posted the
        // completion `submit` waited for, and `&mut self` keeps any other
        // command from naming the page while the bytes are borrowed (type
        // invariant).
        Ok(unsafe { self.0.as_ref() })
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
        IdNs::parse(self.identify(dev, admin, cns::NAMESPACE, nsid, timeout)?).ok_or(EIO)
    }
}
// ANCHOR_END: identify_page
