// SPDX-License-Identifier: GPL-2.0

//! Device classes and their devices.
//!
//! A class groups devices by what they do rather than by the bus they sit on: `/sys/class/<name>/`
//! lists them. A device of a class may have no bus and no parent, which makes it a place in the
//! device tree (`/sys/devices/virtual/<class>/<name>`) for a driver to hang things on, for
//! example the mediated devices of a [`crate::mdev::Parent`].
//!
//! C header: [`include/linux/device/class.h`](srctree/include/linux/device/class.h)

use crate::{
    bindings,
    device,
    error::from_err_ptr,
    prelude::*,
    sync::Arc, //
};
use core::ptr::{
    self,
    NonNull, //
};

/// A device class that a module made.
///
/// Dropping it destroys the class; its devices hold a reference to it, so none is left.
///
/// # Invariants
///
/// `class` was created by `class_create()` and is not destroyed yet.
pub struct Class {
    class: NonNull<bindings::class>,
}

// SAFETY: The driver core may use a class from any thread, and it may be destroyed on any.
unsafe impl Send for Class {}

// SAFETY: No method changes the class through a shared reference.
unsafe impl Sync for Class {}

impl Class {
    /// Creates and registers the class `name`, `/sys/class/<name>/`.
    pub fn new(name: &'static CStr) -> Result<Arc<Self>> {
        // SAFETY: `name` is a valid string that outlives the class.
        let class = from_err_ptr(unsafe { bindings::class_create(name.as_char_ptr()) })?;
        // INVARIANT: Created above.
        let this = Self {
            class: NonNull::new(class).ok_or(EINVAL)?,
        };
        // On failure `this` is dropped, destroying the class.
        Ok(Arc::new(this, GFP_KERNEL)?)
    }
}

impl Drop for Class {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the class exists.
        unsafe { bindings::class_destroy(self.class.as_ptr()) };
    }
}

/// A device of a class, with no bus and no parent.
///
/// Dropping it unregisters the device.
///
/// # Invariants
///
/// `dev` was created by `device_create()` in `class`, and this object owns the reference that
/// `device_create()` returned.
pub struct Device {
    dev: NonNull<bindings::device>,
    _class: Arc<Class>,
}

// SAFETY: A device may be unregistered on any thread.
unsafe impl Send for Device {}

// SAFETY: Shared access only gives out a `&device::Device`, which is `Sync`.
unsafe impl Sync for Device {}

impl Device {
    /// Creates and registers the device `name` of `class`: `/sys/class/<class>/<name>`.
    pub fn new(class: Arc<Class>, name: &CStr) -> Result<Self> {
        // SAFETY: The class exists (type invariant of `Class`); the format takes one string
        // argument, `name`, which `device_create()` copies.
        let dev = from_err_ptr(unsafe {
            bindings::device_create(
                class.class.as_ptr(),
                ptr::null_mut(),
                0,
                ptr::null_mut(),
                c"%s".as_char_ptr(),
                name.as_char_ptr(),
            )
        })?;
        // INVARIANT: Created above, with its reference ours.
        Ok(Self {
            dev: NonNull::new(dev).ok_or(EINVAL)?,
            _class: class,
        })
    }
}

impl AsRef<device::Device> for Device {
    fn as_ref(&self) -> &device::Device {
        // SAFETY: By the type invariant the device is valid while `self` lives.
        unsafe { device::Device::from_raw(self.dev.as_ptr()) }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the device is registered and we own a reference.
        unsafe { bindings::device_unregister(self.dev.as_ptr()) };
    }
}
