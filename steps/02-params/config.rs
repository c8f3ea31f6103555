// SPDX-License-Identifier: GPL-2.0

//! Checking rparams' module parameters.
//!
//! This file uses nothing but `core`: the kernel module includes it with
//! `mod config;`, and the host tests (tests/host) compile the very same file,
//! so the rules are tested on the host in milliseconds, without a VM.
#![forbid(unsafe_code)]

/// The fewest entries a queue may have (one slot always stays empty).
pub(crate) const MIN_DEPTH: u32 = 2;
/// The most entries a queue may have.
pub(crate) const MAX_DEPTH: u32 = 4096;
/// The most queues the module sets up.
pub(crate) const MAX_QUEUES: u32 = 64;
/// Bytes per queue entry: the size of an NVMe submission queue entry.
pub(crate) const ENTRY_SIZE: u32 = 64;

// ANCHOR: types
/// A checked set of parameters: every value in it is within its limits.
///
/// The fields are private, so `Config::new` is the only way to get one:
/// code elsewhere reads them with `depth()` and `queues()`, and cannot
/// build a `Config { depth: 100, queues: 0 }` that skipped the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Config {
    /// Entries per queue: a power of two in `MIN_DEPTH..=MAX_DEPTH`.
    depth: u32,
    /// Number of queues: `1..=MAX_QUEUES`.
    queues: u32,
}

/// Why a parameter value was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamError {
    /// `queue_depth` is outside `MIN_DEPTH..=MAX_DEPTH`.
    DepthOutOfRange(u32),
    /// `queue_depth` is not a power of two.
    DepthNotPowerOfTwo(u32),
    /// `nr_queues` is outside `1..=MAX_QUEUES`.
    QueuesOutOfRange(u32),
}
// ANCHOR_END: types

impl ParamError {
    /// The name of the parameter that was refused.
    pub(crate) fn param(&self) -> &'static str {
        match self {
            Self::DepthOutOfRange(_) | Self::DepthNotPowerOfTwo(_) => "queue_depth",
            Self::QueuesOutOfRange(_) => "nr_queues",
        }
    }

    /// The refused value.
    pub(crate) fn value(&self) -> u32 {
        match *self {
            Self::DepthOutOfRange(v) | Self::DepthNotPowerOfTwo(v) | Self::QueuesOutOfRange(v) => v,
        }
    }

    /// What is wrong with it, for the kernel log.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Self::DepthOutOfRange(_) => "must be between 2 and 4096",
            Self::DepthNotPowerOfTwo(_) => "must be a power of two",
            Self::QueuesOutOfRange(_) => "must be between 1 and 64",
        }
    }
}

impl Config {
    // ANCHOR: new
    /// Checks raw parameter values; the first bad one is the error.
    pub(crate) fn new(depth: u32, queues: u32) -> Result<Config, ParamError> {
        // TODO (exercise 1): Refuse bad values, in this order, with the
        // matching error:
        // - `depth` outside MIN_DEPTH..=MAX_DEPTH: `ParamError::DepthOutOfRange(depth)`
        // - `depth` not a power of two (see `u32::is_power_of_two`):
        //   `ParamError::DepthNotPowerOfTwo(depth)`
        // - `queues` outside 1..=MAX_QUEUES: `ParamError::QueuesOutOfRange(queues)`
        // Until then every value is accepted, even those that would break
        // the ring arithmetic below.
        // Tests: the "insmod ... fails with EINVAL" and "the log says why ...
        // is refused" checks; on the host, `params_*`
        // (`scripts/host-test.sh --tree steps --filter params`).
        Ok(Config { depth, queues })
    }
    // ANCHOR_END: new

    // ANCHOR: derived
    /// Entries per queue: a power of two in `MIN_DEPTH..=MAX_DEPTH`.
    pub(crate) fn depth(&self) -> u32 {
        self.depth
    }

    /// Number of queues: `1..=MAX_QUEUES`.
    pub(crate) fn queues(&self) -> u32 {
        self.queues
    }

    /// log2 of the depth: the number of index bits.
    pub(crate) fn depth_shift(&self) -> u32 {
        self.depth.trailing_zeros()
    }

    /// Bytes of ring memory all queues need together.
    ///
    /// Cannot overflow: at most 64 * 4096 * 64 bytes = 16 MiB.
    pub(crate) fn ring_bytes(&self) -> u32 {
        self.queues * self.queue_bytes()
    }

    /// Bytes of ring memory one queue needs.
    pub(crate) fn queue_bytes(&self) -> u32 {
        self.depth * ENTRY_SIZE
    }
    // ANCHOR_END: derived
}
