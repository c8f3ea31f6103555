// SPDX-License-Identifier: GPL-2.0

//! A minimal async executor: futures run as work items on a workqueue.
//!
//! [`Executor::spawn`] boxes a future into a [`Task`]. A task is a work item:
//! running it polls the future once. When the future returns
//! `Poll::Pending`, the task simply returns; whoever holds the task's
//! [`Waker`] (a timer, a socket, another task) queues it again later. So a
//! sleeping task occupies no thread at all, and a handful of workers can
//! serve thousands of tasks.
//!
//! [`Executor::shutdown`] cancels every task that is left (dropping its
//! future, which drops the wakers it handed out) and waits for the workers,
//! so no module code runs after the module is gone.

use crate::{
    queue::OwnedQueue,
    task_state::TaskState,
    waker::{
        self,
        Wake, //
    }, //
};
use core::{
    future::Future,
    pin::Pin,
    sync::atomic::{
        AtomicUsize,
        Ordering, //
    },
    task::{
        Context,
        Poll,
        Waker, //
    }, //
};
use kernel::{
    impl_has_work,
    new_mutex,
    new_spinlock,
    new_work,
    prelude::*,
    sync::{
        Arc,
        Mutex,
        SpinLock, //
    },
    workqueue::{
        Work,
        WorkItem, //
    }, //
};

/// A future the executor can own: boxed, pinned, sendable to any worker.
type BoxFuture = Pin<KBox<dyn Future<Output = ()> + Send>>;

// ANCHOR: task
/// One spawned future and what it needs to run.
#[pin_data]
pub(crate) struct Task {
    /// The work item that polls this task.
    #[pin]
    work: Work<Task>,
    /// Whether the task is queued, running, idle or done.
    state: TaskState,
    /// The future; `None` once it finished or was cancelled, so that it is
    /// dropped right then, in process context.
    #[pin]
    future: Mutex<Option<BoxFuture>>,
    /// The executor, for queueing and for unregistering.
    executor: Arc<Executor>,
    /// Where the task is in the executor's `live` list; only read or written
    /// under the executor's registry lock.
    index: AtomicUsize,
}

impl_has_work! {
    impl HasWork<Self> for Task { self.work }
}
// ANCHOR_END: task

// ANCHOR: run
impl WorkItem for Task {
    type Pointer = Arc<Task>;

    /// Polls the future once.
    fn run(this: Arc<Task>) {
        // TODO (exercise 2): Poll the task's future once, with a waker that
        // queues the task again (about 20 lines). The contract:
        // - a task cancelled while it was queued (`this.state.start()` says
        //   so) is not polled;
        // - the future is polled with `this.future`'s lock held, in a
        //   `Context` whose waker is this task's (`waker::new`); a future
        //   already gone (`None`) counts as ready;
        // - a ready future is dropped here, in process context, not by
        //   whoever drops the last waker (maybe an interrupt handler);
        // - every poll that started ends with `this.state.end(ready)`, the
        //   lock released; when it says a wake came during the poll, the
        //   task is queued again (`this.executor.enqueue`), or that wake is
        //   lost;
        // - a task whose future is ready leaves the executor
        //   (`this.executor.unregister`).
        // You have: `TaskState::start` and `end`, `waker::new`,
        // `Context::from_waker`, `Future::poll`, `Executor::enqueue` and
        // `unregister`. Match on `&mut *future`, not `future.as_mut()`: the
        // lock guard has an `as_mut` of its own.
        // Tests: "10000 short tasks run, each yields once, and one task joins
        // them all" (the stage stops there while it fails) and the checks after
        // it.
        let _ = (this, waker::new::<Task>, Context::from_waker);
        let _ = (TaskState::start, TaskState::end, Executor::unregister);
    }
}
// ANCHOR_END: run

impl Task {
    // ANCHOR: wake
    /// What every waker of the task does: queue it, unless it is queued or
    /// running already (then it runs once more) or done.
    pub(crate) fn wake(this: &Arc<Task>) {
        if this.state.wake() {
            this.executor.enqueue(this.clone());
        }
    }
    // ANCHOR_END: wake

    /// Cancels the task: it is never polled again, and its future is dropped
    /// here (waiting for a poll in progress to end first).
    fn cancel(&self) {
        self.state.cancel();
        let future = self.future.lock().take();
        drop(future);
    }
}

// ANCHOR: wake_impl
/// A task's wakers (`waker.rs`) call this: the executor's side of the
/// `Wake` trait.
impl Wake for Task {
    fn wake_by_ref(self: &Arc<Self>) {
        Task::wake(self);
    }
}
// ANCHOR_END: wake_impl

// ANCHOR: executor
/// Tasks the executor knows about.
struct Registry {
    /// Set by [`Executor::shutdown`]: no task is spawned after it.
    stopping: bool,
    /// Every task that has not finished: what `shutdown` must cancel.
    live: KVec<Arc<Task>>,
    /// Tasks spawned since the executor was created.
    spawned: u64,
}

/// Runs futures on a workqueue of its own.
#[pin_data]
pub(crate) struct Executor {
    /// The workers.
    queue: OwnedQueue,
    /// The live tasks and the stop flag.
    #[pin]
    registry: Mutex<Registry>,
}
// ANCHOR_END: executor

