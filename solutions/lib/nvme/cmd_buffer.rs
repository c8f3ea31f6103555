// SPDX-License-Identifier: GPL-2.0

//! DMA memory that one command at a time uses: its data, its PRP list and,
//! if asked for, an SGL segment; and the claim that makes it one command's.
//!
//! Each tag of the disk owns one for the life of the disk (stage 09), and
//! the nvme-cli nodes share one (stage 10). `Coherent::as_mut` is unsafe
//! because the CPU must not touch the memory twice at once, nor while the
//! device does. The claim makes the first a type: only the holder of the
//! one [`Claim`] reaches the memory, through `&mut`. The second only the
//! driver knows (which command it sent, which completed): `Claim::view`
//! stays `unsafe`, and each caller says why no command is in flight.
//!
//! Part of the NVMe library (`nvme::cmd_buffer`), from stage 09 on.
//!
//! TODO: a tag's buffer belongs in its request's PDU (C: the tag set's
//! `cmd_size`, set up by `init_request`), so that the request would be the
//! claim, once 7.3's `mq::Operations` gives drivers that memory.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::{
        Coherent,
        DmaAddress, //
    },
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            AtomicFlag,
            Release, //
        },
        Arc,
    }, //
};

// ANCHOR: cmd_buffer
/// A command's DMA memory.
///
/// # Invariants
///
/// `claimed` is set while a [`Claim`] of this buffer exists, or after a
/// claim was abandoned ([`Claim::abandon`]): at most one `Claim` exists at
/// a time.
pub(crate) struct CmdBuffer {
    data: Coherent<[u8]>,
    prp_list: Coherent<[u64]>,
    sgl: Option<Coherent<[[u64; 2]]>>,
    claimed: AtomicFlag,
}
// ANCHOR_END: cmd_buffer

/// What the holder of a claim sees: the memory, and the bus addresses the
/// controller is given.
pub(crate) struct View<'a> {
    /// The data, for the CPU.
    pub(crate) data: &'a mut [u8],
    /// Where the controller finds `data`.
    pub(crate) data_address: DmaAddress,
    /// The PRP list, for the CPU to fill.
    pub(crate) prp_list: &'a mut [u64],
    /// Where the controller finds `prp_list`.
    pub(crate) prp_list_address: DmaAddress,
    /// The SGL segment (empty if none was asked for).
    pub(crate) sgl: &'a mut [[u64; 2]],
    /// Where the controller finds `sgl`.
    pub(crate) sgl_address: DmaAddress,
}

impl CmdBuffer {
    /// `bytes` of data, a PRP list of `prp_entries` (at least one) and an
    /// SGL segment of `sgl_entries` (none if 0).
    pub(crate) fn new(
        dev: &Device<Bound>,
        bytes: usize,
        prp_entries: usize,
        sgl_entries: usize,
    ) -> Result<Arc<CmdBuffer>> {
        let sgl = match sgl_entries {
            0 => None,
            n => Some(Coherent::zeroed_slice(dev, n, GFP_KERNEL)?),
        };
        // INVARIANT: no claim exists yet, and the controller knows nothing
        // of the memory.
        Ok(Arc::new(
            CmdBuffer {
                data: Coherent::zeroed_slice(dev, bytes, GFP_KERNEL)?,
                prp_list: Coherent::zeroed_slice(dev, prp_entries.max(1), GFP_KERNEL)?,
                sgl,
                claimed: AtomicFlag::new(false),
            },
            GFP_KERNEL,
        )?)
    }

    /// Bytes of data.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    // ANCHOR: claim
    /// The buffer, for one command; `None` while another holds it (or a
    /// command that used it was abandoned). Never sleeps.
    pub(crate) fn claim(self: &Arc<Self>) -> Option<Claim> {
        // Acquire: what the last holder wrote (and the controller, before
        // its completion) is seen by the new one.
        self.claimed.cmpxchg(false, true, Acquire).ok()?;
        // INVARIANT: the flag was clear and is now set by this claim alone.
        Some(Claim {
            buffer: self.clone(),
            release: true,
        })
    }
    // ANCHOR_END: claim
}

/// The right to use a [`CmdBuffer`]: there is at most one.
///
/// # Invariants
///
/// `buffer.claimed` was set by this claim, which clears it when dropped
/// unless `release` is false (abandoned).
pub(crate) struct Claim {
    buffer: Arc<CmdBuffer>,
    release: bool,
}

impl Claim {
    /// Bytes of data.
    pub(crate) fn len(&self) -> usize {
        self.buffer.len()
    }

    // ANCHOR: view
    /// The memory, for the CPU, and its bus addresses, for a command.
    ///
    /// # Safety
    ///
    /// No command that uses this buffer's bus addresses is in flight while
    /// the `View` lives: the controller neither reads nor writes the memory
    /// meanwhile. (A command built from the view is sent after it ends; a
    /// command that may still be carried out gets its claim abandoned.)
    pub(crate) unsafe fn view(&mut self) -> View<'_> {
        let b = &*self.buffer;
        let (sgl, sgl_address) = match &b.sgl {
            // SAFETY: As for `data` below.
            Some(s) => (unsafe { s.as_mut() }, s.dma_address()),
            None => (&mut [][..], 0),
        };
        View {
            // SAFETY: This claim is the only one (type invariants), and the
            // `&mut self` borrow makes the slices its holder's alone for
            // their lifetime; the controller does not use the memory while
            // they live (the caller's promise).
            data: unsafe { b.data.as_mut() },
            data_address: b.data.dma_address(),
            // SAFETY: As for `data`.
            prp_list: unsafe { b.prp_list.as_mut() },
            prp_list_address: b.prp_list.dma_address(),
            sgl,
            sgl_address,
        }
    }
    // ANCHOR_END: view

    /// A command that used the buffer timed out and may still be carried
    /// out: the buffer stays claimed, so no later command gets it; its
    /// memory is freed with the last reference, once the controller is
    /// stopped (unbind).
    pub(crate) fn abandon(mut self) {
        self.release = false;
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.release {
            // Release: pairs with `claim`'s Acquire.
            self.buffer.claimed.store(false, Release);
        }
    }
}
