// SPDX-License-Identifier: GPL-2.0

//! The kernel shim, as far as stage 14 uses it: what the 7.3 `kernel` crate
//! lacks, written as safe wrappers whose files name only `kernel::` (and
//! each other), each with the upstream API that would replace it.
//!
//! A stage uses part of what these files offer, so unused items are no
//! warning here.
#![allow(dead_code)]

#[path = "../../solutions/lib/kshim/request.rs"]
pub(crate) mod request;
#[path = "../../solutions/lib/kshim/send_disk.rs"]
pub(crate) mod send_disk;
