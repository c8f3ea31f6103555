// SPDX-License-Identifier: GPL-2.0

//! Shadow doorbells (NVMe 1.3's Doorbell Buffer Config, admin opcode 0x7C,
//! which a controller offers with OACS bit 8): two pages of memory the
//! controller reads, one with a copy of every I/O queue's doorbell (the
//! shadow doorbells), one with an event index per doorbell, which the
//! controller writes.
//!
//! A driver writes each new SQ tail and CQ head into its shadow doorbell,
//! and writes the doorbell register (an MMIO write, under emulation an exit
//! into the device model) only when the controller asks for it: when the
//! new value has passed the event index, the last value the controller saw
//! before it stopped looking at the shadow page. A controller that is busy
//! reading the queue picks the new tail up by itself. Which values pass is
//! the stage's question (its `need_event`, handed to [`DoorbellBuffer::new`]):
//! answered one too strictly, the register is never written when the
//! controller sleeps, and the command waits for ever.
//!
//! Part of the NVMe library (`nvme::doorbell_buffer`), from the speed stage
//! on; a queue pair uses it once told to ([`QueuePair::use_shadow`]).
//!
//! [`QueuePair::use_shadow`]: super::queue::QueuePair::use_shadow

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::Coherent,
    io::{
        io_read,
        io_write, //
    },
    prelude::*,
    sync::{
        barrier::{
            mb,
            Full,
            Write, //
        },
        Arc,
    }, //
};

use super::command::Command;

/// Doorbell Buffer Config's opcode (NVMe 1.3, figure 41).
pub(crate) const DOORBELL_BUFFER_CONFIG: u8 = 0x7c;
/// OACS bit 8: the controller supports Doorbell Buffer Config.
pub(crate) const OACS_DBBUF: u16 = 1 << 8;
/// Where the doorbell registers start in BAR0.
const DOORBELLS: usize = 0x1000;
/// Entries of each page: one 32-bit shadow (or event index) per doorbell,
/// at the doorbell's own offset from the first one.
const ENTRIES: usize = 4096 / 4;

// ANCHOR: need_event
/// Whether a driver that moved a doorbell from `old` to `new` must write
/// the register, given the controller's event index `event_idx`: the
/// stage's exercise (the C driver's `nvme_dbbuf_need_event`).
pub(crate) type NeedEvent = fn(event_idx: u16, new: u16, old: u16) -> bool;
// ANCHOR_END: need_event

// ANCHOR: doorbell_buffer
/// The two pages, shared by every I/O queue of one controller.
///
/// The controller reads and writes them until it is disabled: the queue
/// pairs hold them (an `Arc` each), and a queue pair disables the
/// controller when it is dropped, before its fields (this) are.
pub(crate) struct DoorbellBuffer {
    /// The shadow doorbells: written by the driver, read by the controller.
    shadows: Coherent<[u32]>,
    /// The event indices: written by the controller, read by the driver.
    events: Coherent<[u32]>,
    need_event: NeedEvent,
}

impl DoorbellBuffer {
    /// Two zeroed pages, and the stage's answer to "write the register?".
    pub(crate) fn new(dev: &Device<Bound>, need_event: NeedEvent) -> Result<Arc<Self>> {
        Ok(Arc::new(
            DoorbellBuffer {
                shadows: Coherent::zeroed_slice(dev, ENTRIES, GFP_KERNEL)?,
                events: Coherent::zeroed_slice(dev, ENTRIES, GFP_KERNEL)?,
                need_event,
            },
            GFP_KERNEL,
        )?)
    }

    /// Doorbell Buffer Config: PRP1 the shadow doorbells, PRP2 the event
    /// indices (each one page, page aligned).
    pub(crate) fn command(&self) -> Command {
        Command {
            opcode: DOORBELL_BUFFER_CONFIG,
            prp1: self.shadows.dma_address(),
            prp2: self.events.dma_address(),
            ..Command::default()
        }
    }

    /// The entry of the doorbell register at `offset` in BAR0: the pages
    /// mirror the registers, 4 bytes each (CAP.DSTRD included).
    pub(crate) fn entry_of(offset: usize) -> Option<usize> {
        let i = offset.checked_sub(DOORBELLS)? / 4;
        (i < ENTRIES).then_some(i)
    }

    // ANCHOR: update
    /// Writes `value` into shadow doorbell `entry` and returns whether the
    /// register must be written too (the C driver's
    /// `nvme_dbbuf_update_and_check_event`).
    #[inline]
    pub(crate) fn update(&self, entry: usize, value: u16) -> Result<bool> {
        // The queue entries (an SQ's commands) reach memory before the new
        // tail does: the controller may read the tail at any time.
        mb(Write);
        // What this doorbell said before: the driver's own last value (the
        // controller copies the register's value here when the buffer is
        // configured).
        let old = io_read!(self.shadows, [try: entry]) as u16;
        io_write!(self.shadows, [try: entry], u32::from(value));
        // The new value is visible before the event index is read: the
        // controller writes its event index, then reads the shadow; with
        // both orders kept, one of the two sees the other's write, and no
        // doorbell is lost.
        mb(Full);
        let event = io_read!(self.events, [try: entry]) as u16;
        Ok((self.need_event)(event, value, old))
    }
    // ANCHOR_END: update
}
// ANCHOR_END: doorbell_buffer
