//! Stage 23: the task state machine (`solutions/lib/exec/task_state.rs`), which
//! decides for the executor when a task is queued and when it is polled.
//!
//! Three kinds of test, from the exact to the concurrent:
//!
//! - vectors: every operation from every state, with the state byte and the
//!   answer it must give, worked out from the diagram in `task_state.rs`;
//! - a proptest model: random interleavings of what the wakers and one to
//!   three workers do, played one step at a time against a model of the
//!   executor (`Task::run`, `Task::wake`, `Task::cancel` in `executor.rs`),
//!   checking its guarantees after every step;
//! - a stress test: real threads, a real channel for the workqueue, wakers
//!   hammering `wake()` while the workers poll.
//!
//! The guarantees (the module documentation of `task_state.rs`): never two
//! polls at once; at most one work item queued; no lost wake (a wake that
//! arrives after a poll started leads to another poll, unless the task is
//! done); once done, nothing is queued or polled again.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::exec_task_state::TaskState;
use proptest::prelude::*;
use proptest::strategy::Union;

// ---- the state byte ------------------------------------------------------------

// `task_state.rs`'s encoding (its constants are private to it). The vectors
// pin it down, so a change to the encoding shows up here first.
const IDLE: u8 = 0;
const QUEUED: u8 = 1;
const RUNNING: u8 = 2;
const WOKEN: u8 = 3;
const DONE: u8 = 4;

/// The state byte of `s`.
fn raw(s: &TaskState) -> u8 {
    // `TaskState` is a struct with one `AtomicU8` field and no other: with a
    // size of 1, that field can only be at offset 0, so a `&TaskState` points
    // at the `AtomicU8`. (Shared access to an atomic: no aliasing issue.)
    assert_eq!(std::mem::size_of::<TaskState>(), 1, "TaskState is one AtomicU8");
    // SAFETY: see above; the reference lives as long as `s`.
    let atomic = unsafe { &*(s as *const TaskState).cast::<AtomicU8>() };
    atomic.load(Ordering::SeqCst)
}

fn name(state: u8) -> &'static str {
    match state {
        IDLE => "Idle",
        QUEUED => "Queued",
        RUNNING => "Running",
        WOKEN => "Woken",
        DONE => "Done",
        _ => "not a state",
    }
}

// ---- vectors -------------------------------------------------------------------

/// One call on the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Wake,
    Start,
    End { ready: bool },
    Cancel,
}

/// Makes the call; `cancel()` returns nothing, reported as `false`.
fn call(s: &TaskState, c: Call) -> bool {
    match c {
        Call::Wake => s.wake(),
        Call::Start => s.start(),
        Call::End { ready } => s.end(ready),
        Call::Cancel => {
            s.cancel();
            false
        }
    }
}

/// Each state, reached the way the executor reaches it (every step checked).
fn in_state(state: u8) -> TaskState {
    // `spawn` creates a task queued.
    let s = TaskState::new_queued();
    assert_eq!(raw(&s), QUEUED);
    match state {
        QUEUED => {}
        DONE => s.cancel(),
        _ => {
            // A worker runs the work item.
            assert!(s.start());
            assert_eq!(raw(&s), RUNNING);
            match state {
                RUNNING => {}
                // A wake during the poll.
                WOKEN => assert!(!s.wake()),
                // The poll returned `Pending` and nobody woke the task.
                IDLE => assert!(!s.end(false)),
                _ => unreachable!(),
            }
        }
    }
    assert_eq!(raw(&s), state, "set-up of {}", name(state));
    s
}

/// From `from`, each call on a fresh task: (call, what it returns, the state
/// after).
fn check_row(from: u8, rows: [(Call, bool, u8); 5]) {
    for (c, returns, after) in rows {
        let s = in_state(from);
        let got = call(&s, c);
        assert_eq!(
            (got, name(raw(&s))),
            (returns, name(after)),
            "{c:?} from {}: (returned, state after)",
            name(from)
        );
    }
}

