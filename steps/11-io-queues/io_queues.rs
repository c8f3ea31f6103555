// SPDX-License-Identifier: GPL-2.0

//! I/O queues: creating and deleting them, with a handler each, and a
//! first real Read and Write through each one; and `start`, as stages 11
//! to 14 and 16 to 21 start the controller: stage 10's count, then working I/O queues.

use kernel::{
    device::Core,
    dma::Coherent,
    io::Io,
    pci,
    prelude::*,
    sync::Arc, //
};

use crate::{
    nvme::{
        command::{
            admin_opc,
            cns,
            nvm_opc,
            Command, //
        },
        ctrl::{
            BringUpTests,
            Controller, //
        },
        identify::{
            IdCtrl,
            IdNs,
            IDENTIFY_SIZE, //
        },
        interrupts::Interrupts,
        pattern::{
            is_pattern,
            PATTERN_BLOCK,
            PATTERN_BLOCKS, //
        },
        queue::{
            AdminQueue,
            Pending,
            QueuePair,
            ADMIN_TIMEOUT, //
        },
        registers::Registers, //
    },
    queue_count::{
        bring_up_and_count,
        vector_of, //
    },
};

/// Entries in each I/O queue.
pub(crate) const IO_DEPTH: u16 = 32;

/// An I/O queue pair and the interrupt vector its completions arrive on.
/// `P` is what its commands carry: nothing in stage 11
/// ([`NoRequests`](crate::nvme::queue::NoRequests)), the disk's requests
/// from stage 13 on.
pub(crate) struct IoQueue<P: Pending> {
    pub(crate) queue: Arc<QueuePair<P>>,
    pub(crate) vector: u32,
}

// ANCHOR: start
/// Starts the controller up to working I/O queues, as stages 11 to 19 do
/// once their `probe` has made `ctrl` (reset, admin queue allocated) and
/// `irqs` (the admin queue's handler on vector 0): stage 10's
/// `bring_up_and_count` (the controller started and identified, the I/O
/// queues counted), then one I/O queue pair per CPU, as many as the
/// controller grants, each with its handler. Returns what Identify
/// Controller said and the I/O queues. `fault` and `tests` are a stage's
/// test knobs (0 and `BringUpTests::default()`: none).
///
/// On an error the controller is stopped again, before the caller drops
/// `irqs`: it must not raise an interrupt nobody handles, nor write queue
/// memory about to be freed.
pub(crate) fn start<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    irqs: &mut Interrupts<'_, P>,
    fault: u32,
    tests: BringUpTests,
) -> Result<(IdCtrl, KVec<IoQueue<P>>)> {
    start_deep(pdev, ctrl, irqs, fault, tests, IO_DEPTH)
}

/// [`start`], with I/O queues of `depth` entries each (the speed stage's;
/// [`IO_DEPTH`] for the stages before it).
pub(crate) fn start_deep<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    ctrl: &Controller,
    irqs: &mut Interrupts<'_, P>,
    fault: u32,
    tests: BringUpTests,
    depth: u16,
) -> Result<(IdCtrl, KVec<IoQueue<P>>)> {
    let (id, count, vecs) = bring_up_and_count(pdev, ctrl, irqs, fault, tests)?;
    let created: Result<KVec<IoQueue<P>>> = (|| {
        let io = create(pdev, ctrl.admin(), ctrl.regs(), count, vecs, depth)?;
        register(irqs, &io)?;
        Ok(io)
    })();
    let io = created.inspect_err(|_| {
        let _ = ctrl.admin().disable_controller();
    })?;
    Ok((id, io))
}
// ANCHOR_END: start

// ANCHOR: stop
/// Unbind, once nothing submits to the I/O queues any more: says what each
/// carried, deletes them (unless the controller was given up: it is
/// disabled then), and stops the controller. Its queue memory may be freed
/// afterwards.
pub(crate) fn stop<P: Pending>(pdev: &pci::Device<Core<'_>>, ctrl: &Controller, io: &[IoQueue<P>]) {
    for q in io {
        dev_info!(
            pdev,
            "queue {}: {} completions came by interrupt\n",
            q.queue.qid(),
            q.queue.reaped()
        );
    }
    let admin = ctrl.admin();
    if !admin.is_dead() {
        for q in io {
            q.queue.close_doorbells();
        }
        match delete(pdev, admin, io) {
            Ok(n) => dev_info!(pdev, "deleted {} I/O queue pairs\n", n),
            Err(e) => dev_err!(pdev, "deleting the I/O queues failed ({:?})\n", e),
        }
    }
    ctrl.stop(pdev);
}
// ANCHOR_END: stop

