// SPDX-License-Identifier: GPL-2.0

//! Mediated devices (mdev).
//!
//! A parent device (a GPU, a PCI function, any `struct device`) offers types of mediated
//! devices under `mdev_supported_types/` in sysfs; an administrator creates a device of a type by
//! writing a UUID to the type's `create` file, and the mdev core then probes the parent's mdev
//! driver for it. A driver implements [`Driver`], registers it with [`DriverRegistration`] and
//! registers each parent with [`Parent`]; its devices are usually VFIO devices
//! ([`crate::vfio`]).
//!
//! The mdev core is a module (`CONFIG_VFIO_MDEV`, selected by the drivers that use it) while
//! this crate is built into the kernel, so everything here that calls into it is generic over the
//! driver and therefore compiled into the driver's module.
//!
//! C header: [`include/linux/mdev.h`](srctree/include/linux/mdev.h)

use crate::{
    bindings,
    device,
    error::{
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    module::this_module,
    page::PAGE_SIZE,
    prelude::*,
    sync::{
        aref::ARef,
        Arc, //
    },
    sysfs,
    types::Opaque, //
};
use core::marker::PhantomData;

/// A mediated device, as its driver sees it in [`Driver::probe`] and [`Driver::remove`].
///
/// # Invariants
///
/// `self.0` is a valid `struct mdev_device`.
#[repr(transparent)]
pub struct Device(Opaque<bindings::mdev_device>);

impl Device {
    /// # Safety
    ///
    /// `ptr` is a valid `struct mdev_device` for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::mdev_device) -> &'a Self {
        // SAFETY: `Device` is a transparent wrapper of `struct mdev_device`.
        unsafe { &*ptr.cast() }
    }

    fn as_raw(&self) -> *mut bindings::mdev_device {
        self.0.get()
    }
}

impl AsRef<device::Device> for Device {
    fn as_ref(&self) -> &device::Device {
        // SAFETY: By the type invariant `dev` is a valid `struct device`, which lives as long as
        // `self`.
        unsafe { device::Device::from_raw(&raw mut (*self.as_raw()).dev) }
    }
}

/// One type of mediated device that a parent offers.
#[derive(Clone, Copy)]
pub struct Type {
    /// The name of its sysfs directory, after the driver's name and a dash.
    pub sysfs_name: &'static CStr,
    /// Its `name` attribute.
    pub pretty_name: &'static CStr,
}

/// An mdev driver: what the mdev core calls for the parents and devices of the driver.
///
/// Types are identified by their index in the slice given to [`Parent::new`].
#[vtable]
pub trait Driver: Sized + 'static {
    /// The data of a parent device.
    type ParentData: Send + Sync;

    /// What [`Driver::probe`] makes of a device, kept until [`Driver::remove`].
    type Data: Send;

    /// The driver's name, the prefix of its types' directories.
    const NAME: &'static CStr;

    /// The `device_api` attribute of the types, for example `"vfio-pci"`.
    const DEVICE_API: &'static CStr;

    /// The attribute groups of the driver's devices (`device_driver.dev_groups`): the driver
    /// core creates their files once [`Driver::probe`] returned and removes them before
    /// [`Driver::remove`], and their callbacks get the device's [`Driver::Data`].
    const DEVICE_GROUPS: &'static [&'static sysfs::AttributeGroup<Self::Data>] = &[];

    /// A device of type `ty` of `parent` was created.
    fn probe(dev: &Device, parent: &Self::ParentData, ty: usize) -> Result<Self::Data>;

    /// The device is being removed.
    fn remove(_dev: &Device, data: Self::Data) {
        drop(data);
    }

    /// The `available_instances` attribute of type `ty`.
    fn available(_parent: &Self::ParentData, _ty: usize) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The `description` attribute of type `ty`, written into `page`; returns its length.
    fn description(
        _parent: &Self::ParentData,
        _ty: usize,
        _page: &mut [u8; PAGE_SIZE],
    ) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The registration of an mdev driver.
///
/// # Invariants
///
/// `drv` is registered with `mdev_register_driver()` until the registration is dropped, with
/// `groups` as its `dev_groups`.
#[pin_data(PinnedDrop)]
pub struct DriverRegistration<T: Driver> {
    #[pin]
    drv: Opaque<bindings::mdev_driver>,
    groups: sysfs::Groups<T::Data>,
    _p: PhantomData<T>,
}

// SAFETY: The mdev core may use the driver from any thread, and it may be unregistered on any.
unsafe impl<T: Driver> Send for DriverRegistration<T> {}

// SAFETY: No method changes the registration through a shared reference.
unsafe impl<T: Driver> Sync for DriverRegistration<T> {}

