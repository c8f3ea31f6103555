// SPDX-License-Identifier: GPL-2.0

//! File reads that never put the task to sleep: a `struct kiocb` of our own,
//! submitted the way io_uring submits one (`io_uring/rw.c`).
//!
//! A read is first tried with `IOCB_NOWAIT`: the file system copies what the
//! page cache holds, or answers `EAGAIN` (and has usually started the
//! readahead that will bring the pages in). Then, where the file system
//! allows it (`FOP_BUFFER_RASYNC`: ext4, xfs, btrfs), the read is tried
//! again with `IOCB_WAITQ`: instead of sleeping on a locked page,
//! `filemap_read` hooks our [`KiocbOp`]'s wait-page entry into the page's
//! wait queue and returns `EIOCBQUEUED`; when the page is unlocked (the I/O
//! ended: in the disk's interrupt handler), [`page_wake`] wakes the task.
//! A direct read (`IOCB_DIRECT`) goes to the disk with a completion function,
//! [`direct_done`], which wakes the task from the same interrupt.
//!
//! All of the file reactor's `unsafe` is in this file.
//!
//! What would replace it upstream: a `kernel` crate kiocb abstraction that
//! can submit (7.3's `kernel::fs::Kiocb` only wraps the kiocb that a Rust
//! file system's `read_iter` receives), with `wake_page_match` and
//! `list_del_init` as helpers.

use crate::vfs::File;
use core::{
    ffi::{
        c_int,
        c_uint,
        c_void, //
    },
    pin::Pin,
    task::{
        Context,
        Poll,
        Waker, //
    }, //
};
use kernel::{
    bindings,
    container_of,
    ffi::c_long,
    new_spinlock_irq,
    prelude::*,
    sync::SpinLockIrq,
    time::{
        delay::fsleep,
        Delta, //
    },
    types::Opaque, //
};

// Flags that bindgen skips (their macros cast with `__force`).
/// `IOCB_NOWAIT` (`RWF_NOWAIT`, `include/uapi/linux/fs.h`).
const IOCB_NOWAIT: c_int = 0x8;
/// `FMODE_NOWAIT`: the file honours `IOCB_NOWAIT`.
const FMODE_NOWAIT: u32 = 1 << 27;
/// `FMODE_CAN_ODIRECT`: the file can be read with `IOCB_DIRECT`.
const FMODE_CAN_ODIRECT: u32 = 1 << 22;
/// `FMODE_READ` and `FMODE_CAN_READ`: opened for reading, and it can be.
const FMODE_READ: u32 = 1 << 0;
const FMODE_CAN_READ: u32 = 1 << 17;
/// `FOP_BUFFER_RASYNC`: buffered reads can wait on a page with `IOCB_WAITQ`.
const FOP_BUFFER_RASYNC: u32 = 1 << 0;

// ANCHOR: support
/// What a file's file system can do without putting the task to sleep.
#[derive(Clone, Copy)]
pub(crate) struct Support {
    /// `IOCB_NOWAIT` is honoured (`FMODE_NOWAIT`).
    pub(crate) nowait: bool,
    /// A buffered read can wait for a page with `IOCB_WAITQ`.
    pub(crate) page_wait: bool,
    /// The file can be read with `IOCB_DIRECT`.
    pub(crate) direct: bool,
}
// ANCHOR_END: support

/// Whether `file` may be read through a kiocb: what `__kernel_read` checks
/// (opened for reading, and a `read_iter` without a `read` beside it).
fn check_readable(file: &File) -> Result {
    let f = file.as_ptr();
    // SAFETY: the file is valid while `file` is; `f_mode` and `f_op` are set
    // at open and `f_op` points at its file system's static operations.
    let (mode, read_iter, read) =
        unsafe { ((*f).f_mode, (*(*f).f_op).read_iter, (*(*f).f_op).read) };
    if mode & (FMODE_READ | FMODE_CAN_READ) != FMODE_READ | FMODE_CAN_READ
        || read.is_some()
        || read_iter.is_none()
    {
        return Err(EINVAL);
    }
    Ok(())
}

