// SPDX-License-Identifier: GPL-2.0

//! Completions where the requests came from.
//!
//! blk-mq gives each CPU a hardware queue (`blk_mq_map_queues`: with as
//! many queues as CPUs, CPU `i` submits to hardware queue `i`, I/O queue
//! `i + 1`). By default every interrupt vector goes to whichever CPU the
//! kernel picks (usually CPU 0), so a request submitted on CPU 1 completes
//! on CPU 0, which must then wake its task on CPU 1 with an inter-processor
//! interrupt: a cross-CPU round trip per I/O, and, under emulation, a wait
//! for the other vCPU's thread to run. The C driver asks for "managed"
//! vectors, spread over the CPUs by the PCI core; 7.3's Rust
//! `alloc_irq_vectors` has no affinity argument, so the driver points each
//! I/O queue's vector at its CPU itself.

use kernel::{
    bindings,
    cpu::CpuId,
    cpumask::CpumaskVar,
    irq::IrqRequest,
    pci::IrqVectorRegistration,
    prelude::*,
};

use crate::io_queues::IoQueue;

// ANCHOR: spread
/// Sends the interrupts of I/O queue `i + 1` to CPU `i`, where its requests
/// come from, when it has a vector of its own. Returns how many it placed.
pub(crate) fn spread(vectors: &IrqVectorRegistration<'_>, io: &[IoQueue]) -> usize {
    let mut placed = 0;
    for (i, q) in io.iter().enumerate() {
        // One vector for several queues (or for all, with INTx): leave it.
        if io.iter().filter(|other| other.vector == q.vector).count() > 1 || q.vector == 0 {
            continue;
        }
        let (Ok(vector), Some(cpu)) = (vectors.index(q.vector as usize), CpuId::from_u32(i as u32)) else {
            continue;
        };
        let Ok(mut mask) = CpumaskVar::new_zero(GFP_KERNEL) else {
            continue;
        };
        mask.set(cpu);
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
