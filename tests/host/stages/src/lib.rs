//! Host-side tests of the workshop stages' shared, `core`-only code: stage
//! 02's parameter checks (`params_*`), the NVMe library's CAP decoding,
//! commands, rings and Identify data, and stage 12's PRP lists and I/O
//! commands (`nvme_*`; stage 12's `nvme_prp_*` and `nvme_io_*`), stage 15's
//! passthrough ioctls (`nvme_passthru_*`), stage 21's shadow doorbell
//! arithmetic (`nvme_event_index_*`), stage 23's task state machine
//! (`exec_*`), stage 27's 9P codec (`p9_*`), stage 32's passwd and
//! group files and r9p's accept loop after a failure (`r9p_*`), and
//! r9p's session logic over a fake VFS
//! (`session_*`; `r9p_fake`, `r9p_session_harness`, which the `p9_session`
//! fuzz target drives).
//!
//! `build.rs` generates `#[path = "<repo>/<tree>/NN-stage/x.rs"] pub mod x;`
//! for each stage with such code, so the tests below exercise the files the
//! kernel modules include, from `solutions/` or (`RKW_TREE=steps`) `steps/`.
//! The stage modules keep their items `pub(crate)` (as a kernel module
//! needs), which is why the tests live inside this crate; the few `pub`
//! functions here are for the fuzz targets and the benchmark.
//!
//! The NVMe files form one module tree, `nvme` (`build.rs` reads the
//! stages' `nvme.rs` roots): each file names its neighbours `super::x`, as
//! in the kernel modules. `nvme_spec`, `nvme_command`, ... are short names
//! for its modules. A skeleton's exercise file stands in for the solution's
//! with `RKW_TREE=steps` (stage 04's `cap.rs`, 12's `prp.rs`).
//!
//! Stage 06's `nvme::ring` and stage 15's `nvme_passthru` are, likewise,
//! this tree's `ring.rs` and `passthru.rs` (the stages have no module root;
//! the stages after them include the solution's).

include!(concat!(env!("OUT_DIR"), "/stages.rs"));

pub mod p9_harness;
pub mod r9p_fake;
pub mod r9p_session_harness;

#[cfg(test)]
mod exec_spawn_bounds;
#[cfg(test)]
mod exec_task_state_tests;
#[cfg(test)]
mod nvme_admin_vectors;
#[cfg(test)]
mod nvme_event_index_tests;
#[cfg(test)]
mod nvme_identify_vectors;
#[cfg(test)]
mod nvme_io_command_tests;
#[cfg(test)]
mod nvme_passthru_tests;
#[cfg(test)]
mod nvme_proptest;
#[cfg(test)]
mod nvme_prp_proptest;
#[cfg(test)]
mod nvme_ring_proptest;
#[cfg(test)]
mod nvme_vectors;
#[cfg(test)]
mod p9_crosscheck;
#[cfg(test)]
mod p9_kernel_lints;
#[cfg(test)]
mod p9_model;
#[cfg(test)]
mod p9_proptest;
#[cfg(test)]
mod p9_vectors;
#[cfg(test)]
mod params_proptest;
#[cfg(test)]
mod params_vectors;
#[cfg(test)]
mod r9p_accept_tests;
#[cfg(test)]
mod r9p_users_tests;
#[cfg(test)]
mod session_tests;
