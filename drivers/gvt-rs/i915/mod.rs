// SPDX-License-Identifier: GPL-2.0

//! The i915 provider: the gvt-rs policies on Intel GVT-g.
//!
//! With the gvt-rs series applied, `kvmgt.ko` accepts external scheduling
//! policies (`include/drm/intel/gvt_policy.h`). This module registers one,
//! named `gvt-rs`, whose ops drive the same [`Engine`] as the simulated GPU:
//! an administrator activates it per GPU by writing `gvt-rs` to
//! `/sys/bus/pci/devices/<GPU>/gvt/sched_policy`, and the GPU then appears
//! as `/sys/class/gvt_rs/<GPU>/` with the sysfs ABI of every gvt-rs GPU,
//! and each vGPU as `<mdev device>/gvt_rs/`.
//!
//! How GVT-g's constraints map onto the provider contract
//! (`Documentation/gvt-rs/provider-contract.rst`):
//!
//! * GVT-g places high GM (`alloc_high`, under `gvt->lock`) before the vGPU
//!   reaches the scheduler (`init_vgpu`, under `sched_lock`):
//!   [`Engine::place_vgpu`] and [`Engine::attach_vgpu`] are separate steps.
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

pub mod gvt_policy;
pub(crate) mod switch;

use crate::engine::{
    per_vgpu,
    sysfs::{
        self as esysfs,
        GpuClass,
        GpuDevice,
        VgpuDir, //
    },
    Engine,
    GpuConfig,
    Provider,
    VgpuId,
    MAX_SLOTS,
    MAX_VGPUS, //
};
use crate::gvt_core::{
    sched::MAX_ENGINES,
    slots::Move, //
};
use crate::timer::{
    Timer,
    TimerTarget, //
};
use gvt_policy::{
    InitContext,
    Pick,
    Policy,
    SchedLocked,
    ScheduleHandle,
    VgpuKey, //
};
use kernel::{
    dev_err,
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        Mutex, //
    },
    sysfs::kobject::{
        Dir,
        Parent, //
    },
    warn_on, //
};
use switch::{
    GvtgAnswer,
    GvtgProtocol, //
};

/// i915 engine ids (`I915_NUM_ENGINES` is below this).
const I915_ENGINE_IDS: usize = 32;
/// Queue timestamps kept per vGPU and engine, for dispatch latency.
const QUEUE_TIMES: usize = 32;
/// Bounds of the policy's timer, ns.
const TIMER_MIN_NS: u64 = 50_000;
const TIMER_MAX_NS: u64 = 100_000_000;
/// The size of one shared high-GM chunk (`INTEL_GVT_SHARED_GM_ALIGN`):
/// GVT-g tracks GGTT residency per 64 MB, the engine's slot size.
const SHARED_GM_ALIGN: u64 = kernel::bindings::INTEL_GVT_SHARED_GM_ALIGN as u64;

/// Queue times of one vGPU's workloads, per engine (FIFO rings).
struct QueueTimes {
    t: [[u64; QUEUE_TIMES]; MAX_ENGINES],
    head: [usize; MAX_ENGINES],
    len: [usize; MAX_ENGINES],
}

impl QueueTimes {
    const EMPTY: Self = Self {
        t: [[0; QUEUE_TIMES]; MAX_ENGINES],
        head: [0; MAX_ENGINES],
        len: [0; MAX_ENGINES],
    };

    /// Records a queue time; a full ring drops it (its dispatch then
    /// reports no latency).
    fn push(&mut self, e: usize, now: u64) {
        let (Some(head), Some(len), Some(ring)) =
            (self.head.get(e), self.len.get_mut(e), self.t.get_mut(e))
        else {
            return;
        };
        let Some(at) = head.checked_add(*len).filter(|_| *len < QUEUE_TIMES) else {
            return;
        };
        if let Some(slot) = ring.get_mut(at % QUEUE_TIMES) {
            *slot = now;
            *len = len.saturating_add(1);
        }
    }

    /// The oldest queue time of engine `e`, or `now` if none is known.
    fn pop(&mut self, e: usize, now: u64) -> u64 {
        let (Some(head), Some(len), Some(ring)) =
            (self.head.get_mut(e), self.len.get_mut(e), self.t.get(e))
        else {
            return now;
        };
        if *len == 0 {
            return now;
        }
        let t = ring.get(*head).copied().unwrap_or(now);
        *head = head.saturating_add(1) % QUEUE_TIMES;
        *len = len.saturating_sub(1);
        t
    }
}

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

