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

use kernel::{
    prelude::*,
    sync::Arc,
    sysfs::{Attribute, Buffer, Dir, Parent},
};

mod core_kunit;
pub mod engine;
#[path = "core/src/gvt_core.rs"]
pub mod gvt_core;
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
    params: {
        sim_class_gpu: bool {
            default: true,
            description: "Offer the simulated GPU gvtsim0 as a class device, for machines without a spare PCI function (any PCI function becomes a simulated GPU when bound to the gvtsim driver)",
        },
    },
}

/// Module-wide state shown in `/sys/kernel/gvt_rs/`.
pub(crate) struct Global;

fn show_version(_: &Global, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", gvt_core::VERSION))
}

static VERSION_ATTR: Attribute<Global> = Attribute::read_only(c"version", show_version);
static GLOBAL_ATTRS: [&Attribute<Global>; 1] = [&VERSION_ATTR];

/// Fields drop in declaration order: the GVT-g policy goes first (no GPU
/// can use it any more: each holds a reference on this module), then the
/// simulated GPU, then the top directory.
struct GvtRs {
    #[cfg(CONFIG_GVT_RS_I915)]
    _i915: core::pin::Pin<KBox<i915::Registration>>,
    #[cfg(CONFIG_GVT_RS_SIM)]
    _sim: SimProvider,
    _sysfs: Arc<Dir<Global>>,
}

/// The simulated GPUs: PCI functions bound to the `gvtsim` driver and,
/// unless `sim_class_gpu=0`, the class device `gvtsim0`. Fields drop in
/// declaration order, the PCI driver first (unbinding its GPUs); every GPU
/// holds a reference to the mdev driver's registration.
#[cfg(CONFIG_GVT_RS_SIM)]
struct SimProvider {
    #[cfg(CONFIG_PCI)]
    _pci: sim::pci::Registration,
    _class_gpu: Option<sim::Instance>,
}

#[cfg(CONFIG_GVT_RS_SIM)]
impl SimProvider {
    fn new(top: &Arc<Dir<Global>>, module: &'static ThisModule) -> Result<Self> {
        let driver = Arc::new(sim::DriverRegistration::new()?, GFP_KERNEL)?;
        let class_gpu = if module_parameters::sim_class_gpu.value() {
            // SAFETY: No parent device.
            Some(unsafe { sim::Instance::new(c"gvtsim0", None, top.as_parent(), driver.clone())? })
        } else {
            None
        };
        #[cfg(CONFIG_PCI)]
        let pci = sim::pci::Registration::new(top.clone(), driver, module)?;
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
        let sysfs = Arc::new(
            Dir::new(c"gvt_rs", Parent::kernel()?, Global, &GLOBAL_ATTRS)?,
            GFP_KERNEL,
        )?;
        #[cfg(CONFIG_GVT_RS_SIM)]
        let sim = SimProvider::new(&sysfs, module)?;
        #[cfg(not(CONFIG_GVT_RS_SIM))]
        let _ = module;
        // Last: GVT-g may activate the policy at once (kvmgt.sched_policy).
        #[cfg(CONFIG_GVT_RS_I915)]
        let i915 = i915::Registration::new(sysfs.clone())?;
        pr_info!("gvt-rs {} loaded\n", gvt_core::VERSION);
        Ok(Self {
            #[cfg(CONFIG_GVT_RS_I915)]
            _i915: i915,
            #[cfg(CONFIG_GVT_RS_SIM)]
            _sim: sim,
            _sysfs: sysfs,
        })
    }
}

impl Drop for GvtRs {
    fn drop(&mut self) {
        pr_info!("gvt-rs unloaded\n");
    }
}
