//! Stage 06: `SqRing` and `CqRing` driven against a model of the
//! controller, for any depth and any interleaving of what the driver and
//! the controller do.
//!
//! The model is written from the specification (NVMe 1.4, 4.1 "Submission
//! Queue & Completion Queue Definition", 4.6 "Completion Queue Entry"), not
//! from `ring.rs`:
//!
//! - the controller fetches submission queue entries in order, from its own
//!   head up to the last tail the driver wrote to the doorbell;
//! - for each command it posts one completion at its CQ tail, with SQHD (its
//!   SQ head after fetching) and the phase tag of the current pass: 1 on the
//!   first pass over zeroed memory, inverted each time its CQ tail wraps;
//! - it never posts into a full completion queue (head == tail + 1, from the
//!   driver's CQ head doorbell).
//!
//! The driver side is exactly what `queue.rs`'s `submit_sync` does with the
//! rings: `push`, write the entry, ring the SQ tail doorbell with `tail()`;
//! check the phase at `head()` with `is_new(phase_of(dw3))`, decode with
//! `Completion::from_dwords`, `advance`, `consumed_up_to(sq_head)`, ring the
//! CQ head doorbell with `head()`.
//!
//! What must hold, after every step:
//!
//! - `push` never hands out a slot whose command the controller has not
//!   fetched yet, and the slots come in order;
//! - the SQ doorbell never makes the controller see more (or fewer) entries
//!   than the driver wrote and it has not fetched;
//! - `is_full` is exactly "depth - 1 commands outstanding" (submitted, their
//!   completion not reaped yet), and `push` fails exactly then;
//! - `is_new` accepts exactly the completions the controller posted and the
//!   driver has not reaped, and they come back in submission order, decoded
//!   as posted;
//! - `advance` moves the head by one, and the expected phase flips exactly
//!   when the head wraps to 0;
//! - the completion queue never overflows.
//!
//! And the file itself: `core` only, no `unsafe`, clean under the kernel's
//! rustc and clippy lints (stage 06 has no module to compile it).

use std::collections::VecDeque;
use std::path::Path;

use crate::nvme_command::{cns, phase_of, Command, Completion, Status};
use crate::nvme_ring::{CqRing, SqRing};
use proptest::prelude::*;
use proptest::strategy::Union;

/// One step of the driver or the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// The driver submits a command, if its `SqRing` has room.
    Submit,
    /// The controller fetches the next command, if any, and completes it.
    Complete,
    /// The driver looks at the completion at its head and reaps it if new.
    Reap,
}

/// The controller's side of one queue pair, and the test's bookkeeping.
struct Model {
    depth: u16,
    /// Submission queue memory: written by the driver, read by the controller.
    sq_mem: Vec<[u32; 16]>,
    /// Completion queue memory: zeroed, then written by the controller.
    cq_mem: Vec<[u32; 4]>,
    /// The SQ tail doorbell: the last value the driver wrote.
    sq_tail_db: u16,
    /// The next SQ entry the controller fetches.
    sq_head: u16,
    /// The CQ head doorbell: the last value the driver wrote.
    cq_head_db: u16,
    /// The next CQ slot the controller writes.
    cq_tail: u16,
    /// The phase tag of the controller's current pass over the CQ.
    phase: bool,

    /// Per SQ slot: the cid of a command written there and not fetched yet.
    unfetched: Vec<Option<u16>>,
    /// Per CQ slot: the cid of a completion posted there and not reaped yet.
    unreaped: Vec<Option<u16>>,
    /// Commands submitted and not reaped, oldest first.
    outstanding: VecDeque<u16>,
    submitted: u64,
    reaped: u64,
    next_cid: u16,
}

/// What the controller answers to command `cid`: a result and a status
/// (some commands fail, with SCT/SC/DNR set, to exercise the decoding).
fn answer(cid: u16) -> (u32, Status) {
    let status = match cid % 4 {
        3 => Status(1 << 14 | 0x02), // DNR, invalid field in command
        2 => Status(1 << 8 | 0x01),  // command specific: invalid queue id
        _ => Status(0),
    };
    (u32::from(cid).wrapping_mul(0x9e37_79b9), status)
}

