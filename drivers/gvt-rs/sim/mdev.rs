// SPDX-License-Identifier: GPL-2.0

//! The `gvtsim` mdev driver, whose vGPUs are VFIO PCI devices, and the
//! registration of a simulated GPU ([`Instance`]): its device in the class
//! `gvt_rs` and its mdev parent, on a PCI function or a class device of
//! its own. Module wiring, apart from what the GPU does.

use super::{
    gpu::SimGpu,
    vgpu::{
        VgpuHandle,
        VGPU_GROUP, //
    },
    TYPES, //
};
use crate::engine::sysfs::{
    self as esysfs,
    GpuClass,
    GpuDevice, //
};
use kernel::{
    class,
    device::{
        Core,
        Device, //
    },
    driver,
    mdev,
    page::PAGE_SIZE,
    prelude::*,
    sync::Arc,
    sysfs::{
        self,
        AttributeGroup, //
    },
    vfio,
    ThisModule, //
};

/// The simulated GPU's mdev driver, `gvtsim`: a vGPU of a type is a VFIO
/// PCI device.
pub(crate) struct SimMdev;

/// A simulated GPU as its mdev parent holds it.
pub(crate) struct SimParent {
    gpu: Arc<SimGpu>,
    /// The VFIO devices of its vGPUs. It drops after the parent removed
    /// them and waits until they are released: a file of
    /// `/dev/vfio/devices/` can hold one past its removal, and its release
    /// runs this module's code.
    vgpus: vfio::Devices,
}

#[vtable]
impl mdev::Driver for SimMdev {
    type ParentData = SimParent;
    type Data = VgpuHandle;

    const DEVICE_API: &'static CStr = c"vfio-pci";
    const DEVICE_GROUPS: &'static [Option<&'static AttributeGroup<VgpuHandle>>] =
        &[Some(&VGPU_GROUP), None];

    fn probe<'bound>(
        dev: &'bound mdev::Device<Core<'_>>,
        parent: &'bound SimParent,
        ty: usize,
    ) -> impl PinInit<VgpuHandle, Error> + 'bound {
        SimGpu::probe(&parent.gpu, &parent.vgpus, ty, dev.as_ref())
    }

    fn available(parent: &SimParent, ty: usize) -> u32 {
        TYPES.get(ty).map_or(0, |t| parent.gpu.engine.available(t))
    }

    /// GVT-g's format.
    fn description(_parent: &SimParent, ty: usize, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        let t = TYPES.get(ty).ok_or(EINVAL)?;
        sysfs::emit(
            page,
            fmt!(
                "low_gm_size: {}MB\nhigh_gm_size: {}MB\nfence: {}\nresolution: {}\nweight: {}\n",
                t.low_mb,
                t.high_mb,
                t.fences,
                t.resolution,
                t.weight
            ),
        )
    }
}

/// The mdev driver and the `gvtsim` device class, which every simulated
/// GPU uses (each holds a reference to both).
pub struct DriverRegistration {
    mdev: Arc<driver::Registration<mdev::Adapter<SimMdev>>>,
    class: Arc<class::Class>,
}

impl DriverRegistration {
    /// Registers the mdev driver `gvtsim` of `module` and the `gvtsim`
    /// device class.
    pub fn new(module: &'static ThisModule) -> Result<Self> {
        Ok(Self {
            mdev: Arc::pin_init(driver::Registration::new(c"gvtsim", module), GFP_KERNEL)?,
            class: class::Class::new(c"gvtsim")?,
        })
    }
}

/// One simulated GPU: its engine, its device in the class `gvt_rs` and its
/// mdev parent, on a PCI function or on a class device of its own.
pub struct Instance {
    parent: Option<Pin<KBox<mdev::Parent<SimMdev>>>>,
    gpu_dev: Option<GpuDevice>,
    class_dev: Option<class::Device>,
    gpu: Arc<SimGpu>,
}

impl Instance {
    /// Makes the simulated GPU `name`, with its device in `class` under
    /// `dev`, and registers `dev` as its mdev parent; without `dev`, a class
    /// device `name` of `gvtsim` stands for the GPU.
    pub fn new(
        name: &CStr,
        dev: Option<&Device>,
        class: &Arc<GpuClass>,
        driver: &DriverRegistration,
    ) -> Result<Self> {
        let gpu = SimGpu::new(name)?;
        let mut this = Self {
            parent: None,
            gpu_dev: None,
            class_dev: None,
            gpu,
        };
        // From here on `drop` undoes what was done.
        let dev = match dev {
            Some(dev) => dev,
            None => {
                let class_dev: &class::Device = this
                    .class_dev
                    .insert(class::Device::new(driver.class.clone(), name)?);
                class_dev.as_ref()
            }
        };
        this.gpu_dev = Some(esysfs::gpu_device(
            class,
            Some(dev),
            this.gpu.engine().clone(),
        )?);
        let types = TYPES.each_ref().map(|t| mdev::Type {
            sysfs_name: t.name,
            pretty_name: t.name,
        });
        let data = SimParent {
            gpu: this.gpu.clone(),
            vgpus: vfio::Devices::new()?,
        };
        this.parent = Some(KBox::pin_init(
            mdev::Parent::new(driver.mdev.clone(), dev, &types, data),
            GFP_KERNEL,
        )?);
        Ok(this)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // The parent goes first, removing every vGPU and waiting until
        // their VFIO devices are released; then the GPU's device, a child of
        // the parent's device, and that device; then the timers stop.
        drop(self.parent.take());
        drop(self.gpu_dev.take());
        drop(self.class_dev.take());
        self.gpu.shutdown();
    }
}
