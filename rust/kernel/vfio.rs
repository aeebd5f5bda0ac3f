// SPDX-License-Identifier: GPL-2.0

//! VFIO devices.
//!
//! A VFIO device is what user space (QEMU) opens to drive a device from a virtual machine: a file
//! descriptor with regions to read and write, interrupts signalled through eventfds, reset and
//! DMA into the memory that user space mapped in its VFIO container or IOAS. A driver embeds its
//! data in a [`Device`], implements [`Operations`] for it and registers it with [`Registration`].
//! Only devices behind an emulated IOMMU (mediated devices such as vGPUs, which reach guest
//! memory through [`Device::dma_read`] and [`Device::dma_write`]) are supported so far.
//!
//! A device may support migration (VFIO migration v2, `VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE`):
//! the driver implements [`Migration`] and registers the device with
//! [`Registration::new_emulated_iommu_migratable`]. A data transfer session is a [`DataFile`]
//! whose reads (saving) and writes (resuming) go to the driver's [`MigrationData`].
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
    module::this_module,
    prelude::*,
    static_lock_class,
    sync::{
        aref::{
            ARef,
            AlwaysRefCounted, //
        },
        Arc,
        ArcBorrow,
        LockClassKey,
        Mutex,
        SpinLock, //
    },
    transmute::{
        AsBytes,
        FromBytes, //
    },
    types::{
        ForeignOwnable,
        Opaque, //
    },
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
        AtomicU32,
        AtomicUsize,
        Ordering, //
    }, //
};

const fn ioc(nr: u32) -> u32 {
    _IO(uapi::VFIO_TYPE as u32, uapi::VFIO_BASE + nr)
}

/// `VFIO_DEVICE_GET_INFO`.
const DEVICE_GET_INFO: u32 = ioc(7);
/// `VFIO_DEVICE_GET_IRQ_INFO`.
const DEVICE_GET_IRQ_INFO: u32 = ioc(9);
/// `VFIO_DEVICE_SET_IRQS`.
const DEVICE_SET_IRQS: u32 = ioc(10);
/// `VFIO_DEVICE_RESET`.
const DEVICE_RESET: u32 = ioc(11);

/// What `VFIO_DEVICE_GET_INFO` reports: made for a device's API, so that the flags and counts
/// are that API's.
#[derive(Clone, Copy, Debug)]
pub struct DeviceInfo {
    flags: u32,
    num_regions: u32,
    num_irqs: u32,
}

impl DeviceInfo {
    /// A vfio-pci device (`VFIO_DEVICE_FLAGS_PCI`): its regions are [`pci::RegionIndex`], its
    /// interrupts [`pci::IrqIndex`]; `reset` if it supports `VFIO_DEVICE_RESET`.
    pub const fn pci(reset: bool) -> Self {
        Self {
            flags: uapi::VFIO_DEVICE_FLAGS_PCI
                | if reset {
                    uapi::VFIO_DEVICE_FLAGS_RESET
                } else {
                    0
                },
            num_regions: uapi::VFIO_PCI_NUM_REGIONS,
            num_irqs: uapi::VFIO_PCI_NUM_IRQS,
        }
    }
}

/// What `VFIO_DEVICE_GET_REGION_INFO` reports for one region. A region of size 0 is absent.
/// Regions are read and written through the device file; none can be mapped (`mmap`).
#[derive(Clone, Copy, Debug)]
pub struct RegionInfo {
    /// User space may read it (`VFIO_REGION_INFO_FLAG_READ`).
    pub readable: bool,
    /// User space may write it (`VFIO_REGION_INFO_FLAG_WRITE`).
    pub writable: bool,
    /// Size of the region in bytes (0: absent).
    pub size: u64,
    /// Offset of the region in the device file.
    pub offset: u64,
}

impl RegionInfo {
    fn flags(&self) -> u32 {
        let mut flags = 0;
        if self.readable {
            flags |= uapi::VFIO_REGION_INFO_FLAG_READ;
        }
        if self.writable {
            flags |= uapi::VFIO_REGION_INFO_FLAG_WRITE;
        }
        flags
    }
}