impl<T: Driver> DriverRegistration<T> {
    /// Registers the mdev driver.
    pub fn new() -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(move || {
            let groups = sysfs::Groups::new(T::DEVICE_GROUPS)?;
            // The array is the vector's buffer, which does not move with `groups`.
            let dev_groups = groups.as_raw();
            Ok(try_pin_init!(Self {
                groups,
                // Last: `groups` is in place when the driver appears.
                drv <- Opaque::try_ffi_init(move |slot: *mut bindings::mdev_driver| {
                    let mut drv: bindings::mdev_driver = pin_init::zeroed();
                    drv.device_api = T::DEVICE_API.as_char_ptr();
                    drv.probe = Some(Adapter::<T>::probe);
                    drv.remove = Some(Adapter::<T>::remove);
                    if T::HAS_AVAILABLE {
                        drv.get_available = Some(Adapter::<T>::get_available);
                    }
                    if T::HAS_DESCRIPTION {
                        drv.show_description = Some(Adapter::<T>::show_description);
                    }
                    drv.driver.name = T::NAME.as_char_ptr();
                    drv.driver.owner = this_module::<T::OwnerModule>().as_ptr();
                    // The groups' callbacks read the driver data as a `T::Data`: `probe`
                    // sets it before it returns, which is before the driver core adds the
                    // groups, and `remove` takes it back, after the driver core removed them.
                    drv.driver.dev_groups = dev_groups;
                    // SAFETY: `slot` is valid for writes.
                    unsafe { slot.write(drv) };
                    // INVARIANT: Registered if this succeeds, with `groups`.
                    // SAFETY: `slot` is a filled-in driver that stays pinned until `drop`
                    // unregisters it; `groups` lives as long.
                    to_result(unsafe { bindings::mdev_register_driver(slot) })
                }),
                _p: PhantomData,
            }))
        })
    }
}

#[pinned_drop]
impl<T: Driver> PinnedDrop for DriverRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered (type invariant); every [`Parent`] holds a reference to us, so none
        // is left.
        unsafe { bindings::mdev_unregister_driver(self.drv.get()) };
    }
}

/// A type of a parent, as the mdev core sees it.
#[repr(C)]
struct TypeSlot {
    mtype: Opaque<bindings::mdev_type>,
    index: usize,
}

/// A registered mdev parent: a device offering the driver's types, with the driver's data.
///
/// Dropping it removes the parent's mediated devices and its types, and waits until the types
/// are released: a mediated device holds its type until the device is released, and the
/// release of either uses the parent, its types and the driver. A reference to a device that
/// the driver still holds therefore delays the drop until it goes.
///
/// # Invariants
///
/// `parent` is registered with `mdev_register_parent()`, with `dev`, the driver of `driver` and
/// `type_ptrs`, which point to the `mtype` fields of `types`, until the parent is dropped; the
/// mdev core no longer uses them once `mdev_unregister_parent()` returned.
#[pin_data(PinnedDrop)]
pub struct Parent<T: Driver> {
    #[pin]
    parent: Opaque<bindings::mdev_parent>,
    types: KVec<TypeSlot>,
    type_ptrs: KVec<*mut bindings::mdev_type>,
    dev: ARef<device::Device>,
    driver: Arc<DriverRegistration<T>>,
    data: T::ParentData,
}

// SAFETY: The raw pointers point into `types`, which moves with the parent; the rest is `Send`.
unsafe impl<T: Driver> Send for Parent<T> {}

// SAFETY: Shared access only reads `data`, which is `Sync`.
unsafe impl<T: Driver> Sync for Parent<T> {}

