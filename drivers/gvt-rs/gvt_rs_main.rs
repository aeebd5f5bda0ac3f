// SPDX-License-Identifier: GPL-2.0

//! gvt-rs: vGPU scheduling policies and graphics-memory placement.
//!
//! The policy logic lives in the `core/` crate, which is compiled both here
//! and on the host (`cargo test`). `engine/` wraps it with the kernel's
//! locking, clock and sysfs for one GPU, behind the provider contract
//! (`Documentation/gvt-rs/provider-contract.rst`); `sim/` is the simulated
//! GPU provider: an mdev parent whose vGPUs are opened through VFIO.

use core::pin::Pin;
use kernel::{
    prelude::*,
    sysfs::{Attribute, Buffer, Dir, Parent},
};

pub mod engine;
#[path = "core/src/gvt_core.rs"]
pub mod gvt_core;
mod core_kunit;
pub mod sim;

module! {
    type: GvtRs,
    name: "gvt_rs",
    authors: ["gvt-rs developers"],
    description: "Fair vGPU scheduling and shared graphics memory for mediated GPUs",
    license: "GPL",
}

/// Module-wide state shown in `/sys/kernel/gvt_rs/`.
struct Global;

fn show_version(_: &Global, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", gvt_core::VERSION))
}

static VERSION_ATTR: Attribute<Global> = Attribute::read_only(c"version", show_version);
static GLOBAL_ATTRS: [&Attribute<Global>; 1] = [&VERSION_ATTR];

/// Fields drop in declaration order: the mdev parent goes first (removing
/// every vGPU), then the GPU's sysfs directory, the GPU, the top directory.
struct GvtRs {
    _parent: sim::ParentRegistration,
    _gpu_dir: Dir<engine::sysfs::GpuDir>,
    _gpu: Pin<KBox<sim::SimGpu>>,
    _sysfs: Dir<Global>,
}

impl kernel::Module for GvtRs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let sysfs = Dir::new(c"gvt_rs", Parent::kernel()?, Global, &GLOBAL_ATTRS)?;
        let gpu = sim::SimGpu::new()?;
        let gpu_dir = gpu.sysfs(sysfs.as_parent())?;
        // SAFETY: `_parent` is dropped before `_gpu` (field order).
        let parent = unsafe { sim::ParentRegistration::new(&gpu)? };
        pr_info!("gvt-rs {} loaded\n", gvt_core::VERSION);
        Ok(Self {
            _parent: parent,
            _gpu_dir: gpu_dir,
            _gpu: gpu,
            _sysfs: sysfs,
        })
    }
}

impl Drop for GvtRs {
    fn drop(&mut self) {
        pr_info!("gvt-rs unloaded\n");
    }
}
