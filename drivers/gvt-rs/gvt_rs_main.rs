// SPDX-License-Identifier: GPL-2.0

//! gvt-rs: vGPU scheduling policies and graphics-memory placement.
//!
//! The policy logic lives in the `core/` crate, which is compiled both here
//! and on the host (`cargo test`). `engine/` wraps it with the kernel's
//! locking, clock and sysfs for one GPU, behind the provider contract
//! (`Documentation/gvt-rs/provider-contract.rst`); `sim/` is the simulated
//! GPU provider: an mdev parent whose vGPUs are opened through VFIO; `i915/`
//! (with `CONFIG_GVT_RS_I915`) offers the same engine to Intel GVT-g as an
//! external scheduling policy of `kvmgt.ko`.

use engine::sysfs::GpuClass;
use kernel::{
    prelude::*,
    sync::Arc, //
};

mod core_kunit;
pub mod engine;
// The policy core, a crate of its own (`gvt_core.rs`, the Makefile), by the
// path the driver's modules name it with.
use ::gvt_core;
#[cfg(CONFIG_GVT_RS_I915)]
pub mod i915;
#[cfg(CONFIG_GVT_RS_SIM)]
pub mod protocol;
#[cfg(CONFIG_GVT_RS_SIM)]
pub mod sim;
pub mod timer;

module! {
    type: GvtRs,
    name: "gvt_rs",
    authors: ["gvt-rs developers"],
    description: "Fair vGPU scheduling and shared graphics memory for mediated GPUs",
    license: "GPL",
    // The GVT-g policy interface (`CONFIG_GVT_RS_I915`). `module!` takes no
    // `cfg`; without the i915 provider no symbol of the namespace is used,
    // and an import that nothing uses has no effect.
    imports_ns: ["INTEL_GVT_POLICY"],
    params: {
        sim_class_gpu: bool {
            default: true,
            description: "Offer the simulated GPU gvtsim0 as a class device, for machines without a spare PCI function (any PCI function becomes a simulated GPU when bound to the gvtsim driver)",
        },
    },
}

/// The module: its providers and the class of the GPUs' devices.
///
/// The providers are independent of each other, and each holds a reference
/// on the class, which therefore goes when the last of them does, whatever
/// the order in which the fields drop. No GPU uses the GVT-g policy at
/// unload: each holds a reference on this module.
struct GvtRs {
    #[cfg(CONFIG_GVT_RS_I915)]
    _i915: Pin<KBox<i915::Registration>>,
    #[cfg(CONFIG_GVT_RS_SIM)]
    _sim: SimProvider,
    _class: Arc<GpuClass>,
}

/// The simulated GPUs: PCI functions bound to the `gvtsim` driver and,
/// unless `sim_class_gpu=0`, the class device `gvtsim0`.
///
/// Every GPU holds a reference to the mdev driver's registration and to the
/// class of the GPUs' devices.
#[cfg(CONFIG_GVT_RS_SIM)]
struct SimProvider {
    #[cfg(CONFIG_PCI)]
    _pci: sim::pci::Registration,
    _class_gpu: Option<sim::Instance>,
}

#[cfg(CONFIG_GVT_RS_SIM)]
impl SimProvider {
    fn new(class: &Arc<GpuClass>, module: &'static ThisModule) -> Result<Self> {
        let driver = Arc::new(sim::DriverRegistration::new(module)?, GFP_KERNEL)?;
        let class_gpu = if module_parameters::sim_class_gpu.value() {
            Some(sim::Instance::new(c"gvtsim0", None, class, &driver)?)
        } else {
            None
        };
        #[cfg(CONFIG_PCI)]
        let pci = sim::pci::Registration::new(class.clone(), driver, module)?;
        #[cfg(not(CONFIG_PCI))]
        let _ = (driver, module);
        Ok(Self {
            #[cfg(CONFIG_PCI)]
            _pci: pci,
            _class_gpu: class_gpu,
        })
    }
}

impl kernel::Module for GvtRs {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let class = engine::sysfs::gpu_class()?;
        #[cfg(CONFIG_GVT_RS_SIM)]
        let sim = SimProvider::new(&class, module)?;
        #[cfg(not(CONFIG_GVT_RS_SIM))]
        let _ = module;
        // Last: GVT-g may activate the policy at once (kvmgt.sched_policy).
        #[cfg(CONFIG_GVT_RS_I915)]
        let i915 = KBox::pin_init(i915::register(class.clone()), GFP_KERNEL)?;
        Ok(Self {
            #[cfg(CONFIG_GVT_RS_I915)]
            _i915: i915,
            #[cfg(CONFIG_GVT_RS_SIM)]
            _sim: sim,
            _class: class,
        })
    }
}
