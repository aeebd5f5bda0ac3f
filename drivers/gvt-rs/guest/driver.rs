// SPDX-License-Identifier: GPL-2.0

//! The PCI driver: probe, removal and the `/dev/gvtgpuN` numbers.

use crate::{
    device::{
        Gpu,
        Info, //
    },
    irq::Interrupt,
    regs::BAR0_SIZE, //
};
use kernel::{
    device::{
        Bound,
        Core, //
    },
    miscdevice::{
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    pci,
    prelude::*,
    sync::{
        global_lock,
        Arc, //
    }, //
};

/// vGPUs one guest can have (`/dev/gvtgpu0` to `/dev/gvtgpu7`).
const MAX_GPUS: usize = 8;

/// Names of the misc devices, by number.
const NAMES: [&CStr; MAX_GPUS] = [
    c"gvtgpu0", c"gvtgpu1", c"gvtgpu2", c"gvtgpu3", c"gvtgpu4", c"gvtgpu5", c"gvtgpu6", c"gvtgpu7",
];

global_lock! {
    // SAFETY: The module initialiser calls `init()` before it registers the driver, the only
    // user of the lock.
    pub(crate) unsafe(uninit) static GPUS: Mutex<[Option<Arc<Gpu>>; MAX_GPUS]> =
        [const { None }; MAX_GPUS];
}

/// Returns the vGPU of the misc device called `name`.
pub(crate) fn lookup(name: &CStr) -> Option<Arc<Gpu>> {
    let n = NAMES.iter().position(|known| *known == name)?;
    GPUS.lock()[n].clone()
}

/// A `/dev/gvtgpuN` number in use, released when dropped.
struct Slot(usize);

impl Slot {
    /// Takes the lowest free number for `gpu`.
    fn take(gpu: Arc<Gpu>) -> Result<Self> {
        let mut gpus = GPUS.lock();
        let n = gpus.iter().position(Option::is_none).ok_or(EBUSY)?;
        gpus[n] = Some(gpu);
        Ok(Self(n))
    }

    fn name(&self) -> &'static CStr {
        NAMES[self.0]
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let gpu = GPUS.lock()[self.0].take();
        // The vGPU may go here: not under the lock.
        drop(gpu);
    }
}

/// The driver data of a bound vGPU.
///
/// Fields are dropped in declaration order: the misc device first (no new
/// opens), then the interrupt, then the number; open files keep the
/// [`Gpu`] alive, but its registers and DMA memory are revoked once the
/// device is unbound.
#[pin_data]
pub(crate) struct GuestDevice<'bound> {
    #[pin]
    misc: MiscDeviceRegistration<Gpu>,
    #[pin]
    irq: Interrupt<'bound>,
    slot: Slot,
    gpu: Arc<Gpu>,
}

pub(crate) struct GuestDriver;

// The vGPU's vendor is the one the device table names.
const _: () =
    assert!(crate::protocol::PCI_VENDOR as u32 == kernel::bindings::PCI_VENDOR_ID_REDHAT_QUMRANET);

kernel::pci_device_table!(
    PCI_TABLE,
    <GuestDriver as pci::Driver>::IdInfo,
    [(
        pci::DeviceId::from_id(
            pci::Vendor::REDHAT_QUMRANET,
            crate::protocol::PCI_DEVICE as u32
        ),
        ()
    )]
);

impl pci::Driver for GuestDriver {
    type IdInfo = ();
    type Data<'bound> = GuestDevice<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pin_init::pin_init_scope(move || {
            pdev.enable_device_mem()?;
            pdev.set_master();
            let pdev: &'bound pci::Device<Bound> = pdev;
            let bar = pdev.iomap_region_sized::<BAR0_SIZE>(0, c"gvt_rs_guest")?;
            let info = Info::read(pdev.as_ref(), &bar)?;
            let gpu = Arc::pin_init(
                Gpu::new(pdev.as_ref(), info, bar.into_devres()?)?,
                GFP_KERNEL,
            )?;
            let slot = Slot::take(gpu.clone())?;
            let name = slot.name();
            let number = slot.0;
            Ok(try_pin_init!(GuestDevice {
                irq <- Interrupt::new(pdev, gpu.clone()),
                _: {
                    gpu.set_irq_kind(irq.kind());
                    gpu.start()?;
                },
                misc <- MiscDeviceRegistration::register(MiscDeviceOptions { name }),
                _: {
                    dev_info!(
                        pdev,
                        "vGPU {} is /dev/gvtgpu{}: {} engine(s), ring of {}, irq {}\n",
                        info.vgpu_id,
                        number,
                        info.engines,
                        info.ring_size,
                        gpu.irq_kind().name()
                    );
                },
                slot,
                gpu,
            }? Error))
        })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        this.gpu.remove();
        dev_info!(
            pdev,
            "removed vGPU {} (/dev/gvtgpu{})\n",
            this.gpu.info.vgpu_id,
            this.slot.0
        );
    }
}