/// What `VFIO_DEVICE_GET_IRQ_INFO` reports for one interrupt index.
#[derive(Clone, Copy, Debug)]
pub struct IrqInfo {
    /// Its vectors are signalled through eventfds (`VFIO_IRQ_INFO_EVENTFD`).
    pub eventfd: bool,
    /// `VFIO_IRQ_SET_ACTION_MASK` and `UNMASK` apply (`VFIO_IRQ_INFO_MASKABLE`).
    pub maskable: bool,
    /// It masks itself when it fires (`VFIO_IRQ_INFO_AUTOMASKED`), as level-triggered INTx.
    pub automasked: bool,
    /// Its vectors are enabled all at once, not added one by one (`VFIO_IRQ_INFO_NORESIZE`).
    pub noresize: bool,
    /// Number of vectors.
    pub count: u32,
}

impl IrqInfo {
    fn flags(&self) -> u32 {
        let mut flags = 0;
        for (set, flag) in [
            (self.eventfd, uapi::VFIO_IRQ_INFO_EVENTFD),
            (self.maskable, uapi::VFIO_IRQ_INFO_MASKABLE),
            (self.automasked, uapi::VFIO_IRQ_INFO_AUTOMASKED),
            (self.noresize, uapi::VFIO_IRQ_INFO_NORESIZE),
        ] {
            if set {
                flags |= flag;
            }
        }
        flags
    }
}

/// What a `VFIO_DEVICE_SET_IRQS` does to its vectors (`VFIO_IRQ_SET_ACTION_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqAction {
    /// `VFIO_IRQ_SET_ACTION_MASK`.
    Mask,
    /// `VFIO_IRQ_SET_ACTION_UNMASK`.
    Unmask,
    /// `VFIO_IRQ_SET_ACTION_TRIGGER`.
    Trigger,
}

/// The data of a `VFIO_DEVICE_SET_IRQS`, one element per vector (`VFIO_IRQ_SET_DATA_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqData {
    /// `VFIO_IRQ_SET_DATA_NONE`: no data; the action applies to every vector.
    None,
    /// `VFIO_IRQ_SET_DATA_BOOL`: whether the action applies, per vector
    /// ([`IrqSet::bool_at`]).
    Bool,
    /// `VFIO_IRQ_SET_DATA_EVENTFD`: an eventfd per vector, -1 for none ([`IrqSet::fd_at`]).
    Eventfd,
}

/// A `VFIO_DEVICE_SET_IRQS` request, validated as `vfio_set_irqs_validate_and_prepare()` does
/// (one kind of data, vectors that the index has), with one action: a request with none or
/// several fails with `ENOTTY` before the driver sees it.
pub struct IrqSet {
    /// What to do.
    pub action: IrqAction,
    /// The kind of data, of which `data` holds `count` elements.
    pub data_type: IrqData,
    /// The interrupt index (for vfio-pci, a [`pci::IrqIndex`]).
    pub index: u32,
    /// The first vector.
    pub start: u32,
    /// The number of vectors.
    pub count: u32,
    data: KVec<u8>,
}

impl IrqSet {
    /// The boolean of vector `start + i`, for [`IrqData::Bool`].
    pub fn bool_at(&self, i: usize) -> Option<bool> {
        if self.data_type != IrqData::Bool {
            return None;
        }
        self.data.get(i).map(|b| *b != 0)
    }

