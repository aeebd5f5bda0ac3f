// SPDX-License-Identifier: GPL-2.0

//! VFIO devices.
//!
//! A VFIO device is what user space (QEMU) opens to drive a device from a virtual machine: a file
//! descriptor with regions to read and write, interrupts signalled through eventfds, reset and
//! DMA into the memory that user space mapped in its VFIO container or IOAS. A driver embeds its
//! data in a [`Device`], implements [`Driver`] for it and registers it with [`Registration`].
//! Only devices behind an emulated IOMMU (mediated devices such as vGPUs, which reach guest
//! memory through [`Device::dma_read`] and [`Device::dma_write`]) are supported so far.
//!
//! A device can outlive its registration: a file that opened `/dev/vfio/devices/vfioN`
//! (`CONFIG_VFIO_DEVICE_CDEV`) holds it until the file's last close, and until such a file is
//! bound to an iommufd it holds no reference on the driver's module. The device's release drops
//! the driver's data, which runs code of the driver's module; so a driver makes its devices with
//! [`Devices`], which waits for their release before the module may go.
//!
//! The VFIO core may be a module (`CONFIG_VFIO=m`) while this crate is built into the kernel, so
//! everything here that calls into the VFIO core is generic over the driver and therefore
//! compiled into the driver's module. The release callback is the exception: it calls nothing of
//! the VFIO core and is not generic, so that it is built into the kernel, and no code of the
//! driver's module runs once it counted the device released. The layout of `struct vfio_device`
//! depends on `CONFIG_VFIO_GROUP`, `CONFIG_VFIO_DEVICE_CDEV` and `CONFIG_IOMMUFD`; the bindings
//! follow the kernel's configuration, which the VFIO core and its drivers share.
//!
//! C header: [`include/linux/vfio.h`](srctree/include/linux/vfio.h)

