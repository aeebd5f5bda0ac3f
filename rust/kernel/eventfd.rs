// SPDX-License-Identifier: GPL-2.0

//! Eventfd contexts.
//!
//! A driver that notifies user space through an eventfd (VFIO interrupt triggers, KVM irqfds)
//! gets the eventfd's file descriptor from user space, takes a reference to its context and
//! signals it later, from any context.
//!
//! C header: [`include/linux/eventfd.h`](srctree/include/linux/eventfd.h)

use crate::{
    bindings,
    error::from_err_ptr,
    prelude::*, //
};
use core::ptr::NonNull;

/// A reference to the context of an eventfd.
///
/// The eventfd's counter lives as long as this reference, even after user space closed the file
/// descriptor; dropping it releases the reference.
///
/// # Invariants
///
/// `ctx` points to a valid `struct eventfd_ctx` on which this object owns a reference.
pub struct EventFd {
    ctx: NonNull<bindings::eventfd_ctx>,
}

// SAFETY: The reference may be released on any thread.
unsafe impl Send for EventFd {}

// SAFETY: `eventfd_signal()` may be called concurrently, from any context.
unsafe impl Sync for EventFd {}

impl EventFd {
    /// Takes a reference to the context of the eventfd that user space passed as `fd`.
    ///
    /// Fails with `EBADF` if `fd` is not an open file descriptor of the calling process and with
    /// `EINVAL` if it is not an eventfd.
    pub fn from_fd(fd: i32) -> Result<Self> {
        // SAFETY: `eventfd_ctx_fdget()` accepts any integer.
        let ctx = from_err_ptr(unsafe { bindings::eventfd_ctx_fdget(fd) })?;
        // INVARIANT: `eventfd_ctx_fdget()` returned a context with a reference taken for us.
        Ok(Self {
            ctx: NonNull::new(ctx).ok_or(EINVAL)?,
        })
    }

    /// Adds one to the eventfd's counter and wakes up its waiters.
    pub fn signal(&self) {
        // SAFETY: `ctx` is valid by the type invariant; a mask of 0 is what `eventfd_signal()`
        // passes.
        unsafe { bindings::eventfd_signal_mask(self.ctx.as_ptr(), 0) };
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own a reference to a valid context.
        unsafe { bindings::eventfd_ctx_put(self.ctx.as_ptr()) };
    }
}