#[test]
fn exec_state_encoding_and_new_queued() {
    // `new_queued` is a `const fn`: a task could even be a static.
    static S: TaskState = TaskState::new_queued();
    assert_eq!(raw(&S), QUEUED);
    for state in [IDLE, QUEUED, RUNNING, WOKEN, DONE] {
        assert_eq!(raw(&in_state(state)), state);
    }
}

#[test]
fn exec_from_idle() {
    // Idle: no work item, nobody polling. The first wake queues the task;
    // `start` and `end` do not happen here in the executor (a worker only
    // starts a task it took off the queue), and change nothing but `ready`.
    check_row(
        IDLE,
        [
            (Call::Wake, true, QUEUED),
            (Call::Start, false, IDLE),
            (Call::End { ready: false }, false, IDLE),
            (Call::End { ready: true }, false, DONE),
            (Call::Cancel, false, DONE),
        ],
    );
}

#[test]
fn exec_from_queued() {
    // Queued: one work item on its way. More wakes queue nothing more; the
    // worker's `start` says "poll".
    check_row(
        QUEUED,
        [
            (Call::Wake, false, QUEUED),
            (Call::Start, true, RUNNING),
            (Call::End { ready: false }, false, QUEUED),
            (Call::End { ready: true }, false, DONE),
            (Call::Cancel, false, DONE),
        ],
    );
}

#[test]
fn exec_from_running() {
    // Running: a worker is polling. A wake is remembered (Woken) instead of
    // queued; a second `start` (a second worker) must not poll.
    check_row(
        RUNNING,
        [
            (Call::Wake, false, WOKEN),
            (Call::Start, false, RUNNING),
            (Call::End { ready: false }, false, IDLE),
            (Call::End { ready: true }, false, DONE),
            (Call::Cancel, false, DONE),
        ],
    );
}

#[test]
fn exec_from_woken() {
    // Woken: polling, and woken meanwhile. `end(false)` tells the worker to
    // queue the task again: that is the wake that must not be lost.
    check_row(
        WOKEN,
        [
            (Call::Wake, false, WOKEN),
            (Call::Start, false, WOKEN),
            (Call::End { ready: false }, true, QUEUED),
            (Call::End { ready: true }, false, DONE),
            (Call::Cancel, false, DONE),
        ],
    );
}

#[test]
fn exec_from_done() {
    // Done: nothing moves it, nothing asks for a queueing or a poll.
    check_row(
        DONE,
        [
            (Call::Wake, false, DONE),
            (Call::Start, false, DONE),
            (Call::End { ready: false }, false, DONE),
            (Call::End { ready: true }, false, DONE),
            (Call::Cancel, false, DONE),
        ],
    );
}

#[test]
fn exec_done_by_finishing() {
    // A poll that returns `Ready` ends the task, woken meanwhile or not.
    for from in [RUNNING, WOKEN] {
        let s = in_state(from);
        assert!(!s.end(true), "end(true) from {} must not requeue", name(from));
        assert_eq!(raw(&s), DONE);
        assert!(!s.wake());
        assert!(!s.start());
        assert_eq!(raw(&s), DONE);
    }
}

#[test]
fn exec_diagram_paths() {
    // The diagram in task_state.rs, edge by edge, as one task's life: spawn,
    // poll (Pending), wake, poll, wake during the poll, poll again, Ready.
    let s = TaskState::new_queued();
    let steps: [(Call, bool, u8); 11] = [
        (Call::Start, true, RUNNING),
        (Call::End { ready: false }, false, IDLE),
        (Call::Wake, true, QUEUED),
        (Call::Wake, false, QUEUED),
        (Call::Start, true, RUNNING),
        (Call::Wake, false, WOKEN),
        (Call::Wake, false, WOKEN),
        (Call::End { ready: false }, true, QUEUED),
        (Call::Start, true, RUNNING),
        (Call::End { ready: true }, false, DONE),
        (Call::Wake, false, DONE),
    ];
    for (i, (c, returns, after)) in steps.into_iter().enumerate() {
        assert_eq!((call(&s, c), name(raw(&s))), (returns, name(after)), "step {i}: {c:?}");
    }
}

