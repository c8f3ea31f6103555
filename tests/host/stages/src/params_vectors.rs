//! Stage 02: `Config::new` at every boundary of its rules, the order in which
//! it reports errors, and the messages `rparams` logs. The expected values
//! are written out from the rules in the book (a power of two in 2..=4096,
//! 1..=64 queues, 64-byte entries), not computed with the code under test.
//!
//! The VM test (tests/02-params/test.sh) expects the same log lines; here they
//! are checked in milliseconds, for many more values.

use crate::params_config::{Config, ParamError, MAX_DEPTH, MAX_QUEUES, MIN_DEPTH};

/// The line `rparams` logs when it refuses a value (see `rparams.rs`, `init`).
fn refusal(e: &ParamError) -> String {
    format!("{}={} refused: {}", e.param(), e.value(), e.reason())
}

/// The line `rparams` logs for an accepted configuration.
fn summary(c: &Config) -> String {
    format!(
        "{} queues of {} entries (2^{}), {} bytes of rings",
        c.queues(),
        c.depth(),
        c.depth_shift(),
        c.ring_bytes()
    )
}

/// `Config::new(depth, queues)` must be accepted, with the given derived
/// values.
fn accepted(depth: u32, queues: u32, shift: u32, queue_bytes: u32, ring_bytes: u32) {
    let c = Config::new(depth, queues)
        .unwrap_or_else(|e| panic!("({depth}, {queues}) must be accepted, got {e:?}"));
    assert_eq!(
        (c.depth(), c.queues()),
        (depth, queues),
        "({depth}, {queues}) is kept as given"
    );
    assert_eq!(c.depth_shift(), shift, "depth_shift of {depth}");
    assert_eq!(c.queue_bytes(), queue_bytes, "queue_bytes of depth {depth}");
    assert_eq!(
        c.ring_bytes(),
        ring_bytes,
        "ring_bytes of ({depth}, {queues})"
    );
}

/// `Config::new(depth, queues)` must be refused with `error`, logged as `line`.
fn refused(depth: u32, queues: u32, error: ParamError, line: &str) {
    let e = Config::new(depth, queues).expect_err(&format!("({depth}, {queues}) must be refused"));
    assert_eq!(e, error, "the error for ({depth}, {queues})");
    assert_eq!(refusal(&e), line, "the log line for ({depth}, {queues})");
}

#[test]
fn params_limits_are_the_documented_ones() {
    assert_eq!((MIN_DEPTH, MAX_DEPTH, MAX_QUEUES), (2, 4096, 64));
    assert_eq!(
        crate::params_config::ENTRY_SIZE,
        64,
        "an NVMe submission queue entry"
    );
}

// ---- depth ------------------------------------------------------------------

#[test]
fn params_depth_0_is_out_of_range() {
    refused(
        0,
        4,
        ParamError::DepthOutOfRange(0),
        "queue_depth=0 refused: must be between 2 and 4096",
    );
}

#[test]
fn params_depth_1_is_out_of_range_though_a_power_of_two() {
    // 1 = 2^0: the range check must come first, or the message would be wrong.
    refused(
        1,
        4,
        ParamError::DepthOutOfRange(1),
        "queue_depth=1 refused: must be between 2 and 4096",
    );
}

#[test]
fn params_depth_2_is_the_smallest() {
    // 2 entries = 2^1; 2 * 64 bytes per queue; 4 queues.
    accepted(2, 4, 1, 128, 512);
}

#[test]
fn params_depth_3_is_not_a_power_of_two() {
    refused(
        3,
        4,
        ParamError::DepthNotPowerOfTwo(3),
        "queue_depth=3 refused: must be a power of two",
    );
}

#[test]
fn params_depth_100_is_not_a_power_of_two() {
    refused(
        100,
        4,
        ParamError::DepthNotPowerOfTwo(100),
        "queue_depth=100 refused: must be a power of two",
    );
}

#[test]
fn params_depth_4096_is_the_largest() {
    // 4096 = 2^12; 4096 * 64 = 262144 bytes per queue; 4 queues = 1 MiB.
    accepted(4096, 4, 12, 262_144, 1_048_576);
}

#[test]
fn params_depth_4097_is_out_of_range() {
    refused(
        4097,
        4,
        ParamError::DepthOutOfRange(4097),
        "queue_depth=4097 refused: must be between 2 and 4096",
    );
}

#[test]
fn params_depth_8192_is_out_of_range_though_a_power_of_two() {
    refused(
        8192,
        4,
        ParamError::DepthOutOfRange(8192),
        "queue_depth=8192 refused: must be between 2 and 4096",
    );
}

#[test]
fn params_depth_u32_max_is_out_of_range() {
    refused(
        u32::MAX,
        4,
        ParamError::DepthOutOfRange(u32::MAX),
        "queue_depth=4294967295 refused: must be between 2 and 4096",
    );
}

