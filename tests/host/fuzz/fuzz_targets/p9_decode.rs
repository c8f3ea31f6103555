//! Any bytes, decoded as a 9P request and as a reply under several msizes:
//! no panic, no out-of-bounds read, and whatever decodes agrees with its
//! frame header (see `stages::p9_harness::decode_any`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    stages::p9_harness::decode_any(data);
});
