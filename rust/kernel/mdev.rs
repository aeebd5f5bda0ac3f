// SPDX-License-Identifier: GPL-2.0

//! Mediated devices (mdev).
//!
//! A parent device (a GPU, a PCI function, any `struct device`) offers types of mediated
//! devices under `mdev_supported_types/` in sysfs; an administrator creates a device of a type by
//! writing a UUID to the type's `create` file, and the mdev core then probes the parent's mdev
//! driver for it. The devices are on the `mdev` bus, so a driver of them is a bus driver like
//! any other: it implements [`Driver`] and is registered as a
//! [`driver::Registration<Adapter<T>>`](driver::Registration), its [`Driver::probe`] gets a
//! [`Device<Core>`](device::Core) and returns an initializer of the device's data, which the bus
//! keeps as the device's driver data until [`Driver::unbind`] returned. Each parent is
//! registered with [`Parent`], which names the registration; its devices are usually VFIO
//! devices ([`crate::vfio`]).
//!
//! The mdev core is a module (`CONFIG_VFIO_MDEV`, selected by the drivers that use it) while
//! this crate is built into the kernel, so everything here that calls into it is generic over the
//! driver and therefore compiled into the driver's module.
//!
//! C header: [`include/linux/mdev.h`](srctree/include/linux/mdev.h)

