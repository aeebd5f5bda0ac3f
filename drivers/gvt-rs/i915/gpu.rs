// SPDX-License-Identifier: GPL-2.0

//! One GPU that activated the `gvt-rs` policy: its engine, its vGPU table
//! and the timer that asks GVT-g for a decision, made when GVT-g calls the
//! `init` op. The ops on it are in `ops.rs`, its side of the engine's
//! interface in `provider.rs`.

use super::gvt_policy::{
    InitContext,
    ScheduleHandle,
    VgpuKey, //
};
use super::{
    queue_times::QueueTimes,
    switch::GvtgProtocol,
    Gvt,
    I915Policy,
    Vgpu,
    VgpuRef,
    I915_ENGINE_IDS,
    SHARED_GM_ALIGN,
    TIMER_MAX_NS,
    TIMER_MIN_NS, //
};
use crate::engine::{
    sysfs::{
        self as esysfs,
        GpuClass,
        GpuDevice,
        VgpuDir, //
    },
    Engine,
    GpuConfig,
    PerVgpu,
    VgpuId,
    MAX_SLOTS,
    MAX_VGPUS, //
};
use crate::gvt_core::sched::MAX_ENGINES;
use crate::timer::{
    Timer,
    TimerTarget, //
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
    sysfs::kobject::Dir,
    warn_on, //
};

/// What the provider keeps of one vGPU, from `alloc_high` to `free_high`.
pub(super) struct Entry {
    /// GVT-g's vGPU; `None` once GVT-g freed it while the engine still
    /// holds its id (see [`I915Gpu::free_high`]).
    pub(super) key: Option<VgpuKey>,
    /// The vGPU in the scheduler, from `init_vgpu` to `clean_vgpu`.
    pub(super) vref: Option<VgpuRef>,
    pub(super) times: KBox<QueueTimes>,
    pub(super) dir: Option<Dir<VgpuDir>>,
}

/// The policy timer's target: asks GVT-g for a decision.
struct ScheduleRequest(ScheduleHandle<I915Policy>);

/// The timer (process context).
impl TimerTarget for ScheduleRequest {
    fn timer_expired(&self, _index: usize) {
        self.0.request();
    }
}

/// One GPU that uses the `gvt-rs` policy: made by the `init` op, dropped by
/// `clean` (GVT-g's private pointer owns it in between).
///
/// Its drop stops the timer first ([`PinnedDrop`]), so that no handler asks
/// GVT-g for a decision once `clean` returned; the other fields hold no
/// reference to each other and may drop in any order within `clean`. The
/// slot pool's reservation is released after the drop, by
/// [`gvt_policy`](super::gvt_policy).
///
/// # Invariants
///
/// Every `Some` key in `vgpus` is a vGPU's between its `alloc_high` and
/// `free_high` ops: [`I915Gpu::alloc_high`] stores it and
/// [`I915Gpu::free_high`] removes it.
#[pin_data(PinnedDrop)]
pub(crate) struct I915Gpu {
    pub(super) engine: Arc<Engine>,
    /// Engine index + 1 of each i915 engine id (0: not used by GVT-g).
    engine_index: [u8; I915_ENGINE_IDS],
    /// Start of the slot pool in the GGTT.
    pub(super) pool_start: u64,
    /// vGPUs by engine id, allocated when the GPU registers. Innermost
    /// lock: taken under the engine's.
    #[pin]
    pub(super) vgpus: Mutex<PerVgpu<Option<Entry>>>,
    /// GVT-g's switch state.
    #[pin]
    pub(super) gvtg: GvtgProtocol,
    /// Asks GVT-g for a decision at the engine's next deadline.
    timer: Arc<Timer<ScheduleRequest>>,
    _dev: GpuDevice,
}

#[pinned_drop]
impl PinnedDrop for I915Gpu {
    fn drop(self: Pin<&mut Self>) {
        // Nothing armed, queued or running after this: the timer releases
        // its `ScheduleRequest` (and so its schedule handle).
        self.timer.shutdown();
    }
}

