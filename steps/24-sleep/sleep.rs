// SPDX-License-Identifier: GPL-2.0

//! A timer future: `sleep(duration).await` on a high-resolution timer.
//!
//! The task that sleeps gives its worker back. When the timer fires (in hard
//! interrupt context), its callback wakes the task's waker, which queues the
//! task's work item: the task goes on in process context.

use core::{
    future::Future,
    pin::Pin,
    task::{
        Context,
        Poll,
        Waker, //
    }, //
};
use kernel::{
    impl_has_hr_timer,
    new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        SpinLockIrq, //
    },
    time::{
        hrtimer::{
            ArcHrTimerHandle,
            HrTimer,
            HrTimerCallback,
            HrTimerCallbackContext,
            HrTimerPointer,
            HrTimerRestart,
            RelativeMode, //
        },
        Delta,
        Monotonic, //
    }, //
};

// ANCHOR: alarm
/// What the timer's callback and the sleeping task share.
struct AlarmState {
    /// Whether the timer has fired.
    fired: bool,
    /// The sleeping task's waker, once it has been polled.
    waker: Option<Waker>,
}

/// A timer that wakes a waker.
#[pin_data]
struct Alarm {
    #[pin]
    timer: HrTimer<Alarm>,
    /// Taken by the task (process context) and by the callback (hard
    /// interrupt): an irq-disabling spinlock.
    #[pin]
    state: SpinLockIrq<AlarmState>,
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Alarm {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

impl HrTimerCallback for Alarm {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        let waker = {
            let mut state = this.state.lock();
            state.fired = true;
            state.waker.take()
        };
        // Queueing a work item is allowed in interrupt context.
        if let Some(waker) = waker {
            waker.wake();
        }
        HrTimerRestart::NoRestart
    }
}
// ANCHOR_END: alarm

// ANCHOR: sleep
/// A future that is ready `duration` after it is first polled.
///
/// Dropping it cancels the timer and waits for a callback in progress, so no
/// callback runs once the future is gone.
pub(crate) struct Sleep {
    alarm: Arc<Alarm>,
    duration: Delta,
    /// The running timer; `None` until the first poll.
    timer: Option<ArcHrTimerHandle<Alarm>>,
}

/// Sleeps for `duration`; fails only if the timer cannot be allocated.
pub(crate) fn sleep(duration: Delta) -> Result<Sleep> {
    let alarm = Arc::pin_init(
        pin_init!(Alarm {
            timer <- HrTimer::new(),
            state <- new_spinlock_irq!(AlarmState {
                fired: false,
                waker: None,
            }),
        }),
        GFP_KERNEL,
    )?;
    Ok(Sleep {
        alarm,
        duration,
        timer: None,
    })
}

// ANCHOR: sleep_poll
impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // TODO (exercise 1): Ready once the timer has fired; otherwise
        // Pending, with the timer sure to wake this task. The contract:
        // - no lost wakeup: the timer's callback, under the lock of
        //   `self.alarm.state`, sets `fired` and wakes the waker stored
        //   there. A poll that returns Pending has its waker there before
        //   the callback can look: a waker stored after an unlocked check
        //   could come too late;
        // - the waker stored is this poll's (`cx.waker()`): the task may
        //   have a new one since the last poll;
        // - the timer is started once, at the first poll, for
        //   `self.duration`, and its handle kept in `self.timer` (dropping
        //   the handle cancels the timer: a `Sleep` dropped early leaves no
        //   timer behind);
        // - the state's lock guard borrows `self`: it must be gone before
        //   `self.timer` is touched.
        // You have: `self.alarm.state` (`fired`, `waker`), `cx.waker()`,
        // `Arc<Alarm>`'s `HrTimerPointer::start`, `self.timer`.
        // Tests: "16 sleepers (50 ms to 800 ms, spawned longest first) wake in
        // the order of their deadlines, none early", "on one worker they slept
        // side by side: ...", "no sleeper woke early or out of turn" and "and
        // cancels every one of them".
        self.timer = None;
        let _ = (&self.alarm, self.duration, cx);
        let _ = <Arc<Alarm> as HrTimerPointer>::start;
        Poll::Ready(())
    }
}
// ANCHOR_END: sleep_poll
// ANCHOR_END: sleep
