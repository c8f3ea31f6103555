// SPDX-License-Identifier: GPL-2.0

//! The file reactor: reads of a file as futures, so that no executor worker
//! sleeps on a disk.
//!
//! Stage 25's reactor wakes a task when its socket is ready; this one wakes
//! it when the page it needs is in memory, or when its direct read has
//! ended. A read ([`FileReactor::read_at`]) goes:
//!
//! 1. with `IOCB_NOWAIT`: what the page cache holds is copied at once
//!    (most reads end here), and a miss starts the readahead;
//! 2. else, with `IOCB_WAITQ` (`kiocb.rs`'s `poll_page`): the task waits,
//!    asleep in no thread, until the disk's interrupt unlocks the page;
//!    then back to 1;
//! 3. what cannot wait that way (a file system without `FMODE_NOWAIT` or
//!    `FOP_BUFFER_RASYNC`, such as tmpfs; a page that must be read and
//!    that no I/O is bringing in) is a job for the blocking pool: a few
//!    workers of their own, so a slow file system holds them, not the
//!    executor's.
//!
//! With `direct=1`, a read that is aligned to the page size goes to the
//! disk as a direct read instead, completed in its interrupt handler.
//!
//! The counters ([`Counts`]) say which way the reads went; the module logs
//! them when it is unloaded.

use crate::{
    kiocb::{
        KiocbOp,
        Step, //
    },
    queue::OwnedQueue,
    vfs::File, //
};
use core::{
    future::poll_fn,
    sync::atomic::{
        AtomicU64,
        Ordering, //
    },
    task::{
        Poll,
        Waker, //
    }, //
};
use kernel::{
    impl_has_work,
    new_spinlock,
    new_work,
    prelude::*,
    sync::{
        Arc,
        SpinLock, //
    },
    workqueue::{
        Work,
        WorkItem, //
    }, //
};

/// What a direct read's offset, length and memory must be multiples of: a
/// page covers every disk's logical block size.
const DIRECT_ALIGN: usize = 4096;

// ANCHOR: counts
/// How the reads went: one counter per way a read can end.
#[derive(Default)]
pub(crate) struct Counts {
    /// Read at once, from the page cache (`IOCB_NOWAIT`).
    pub(crate) at_once: AtomicU64,
    /// Read after one or more waits for a page.
    pub(crate) after_wait: AtomicU64,
    /// Page waits armed and woken.
    pub(crate) page_waits: AtomicU64,
    /// Read from the disk directly, completed by `ki_complete`.
    pub(crate) direct: AtomicU64,
    /// Handed to the blocking pool.
    pub(crate) blocking: AtomicU64,
}
// ANCHOR_END: counts

impl Counts {
    // ANCHOR: log
    /// Logs how the reads went, in the line the tests read: no read of a
    /// file system that can wait for its pages may have used the pool.
    pub(crate) fn log(&self) {
        pr_info!(
            "file reactor: {} read(s) at once, {} after {} page wait(s), {} direct, {} in the blocking pool\n",
            self.at_once.load(Ordering::Relaxed),
            self.after_wait.load(Ordering::Relaxed),
            self.page_waits.load(Ordering::Relaxed),
            self.direct.load(Ordering::Relaxed),
            self.blocking.load(Ordering::Relaxed)
        );
    }
    // ANCHOR_END: log
}

