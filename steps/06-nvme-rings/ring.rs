// SPDX-License-Identifier: GPL-2.0

//! Ring index arithmetic of a submission/completion queue pair: stage 06's
//! exercise, which stage 07's driver and every later one include.
//!
//! `core` only: the host tests check, for any depth and any sequence of
//! submissions and completions, that the submission queue never overwrites
//! an entry the controller has not consumed and that the phase flips exactly
//! when the completion queue wraps.
//!
//! Check your work with `make check STEP=06` (on the host: no VM).
#![forbid(unsafe_code)]

// ANCHOR: sq
/// The driver's side of a submission queue: where the next command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SqRing {
    depth: u16,
    /// The slot the next command is written to.
    tail: u16,
    /// The first slot the controller has not consumed yet (from completions).
    head: u16,
}

impl SqRing {
    /// An empty ring of `depth` entries (at least 2: one always stays free).
    pub(crate) const fn new(depth: u16) -> Option<SqRing> {
        if depth < 2 {
            return None;
        }
        Some(SqRing {
            depth,
            tail: 0,
            head: 0,
        })
    }

    /// Whether another command would overwrite one not yet consumed: the
    /// queue is full when the tail is one behind the head.
    pub(crate) const fn is_full(&self) -> bool {
        (self.tail + 1) % self.depth == self.head
    }

    /// Claims the next slot: returns it and moves the tail past it, or
    /// `None` if the ring is full.
    pub(crate) fn push(&mut self) -> Option<u16> {
        if self.is_full() {
            return None;
        }
        let slot = self.tail;
        self.tail = (self.tail + 1) % self.depth;
        Some(slot)
    }

    /// The value for the tail doorbell: the slot after the last command.
    pub(crate) const fn tail(&self) -> u16 {
        self.tail
    }

    // ANCHOR: consumed
    /// Records the controller's SQ head from a completion (SQHD): the slots
    /// before it are free again. A value out of range is ignored.
    pub(crate) fn consumed_up_to(&mut self, sq_head: u16) {
        // TODO (exercise 1): Set `head` to `sq_head`, the first slot the
        // controller has not fetched, so that `is_full` and `push` see the
        // slots before it free again. `sq_head` comes from the device: if it
        // is not below `depth`, ignore it (leave `head` as it is).
        // Tests: `nvme_ring_proptest::nvme_sq_ring_of_4` and
        // `nvme_rings_*` ("is_full with N of M commands outstanding")
        // (`scripts/host-test.sh --tree steps --filter nvme_ring`).
        let _ = sq_head;
    }
    // ANCHOR_END: consumed
}
// ANCHOR_END: sq

// ANCHOR: cq
/// The driver's side of a completion queue: where the next completion will
/// appear, and which phase tag marks it as new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CqRing {
    depth: u16,
    head: u16,
    phase: bool,
}

impl CqRing {
    /// A ring of `depth` entries. The controller writes its first pass with
    /// phase 1 over zeroed memory, so phase 1 means "new".
    pub(crate) const fn new(depth: u16) -> Option<CqRing> {
        if depth < 2 {
            return None;
        }
        Some(CqRing {
            depth,
            head: 0,
            phase: true,
        })
    }

    /// The slot the next completion will be written to.
    pub(crate) const fn head(&self) -> u16 {
        self.head
    }

    /// Whether an entry with phase tag `phase` at `head()` is a new one.
    pub(crate) const fn is_new(&self, phase: bool) -> bool {
        phase == self.phase
    }

    // ANCHOR: advance
    /// Consumes the entry at `head()`; flips the expected phase on wrap.
    pub(crate) fn advance(&mut self) {
        // TODO (exercise 2): Move `head` to the next slot. When it wraps back
        // to 0, the controller's next pass writes the opposite phase tag: flip
        // `self.phase` then, and only then.
        // Tests: `nvme_ring_proptest::nvme_cq_ring_phase_flips_on_each_wrap`
        // and `nvme_rings_*` ("advance from CQ slot N of M", "the expected
        // phase must flip exactly when the head wraps to 0")
        // (`scripts/host-test.sh --tree steps --filter nvme_ring`).
    }
    // ANCHOR_END: advance
}
// ANCHOR_END: cq
