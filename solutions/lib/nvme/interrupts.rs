// SPDX-License-Identifier: GPL-2.0

//! The device's interrupt vectors and the handlers registered on them, as
//! one value.
//!
//! A handler's registration borrows the vectors it was made from
//! (`irq::Registration<'b, _>` from `IrqVectorRegistration::index`), so the
//! two cannot be sibling fields of the driver data without an unsafe
//! reborrow. This type owns both, and that reborrow is its invariant: a
//! driver holds one `Interrupts`, and its one `unsafe` for interrupts is the
//! promise that it drops it (`Interrupts::new`).
//!
//! Part of the NVMe library (`nvme::interrupts`), from stage 09 on.
//!
//! TODO: replace with the upstream owner of vectors and handlers together
//! (a devres-managed `pci::Device::request_irq` over allocated vectors)
//! once the `kernel` crate has one: 7.3 borrows instead.

use kernel::{
    device::Bound,
    irq,
    pci::{
        self,
        IrqTypes,
        IrqVectorRegistration, //
    },
    prelude::*,
    sync::Arc, //
};

use super::{
    irq_handler::QueueIrq,
    queue::{
        AdminQueue,
        NoRequests,
        Pending,
        QueuePair, //
    },
};

/// A handler, registered, pinned in a box of its own.
type Registered<'b, P> = Pin<KBox<irq::Registration<'b, QueueIrq<P>>>>;

// ANCHOR: interrupts
/// The vectors the device got, the admin queue's handler on vector 0, and
/// one handler per I/O queue (whose commands carry `P`).
///
/// # Invariants
///
/// - `vectors` is boxed: the registration it points to does not move while
///   `self` lives, and is freed only with `self`, after `admin` and `io`
///   (fields drop in the order they are declared).
/// - Every registration in `admin` and `io` was made from a vector of
///   `*vectors`, and only these hold the borrow of it.
/// - `self` is dropped, not leaked (the promise of [`Interrupts::new`]'s
///   caller): every handler is freed (`free_irq`) before the module's code
///   it runs can go away.
pub(crate) struct Interrupts<'b, P: Pending> {
    /// The admin queue's handler: `free_irq` when dropped, which waits for
    /// a handler still running on another CPU.
    admin: Registered<'b, NoRequests>,
    /// The I/O queues' handlers, in the order they were added.
    io: KVec<Registered<'b, P>>,
    /// `pci_free_irq_vectors` when dropped: last.
    vectors: KBox<IrqVectorRegistration<'b>>,
}
// ANCHOR_END: interrupts

impl<'b, P: Pending> Interrupts<'b, P> {
    // ANCHOR: new
    /// Allocates between 1 and `max` vectors (MSI-X if the device and the
    /// platform can, else MSI, else the legacy INTx pin) and registers the
    /// admin queue's handler on the first.
    ///
    /// # Safety
    ///
    /// The value returned is dropped, not leaked (`mem::forget`): its
    /// handlers stay registered until then, and they run the module's code
    /// (the promise `irq::Registration::new` asks of its callers).
    pub(crate) unsafe fn new(
        pdev: &'b pci::Device<Bound>,
        max: u32,
        admin: &Arc<AdminQueue>,
    ) -> Result<Self> {
        let vectors = KBox::new(
            pdev.alloc_irq_vectors(1, max.max(1), IrqTypes::all())?,
            GFP_KERNEL,
        )?;
        // SAFETY: `vectors` becomes the field of the `Interrupts` built
        // below, and the borrow goes only into its `admin`.
        let admin = register(unsafe { borrow(&vectors) }, 0, admin)?;
        // INVARIANT: `admin` was made from vector 0 of `vectors`, boxed; the
        // caller drops the value (safety requirement).
        Ok(Interrupts {
            admin,
            io: KVec::new(),
            vectors,
        })
    }
    // ANCHOR_END: new

    /// Registers `queue`'s handler on vector `vector` (shared with the
    /// other queues on it, and with the admin queue on vector 0).
    pub(crate) fn add(&mut self, queue: &Arc<QueuePair<P>>, vector: usize) -> Result {
        self.io.reserve(1, GFP_KERNEL)?;
        // SAFETY: The borrow goes only into `self.io`.
        let handler = register(unsafe { borrow(&self.vectors) }, vector, queue)?;
        // INVARIANT: made from a vector of `self.vectors`.
        self.io.push(handler, GFP_KERNEL)?;
        Ok(())
    }

    /// The vectors: how many, of which type, which IRQ each is.
    pub(crate) fn vectors(&self) -> &IrqVectorRegistration<'b> {
        &self.vectors
    }
}

// ANCHOR: borrow
/// The boxed vectors, for as long as the `Interrupts` that owns them.
///
/// # Safety
///
/// `vectors` is (or becomes) the `vectors` field of an `Interrupts`, and
/// the reference returned goes only into registrations that this
/// `Interrupts` keeps.
unsafe fn borrow<'b>(vectors: &KBox<IrqVectorRegistration<'b>>) -> &'b IrqVectorRegistration<'b> {
    // SAFETY: The kernel's `Box` is a `NonNull` (moving it asserts no
    // uniqueness) and does not move its contents, which are freed after
    // every registration made with this reference (the caller's promise
    // and the type invariants of `Interrupts`); a registration keeps only
    // the IRQ number it was made from, not the reference.
    unsafe { &*core::ptr::from_ref::<IrqVectorRegistration<'b>>(vectors) }
}
// ANCHOR_END: borrow

/// Registers `queue`'s handler on vector `index` of `vectors`.
fn register<'b, P: Pending>(
    vectors: &'b IrqVectorRegistration<'b>,
    index: usize,
    queue: &Arc<QueuePair<P>>,
) -> Result<Registered<'b, P>> {
    let request = vectors.index(index)?.into();
    // SAFETY: The registration is boxed into an `Interrupts`, whose fields
    // are private and which is dropped, not leaked (type invariant, from
    // `Interrupts::new`'s caller): it is dropped with it, before the vectors.
    let handler = unsafe {
        irq::Registration::new(
            request,
            irq::Flags::SHARED,
            c"rnvme",
            Ok::<_, Error>(QueueIrq(queue.clone())),
        )
    };
    KBox::pin_init(handler, GFP_KERNEL)
}
