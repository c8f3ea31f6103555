// SPDX-License-Identifier: GPL-2.0

//! The kernel shim, as far as stage 19 uses it: what the 7.3 `kernel` crate
//! lacks, written as safe wrappers whose files name only `kernel::` (and
//! each other), each with the upstream API that would replace it.
//!
//! A stage uses part of what these files offer, so unused items are no
//! warning here.
#![allow(dead_code)]

#[path = "../../solutions/lib/kshim/affinity.rs"]
pub(crate) mod affinity;
#[path = "../../solutions/lib/kshim/cred.rs"]
pub(crate) mod cred;
#[path = "../../solutions/lib/kshim/dma_align.rs"]
pub(crate) mod dma_align;
#[path = "../../solutions/lib/kshim/dma_piece.rs"]
pub(crate) mod dma_piece;
#[path = "../../solutions/lib/kshim/lingering.rs"]
pub(crate) mod lingering;
#[path = "../../solutions/lib/kshim/misc_node.rs"]
pub(crate) mod misc_node;
#[path = "../../solutions/lib/kshim/owned_queue.rs"]
pub(crate) mod owned_queue;
#[path = "../../solutions/lib/kshim/request.rs"]
pub(crate) mod request;
#[path = "../../solutions/lib/kshim/send_disk.rs"]
pub(crate) mod send_disk;
