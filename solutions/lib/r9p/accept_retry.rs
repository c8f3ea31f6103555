// SPDX-License-Identifier: GPL-2.0

//! What the accept loop (`service.rs`) does when `accept` or the spawn of a
//! connection's task fails: whether it goes on, how long it pauses first,
//! and what it logs.
//!
//! `core` only, with no kernel import, so that the host tests
//! (`tests/host/stages/src/r9p_accept_tests.rs`) can feed it every errno:
//! nothing a test can do from user space makes `kernel_accept` fail
//! without making everything else fail too, so this is where the rule is
//! checked. The errors are the caller's type `E` (the kernel's `Error`, a
//! plain number in the tests): the rule only compares them with the two
//! it is given, `ECONNABORTED` and `ESHUTDOWN`.
#![forbid(unsafe_code)]

/// How long the accept loop pauses after the first failure of a run, in
/// milliseconds; each further failure in a row doubles it, up to
/// [`MAX_PAUSE_MS`].
pub(crate) const FIRST_PAUSE_MS: u32 = 10;
/// The longest pause between two tries of a failing `accept`: a failure
/// that lasts costs a wake-up a second, not a worker spinning.
pub(crate) const MAX_PAUSE_MS: u32 = 1000;

/// What the accept loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Accept the next connection at once.
    Accept,
    /// Pause `ms` milliseconds, then accept again; `warn`: this failure is
    /// the first of a run, so the loop logs it (the others of the run are
    /// not logged, so that a failure that lasts does not flood the log).
    Pause {
        /// The pause, in milliseconds.
        ms: u32,
        /// Log this failure.
        warn: bool,
    },
    /// End the loop: the executor is shutting down (`rmmod`).
    Stop,
}

/// The accept loop's state between two calls of `accept`: how many have
/// failed in a row.
pub(crate) struct AcceptRetry<E> {
    /// `accept`'s error for a client that gave up before it was accepted.
    aborted: E,
    /// The spawn's error once the executor shuts down.
    shutdown: E,
    /// Failures of `accept` in a row.
    failures: u32,
}

impl<E: PartialEq> AcceptRetry<E> {
    /// A loop that has not failed yet; `aborted` and `shutdown` are the
    /// caller's `ECONNABORTED` and `ESHUTDOWN` (their numbers differ
    /// between architectures).
    pub(crate) const fn new(aborted: E, shutdown: E) -> Self {
        Self {
            aborted,
            shutdown,
            failures: 0,
        }
    }

    /// `accept` returned a connection. `Some(n)`: it is the first after a
    /// run of `n` failures, which the loop logs (once: the run is over).
    pub(crate) fn accepted(&mut self) -> Option<u32> {
        let failures = core::mem::take(&mut self.failures);
        (failures > 0).then_some(failures)
    }

    // ANCHOR: accept_failed
    /// `accept` failed with `error`. Never [`Next::Stop`]: every error is
    /// worth another try. `ECONNABORTED` is a client that gave up, not a
    /// failure: the loop accepts the next one at once. Anything else is,
    /// in practice, `ENOMEM` (the new socket, the stream's box), and memory
    /// comes back; a loop that ended there would leave the server stopped
    /// until it is reloaded. So it pauses, longer with each failure in a
    /// row, and tries again.
    pub(crate) fn accept_failed(&mut self, error: E) -> Next {
        if error == self.aborted {
            return Next::Accept;
        }
        let warn = self.failures == 0;
        self.failures = self.failures.saturating_add(1);
        Next::Pause {
            ms: self.pause_ms(),
            warn,
        }
    }
    // ANCHOR_END: accept_failed

    /// The pause after the run's latest failure: [`FIRST_PAUSE_MS`]
    /// doubled once per failure before it, at most [`MAX_PAUSE_MS`].
    fn pause_ms(&self) -> u32 {
        let doublings = self.failures.saturating_sub(1).min(16);
        FIRST_PAUSE_MS
            .saturating_mul(1 << doublings)
            .min(MAX_PAUSE_MS)
    }

    /// Spawning an accepted connection's task failed with `error` (the
    /// connection is dropped, which closes it). Only a shutdown ends the
    /// loop; anything else (no memory for the task) loses this connection
    /// alone.
    pub(crate) fn spawn_failed(&self, error: E) -> Next {
        if error == self.shutdown {
            Next::Stop
        } else {
            Next::Accept
        }
    }
}
