// SPDX-License-Identifier: GPL-2.0

//! The NVMe library, as far as stage 17 uses it: one module tree whose
//! files name only each other (`super::`) and `kernel::`, so that each file
//! means the same in every stage that includes it.
//!
//! Every file comes from the stages before it or from
//! `solutions/lib/nvme/`, which holds the library's given files (no
//! exercise is ever answered there).
//!
//! A stage uses part of what these files offer, so unused items are no
//! warning here.
#![allow(dead_code)]

#[path = "../../solutions/04-pci-probe/cap.rs"]
pub(crate) mod cap;
#[path = "../../solutions/lib/nvme/cmd_buffer.rs"]
pub(crate) mod cmd_buffer;
#[path = "../../solutions/lib/nvme/command.rs"]
pub(crate) mod command;
#[path = "../../solutions/05-nvme-reset/controller.rs"]
pub(crate) mod controller;
#[path = "../../solutions/lib/nvme/ctrl.rs"]
pub(crate) mod ctrl;
#[path = "../../solutions/lib/nvme/doorbell_buffer.rs"]
pub(crate) mod doorbell_buffer;
#[path = "../../solutions/lib/nvme/identify.rs"]
pub(crate) mod identify;
#[path = "../../solutions/lib/nvme/identify_log.rs"]
pub(crate) mod identify_log;
#[path = "../../solutions/lib/nvme/identify_page.rs"]
pub(crate) mod identify_page;
#[path = "../../solutions/lib/nvme/interrupts.rs"]
pub(crate) mod interrupts;
#[path = "../../solutions/lib/nvme/io_command.rs"]
pub(crate) mod io_command;
#[path = "../../solutions/lib/nvme/irq_handler.rs"]
pub(crate) mod irq_handler;
#[path = "../../solutions/04-pci-probe/map.rs"]
pub(crate) mod map;
#[path = "../../solutions/lib/nvme/pattern.rs"]
pub(crate) mod pattern;
#[path = "../../solutions/12-prp-lists/prp.rs"]
pub(crate) mod prp;
#[path = "../../solutions/lib/nvme/queue.rs"]
pub(crate) mod queue;
#[path = "../../solutions/08-shared-queue/reap.rs"]
pub(crate) mod reap;
#[path = "../../solutions/lib/nvme/registers.rs"]
pub(crate) mod registers;
#[path = "../../solutions/lib/nvme/regs.rs"]
pub(crate) mod regs;
#[path = "../../solutions/06-nvme-rings/ring.rs"]
pub(crate) mod ring;
#[path = "../../solutions/09-interrupts/wait.rs"]
pub(crate) mod wait;
