// SPDX-License-Identifier: GPL-2.0

//! gvt-rs: vGPU scheduling policies and graphics-memory placement.
//!
//! The policy logic lives in the `core/` crate, which is compiled both here
//! and on the host (`cargo test`). `engine/` wraps it with the kernel's
//! locking, clock and sysfs for one GPU, behind the provider contract
//! (`Documentation/gvt-rs/provider-contract.rst`); `i915/` (with
//! `CONFIG_GVT_RS_I915`) offers the same engine to Intel GVT-g as an
//! external scheduling policy of `kvmgt.ko`. The simulated GPU is a provider
//! in a module of its own, `gvt_rs_sim.ko` (`sim/`), which calls the engine
//! through this module's exported symbols (`gvt_rs_exports.c`).

use engine::sysfs::GpuClass;
use kernel::{
    prelude::*,
    sync::{
        global_lock,
        Arc, //
    }, //
};

mod core_kunit;
pub mod engine;
// The policy core, a crate of its own (`gvt_core.rs`, the Makefile), by the
// path the driver's modules name it with.
use ::gvt_core;
#[cfg(CONFIG_GVT_RS_I915)]
pub mod i915;
mod lock_class;
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
}

global_lock! {
    // SAFETY: The module initialiser calls `init()` before anything else of
    // the module runs, and a provider module can call `gpu_class()` only
    // once this module is initialised.
    unsafe(uninit) static GPU_CLASS: Mutex<Option<Arc<GpuClass>>> = None;
}

/// The class of the GPUs' devices, `/sys/class/gvt_rs/`, for a provider in
/// a module of its own (`gvt_rs_sim.ko`).
///
/// It exists from this module's initialisation to its exit, and a module
/// that calls this function depends on this one, which cannot go first.
pub fn gpu_class() -> Result<Arc<GpuClass>> {
    GPU_CLASS.lock().clone().ok_or(ENODEV)
}

/// The module: its providers and the class of the GPUs' devices.
///
/// The class goes when the last of its users does: this module, the i915
/// provider, a provider module's GPUs. No GPU uses the GVT-g policy at
/// unload: each holds a reference on this module.
///
/// Public because the `#[vtable]` operations of the vGPUs' files
/// (`engine::sysfs::VgpuFiles`), which a provider module's driver uses,
/// name their owner module, this one.
pub struct GvtRs {
    #[cfg(CONFIG_GVT_RS_I915)]
    _i915: Pin<KBox<i915::Registration>>,
}

impl kernel::Module for GvtRs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: Called once, first: nothing reads `GPU_CLASS` before.
        unsafe { GPU_CLASS.init() };
        let class = engine::sysfs::gpu_class()?;
        // GVT-g may activate the policy at once (kvmgt.sched_policy).
        #[cfg(CONFIG_GVT_RS_I915)]
        let i915 = KBox::pin_init(i915::register(class.clone()), GFP_KERNEL)?;
        // Last, when nothing can fail any more (a failed init runs no
        // `drop`): no provider module can load before this one is live.
        *GPU_CLASS.lock() = Some(class);
        Ok(Self {
            #[cfg(CONFIG_GVT_RS_I915)]
            _i915: i915,
        })
    }
}

impl Drop for GvtRs {
    fn drop(&mut self) {
        GPU_CLASS.lock().take();
    }
}