/// `pos` as a `loff_t`, once `check_readable` and `rw_verify_area` (the
/// checks `kernel_read` makes: the range, mandatory locks, the LSMs) let a
/// read of `len` bytes from `pos` go ahead.
fn verified_pos(file: &File, pos: u64, len: usize) -> Result<i64> {
    check_readable(file)?;
    let pos = i64::try_from(pos).map_err(|_| EINVAL)?;
    // SAFETY: the file is valid, `pos` lives across the call.
    to_result(unsafe {
        bindings::rw_verify_area(bindings::READ as c_int, file.as_ptr(), &pos, len)
    })?;
    Ok(pos)
}

/// Makes `iter` the destination of a read into the one segment `kvec`,
/// which it sets to the `len` bytes at `base`.
///
/// # Safety
///
/// `iter` and `kvec` are valid for writes, and stay valid and in place as
/// long as the read uses them; `base` is writable for `len` bytes as long.
unsafe fn point_iter(
    iter: *mut bindings::iov_iter,
    kvec: *mut bindings::kvec,
    base: *mut u8,
    len: usize,
) {
    // SAFETY: by the function's safety requirements.
    unsafe {
        kvec.write(bindings::kvec {
            iov_base: base.cast(),
            iov_len: len,
        });
        bindings::iov_iter_kvec(iter, bindings::ITER_DEST, kvec, 1, len);
    }
}

/// Calls `file`'s `read_iter`: bytes read, or a negative errno
/// (`-EIOCBQUEUED`: the kiocb is queued).
///
/// # Safety
///
/// `check_readable(file)` passed; `kiocb` is a kiocb for `file`, and it
/// and `iter` are valid for as long as the flags of the kiocb make the
/// kernel keep them (the call, for a synchronous kiocb; until the wait-page
/// entry is woken or `ki_complete` is called, otherwise).
unsafe fn read_iter(
    file: &File,
    kiocb: *mut bindings::kiocb,
    iter: *mut bindings::iov_iter,
) -> isize {
    // SAFETY: the file is valid; `f_op` is static.
    match unsafe { (*(*file.as_ptr()).f_op).read_iter } {
        // SAFETY: by the function's safety requirements.
        Some(read_iter) => unsafe { read_iter(kiocb, iter) },
        None => EINVAL.to_errno() as isize,
    }
}

impl File {
    // ANCHOR: async_support
    /// What this file's file system can do without sleeping.
    pub(crate) fn async_support(&self) -> Support {
        let f = self.as_ptr();
        // SAFETY: as in `check_readable`: `f_mode` and `f_op` are set at open.
        let (mode, fop_flags) = unsafe { ((*f).f_mode, (*(*f).f_op).fop_flags) };
        Support {
            nowait: mode & FMODE_NOWAIT != 0,
            page_wait: mode & FMODE_NOWAIT != 0 && fop_flags & FOP_BUFFER_RASYNC != 0,
            direct: mode & FMODE_NOWAIT != 0 && mode & FMODE_CAN_ODIRECT != 0,
        }
    }
    // ANCHOR_END: async_support

    /// One synchronous read through a kiocb on the stack, with `flags` added
    /// to the file's own: `IOCB_NOWAIT` (never sleeps: `EAGAIN` instead) or
    /// `IOCB_DIRECT` (may sleep: the blocking pool's direct reads).
    fn read_sync(&self, buf: &mut [u8], pos: u64, flags: c_int) -> Result<usize> {
        let pos = verified_pos(self, pos, buf.len())?;
        let f = self.as_ptr();
        // `init_sync_kiocb`, an inline function: no `ki_complete`, so the
        // file system finishes the read before it returns.
        let mut kiocb = bindings::kiocb {
            ki_filp: f,
            ki_pos: pos,
            // SAFETY: `f_iocb_flags` is set at open (and by `fcntl`, which
            // nobody calls on the server's files).
            ki_flags: unsafe { (*f).f_iocb_flags } as c_int | flags,
            ..Default::default()
        };
        let (mut kvec, mut iter) = (bindings::kvec::default(), bindings::iov_iter::default());
        // SAFETY: `iter` and `kvec` live until the end of this function, and
        // `buf` is writable for its length, borrowed as long.
        unsafe { point_iter(&mut iter, &mut kvec, buf.as_mut_ptr(), buf.len()) };
        // SAFETY: a synchronous kiocb on a valid file, and an iterator over
        // our buffer: the read is over when it returns.
        from_ssize(unsafe { read_iter(self, &mut kiocb, &mut iter) })
    }

