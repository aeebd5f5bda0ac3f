// SPDX-License-Identifier: GPL-2.0

//! The simulated GPU on a PCI function.
//!
//! Managers find GPUs' mdev types under PCI devices: libvirt's node-device
//! driver, OpenStack Nova and Proxmox list `mdev_supported_types` of PCI
//! parents only, which is where KVMGT puts them (the i915 GPU). The PCI
//! driver `gvtsim` turns any PCI function an admin binds to it into a
//! simulated GPU with that parent:
//!
//! ```text
//! echo gvtsim > /sys/bus/pci/devices/0000:00:10.0/driver_override
//! echo 0000:00:10.0 > /sys/bus/pci/drivers_probe
//! ```
//!
//! Its ID table is empty, so, like vfio-pci's override-only entries, it never
//! claims a device by itself. The function's hardware is not used: the GPU
//! is simulated. Its GPU device is `/sys/class/gvt_rs/<address>/`, under the
//! function, as the i915 provider names a real GPU's.

use super::{
    DriverRegistration,
    Instance, //
};
use crate::engine::sysfs::GpuClass;
use core::{
    pin::Pin,
    ptr,
    sync::atomic::{
        AtomicPtr,
        Ordering, //
    }, //
};
use kernel::{
    device::Core,
    device_id::IdArray,
    driver,
    pci,
    prelude::*,
    sync::Arc, //
};

/// What a bound PCI function's simulated GPU needs from the module.
struct Shared {
    class: Arc<GpuClass>,
    driver: Arc<DriverRegistration>,
}

/// The [`Shared`] state of the live [`Registration`], for `probe` (which gets
/// no context pointer).
static SHARED: AtomicPtr<Shared> = AtomicPtr::new(ptr::null_mut());

/// No IDs: the driver binds only where `driver_override` names it.
static PCI_TABLE: IdArray<pci::DeviceId, (), 0> = IdArray::new([]);

/// The `gvtsim` PCI driver.
struct SimPciDriver;

impl pci::Driver for SimPciDriver {
    type IdInfo = ();
    type Data<'bound> = Instance;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        let shared = SHARED.load(Ordering::Acquire);
        // SAFETY: A probe runs only while the driver is registered, so
        // `SHARED` points to the live registration's `Shared` (type
        // invariant of `Registration`).
        let shared = unsafe { shared.as_ref() }.ok_or(ENODEV)?;
        let dev = pdev.as_ref();
        let gpu = Instance::new(dev.name(), Some(dev), &shared.class, &shared.driver)?;
        // dev_info!() names the driver and the device already.
        dev_info!(dev, "simulated GPU, mdev parent\n");
        Ok(gpu)
    }
}

/// Registration of the `gvtsim` PCI driver.
///
/// # Invariants
///
/// While `driver` is `Some`, the driver is registered and [`SHARED`] points
/// to `_shared`.
pub(crate) struct Registration {
    driver: Option<Pin<KBox<driver::Registration<pci::Adapter<SimPciDriver>>>>>,
    _shared: Pin<KBox<Shared>>,
}

impl Registration {
    /// Registers the `gvtsim` PCI driver; functions bound to it get their
    /// GPU device in `class` and use the mdev driver `driver`.
    pub(crate) fn new(
        class: Arc<GpuClass>,
        driver: Arc<DriverRegistration>,
        module: &'static ThisModule,
    ) -> Result<Self> {
        let shared = KBox::pin(Shared { class, driver }, GFP_KERNEL)?;
        let p = ptr::from_ref::<Shared>(&shared).cast_mut();
        SHARED
            .compare_exchange(ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| EBUSY)?;
        match KBox::pin_init(driver::Registration::new(c"gvtsim", module), GFP_KERNEL) {
            // INVARIANT: Registered, and `SHARED` points to `_shared`.
            Ok(driver) => Ok(Self {
                driver: Some(driver),
                _shared: shared,
            }),
            Err(e) => {
                SHARED.store(ptr::null_mut(), Ordering::Release);
                Err(e)
            }
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Unregistering unbinds every function, removing its vGPUs, and
        // waits for probes in flight; only then may `_shared` go.
        drop(self.driver.take());
        SHARED.store(ptr::null_mut(), Ordering::Release);
    }
}