// ANCHOR: create
/// Creates I/O queue pairs 1..=`count` of `depth` entries: for each, a
/// completion queue on its vector with interrupts enabled, then a
/// submission queue that posts to it. (A CQ must exist before an SQ can
/// name it.)
pub(crate) fn create<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    regs: &Arc<Registers>,
    count: u16,
    vectors: u32,
    depth: u16,
) -> Result<KVec<IoQueue<P>>> {
    // TODO (exercise 1): Create I/O queue pairs 1..=`count` and return
    // them, in qid order, each as `IoQueue { queue, vector }` with its
    // vector from `vector_of(qid, vectors)`. The contract (NVMe 1.4,
    // section 5: Create I/O Completion Queue, Create I/O Submission Queue):
    // - each pair is a `QueuePair` of `depth` entries for its qid, on the
    //   controller's registers `regs`;
    // - an SQ names the CQ it posts to, and the controller refuses an SQ
    //   whose CQ does not exist yet: a pair's CQ comes first;
    // - Create I/O CQ (`admin_opc::CREATE_IO_CQ`): PRP1 = the CQ's bus
    //   address; CDW10 = the queue size, 0's based, in 31:16 and the qid in
    //   15:0; CDW11 = the vector in 31:16, interrupts enabled (bit 1),
    //   physically contiguous (bit 0). Without bit 1 the controller posts
    //   completions but interrupts nobody;
    // - Create I/O SQ (`admin_opc::CREATE_IO_SQ`): PRP1 = the SQ's bus
    //   address; CDW10 as for the CQ; CDW11 = the ID of its CQ (the same
    //   qid) in 31:16, physically contiguous (bit 0);
    // - each admin command waits at most ADMIN_TIMEOUT; the first failure
    //   (of an allocation or a command) is the error (`start` stops the
    //   controller then).
    // You have: `QueuePair::new`, `cq_address`, `sq_address`, `vector_of`,
    // `Command`, `admin.submit`, `KVec`.
    // Tests: the "NAME: queue Q on vector V reads the host's pattern and reads
    // back its own write" checks and the checks after them, for each
    // controller.
    let _ = (
        pdev,
        admin,
        regs,
        count,
        vector_of(1, vectors),
        depth,
        admin_opc::CREATE_IO_CQ,
        admin_opc::CREATE_IO_SQ,
    );
    Err(ENOSYS)
}
// ANCHOR_END: create

// ANCHOR: delete
/// Deletes the I/O queues, last first, each SQ before its CQ (a CQ cannot
/// be deleted while an SQ still posts to it). Returns how many.
pub(crate) fn delete<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    io: &[IoQueue<P>],
) -> Result<usize> {
    // TODO (exercise 2): Delete every I/O queue pair of `io` and return
    // how many. The contract (NVMe 1.4, section 5: Delete I/O Submission
    // Queue, Delete I/O Completion Queue):
    // - a CQ cannot be deleted while an SQ still posts to it: each pair's
    //   SQ goes (`admin_opc::DELETE_IO_SQ`) before its CQ
    //   (`admin_opc::DELETE_IO_CQ`);
    // - the pairs go in the reverse of the order `create` made them, last
    //   first;
    // - each command names its queue by ID (`q.queue.qid()`) in CDW10
    //   15:0, and nothing else;
    // - each waits at most ADMIN_TIMEOUT; the first failure is the error
    //   (the controller is disabled right after anyway).
    // You have: `Command`, `admin.submit`, `IoQueue`.
    // Tests: "NAME: unbind deletes the N I/O queue pairs" and "NAME: each SQ
    // deleted before its CQ (QEMU's trace)", for each controller.
    let _ = (
        pdev,
        admin,
        io,
        admin_opc::DELETE_IO_SQ,
        admin_opc::DELETE_IO_CQ,
    );
    Err(ENOSYS)
}
// ANCHOR_END: delete

// ANCHOR: register
/// Registers one handler per I/O queue on the queue's vector. Queues that
/// share a vector get one handler each on the same interrupt (`SHARED`):
/// each reaps its own queue.
pub(crate) fn register<P: Pending>(irqs: &mut Interrupts<'_, P>, io: &[IoQueue<P>]) -> Result {
    for q in io {
        irqs.add(&q.queue, usize::try_from(q.vector)?)?;
    }
    Ok(())
}
// ANCHOR_END: register