use crate::{
    alloc::allocator::Kmalloc,
    bindings,
    device,
    error::{
        from_err_ptr,
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    fs::file::Offset,
    ioctl::_IO,
    new_mutex,
    new_spinlock,
    prelude::*,
    sync::{
        aref::{
            ARef,
            AlwaysRefCounted, //
        },
        Mutex,
        SpinLock, //
    },
    types::Opaque,
    uaccess::{
        UserPtr,
        UserSlice,
        UserSliceReader,
        UserSliceWriter, //
    }, //
};
use core::{
    alloc::Layout,
    mem::{
        offset_of,
        size_of, //
    },
    ops::Deref,
    ptr::{
        self,
        NonNull, //
    },
    sync::atomic::{
        AtomicBool,
        AtomicUsize,
        Ordering, //
    }, //
};

const fn ioc(nr: u32) -> u32 {
    _IO(bindings::VFIO_TYPE as u32, bindings::VFIO_BASE + nr)
}

/// `VFIO_DEVICE_GET_INFO`.
const DEVICE_GET_INFO: u32 = ioc(7);
/// `VFIO_DEVICE_GET_IRQ_INFO`.
const DEVICE_GET_IRQ_INFO: u32 = ioc(9);
/// `VFIO_DEVICE_SET_IRQS`.
const DEVICE_SET_IRQS: u32 = ioc(10);
/// `VFIO_DEVICE_RESET`.
const DEVICE_RESET: u32 = ioc(11);

/// What `VFIO_DEVICE_GET_INFO` reports.
#[derive(Clone, Copy, Debug)]
pub struct DeviceInfo {
    /// `VFIO_DEVICE_FLAGS_*`.
    pub flags: u32,
    /// Number of regions.
    pub num_regions: u32,
    /// Number of interrupt indexes.
    pub num_irqs: u32,
}

/// What `VFIO_DEVICE_GET_REGION_INFO` reports for one region.
#[derive(Clone, Copy, Debug)]
pub struct RegionInfo {
    /// `VFIO_REGION_INFO_FLAG_*`.
    pub flags: u32,
    /// Size of the region in bytes (0: absent).
    pub size: u64,
    /// Offset of the region in the device file.
    pub offset: u64,
}

/// What `VFIO_DEVICE_GET_IRQ_INFO` reports for one interrupt index.
#[derive(Clone, Copy, Debug)]
pub struct IrqInfo {
    /// `VFIO_IRQ_INFO_*`.
    pub flags: u32,
    /// Number of vectors.
    pub count: u32,
}

/// A `VFIO_DEVICE_SET_IRQS` request, validated as `vfio_set_irqs_validate_and_prepare()` does.
///
/// `data` holds `count` elements of the type that the `VFIO_IRQ_SET_DATA_*` flag names (none,
/// `u8` booleans or `i32` eventfds).
pub struct IrqSet {
    /// `VFIO_IRQ_SET_DATA_*` and `VFIO_IRQ_SET_ACTION_*` flags.
    pub flags: u32,
    /// The interrupt index.
    pub index: u32,
    /// The first vector.
    pub start: u32,
    /// The number of vectors.
    pub count: u32,
    data: KVec<u8>,
}

impl IrqSet {
    /// The boolean of vector `start + i`, for `VFIO_IRQ_SET_DATA_BOOL`.
    pub fn bool_at(&self, i: usize) -> Option<bool> {
        self.data.get(i).map(|b| *b != 0)
    }

    /// The file descriptor of vector `start + i`, for `VFIO_IRQ_SET_DATA_EVENTFD`.
    pub fn fd_at(&self, i: usize) -> Option<i32> {
        let at = i.checked_mul(size_of::<i32>())?;
        let b = self.data.get(at..at + size_of::<i32>())?;
        Some(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The operations of a VFIO device, implemented by the driver's data.
///
/// The VFIO core calls them in process context and may call them concurrently, except that
/// [`Driver::open_device`] and [`Driver::close_device`] are serialised with each other and the
/// other operations run only between them. `VFIO_DEVICE_GET_INFO`, `VFIO_DEVICE_GET_IRQ_INFO`,
/// `VFIO_DEVICE_SET_IRQS` and `VFIO_DEVICE_RESET` are decoded here and go to their own
/// operations; other ioctls go to [`Driver::ioctl`].
#[vtable]
pub trait Driver: Sized + Send + Sync {
    /// The driver's name (`vfio_device_ops::name`).
    const NAME: &'static CStr;

    /// The first user opened the device.
    fn open_device(_device: &Device<Self>) -> Result {
        Ok(())
    }

    /// The last user closed the device; the driver stops its DMA. DMA is refused once this
    /// returns.
    fn close_device(_device: &Device<Self>) {}

    /// `read(2)` of `buf.len()` bytes at `*offset`; advances `offset` by what was read.
    fn read(_device: &Device<Self>, _buf: UserSliceWriter, _offset: &mut Offset) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `write(2)` of `buf.len()` bytes at `*offset`; advances `offset` by what was written.
    fn write(_device: &Device<Self>, _buf: UserSliceReader, _offset: &mut Offset) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `VFIO_DEVICE_GET_INFO`.
    fn info(_device: &Device<Self>) -> DeviceInfo {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `VFIO_DEVICE_GET_REGION_INFO` of region `index`.
    fn region_info(_device: &Device<Self>, _index: u32) -> Result<RegionInfo> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `VFIO_DEVICE_GET_IRQ_INFO` of interrupt index `index`.
    ///
    /// Also gives the number of vectors that `VFIO_DEVICE_SET_IRQS` accepts (none for an error).
    fn irq_info(_device: &Device<Self>, _index: u32) -> Result<IrqInfo> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `VFIO_DEVICE_SET_IRQS`, validated against [`Driver::info`] and [`Driver::irq_info`].
    fn set_irqs(_device: &Device<Self>, _set: &IrqSet) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `VFIO_DEVICE_RESET`.
    fn reset(_device: &Device<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Any other ioctl on the device file.
    fn ioctl(_device: &Device<Self>, _cmd: u32, _arg: usize) -> Result<isize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The device is being unregistered while user space holds it open: ask user space to
    /// release it. Called repeatedly, `count` counting the calls, until the last user closed it.
    fn request(_device: &Device<Self>, _count: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The VFIO devices of a driver that are not released yet.
///
/// The VFIO core releases a [`Device`] when its last reference is gone, which may be after its
/// [`Registration`] was dropped and, for a file of `/dev/vfio/devices/` not bound to an iommufd,
/// after the driver's module began to unload (see the [module documentation](self)). The release
/// drops the driver's data, which runs code of the driver's module. A driver therefore makes
/// each device with a `Devices` that it drops before its module goes, for example with the
/// mediated device parent whose devices they are: dropping it waits until every device made
/// with it is released.
pub struct Devices {
    inner: Pin<KBox<DevicesInner>>,
}

// SAFETY: The counter is atomic and the completion may be waited for and completed on any thread.
unsafe impl Send for Devices {}

// SAFETY: Shared access only counts devices, atomically.
unsafe impl Sync for Devices {}

/// The counter of a [`Devices`], which its devices point to.
///
/// # Invariants
///
/// `live` is the number of devices made with the [`Devices`] that are not released yet, plus one
/// until the [`Devices`] is dropped; `released` is initialised and completed when `live` drops
/// to 0.
#[pin_data]
struct DevicesInner {
    live: AtomicUsize,
    #[pin]
    released: Opaque<bindings::completion>,
}

impl Devices {
    /// Makes a counter of devices, with none yet.
    pub fn new() -> Result<Self> {
        let inner = KBox::pin_init(
            pin_init!(DevicesInner {
                // INVARIANT: No device yet, plus one for the `Devices`.
                live: AtomicUsize::new(1),
                released <- Opaque::ffi_init(|slot: *mut bindings::completion| {
                    // SAFETY: `slot` is valid for writes and not yet initialised.
                    unsafe { bindings::init_completion(slot) };
                }),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self { inner })
    }

    /// Counts one more device, released later with [`DevicesInner::put`].
    fn get(&self) -> NonNull<DevicesInner> {
        // The `Devices` is alive, so `live` is at least 1.
        self.inner.live.fetch_add(1, Ordering::Relaxed);
        NonNull::from(&*self.inner)
    }
}

impl Drop for Devices {
    fn drop(&mut self) {
        if self.inner.live.fetch_sub(1, Ordering::AcqRel) != 1 {
            // SAFETY: `released` is initialised (type invariant); the last device to be released
            // completes it.
            unsafe { bindings::wait_for_completion(self.inner.released.get()) };
        }
    }
}

impl DevicesInner {
    /// Counts a device released.
    ///
    /// # Safety
    ///
    /// `this` points to the `DevicesInner` of a [`Devices`] that counted the device, which is
    /// released and calls this once.
    unsafe fn put(this: NonNull<Self>) {
        let this = this.as_ptr();
        // SAFETY: The `Devices` waits for this call before it frees `*this`: it counts the
        // device (safety requirements), so `live` stays above 0 until the `fetch_sub` below.
        if unsafe { (*this).live.fetch_sub(1, Ordering::AcqRel) } == 1 {
            // SAFETY: As above, `released` is still there and initialised. The waiter may free it
            // as soon as `complete_all()` released its lock, so nothing uses `*this` afterwards.
            unsafe { bindings::complete_all(Opaque::cast_into(&raw const (*this).released)) };
        }
    }
}

/// What every [`Device`] starts with, whatever its driver: what its release needs.
///
/// # Invariants
///
/// `drop_rest` drops the fields of the `Device<T>` that the header begins, and `devices` points
/// to the counter of the [`Devices`] that counted the device.
#[repr(C)]
#[pin_data]
struct Header {
    #[pin]
    vdev: Opaque<bindings::vfio_device>,
    drop_rest: unsafe fn(*mut bindings::vfio_device),
    devices: NonNull<DevicesInner>,
}

/// `vfio_device_ops::release` of every [`Device`].
///
/// Not generic, hence built into the kernel: once it counted the device released, the driver may
/// let its module go, and no code of the module runs any more (the VFIO core has read the ops
/// table, in the module, before the call, and frees the allocation after it).
///
/// # Safety
///
/// `vdev` is the `struct vfio_device` of a [`Device`] whose last reference is gone and whose
/// `ops` is its `VTABLE`; it is not used afterwards.
#[inline(never)]
unsafe extern "C" fn release_callback(vdev: *mut bindings::vfio_device) {
    let header = vdev.cast::<Header>();
    // SAFETY: `vdev` is the first field of a `Header`, the first field of a `Device<T>` (both
    // `repr(C)`), initialised since `ops` is `VTABLE`.
    let (drop_rest, devices) = unsafe { ((*header).drop_rest, (*header).devices) };
    // SAFETY: The last reference is gone and the VFIO core frees the allocation after this call
    // (safety requirements); `drop_rest` belongs to this device (type invariant of `Header`).
    unsafe { drop_rest(vdev) };
    // SAFETY: The `Devices` of `devices` counted this device (type invariant of `Header`), which
    // is released now, once.
    unsafe { DevicesInner::put(devices) };
}

/// A VFIO device: the C `struct vfio_device` with the driver's data `T`.
///
/// The VFIO core allocates it (`_vfio_alloc_device()`) and frees it when the last reference is
/// gone, dropping `T`. It dereferences to `T`.
///
/// # Invariants
///
/// - `header.vdev` is the first field and a `struct vfio_device` initialised by
///   `_vfio_alloc_device()` with `ops` pointing to [`Device::VTABLE`], whose `device` holds a
///   reference on every `ARef<Device<T>>`; `header.drop_rest` is [`Device::drop_rest`].
/// - `parent` holds the device given to `_vfio_alloc_device()` until the [`Registration`] of
///   the device is dropped, and then `None`.
/// - `data` is initialised.
#[repr(C)]
#[pin_data]
pub struct Device<T: Driver> {
    #[pin]
    header: Header,
    #[pin]
    parent: SpinLock<Option<ARef<device::Device>>>,
    /// Whether the device is open; DMA is allowed only then.
    #[pin]
    open: Mutex<bool>,
    registered: AtomicBool,
    #[pin]
    data: T,
}

// SAFETY: The C parts may be used from any thread; `T` is `Send + Sync`.
unsafe impl<T: Driver> Send for Device<T> {}

// SAFETY: As for `Send`: every operation on `&Device` may run concurrently.
unsafe impl<T: Driver> Sync for Device<T> {}

impl<T: Driver> Device<T> {
    const VTABLE: bindings::vfio_device_ops = bindings::vfio_device_ops {
        name: crate::str::as_char_ptr_in_const_context(T::NAME).cast_mut(),
        init: None,
        release: Some(release_callback),
        #[cfg(CONFIG_IOMMUFD)]
        bind_iommufd: Some(bindings::vfio_iommufd_emulated_bind),
        #[cfg(not(CONFIG_IOMMUFD))]
        bind_iommufd: None,
        #[cfg(CONFIG_IOMMUFD)]
        unbind_iommufd: Some(bindings::vfio_iommufd_emulated_unbind),
        #[cfg(not(CONFIG_IOMMUFD))]
        unbind_iommufd: None,
        #[cfg(CONFIG_IOMMUFD)]
        attach_ioas: Some(bindings::vfio_iommufd_emulated_attach_ioas),
        #[cfg(not(CONFIG_IOMMUFD))]
        attach_ioas: None,
        #[cfg(CONFIG_IOMMUFD)]
        detach_ioas: Some(bindings::vfio_iommufd_emulated_detach_ioas),
        #[cfg(not(CONFIG_IOMMUFD))]
        detach_ioas: None,
        pasid_attach_ioas: None,
        pasid_detach_ioas: None,
        open_device: Some(Self::open_callback),
        close_device: Some(Self::close_callback),
        read: if T::HAS_READ {
            Some(Self::read_callback)
        } else {
            None
        },
        write: if T::HAS_WRITE {
            Some(Self::write_callback)
        } else {
            None
        },
        ioctl: Some(Self::ioctl_callback),
        get_region_info_caps: if T::HAS_REGION_INFO {
            Some(Self::region_info_callback)
        } else {
            None
        },
        mmap: None,
        request: if T::HAS_REQUEST {
            Some(Self::request_callback)
        } else {
            None
        },
        match_: None,
        match_token_uuid: None,
        dma_unmap: None,
        device_feature: None,
    };

    /// The table used until `data` is initialised: no `release`, which would drop it.
    const ALLOC_VTABLE: bindings::vfio_device_ops = bindings::vfio_device_ops {
        release: None,
        ..Self::VTABLE
    };

    /// Allocates a VFIO device for `parent` (for example an mdev device) with the driver's data,
    /// counted in `devices` until it is released.
    pub fn new(
        devices: &Devices,
        parent: &device::Device,
        data: impl PinInit<T, Error>,
    ) -> Result<ARef<Self>> {
        // `_vfio_alloc_device()` uses `kvzalloc()`: ask for a size that `kmalloc()` aligns
        // enough, as DRM does.
        let size = Kmalloc::aligned_layout(Layout::new::<Self>()).size();
        // SAFETY: `parent` is a valid device; the table is a constant, hence `'static`.
        let vdev = from_err_ptr(unsafe {
            bindings::_vfio_alloc_device(size, parent.as_raw(), const { &Self::ALLOC_VTABLE })
        })?;
        // `vdev` is the first field (`repr(C)`), as `vfio_alloc_device()` requires.
        let this = vdev.cast::<Self>();
        let init = try_pin_init!(Self {
            header <- pin_init!(Header {
                // Initialised by the VFIO core.
                vdev <- Opaque::ffi_init(|_| {}),
                drop_rest: Self::drop_rest,
                // Replaced below, once the device is counted.
                devices: NonNull::dangling(),
            }),
            parent <- new_spinlock!(Some(parent.into())),
            open <- new_mutex!(false),
            registered: AtomicBool::new(false),
            data <- data,
        });
        // SAFETY: The allocation is large enough for `Self` and aligned for it; the VFIO core
        // initialised `vdev`, which its initialiser leaves alone; nothing else uses the
        // allocation yet, and it does not move until it is freed.
        if let Err(e) = unsafe { pin_init::raw_try_init(this, init) } {
            // SAFETY: `_vfio_alloc_device()` returned a device with one reference, ours; its
            // table has no `release`, so the uninitialised fields are not dropped.
            unsafe { bindings::put_device(&raw mut (*vdev).device) };
            return Err(e);
        }
        // SAFETY: The device is still private to us; from now on `release` drops the fields and
        // counts the device released.
        unsafe {
            (*this).header.devices = devices.get();
            (*vdev).ops = const { &Self::VTABLE };
        }
        // SAFETY: We own the reference that `_vfio_alloc_device()` returned.
        // INVARIANT: Initialised above, with `ops` pointing to `VTABLE`, and counted in `devices`.
        Ok(unsafe { ARef::from_raw(NonNull::new_unchecked(this)) })
    }

    /// Returns the raw `struct vfio_device`.
    pub fn as_raw(&self) -> *mut bindings::vfio_device {
        self.header.vdev.get()
    }

    /// The device given to [`Device::new`] (for example an mdev device), until the device's
    /// [`Registration`] is dropped; `None` afterwards.
    ///
    /// The VFIO core calls the [`Driver`] operations only while the device is registered, so
    /// they always get it. The device does not hold its parent beyond that: a parent such as a
    /// mediated device may go while a file still holds the VFIO device.
    pub fn parent(&self) -> Option<ARef<device::Device>> {
        self.parent.lock().clone()
    }

    /// Reads guest memory at `iova` (the mappings of user space's VFIO container or IOAS).
    ///
    /// Fails with `EINVAL` while the device is not open.
    pub fn dma_read(&self, iova: u64, buf: &mut [u8]) -> Result {
        self.dma_rw(iova, buf.as_mut_ptr(), buf.len(), false)
    }

    /// Writes guest memory at `iova`; see [`Device::dma_read`].
    pub fn dma_write(&self, iova: u64, buf: &[u8]) -> Result {
        self.dma_rw(iova, buf.as_ptr().cast_mut(), buf.len(), true)
    }

    fn dma_rw(&self, iova: u64, buf: *mut u8, len: usize, write: bool) -> Result {
        // Held across the copy: closing waits for it before the VFIO core detaches the IOMMU
        // that `vfio_dma_rw()` uses.
        let open = self.open.lock();
        if !*open {
            return Err(EINVAL);
        }
        // SAFETY: `vdev` is valid and open (checked above, and it stays open while we hold the
        // lock); `buf` is valid for `len` bytes, and only read when `write` is set.
        to_result(unsafe { bindings::vfio_dma_rw(self.as_raw(), iova, buf.cast(), len, write) })
    }

    /// # Safety
    ///
    /// `vdev` is the `struct vfio_device` of a live `Device<T>`.
    unsafe fn from_raw<'a>(vdev: *mut bindings::vfio_device) -> &'a Self {
        // SAFETY: `vdev` is the first field of a live `Device<T>`.
        unsafe { &*vdev.cast::<Self>() }
    }

    /// `Header::drop_rest`: drops the fields, for [`release_callback`].
    ///
    /// # Safety
    ///
    /// `vdev` is a `Device<T>` whose last reference is gone; only its header is read afterwards.
    unsafe fn drop_rest(vdev: *mut bindings::vfio_device) {
        // SAFETY: The VFIO core calls `release` once, when the last reference is gone, before it
        // frees the allocation; the fields are initialised since `ops` points to `VTABLE`. The
        // header has no drop glue.
        unsafe { ptr::drop_in_place(vdev.cast::<Self>()) };
    }

    /// `vfio_device_ops::open_device`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`.
    unsafe extern "C" fn open_callback(vdev: *mut bindings::vfio_device) -> c_int {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        match T::open_device(this) {
            Ok(()) => {
                *this.open.lock() = true;
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `vfio_device_ops::close_device`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`.
    unsafe extern "C" fn close_callback(vdev: *mut bindings::vfio_device) {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        T::close_device(this);
        // The driver stopped its DMA; refuse any later one, and wait for one in progress,
        // before the VFIO core detaches the IOMMU.
        *this.open.lock() = false;
    }

    /// `vfio_device_ops::read`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`, `buf` a user pointer and `ppos` valid for the call.
    unsafe extern "C" fn read_callback(
        vdev: *mut bindings::vfio_device,
        buf: *mut c_char,
        count: usize,
        ppos: *mut Offset,
    ) -> isize {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        let buf = UserSlice::new(UserPtr::from_ptr(buf.cast()), count).writer();
        // SAFETY: `ppos` is valid for the duration of the call.
        let pos = unsafe { &mut *ppos };
        T::read(this, buf, pos).map_or_else(|e| e.to_errno() as isize, |n| n as isize)
    }

    /// `vfio_device_ops::write`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`, `buf` a user pointer and `ppos` valid for the call.
    unsafe extern "C" fn write_callback(
        vdev: *mut bindings::vfio_device,
        buf: *const c_char,
        count: usize,
        ppos: *mut Offset,
    ) -> isize {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        let buf = UserSlice::new(UserPtr::from_ptr(buf.cast_mut().cast()), count).reader();
        // SAFETY: `ppos` is valid for the duration of the call.
        let pos = unsafe { &mut *ppos };
        T::write(this, buf, pos).map_or_else(|e| e.to_errno() as isize, |n| n as isize)
    }

    /// `vfio_device_ops::get_region_info_caps`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>` and `info` valid for the call.
    unsafe extern "C" fn region_info_callback(
        vdev: *mut bindings::vfio_device,
        info: *mut bindings::vfio_region_info,
        _caps: *mut bindings::vfio_info_cap,
    ) -> c_int {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        // SAFETY: `info` is the VFIO core's copy of the user's argument, ours for the call.
        let info = unsafe { &mut *info };
        match T::region_info(this, info.index) {
            Ok(r) => {
                info.flags = r.flags;
                info.size = r.size;
                info.offset = r.offset;
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `vfio_device_ops::request`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`.
    unsafe extern "C" fn request_callback(vdev: *mut bindings::vfio_device, count: c_uint) {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        T::request(this, count);
    }

    /// `vfio_device_ops::ioctl`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`; `arg` is the user's argument.
    unsafe extern "C" fn ioctl_callback(
        vdev: *mut bindings::vfio_device,
        cmd: c_uint,
        arg: c_ulong,
    ) -> c_long {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Self::from_raw(vdev) };
        let ret = match cmd {
            DEVICE_GET_INFO if T::HAS_INFO => this.get_info(arg).map(|()| 0),
            DEVICE_GET_IRQ_INFO if T::HAS_IRQ_INFO => this.get_irq_info(arg).map(|()| 0),
            DEVICE_SET_IRQS if T::HAS_SET_IRQS && T::HAS_INFO && T::HAS_IRQ_INFO => this
                .read_irq_set(arg)
                .and_then(|set| T::set_irqs(this, &set).map(|()| 0)),
            DEVICE_RESET if T::HAS_RESET => T::reset(this).map(|()| 0),
            _ if T::HAS_IOCTL => T::ioctl(this, cmd, arg),
            _ => Err(ENOTTY),
        };
        ret.unwrap_or_else(|e| e.to_errno() as c_long)
    }

    /// `VFIO_DEVICE_GET_INFO`: only the fields up to `num_irqs` are read and written back.
    fn get_info(&self, arg: usize) -> Result {
        const MINSZ: usize = offset_of!(bindings::vfio_device_info, num_irqs) + size_of::<u32>();
        let mut info = pin_init::zeroed::<bindings::vfio_device_info>();
        let (mut r, mut w) = UserSlice::new(UserPtr::from_addr(arg), MINSZ).reader_writer();
        // SAFETY: `info` is plain old data of at least `MINSZ` bytes.
        r.read_slice(unsafe { as_bytes_mut(&mut info, MINSZ) })?;
        if (info.argsz as usize) < MINSZ {
            return Err(EINVAL);
        }
        let i = T::info(self);
        info.flags = i.flags;
        info.num_regions = i.num_regions;
        info.num_irqs = i.num_irqs;
        // SAFETY: As above.
        w.write_slice(unsafe { as_bytes_mut(&mut info, MINSZ) })
    }

    /// `VFIO_DEVICE_GET_IRQ_INFO`: only the fields up to `count` are read and written back.
    fn get_irq_info(&self, arg: usize) -> Result {
        const MINSZ: usize = offset_of!(bindings::vfio_irq_info, count) + size_of::<u32>();
        let mut info = pin_init::zeroed::<bindings::vfio_irq_info>();
        let (mut r, mut w) = UserSlice::new(UserPtr::from_addr(arg), MINSZ).reader_writer();
        // SAFETY: `info` is plain old data of at least `MINSZ` bytes.
        r.read_slice(unsafe { as_bytes_mut(&mut info, MINSZ) })?;
        if (info.argsz as usize) < MINSZ {
            return Err(EINVAL);
        }
        let i = T::irq_info(self, info.index)?;
        info.flags = i.flags;
        info.count = i.count;
        // SAFETY: As above.
        w.write_slice(unsafe { as_bytes_mut(&mut info, MINSZ) })
    }

    /// Reads and validates a `VFIO_DEVICE_SET_IRQS` argument, as vfio-pci does.
    fn read_irq_set(&self, arg: usize) -> Result<IrqSet> {
        const MINSZ: usize = offset_of!(bindings::vfio_irq_set, count) + size_of::<u32>();
        let mut hdr = bindings::vfio_irq_set {
            argsz: 0,
            flags: 0,
            index: 0,
            start: 0,
            count: 0,
            data: bindings::__IncompleteArrayField::new(),
        };
        let mut r = UserSlice::new(UserPtr::from_addr(arg), MINSZ).reader();
        // SAFETY: `hdr` is plain old data of at least `MINSZ` bytes.
        r.read_slice(unsafe { as_bytes_mut(&mut hdr, MINSZ) })?;
        let vectors = T::irq_info(self, hdr.index).map_or(0, |i| i.count);
        let max = T::info(self).num_irqs;
        let mut data_size = 0usize;
        // SAFETY: `hdr` is a valid header; `data_size` a valid out pointer.
        to_result(unsafe {
            bindings::vfio_set_irqs_validate_and_prepare(
                &mut hdr,
                vectors as c_int,
                max as c_int,
                &mut data_size,
            )
        })?;
        let mut data = KVec::new();
        if data_size > 0 {
            UserSlice::new(UserPtr::from_addr(arg).wrapping_byte_add(MINSZ), data_size)
                .read_all(&mut data, GFP_KERNEL)?;
        }
        Ok(IrqSet {
            flags: hdr.flags,
            index: hdr.index,
            start: hdr.start,
            count: hdr.count,
            data,
        })
    }
}

/// # Safety
///
/// `T` is plain old data (any bytes are a valid `T`) of at least `len` bytes.
unsafe fn as_bytes_mut<T>(v: &mut T, len: usize) -> &mut [u8] {
    // SAFETY: By the safety requirements.
    unsafe { core::slice::from_raw_parts_mut(ptr::from_mut(v).cast::<u8>(), len) }
}

impl<T: Driver> Deref for Device<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

// SAFETY: A `Device<T>` is always reference counted, through its `struct device`.
unsafe impl<T: Driver> AlwaysRefCounted for Device<T> {
    fn inc_ref(&self) {
        // SAFETY: The existence of a shared reference guarantees that the refcount is non-zero.
        unsafe { bindings::get_device(&raw mut (*self.as_raw()).device) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        let vdev = obj.as_ptr().cast::<bindings::vfio_device>();
        // SAFETY: The caller owns a reference; the last one frees the device (and drops `T`
        // through `release`).
        unsafe { bindings::put_device(&raw mut (*vdev).device) };
    }
}

/// A [`Device`] registered with the VFIO core as a device behind an emulated IOMMU, whose DMA
/// goes through [`Device::dma_read`] and [`Device::dma_write`].
///
/// Dropping it unregisters the device: that waits until user space closed it, calling
/// [`Driver::request`] meanwhile, and then lets go of the device's parent
/// ([`Device::parent`]).
///
/// # Invariants
///
/// `dev` is registered, by this object, which unregisters it.
pub struct Registration<T: Driver> {
    dev: ARef<Device<T>>,
}

impl<T: Driver> Registration<T> {
    /// Registers `dev`; a device is registered once in its life (`EBUSY` afterwards).
    pub fn new_emulated_iommu(dev: ARef<Device<T>>) -> Result<Self> {
        if dev.registered.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        // SAFETY: `dev` is a valid, initialised and never registered device.
        to_result(unsafe { bindings::vfio_register_emulated_iommu_dev(dev.as_raw()) })?;
        // INVARIANT: Registered above.
        Ok(Self { dev })
    }

    /// The registered device.
    pub fn device(&self) -> &ARef<Device<T>> {
        &self.dev
    }
}

impl<T: Driver> Drop for Registration<T> {
    fn drop(&mut self) {
        // SAFETY: Registered by us (type invariant).
        unsafe { bindings::vfio_unregister_group_dev(self.dev.as_raw()) };
        // The VFIO core calls no operation any more. A file may still hold the device, but
        // nothing of it needs the parent.
        // INVARIANT: The registration of the device is dropped.
        let parent = self.dev.parent.lock().take();
        drop(parent);
    }
}