use crate::{
    bindings,
    container_of,
    device,
    driver,
    error::{
        from_result,
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    page::PAGE_SIZE,
    prelude::*,
    sync::{
        aref::ARef,
        Arc, //
    },
    sysfs,
    types::Opaque,
    ThisModule, //
};
use core::{
    marker::PhantomData,
    mem::offset_of,
    ptr::{
        addr_of_mut,
        NonNull, //
    },
};

/// The adapter between the mdev bus and a [`Driver`]: what
/// [`driver::Registration<Adapter<T>>`](driver::Registration) registers.
pub struct Adapter<T: Driver>(T);

// SAFETY:
// - `bindings::mdev_driver` is a C type declared as `repr(C)`.
// - `T::Data` is the type of the driver's device private data (`probe_callback` stores it).
// - `struct mdev_driver` embeds a `struct device_driver` at `DEVICE_DRIVER_OFFSET`.
unsafe impl<T: Driver> driver::DriverLayout for Adapter<T> {
    type DriverType = bindings::mdev_driver;
    type DriverData<'bound> = T::Data;
    const DEVICE_DRIVER_OFFSET: usize = offset_of!(bindings::mdev_driver, driver);
}

// SAFETY: `unregister` unregisters what a successful `register` registered.
unsafe impl<T: Driver> driver::RegistrationOps for Adapter<T> {
    unsafe fn register(
        mdrv: &Opaque<Self::DriverType>,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result {
        // Checked at build time: `T::DEVICE_GROUPS` ends with `None`.
        let groups = const { sysfs::static_groups_as_raw(T::DEVICE_GROUPS) };
        let drv = mdrv.get();
        // SAFETY: `drv` is a `struct mdev_driver` being initialized, not registered yet.
        unsafe {
            (*drv).device_api = T::DEVICE_API.as_char_ptr();
            (*drv).probe = Some(Self::probe_callback);
            (*drv).remove = Some(Self::remove_callback);
            if T::HAS_AVAILABLE {
                (*drv).get_available = Some(Self::get_available_callback);
            }
            if T::HAS_DESCRIPTION {
                (*drv).show_description = Some(Self::show_description_callback);
            }
            (*drv).driver.name = name.as_char_ptr();
            (*drv).driver.owner = module.as_ptr();
            // The groups' callbacks read the driver data as a `T::Data`: `probe_callback` sets
            // it before the driver core adds the groups, and the driver core drops it (the
            // registration's `post_unbind`) after it removed them.
            (*drv).driver.dev_groups = groups.cast_mut();
        }
        // SAFETY: `drv` is filled in and stays pinned until `unregister` (the caller's
        // guarantee); the groups are `'static`.
        to_result(unsafe { bindings::mdev_register_driver(drv) })
    }

    unsafe fn unregister(mdrv: &Opaque<Self::DriverType>) {
        // SAFETY: `register` registered it (the caller's guarantee). Every [`Parent`] holds a
        // reference to the registration, so none is left.
        unsafe { bindings::mdev_unregister_driver(mdrv.get()) }
    }
}

impl<T: Driver> Adapter<T> {
    /// `mdev_driver::probe`.
    extern "C" fn probe_callback(mdev: *mut bindings::mdev_device) -> c_int {
        // SAFETY: The mdev core probes a valid `struct mdev_device`, under its device lock.
        //
        // INVARIANT: `mdev` is valid for the duration of `probe_callback()`.
        let mdev = unsafe { &*mdev.cast::<Device<device::CoreInternal<'_>>>() };
        // SAFETY: The device is of a type of a live `Parent<T>`: the mdev core holds the
        // parent's `unreg_sem` while it creates and probes the device, and only the types of a
        // parent with this driver have devices that this driver probes.
        let (parent, ty) = unsafe { type_of::<T>(mdev.mtype()) };
        from_result(|| {
            let data = T::probe(mdev, &parent.data, ty);
            mdev.as_ref().set_drvdata(data)?;
            Ok(0)
        })
    }

    /// `mdev_driver::remove`.
    extern "C" fn remove_callback(mdev: *mut bindings::mdev_device) {
        // SAFETY: The mdev core removes a valid `struct mdev_device`, under its device lock.
        //
        // INVARIANT: `mdev` is valid for the duration of `remove_callback()`.
        let mdev = unsafe { &*mdev.cast::<Device<device::CoreInternal<'_>>>() };
        // SAFETY: `remove_callback` is only called for a device that `probe_callback` bound,
        // which stored a `Pin<KBox<T::Data>>`; the registration's `post_unbind` drops it after
        // this returns.
        let data = unsafe { mdev.as_ref().drvdata_borrow::<T::Data>() };
        T::unbind(mdev, data);
    }

    /// `mdev_driver::get_available`.
    extern "C" fn get_available_callback(mtype: *mut bindings::mdev_type) -> c_uint {
        // SAFETY: The mdev core calls this for a type of a live parent of this driver (sysfs
        // removes the attribute, waiting for readers, before the parent goes).
        let (parent, ty) = unsafe { type_of::<T>(mtype) };
        T::available(&parent.data, ty)
    }

    /// `mdev_driver::show_description`.
    extern "C" fn show_description_callback(
        mtype: *mut bindings::mdev_type,
        buf: *mut c_char,
    ) -> isize {
        // SAFETY: As for `get_available_callback`.
        let (parent, ty) = unsafe { type_of::<T>(mtype) };
        // SAFETY: sysfs passes a zeroed page, ours for the call.
        let page = unsafe { &mut *buf.cast::<[u8; PAGE_SIZE]>() };
        match T::description(&parent.data, ty, page) {
            Ok(n) => n as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}

/// The parent of a type, and the type's index in the parent's types.
///
/// # Safety
///
/// `mtype` is a type of a live `Parent<T>`.
unsafe fn type_of<'a, T: Driver>(mtype: *mut bindings::mdev_type) -> (&'a Parent<T>, usize) {
    // SAFETY: `mtype` is the `mtype` field of a `TypeSlot`, and its `parent` (set by the mdev
    // core) the `parent` field of a `Parent<T>`, which lives.
    unsafe {
        let slot = container_of!(Opaque::cast_from(mtype), TypeSlot, mtype);
        let parent = container_of!(Opaque::cast_from((*mtype).parent), Parent<T>, parent);
        (&*parent, (*slot).index)
    }
}

/// An mdev driver: what the mdev core calls for the parents and devices of the driver.
///
/// Types are identified by their index in the slice given to [`Parent::new`].
#[vtable]
pub trait Driver: Sized + Send + Sync + 'static {
    /// The data of a parent device.
    type ParentData: Send + Sync;

    /// The data of a bound device: what [`Driver::probe`] initializes, dropped once the device
    /// is unbound. Its files ([`Driver::DEVICE_GROUPS`]) read it from any thread.
    type Data: Send + Sync;

    /// The `device_api` attribute of the types, for example `"vfio-pci"`.
    const DEVICE_API: &'static CStr;

    /// The attribute groups of the driver's devices (`device_driver.dev_groups`), then `None`:
    /// the driver core creates their files once [`Driver::probe`] returned and removes them
    /// before [`Driver::unbind`], and their callbacks get the device's [`Driver::Data`]. A list
    /// that does not end with `None` fails the build.
    const DEVICE_GROUPS: &'static [Option<&'static sysfs::AttributeGroup<Self::Data>>] = &[None];

    /// A device of type `ty` of the parent whose data is `parent` was created: its data.
    fn probe<'bound>(
        dev: &'bound Device<device::Core<'_>>,
        parent: &'bound Self::ParentData,
        ty: usize,
    ) -> impl PinInit<Self::Data, Error> + 'bound;

    /// The device is being unbound (removed): what must happen while it is still bound. Its
    /// data is dropped after this returns.
    fn unbind(dev: &Device<device::Core<'_>>, this: Pin<&Self::Data>) {
        let _ = (dev, this);
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

/// A mediated device: the Rust view of a `struct mdev_device`.
///
/// # Invariants
///
/// `self.0` is a valid `struct mdev_device` created by the mdev core.
#[repr(transparent)]
pub struct Device<Ctx: device::DeviceContext = device::Normal>(
    Opaque<bindings::mdev_device>,
    PhantomData<Ctx>,
);

impl<Ctx: device::DeviceContext> Device<Ctx> {
    fn as_raw(&self) -> *mut bindings::mdev_device {
        self.0.get()
    }

    /// The device's type, set when the device was created.
    fn mtype(&self) -> *mut bindings::mdev_type {
        // SAFETY: By the type invariant `self.as_raw()` is a valid `struct mdev_device`, whose
        // `type_` the mdev core sets before the device is added and does not change.
        unsafe { (*self.as_raw()).type_ }
    }
}

// SAFETY: `mdev::Device` is a transparent wrapper of `struct mdev_device`, whose `dev` field is
// the embedded `struct device`.
unsafe impl<Ctx: device::DeviceContext> device::AsBusDevice<Ctx> for Device<Ctx> {
    const OFFSET: usize = offset_of!(bindings::mdev_device, dev);
}

// SAFETY: `Device` is a transparent wrapper of a type that doesn't depend on `Device`'s generic
// argument.
kernel::impl_device_context_deref!(unsafe { Device });
kernel::impl_device_context_into_aref!(Device);

// SAFETY: Instances of `Device` are always reference-counted.
unsafe impl crate::sync::aref::AlwaysRefCounted for Device {
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference guarantees that the refcount is non-zero.
        unsafe { bindings::get_device(self.as_ref().as_raw()) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // CAST: `Self` is a transparent wrapper of `bindings::mdev_device`.
        let mdev: *mut bindings::mdev_device = obj.cast().as_ptr();
        // SAFETY: By the type invariant of `Self`, `mdev` is a valid `struct mdev_device`.
        let dev = unsafe { addr_of_mut!((*mdev).dev) };
        // SAFETY: The safety requirements guarantee that the refcount is non-zero.
        unsafe { bindings::put_device(dev) }
    }
}

impl<Ctx: device::DeviceContext> AsRef<device::Device<Ctx>> for Device<Ctx> {
    fn as_ref(&self) -> &device::Device<Ctx> {
        // SAFETY: By the type invariant of `Self`, `self.as_raw()` is a valid
        // `struct mdev_device`.
        let dev = unsafe { addr_of_mut!((*self.as_raw()).dev) };
        // SAFETY: `dev` points to a valid `struct device`.
        unsafe { device::Device::from_raw(dev) }
    }
}

// SAFETY: A `Device` is always reference-counted and can be released from any thread.
unsafe impl Send for Device {}

// SAFETY: `Device` can be shared among threads because all methods of `Device`
// (i.e. `Device<Normal>`) are thread safe.
unsafe impl Sync for Device {}

// SAFETY: As for `Device<Normal>`: `Bound` is a zero-sized type-state marker.
unsafe impl Sync for Device<device::Bound> {}
/// One type of mediated device that a parent offers.
#[derive(Clone, Copy)]
pub struct Type {
    /// The name of its sysfs directory, after the name of the parent's driver (of its class or
    /// bus if it has none) and a dash.
    pub sysfs_name: &'static CStr,
    /// Its `name` attribute.
    pub pretty_name: &'static CStr,
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
/// The registration is owned, not tied to the parent's binding through [`Devres`]: a parent
/// need not have a driver (`samples/vfio-mdev` hang theirs on a class device, which is never
/// bound). A parent that is bound keeps its registration in its driver data, which the driver
/// core drops when the parent is unbound.
///
/// [`Devres`]: crate::devres::Devres
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
    driver: Arc<driver::Registration<Adapter<T>>>,
    data: T::ParentData,
}

// SAFETY: The raw pointers point into `types`, which moves with the parent; the rest is `Send`.
unsafe impl<T: Driver> Send for Parent<T> {}

// SAFETY: Shared access only reads `data`, which is `Sync`.
unsafe impl<T: Driver> Sync for Parent<T> {}

impl<T: Driver> Parent<T> {
    /// Registers `dev` as a parent offering `types` to `driver`, with the driver's `data`.
    pub fn new<'a>(
        driver: Arc<driver::Registration<Adapter<T>>>,
        dev: &'a device::Device,
        types: &'a [Type],
        data: T::ParentData,
    ) -> impl PinInit<Self, Error> + 'a {
        pin_init::pin_init_scope(move || {
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
            let drv = driver.as_raw();
            let raw_dev = dev.as_raw();
            Ok(try_pin_init!(Self {
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
            }))
        })
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
