// SPDX-License-Identifier: GPL-2.0

//! Which low address bits a DMA mapping keeps.
//!
//! A streaming mapping (`dma_map_page_attrs`) may hand the device another
//! address than the page's own: through an IOMMU, or through swiotlb's
//! bounce buffers (`swiotlb=force`, a device that cannot reach all of
//! memory, a confidential VM). swiotlb keeps only the bits of the offset
//! that the device's `min_align_mask` names: without one, a buffer 512
//! bytes into a page may come back 2048 bytes into a bounce slot, and a
//! second PRP entry, which must start a controller page, no longer does
//! (QEMU: "PRP2 is not page aligned"). The C driver asks for its
//! controller page's alignment in `nvme_probe` (`dma_set_min_align_mask(dev,
//! NVME_CTRL_PAGE_SIZE - 1)`).
//!
//! Part of the kernel shim (`kshim::dma_align`), from stage 19 on. TODO:
//! replace with a `dma_set_min_align_mask` method beside `dma_set_mask` in
//! the `kernel` crate's `dma::Device` once it has one (7.3 has not; the C
//! function is inline, so bindgen cannot call it).

use kernel::{
    bindings,
    device::Core,
    pci,
    prelude::*, //
};

/// Asks every streaming mapping of `pdev` to keep the bits of `mask` of
/// the address it maps (`mask + 1` a power of two: 4095 keeps the offset
/// in a 4 KiB page). `EIO` if the device has no DMA parameters.
///
/// In a bus callback (`Core`), so before the driver maps anything: the C
/// function, too, is a plain store that no lock orders against mappings.
pub(crate) fn set_min_align_mask(pdev: &pci::Device<Core<'_>>, mask: u32) -> Result {
    if !(mask.wrapping_add(1)).is_power_of_two() {
        return Err(EINVAL);
    }
    // ANCHOR: set
    // `Device` is a transparent wrapper of `struct device` (7.3's
    // `Device::as_raw` is the crate's own).
    let dev: *mut bindings::device = core::ptr::from_ref(pdev.as_ref()).cast_mut().cast();
    // SAFETY: `dev` is the valid `struct device` of a PCI device bound in
    // this callback. Its `dma_parms`, if set, points at the `pci_dev`'s
    // own `dma_parms`, which lives as long as the device; nothing maps for
    // this device yet (`Core`: probe), so the store races with no reader.
    unsafe {
        let parms = (*dev).dma_parms;
        if parms.is_null() {
            return Err(EIO);
        }
        (*parms).min_align_mask = mask;
    }
    // ANCHOR_END: set
    Ok(())
}