/// What the provider keeps of one vGPU, from `alloc_high` to `free_high`.
struct Entry {
    /// GVT-g's vGPU; `None` once GVT-g freed it while the engine still
    /// holds its id (see [`I915Gpu::free_high`]).
    key: Option<VgpuKey>,
    /// The vGPU in the scheduler, from `init_vgpu` to `clean_vgpu`.
    vref: Option<VgpuRef>,
    times: KBox<QueueTimes>,
    dir: Option<Dir<VgpuDir>>,
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
/// [`gvt_policy`].
///
/// # Invariants
///
/// Every `Some` key in `vgpus` is a vGPU's between its `alloc_high` and
/// `free_high` ops: [`I915Gpu::alloc_high`] stores it and
/// [`I915Gpu::free_high`] removes it.
#[pin_data(PinnedDrop)]
pub(crate) struct I915Gpu {
    engine: Arc<Engine>,
    /// Engine index + 1 of each i915 engine id (0: not used by GVT-g).
    engine_index: [u8; I915_ENGINE_IDS],
    /// Start of the slot pool in the GGTT.
    pool_start: u64,
    /// vGPUs by engine id, allocated for the GPU's vGPU limit when it
    /// registers. Innermost lock: taken under the engine's.
    #[pin]
    vgpus: Mutex<KVVec<Option<Entry>>>,
    /// GVT-g's switch state.
    #[pin]
    gvtg: GvtgProtocol,
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
    fn new(
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
        let vgpus = per_vgpu(MAX_VGPUS, || None)?;
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
    fn engine(&self, id: u32) -> Option<usize> {
        let i = *self.engine_index.get(usize::try_from(id).ok()?)?;
        usize::from(i).checked_sub(1)
    }

    /// Arms the timer for the engine's next deadline.
    fn arm_timer(&self) {
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
    fn with_entry<R>(&self, id: VgpuId, f: impl FnOnce(&mut Entry) -> R) -> Option<R> {
        let mut t = self.vgpus.lock();
        let entry = t.get_mut(usize::from(id)).and_then(Option::as_mut);
        if warn_on!(entry.is_none()) {
            return None;
        }
        entry.map(f)
    }

    /// Runs `f` on vGPU `id` in the scheduler, if it is.
    fn with_vgpu<R>(&self, id: VgpuId, f: impl FnOnce(&VgpuRef) -> R) -> Option<R> {
        let t = self.vgpus.lock();
        t.get(usize::from(id))?.as_ref()?.vref.as_ref().map(f)
    }

    /// The engine id of GVT-g's vGPU `vgpu`.
    fn id_of(&self, vgpu: &Vgpu) -> Option<VgpuId> {
        let key = vgpu.key();
        let t = self.vgpus.lock();
        let i = t
            .iter()
            .position(|e| e.as_ref().and_then(|e| e.key) == Some(key))?;
        VgpuId::try_from(i).ok()
    }

    // ---- the ops, called by `I915Policy` -------------------------------

    /// `alloc_high`: places `vgpu`'s `size` bytes of high GM; returns their
    /// start in the GGTT.
    fn alloc_high(&self, vgpu: &Vgpu, size: u64) -> Result<u64> {
        let high_mb = u32::try_from(size >> 20).map_err(|_| EINVAL)?;
        // Set from its type before placement.
        let weight = vgpu.weight();
        let times = KBox::new(QueueTimes::EMPTY, GFP_KERNEL)?;
        let id = self.engine.place_vgpu(self, high_mb, 0, weight)?;
        let at = self
            .engine
            .vgpu_slots(id)
            .and_then(|(pl, _)| u64::from(pl.start).checked_mul(SHARED_GM_ALIGN))
            .and_then(|off| self.pool_start.checked_add(off));
        let mut t = self.vgpus.lock();
        let stored = at.zip(t.get_mut(usize::from(id))).map(|(at, slot)| {
            // INVARIANT: `vgpu` exists until its `free_high`, which takes it
            // out.
            *slot = Some(Entry {
                key: Some(vgpu.key()),
                vref: None,
                times,
                dir: None,
            });
            at
        });
        drop(t);
        // A placed vGPU has slots inside the pool and an id below the
        // GPU's `max_vgpus`.
        if warn_on!(stored.is_none()) {
            // Placed, not attached: it can be unplaced.
            warn_on!(self.engine.unplace_vgpu(self, id).is_err());
        }
        stored.ok_or(EINVAL)
    }

    /// `free_high`: GVT-g frees `vgpu`; its high GM and id go.
    fn free_high(&self, vgpu: &Vgpu) {
        let Some(id) = self.id_of(vgpu) else {
            return;
        };
        match self.engine.unplace_vgpu(self, id) {
            Ok(()) => {
                // INVARIANT: The vGPU leaves the table with its entry.
                let gone = self
                    .vgpus
                    .lock()
                    .get_mut(usize::from(id))
                    .and_then(Option::take);
                // Found by `id_of` above, and only this op removes entries.
                warn_on!(gone.is_none());
                drop(gone);
            }
            Err(e) => {
                // Still in the scheduler (it had work in flight at
                // `clean_vgpu`): its id and slots stay taken until the
                // policy is switched off, but the vGPU itself is gone.
                // INVARIANT: Forget it; the entry stays for the id.
                self.with_entry(id, |entry| entry.key = None);
                dev_err!(
                    vgpu.gvt().device(),
                    "vGPU {} keeps its slots: {:?}\n",
                    id,
                    e
                );
            }
        }
    }

    /// `high_avail`: how many vGPUs with `size` bytes of high GM still fit.
    fn high_avail(&self, size: u64) -> u32 {
        u32::try_from(size >> 20).map_or(0, |mb| self.engine.available_mb(mb, 0))
    }

    /// `init_vgpu`: the placed `vgpu` enters the scheduler, stopped, and
    /// gets its directory under its mdev device.
    fn init_vgpu(&self, vgpu: &Vgpu) -> Result<VgpuRef> {
        // Placed by `alloc_high`, which GVT-g calls first for every vGPU.
        let id = self.id_of(vgpu).ok_or(EINVAL)?;
        let vref = VgpuRef::new(vgpu, id)?;
        self.engine.attach_vgpu(id)?;
        let dir = match vgpu.device() {
            None => None,
            Some(dev) => match esysfs::vgpu_dir(Parent::device(dev), self.engine.clone(), id) {
                Ok(d) => Some(d),
                Err(e) => {
                    // Just attached, stopped, with nothing queued.
                    warn_on!(self.engine.detach_vgpu(id).is_err());
                    return Err(e);
                }
            },
        };
        let kept = vref.clone();
        self.with_entry(id, |e| {
            e.dir = dir;
            e.vref = Some(kept);
        });
        Ok(vref)
    }

    /// `clean_vgpu`: vGPU `id` leaves the scheduler and its directory goes.
    fn clean_vgpu(&self, gvt: &Gvt, id: VgpuId) {
        // GVT-g stops a vGPU before destroying it; be sure (idempotent, and
        // the vGPU is attached, so it cannot fail).
        warn_on!(self.engine.stop(id).is_err());
        if let Err(e) = self.engine.detach_vgpu(id) {
            dev_err!(
                gvt.device(),
                "vGPU {} still busy at destruction: {:?}\n",
                id,
                e
            );
        }
        let gone = self.with_entry(id, |e| (e.dir.take(), e.vref.take()));
        drop(gone);
    }

    /// `start_schedule`.
    fn start_schedule(&self, id: VgpuId) {
        // Idempotent, and the vGPU is attached: it cannot fail.
        warn_on!(self.engine.start(id).is_err());
    }

    /// `stop_schedule`.
    fn stop_schedule(&self, gvt: &Gvt, id: VgpuId) {
        // GVT-g keeps the queues of engines a reset does not touch, and
        // reports each workload it discards as cancelled: keep the counts
        // (and queue times), so that what still runs is charged. Idempotent,
        // and the vGPU is attached: it cannot fail.
        warn_on!(self.engine.stop_keeping_queued(id).is_err());
        gvt.request_schedule();
    }

    /// `pick_next`: GVT-g's answer, and the timer armed for the next
    /// deadline.
    fn pick_next(&self, timer: bool, locked: &SchedLocked<'_, I915Policy>) -> Pick<I915Policy> {
        let answer = self
            .gvtg
            .pick_next(&self.engine, &Picking { gpu: self, locked }, timer);
        self.arm_timer();
        match answer {
            GvtgAnswer::Keep => Pick::Keep,
            GvtgAnswer::Idle => Pick::Idle,
            // Picked among the attached vGPUs, which `init_vgpu` keeps.
            GvtgAnswer::Run(id) => self
                .with_vgpu(id, VgpuRef::clone)
                .map_or(Pick::Keep, Pick::Run),
        }
    }

    /// `switched`: the engines drained and the switch happened.
    fn switched(&self, gvt: &Gvt, to_idle: bool) {
        if self.gvtg.switched(to_idle) {
            gvt.request_schedule();
        }
    }

    /// `queued`: vGPU `id` queued a workload on i915 engine `engine`.
    fn queued(&self, gvt: &Gvt, id: VgpuId, engine: u32) {
        let Some(e) = self.engine(engine) else {
            return;
        };
        // Refused when out of step with the engine's counts: then it is not
        // counted, and its dispatch and completion are refused as well.
        if self.engine.queued(id, e, 0).is_err() {
            return;
        }
        let now = self.engine.now_ns();
        self.with_entry(id, |ent| ent.times.push(e, now));
        if self.engine.need_resched() {
            gvt.request_schedule();
        }
    }

    /// `may_dispatch`: whether `engine` may take vGPU `id`'s next workload.
    fn may_dispatch(&self, gvt: &Gvt, id: VgpuId, engine: u32) -> bool {
        let Some(e) = self.engine(engine) else {
            return true;
        };
        let ok = self.engine.may_dispatch(id, e);
        if !ok {
            gvt.request_schedule();
        }
        ok
    }

    /// `dispatched`: `engine` took vGPU `id`'s oldest workload.
    fn dispatched(&self, id: VgpuId, engine: u32) {
        let Some(e) = self.engine(engine) else {
            return;
        };
        let now = self.engine.now_ns();
        let at = self
            .with_entry(id, |ent| ent.times.pop(e, now))
            .unwrap_or(now);
        // GVT-g's op cannot fail: a dispatch the engine's counts do not
        // expect (its `queued` was refused) is refused and changes nothing.
        let _ = self.engine.dispatched(id, e, at);
    }

    /// `completed`: a workload of vGPU `id` left `engine`, or was discarded
    /// (`status` `ECANCELED`).
    fn completed(&self, id: VgpuId, engine: u32, gpu_ns: u64, status: Result) {
        let Some(e) = self.engine(engine) else {
            return;
        };
        if status == Err(ECANCELED) {
            // Discarded before dispatch: it leaves the queue, not the GPU.
            if self.engine.cancelled(id, e).is_ok() {
                let now = self.engine.now_ns();
                // Its queue time goes with it.
                self.with_entry(id, |ent| ent.times.pop(e, now));
            }
            return;
        }
        // GVT-g's op cannot fail: a completion the engine's counts do not
        // expect is refused and changes nothing.
        let _ = self.engine.completed(id, e, gpu_ns);
    }
}

/// The provider for placement (`alloc_high`, `free_high`).
impl Provider for I915Gpu {
    // GVT-g loads a vGPU's shared high GM into the GGTT itself, per 64 MB
    // chunk it does not own yet, before `switched` (its GGTT residency).
    fn load_gtt(&self, _vgpu: VgpuId, _vgpu_start: u16, _first_slot: u16, _slots: u16) {}

    // The aperture stays private to each vGPU on GVT-g.
    fn load_low_gtt(&self, _vgpu: VgpuId) {}

    // Never called: the engine runs without relocation for this provider.
    fn relocate(&self, _m: &Move) {}

    // Placement never samples CPU time, and the placement ops do not hold
    // `sched_lock`, which reading it needs: see `Picking`.
    fn vm_cpu_ns(&self, _vgpu: VgpuId) -> Option<u64> {
        None
    }
}

/// The provider for a decision (`pick_next`, under `sched_lock`).
struct Picking<'a> {
    gpu: &'a I915Gpu,
    locked: &'a SchedLocked<'a, I915Policy>,
}

impl Provider for Picking<'_> {
    fn load_gtt(&self, vgpu: VgpuId, vgpu_start: u16, first_slot: u16, slots: u16) {
        self.gpu.load_gtt(vgpu, vgpu_start, first_slot, slots);
    }

    fn load_low_gtt(&self, vgpu: VgpuId) {
        self.gpu.load_low_gtt(vgpu);
    }

    fn relocate(&self, m: &Move) {
        self.gpu.relocate(m);
    }

    // Under `sched_lock`, which `intel_vgpu_vcpu_time_ns()` needs: one
    // constant-time read per vCPU thread of the VM, at most KVM's vCPU
    // limit, whatever other threads its VMM has.
    fn vm_cpu_ns(&self, vgpu: VgpuId) -> Option<u64> {
        self.gpu
            .with_vgpu(vgpu, |r| {
                r.get(self.locked).map(|v| v.vcpu_time_ns(self.locked))
            })
            .flatten()
    }
}