impl Model {
    fn new(depth: u16) -> Model {
        let n = usize::from(depth);
        Model {
            depth,
            sq_mem: vec![[0; 16]; n],
            cq_mem: vec![[0; 4]; n],
            sq_tail_db: 0,
            sq_head: 0,
            cq_head_db: 0,
            cq_tail: 0,
            phase: true,
            unfetched: vec![None; n],
            unreaped: vec![None; n],
            outstanding: VecDeque::new(),
            submitted: 0,
            reaped: 0,
            next_cid: 0,
        }
    }

    /// Entries between the controller's SQ head and the tail doorbell.
    fn sq_entries(&self) -> usize {
        usize::from((self.sq_tail_db + self.depth - self.sq_head) % self.depth)
    }

    /// The controller fetches one command and posts its completion.
    fn complete(&mut self) -> Result<(), TestCaseError> {
        if self.sq_head == self.sq_tail_db {
            return Ok(()); // nothing to fetch
        }
        prop_assert!(
            (self.cq_tail + 1) % self.depth != self.cq_head_db,
            "the completion queue is full (head {}, tail {}): the driver let more commands \
             be outstanding than the CQ holds",
            self.cq_head_db,
            self.cq_tail
        );
        let slot = usize::from(self.sq_head);
        let cid = (self.sq_mem[slot][0] >> 16) as u16;
        prop_assert_eq!(
            self.unfetched[slot],
            Some(cid),
            "SQ slot {} holds cid {} as the controller fetches it",
            slot,
            cid
        );
        self.unfetched[slot] = None;
        self.sq_head = (self.sq_head + 1) % self.depth;

        let (result, status) = answer(cid);
        let tail = usize::from(self.cq_tail);
        self.cq_mem[tail] = [
            result,
            0,
            u32::from(self.sq_head), // SQHD; SQID 0 (the admin queue)
            u32::from(cid) | u32::from(self.phase) << 16 | u32::from(status.0) << 17,
        ];
        self.unreaped[tail] = Some(cid);
        self.cq_tail = (self.cq_tail + 1) % self.depth;
        if self.cq_tail == 0 {
            self.phase = !self.phase;
        }
        Ok(())
    }
}

