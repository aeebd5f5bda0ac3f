// SPDX-License-Identifier: GPL-2.0

//! The i915 provider: the gvt-rs policies on Intel GVT-g.
//!
//! With the gvt-rs series applied, `kvmgt.ko` accepts external scheduling
//! policies (`include/drm/intel/gvt_policy.h`). This module registers one,
//! named `gvt-rs`, whose ops drive the same [`Engine`](crate::engine::Engine)
//! as the simulated GPU: an administrator activates it per GPU by writing `gvt-rs` to
//! `/sys/bus/pci/devices/<GPU>/gvt/sched_policy`, and the GPU then appears
//! as `/sys/class/gvt_rs/<GPU>/` with the sysfs ABI of every gvt-rs GPU,
//! and each vGPU as `<mdev device>/gvt_rs/`.
//!
//! How GVT-g's constraints map onto the provider contract
//! (`Documentation/gvt-rs/provider-contract.rst`):
//!
//! * GVT-g places high GM (`alloc_high`, under `gvt->lock`) before the vGPU
//!   reaches the scheduler (`init_vgpu`, under `sched_lock`):
//!   [`Engine::place_vgpu`](crate::engine::Engine::place_vgpu) and
//!   [`Engine::attach_vgpu`](crate::engine::Engine::attach_vgpu) are separate steps.
//! * One current vGPU for all engines, switched once every engine drained:
//!   `pick_next` follows GVT-g's switch protocol ([`switch`]: the idle vGPU
//!   as a drain barrier), `may_dispatch` ends a turn on time.
//! * GVT-g swaps GGTT entries itself, per 64 MB chunk: `load_gtt` has
//!   nothing to do. It cannot move a vGPU's range or share the aperture, so
//!   the engine runs without relocation and with private low GM.
//! * Engine ids are i915's sparse `enum intel_engine_id`; the engine uses
//!   dense indices.
//! * Ops run under `sched_lock` (process context). The policy's timer only
//!   calls `intel_gvt_request_schedule()`.
//!
//! GVT-g's ops table, its pointers and private data are handled by
//! [`gvt_policy`], the Rust side of `include/drm/intel/gvt_policy.h`; this
//! provider implements its [`Policy`].
//!
//! The GPU's state is in `gpu.rs`, the ops on it in `ops.rs`, its side of
//! the engine's interface in `provider.rs`, the vGPUs' queue times in
//! `queue_times.rs`.

mod gpu;
pub mod gvt_policy;
mod ops;
mod provider;
mod queue_times;
pub(crate) mod switch;

use crate::engine::{
    sysfs::GpuClass,
    VgpuId, //
};
use gpu::I915Gpu;
use gvt_policy::{
    InitContext,
    Pick,
    Policy,
    SchedLocked, //
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// i915 engine ids (`I915_NUM_ENGINES` is below this).
const I915_ENGINE_IDS: usize = 32;
/// Bounds of the policy's timer, ns.
const TIMER_MIN_NS: u64 = 50_000;
const TIMER_MAX_NS: u64 = 100_000_000;
/// The size of one shared high-GM chunk (`INTEL_GVT_SHARED_GM_ALIGN`):
/// GVT-g tracks GGTT residency per 64 MB, the engine's slot size.
const SHARED_GM_ALIGN: u64 = kernel::bindings::INTEL_GVT_SHARED_GM_ALIGN as u64;

/// A GPU that uses the policy, in an op.
type Gvt = gvt_policy::Gvt<I915Policy>;
/// A vGPU of such a GPU, in an op.
type Vgpu = gvt_policy::Vgpu<I915Policy>;
/// A vGPU in the scheduler, tagged with its engine id.
type VgpuRef = gvt_policy::VgpuRef<I915Policy>;

/// The `gvt-rs` policy, registered with GVT-g while this exists.
pub(crate) type Registration = gvt_policy::Registration<I915Policy>;

/// Registers the `gvt-rs` policy; GPUs that activate it get their
/// device in `class`.
pub(crate) fn register(class: Arc<GpuClass>) -> impl PinInit<Registration, Error> {
    Registration::new(I915Policy { class })
}

/// The `gvt-rs` policy of GVT-g.
pub(crate) struct I915Policy {
    /// The class in which each GPU that activates the policy gets a device.
    class: Arc<GpuClass>,
}

#[vtable]
impl Policy for I915Policy {
    const NAME: &'static CStr = c"gvt-rs";
    type GpuData = Pin<KBox<I915Gpu>>;
    type VgpuData = VgpuId;

    fn init(&self, gvt: &Gvt, ctx: &mut InitContext<'_, Self>) -> Result<Self::GpuData> {
        I915Gpu::new(gvt, &self.class, ctx)
    }

    fn init_vgpu(gpu: &Self::GpuData, vgpu: &Vgpu) -> Result<Option<VgpuRef>> {
        if vgpu.is_idle() {
            // The idle vGPU: nothing to keep.
            return Ok(None);
        }
        gpu.init_vgpu(vgpu).map(Some)
    }

    fn clean_vgpu(gpu: &Self::GpuData, vgpu: &Vgpu, vref: VgpuRef) {
        gpu.clean_vgpu(vgpu.gvt(), *vref.data());
    }

    fn start_schedule(gpu: &Self::GpuData, _vgpu: &Vgpu, id: &VgpuId) {
        gpu.start_schedule(*id);
    }

    fn stop_schedule(gpu: &Self::GpuData, vgpu: &Vgpu, id: &VgpuId) {
        gpu.stop_schedule(vgpu.gvt(), *id);
    }

    fn pick_next(
        gpu: &Self::GpuData,
        _gvt: &Gvt,
        timer: bool,
        locked: &SchedLocked<'_, Self>,
    ) -> Pick<Self> {
        gpu.pick_next(timer, locked)
    }

    fn switched(gpu: &Self::GpuData, gvt: &Gvt, _prev: Option<&Vgpu>, next: Option<&Vgpu>) {
        gpu.switched(gvt, next.is_none_or(|v| v.is_idle()));
    }

    fn queued(gpu: &Self::GpuData, vgpu: &Vgpu, id: &VgpuId, engine: u32) {
        gpu.queued(vgpu.gvt(), *id, engine);
    }

    fn may_dispatch(gpu: &Self::GpuData, vgpu: &Vgpu, id: &VgpuId, engine: u32) -> bool {
        gpu.may_dispatch(vgpu.gvt(), *id, engine)
    }

    fn dispatched(gpu: &Self::GpuData, _vgpu: &Vgpu, id: &VgpuId, engine: u32) {
        gpu.dispatched(*id, engine);
    }

    fn completed(
        gpu: &Self::GpuData,
        _vgpu: &Vgpu,
        id: &VgpuId,
        engine: u32,
        gpu_ns: u64,
        status: Result,
    ) {
        gpu.completed(*id, engine, gpu_ns, status);
    }

    fn alloc_high(gpu: &Self::GpuData, vgpu: &Vgpu, size: u64) -> Result<u64> {
        gpu.alloc_high(vgpu, size)
    }

    fn free_high(gpu: &Self::GpuData, vgpu: &Vgpu) {
        gpu.free_high(vgpu);
    }

    fn high_avail(gpu: &Self::GpuData, _gvt: &Gvt, size: u64) -> u32 {
        gpu.high_avail(size)
    }
}
