//! The 9P server's accept loop after a failure (finding 6 of the security
//! review: it ended for good on any error but `ECONNABORTED`, an `ENOMEM`
//! was enough). Nothing a VM test can do makes `kernel_accept` fail, so the
//! rule lives in `solutions/lib/r9p/accept_retry.rs`, which `service.rs`'s
//! `accept_loop` obeys arm by arm, and is checked here with every errno.

use crate::p9_kernel_lints::assert_core_only_and_no_unsafe;
use crate::r9p_accept_retry::{AcceptRetry, Next, FIRST_PAUSE_MS, MAX_PAUSE_MS};
use std::path::Path;

// Linux's numbers on x86 (asm-generic): the kernel passes its own
// `ECONNABORTED` and `ESHUTDOWN`, whatever the architecture numbers them.
const EINTR: i32 = 4;
const EAGAIN: i32 = 11;
const ENOMEM: i32 = 12;
const EINVAL: i32 = 22;
const ENFILE: i32 = 23;
const EMFILE: i32 = 24;
const EPROTO: i32 = 71;
const ENOBUFS: i32 = 105;
const ECONNABORTED: i32 = 103;
const ESHUTDOWN: i32 = 108;
const ERESTARTSYS: i32 = 512;

/// The loop's rule, as `accept_loop` makes it.
fn retry() -> AcceptRetry<i32> {
    AcceptRetry::new(ECONNABORTED, ESHUTDOWN)
}

/// The pause of a `Next` that must be one.
fn pause(next: Next) -> (u32, bool) {
    match next {
        Next::Pause { ms, warn } => (ms, warn),
        other => panic!("a failed accept must pause, then try again: {other:?}"),
    }
}

#[test]
fn r9p_accept_no_errno_ends_the_loop() {
    // The named ones first, for a readable failure; then every errno
    // (Linux's are below 4096, ERESTARTSYS and its kin at 512..=517).
    let named = [
        ENOMEM,
        EAGAIN,
        EINTR,
        ERESTARTSYS,
        EINVAL,
        ENFILE,
        EMFILE,
        EPROTO,
        ENOBUFS,
        ESHUTDOWN,
    ];
    for errno in named.into_iter().chain(1..4096) {
        let mut r = retry();
        for n in 0..100 {
            let next = r.accept_failed(errno);
            if errno == ECONNABORTED {
                assert_eq!(
                    next,
                    Next::Accept,
                    "ECONNABORTED (a client that gave up) is not a failure: accept again at once"
                );
            } else {
                assert_ne!(
                    next,
                    Next::Stop,
                    "errno {errno} ended the accept loop (failure {} in a row)",
                    n + 1
                );
                let (ms, _) = pause(next);
                assert!(
                    (FIRST_PAUSE_MS..=MAX_PAUSE_MS).contains(&ms),
                    "errno {errno}: a pause of {ms} ms"
                );
            }
        }
        // And the loop accepts again afterwards.
        assert_eq!(
            r.accepted(),
            (errno != ECONNABORTED).then_some(100),
            "errno {errno}"
        );
    }
}

#[test]
fn r9p_accept_pause_doubles_up_to_its_cap() {
    let mut r = retry();
    let pauses: Vec<u32> = (0..40).map(|_| pause(r.accept_failed(ENOMEM)).0).collect();
    assert_eq!(pauses[0], FIRST_PAUSE_MS, "the first pause");
    for pair in pauses.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        assert!(
            b == (a * 2).min(MAX_PAUSE_MS),
            "each failure in a row doubles the pause up to {MAX_PAUSE_MS} ms: {pauses:?}"
        );
    }
    assert_eq!(
        *pauses.last().unwrap(),
        MAX_PAUSE_MS,
        "a failure that lasts costs a wake-up a second: {pauses:?}"
    );
    // A million failures in a row: still the cap, no overflow.
    for _ in 0..1_000_000 {
        r.accept_failed(EAGAIN);
    }
    assert_eq!(pause(r.accept_failed(EAGAIN)).0, MAX_PAUSE_MS);
    // A success ends the run: the next failure pauses the least again.
    assert_eq!(r.accepted(), Some(1_000_041));
    assert_eq!(pause(r.accept_failed(ENOMEM)).0, FIRST_PAUSE_MS);
}

#[test]
fn r9p_accept_logs_once_per_run() {
    let mut r = retry();
    assert_eq!(r.accepted(), None, "no run of failures: nothing to log");
    let warns: Vec<bool> = (0..5).map(|_| pause(r.accept_failed(ENOMEM)).1).collect();
    assert_eq!(
        warns,
        [true, false, false, false, false],
        "only the first failure of a run is logged"
    );
    // A client that gave up neither ends the run nor is logged.
    assert_eq!(r.accept_failed(ECONNABORTED), Next::Accept);
    assert!(!pause(r.accept_failed(EINTR)).1);
    assert_eq!(r.accepted(), Some(6), "the end of the run, logged once");
    assert_eq!(r.accepted(), None, "... and only once");
    assert!(pause(r.accept_failed(ERESTARTSYS)).1, "a new run is logged");
}

#[test]
fn r9p_accept_only_a_shutdown_stops_the_loop() {
    let r = retry();
    assert_eq!(r.spawn_failed(ESHUTDOWN), Next::Stop, "rmmod");
    for errno in (1..4096).filter(|&e| e != ESHUTDOWN) {
        assert_eq!(
            r.spawn_failed(errno),
            Next::Accept,
            "a spawn that failed with {errno} loses its connection only"
        );
    }
}

#[test]
fn r9p_accept_retry_is_core_only() {
    assert_core_only_and_no_unsafe(Path::new(crate::R9P_ACCEPT_RETRY_FILE));
}
