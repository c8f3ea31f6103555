//! decode -> encode -> decode: a frame that decodes re-encodes to exactly
//! its own bytes and decodes to the same message again (see
//! `stages::p9_harness::roundtrip`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    stages::p9_harness::roundtrip(data);
});