/// A Read or Write of one logical block at `lba` of namespace 1, into or
/// from the page at bus address `prp1`.
fn rw(opcode: u8, lba: u64, prp1: u64) -> Command {
    Command {
        opcode,
        nsid: 1,
        prp1,
        // Starting LBA in CDW10-11; CDW12: number of blocks, 0's based.
        cdw: [lba as u32, (lba >> 32) as u32, 0, 0, 0, 0],
        ..Command::default()
    }
}

/// Proves that every I/O queue works before anything relies on it: through
/// each queue, reads `reads` blocks of the pattern the host wrote before
/// boot and compares them, then writes a block of its own past the pattern
/// and reads it back.
pub(crate) fn exercise<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    io: &[IoQueue<P>],
    reads: u32,
) -> Result {
    // On an error probe fails: the controller is stopped first, before its
    // handlers go, and before the page (which a command that timed out may
    // still be written into) is freed.
    let page = Coherent::<u8>::zeroed_slice(pdev.as_ref(), IDENTIFY_SIZE, GFP_KERNEL).inspect_err(
        |_| {
            let _ = admin.disable_controller();
        },
    )?;
    let result = exercise_with(pdev, admin, io, reads, &page);
    if result.is_err() {
        let _ = admin.disable_controller();
    }
    result
}

/// `exercise`, with the page to read into and write from.
fn exercise_with<P: Pending>(
    pdev: &pci::Device<Core<'_>>,
    admin: &AdminQueue,
    io: &[IoQueue<P>],
    reads: u32,
    page: &Coherent<[u8]>,
) -> Result {
    // The driver's copy of the page: the controller's data is copied out
    // (and in) with the DMA accessors, never referenced in place.
    let mut data = KVec::from_elem(0u8, IDENTIFY_SIZE, GFP_KERNEL)?;
    admin.submit(
        pdev.as_ref(),
        &Command::identify(cns::NAMESPACE, 1, page.dma_address()),
        ADMIN_TIMEOUT,
    )?;
    page.copy_to_slice(&mut data);
    let block = IdNs::parse(&data).ok_or(EIO)?.block_size().ok_or(EIO)?;
    let block = usize::try_from(block)?;
    if block > IDENTIFY_SIZE || block % PATTERN_BLOCK != 0 {
        dev_err!(
            pdev,
            "a {}-byte block does not fit the test's page\n",
            block
        );
        return Err(EOPNOTSUPP);
    }
    let per_block = (block / PATTERN_BLOCK) as u64;
    // One block at `lba`, read into or written from the page.
    let transfer = |q: &QueuePair<P>, opcode: u8, lba: u64| {
        q.submit(
            pdev.as_ref(),
            &rw(opcode, lba, page.dma_address()),
            ADMIN_TIMEOUT,
        )
    };
    // ANCHOR: exercise
    for q in io {
        let qid = q.queue.qid();
        // Each queue reads blocks of its own, wrapping in the pattern.
        for j in 0..u64::from(reads) {
            let lba = (u64::from(qid - 1) * u64::from(reads) + j) % (PATTERN_BLOCKS / per_block);
            transfer(&q.queue, nvm_opc::READ, lba)?;
            page.copy_to_slice(&mut data);
            let good = data[..block]
                .chunks(PATTERN_BLOCK)
                .zip(lba * per_block..)
                .all(|(b, n)| is_pattern(b, n));
            if !good {
                dev_err!(
                    pdev,
                    "queue {}: block {} is not what the host wrote\n",
                    qid,
                    lba
                );
                return Err(EIO);
            }
        }
        // A block past the pattern, one per queue: write, then read back.
        let lba = PATTERN_BLOCKS / per_block + u64::from(qid);
        data.fill(0);
        data[..block].fill(b'a' + (qid % 26) as u8);
        page.copy_from_slice(&data);
        transfer(&q.queue, nvm_opc::WRITE, lba)?;
        data.fill(0);
        page.copy_from_slice(&data);
        transfer(&q.queue, nvm_opc::READ, lba)?;
        page.copy_to_slice(&mut data);
        if data[..block].iter().any(|&b| b != b'a' + (qid % 26) as u8) {
            dev_err!(
                pdev,
                "queue {}: block {} does not read back as written\n",
                qid,
                lba
            );
            return Err(EIO);
        }
        dev_info!(
            pdev,
            "queue {}: vector {}, {} pattern blocks read and verified, 1 block written and read back\n",
            qid,
            q.vector,
            reads
        );
    }
    // ANCHOR_END: exercise
    Ok(())
}