impl<T: Driver> Parent<T> {
    /// Registers `dev` as a parent offering `types` to `driver`, with the driver's `data`.
    pub fn new(
        driver: Arc<DriverRegistration<T>>,
        dev: &device::Device,
        types: &[Type],
        data: T::ParentData,
    ) -> Result<Pin<KBox<Self>>> {
        let n = u32::try_from(types.len()).map_err(|_| EINVAL)?;
        let mut slots = KVec::with_capacity(types.len(), GFP_KERNEL)?;
        for (index, t) in types.iter().enumerate() {
            let mut mtype: bindings::mdev_type = pin_init::zeroed();
            mtype.sysfs_name = t.sysfs_name.as_char_ptr();
            mtype.pretty_name = t.pretty_name.as_char_ptr();
            slots.push(
                TypeSlot {
                    mtype: Opaque::new(mtype),
                    index,
                },
                GFP_KERNEL,
            )?;
        }
        // The vector's buffer does not move when the vector does.
        let mut type_ptrs = KVec::with_capacity(types.len(), GFP_KERNEL)?;
        for slot in slots.iter() {
            type_ptrs.push(slot.mtype.get(), GFP_KERNEL)?;
        }
        let ptrs = type_ptrs.as_mut_ptr();
        let drv = driver.drv.get();
        let raw_dev = dev.as_raw();
        KBox::pin_init(
            try_pin_init!(Self {
                types: slots,
                type_ptrs,
                dev: dev.into(),
                driver,
                data,
                // Last: the other fields are ready when the parent appears.
                parent <- Opaque::try_ffi_init(move |slot: *mut bindings::mdev_parent| {
                    // INVARIANT: Registered if this succeeds.
                    // SAFETY: `slot` stays pinned until `drop` unregisters it; the device, the
                    // driver and the types outlive it as the other fields of `self` (on failure,
                    // `mdev_register_parent()` released the types it added before it returns).
                    to_result(unsafe {
                        bindings::mdev_register_parent(slot, raw_dev, drv, ptrs, n)
                    })
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// The driver's data of this parent.
    pub fn data(&self) -> &T::ParentData {
        &self.data
    }

    /// The parent device.
    pub fn device(&self) -> &device::Device {
        &self.dev
    }
}

#[pinned_drop]
impl<T: Driver> PinnedDrop for Parent<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered (type invariant). This removes the devices first and returns once
        // the types are released, so the fields may go after it.
        unsafe { bindings::mdev_unregister_parent(self.parent.get()) };
    }
}

struct Adapter<T: Driver>(PhantomData<T>);

impl<T: Driver> Adapter<T> {
    /// # Safety
    ///
    /// `mtype` is a type of a live `Parent<T>`.
    unsafe fn type_of<'a>(mtype: *mut bindings::mdev_type) -> (&'a Parent<T>, usize) {
        // SAFETY: `mtype` is the `mtype` field of a `TypeSlot`, and `parent` (set by the mdev
        // core) the `parent` field of a `Parent<T>`.
        unsafe {
            let slot = crate::container_of!(Opaque::cast_from(mtype), TypeSlot, mtype);
            let parent =
                crate::container_of!(Opaque::cast_from((*mtype).parent), Parent<T>, parent);
            (&*parent, (*slot).index)
        }
    }

    /// `mdev_driver::probe`.
    ///
    /// # Safety
    ///
    /// `mdev` is a device being probed, of a type of a live `Parent<T>`.
    unsafe extern "C" fn probe(mdev: *mut bindings::mdev_device) -> c_int {
        // SAFETY: The mdev core probes a live device of a type of a live parent (it holds the
        // parent's `unreg_sem`).
        let (parent, ty) = unsafe { Self::type_of((*mdev).type_) };
        // SAFETY: `mdev` is valid for the call.
        let dev = unsafe { Device::from_raw(mdev) };
        // First: a device that was probed must be removed, not dropped.
        let slot = match KBox::<T::Data>::new_uninit(GFP_KERNEL) {
            Ok(slot) => slot,
            Err(e) => return Error::from(e).to_errno(),
        };
        match T::probe(dev, &parent.data, ty) {
            Ok(data) => {
                let data = KBox::into_raw(KBox::write(slot, data));
                // SAFETY: The device's driver data is ours while it is bound; `remove` takes it
                // back.
                unsafe { bindings::dev_set_drvdata(&raw mut (*mdev).dev, data.cast()) };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `mdev_driver::remove`.
    ///
    /// # Safety
    ///
    /// `mdev` is a device that `probe` bound.
    unsafe extern "C" fn remove(mdev: *mut bindings::mdev_device) {
        // SAFETY: `mdev` is a bound device of ours, whose driver data `probe` set.
        let data = unsafe { bindings::dev_get_drvdata(&raw mut (*mdev).dev) };
        // SAFETY: `probe` made `data` with `KBox::into_raw`; it is not used after this.
        let data = unsafe { KBox::from_raw(data.cast::<T::Data>()) };
        // SAFETY: `mdev` is valid for the call.
        let dev = unsafe { Device::from_raw(mdev) };
        T::remove(dev, KBox::into_inner(data));
    }

    /// `mdev_driver::get_available`.
    ///
    /// # Safety
    ///
    /// `mtype` is a type of a live `Parent<T>`.
    unsafe extern "C" fn get_available(mtype: *mut bindings::mdev_type) -> c_uint {
        // SAFETY: The mdev core calls this for a type of a live parent (sysfs removes the
        // attribute, waiting for readers, before the parent goes).
        let (parent, ty) = unsafe { Self::type_of(mtype) };
        T::available(&parent.data, ty)
    }

    /// `mdev_driver::show_description`.
    ///
    /// # Safety
    ///
    /// `mtype` is a type of a live `Parent<T>`; `buf` is a page.
    unsafe extern "C" fn show_description(
        mtype: *mut bindings::mdev_type,
        buf: *mut c_char,
    ) -> isize {
        // SAFETY: As for `get_available`.
        let (parent, ty) = unsafe { Self::type_of(mtype) };
        // SAFETY: sysfs passes a zeroed page, ours for the call.
        let page = unsafe { &mut *buf.cast::<[u8; PAGE_SIZE]>() };
        match T::description(&parent.data, ty, page) {
            Ok(n) => n as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}
