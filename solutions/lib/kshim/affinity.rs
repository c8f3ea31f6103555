// SPDX-License-Identifier: GPL-2.0

//! Completions where the requests came from.
//!
//! blk-mq gives each CPU a hardware queue (`blk_mq_map_queues`, which
//! groups CPUs by topology: CPU 1 may well get hardware queue 0; the tag
//! set's map says). By default every interrupt vector goes to whichever CPU the
//! kernel picks (usually CPU 0), so a request submitted on CPU 1 completes
//! on CPU 0, which must then wake its task on CPU 1 with an inter-processor
//! interrupt: a cross-CPU round trip per I/O, and, under emulation, a wait
//! for the other vCPU's thread to run. The C driver asks for "managed"
//! vectors, spread over the CPUs by the PCI core; 7.3's Rust
//! `alloc_irq_vectors` has no affinity argument, so the driver points each
//! I/O queue's vector at its CPU itself.
//!
//! Part of the kernel shim (`kshim::affinity`), from stage 19 on. TODO:
//! replace with managed vectors (`pci_alloc_irq_vectors_affinity` with
//! `PCI_IRQ_AFFINITY`, and blk-mq's `blk_mq_map_hw_queues`) once the
//! `kernel` crate offers them.

use kernel::{
    bindings,
    block::mq::{
        Operations,
        TagSet, //
    },
    cpu::{
        nr_cpu_ids,
        CpuId, //
    },
    cpumask::CpumaskVar,
    irq::IrqRequest,
    pci::IrqVectorRegistration,
    prelude::*,
    sync::Arc, //
};

// ANCHOR: spread
/// Sends the interrupts of hardware queue `i`, on vector `hw_vectors[i]`,
/// to the CPUs that blk-mq maps to it, where its requests come from, when
/// that vector is its own. Returns how many it placed.
pub(crate) fn spread<T: Operations>(
    vectors: &IrqVectorRegistration<'_>,
    hw_vectors: &[u32],
    tag_set: &Arc<TagSet<T>>,
) -> usize {
    // `TagSet` is `#[repr(transparent)]` over the C `blk_mq_tag_set`.
    let set = Arc::as_ptr(tag_set).cast::<bindings::blk_mq_tag_set>();
    // SAFETY: The tag set is alive (we hold an `Arc`); its default map
    // (`HCTX_TYPE_DEFAULT`, 0) was filled in when it was allocated and has
    // one entry per possible CPU, and blk-mq changes it only when CPUs come
    // or go (then the affinity is only a hint that is out of date).
    let map = unsafe { (*set).map[0].mq_map };
    if map.is_null() {
        return 0;
    }
    let mut placed = 0;
    for (i, &v) in hw_vectors.iter().enumerate() {
        // One vector for several queues (or for all, with INTx): leave it.
        if hw_vectors.iter().filter(|&&other| other == v).count() > 1 || v == 0 {
            continue;
        }
        let (Ok(vector), Ok(mut mask)) =
            (vectors.index(v as usize), CpumaskVar::new_zero(GFP_KERNEL))
        else {
            continue;
        };
        let mut cpus = 0;
        for cpu in 0..nr_cpu_ids() {
            // SAFETY: `cpu` is below `nr_cpu_ids`, the map's length.
            let hctx = unsafe { *map.add(cpu as usize) };
            if let (true, Some(id)) = (hctx as usize == i, CpuId::from_u32(cpu)) {
                mask.set(id);
                cpus += 1;
            }
        }
        if cpus == 0 {
            continue;
        }
        let irq = IrqRequest::from(vector).irq();
        // SAFETY: `irq` is one of this device's vectors, allocated for as
        // long as `vectors` lives; the kernel copies the mask.
        if unsafe { bindings::irq_set_affinity(irq, mask.as_raw()) } == 0 {
            placed += 1;
        }
    }
    placed
}
// ANCHOR_END: spread