#[test]
fn exec_many_wakes_queue_once() {
    // However many wakers fire, only the first wake from Idle queues.
    let s = in_state(IDLE);
    let queued = (0..1000).filter(|_| s.wake()).count();
    assert_eq!(queued, 1);
    assert_eq!(raw(&s), QUEUED);
    // And during a poll, however many, exactly one requeue.
    assert!(s.start());
    assert_eq!((0..1000).filter(|_| s.wake()).count(), 0);
    assert!(s.end(false));
    assert_eq!(raw(&s), QUEUED);
}

// ---- proptest: a model of the executor -----------------------------------------

/// One step of a waker, a worker or `shutdown`. Worker numbers are taken
/// modulo the number of workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A waker fires (`Task::wake`): queue the task if `wake()` says so.
    Wake,
    /// The workqueue hands the queued work item to a free worker.
    Pop(usize),
    /// That worker runs the work item: `start()` (`Task::run`'s first line).
    Start(usize),
    /// The worker's poll returns, `Ready` or `Pending`: `end(ready)`, and
    /// queue the task again if it says so.
    End(usize, bool),
    /// `Executor::shutdown` cancels the task (`Task::cancel`).
    Cancel,
}

/// What a worker is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Worker {
    Free,
    /// Took the work item off the queue, has not called `start` yet.
    Holding,
    /// Polling; `woken` says whether a wake arrived since `start`.
    Polling {
        woken: bool,
    },
}

/// The executor around one task, as the test sees it.
struct Sim {
    state: TaskState,
    /// Work items in the workqueue.
    queue: usize,
    workers: Vec<Worker>,
    /// Finished (a poll returned `Ready`) or cancelled.
    done: bool,
    /// A wake happened after the last poll started (or before the first):
    /// a poll must still follow it, unless the task is done.
    unserved_wake: bool,
    polls: usize,
}

impl Sim {
    fn new(workers: usize) -> Sim {
        // `spawn` creates the task queued and queues its work item.
        Sim {
            state: TaskState::new_queued(),
            queue: 1,
            workers: vec![Worker::Free; workers],
            done: false,
            unserved_wake: true,
            polls: 0,
        }
    }

    fn enqueue(&mut self) {
        self.queue += 1;
    }

    fn step(&mut self, i: usize, step: Step) -> Result<(), TestCaseError> {
        let n = self.workers.len();
        match step {
            Step::Wake => {
                let queue = self.state.wake();
                prop_assert!(!(self.done && queue), "step {}: a wake queued a done task", i);
                if queue {
                    self.enqueue();
                }
                self.unserved_wake = true;
                for w in &mut self.workers {
                    if let Worker::Polling { woken } = w {
                        *woken = true;
                    }
                }
            }
            Step::Pop(w) => {
                let w = w % n;
                if self.workers[w] == Worker::Free && self.queue > 0 {
                    self.queue -= 1;
                    self.workers[w] = Worker::Holding;
                }
            }
            Step::Start(w) => {
                let w = w % n;
                if self.workers[w] == Worker::Holding {
                    if self.state.start() {
                        prop_assert!(!self.done, "step {}: worker {} polls a done task", i, w);
                        let others =
                            self.workers.iter().filter(|s| matches!(s, Worker::Polling { .. }));
                        prop_assert_eq!(
                            others.count(),
                            0,
                            "step {}: worker {} polls while another worker polls",
                            i,
                            w
                        );
                        self.workers[w] = Worker::Polling { woken: false };
                        self.polls += 1;
                        self.unserved_wake = false;
                    } else {
                        // The executor's only reason to skip a queued item.
                        prop_assert!(
                            self.done,
                            "step {}: start refused to poll a task that is not done",
                            i
                        );
                        self.workers[w] = Worker::Free;
                    }
                }
            }
            Step::End(w, ready) => {
                let w = w % n;
                if let Worker::Polling { woken } = self.workers[w] {
                    let requeue = self.state.end(ready);
                    // Requeue exactly when a wake arrived during this poll,
                    // the poll returned `Pending` and nobody cancelled.
                    let expected = woken && !ready && !self.done;
                    prop_assert_eq!(
                        requeue,
                        expected,
                        "step {}: end(ready = {}) after a poll {} a wake, done = {}",
                        i,
                        ready,
                        if woken { "with" } else { "without" },
                        self.done
                    );
                    self.workers[w] = Worker::Free;
                    if ready {
                        self.done = true;
                    }
                    if requeue {
                        self.enqueue();
                    }
                }
            }
            Step::Cancel => {
                self.state.cancel();
                self.done = true;
            }
        }
        self.check(i)
    }

