// SPDX-License-Identifier: GPL-2.0

//! gvt_rs_guest: the guest driver for the gvt-rs simulated vGPU.
//!
//! A virtual machine sees a vGPU of the gvt-rs simulated GPU, attached with
//! QEMU's `vfio-pci`, as PCI device 8086:7a5a. This driver owns the vGPU's
//! command ring per engine and its status page in DMA memory, handles its
//! MSI (or INTx) interrupt, and offers `/dev/gvtgpuN`, whose ioctls submit
//! workloads and wait for their fences.
//!
//! - [`regs`]: the device protocol (`include/uapi/linux/gvt_rs_sim.h`);
//! - [`device`]: rings, status page, submission, waiting, reset, removal;
//! - [`irq`]: the interrupt vector and handler;
//! - [`file`]: the misc device and its ioctls (`gvt_rs_guest.h`);
//! - [`driver`]: the PCI driver.
//!
//! `Documentation/gvt-rs/guest-driver.rst` describes the driver and its ABI.

use kernel::{
    pci,
    prelude::*,
    InPlaceModule,
    ModuleMetadata, //
};

mod device;
mod driver;
mod file;
mod irq;
#[path = "../protocol.rs"]
pub mod protocol;
mod regs;

module! {
    type: GuestModule,
    name: "gvt_rs_guest",
    authors: ["gvt-rs developers"],
    description: "Guest driver for the gvt-rs simulated vGPU",
    license: "GPL",
    params: {
        unchecked_submit: bool {
            default: false,
            description: "Allow GVT_GPU_IOC_SUBMIT_RAW, which queues raw descriptors unchecked (to test the host's command scanner)",
        },
    },
}

#[pin_data]
struct GuestModule {
    #[pin]
    _driver: kernel::driver::Registration<pci::Adapter<driver::GuestDriver>>,
}

impl InPlaceModule for GuestModule {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: The module initialiser runs once, and it initialises the lock before the
        // driver, its only user, is registered.
        unsafe { driver::GPUS.init() };
        try_pin_init!(Self {
            _driver <- kernel::driver::Registration::new(<Self as ModuleMetadata>::NAME, module),
        })
    }
}
