//! Stage 02, property tests: `Config::new` accepts exactly the powers of two
//! in 2..=4096 with 1..=64 queues, refuses everything else with the first
//! broken rule, and what it derives from an accepted pair is right.
//!
//! The model below states the rules a second, independent way (a list of
//! the valid depths instead of `is_power_of_two`, u64 arithmetic instead of
//! u32).

use crate::params_config::{Config, ParamError};
use proptest::prelude::*;

/// The valid depths, written out: 2^1 ..= 2^12.
const DEPTHS: [u32; 12] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// What `Config::new` must answer, by the rules in their documented order.
fn model(depth: u32, queues: u32) -> Result<(), ParamError> {
    if depth < 2 || depth > 4096 {
        Err(ParamError::DepthOutOfRange(depth))
    } else if !DEPTHS.contains(&depth) {
        Err(ParamError::DepthNotPowerOfTwo(depth))
    } else if queues == 0 || queues > 64 {
        Err(ParamError::QueuesOutOfRange(queues))
    } else {
        Ok(())
    }
}

/// Depths near the interesting values as well as anywhere in `u32`.
fn depth() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..=8200,
        (0u32..32).prop_map(|s| 1u32 << s),
        (1u32..32, -2i64..=2).prop_map(|(s, d)| ((1i64 << s) + d).clamp(0, u32::MAX as i64) as u32),
        any::<u32>(),
    ]
}

fn queues() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..=70, any::<u32>()]
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(4000))]

    /// Accepted exactly when the model accepts; refused with the model's error.
    #[test]
    fn params_new_accepts_exactly_the_valid_pairs(d in depth(), q in queues()) {
        let got = Config::new(d, q);
        prop_assert_eq!(got.map(|_| ()), model(d, q), "Config::new({}, {})", d, q);
    }

    /// For every accepted pair: the values are kept, `1 << depth_shift` is the
    /// depth, and the byte counts are queues * depth * 64.
    #[test]
    fn params_accepted_configs_derive_the_right_sizes(
        d in prop::sample::select(DEPTHS.to_vec()),
        q in 1u32..=64,
    ) {
        let c = Config::new(d, q).map_err(|e| TestCaseError::fail(format!("({d}, {q}): {e:?}")))?;
        prop_assert_eq!((c.depth(), c.queues()), (d, q));
        prop_assert_eq!(1u64 << c.depth_shift(), u64::from(d));
        prop_assert_eq!(u64::from(c.queue_bytes()), u64::from(d) * 64);
        prop_assert_eq!(u64::from(c.ring_bytes()), u64::from(q) * u64::from(d) * 64);
    }

    /// A refused value is reported as the value given, under its parameter.
    #[test]
    fn params_errors_name_the_refused_value(d in depth(), q in queues()) {
        if let Err(e) = Config::new(d, q) {
            match e {
                ParamError::DepthOutOfRange(v) | ParamError::DepthNotPowerOfTwo(v) => {
                    prop_assert_eq!((e.param(), v, e.value()), ("queue_depth", d, d));
                }
                ParamError::QueuesOutOfRange(v) => {
                    prop_assert_eq!((e.param(), v, e.value()), ("nr_queues", q, q));
                }
            }
        }
    }
}

/// Not random: every depth from 0 to 8200 with the four interesting queue
/// counts, against the model.
#[test]
fn params_exhaustive_small_depths() {
    for d in 0..=8200 {
        for q in [0, 1, 64, 65] {
            assert_eq!(
                Config::new(d, q).map(|_| ()),
                model(d, q),
                "Config::new({d}, {q})"
            );
        }
    }
}