    /// The guarantees, and the exact state, after step `i`.
    fn check(&self, i: usize) -> Result<(), TestCaseError> {
        let holding = self.workers.iter().filter(|w| **w == Worker::Holding).count();
        let mut polling = 0;
        let mut woken = false;
        for w in &self.workers {
            if let Worker::Polling { woken: w } = w {
                polling += 1;
                woken |= w;
            }
        }
        prop_assert!(polling <= 1, "step {}: {} polls at once", i, polling);
        prop_assert!(
            self.queue + holding <= 1,
            "step {}: {} work items queued, {} taken and not started",
            i,
            self.queue,
            holding
        );
        if self.unserved_wake && !self.done {
            // The wake is in a queued item, or the poll in progress will
            // requeue the task.
            prop_assert!(
                self.queue + holding == 1 || woken,
                "step {}: lost wake: nothing queued and no poll that will requeue",
                i
            );
        }
        let expected = if self.done {
            DONE
        } else if woken {
            WOKEN
        } else if polling == 1 {
            RUNNING
        } else if self.queue + holding == 1 {
            QUEUED
        } else {
            IDLE
        };
        prop_assert_eq!(name(raw(&self.state)), name(expected), "step {}: state", i);
        Ok(())
    }

    /// Lets the workers run until nothing is queued or polled (each poll
    /// returning `Pending`), then checks the task is Idle with no wake left
    /// unserved, or done.
    fn settle(&mut self, mut i: usize) -> Result<(), TestCaseError> {
        loop {
            let step = self.workers.iter().enumerate().find_map(|(w, s)| match s {
                Worker::Polling { .. } => Some(Step::End(w, false)),
                Worker::Holding => Some(Step::Start(w)),
                Worker::Free => None,
            });
            let step = match step {
                Some(step) => step,
                None if self.queue > 0 => Step::Pop(0),
                None => break,
            };
            self.step(i, step)?;
            i += 1;
            prop_assert!(i < 1_000_000, "the workers never settle");
        }
        prop_assert!(!self.unserved_wake || self.done, "settled with a wake unserved");
        if !self.done {
            // Idle: the next wake queues it.
            prop_assert!(self.state.wake(), "settled but not Idle");
        }
        Ok(())
    }
}

fn run(workers: usize, steps: &[Step]) -> Result<usize, TestCaseError> {
    let mut sim = Sim::new(workers);
    sim.check(0)?;
    for (i, &step) in steps.iter().enumerate() {
        sim.step(i + 1, step)?;
    }
    sim.settle(steps.len() + 1)?;
    Ok(sim.polls)
}

