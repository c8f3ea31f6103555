// SPDX-License-Identifier: GPL-2.0

//! The character devices nvme-cli talks to: `/dev/rnvmeX` for the
//! controller and `/dev/rngXn1` for its namespace (the C driver's
//! `/dev/nvmeX` and `/dev/ngXn1`). Both answer the passthrough ioctls: a
//! command from user space, checked (`passthru::check`), its data copied
//! through one of the driver's buffers, sent to the admin queue or to I/O
//! queue 1, and its status and result handed back.
//!
//! The 7.3 `GenDisk` has no ioctl operation, so `/dev/rnvmeXn1` itself
//! answers none: nvme-cli uses the namespace node instead.

use kernel::{
    device::{
        Bound,
        Core,
        Device, //
    },
    new_condvar,
    new_mutex,
    pci,
    prelude::*,
    sync::{
        aref::ARef,
        Arc,
        ArcBorrow,
        CondVar,
        Mutex, //
    },
    time::Delta,
    uaccess::{
        UserPtr,
        UserSlice, //
    }, //
};

use crate::{
    kshim::{
        cred,
        misc_node::{
            Node,
            NodeOps, //
        }, //
    },
    nvme::{
        cmd_buffer::{
            Claim,
            CmdBuffer, //
        },
        command::{
            Command,
            Status, //
        },
        controller::PAGE_SHIFT,
        ctrl::Controller,
        prp::{
            self,
            Prps, //
        },
        queue::{
            AdminQueue,
            Pending,
            QueuePair,
            ADMIN_TIMEOUT, //
        },
    },
    passthru::{
        self,
        Direction,
        Refused,
        Target,
        NVME_IOCTL_ID, //
    },
};

/// The namespace the nodes show.
const NSID: u32 = 1;
/// The memory page size the driver uses (CC.MPS).
const PAGE: u32 = 1 << PAGE_SHIFT;
/// The most data one passthrough command may carry.
const BUFFER_SIZE: usize = 128 * 1024;
/// Buffers of that size: one for the command whose turn it is, and one
/// for a command that timed out, which keeps its own until the controller
/// answers it (a second such command, before that, leaves none: `EBUSY`).
const BUFFERS: usize = 2;
/// The longest timeout user space may ask for.
const MAX_TIMEOUT_MS: u32 = 60_000;

/// Node names for controllers 0 to 7 (a misc device's name is `'static`).
const CTRL_NAMES: [&CStr; 8] = [
    c"rnvme0", c"rnvme1", c"rnvme2", c"rnvme3", c"rnvme4", c"rnvme5", c"rnvme6", c"rnvme7",
];
const NS_NAMES: [&CStr; 8] = [
    c"rng0n1", c"rng1n1", c"rng2n1", c"rng3n1", c"rng4n1", c"rng5n1", c"rng6n1", c"rng7n1",
];

// ANCHOR: passthrough
/// What an open node needs: the queues, the buffers, the block size. Shared
/// by the nodes and every open file, so it outlives an unbind while a file
/// is open (then the queues are dead and every ioctl fails).
#[pin_data]
pub(crate) struct Passthrough<P: Pending> {
    dev: ARef<Device>,
    admin: Arc<AdminQueue>,
    io: Arc<QueuePair<P>>,
    block_size: u32,
    /// The DMA memory passthrough data goes through, each buffer with the
    /// PRPs that describe all of it.
    buffers: KVec<Lendable>,
    /// What the command whose turn it is uses; `None` while one has it
    /// (`take_turn`): one command at a time, the others wait.
    #[pin]
    turn: Mutex<Option<Shared>>,
    /// Signalled when a command gives its turn back.
    #[pin]
    turn_over: CondVar,
}

/// One of the buffers, and where a command's PRP fields point for it.
struct Lendable {
    buffer: Arc<CmdBuffer>,
    prps: Prps,
}

/// What commands use one at a time.
struct Shared {
    /// The data on its way between user space and a buffer (user copies
    /// need a Rust slice; DMA memory is reached only by copies).
    staging: KVVec<u8>,
    /// The claims of buffers whose command timed out or was interrupted,
    /// and the queue it went to: the controller may still use each, until
    /// it answers (`Turn::lend` gives them back then).
    retired: KVec<(Target, Claim)>,
}