/// The driver's rings next to the model; runs `ops`, checking everything
/// after each step.
fn run(depth: u16, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut sq = SqRing::new(depth).expect("depth >= 2");
    let mut cq = CqRing::new(depth).expect("depth >= 2");
    let mut m = Model::new(depth);
    let d = u64::from(depth);

    for (step, &op) in ops.iter().enumerate() {
        match op {
            Op::Submit => {
                let full = sq.is_full();
                match sq.push() {
                    None => {
                        prop_assert!(
                            full,
                            "step {}: push failed on a ring that is not full",
                            step
                        )
                    }
                    Some(slot) => {
                        prop_assert!(!full, "step {}: push succeeded on a full ring", step);
                        prop_assert_eq!(
                            u64::from(slot),
                            m.submitted % d,
                            "step {}: slots are handed out in order",
                            step
                        );
                        prop_assert_eq!(
                            m.unfetched[usize::from(slot)],
                            None,
                            "step {}: push handed out slot {}, whose command the controller has \
                             not fetched",
                            step,
                            slot
                        );
                        let cid = m.next_cid;
                        m.next_cid = m.next_cid.wrapping_add(1);
                        let cmd = Command::identify(cns::CONTROLLER, 0, 0x1000 * u64::from(cid));
                        m.sq_mem[usize::from(slot)] = cmd.to_dwords(cid);
                        m.unfetched[usize::from(slot)] = Some(cid);
                        m.outstanding.push_back(cid);
                        m.submitted += 1;
                        // The SQ tail doorbell.
                        m.sq_tail_db = sq.tail();
                        prop_assert_eq!(
                            sq.tail(),
                            (slot + 1) % depth,
                            "step {}: the tail is the slot after the new command",
                            step
                        );
                        let written = m.unfetched.iter().filter(|s| s.is_some()).count();
                        prop_assert_eq!(
                            m.sq_entries(),
                            written,
                            "step {}: the doorbell shows the controller {} entries, {} are waiting",
                            step,
                            m.sq_entries(),
                            written
                        );
                    }
                }
            }
            Op::Complete => m.complete()?,
            Op::Reap => {
                let head = cq.head();
                prop_assert_eq!(u64::from(head), m.reaped % d, "step {}: CQ head", step);
                let entry = m.cq_mem[usize::from(head)];
                let new = cq.is_new(phase_of(entry[3]));
                prop_assert_eq!(
                    new,
                    m.unreaped[usize::from(head)].is_some(),
                    "step {}: is_new at CQ slot {} (phase tag {}) says {}, but the controller {}",
                    step,
                    head,
                    phase_of(entry[3]),
                    new,
                    if new {
                        "posted nothing new there"
                    } else {
                        "posted a completion there"
                    }
                );
                if new {
                    let c = Completion::from_dwords(entry);
                    prop_assert_eq!(
                        Some(c.cid),
                        m.outstanding.pop_front(),
                        "step {}: order",
                        step
                    );
                    prop_assert_eq!(Some(c.cid), m.unreaped[usize::from(head)]);
                    let (result, status) = answer(c.cid);
                    prop_assert_eq!((c.result, c.status, c.sq_id), (result, status, 0));
                    m.unreaped[usize::from(head)] = None;
                    m.reaped += 1;

                    let expected_phase = cq.is_new(true);
                    cq.advance();
                    prop_assert_eq!(
                        cq.head(),
                        (head + 1) % depth,
                        "step {}: advance from CQ slot {} of {}",
                        step,
                        head,
                        depth
                    );
                    prop_assert_eq!(
                        cq.is_new(true) != expected_phase,
                        cq.head() == 0,
                        "step {}: the expected phase must flip exactly when the head wraps to 0 \
                         (head now {})",
                        step,
                        cq.head()
                    );
                    sq.consumed_up_to(c.sq_head);
                    // The CQ head doorbell.
                    m.cq_head_db = cq.head();
                }
            }
        }
        prop_assert_eq!(
            sq.is_full(),
            m.outstanding.len() == usize::from(depth) - 1,
            "step {}: is_full with {} of {} commands outstanding",
            step,
            m.outstanding.len(),
            depth
        );
    }
    Ok(())
}

/// Ops with per-case weights: some cases fill the ring, others drain it.
fn ops() -> impl Strategy<Value = Vec<Op>> {
    (1u32..6, 1u32..6, 1u32..6).prop_flat_map(|(s, c, r)| {
        let op = Union::new_weighted(vec![
            (s, Just(Op::Submit).boxed()),
            (c, Just(Op::Complete).boxed()),
            (r, Just(Op::Reap).boxed()),
        ]);
        prop::collection::vec(op, 0..1000)
    })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(1000))]

    /// Any depth, any interleaving.
    #[test]
    fn nvme_rings_follow_the_controller(depth in 2u16..=64, ops in ops()) {
        run(depth, &ops)?;
    }
}

/// Not random: submit, complete, reap in lockstep for three passes over the
/// ring, for every depth: the synchronous admin queue of `submit_sync`.
#[test]
fn nvme_rings_lockstep_three_passes() {
    for depth in 2u16..=64 {
        let ops: Vec<Op> = (0..3 * usize::from(depth))
            .flat_map(|_| [Op::Reap, Op::Submit, Op::Reap, Op::Complete, Op::Reap])
            .collect();
        if let Err(e) = run(depth, &ops) {
            panic!("depth {depth}: {e}");
        }
    }
}

/// Not random: fill the ring, let the controller complete everything, reap
/// everything, twice per pass, for every depth.
#[test]
fn nvme_rings_fill_and_drain() {
    for depth in 2u16..=64 {
        let n = usize::from(depth);
        let mut ops = Vec::new();
        for _ in 0..2 * n {
            ops.extend(std::iter::repeat_n(Op::Submit, n)); // one more than fits
            ops.extend(std::iter::repeat_n(Op::Complete, n));
            ops.extend(std::iter::repeat_n(Op::Reap, n + 1)); // one more than posted
        }
        if let Err(e) = run(depth, &ops) {
            panic!("depth {depth}: {e}");
        }
    }
}