    // ANCHOR: read_nowait
    /// Reads what can be read without sleeping: `EAGAIN` if nothing can.
    /// The caller checked `async_support().nowait`.
    pub(crate) fn read_nowait(&self, buf: &mut [u8], pos: u64) -> Result<usize> {
        self.read_sync(buf, pos, IOCB_NOWAIT)
    }
    // ANCHOR_END: read_nowait

    /// A direct read that may sleep (the blocking pool's).
    pub(crate) fn read_direct_blocking(&self, buf: &mut [u8], pos: u64) -> Result<usize> {
        self.read_sync(buf, pos, bindings::IOCB_DIRECT as c_int)
    }
}

/// `ret` of a `read_iter`: bytes read, or a negative errno.
fn from_ssize(ret: isize) -> Result<usize> {
    usize::try_from(ret).map_err(|_| Error::from_errno(ret as c_int))
}

/// `to_result`, for a C call that returns 0 or a negative errno.
fn to_result(ret: c_int) -> Result {
    kernel::error::to_result(ret)
}

// ANCHOR: op
/// What one read of a [`KiocbOp`] waits for, and what it got.
enum Wait {
    /// Nothing: no entry in a wait queue, no I/O in flight.
    Idle,
    /// The wait-page entry is in a page's wait queue.
    Page,
    /// The page was unlocked: [`page_wake`] took the entry out of the queue.
    PageUnlocked,
    /// A direct read is in flight.
    Direct,
    /// The direct read ended (`ki_complete`) with this result.
    DirectDone(c_long),
}

/// The part [`page_wake`] and [`direct_done`] share with the task.
struct Shared {
    wait: Wait,
    /// The task that awaits the read.
    waker: Option<Waker>,
}

/// One read in flight: the kiocb, the wait-page entry and the buffer of a
/// direct read, pinned (the kernel holds their addresses while it waits).
///
/// # Invariants
///
/// - While `shared.wait` is `Page`, `page.wait` is in the wait queue of the
///   page `page.folio` (filemap's `__folio_lock_async` put it there), with
///   [`page_wake`] as its function; [`page_wake`] alone takes it out, under
///   that queue's lock, and sets `PageUnlocked` before it lets the lock go.
/// - While `shared.wait` is `Direct`, the block layer owns `kiocb` and
///   writes into `bounce`; [`direct_done`] sets `DirectDone`, its last use
///   of `self`.
/// - `drop` waits until `shared.wait` is neither `Page` nor `Direct`: the
///   value is freed only once the kernel holds no pointer into it. The
///   wait is bounded by the I/O the page or the read waits for (a
///   completion or an error: the disk driver's timeout ends every
///   request). Only a cancelled task drops a read in flight (the executor's
///   shutdown, at `rmmod`): no other task is held up.
/// - A direct read writes only into `bounce`, which this value owns: a
///   leaked `KiocbOp` leaks the buffer too, so the device never writes into
///   freed memory, whatever the future around it does.
#[pin_data(PinnedDrop)]
pub(crate) struct KiocbOp {
    #[pin]
    kiocb: Opaque<bindings::kiocb>,
    #[pin]
    page: Opaque<bindings::wait_page_queue>,
    /// The iterator and segment of a direct read: the block layer reads
    /// them while it submits.
    #[pin]
    iter: Opaque<bindings::iov_iter>,
    #[pin]
    kvec: Opaque<bindings::kvec>,
    /// Taken in interrupt context by the wake functions: irq-disabling.
    #[pin]
    shared: SpinLockIrq<Shared>,
    /// Where a direct read lands (page-aligned: a direct read needs its
    /// memory aligned to the disk's blocks).
    bounce: KVVec<u8>,
}
// ANCHOR_END: op

// SAFETY: the kernel's structures are only touched by the task that owns the
// value (submitting), or by the kernel under the rules of the type
// invariants; the rest is behind `shared`'s lock.
unsafe impl Send for KiocbOp {}
// SAFETY: shared access only takes `shared`'s lock.
unsafe impl Sync for KiocbOp {}

/// What one step of a read gave the caller.
pub(crate) enum Step {
    /// Bytes read (0: at or past the end of the file).
    Done(usize),
    /// The page it waited for was unlocked: try the read again.
    Again,
    /// It would sleep, and no wait can be armed: a job for the blocking pool.
    Blocked,
}

