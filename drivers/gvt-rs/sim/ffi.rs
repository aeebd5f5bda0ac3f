// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C glue (`glue.c`, `gvt_sim.h`) and thin safe wrappers.

use kernel::ffi::{c_char, c_uint, c_ulong, c_void};

/// `struct gvt_sim_parent`: the mdev parent device, owned by the glue.
#[repr(C)]
pub struct GvtSimParent {
    _opaque: [u8; 0],
}

/// `struct gvt_sim_vdev`: the VFIO device of one vGPU, owned by the VFIO core.
#[repr(C)]
pub struct GvtSimVdev {
    _opaque: [u8; 0],
}

/// `struct gvt_sim_timer`: an hrtimer whose expiry runs a work item.
#[repr(C)]
pub struct GvtSimTimer {
    _opaque: [u8; 0],
}

/// Callback of a [`GvtSimTimer`], run in process context.
pub type TimerFn = unsafe extern "C" fn(ctx: *mut c_void, data: c_ulong);

extern "C" {
    /// Registers the mdev driver, class, parent device and types.
    pub fn gvt_sim_parent_register(
        gpu: *mut c_void,
        name: *const c_char,
        type_names: *const *const c_char,
        pretty_names: *const *const c_char,
        nr_types: c_uint,
        out: *mut *mut GvtSimParent,
    ) -> i32;
    /// Unregisters everything `gvt_sim_parent_register` registered; removes
    /// every vGPU first.
    pub fn gvt_sim_parent_unregister(p: *mut GvtSimParent);
    /// Allocates a timer calling `f(ctx, data)` from a work item.
    pub fn gvt_sim_timer_new(f: TimerFn, ctx: *mut c_void, data: c_ulong) -> *mut GvtSimTimer;
    /// Sets the context passed to the callback (before the first use).
    pub fn gvt_sim_timer_bind(t: *mut GvtSimTimer, ctx: *mut c_void);
    /// (Re)arms the timer `delay_ns` from now.
    pub fn gvt_sim_timer_start(t: *mut GvtSimTimer, delay_ns: u64);
    /// Cancels the timer and waits for a running callback.
    pub fn gvt_sim_timer_cancel(t: *mut GvtSimTimer);
    /// Cancels and frees the timer (NULL is ignored).
    pub fn gvt_sim_timer_free(t: *mut GvtSimTimer);
    /// Signals the vGPU's interrupt eventfd, if one is set.
    pub fn gvt_sim_vdev_signal(v: *mut GvtSimVdev);
    /// CPU time (user + system) of the process that opened the vGPU, ns.
    pub fn gvt_sim_vdev_cpu_ns(v: *mut GvtSimVdev) -> u64;
}

/// An owned [`GvtSimTimer`].
///
/// # Invariants
///
/// `ptr` came from `gvt_sim_timer_new` and is freed only by `drop`.
pub struct Timer {
    ptr: *mut GvtSimTimer,
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
        let ptr = unsafe { gvt_sim_timer_new(f, core::ptr::null_mut(), data) };
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
        unsafe { gvt_sim_timer_bind(self.ptr, ctx) }
    }

    /// Runs the callback `delay_ns` from now (replacing an earlier expiry).
    pub fn start(&self, delay_ns: u64) {
        // SAFETY: By the type invariant `ptr` is a live timer.
        unsafe { gvt_sim_timer_start(self.ptr, delay_ns) }
    }

    /// Cancels a pending expiry and waits for a running callback. Must not
    /// be called with a lock the callback takes.
    pub fn cancel(&self) {
        // SAFETY: By the type invariant `ptr` is a live timer.
        unsafe { gvt_sim_timer_cancel(self.ptr) }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is live and owned by us.
        unsafe { gvt_sim_timer_free(self.ptr) }
    }
}
