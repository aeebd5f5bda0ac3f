// SPDX-License-Identifier: GPL-2.0

//! Timers whose callback runs in process context (`timer.c`, `timer.h`):
//! an hrtimer queues a work item that calls back into Rust.

use kernel::ffi::{c_ulong, c_void};

/// `struct gvt_rs_timer`: an hrtimer whose expiry runs a work item.
#[repr(C)]
pub struct GvtRsTimer {
    _opaque: [u8; 0],
}

/// Callback of a [`Timer`], run in process context.
pub type TimerFn = unsafe extern "C" fn(ctx: *mut c_void, data: c_ulong);

extern "C" {
    /// Allocates a timer calling `f(ctx, data)` from a work item.
    fn gvt_rs_timer_new(f: TimerFn, ctx: *mut c_void, data: c_ulong) -> *mut GvtRsTimer;
    /// Sets the context passed to the callback (before the first use).
    fn gvt_rs_timer_bind(t: *mut GvtRsTimer, ctx: *mut c_void);
    /// (Re)arms the timer `delay_ns` from now.
    fn gvt_rs_timer_start(t: *mut GvtRsTimer, delay_ns: u64);
    /// Disables the timer for good, then cancels it and waits for a
    /// running callback.
    fn gvt_rs_timer_shutdown(t: *mut GvtRsTimer);
    /// Cancels and frees the timer (NULL is ignored).
    fn gvt_rs_timer_free(t: *mut GvtRsTimer);
}

/// An owned [`GvtRsTimer`].
///
/// # Invariants
///
/// `ptr` came from `gvt_rs_timer_new` and is freed only by `drop`.
pub struct Timer {
    ptr: *mut GvtRsTimer,
}

// SAFETY: The C timer may be armed, kicked and cancelled from any thread.
unsafe impl Send for Timer {}
// SAFETY: All operations on the C timer are thread-safe (hrtimer and
// workqueue functions).
unsafe impl Sync for Timer {}

impl Timer {
    /// A timer calling `f(ctx, data)` in process context, with the context
    /// set later by [`Timer::bind`]; it must not be armed before that.
    pub fn new(f: TimerFn, data: usize) -> Result<Self, kernel::error::Error> {
        let data = c_ulong::try_from(data).map_err(|_| kernel::error::code::EINVAL)?;
        // SAFETY: Plain allocation; the callback is not run before `bind`
        // because nobody arms the timer before.
        let ptr = unsafe { gvt_rs_timer_new(f, core::ptr::null_mut(), data) };
        if ptr.is_null() {
            return Err(kernel::error::code::ENOMEM);
        }
        // INVARIANT: `ptr` is a new timer.
        Ok(Self { ptr })
    }

    /// Sets the context passed to the callback.
    ///
    /// # Safety
    ///
    /// The timer must not be armed yet, and `ctx` must stay valid for the
    /// callback until the timer is dropped.
    pub unsafe fn bind(&self, ctx: *mut c_void) {
        // SAFETY: By the type invariant `ptr` is live; nothing runs the
        // callback concurrently (the caller's guarantee).
        unsafe { gvt_rs_timer_bind(self.ptr, ctx) }
    }

    /// Runs the callback `delay_ns` from now (replacing an earlier expiry).
    pub fn start(&self, delay_ns: u64) {
        // SAFETY: By the type invariant `ptr` is a live timer.
        unsafe { gvt_rs_timer_start(self.ptr, delay_ns) }
    }

    /// Shuts the timer down for good: later starts are ignored (also from
    /// a callback running now), a pending expiry is cancelled and a running
    /// callback waited for. Must not be called with a lock the callback
    /// takes.
    pub fn shutdown(&self) {
        // SAFETY: By the type invariant `ptr` is a live timer.
        unsafe { gvt_rs_timer_shutdown(self.ptr) }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is live and owned by us.
        unsafe { gvt_rs_timer_free(self.ptr) }
    }
}