impl Executor {
    /// An executor whose tasks run on at most `workers` threads at once.
    pub(crate) fn new(name: &'static CStr, workers: u32) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                queue: OwnedQueue::new(name, workers)?,
                registry <- new_mutex!(Registry {
                    stopping: false,
                    live: KVec::new(),
                    spawned: 0,
                }),
            }),
            GFP_KERNEL,
        )
    }

    // ANCHOR: spawn
    /// Runs `future` on the executor, and returns a handle to await its
    /// output. Fails with `ESHUTDOWN` once the executor is shutting down.
    ///
    /// The future must be `Send` (it moves between worker threads) and
    /// `'static` (it must not borrow anything that could go away before it
    /// finishes).
    pub(crate) fn spawn<F>(self: &Arc<Self>, future: F) -> Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let join = Arc::pin_init(
            pin_init!(JoinState {
                inner <- new_spinlock!(JoinInner {
                    output: None,
                    waker: None,
                }),
            }),
            GFP_KERNEL,
        )?;
        let done = join.clone();
        let body: KBox<dyn Future<Output = ()> + Send> = KBox::new(
            async move {
                let output = future.await;
                done.finish(output);
            },
            GFP_KERNEL,
        )?;
        let task = Arc::pin_init(
            pin_init!(Task {
                work <- new_work!("Task::work"),
                state: TaskState::new_queued(),
                future <- new_mutex!(Some(Pin::from(body))),
                executor: self.clone(),
                index: AtomicUsize::new(0),
            }),
            GFP_KERNEL,
        )?;
        {
            // Register and queue under the lock `shutdown` takes to set
            // `stopping`: either it sees the task in `live`, or we see
            // `stopping` and never queue it.
            let mut registry = self.registry.lock();
            if registry.stopping {
                return Err(ESHUTDOWN);
            }
            task.index.store(registry.live.len(), Ordering::Relaxed);
            registry.live.push(task.clone(), GFP_KERNEL)?;
            registry.spawned += 1;
        }
        self.enqueue(task);
        Ok(JoinHandle { state: join })
    }
    // ANCHOR_END: spawn

    /// Queues a task's work item.
    fn enqueue(&self, task: Arc<Task>) {
        // `Err` gives the task back when its work item is queued already.
        // The task state makes that impossible (one queueing per `QUEUED`),
        // and it would be harmless: the queued item polls it.
        let _ = self.queue.queue().enqueue(task);
    }

    /// Forgets a finished task.
    fn unregister(&self, task: &Arc<Task>) {
        let mut registry = self.registry.lock();
        let i = task.index.load(Ordering::Relaxed);
        let live = &mut registry.live;
        if !live.get(i).is_some_and(|t| Arc::ptr_eq(t, task)) {
            return; // `shutdown` took the list already.
        }
        // Swap the last task into slot `i`, and tell it its new place.
        let last = live.len() - 1;
        live.as_mut_slice().swap(i, last);
        let _ = live.pop();
        if let Some(moved) = live.get(i) {
            moved.index.store(i, Ordering::Relaxed);
        }
    }

    // ANCHOR: shutdown
    /// Cancels every task that is left and waits until no worker runs one.
    /// Returns the number of tasks it cancelled.
    ///
    /// After this, no task is spawned or polled again, and no waker is left:
    /// every waker belongs to a task's future or is a queued work item, and
    /// the futures are dropped here, the work items are flushed.
    pub(crate) fn shutdown(&self) -> usize {
        let live = {
            let mut registry = self.registry.lock();
            registry.stopping = true;
            core::mem::take(&mut registry.live)
        };
        for task in live.iter() {
            task.cancel();
        }
        let cancelled = live.len();
        drop(live);
        self.queue.flush();
        cancelled
    }
    // ANCHOR_END: shutdown

    /// Tasks spawned since the executor was created.
    pub(crate) fn spawned(&self) -> u64 {
        self.registry.lock().spawned
    }
}

// ANCHOR: join
/// What a task leaves for its [`JoinHandle`].
struct JoinInner<T> {
    /// The future's output, once it finished.
    output: Option<T>,
    /// Who awaits the output.
    waker: Option<Waker>,
}

// The output is only ever moved as a whole, never pinned: the lock guard may
// hand out `&mut JoinInner` whatever `T` is.
impl<T> Unpin for JoinInner<T> {}

/// Shared by a task and its [`JoinHandle`].
#[pin_data]
struct JoinState<T> {
    #[pin]
    inner: SpinLock<JoinInner<T>>,
}

impl<T> JoinState<T> {
    /// Stores the output and wakes whoever awaits it.
    fn finish(&self, output: T) {
        let waker = {
            let mut inner = self.inner.lock();
            inner.output = Some(output);
            inner.waker.take()
        };
        // Wake outside the lock: the woken task may run at once, elsewhere.
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Awaits a spawned task's output. Dropping it detaches the task, which
/// goes on running.
pub(crate) struct JoinHandle<T> {
    state: Arc<JoinState<T>>,
}

impl<T> Future for JoinHandle<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut inner = self.state.inner.lock();
        match inner.output.take() {
            Some(output) => Poll::Ready(output),
            None => {
                // Register first, under the lock `finish` takes: `finish`
                // either ran already (we saw the output) or will see this
                // waker. No wake can be lost in between.
                inner.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
// ANCHOR_END: join

// ANCHOR: yield
/// A future that gives the worker to other tasks once: it wakes its own task
/// and returns `Pending`, so the task goes to the back of the queue.
pub(crate) fn yield_now() -> impl Future<Output = ()> {
    let mut yielded = false;
    core::future::poll_fn(move |cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}
// ANCHOR_END: yield
