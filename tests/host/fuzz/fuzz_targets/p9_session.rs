//! r9p's session logic, driven statefully over the fake VFS: the bytes are
//! a program of requests and mutations (see
//! `stages::r9p_session_harness`), and every invariant is checked after
//! every step: never outside the export, never with another user's rights,
//! never blocking or reading a magic link, memory within the limits,
//! nothing before `Tversion`, unique qids. A broken invariant is a crash,
//! whose message names it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = stages::r9p_session_harness::run(data) {
        panic!("invariant broken: {broken}");
    }
});