#[test]
fn nvme_rings_need_two_entries() {
    assert_eq!(SqRing::new(0), None);
    assert_eq!(SqRing::new(1), None);
    assert!(SqRing::new(2).is_some());
    assert_eq!(CqRing::new(0), None);
    assert_eq!(CqRing::new(1), None);
    assert!(CqRing::new(2).is_some());
}

#[test]
fn nvme_sq_ring_of_4() {
    let mut sq = SqRing::new(4).unwrap();
    // Empty: tail 0. Three commands fit, the fourth slot stays free.
    assert_eq!(
        (sq.push(), sq.push(), sq.push()),
        (Some(0), Some(1), Some(2))
    );
    assert!(sq.is_full());
    assert_eq!(sq.push(), None);
    assert_eq!(sq.tail(), 3);
    // The controller reports SQHD 1: slot 0 is free again, and the tail
    // slot 3 is next.
    sq.consumed_up_to(1);
    assert!(!sq.is_full());
    assert_eq!(sq.push(), Some(3));
    assert_eq!(sq.tail(), 0, "the tail wraps");
    assert_eq!(
        sq.push(),
        None,
        "slot 0 would make tail == head: full, not empty"
    );
    // SQHD out of range is ignored rather than trusted.
    sq.consumed_up_to(4);
    assert_eq!(sq.push(), None);
    sq.consumed_up_to(0);
    assert_eq!(
        (sq.push(), sq.push(), sq.push()),
        (Some(0), Some(1), Some(2))
    );
}

#[test]
fn nvme_cq_ring_phase_flips_on_each_wrap() {
    for depth in 2u16..=64 {
        let mut cq = CqRing::new(depth).unwrap();
        // The first pass: the controller writes phase 1 over zeroed memory.
        assert!(
            cq.is_new(true) && !cq.is_new(false),
            "depth {depth}: first pass"
        );
        for i in 1..=3 * u32::from(depth) {
            cq.advance();
            let pass = i / u32::from(depth);
            assert_eq!(
                u32::from(cq.head()),
                i % u32::from(depth),
                "depth {depth}, step {i}"
            );
            assert_eq!(
                cq.is_new(true),
                pass % 2 == 0,
                "depth {depth}, step {i}: phase"
            );
            assert_eq!(
                cq.is_new(false),
                pass % 2 == 1,
                "depth {depth}, step {i}: phase"
            );
        }
    }
}

// ---- the file: core only, no unsafe, the kernel's rustc and clippy lints -------------
// Stage 06 has no module: stage 07 and later compile the solution's ring.rs
// in the kernel, never the learner's. These hold the learner's to the same
// rules, as stage 15's tests do for passthru.rs.

fn ring_file() -> &'static Path {
    Path::new(crate::NVME_RING_FILE)
}

#[test]
fn nvme_ring_uses_core_only_and_no_unsafe() {
    crate::p9_kernel_lints::assert_core_only_and_no_unsafe(ring_file());
}

/// A `no_std` crate that includes `ring.rs` the way stage 07's `nvme.rs` does.
fn lint_wrapper(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let body = format!(
        "#[allow(dead_code)] // the driver uses the rings, not this crate\n\
         #[path = {:?}]\nmod ring;\n",
        ring_file().display().to_string()
    );
    crate::p9_kernel_lints::stand_in_crate(&format!("nvme-ring-lints-{name}"), &body)
}

#[test]
fn nvme_ring_builds_with_the_kernel_rustc_lints() {
    let (dir, lib) = lint_wrapper("rustc");
    crate::p9_kernel_lints::check_rustc_lints(&dir, &lib);
}

#[test]
fn nvme_ring_is_clippy_clean_with_the_kernel_lints() {
    let (dir, lib) = lint_wrapper("clippy");
    crate::p9_kernel_lints::check_clippy_lints(&dir, &lib);
}