/// Steps with per-case weights: some cases wake a lot, others mostly poll;
/// `Ready` and `Cancel` are rare (or absent), so most cases live long.
fn steps() -> impl Strategy<Value = Vec<Step>> {
    (1u32..8, 1u32..8, any::<bool>(), any::<bool>()).prop_flat_map(|(wake, work, ready, cancel)| {
        let mut choices = vec![
            (2 * wake, Just(Step::Wake).boxed()),
            (2 * work, (0usize..3).prop_map(Step::Pop).boxed()),
            (2 * work, (0usize..3).prop_map(Step::Start).boxed()),
            (2 * work, (0usize..3).prop_map(|w| Step::End(w, false)).boxed()),
        ];
        if ready {
            choices.push((1, (0usize..3).prop_map(|w| Step::End(w, true)).boxed()));
        }
        if cancel {
            choices.push((1, Just(Step::Cancel).boxed()));
        }
        prop::collection::vec(Union::new_weighted(choices), 0..300)
    })
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(500))]

    /// One worker (the guarantees must not depend on there being one) or
    /// several, any interleaving of wakes, polls, `Ready` and cancel.
    #[test]
    fn exec_model_any_interleaving(workers in 1usize..=3, steps in steps()) {
        run(workers, &steps)?;
    }
}

#[test]
fn exec_model_lockstep() {
    // Not random: wake during every poll, 100 times, then finish. Each wake
    // must cost exactly one more poll.
    let mut steps = Vec::new();
    for _ in 0..100 {
        steps.extend([Step::Pop(0), Step::Start(0), Step::Wake, Step::End(0, false)]);
    }
    steps.extend([Step::Pop(0), Step::Start(0), Step::End(0, true)]);
    let polls = run(1, &steps).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(polls, 101);
}

// ---- stress: real threads ------------------------------------------------------

/// What the wakers and workers share: one task, and the test's counters.
struct Shared {
    state: TaskState,
    /// Wakes issued so far: a waker increments it, then calls `wake()`. The
    /// "future" reads it when polled: its way to see the events it was
    /// woken for. `Relaxed` on purpose: that a poll sees the increments
    /// before the wakes must follow from `TaskState`'s own ordering.
    sent: AtomicU64,
    /// The largest `sent` a poll saw.
    observed: AtomicU64,
    /// Work items sent to the channel and not started yet.
    in_flight: AtomicUsize,
    /// Set while a poll runs.
    polling: AtomicBool,
    polls: AtomicU64,
    /// Polls that ended Woken: `end()` asked for a requeue.
    requeues: AtomicU64,
    /// The future returned `Ready`.
    finished: AtomicBool,
    /// Set right after `cancel()` returned.
    cancelled: AtomicBool,
    /// Ask the workers to stop once the channel is empty, and the wakers to
    /// skip their remaining wakes.
    stop: AtomicBool,
    /// A waker's or worker's assertion failed (its panic message is in the
    /// test's output).
    failed: AtomicBool,
    /// The future is `Ready` once it saw this many wakes.
    target: u64,
}

impl Shared {
    fn new(target: u64) -> Shared {
        Shared {
            state: TaskState::new_queued(),
            sent: AtomicU64::new(0),
            observed: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            polling: AtomicBool::new(false),
            polls: AtomicU64::new(0),
            requeues: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            target,
        }
    }