/// A command's turn (`Passthrough::take_turn`): the staging buffer, and the
/// buffers to lend. Given back when dropped.
pub(crate) struct Turn<'a, P: Pending> {
    owner: &'a Passthrough<P>,
    shared: Option<Shared>,
}
// ANCHOR_END: passthrough

impl<P: Pending> Turn<'_, P> {
    // ANCHOR: lend
    /// A free buffer for this command, and the PRPs that describe it, or
    /// `EBUSY` if every buffer is held by a command that timed out and that
    /// the controller has not answered yet. First gives back the buffers of
    /// those it has answered: a command that timed out keeps its
    /// identifier (`Slot::Abandoned`) until its completion comes, so once
    /// the queue it went to has no abandoned identifier, that completion
    /// came (or the controller was stopped), and the controller is done
    /// with its buffer. (A later timeout on the same queue keeps an older
    /// buffer a little longer, never too little.)
    fn lend(&mut self) -> Result<(Claim, Prps)> {
        let owner = self.owner;
        let shared = self.shared.as_mut().ok_or(EINVAL)?;
        shared
            .retired
            .retain(|(target, _)| owner.queue_has_abandoned(*target));
        owner
            .buffers
            .iter()
            .find_map(|b| Some((b.buffer.claim()?, b.prps)))
            .ok_or(EBUSY)
    }
    // ANCHOR_END: lend

    /// The claim of a buffer whose command went to `target` and timed out
    /// (or was interrupted): the controller may still use the buffer, so it
    /// is lent to nobody until `lend` finds the command answered.
    fn retire(&mut self, target: Target, claim: Claim) {
        match self.shared.as_mut() {
            Some(shared) => {
                if let Err(e) = shared.retired.push_within_capacity((target, claim)) {
                    // Not possible (there is room for every buffer), but if
                    // it were, the buffer would be kept for good.
                    e.0 .1.abandon();
                }
            }
            None => claim.abandon(),
        }
    }

    /// The first `len` bytes of the staging buffer.
    fn staging(&mut self, len: usize) -> Result<&mut [u8]> {
        let shared = self.shared.as_mut().ok_or(EINVAL)?;
        shared.staging.get_mut(..len).ok_or(EINVAL)
    }
}

impl<P: Pending> Drop for Turn<'_, P> {
    fn drop(&mut self) {
        *self.owner.turn.lock() = self.shared.take();
        self.owner.turn_over.notify_one();
    }
}

impl<P: Pending> Passthrough<P> {
    /// What the nodes of `ctrl` lead to: its admin queue and I/O queue 1
    /// (`io`, whose commands carry `P` for the disk).
    pub(crate) fn new(
        pdev: &pci::Device<Core<'_>>,
        ctrl: &Controller,
        io: &Arc<QueuePair<P>>,
    ) -> Result<Arc<Passthrough<P>>> {
        let block_size = ctrl
            .identify_namespace(pdev, NSID)?
            .block_size()
            .ok_or(EIO)?;
        let dev: &Device<Bound> = pdev.as_ref();
        let entries = prp::list_entries_for(BUFFER_SIZE as u32, PAGE);
        let mut list = KVec::from_elem(0u64, entries, GFP_KERNEL)?;
        let mut buffers = KVec::with_capacity(BUFFERS, GFP_KERNEL)?;
        for _ in 0..BUFFERS {
            let buffer = CmdBuffer::new(dev, BUFFER_SIZE, entries, 0)?;
            // Describe the whole buffer, once: whatever a command transfers
            // stays inside it.
            let mut claim = buffer.claim().ok_or(EBUSY)?;
            let mut view = claim.view();
            let prps = prp::describe(
                view.data_address(),
                BUFFER_SIZE as u32,
                PAGE,
                &mut list,
                view.prp_list_address(),
            )
            .map_err(|_| EINVAL)?;
            view.write_prp_list(list.get(..prps.list_entries).ok_or(EINVAL)?)?;
            drop(claim);
            buffers.push(Lendable { buffer, prps }, GFP_KERNEL)?;
        }
        let shared = Shared {
            staging: KVVec::from_elem(0, BUFFER_SIZE, GFP_KERNEL)?,
            // Room for every buffer: `retire` never allocates.
            retired: KVec::with_capacity(BUFFERS, GFP_KERNEL)?,
        };
        Arc::pin_init(
            try_pin_init!(Passthrough {
                dev: ARef::from(&**dev),
                admin: ctrl.admin().clone(),
                io: io.clone(),
                block_size,
                buffers,
                turn <- new_mutex!(Some(shared), "rnvme_passthru"),
                turn_over <- new_condvar!("rnvme_passthru_turn"),
            }),
            GFP_KERNEL,
        )
    }

