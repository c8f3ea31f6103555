// SPDX-License-Identifier: GPL-2.0

//! DMA memory that one command at a time uses: its data, its PRP list and,
//! if asked for, an SGL segment; and the claim that makes it one command's.
//!
//! Each tag of the disk owns one for the life of the disk (stage 13), and
//! the nvme-cli nodes share one (stage 16). Two rules keep it right:
//!
//! - One command at a time: two commands with one buffer would mix their
//!   data. Only the holder of the one [`Claim`] reaches the memory, and a
//!   claim whose command may still be carried out is abandoned, never
//!   given back ([`Claim::abandon`]).
//! - The CPU never holds a Rust reference (`&mut [u8]`) into the memory,
//!   which the controller may write behind its back (`Coherent::as_mut` is
//!   unsafe for that reason): it copies in and out with the I/O accessors
//!   (`io_project!`, `Io::copy_from_slice`), volatile copies that are
//!   defined even if the device races with them, as the kernel's own
//!   `dma_read!`-style accessors are. So a wrong claim is a wrong answer,
//!   never undefined behaviour, and [`Claim::view`] needs no `unsafe`.
//!
//! Part of the NVMe library (`nvme::cmd_buffer`), from stage 12 on.
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
    io::{
        io_project,
        io_write,
        Io, //
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

// ANCHOR: view
/// What the holder of a claim reaches: the memory, through copies, and its
/// bus addresses, for the command.
pub(crate) struct View<'a> {
    buffer: &'a CmdBuffer,
}

impl View<'_> {
    /// Where the controller finds the data.
    pub(crate) fn data_address(&self) -> DmaAddress {
        self.buffer.data.dma_address()
    }

    /// Where the controller finds the PRP list.
    pub(crate) fn prp_list_address(&self) -> DmaAddress {
        self.buffer.prp_list.dma_address()
    }

    /// Where the controller finds the SGL segment (0: none was asked for).
    pub(crate) fn sgl_address(&self) -> DmaAddress {
        self.buffer.sgl.as_ref().map_or(0, |s| s.dma_address())
    }

    /// The data, for copies that the I/O accessors make (the kernel shim's
    /// request copies).
    pub(crate) fn data(&mut self) -> &Coherent<[u8]> {
        &self.buffer.data
    }

    /// Copies `src` into the data, from byte `at`.
    pub(crate) fn write(&mut self, at: usize, src: &[u8]) -> Result {
        let end = at.checked_add(src.len()).ok_or(EINVAL)?;
        io_project!(&self.buffer.data, [try: at..end]).copy_from_slice(src);
        Ok(())
    }

    /// Copies the data from byte `at` into `dst`.
    pub(crate) fn read(&self, at: usize, dst: &mut [u8]) -> Result {
        let end = at.checked_add(dst.len()).ok_or(EINVAL)?;
        io_project!(&self.buffer.data, [try: at..end]).copy_to_slice(dst);
        Ok(())
    }

    /// Sets entry `i` of the PRP list.
    pub(crate) fn set_prp(&mut self, i: usize, entry: u64) -> Result {
        io_write!(&self.buffer.prp_list, [try: i], entry);
        Ok(())
    }

    /// Writes `entries` at the start of the PRP list.
    pub(crate) fn write_prp_list(&mut self, entries: &[u64]) -> Result {
        for (i, &entry) in entries.iter().enumerate() {
            self.set_prp(i, entry)?;
        }
        Ok(())
    }

    /// Sets descriptor `i` of the SGL segment.
    pub(crate) fn set_sgl(&mut self, i: usize, descriptor: [u64; 2]) -> Result {
        let sgl = self.buffer.sgl.as_ref().ok_or(EINVAL)?;
        io_project!(sgl, [try: i]).copy_write(descriptor);
        Ok(())
    }
}
// ANCHOR_END: view

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
    #[inline]
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

    /// The memory and its bus addresses, for the holder of the claim.
    pub(crate) fn view(&mut self) -> View<'_> {
        View {
            buffer: &self.buffer,
        }
    }

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