    /// Runs `f` in a waker or worker thread. A failed assertion in it stops
    /// the test's threads and is reported by the test's thread, instead of
    /// leaving it waiting for a thread that is gone.
    fn guarded(&self, f: impl FnOnce()) {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
            self.failed.store(true, Ordering::SeqCst);
            self.stop.store(true, Ordering::SeqCst);
        }
    }

    /// Panics if a waker or worker failed.
    fn check(&self) {
        assert!(!self.failed.load(Ordering::SeqCst), "a waker or worker failed: see its panic");
    }

    /// `Executor::enqueue`.
    fn enqueue(&self, queue: &mpsc::Sender<()>) {
        let before = self.in_flight.fetch_add(1, Ordering::SeqCst);
        assert_eq!(before, 0, "a second work item queued while one is in flight");
        queue.send(()).expect("the workers are gone");
    }

    /// `Task::wake`.
    fn wake(&self, queue: &mpsc::Sender<()>) {
        let after_cancel = self.cancelled.load(Ordering::SeqCst);
        if self.state.wake() {
            assert!(!after_cancel, "a wake after cancel() queued the task");
            self.enqueue(queue);
        }
    }

    /// `Task::run`, for a work item just taken off the channel.
    fn run(&self, queue: &mpsc::Sender<()>) {
        let before = self.in_flight.fetch_sub(1, Ordering::SeqCst);
        assert_eq!(before, 1, "work items in flight");
        let after_cancel = self.cancelled.load(Ordering::SeqCst);
        if !self.state.start() {
            return;
        }
        assert!(!after_cancel, "start() after cancel() said poll");
        assert!(!self.polling.swap(true, Ordering::SeqCst), "two polls at once");
        // The poll: look at the wakes so far; done once all were seen.
        let seen = self.sent.load(Ordering::Relaxed);
        // Give the wakers the processor in the middle of the poll: the wakes
        // that arrive now, after the poll looked, are the ones that must
        // not be lost (without this, on two cores, wakes and polls rarely
        // overlap at all).
        thread::yield_now();
        let previous = self.observed.fetch_max(seen, Ordering::Relaxed);
        assert!(seen >= previous, "a poll saw fewer wakes than an earlier one");
        self.polls.fetch_add(1, Ordering::Relaxed);
        let ready = seen == self.target;
        self.polling.store(false, Ordering::SeqCst);
        if self.state.end(ready) {
            self.requeues.fetch_add(1, Ordering::Relaxed);
            self.enqueue(queue);
        }
        if ready {
            self.finished.store(true, Ordering::SeqCst);
        }
    }
}

/// A worker: takes work items off the channel until told to stop and the
/// channel is empty.
fn worker(shared: Arc<Shared>, rx: Arc<Mutex<mpsc::Receiver<()>>>, tx: mpsc::Sender<()>) {
    loop {
        let item = rx.lock().unwrap().recv_timeout(Duration::from_millis(2));
        match item {
            Ok(()) => shared.guarded(|| shared.run(&tx)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Spawns `workers` workers on a fresh channel and queues the task's first
/// work item (`spawn`). Returns the sender for the wakers and the workers'
/// handles.
fn start_workers(
    shared: &Arc<Shared>,
    workers: usize,
) -> (mpsc::Sender<()>, Vec<thread::JoinHandle<()>>) {
    let (tx, rx) = mpsc::channel();
    let rx = Arc::new(Mutex::new(rx));
    shared.enqueue(&tx);
    let handles = (0..workers)
        .map(|_| {
            let (shared, rx, tx) = (shared.clone(), rx.clone(), tx.clone());
            thread::spawn(move || worker(shared, rx, tx))
        })
        .collect();
    (tx, handles)
}

/// Waits until `done()` holds, for at most a few seconds.
fn wait_for(shared: &Shared, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(4);
    while !done() {
        shared.check();
        assert!(Instant::now() < deadline, "{what}");
        thread::yield_now();
    }
}

/// Stops the workers (and the wakers) when the test ends, passed or failed.
struct StopOnDrop<'a>(&'a Shared);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::SeqCst);
    }
}

const WAKERS: u64 = 3;
/// Many short rounds: the last wakes of each round are the ones a lost wake
/// cannot hide behind a later one.
const ROUNDS: u64 = 1000;
const PER_ROUND: u64 = 20;