    // ANCHOR: turn
    /// Waits until no other command runs, and takes the turn. The wait is
    /// interruptible (`ERESTARTSYS` on a signal): a command may hold the
    /// turn for up to `MAX_TIMEOUT_MS`, and a task asleep that long in an
    /// uninterruptible wait (a `Mutex` held across the command) could not
    /// be killed, and would set off the hung-task detector.
    fn take_turn(&self) -> Result<Turn<'_, P>> {
        let mut turn = self.turn.lock();
        loop {
            if let Some(shared) = turn.take() {
                return Ok(Turn {
                    owner: self,
                    shared: Some(shared),
                });
            }
            if self.turn_over.wait_interruptible(&mut turn) {
                return Err(ERESTARTSYS);
            }
        }
    }
    // ANCHOR_END: turn

    /// Whether the queue that `target` names has an identifier abandoned.
    fn queue_has_abandoned(&self, target: Target) -> bool {
        match target {
            Target::Admin => self.admin.has_abandoned(),
            Target::Io => self.io.has_abandoned(),
        }
    }

    // ANCHOR: ioctl
    /// One ioctl on a node (`ns` for the namespace node).
    fn ioctl(&self, cmd: u32, arg: usize, ns: bool) -> Result<isize> {
        if cmd == NVME_IOCTL_ID {
            // Which namespace this is: only a namespace node knows.
            return if ns { Ok(NSID as isize) } else { Err(ENOTTY) };
        }
        let Some((target, layout)) = passthru::decode(cmd) else {
            return Err(ENOTTY);
        };
        if !cred::sys_admin() {
            return Err(EACCES);
        }
        let mut raw = [0u8; 80];
        let raw = raw.get_mut(..layout.size()).ok_or(EINVAL)?;
        UserSlice::new(UserPtr::from_addr(arg), raw.len())
            .reader()
            .read_slice(raw)?;
        let c = passthru::parse(raw).ok_or(EINVAL)?;
        // The controller has one namespace, and an I/O command for another
        // is a mistake (the C driver says the same).
        if target == Target::Io && c.nsid != NSID {
            return Err(EINVAL);
        }
        let direction = passthru::check(&c, target, BUFFER_SIZE as u32, self.block_size).map_err(
            |r| match r {
                Refused::Invalid => EINVAL,
                Refused::Forbidden => EPERM,
            },
        )?;
        let (status, result) = self.run(&c, target, direction)?;
        // The result goes back into the caller's structure.
        let (at, size) = layout.result_field();
        let bytes = u64::from(result).to_ne_bytes();
        UserSlice::new(UserPtr::from_addr(arg.checked_add(at).ok_or(EFAULT)?), size)
            .writer()
            .write_slice(bytes.get(..size).ok_or(EINVAL)?)?;
        // A failed command: its status, positive, as the C driver returns it.
        Ok(isize::try_from(status)?)
    }
    // ANCHOR_END: ioctl

    // ANCHOR: run
    /// Copies the data in, sends the command, waits, copies the data out;
    /// returns the completion's status (0: success) and result.
    fn run(
        &self,
        c: &passthru::Passthru,
        target: Target,
        direction: Direction,
    ) -> Result<(u16, u32)> {
        // TODO (exercise 1): one command at a time: take the turn
        // (`self.take_turn()?`, given: it waits, interruptibly), then a
        // buffer and its PRPs (`turn.lend()?`, given: EBUSY if every buffer
        // is still held by a command that timed out) and the staging slice
        // (`turn.staging(len)`). Copy a Write's data in from `c.addr` (into
        // the staging slice, then `claim.view().write`), or, for a Read,
        // check now that the caller's buffer can be written; send the
        // command (`command_of(c, &prps)`, given below) with `submit_any`
        // to the admin queue or I/O queue 1 (`target`), within
        // `c.timeout_ms` (0: ADMIN_TIMEOUT; at most MAX_TIMEOUT_MS; a
        // `Delta`). If it times out or is interrupted (ETIMEDOUT, EINTR),
        // the controller may still use the buffer: `turn.retire(target,
        // claim)` (the next command gets another buffer, and this one comes
        // back once the controller answers); a command the driver cancelled
        // (`Status::HOST_ABORTED`) keeps its buffer for good
        // (`Claim::abandon`). Copy a Read's data out (`claim.view().read`
        // into the staging slice, then to `c.addr`), and return the status
        // and the result.
        // Tests: "ioctl: ..." and "nvme-cli ..." in make check STEP=16.
        let _ = (
            c,
            target,
            direction,
            MAX_TIMEOUT_MS,
            command_of(c, &Prps::default()),
        );
        Err(ENOSYS)
    }
    // ANCHOR_END: run
}

