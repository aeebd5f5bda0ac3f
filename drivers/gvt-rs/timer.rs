// SPDX-License-Identifier: GPL-2.0

//! Timers whose handler runs in process context.
//!
//! The engines' handlers take mutexes, so an expiry cannot run them in the
//! hrtimer's hard-irq callback: a [`Timer`] is an [`HrTimer`] whose callback
//! queues a [`Work`] item, and the work item calls the target's
//! [`TimerTarget::timer_expired`].
//!
//! The target is held as an [`Arc`] from [`Timer::bind`] to
//! [`Timer::shutdown`], so a handler can never run on a target that is gone,
//! whatever the order in which the owner's fields drop: forgetting the
//! shutdown leaks the target instead. Shutdown disables before it cancels:
//! the target's handler re-arms timers (the policy work always does), so
//! after the target is taken away a start is ignored, the hrtimer is
//! cancelled and the work item disabled, and then nothing is armed, queued
//! or running.

use crate::lock_class::lock_class;
use kernel::{
    impl_has_hr_timer,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        SpinLock, //
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
    },
    workqueue::{
        self,
        impl_has_work,
        Work,
        WorkItem, //
    }, //
};

/// What a [`Timer`] calls when it expires.
pub trait TimerTarget: Send + Sync + 'static {
    /// Timer `index` (as given to [`Timer::new`]) expired. Process context:
    /// may sleep and take mutexes.
    fn timer_expired(&self, index: usize);
}

/// The part of a [`Timer`] that start, expiry and shutdown change together.
struct TimerState<T: TimerTarget> {
    /// Receives the expiries; `None` before [`Timer::bind`] and after
    /// [`Timer::shutdown`], when starts are ignored.
    target: Option<Arc<T>>,
    /// The armed hrtimer (dropping the handle cancels it).
    armed: Option<ArcHrTimerHandle<Timer<T>>>,
    /// [`Timer::shutdown`] ran: binding is refused.
    shut_down: bool,
}

/// An hrtimer whose expiry runs [`TimerTarget::timer_expired`] from a work
/// item.
#[pin_data]
pub struct Timer<T: TimerTarget> {
    #[pin]
    hrtimer: HrTimer<Self>,
    #[pin]
    work: Work<Self>,
    #[pin]
    state: SpinLock<TimerState<T>>,
    index: usize,
}

impl_has_hr_timer! {
    impl{T: TimerTarget} HasHrTimer<Self> for Timer<T> {
        mode: RelativeMode<Monotonic>, field: self.hrtimer
    }
}

impl_has_work! {
    impl{T: TimerTarget} HasWork<Self> for Timer<T> { self.work }
}

impl<T: TimerTarget> Timer<T> {
    /// A timer that calls its target with `index`; it does nothing until
    /// [`Timer::bind`] gives it a target.
    pub fn new(index: usize) -> Result<Arc<Self>> {
        // Not `new_work!` and `new_spinlock!`: this function is generic
        // (`crate::lock_class`).
        let (work_name, work_key) = lock_class!("gvt_rs::Timer::work");
        let (state_name, state_key) = lock_class!("gvt_rs::Timer::state");
        Arc::pin_init(
            pin_init!(Self {
                hrtimer <- HrTimer::new(),
                work <- Work::new(work_name, work_key),
                state <- SpinLock::new(
                    TimerState {
                        target: None,
                        armed: None,
                        shut_down: false,
                    },
                    state_name,
                    state_key,
                ),
                index,
            }),
            GFP_KERNEL,
        )
    }

    /// Makes `target` receive the expiries, until [`Timer::shutdown`]
    /// (`ESHUTDOWN` after it).
    pub fn bind(&self, target: Arc<T>) -> Result {
        let mut st = self.state.lock();
        if st.shut_down {
            return Err(ESHUTDOWN);
        }
        st.target = Some(target);
        Ok(())
    }

    /// Runs the handler `delay_ns` from now, replacing an earlier expiry.
    /// Ignored before [`Timer::bind`] and after [`Timer::shutdown`].
    pub fn start(self: &Arc<Self>, delay_ns: u64) {
        let delay = Delta::from_nanos(i64::try_from(delay_ns).unwrap_or(i64::MAX));
        let mut st = self.state.lock();
        if st.target.is_none() {
            return;
        }
        // Cancel first: dropping a handle later would cancel the new
        // expiry. The hrtimer callback only queues work and takes no lock,
        // so waiting for a running one here cannot deadlock.
        drop(st.armed.take());
        st.armed = Some(HrTimerPointer::start(self.clone(), delay));
    }

