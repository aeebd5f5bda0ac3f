// SPDX-License-Identifier: GPL-2.0

//! gvt_rs_sim: the simulated GPU, a provider of gvt_rs.
//!
//! An mdev parent (`/sys/class/mdev_bus/gvtsim0`) offers vGPU types shaped
//! like GVT-g's. Each vGPU is a VFIO PCI device (configuration space with an
//! MSI capability, a 4 KB BAR0 of registers, INTx and MSI with vfio-pci's
//! semantics, reset, device requests) that QEMU attaches to a guest. The
//! guest submits work as on GVT-g: descriptors in a ring in guest memory and
//! a doorbell register; the device fetches and scans them ([`ring`]) and
//! queues workloads on one of the GPU's engines, and reports completions in
//! a status page in guest memory. Engines execute one workload at a
//! time for its stated duration on an hrtimer, non-preemptively, and a vGPU
//! switch waits until every engine drained, as GVT-g's scheduler does. The
//! policy decisions come from the provider-agnostic [`Engine`] of gvt_rs.ko,
//! whose crates this one names with `--extern` (the Makefile) and whose
//! exported symbols it calls. The GPU has a physical GTT and every vGPU a
//! private GTT in kernel memory; on a switch the engine asks for the
//! non-resident slots only, which are really copied.
//!
//! Register map and semantics: `Documentation/gvt-rs/simulated-gpu.rst`.
//!
//! The GPU and its dispatch loop are in `gpu.rs`, its GTT in `gtt.rs`, its
//! side of the engine's interface in `provider.rs`, a vGPU's lifecycle and
//! VFIO state transitions in `vgpu.rs`, the mdev driver and the
//! registration of a GPU in `mdev.rs`; the device protocol is `../protocol.rs`.
//!
//! [`Engine`]: engine::Engine

mod copy;
mod delivery;
mod gpu;
mod gtt;
mod irq;
mod mdev;
mod migration;
#[cfg(CONFIG_PCI)]
mod pci;
// Shared with the guest driver (`guest/gvt_rs_guest.rs`).
#[path = "../protocol.rs"]
pub mod protocol;
mod provider;
mod regs;
mod ring;
mod vchannel;
mod vdev;
mod vgpu;
mod vmcpu;

// gvt_rs.ko's crates, by the paths the modules here name them with.
use ::gvt_core;
use engine::VgpuType;
pub use gpu::SimGpu;
use gtt::{
    dirty_bit,
    dirty_range,
    SCRUB_CHUNK, //
};
use gvt_core::slots::ENTRIES_PER_SLOT;
use gvt_rs_main::{
    engine,
    timer, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};
pub use mdev::{
    DriverRegistration,
    Instance, //
};
use vchannel::Workload;
use vgpu::SimVgpu;
pub use vgpu::VgpuHandle;

/// Number of engines of the simulated GPU (render and blitter).
pub const ENGINES: usize = 2;
/// Workloads a vGPU may queue per engine: a whole guest ring.
pub const QDEPTH: usize = protocol::RING_MAX as usize;
/// Longest workload accepted, us (GVT-g's watchdog would fire long before).
pub const MAX_DURATION_US: u32 = 100_000;
/// Guest-usable low GM (aperture) of the simulated GPU: 1 GB minus the
/// host's 128 MB.
const LOW_MB: u32 = 896;
/// Guest-usable high GM slots: 3456 MB, as the DymGPU paper's GPU.
const SLOTS: u16 = 54;
/// The most vGPUs the simulated GPU takes at once: the kernel's capacity
/// ([`engine::MAX_VGPUS`]). The `static` allocator fits at most 54
/// (one slot each); the sharing allocators place all 64.
const MAX_VGPUS: usize = engine::MAX_VGPUS;
/// Entries of the shared low-GM region (64 MB) under sharing allocators.
const LOW_SHARED_ENTRIES: u32 = ENTRIES_PER_SLOT;
const ENTRIES: usize = ENTRIES_PER_SLOT as usize;
const MIN_TIMER_NS: u64 = 50_000;

/// GVT-g's vGPU types (`intel_vgpu_configs[]`, gen9 names), and a small
/// one, `GVTg_V5_64`, for 64 vGPUs on the GPU: one high-GM slot and 16 MB
/// of aperture (last, so that the others keep their indices).
pub static TYPES: [VgpuType; 5] = [
    VgpuType {
        name: c"GVTg_V5_8",
        low_mb: 64,
        high_mb: 384,
        fences: 4,
        weight: 2,
        resolution: "1024x768",
    },
    VgpuType {
        name: c"GVTg_V5_4",
        low_mb: 128,
        high_mb: 512,
        fences: 4,
        weight: 4,
        resolution: "1920x1200",
    },
    VgpuType {
        name: c"GVTg_V5_2",
        low_mb: 256,
        high_mb: 1024,
        fences: 4,
        weight: 8,
        resolution: "1920x1200",
    },
    VgpuType {
        name: c"GVTg_V5_1",
        low_mb: 512,
        high_mb: 2048,
        fences: 4,
        weight: 16,
        resolution: "1920x1200",
    },
    VgpuType {
        name: c"GVTg_V5_64",
        low_mb: 16,
        high_mb: 64,
        fences: 1,
        weight: 1,
        resolution: "1024x768",
    },
];

module! {
    type: SimModule,
    name: "gvt_rs_sim",
    authors: ["gvt-rs developers"],
    description: "gvt-rs simulated GPU: an mdev parent whose vGPUs gvt_rs schedules",
    license: "GPL",
    imports_ns: ["GVT_RS"],
    params: {
        class_gpu: bool {
            default: true,
            description: "Offer the simulated GPU gvtsim0 as a class device, for machines without a spare PCI function (any PCI function becomes a simulated GPU when bound to the gvtsim driver)",
        },
    },
}

/// The module: the simulated GPUs on PCI functions bound to the `gvtsim`
/// driver and, unless `class_gpu=0`, the class device `gvtsim0`.
///
/// Every GPU holds a reference to the mdev driver's registration and to
/// the class of the GPUs' devices, which gvt_rs.ko owns.
struct SimModule {
    #[cfg(CONFIG_PCI)]
    _pci: pci::Registration,
    _class_gpu: Option<Instance>,
}

impl kernel::Module for SimModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let class = gvt_rs_main::gpu_class()?;
        let driver = Arc::new(DriverRegistration::new(module)?, GFP_KERNEL)?;
        let class_gpu = if module_parameters::class_gpu.value() {
            Some(Instance::new(c"gvtsim0", None, &class, &driver)?)
        } else {
            None
        };
        #[cfg(CONFIG_PCI)]
        let pci = pci::Registration::new(class, driver, module)?;
        #[cfg(not(CONFIG_PCI))]
        let _ = (class, driver);
        Ok(Self {
            #[cfg(CONFIG_PCI)]
            _pci: pci,
            _class_gpu: class_gpu,
        })
    }
}
