// SPDX-License-Identifier: GPL-2.0

//! Device classes and their devices.
//!
//! A class groups devices by what they do rather than by the bus they sit on: `/sys/class/<name>/`
//! lists them. A device of a class may have no bus, which makes it a place in the device tree for
//! a driver to hang things on: under a parent device (`<parent>/<class>/<name>`), or on its own
//! (`/sys/devices/virtual/<class>/<name>`), for example the mediated devices of a
//! [`crate::mdev::Parent`].
//!
//! A class may give each of its devices files: the attribute groups of its `dev_groups`
//! ([`Class::with_groups`]), which the driver core creates before the device's `KOBJ_ADD` uevent
//! and removes when the device is unregistered. Their callbacks get the data the device was
//! created with ([`Device::with_data`]).
//!
//! C header: [`include/linux/device/class.h`](srctree/include/linux/device/class.h)

use crate::{
    bindings,
    device::{
        self,
        Normal, //
    },
    error::from_err_ptr,
    prelude::*,
    sync::Arc,
    sysfs, //
};
use core::ptr::{
    self,
    NonNull, //
};

/// A device class that a module made, whose devices' data is a `D`.
///
/// Dropping it destroys the class; its devices hold a reference to it, so none is left.
///
/// # Invariants
///
/// `class` was created by `class_create()` and is not destroyed yet; its `dev_groups` is
/// `_groups`, set before any device of the class was added.
pub struct Class<D = ()> {
    class: NonNull<bindings::class>,
    _groups: sysfs::Groups<D, Normal>,
}

// SAFETY: The driver core may use a class from any thread, and it may be destroyed on any; the
// groups are `Send`.
unsafe impl<D> Send for Class<D> {}

// SAFETY: No method changes the class through a shared reference.
unsafe impl<D> Sync for Class<D> {}

impl Class {
    /// Creates and registers the class `name`, `/sys/class/<name>/`, whose devices have no files
    /// of its own.
    pub fn new(name: &'static CStr) -> Result<Arc<Self>> {
        Self::with_groups(name, &[])
    }
}

impl<D> Class<D> {
    /// Creates and registers the class `name`, `/sys/class/<name>/`, whose devices have the files
    /// of `groups`.
    pub fn with_groups(
        name: &'static CStr,
        groups: &[&'static sysfs::AttributeGroup<D, Normal>],
    ) -> Result<Arc<Self>> {
        let groups = sysfs::Groups::new(groups)?;
        // SAFETY: `name` is a valid string that outlives the class.
        let class = from_err_ptr(unsafe { bindings::class_create(name.as_char_ptr()) })?;
        // `class_create()` returns a class or an error, never NULL.
        let class = NonNull::new(class).ok_or(EINVAL)?;
        // The driver core reads `dev_groups` when it adds or removes a device of the class; there
        // is none yet, and every `Device` holds the class, so `groups` outlives them all.
        // SAFETY: `class` is a valid class, which nothing else accesses yet.
        unsafe { (*class.as_ptr()).dev_groups = groups.as_raw() };
        // INVARIANT: Created above, with `groups`.
        let this = Self {
            class,
            _groups: groups,
        };
        // On failure `this` is dropped, destroying the class.
        Ok(Arc::new(this, GFP_KERNEL)?)
    }
}

impl<D> Drop for Class<D> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the class exists.
        unsafe { bindings::class_destroy(self.class.as_ptr()) };
    }
}

/// A device of a class, with no bus, whose data is a `D`.
///
/// Dropping it unregisters the device, removing its files (and waiting for their callbacks in
/// progress), and then drops the data.
///
/// # Invariants
///
/// `dev` was created by `device_create()` in `class`, and this object owns the reference that
/// `device_create()` returned. Its driver data points to the `D` of `data`, or is NULL if `data`
/// is `None`.
pub struct Device<D = ()> {
    dev: NonNull<bindings::device>,
    _class: Arc<Class<D>>,
    data: Option<Arc<D>>,
}

// SAFETY: A device may be unregistered on any thread; `data` is `Send` (`D: Send + Sync`).
unsafe impl<D: Send + Sync> Send for Device<D> {}

// SAFETY: Shared access only gives out a `&device::Device`, which is `Sync`, and `&D`, with
// `D: Sync`.
unsafe impl<D: Send + Sync> Sync for Device<D> {}

impl Device {
    /// Creates and registers the device `name` of `class`, with no parent and no data:
    /// `/sys/class/<class>/<name>`.
    pub fn new(class: Arc<Class>, name: &CStr) -> Result<Self> {
        Self::create(class, None, name, None)
    }
}