impl KiocbOp {
    /// A read with nothing in flight.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            kiocb: Opaque::zeroed(),
            page: Opaque::zeroed(),
            iter: Opaque::zeroed(),
            kvec: Opaque::zeroed(),
            shared <- new_spinlock_irq!(Shared {
                wait: Wait::Idle,
                waker: None,
            }),
            bounce: KVVec::new(),
        })
    }

    // ANCHOR: poll_page
    /// A buffered read that may wait for a page: the read again with
    /// `IOCB_WAITQ` (io_uring's `io_rw_should_retry`). The first poll
    /// submits; a read that waits is `Pending` until [`page_wake`] runs,
    /// then `Ready(Again)`.
    pub(crate) fn poll_page(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        file: &File,
        buf: &mut [u8],
        pos: u64,
    ) -> Poll<Result<Step>> {
        {
            let mut shared = self.shared.lock();
            match shared.wait {
                Wait::Page => {
                    shared.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Wait::PageUnlocked => {
                    shared.wait = Wait::Idle;
                    return Poll::Ready(Ok(Step::Again));
                }
                Wait::Idle => {}
                // A direct read is not mixed with buffered ones.
                Wait::Direct | Wait::DirectDone(_) => return Poll::Ready(Err(EBUSY)),
            }
            // Before the read: the page may be unlocked, and `page_wake`
            // run, before `read_iter` even returns.
            shared.wait = Wait::Page;
            shared.waker = Some(cx.waker().clone());
        }
        let ret = self.as_ref().submit_page_wait(file, buf, pos);
        let mut shared = self.shared.lock();
        if ret == -(bindings::EIOCBQUEUED as isize) {
            if let Wait::PageUnlocked = shared.wait {
                shared.wait = Wait::Idle;
                return Poll::Ready(Ok(Step::Again));
            }
            return Poll::Pending;
        }
        // Not queued: the entry is in no wait queue.
        shared.wait = Wait::Idle;
        let waker = shared.waker.take();
        drop(shared);
        drop(waker);
        Poll::Ready(match from_ssize(ret) {
            Ok(n) => Ok(Step::Done(n)),
            Err(e) if e == EAGAIN => Ok(Step::Blocked),
            Err(e) => Err(e),
        })
    }
    // ANCHOR_END: poll_page

    /// The `IOCB_WAITQ` read: what `read_iter` returned, `-EIOCBQUEUED` if
    /// the entry was queued.
    fn submit_page_wait(self: Pin<&Self>, file: &File, buf: &mut [u8], pos: u64) -> isize {
        let pos = match verified_pos(file, pos, buf.len()) {
            Ok(pos) => pos,
            Err(e) => return e.to_errno() as isize,
        };
        let f = file.as_ptr();
        let (kiocb, page) = (self.kiocb.get(), self.page.get());
        // SAFETY: `shared.wait` is `Page` but the entry is in no queue yet,
        // so nothing else touches `kiocb` or `page` (type invariant): we
        // fill them in. The entry's list is initialised at its final
        // address (the value is pinned).
        unsafe {
            (*page).wait.flags = 0;
            (*page).wait.private = core::ptr::null_mut();
            (*page).wait.func = Some(page_wake);
            bindings::INIT_LIST_HEAD(&raw mut (*page).wait.entry);
            kiocb.write(bindings::kiocb {
                ki_filp: f,
                ki_pos: pos,
                ki_flags: (*f).f_iocb_flags as c_int | bindings::IOCB_WAITQ as c_int,
                ki_waitq: page,
                ..Default::default()
            });
        }
        let (mut kvec, mut iter) = (bindings::kvec::default(), bindings::iov_iter::default());
        // SAFETY: `iter` and `kvec` outlive the call below, and `buf` is
        // writable for its length. A buffered read copies into it only
        // during `read_iter` (an `EIOCBQUEUED` read copied nothing).
        unsafe { point_iter(&mut iter, &mut kvec, buf.as_mut_ptr(), buf.len()) };
        // SAFETY: `kiocb` is a synchronous kiocb with `IOCB_WAITQ` and a
        // wait-page entry that stays valid until `page_wake` took it out
        // (type invariant); the iterator describes our buffer.
        unsafe { read_iter(file, kiocb, &mut iter) }
    }

    // ANCHOR: poll_direct
    /// A direct read of `len` bytes (a multiple of the disk's block size, at
    /// a multiple of it) into the bounce buffer, completed by
    /// [`direct_done`]: `Ready(Done(n))` once the bytes are in
    /// [`KiocbOp::bounce`], `Blocked` if it cannot be done without sleeping.
    pub(crate) fn poll_direct(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        file: &File,
        len: usize,
        pos: u64,
    ) -> Poll<Result<Step>> {
        {
            let mut shared = self.shared.lock();
            match shared.wait {
                Wait::Direct => {
                    shared.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Wait::DirectDone(ret) => {
                    shared.wait = Wait::Idle;
                    return Poll::Ready(direct_step(ret));
                }
                Wait::Idle => {}
                Wait::Page | Wait::PageUnlocked => return Poll::Ready(Err(EBUSY)),
            }
        }
        let ipos = match verified_pos(file, pos, len) {
            Ok(ipos) => ipos,
            Err(e) => return Poll::Ready(Err(e)),
        };
        // The buffer: ours, page-aligned (`kvmalloc` of whole pages).
        // SAFETY: `bounce` is not pinned (only the kernel structures are),
        // and nothing reads or writes it while `wait` is `Idle`.
        let bounce = unsafe { &mut self.as_mut().get_unchecked_mut().bounce };
        bounce.clear();
        if let Err(e) = bounce.resize(len, 0, GFP_KERNEL) {
            return Poll::Ready(Err(e.into()));
        }
        let base = bounce.as_mut_ptr();
        let f = file.as_ptr();
        {
            let mut shared = self.shared.lock();
            // Before the submission: `direct_done` may run on another CPU
            // before `read_iter` returns.
            shared.wait = Wait::Direct;
            shared.waker = Some(cx.waker().clone());
        }
        let (kiocb, iter, kvec) = (self.kiocb.get(), self.iter.get(), self.kvec.get());
        // SAFETY: no read is in flight (`wait` was `Idle`): the kiocb, the
        // iterator and the segment are ours to fill, at their final
        // addresses. The segment describes `bounce`, `len` bytes that this
        // value owns and frees only after the read ended (`drop` waits).
        let ret = unsafe {
            point_iter(iter, kvec, base, len);
            kiocb.write(bindings::kiocb {
                ki_filp: f,
                ki_pos: ipos,
                ki_complete: Some(direct_done),
                ki_flags: (*f).f_iocb_flags as c_int | bindings::IOCB_DIRECT as c_int | IOCB_NOWAIT,
                ..Default::default()
            });
            read_iter(file, kiocb, iter)
        };
        let mut shared = self.shared.lock();
        if ret == -(bindings::EIOCBQUEUED as isize) {
            return match shared.wait {
                Wait::DirectDone(ret) => {
                    shared.wait = Wait::Idle;
                    Poll::Ready(direct_step(ret))
                }
                _ => Poll::Pending,
            };
        }
        // Done (or refused) before it returned: `ki_complete` is not called.
        shared.wait = Wait::Idle;
        let waker = shared.waker.take();
        drop(shared);
        drop(waker);
        Poll::Ready(direct_step(ret))
    }
    // ANCHOR_END: poll_direct

    /// The bytes of the last direct read.
    pub(crate) fn bounce(&self) -> &[u8] {
        &self.bounce
    }
}

/// What a direct read's result means for the caller.
fn direct_step(ret: isize) -> Result<Step> {
    match from_ssize(ret) {
        Ok(n) => Ok(Step::Done(n)),
        // `IOCB_NOWAIT`: the inode lock, a page to write back first, no
        // free tag on the disk's queue... The blocking pool does it.
        Err(e) if e == EAGAIN || e == EOPNOTSUPP => Ok(Step::Blocked),
        Err(e) => Err(e),
    }
}

/// `wake_page_match` (`include/linux/pagemap.h`), an inline function the
/// bindings do not have: whether the wake is for the page and bit `page`
/// waits for. The queue is shared by many pages and bits; `page_match`
/// tells the waker that this page still has waiters.
///
/// # Safety
///
/// `page` and `key` are valid, and the caller holds the queue's lock.
unsafe fn wake_page_match(
    page: *const bindings::wait_page_queue,
    key: *mut bindings::wait_page_key,
) -> bool {
    // SAFETY: by the function's safety requirements.
    unsafe {
        if (*page).folio != (*key).folio {
            return false;
        }
        (*key).page_match = 1;
        (*page).bit_nr == (*key).bit_nr
    }
}

/// `list_del_init` (`include/linux/list.h`), inline too: takes `entry` out
/// of its wait queue and leaves it pointing at itself.
///
/// # Safety
///
/// `entry` is in a wait queue whose lock the caller holds.
unsafe fn list_del_init(entry: *mut bindings::wait_queue_entry) {
    // SAFETY: the entry and its neighbours are valid entries of the list,
    // which nobody else changes while the lock is held.
    unsafe {
        let e = &raw mut (*entry).entry;
        (*(*e).next).prev = (*e).prev;
        (*(*e).prev).next = (*e).next;
        bindings::INIT_LIST_HEAD(e);
    }
}

// ANCHOR: page_wake
/// The wait-page entry's function: called by `folio_wake_bit` under the
/// page wait queue's lock, with interrupts off (often in the disk's
/// interrupt handler, where the read's I/O ended), for every page unlocked
/// whose waiters hash to this queue.
///
/// # Safety
///
/// `entry` is the `page.wait` field of a live [`KiocbOp`] whose
/// `shared.wait` is `Page` (only `poll_page` queues entries with this
/// function, and the value is not freed while it is queued: type
/// invariant), and `key` a `struct wait_page_key`.
unsafe extern "C" fn page_wake(
    entry: *mut bindings::wait_queue_entry,
    _mode: c_uint,
    _sync: c_int,
    key: *mut c_void,
) -> c_int {
    // TODO (exercise 2): Wake the task whose page was unlocked (about 20
    // lines). The contract:
    // - the queue is shared by many pages and bits: the `wait_page_queue`
    //   around `entry` (`container_of!`) must match `key` (a
    //   `bindings::wait_page_key`: `key.cast()`), or return 0:
    //   `wake_page_match` (given) says whether it does.
    // - ours: take the entry out of the queue (`list_del_init`, given: the
    //   caller holds the queue's lock), then, in `shared` (the `KiocbOp`
    //   around the `wait_page_queue`: `container_of!` on the `page`
    //   field), set `Wait::PageUnlocked` and take the waker; wake it after
    //   the lock is released, and touch nothing of the op after that (it
    //   may be freed). Return 1.
    // - every `unsafe` block with a safety comment that says why the
    //   pointer is valid (this function's `# Safety`).
    // Tests: "a file not in the page cache: kread logs what it read" and
    // "reads waited for their pages and were woken" (a wait never woken
    // hangs the read: the test's deadline fails it).
    let _ = (entry, key, Wait::PageUnlocked);
    let _ = (wake_page_match, list_del_init);
    0
}
// ANCHOR_END: page_wake

// ANCHOR: direct_done
/// The kiocb's completion function: the direct read ended. Called by iomap
/// when the last bio of the read completes, in the disk's interrupt
/// handler.
///
/// # Safety
///
/// `iocb` is the `kiocb` field of a live [`KiocbOp`] whose `shared.wait` is
/// `Direct` (only `poll_direct` submits kiocbs with this function, and the
/// value is not freed while one is in flight: type invariant).
unsafe extern "C" fn direct_done(iocb: *mut bindings::kiocb, ret: c_long) {
    // SAFETY: by the function's safety requirement.
    let op = unsafe { &*container_of!(iocb.cast::<Opaque<bindings::kiocb>>(), KiocbOp, kiocb) };
    let waker = {
        let mut shared = op.shared.lock();
        shared.wait = Wait::DirectDone(ret);
        shared.waker.take()
    };
    // As in `page_wake`: `op` is not touched after the lock.
    if let Some(waker) = waker {
        waker.wake();
    }
}
// ANCHOR_END: direct_done

// ANCHOR: drop
#[pinned_drop]
impl PinnedDrop for KiocbOp {
    /// Waits until the kernel holds no pointer into the value: the page it
    /// waits for is unlocked, or the direct read ended (type invariant).
    /// Sleeps: only a cancelled task's read gets here with one in flight.
    fn drop(self: Pin<&mut Self>) {
        loop {
            let busy = matches!(self.shared.lock().wait, Wait::Page | Wait::Direct);
            if !busy {
                return;
            }
            fsleep(Delta::from_millis(1));
        }
    }
}
// ANCHOR_END: drop