/// Adds one to a counter.
fn count(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

// ANCHOR: reactor
/// The file reactor: the blocking pool, the counters, and whether aligned
/// reads go to the disk directly.
pub(crate) struct FileReactor {
    /// The blocking pool: a workqueue of its own, with at most `blocking`
    /// jobs running at once (the others wait in its queue, not in a worker).
    pool: OwnedQueue,
    direct: bool,
    pub(crate) counts: Counts,
}

impl FileReactor {
    /// A reactor whose blocking pool runs at most `blocking` jobs at once.
    pub(crate) fn new(blocking: u32, direct: bool) -> Result<Self> {
        Ok(Self {
            pool: OwnedQueue::new(c"r9p_blocking", blocking)?,
            direct,
            counts: Counts::default(),
        })
    }
    // ANCHOR_END: reactor

    // ANCHOR: read_at
    /// Reads into `buf` from byte `pos` of `file` (opened for reading); the
    /// number of bytes read, fewer than asked at the end of the file or
    /// where only part of the range was in memory (a 9P client reads on).
    pub(crate) async fn read_at(&self, file: &File, buf: &mut [u8], pos: u64) -> Result<usize> {
        let support = file.async_support();
        if self.direct && support.direct {
            if let Some(n) = self.read_direct(file, buf, pos).await? {
                count(&self.counts.direct);
                return Ok(n);
            }
        }
        if !support.nowait {
            return self.blocking(file, buf, pos, false).await;
        }
        // TODO (exercise 1): Read without ever putting the worker to sleep
        // (about 30 lines). The contract, from here on (direct reads and
        // files without `IOCB_NOWAIT` are done above):
        // - in a loop: `file.read_nowait(buf, pos)`; anything but `EAGAIN`
        //   (bytes, 0 at the end, another error) is the answer. Count it in
        //   `self.counts.at_once`, or in `counts.after_wait` once the read
        //   has waited for a page.
        // - On `EAGAIN`, without `support.page_wait`, the read is a job for
        //   the pool: `self.blocking(file, buf, pos, false).await`. With it,
        //   wait for the page: a `KiocbOp`
        //   (`KBox::pin_init(KiocbOp::new(), GFP_KERNEL)?`, made at the
        //   first wait only: most reads never wait, and one op serves every
        //   wait of the read), then
        //   `poll_fn(|cx| op.as_mut().poll_page(cx, file, buf, pos)).await?`:
        //   `Step::Done(n)` is the answer (`after_wait`); `Step::Again`
        //   (the page was unlocked: count `counts.page_waits`) loops back to
        //   `read_nowait`; `Step::Blocked` goes to the pool.
        // - The pool counts itself (`counts.blocking`): the test requires
        //   0 there for an ext4, and more than 0 for a tmpfs.
        // Tests: "a file not in the page cache: the ... bytes read are the
        // file's", "reads waited for their pages and were woken (...), none
        // went to the blocking pool", "a cached file is read at once" and
        // "reads of 1000 bytes, across pages: the ... bytes read are the
        // file's".
        let _ = (support.page_wait, File::read_nowait, KiocbOp::poll_page);
        let _ = (Step::Again, &self.counts.at_once, &self.counts.page_waits);
        Err(ENOSYS)
    }
    // ANCHOR_END: read_at

    // ANCHOR: read_direct
    /// A direct read, if `pos` is aligned and `buf` holds at least one
    /// aligned block: as many whole blocks as fit, through a bounce buffer
    /// the read owns. `None`: not aligned, let the page cache answer.
    async fn read_direct(&self, file: &File, buf: &mut [u8], pos: u64) -> Result<Option<usize>> {
        let len = buf.len() / DIRECT_ALIGN * DIRECT_ALIGN;
        if len == 0 || pos % DIRECT_ALIGN as u64 != 0 {
            return Ok(None);
        }
        let mut op = KBox::pin_init(KiocbOp::new(), GFP_KERNEL)?;
        match poll_fn(|cx| op.as_mut().poll_direct(cx, file, len, pos)).await? {
            Step::Done(n) => {
                let data = op.bounce().get(..n).ok_or(EIO)?;
                buf.get_mut(..n).ok_or(EIO)?.copy_from_slice(data);
                Ok(Some(n))
            }
            Step::Again => Ok(None),
            Step::Blocked => self.blocking(file, buf, pos, true).await.map(Some),
        }
    }
    // ANCHOR_END: read_direct

    // ANCHOR: blocking
    /// Reads in the blocking pool: a job that owns a reference to the file
    /// and a buffer of its own (the task may be cancelled while the job
    /// sleeps: the job must not write into the task's memory), copied out
    /// when it is done.
    async fn blocking(&self, file: &File, buf: &mut [u8], pos: u64, direct: bool) -> Result<usize> {
        count(&self.counts.blocking);
        let own = KVVec::from_elem(0u8, buf.len(), GFP_KERNEL)?;
        let job = Arc::pin_init(
            pin_init!(Job {
                work <- new_work!("Job::work"),
                file: file.clone(),
                pos,
                direct,
                state <- new_spinlock!(JobState {
                    buf: own,
                    result: None,
                    waker: None,
                }),
            }),
            GFP_KERNEL,
        )?;
        // `Err` only if the job is queued already: it is new.
        let _ = self.pool.queue().enqueue(job.clone());
        poll_fn(|cx| {
            let mut state = job.state.lock();
            match state.result.take() {
                Some(Ok(n)) => {
                    let data = state.buf.get(..n).ok_or(EIO)?;
                    buf.get_mut(..n).ok_or(EIO)?.copy_from_slice(data);
                    Poll::Ready(Ok(n))
                }
                Some(Err(e)) => Poll::Ready(Err(e)),
                None => {
                    state.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
    // ANCHOR_END: blocking
}

/// A read the blocking pool does.
#[pin_data]
struct Job {
    #[pin]
    work: Work<Job>,
    file: File,
    pos: u64,
    direct: bool,
    #[pin]
    state: SpinLock<JobState>,
}

/// What the job and its task share.
struct JobState {
    /// The job's own buffer, as long as the read it does.
    buf: KVVec<u8>,
    /// The read's result, once it is done.
    result: Option<Result<usize>>,
    /// The task awaiting the job.
    waker: Option<Waker>,
}

impl_has_work! {
    impl HasWork<Self> for Job { self.work }
}

impl WorkItem for Job {
    type Pointer = Arc<Job>;

    /// Reads, sleeping as long as it takes, in a worker of the pool.
    fn run(this: Arc<Job>) {
        // The buffer leaves the lock while the read sleeps.
        let mut buf = core::mem::take(&mut this.state.lock().buf);
        let result = if this.direct {
            this.file.read_direct_blocking(&mut buf, this.pos)
        } else {
            this.file.read_at(&mut buf, this.pos)
        };
        let waker = {
            let mut state = this.state.lock();
            state.buf = buf;
            state.result = Some(result);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}