impl<D: Send + Sync> Device<D> {
    /// Creates and registers the device `name` of `class` under `parent` (or on its own, without
    /// one), with `data` for the callbacks of the class's files: `/sys/class/<class>/<name>`.
    pub fn with_data(
        class: Arc<Class<D>>,
        parent: Option<&device::Device>,
        name: &CStr,
        data: Arc<D>,
    ) -> Result<Self> {
        Self::create(class, parent, name, Some(data))
    }

    fn create(
        class: Arc<Class<D>>,
        parent: Option<&device::Device>,
        name: &CStr,
        data: Option<Arc<D>>,
    ) -> Result<Self> {
        let drvdata = data
            .as_ref()
            .map_or(ptr::null_mut(), |d| Arc::as_ptr(d).cast_mut().cast());
        let parent = parent.map_or(ptr::null_mut(), |p| p.as_raw());
        // SAFETY: The class exists (type invariant of `Class`); `parent` is NULL or a valid device,
        // which `device_create()` takes a reference to; `drvdata` is NULL or points to the `D` of
        // `data`, which the device keeps until it is unregistered; the format takes one string
        // argument, `name`, which `device_create()` copies.
        let raw = unsafe {
            bindings::device_create(
                class.class.as_ptr(),
                parent,
                0,
                drvdata,
                c"%s".as_char_ptr(),
                name.as_char_ptr(),
            )
        };
        let dev = from_err_ptr(raw)?;
        // INVARIANT: Created above, with its reference ours and `data` as its driver data.
        Ok(Self {
            dev: NonNull::new(dev).ok_or(EINVAL)?,
            _class: class,
            data,
        })
    }

    /// The data the device was created with.
    pub fn data(&self) -> Option<&Arc<D>> {
        self.data.as_ref()
    }
}

impl<D> AsRef<device::Device> for Device<D> {
    fn as_ref(&self) -> &device::Device {
        // SAFETY: By the type invariant the device is valid while `self` lives.
        unsafe { device::Device::from_raw(self.dev.as_ptr()) }
    }
}

impl<D> Drop for Device<D> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the device is registered and we own a reference. This
        // removes its files, waiting for their callbacks, before `data` goes with the fields.
        unsafe { bindings::device_unregister(self.dev.as_ptr()) };
    }
}

#[macros::kunit_tests(rust_kernel_class)]
mod tests {
    use super::*;
    use crate::{
        device::Device as BaseDevice,
        page::PAGE_SIZE,
        sysfs::AttributeOperations, //
    };

    struct Answer(u32);

    #[vtable]
    impl AttributeOperations<0, Normal> for Answer {
        type Data = Answer;

        fn show(a: &Answer, _dev: &BaseDevice, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
            sysfs::emit(page, fmt!("{}\n", a.0))
        }
    }

    crate::device_attribute_group! {
        static ANSWER_GROUP: AttributeGroup<Answer, Normal> = {
            operations: Answer,
            attributes: [answer: 0 => sysfs::RO],
        };
    }

    /// Whether the directory of `dev` has an entry `name`.
    fn has_entry<D>(dev: &Device<D>, name: &CStr) -> bool {
        // SAFETY: The device is registered, so its kobject has a kernfs node, which lives while
        // `dev` does; `name` is NUL-terminated; no namespace.
        let kn = unsafe {
            bindings::kernfs_find_and_get_ns(
                (*dev.dev.as_ptr()).kobj.sd,
                name.as_char_ptr(),
                ptr::null(),
            )
        };
        if kn.is_null() {
            return false;
        }
        // SAFETY: `kernfs_find_and_get_ns()` took a reference for us.
        unsafe { bindings::kernfs_put(kn) };
        true
    }

    #[test]
    fn devices_have_the_class_groups_and_their_data() -> Result {
        let class = Class::with_groups(c"rust_kernel_class", &[&ANSWER_GROUP])?;
        let dev = Device::with_data(class, None, c"answer0", Arc::new(Answer(42), GFP_KERNEL)?)?;
        assert!(has_entry(&dev, c"answer"));
        assert_eq!(dev.data().map(|a| a.0), Some(42));
        // SAFETY: The device is registered.
        let drvdata = unsafe { bindings::dev_get_drvdata(dev.dev.as_ptr()) };
        assert_eq!(
            drvdata.cast_const(),
            dev.data()
                .map_or(ptr::null(), |a| Arc::as_ptr(a).cast::<c_void>())
        );
        let plain = Device::new(Class::new(c"rust_kernel_class_plain")?, c"plain0")?;
        assert!(!has_entry(&plain, c"answer"));
        Ok(())
    }
}