impl I915Gpu {
    /// The state of GPU `gvt`, activating the policy: an engine for its
    /// engines, the slot pool reserved in its high GM, its device in
    /// `class` under the GPU's PCI device.
    pub(super) fn new(
        gvt: &Gvt,
        class: &Arc<GpuClass>,
        ctx: &mut InitContext<'_, I915Policy>,
    ) -> Result<Pin<KBox<Self>>> {
        let mask = gvt.engine_mask();
        let mut engine_index = [0u8; I915_ENGINE_IDS];
        let mut engines = 0usize;
        for id in 0..I915_ENGINE_IDS {
            if mask & (1u32 << id) == 0 {
                continue;
            }
            if engines >= MAX_ENGINES {
                return Err(EINVAL);
            }
            engines = engines.saturating_add(1);
            if let Some(i) = engine_index.get_mut(id) {
                *i = u8::try_from(engines).map_err(|_| EINVAL)?;
            }
        }
        let (_low, high) = gvt.gm_avail();
        let slots = (high / SHARED_GM_ALIGN).min(MAX_SLOTS as u64);
        let slots = u16::try_from(slots).map_err(|_| EINVAL)?;
        if slots == 0 {
            return Err(ENOSPC);
        }
        let engine = Arc::pin_init(
            Engine::new(
                gvt.device().name(),
                GpuConfig {
                    engines,
                    // GVT-g accounts the aperture itself; it stays private.
                    low_mb: u32::MAX,
                    slots,
                    low_shared_entries: 0,
                    relocate: false,
                    // What the provider takes; GVT-g itself creates at most
                    // `GVT_MAX_VGPU - 1` (7) today.
                    max_vgpus: MAX_VGPUS,
                },
            )?,
            GFP_KERNEL,
        )?;
        let dev = esysfs::gpu_device(class, Some(gvt.device()), engine.clone())?;
        let timer = Timer::new(0)?;
        let vgpus = PerVgpu::new(|| None)?;
        let size = u64::from(slots)
            .checked_mul(SHARED_GM_ALIGN)
            .ok_or(EINVAL)?;
        let pool_start = ctx.gm_reserve(size)?;
        let request = Arc::new(ScheduleRequest(ctx.schedule_handle()), GFP_KERNEL)?;
        let gpu = KBox::pin_init(
            try_pin_init!(Self {
                engine,
                engine_index,
                pool_start,
                vgpus <- new_mutex!(vgpus, "gvt_rs_i915_vgpus"),
                gvtg <- GvtgProtocol::new(),
                timer,
                _dev: dev,
            }),
            GFP_KERNEL,
        )?;
        gpu.timer.bind(request)?;
        Ok(gpu)
    }

    /// Dense engine index of i915 engine `id`.
    pub(super) fn engine(&self, id: u32) -> Option<usize> {
        let i = *self.engine_index.get(usize::try_from(id).ok()?)?;
        usize::from(i).checked_sub(1)
    }

    /// Arms the timer for the engine's next deadline.
    pub(super) fn arm_timer(&self) {
        let delay = self
            .engine
            .next_timer()
            .saturating_sub(self.engine.now_ns())
            .clamp(TIMER_MIN_NS, TIMER_MAX_NS);
        self.timer.start(delay);
    }

    /// Runs `f` on the entry of vGPU `id`.
    ///
    /// The ops that call this run between the vGPU's `alloc_high` and
    /// `free_high` (GVT-g's order), when its entry exists; a missing one is
    /// a bug, and warns.
    pub(super) fn with_entry<R>(&self, id: VgpuId, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
        let mut t = self.vgpus.lock();
        let entry = t[id].as_mut();
        if warn_on!(entry.is_none()) {
            return None;
        }
        entry.map(f)
    }

    /// Runs `f` on vGPU `id` in the scheduler, if it is.
    pub(super) fn with_vgpu<R>(&self, id: VgpuId, f: impl FnOnce(&VgpuRef) -> R) -> Option<R> {
        let t = self.vgpus.lock();
        t[id].as_ref()?.vref.as_ref().map(f)
    }

    /// The engine id of GVT-g's vGPU `vgpu`.
    pub(super) fn id_of(&self, vgpu: &Vgpu) -> Option<VgpuId> {
        let key = vgpu.key();
        let t = self.vgpus.lock();
        let found = t
            .iter()
            .find(|(_, e)| e.as_ref().and_then(|e| e.key) == Some(key));
        found.map(|(id, _)| id)
    }
}