/// `WAKERS` threads wake the task `PER_ROUND` times each, all at once, for
/// `ROUNDS` rounds. After each round, once the wakers are through, a poll
/// must have seen every wake of the round: a lost wake leaves the task idle
/// with wakes unseen (and fails here, at the round it happened).
fn stress(workers: usize) {
    let total = WAKERS * ROUNDS * PER_ROUND;
    let shared = Arc::new(Shared::new(total));
    let (tx, worker_handles) = start_workers(&shared, workers);
    let stop = StopOnDrop(&shared);
    let barrier = Arc::new(Barrier::new(WAKERS as usize + 1));
    let wakers: Vec<_> = (0..WAKERS)
        .map(|_| {
            let (shared, tx, barrier) = (shared.clone(), tx.clone(), barrier.clone());
            thread::spawn(move || {
                for _ in 0..ROUNDS {
                    barrier.wait();
                    if !shared.stop.load(Ordering::SeqCst) {
                        shared.guarded(|| {
                            for i in 0..PER_ROUND {
                                shared.sent.fetch_add(1, Ordering::Relaxed);
                                shared.wake(&tx);
                                if i % 4 == 3 {
                                    thread::yield_now(); // Let the workers in.
                                }
                            }
                        });
                    }
                    barrier.wait();
                }
            })
        })
        .collect();
    for round in 1..=ROUNDS {
        barrier.wait(); // go
        barrier.wait(); // every wake of the round returned
        let sent = round * WAKERS * PER_ROUND;
        let lost = format!("round {round}: lost wake: no poll saw all {sent} wakes");
        wait_for(&shared, &lost, || shared.observed.load(Ordering::Relaxed) == sent);
    }
    for h in wakers {
        h.join().expect("a waker panicked");
    }
    // The last poll saw every wake: the future is ready, the task done.
    wait_for(&shared, "the future never finished", || shared.finished.load(Ordering::SeqCst));
    drop(stop);
    drop(tx);
    for h in worker_handles {
        h.join().expect("a worker panicked");
    }
    shared.check();
    assert_eq!(shared.in_flight.load(Ordering::SeqCst), 0);
    assert!(!shared.state.wake() && !shared.state.start(), "done");
    let polls = shared.polls.load(Ordering::Relaxed);
    assert!(
        (ROUNDS..=1 + total).contains(&polls),
        "{polls} polls: at least one per round, at most one per wake (and spawn's)"
    );
    // The race this test is about happened: wakes during polls.
    assert!(shared.requeues.load(Ordering::Relaxed) > 0, "no wake ever arrived during a poll");
}

#[test]
fn exec_stress_one_worker() {
    stress(1);
}

#[test]
fn exec_stress_two_workers() {
    stress(2);
}

#[test]
fn exec_stress_cancel_while_waking() {
    // The future never finishes; `shutdown` cancels the task halfway through
    // the wakes. After `cancel()` returned, no wake may queue it and no
    // worker may start a poll (checked in `Shared::wake` and `Shared::run`).
    let total = WAKERS * 20_000;
    let shared = Arc::new(Shared::new(u64::MAX));
    let (tx, worker_handles) = start_workers(&shared, 2);
    let stop = StopOnDrop(&shared);
    let wakers: Vec<_> = (0..WAKERS)
        .map(|_| {
            let (shared, tx) = (shared.clone(), tx.clone());
            thread::spawn(move || {
                shared.guarded(|| {
                    for _ in 0..total / WAKERS {
                        if shared.stop.load(Ordering::Relaxed) {
                            return;
                        }
                        shared.sent.fetch_add(1, Ordering::Relaxed);
                        shared.wake(&tx);
                    }
                })
            })
        })
        .collect();
    let halfway = || shared.sent.load(Ordering::Relaxed) >= total / 2;
    wait_for(&shared, "the wakers never got halfway", halfway);
    shared.state.cancel();
    shared.cancelled.store(true, Ordering::SeqCst);
    let polls_at_cancel = shared.polls.load(Ordering::SeqCst);
    for h in wakers {
        h.join().expect("a waker panicked");
    }
    drop(stop);
    drop(tx);
    for h in worker_handles {
        h.join().expect("a worker panicked");
    }
    shared.check();
    // At most the poll in progress at the cancel ended after it.
    assert!(shared.polls.load(Ordering::SeqCst) <= polls_at_cancel + 1);
    assert_eq!(shared.in_flight.load(Ordering::SeqCst), 0, "a work item was left queued");
    assert_eq!(raw(&shared.state), DONE);
}
