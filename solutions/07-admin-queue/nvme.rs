// SPDX-License-Identifier: GPL-2.0

//! The NVMe library, as far as stage 07 uses it: one module tree whose
//! files name only each other (`super::`) and `kernel::`, so that each file
//! means the same in every stage that includes it.
//!
//! This stage writes none of them (its exercise is `queue.rs`, the
//! driver's own): they come from the stages before it, `ring.rs` from
//! stage 06, and from `solutions/lib/nvme/`, which holds the library's
//! given files (no exercise is ever answered there).
//!
//! A stage uses part of what these files offer, so unused items are no
//! warning here.
#![allow(dead_code)]

#[path = "../../solutions/04-pci-probe/cap.rs"]
pub(crate) mod cap;
#[path = "../../solutions/lib/nvme/command.rs"]
pub(crate) mod command;
#[path = "../../solutions/05-nvme-reset/controller.rs"]
pub(crate) mod controller;
#[path = "../../solutions/lib/nvme/identify.rs"]
pub(crate) mod identify;
#[path = "../../solutions/lib/nvme/identify_log.rs"]
pub(crate) mod identify_log;
#[path = "../../solutions/04-pci-probe/map.rs"]
pub(crate) mod map;
#[path = "../../solutions/lib/nvme/regs.rs"]
pub(crate) mod regs;
#[path = "../../solutions/06-nvme-rings/ring.rs"]
pub(crate) mod ring;