#[test]
fn params_every_power_of_two_in_range_is_accepted() {
    for shift in 1..=12 {
        let depth = 1u32 << shift;
        accepted(depth, 1, shift, depth * 64, depth * 64);
    }
}

#[test]
fn params_the_neighbours_of_powers_of_two_are_refused() {
    for shift in 2..=12 {
        let depth = 1u32 << shift;
        for d in [depth - 1, depth + 1] {
            let expected = if d > 4096 {
                ParamError::DepthOutOfRange(d)
            } else {
                ParamError::DepthNotPowerOfTwo(d)
            };
            assert_eq!(Config::new(d, 1), Err(expected), "depth {d}");
        }
    }
}

// ---- queues -----------------------------------------------------------------

#[test]
fn params_queues_0_is_out_of_range() {
    refused(
        64,
        0,
        ParamError::QueuesOutOfRange(0),
        "nr_queues=0 refused: must be between 1 and 64",
    );
}

#[test]
fn params_queues_1_is_the_fewest() {
    accepted(64, 1, 6, 4096, 4096);
}

#[test]
fn params_queues_64_is_the_most() {
    // 64 queues of 64 entries of 64 bytes: 64^3 = 262144.
    accepted(64, 64, 6, 4096, 262_144);
}

#[test]
fn params_queues_65_is_out_of_range() {
    refused(
        128,
        65,
        ParamError::QueuesOutOfRange(65),
        "nr_queues=65 refused: must be between 1 and 64",
    );
}

#[test]
fn params_queues_u32_max_is_out_of_range() {
    refused(
        64,
        u32::MAX,
        ParamError::QueuesOutOfRange(u32::MAX),
        "nr_queues=4294967295 refused: must be between 1 and 64",
    );
}

// ---- the order of the checks ------------------------------------------------

#[test]
fn params_depth_range_is_reported_before_queues() {
    assert_eq!(Config::new(1, 0), Err(ParamError::DepthOutOfRange(1)));
    assert_eq!(
        Config::new(8192, 65),
        Err(ParamError::DepthOutOfRange(8192))
    );
    assert_eq!(
        Config::new(0, u32::MAX),
        Err(ParamError::DepthOutOfRange(0))
    );
}

#[test]
fn params_depth_range_is_reported_before_power_of_two() {
    // 4097, 5000 and 10000 are neither in range nor powers of two.
    for d in [4097, 5000, 10_000, u32::MAX] {
        assert_eq!(
            Config::new(d, 4),
            Err(ParamError::DepthOutOfRange(d)),
            "depth {d}"
        );
    }
}

#[test]
fn params_power_of_two_is_reported_before_queues() {
    assert_eq!(
        Config::new(100, 0),
        Err(ParamError::DepthNotPowerOfTwo(100))
    );
    assert_eq!(Config::new(3, 65), Err(ParamError::DepthNotPowerOfTwo(3)));
}

// ---- what the module derives and logs ---------------------------------------

#[test]
fn params_the_defaults_give_the_logged_summary() {
    // module! defaults: queue_depth=64, nr_queues=4 (tests/02-params/test.sh).
    let c = Config::new(64, 4).expect("the defaults are valid");
    assert_eq!(
        summary(&c),
        "4 queues of 64 entries (2^6), 16384 bytes of rings"
    );
}

#[test]
fn params_256_by_8_gives_the_logged_summary_and_ranges() {
    let c = Config::new(256, 8).expect("256 x 8 is valid");
    assert_eq!(
        summary(&c),
        "8 queues of 256 entries (2^8), 131072 bytes of rings"
    );
    // verbose=1: queue 7 is the last 16384 bytes.
    assert_eq!(
        (7 * c.queue_bytes(), 8 * c.queue_bytes()),
        (114_688, 131_072)
    );
}

#[test]
fn params_the_largest_rings_fit_in_u32() {
    // 64 queues * 4096 entries * 64 bytes = 2^6 * 2^12 * 2^6 = 2^24 = 16 MiB.
    accepted(4096, 64, 12, 262_144, 16_777_216);
}

#[test]
fn params_error_accessors() {
    let cases = [
        (
            ParamError::DepthOutOfRange(7),
            "queue_depth",
            7,
            "must be between 2 and 4096",
        ),
        (
            ParamError::DepthNotPowerOfTwo(7),
            "queue_depth",
            7,
            "must be a power of two",
        ),
        (
            ParamError::QueuesOutOfRange(7),
            "nr_queues",
            7,
            "must be between 1 and 64",
        ),
    ];
    for (e, param, value, reason) in cases {
        assert_eq!(
            (e.param(), e.value(), e.reason()),
            (param, value, reason),
            "{e:?}"
        );
    }
}