    /// Shuts the timer down for good: the target is released, later starts
    /// are ignored (also from a handler running now), a pending expiry is
    /// cancelled and a queued or running handler is waited for. Must not
    /// be called from the handler or with a lock the handler takes.
    pub fn shutdown(self: &Arc<Self>) {
        let (target, armed) = {
            let mut st = self.state.lock();
            st.shut_down = true;
            (st.target.take(), st.armed.take())
        };
        drop(armed);
        Work::<Self>::disable_sync(self);
        drop(target);
    }
}

impl<T: TimerTarget> HrTimerCallback for Timer<T> {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // Hard irq: the handler runs from the work item. If the item is
        // still queued, that run serves this expiry too.
        let _ = workqueue::system_highpri().enqueue(Arc::from(this));
        HrTimerRestart::NoRestart
    }
}

impl<T: TimerTarget> WorkItem for Timer<T> {
    type Pointer = Arc<Self>;

    fn run(this: Arc<Self>) {
        let target = this.state.lock().target.clone();
        if let Some(target) = target {
            target.timer_expired(this.index);
        }
    }
}

#[kernel::macros::kunit_tests(gvt_rs_timer)]
mod tests {
    use super::{
        Timer,
        TimerTarget, //
    };
    use core::sync::atomic::{
        AtomicBool,
        AtomicU32,
        Ordering, //
    };
    use kernel::{
        prelude::*,
        sync::Arc,
        time::{
            delay::fsleep,
            Delta,
            Instant,
            Monotonic, //
        }, //
    };

    /// Re-arms its timer from every expiry, as the policy work does.
    struct Rearming {
        timer: Arc<Timer<Rearming>>,
        expiries: AtomicU32,
        dropped: Arc<AtomicBool>,
    }

    impl TimerTarget for Rearming {
        fn timer_expired(&self, index: usize) {
            if index == 7 {
                self.expiries.fetch_add(1, Ordering::Relaxed);
            }
            self.timer.start(100_000);
        }
    }

    impl Drop for Rearming {
        fn drop(&mut self) {
            self.dropped.store(true, Ordering::Relaxed);
        }
    }

    /// Waits until `cond` holds, for up to 30 s of the clock: expiries go
    /// through a work item, which a busy host may run late, and a counted
    /// loop of sleeps would stretch with it.
    fn wait_for(cond: impl Fn() -> bool) -> bool {
        let start = Instant::<Monotonic>::now();
        while start.elapsed() < Delta::from_secs(30) {
            if cond() {
                return true;
            }
            fsleep(Delta::from_millis(1));
        }
        cond()
    }

    #[test]
    fn shutdown_stops_a_self_rearming_handler_and_releases_the_target() -> Result {
        let dropped = Arc::new(AtomicBool::new(false), GFP_KERNEL)?;
        let timer = Timer::new(7)?;
        let target = Arc::new(
            Rearming {
                timer: timer.clone(),
                expiries: AtomicU32::new(0),
                dropped: dropped.clone(),
            },
            GFP_KERNEL,
        )?;
        timer.bind(target.clone())?;
        timer.start(100_000);
        assert!(wait_for(|| target.expiries.load(Ordering::Relaxed) >= 3));
        timer.shutdown();
        // Nothing is armed or queued any more: the count stays put, also
        // through a start (from a handler that ran late).
        let n = target.expiries.load(Ordering::Relaxed);
        timer.start(0);
        fsleep(Delta::from_millis(20));
        assert_eq!(target.expiries.load(Ordering::Relaxed), n);
        assert_eq!(timer.bind(target.clone()), Err(ESHUTDOWN));
        // The timer released its reference: ours is the last.
        drop(target);
        assert!(dropped.load(Ordering::Relaxed));
        Ok(())
    }

    #[test]
    fn an_unbound_timer_ignores_starts() -> Result {
        let timer = Timer::<Rearming>::new(0)?;
        timer.start(0);
        fsleep(Delta::from_millis(5));
        timer.shutdown();
        Ok(())
    }
}