    /// The file descriptor of vector `start + i`, for [`IrqData::Eventfd`].
    pub fn fd_at(&self, i: usize) -> Option<i32> {
        if self.data_type != IrqData::Eventfd {
            return None;
        }
        let at = i.checked_mul(size_of::<i32>())?;
        let b = self.data.get(at..at + size_of::<i32>())?;
        Some(i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The regions and interrupts of a vfio-pci device (`DeviceInfo::pci`), as `linux/vfio.h`
/// numbers them.
pub mod pci {
    /// A region of a vfio-pci device (`VFIO_PCI_*_REGION_INDEX`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum RegionIndex {
        /// A BAR, 0 to 5.
        Bar(u8),
        /// The expansion ROM.
        Rom,
        /// The configuration space.
        Config,
        /// The VGA ranges.
        Vga,
    }

    impl RegionIndex {
        /// The region of index `index`, `None` past the vfio-pci regions.
        pub fn from_raw(index: u32) -> Option<Self> {
            Some(match index {
                uapi::VFIO_PCI_BAR0_REGION_INDEX..=uapi::VFIO_PCI_BAR5_REGION_INDEX => Self::Bar(
                    u8::try_from(index.wrapping_sub(uapi::VFIO_PCI_BAR0_REGION_INDEX)).ok()?,
                ),
                uapi::VFIO_PCI_ROM_REGION_INDEX => Self::Rom,
                uapi::VFIO_PCI_CONFIG_REGION_INDEX => Self::Config,
                uapi::VFIO_PCI_VGA_REGION_INDEX => Self::Vga,
                _ => return None,
            })
        }
    }

    /// An interrupt index of a vfio-pci device (`VFIO_PCI_*_IRQ_INDEX`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum IrqIndex {
        /// The interrupt pin (INTx).
        Intx,
        /// MSI.
        Msi,
        /// MSI-X.
        Msix,
        /// Error reporting (AER).
        Err,
        /// Device requests: the host wants the device back.
        Req,
    }

    impl IrqIndex {
        /// The index `index`, `None` past the vfio-pci interrupts.
        pub fn from_raw(index: u32) -> Option<Self> {
            Some(match index {
                uapi::VFIO_PCI_INTX_IRQ_INDEX => Self::Intx,
                uapi::VFIO_PCI_MSI_IRQ_INDEX => Self::Msi,
                uapi::VFIO_PCI_MSIX_IRQ_INDEX => Self::Msix,
                uapi::VFIO_PCI_ERR_IRQ_INDEX => Self::Err,
                uapi::VFIO_PCI_REQ_IRQ_INDEX => Self::Req,
                _ => return None,
            })
        }
    }
}

/// The operations of a VFIO device, implemented by the driver's data.
///
/// The VFIO core calls them in process context and may call them concurrently, except that
/// [`Operations::open_device`] and [`Operations::close_device`] are serialised with each other
/// and the other operations run only between them. `VFIO_DEVICE_GET_INFO`,
/// `VFIO_DEVICE_GET_IRQ_INFO`, `VFIO_DEVICE_SET_IRQS` and `VFIO_DEVICE_RESET` are decoded here
/// and go to their own operations; other ioctls go to [`Operations::ioctl`].
#[vtable]
pub trait Operations: Sized + Send + Sync {
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

    /// `VFIO_DEVICE_SET_IRQS`, validated against [`Operations::info`] and [`Operations::irq_info`].
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
pub struct Device<T: Operations> {
    #[pin]
    header: Header,
    #[pin]
    parent: SpinLock<Option<ARef<device::Device>>>,
    /// Whether the device is open; DMA is allowed only then.
    #[pin]
    open: Mutex<bool>,
    registered: AtomicBool,
    /// The `migration_flags` of a device registered with migration, 0 until then.
    mig_flags: AtomicU32,
    #[pin]
    data: T,
}

// SAFETY: The C parts may be used from any thread; `T` is `Send + Sync`.
unsafe impl<T: Operations> Send for Device<T> {}

// SAFETY: As for `Send`: every operation on `&Device` may run concurrently.
unsafe impl<T: Operations> Sync for Device<T> {}

/// A lock class of every [`Device`]: its name and key.
type LockClass = (&'static CStr, Pin<&'static LockClassKey>);

// The lock classes of a `Device<T>`, whatever `T`, from this crate's code. `Device::new` is
// generic, so it is compiled into the driver's module; with `new_spinlock!` there, the class's
// key would be this crate's `static` but its name the module's copy of a string literal, which
// lockdep keeps after the module is gone, and another module (or the same one loaded at another
// address) would bring a second name for the key, which lockdep warns about.

#[inline(never)]
fn parent_lock_class() -> LockClass {
    (c"vfio::Device::parent", static_lock_class!())
}

#[inline(never)]
fn open_lock_class() -> LockClass {
    (c"vfio::Device::open", static_lock_class!())
}

impl<T: Operations> Device<T> {
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

