// SPDX-License-Identifier: GPL-2.0

//! The current task's capabilities.
//!
//! Part of the kernel shim (`kshim::cred`), from stage 16 on. TODO: replace
//! with the `kernel` crate's capability check once it has one (7.3 has
//! `cred::Credential`, but no `capable()`).

use kernel::bindings;

/// Whether the current task may administer the system (`CAP_SYS_ADMIN`):
/// what the C driver asks before a passthrough command.
pub(crate) fn sys_admin() -> bool {
    // SAFETY: `capable` reads the current task's credentials, which are
    // valid for as long as the task runs; any capability number is valid.
    unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as i32) }
}