/// The command `c` asks for, its data in the buffer that `prps` describe
/// (a passthrough command is always PRPs, never an SGL).
fn command_of(c: &passthru::Passthru, prps: &Prps) -> Command {
    Command {
        opcode: c.opcode,
        nsid: c.nsid,
        prp1: prps.prp1,
        prp2: prps.prp2,
        cdw: c.cdw,
        sgl: false,
    }
}

// ANCHOR: nodes
/// The two nodes of a controller, registered as misc devices, which lead
/// to its `Passthrough`. Registered last, so an `open` that comes at once
/// finds everything in place.
#[pin_data]
pub(crate) struct Nodes<P: Pending> {
    #[pin]
    ctrl_node: Node<CtrlNode<P>>,
    #[pin]
    ns_node: Node<NsNode<P>>,
}

impl<P: Pending> Nodes<P> {
    /// `/dev/rnvmeN` and `/dev/rngNn1` for controller `number`; there are
    /// names for 8 controllers.
    pub(crate) fn new(
        ctrl: Arc<Passthrough<P>>,
        number: u32,
    ) -> Result<impl PinInit<Nodes<P>, Error>> {
        let i = number as usize;
        let (Some(ctrl_name), Some(ns_name)) = (CTRL_NAMES.get(i), NS_NAMES.get(i)) else {
            return Err(ENOSPC);
        };
        let ctrl_node = Arc::new(CtrlNode(ctrl.clone()), GFP_KERNEL)?;
        let ns_node = Arc::new(NsNode(ctrl), GFP_KERNEL)?;
        Ok(try_pin_init!(Nodes {
            ctrl_node <- Node::new(ctrl_name, ctrl_node),
            ns_node <- Node::new(ns_name, ns_node),
        }? Error))
    }
}

/// The controller node, `/dev/rnvmeN`.
pub(crate) struct CtrlNode<P: Pending>(Arc<Passthrough<P>>);

/// The namespace node, `/dev/rngNn1`.
pub(crate) struct NsNode<P: Pending>(Arc<Passthrough<P>>);

impl<P: Pending> NodeOps for CtrlNode<P> {
    fn ioctl(this: ArcBorrow<'_, Self>, cmd: u32, arg: usize) -> Result<isize> {
        this.0.ioctl(cmd, arg, false)
    }
}

impl<P: Pending> NodeOps for NsNode<P> {
    fn ioctl(this: ArcBorrow<'_, Self>, cmd: u32, arg: usize) -> Result<isize> {
        this.0.ioctl(cmd, arg, true)
    }
}
// ANCHOR_END: nodes