    /// Allocates a VFIO device for `parent` (for example an mdev device, from its driver's probe)
    /// with the driver's data, counted in `devices` until it is released.
    ///
    /// `parent` is bound: a VFIO device is made for a parent that its driver holds (from the
    /// parent driver's probe, typically), not for any device.
    pub fn new(
        devices: &Devices,
        parent: &device::Device<device::Bound>,
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
        let (parent_name, parent_key) = parent_lock_class();
        let (open_name, open_key) = open_lock_class();
        let init = try_pin_init!(Self {
            header <- pin_init!(Header {
                // Initialised by the VFIO core.
                vdev <- Opaque::ffi_init(|_| {}),
                drop_rest: Self::drop_rest,
                // Replaced below, once the device is counted.
                devices: NonNull::dangling(),
            }),
            parent <- SpinLock::new(Some(parent.into()), parent_name, parent_key),
            open <- Mutex::new(false, open_name, open_key),
            registered: AtomicBool::new(false),
            mig_flags: AtomicU32::new(0),
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
    /// The VFIO core calls the [`Operations`] operations only while the device is registered, so
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
                info.flags = r.flags();
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
        const MINSZ: usize = offset_of!(uapi::vfio_device_info, num_irqs) + size_of::<u32>();
        let mut info = uapi::vfio_device_info::default();
        let (mut r, mut w) = UserSlice::new(UserPtr::from_addr(arg), MINSZ).reader_writer();
        r.read_slice(&mut info.as_bytes_mut()[..MINSZ])?;
        if (info.argsz as usize) < MINSZ {
            return Err(EINVAL);
        }
        let i = T::info(self);
        info.flags = i.flags;
        info.num_regions = i.num_regions;
        info.num_irqs = i.num_irqs;
        w.write_slice(&info.as_bytes()[..MINSZ])
    }

    /// `VFIO_DEVICE_GET_IRQ_INFO`: only the fields up to `count` are read and written back.
    fn get_irq_info(&self, arg: usize) -> Result {
        const MINSZ: usize = offset_of!(uapi::vfio_irq_info, count) + size_of::<u32>();
        let mut info = uapi::vfio_irq_info::default();
        let (mut r, mut w) = UserSlice::new(UserPtr::from_addr(arg), MINSZ).reader_writer();
        r.read_slice(&mut info.as_bytes_mut()[..MINSZ])?;
        if (info.argsz as usize) < MINSZ {
            return Err(EINVAL);
        }
        let i = T::irq_info(self, info.index)?;
        info.flags = i.flags();
        info.count = i.count;
        w.write_slice(&info.as_bytes()[..MINSZ])
    }

    /// Reads and validates a `VFIO_DEVICE_SET_IRQS` argument, as vfio-pci does.
    fn read_irq_set(&self, arg: usize) -> Result<IrqSet> {
        const MINSZ: usize = offset_of!(uapi::vfio_irq_set, count) + size_of::<u32>();
        let mut hdr = uapi::vfio_irq_set::default();
        let mut r = UserSlice::new(UserPtr::from_addr(arg), MINSZ).reader();
        r.read_slice(&mut hdr.as_bytes_mut()[..MINSZ])?;
        let vectors = T::irq_info(self, hdr.index).map_or(0, |i| i.count);
        let max = T::info(self).num_irqs;
        let mut data_size = 0usize;
        // SAFETY: `hdr` is a valid header (`uapi::vfio_irq_set` and `bindings::vfio_irq_set` are
        // the same C struct, bindgen'd twice); `data_size` is a valid out pointer.
        to_result(unsafe {
            bindings::vfio_set_irqs_validate_and_prepare(
                ptr::from_mut(&mut hdr).cast(),
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
        // `vfio_set_irqs_validate_and_prepare()` checks that there is one kind of data, not one
        // action: none, or several, is an operation that no index has, `ENOTTY` as vfio-pci
        // answers it.
        let action = match hdr.flags & uapi::VFIO_IRQ_SET_ACTION_TYPE_MASK {
            uapi::VFIO_IRQ_SET_ACTION_MASK => IrqAction::Mask,
            uapi::VFIO_IRQ_SET_ACTION_UNMASK => IrqAction::Unmask,
            uapi::VFIO_IRQ_SET_ACTION_TRIGGER => IrqAction::Trigger,
            _ => return Err(ENOTTY),
        };
        let data_type = match hdr.flags & uapi::VFIO_IRQ_SET_DATA_TYPE_MASK {
            uapi::VFIO_IRQ_SET_DATA_NONE => IrqData::None,
            uapi::VFIO_IRQ_SET_DATA_BOOL => IrqData::Bool,
            uapi::VFIO_IRQ_SET_DATA_EVENTFD => IrqData::Eventfd,
            _ => return Err(EINVAL),
        };
        Ok(IrqSet {
            action,
            data_type,
            index: hdr.index,
            start: hdr.start,
            count: hdr.count,
            data,
        })
    }
}

// SAFETY: The VFIO ioctl arguments read and written above are `#[repr(C)]` structs of `u32`
// fields (and, in `vfio_irq_set`, a trailing zero-sized array) with no padding: every byte of
// them is initialised, and any bytes are a valid value.
unsafe impl FromBytes for uapi::vfio_device_info {}
// SAFETY: As above.
unsafe impl AsBytes for uapi::vfio_device_info {}
// SAFETY: As above.
unsafe impl FromBytes for uapi::vfio_irq_info {}
// SAFETY: As above.
unsafe impl AsBytes for uapi::vfio_irq_info {}
// SAFETY: As above.
unsafe impl FromBytes for uapi::vfio_irq_set {}
// SAFETY: As above.
unsafe impl AsBytes for uapi::vfio_irq_set {}

impl<T: Operations> Deref for Device<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

// SAFETY: A `Device<T>` is always reference counted, through its `struct device`.
unsafe impl<T: Operations> AlwaysRefCounted for Device<T> {
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
/// [`Operations::request`] meanwhile, and then lets go of the device's parent
/// ([`Device::parent`]).
///
/// # Invariants
///
/// `dev` is registered, by this object, which unregisters it.
pub struct Registration<T: Operations> {
    dev: ARef<Device<T>>,
}

impl<T: Operations> Registration<T> {
    /// Registers `dev`; a device is registered once in its life (`EBUSY` afterwards).
    pub fn new_emulated_iommu(dev: ARef<Device<T>>) -> Result<Self> {
        if dev.registered.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        Self::register(dev)
    }

    /// Registers `dev`, which `registered` marks as ours and the VFIO core does not know yet.
    fn register(dev: ARef<Device<T>>) -> Result<Self> {
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

impl<T: Migration> Registration<T> {
    /// Registers `dev` as [`Registration::new_emulated_iommu`] does, with migration: user space
    /// finds `VFIO_DEVICE_FEATURE_MIGRATION` with [`Migration::FLAGS`], and the VFIO core calls
    /// the [`Migration`] operations.
    pub fn new_emulated_iommu_migratable(dev: ARef<Device<T>>) -> Result<Self> {
        const {
            assert!(
                T::FLAGS.contains(MigrationFlags::STOP_COPY),
                "a migratable device supports at least STOP_COPY"
            );
        };
        if dev.registered.swap(true, Ordering::AcqRel) {
            return Err(EBUSY);
        }
        let vdev = dev.as_raw();
        // SAFETY: `vdev` is valid. The device is not registered and `registered` was false, so
        // nothing else reads or writes these fields: the VFIO core reads them once the device is
        // registered, below.
        unsafe {
            (*vdev).mig_ops = const { &MigrationVtable::<T>::OPS };
            (*vdev).migration_flags = T::FLAGS.0;
        }
        // After the fields it describes: `mig_next_state()` reads `migration_flags` once it sees
        // this.
        dev.mig_flags.store(T::FLAGS.0, Ordering::Release);
        let reg = Self::register(dev.clone());
        if reg.is_err() {
            dev.mig_flags.store(0, Ordering::Release);
        }
        reg
    }
}

impl<T: Operations> Drop for Registration<T> {
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

/// A state of a device's migration (`enum vfio_device_mig_state`).
///
/// See the state machine in [`include/uapi/linux/vfio.h`](srctree/include/uapi/linux/vfio.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum MigState {
    /// The device failed a transition and must be reset.
    Error = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_ERROR,
    /// The device does not change its internal or external state.
    Stop = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_STOP,
    /// The device runs normally.
    Running = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_RUNNING,
    /// Stopped, its internal state read out through the data file.
    StopCopy = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_STOP_COPY,
    /// Stopped, loading a new internal state written to the data file.
    Resuming = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_RESUMING,
    /// Running without peer-to-peer DMA (`VFIO_MIGRATION_P2P`).
    RunningP2p = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_RUNNING_P2P,
    /// Running while its state is read out (`VFIO_MIGRATION_PRE_COPY`).
    PreCopy = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_PRE_COPY,
    /// [`MigState::PreCopy`] without peer-to-peer DMA.
    PreCopyP2p = uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_PRE_COPY_P2P,
}

impl MigState {
    /// The state of the C value `raw`, `None` for a value that names none.
    pub fn from_raw(raw: bindings::vfio_device_mig_state) -> Option<Self> {
        Some(match raw {
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_ERROR => Self::Error,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_STOP => Self::Stop,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_RUNNING => Self::Running,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_STOP_COPY => Self::StopCopy,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_RESUMING => Self::Resuming,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_RUNNING_P2P => Self::RunningP2p,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_PRE_COPY => Self::PreCopy,
            uapi::vfio_device_mig_state_VFIO_DEVICE_STATE_PRE_COPY_P2P => Self::PreCopyP2p,
            _ => return None,
        })
    }
}

/// What a migratable device supports (`VFIO_MIGRATION_*`), combined with [`MigrationFlags::or`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigrationFlags(u32);

impl MigrationFlags {
    /// `VFIO_MIGRATION_STOP_COPY`: the states STOP, STOP_COPY and RESUMING.
    pub const STOP_COPY: Self = Self(uapi::VFIO_MIGRATION_STOP_COPY);
    /// `VFIO_MIGRATION_P2P`: RUNNING_P2P.
    pub const P2P: Self = Self(uapi::VFIO_MIGRATION_P2P);
    /// `VFIO_MIGRATION_PRE_COPY`: PRE_COPY (and PRE_COPY_P2P with `P2P`).
    pub const PRE_COPY: Self = Self(uapi::VFIO_MIGRATION_PRE_COPY);

    /// Both `self` and `other`.
    pub const fn or(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether `self` has every flag of `other`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The migration of a VFIO device (`struct vfio_migration_ops`), implemented by the driver's data
/// of a device registered with [`Registration::new_emulated_iommu_migratable`].
///
/// The VFIO core passes user space's requests as they come, concurrently with each other and with
/// the [`Operations`] operations: the driver serialises them itself. It calls them only while the
/// device is open.
pub trait Migration: Operations {
    /// What the device supports: [`MigrationFlags::STOP_COPY`], which must be among them
    /// (STOP, STOP_COPY and RESUMING), and optionally [`MigrationFlags::P2P`] and
    /// [`MigrationFlags::PRE_COPY`].
    const FLAGS: MigrationFlags;

    /// `VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE` set: takes the device to `new`, returning the data
    /// file of a transfer session that the transition starts.
    ///
    /// `new` is what user space asked for, unchecked: [`Device::mig_next_state`] gives the arcs
    /// of the state machine to take one after the other and fails, with `EINVAL`, for a state the
    /// device does not support or that cannot be reached. On failure the device is in the state
    /// it reached, which [`Migration::get_state`] tells user space. Only the last arc of a path
    /// may return a file.
    fn set_state(device: &Device<Self>, new: MigState) -> Result<Option<DataFile>>;

    /// `VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE` get: the device's state.
    fn get_state(device: &Device<Self>) -> Result<MigState>;

    /// `VFIO_DEVICE_FEATURE_MIG_DATA_SIZE`: an estimate of the bytes that STOP_COPY will read out.
    fn get_data_size(device: &Device<Self>) -> Result<usize>;
}

impl<T: Migration> Device<T> {
    /// The next arc of the migration state machine on the way from `cur` to `new`
    /// (`vfio_mig_get_next_state()`), for the device's [`Migration::FLAGS`].
    ///
    /// Fails with `EINVAL` if `cur` or `new` is not a state the device supports, or `new` cannot be
    /// reached from `cur` (STOP_COPY to PRE_COPY, anything from ERROR).
    pub fn mig_next_state(&self, cur: MigState, new: MigState) -> Result<MigState> {
        // The core WARNs for a current state that the device does not support; ERROR is left
        // only by a reset.
        let needs = match cur {
            MigState::Error => return Err(EINVAL),
            MigState::Stop | MigState::Running | MigState::StopCopy | MigState::Resuming => {
                uapi::VFIO_MIGRATION_STOP_COPY
            }
            MigState::RunningP2p => uapi::VFIO_MIGRATION_STOP_COPY | uapi::VFIO_MIGRATION_P2P,
            MigState::PreCopy => uapi::VFIO_MIGRATION_STOP_COPY | uapi::VFIO_MIGRATION_PRE_COPY,
            MigState::PreCopyP2p => {
                uapi::VFIO_MIGRATION_STOP_COPY
                    | uapi::VFIO_MIGRATION_P2P
                    | uapi::VFIO_MIGRATION_PRE_COPY
            }
        };
        if self.mig_flags.load(Ordering::Acquire) & needs != needs {
            return Err(EINVAL);
        }
        let mut next: bindings::vfio_device_mig_state = 0;
        // SAFETY: `self` is a valid device, registered with migration and `cur` a state its
        // `migration_flags` support (`mig_flags`, checked above), as `vfio_mig_get_next_state()`
        // requires; `next` is valid for writes.
        to_result(unsafe {
            bindings::vfio_mig_get_next_state(self.as_raw(), cur as u32, new as u32, &mut next)
        })?;
        MigState::from_raw(next).ok_or(EINVAL)
    }
}

/// The `struct vfio_migration_ops` of a [`Migration`].
struct MigrationVtable<T: Migration>(core::marker::PhantomData<T>);

impl<T: Migration> MigrationVtable<T> {
    const OPS: bindings::vfio_migration_ops = bindings::vfio_migration_ops {
        migration_set_state: Some(Self::set_state_callback),
        migration_get_state: Some(Self::get_state_callback),
        migration_get_data_size: Some(Self::get_data_size_callback),
    };

    /// `vfio_migration_ops::migration_set_state`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>`.
    unsafe extern "C" fn set_state_callback(
        vdev: *mut bindings::vfio_device,
        new: bindings::vfio_device_mig_state,
    ) -> *mut bindings::file {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Device::<T>::from_raw(vdev) };
        let Some(new) = MigState::from_raw(new) else {
            return EINVAL.to_ptr();
        };
        match T::set_state(this, new) {
            // The VFIO core installs the file in a file descriptor, or puts it: our reference is
            // its.
            Ok(Some(file)) => file.into_raw(),
            Ok(None) => ptr::null_mut(),
            Err(e) => e.to_ptr(),
        }
    }

    /// `vfio_migration_ops::migration_get_state`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>` and `state` valid for writes.
    unsafe extern "C" fn get_state_callback(
        vdev: *mut bindings::vfio_device,
        state: *mut bindings::vfio_device_mig_state,
    ) -> c_int {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Device::<T>::from_raw(vdev) };
        match T::get_state(this) {
            Ok(s) => {
                // SAFETY: `state` is valid for writes (safety requirements).
                unsafe { *state = s as u32 };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `vfio_migration_ops::migration_get_data_size`.
    ///
    /// # Safety
    ///
    /// `vdev` is a live `Device<T>` and `size` valid for writes.
    unsafe extern "C" fn get_data_size_callback(
        vdev: *mut bindings::vfio_device,
        size: *mut c_ulong,
    ) -> c_int {
        // SAFETY: The VFIO core passes a live device of ours.
        let this = unsafe { Device::<T>::from_raw(vdev) };
        match T::get_data_size(this) {
            Ok(n) => {
                // SAFETY: `size` is valid for writes (safety requirements).
                unsafe { *size = n as c_ulong };
                0
            }
            Err(e) => e.to_errno(),
        }
    }
}

/// What the data file of a migration session reads and writes: the driver's side of a
/// [`DataFile`].
///
/// The file is a stream (no seek, no `pread`/`pwrite`): the driver keeps the position. Reads
/// (STOP_COPY, PRE_COPY) return the device's state and 0 at its end; writes (RESUMING) take the
/// state to load. Reads and writes may run concurrently with each other and with the device's
/// operations, and after the session ended (the driver then fails them, `ENODEV` as other
/// drivers do). The file holds an [`Arc`] of the data until it is closed, and holds the driver's
/// module.
#[vtable]
pub trait MigrationData: Send + Sync + Sized + 'static {
    /// `read(2)` of up to `buf.len()` bytes of the stream; 0 at its end.
    fn read(_this: ArcBorrow<'_, Self>, _buf: UserSliceWriter) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `write(2)` of `buf.len()` bytes of the stream; returns how many were taken.
    fn write(_this: ArcBorrow<'_, Self>, _buf: UserSliceReader) -> Result<usize> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The data file of a migration session: an anonymous inode file whose reads and writes go to a
/// [`MigrationData`], returned to the VFIO core by [`Migration::set_state`].
///
/// # Invariants
///
/// `file` is a valid file, one reference of which this object owns.
pub struct DataFile {
    file: NonNull<bindings::file>,
}

// SAFETY: A file reference may be put on any thread.
unsafe impl Send for DataFile {}

// SAFETY: A shared `DataFile` gives no access to the file.
unsafe impl Sync for DataFile {}

impl DataFile {
    /// A new data file named `name` (as `/proc/self/fd` shows it) for `data`: read-only if
    /// `D` implements only [`MigrationData::read`], write-only if only [`MigrationData::write`].
    pub fn new<D: MigrationData>(name: &'static CStr, data: Arc<D>) -> Result<Self> {
        const { assert!(D::HAS_READ || D::HAS_WRITE, "a data file reads or writes") };
        let flags = match (D::HAS_READ, D::HAS_WRITE) {
            (true, false) => bindings::O_RDONLY,
            (false, true) => bindings::O_WRONLY,
            _ => bindings::O_RDWR,
        };
        let private = data.into_foreign();
        // SAFETY: `name` is a NUL-terminated `'static` string and the table a constant; the file
        // owns `private` from now on, and its release gives it back.
        let file = unsafe {
            bindings::anon_inode_getfile(
                name.as_char_ptr(),
                const { &DataFileVtable::<D>::FOPS },
                private,
                flags as c_int,
            )
        };
        let file = match from_err_ptr(file) {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: `anon_inode_getfile()` failed, so `private` is still ours, from
                // `into_foreign()` above.
                drop(unsafe { Arc::<D>::from_foreign(private) });
                return Err(e);
            }
        };
        // SAFETY: `file` is a valid file, new and not installed anywhere yet, and its inode valid.
        // `stream_open()` cannot fail on it.
        unsafe { bindings::stream_open((*file).f_inode, file) };
        // INVARIANT: `anon_inode_getfile()` returned a file with one reference, ours.
        Ok(Self {
            // SAFETY: `from_err_ptr()` returned no error, and `anon_inode_getfile()` returns a
            // file or an error.
            file: unsafe { NonNull::new_unchecked(file) },
        })
    }

    /// Gives up our reference: the caller owns it.
    fn into_raw(self) -> *mut bindings::file {
        let file = self.file.as_ptr();
        core::mem::forget(self);
        file
    }
}

impl Drop for DataFile {
    fn drop(&mut self) {
        // SAFETY: We own a reference (type invariant).
        unsafe { bindings::fput(self.file.as_ptr()) };
    }
}

/// The `struct file_operations` of a [`DataFile`] of `D`.
struct DataFileVtable<D: MigrationData>(core::marker::PhantomData<D>);

impl<D: MigrationData> DataFileVtable<D> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        owner: this_module::<D::OwnerModule>().as_ptr(),
        read: if D::HAS_READ {
            Some(Self::read_callback)
        } else {
            None
        },
        write: if D::HAS_WRITE {
            Some(Self::write_callback)
        } else {
            None
        },
        release: Some(Self::release_callback),
        ..pin_init::zeroed()
    };

    /// `file_operations::read`.
    ///
    /// # Safety
    ///
    /// `file` is a file of a [`DataFile`] of `D`, open for the call; `buf` a user pointer.
    unsafe extern "C" fn read_callback(
        file: *mut bindings::file,
        buf: *mut c_char,
        count: usize,
        _ppos: *mut Offset,
    ) -> isize {
        // SAFETY: The file's private data is the `Arc<D>` of `DataFile::new()`, which the file
        // holds until its release, after the last read returned.
        let data = unsafe { <Arc<D> as ForeignOwnable>::borrow((*file).private_data) };
        let buf = UserSlice::new(UserPtr::from_ptr(buf.cast()), count).writer();
        D::read(data, buf).map_or_else(|e| e.to_errno() as isize, |n| n as isize)
    }

    /// `file_operations::write`.
    ///
    /// # Safety
    ///
    /// `file` is a file of a [`DataFile`] of `D`, open for the call; `buf` a user pointer.
    unsafe extern "C" fn write_callback(
        file: *mut bindings::file,
        buf: *const c_char,
        count: usize,
        _ppos: *mut Offset,
    ) -> isize {
        // SAFETY: As in `read_callback`.
        let data = unsafe { <Arc<D> as ForeignOwnable>::borrow((*file).private_data) };
        let buf = UserSlice::new(UserPtr::from_ptr(buf.cast_mut().cast()), count).reader();
        D::write(data, buf).map_or_else(|e| e.to_errno() as isize, |n| n as isize)
    }

    /// `file_operations::release`.
    ///
    /// # Safety
    ///
    /// `file` is a file of a [`DataFile`] of `D` whose last reference is gone.
    unsafe extern "C" fn release_callback(
        _inode: *mut bindings::inode,
        file: *mut bindings::file,
    ) -> c_int {
        // SAFETY: The private data is the `Arc<D>` of `DataFile::new()`, which the file owned
        // until now; no read or write runs any more.
        drop(unsafe { <Arc<D> as ForeignOwnable>::from_foreign((*file).private_data) });
        0
    }
}
