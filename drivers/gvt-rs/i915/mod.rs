// SPDX-License-Identifier: GPL-2.0

//! The i915 provider: the gvt-rs policies on Intel GVT-g.
//!
//! With the gvt-rs series applied, `kvmgt.ko` accepts external scheduling
//! policies (`include/drm/intel/gvt_policy.h`). This module registers one,
//! named `gvt-rs`, whose ops drive the same [`Engine`] as the simulated GPU:
//! an administrator activates it per GPU by writing `gvt-rs` to
//! `/sys/bus/pci/devices/<GPU>/gvt/sched_policy`, and the GPU then appears
//! as `/sys/kernel/gvt_rs/<GPU>/` with the sysfs ABI of every gvt-rs GPU,
//! and each vGPU as `<mdev device>/gvt_rs/`.
//!
//! How GVT-g's constraints map onto the provider contract
//! (`Documentation/gvt-rs/provider-contract.rst`):
//!
//! * GVT-g places high GM (`alloc_high`, under `gvt->lock`) before the vGPU
//!   reaches the scheduler (`init_vgpu`, under `sched_lock`):
//!   [`Engine::place_vgpu`] and [`Engine::attach_vgpu`] are separate steps.
//! * One current vGPU for all engines, switched once every engine drained:
//!   `pick_next` follows [`Engine::gvtg_pick_next`] (the idle vGPU as a
//!   drain barrier), `may_dispatch` ends a turn on time.
//! * GVT-g swaps GGTT entries itself, per 64 MB chunk: `load_gtt` has
//!   nothing to do. It cannot move a vGPU's range or share the aperture, so
//!   the engine runs without relocation and with private low GM.
//! * Engine ids are i915's sparse `enum intel_engine_id`; the engine uses
//!   dense indices.
//! * Ops run under `sched_lock` (process context). The policy's timer only
//!   calls `intel_gvt_request_schedule()`.

pub mod ffi;

use crate::engine::{
    sysfs::{self as esysfs, GpuDir, VgpuDir},
    Engine, GpuConfig, GvtgAnswer, Provider, VgpuId, MAX_SLOTS, MAX_VGPUS,
};
use crate::gvt_core::{sched::MAX_ENGINES, slots::Move};
use crate::timer::{Timer, TimerTarget};
use core::{
    pin::Pin,
    ptr,
    sync::atomic::{AtomicPtr, Ordering},
};
use ffi::{IntelGvt, IntelVgpu, SHARED_GM_ALIGN};
use kernel::{
    device::Device,
    ffi::{c_int, c_uint, c_void},
    new_mutex,
    prelude::*,
    sync::{Arc, ArcBorrow, Mutex},
    sysfs::Dir,
    types::ForeignOwnable,
};

/// i915 engine ids (`I915_NUM_ENGINES` is below this).
const I915_ENGINE_IDS: usize = 32;
/// Queue timestamps kept per vGPU and engine, for dispatch latency.
const QUEUE_TIMES: usize = 32;
/// Bounds of the policy's timer, ns.
const TIMER_MIN_NS: u64 = 50_000;
const TIMER_MAX_NS: u64 = 100_000_000;
/// `-ECANCELED` as GVT-g reports a discarded workload.
const ECANCELED: c_int = -125;

/// The registration with GVT-g, alive while the module is loaded.
///
/// # Invariants
///
/// While a `Registration` exists, [`REGISTRATION`] points to it and the
/// `gvt-rs` ops are registered with GVT-g.
pub(crate) struct Registration {
    top: Arc<Dir<crate::Global>>,
}

/// The live [`Registration`], for the ops (which get no context pointer).
static REGISTRATION: AtomicPtr<Registration> = AtomicPtr::new(ptr::null_mut());

impl Registration {
    /// Registers the `gvt-rs` policy with GVT-g; GPUs that activate it get
    /// their directory under `top`.
    pub(crate) fn new(top: Arc<Dir<crate::Global>>) -> Result<Pin<KBox<Self>>> {
        let reg = KBox::pin(Self { top }, GFP_KERNEL)?;
        let p = ptr::from_ref::<Registration>(&reg).cast_mut();
        if REGISTRATION
            .compare_exchange(ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(EBUSY);
        }
        // SAFETY: Plain call; the ops may run from now on and find
        // `REGISTRATION` set.
        let ret = unsafe { ffi::gvt_rs_i915_register() };
        if ret != 0 {
            REGISTRATION.store(ptr::null_mut(), Ordering::Release);
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: Registered, and `REGISTRATION` points to the pinned box.
        Ok(reg)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: Registered by `new` (type invariant). A GPU that uses the
        // policy holds a reference on this module, so none does now and no
        // op runs after this returns.
        unsafe { ffi::gvt_rs_i915_unregister() };
        REGISTRATION.store(ptr::null_mut(), Ordering::Release);
    }
}

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

/// What the provider keeps of one vGPU.
struct Entry {
    vgpu: *mut IntelVgpu,
    times: KBox<QueueTimes>,
    dir: Option<Dir<VgpuDir>>,
}

/// One GPU that uses the `gvt-rs` policy: from the `init` op to `clean`.
#[pin_data]
struct I915Gpu {
    /// Asks GVT-g for a decision at the engine's next deadline. Holds the
    /// GPU until `clean` shuts it down.
    timer: Arc<Timer<I915Gpu>>,
    gvt: *mut IntelGvt,
    engine: Arc<Engine>,
    /// Engine index + 1 of each i915 engine id (0: not used by GVT-g).
    engine_index: [u8; I915_ENGINE_IDS],
    /// Start of the reserved slot pool in the GGTT, bytes.
    pool_start: u64,
    /// vGPUs by engine id. Innermost lock: taken under the engine's.
    #[pin]
    vgpus: Mutex<[Option<Entry>; MAX_VGPUS]>,
    _dir: Dir<GpuDir>,
}

// SAFETY: The raw pointers are GVT-g handles, valid from any thread between
// the ops that create and destroy them; the rest is `Send`.
unsafe impl Send for I915Gpu {}
// SAFETY: Shared access goes through the mutex, atomics in the engine, or
// GVT-g functions that may be called concurrently.
unsafe impl Sync for I915Gpu {}

impl I915Gpu {
    fn new(gvt: *mut IntelGvt, reg: &Registration) -> Result<Arc<Self>> {
        // SAFETY: `gvt` is the GPU of the running `init` op.
        let mask = unsafe { ffi::intel_gvt_engine_mask(gvt) };
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
        let (mut low, mut high) = (0u64, 0u64);
        // SAFETY: `gvt` is valid; the out-pointers are local.
        unsafe { ffi::intel_gvt_gm_avail(gvt, &mut low, &mut high) };
        let slots = (high / SHARED_GM_ALIGN).min(MAX_SLOTS as u64);
        let slots = u16::try_from(slots).map_err(|_| EINVAL)?;
        if slots == 0 {
            return Err(ENOSPC);
        }
        // SAFETY: `gvt` is valid; the name lives as long as its device.
        let name = unsafe { CStr::from_char_ptr(ffi::gvt_rs_i915_gpu_name(gvt)) };
        let engine = Arc::pin_init(
            Engine::new(
                name,
                GpuConfig {
                    engines,
                    // GVT-g accounts the aperture itself; it stays private.
                    low_mb: u32::MAX,
                    slots,
                    low_shared_entries: 0,
                    relocate: false,
                },
            )?,
            GFP_KERNEL,
        )?;
        let dir = esysfs::gpu_dir(reg.top.as_parent(), engine.clone())?;
        let timer = Timer::new(0)?;
        let size = u64::from(slots)
            .checked_mul(SHARED_GM_ALIGN)
            .ok_or(EINVAL)?;
        let mut pool_start = 0u64;
        // SAFETY: Called from the `init` op, as the interface requires.
        let ret = unsafe { ffi::intel_gvt_gm_reserve(gvt, size, &mut pool_start) };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        let gpu = Arc::pin_init(
            try_pin_init!(Self {
                timer,
                gvt,
                engine,
                engine_index,
                pool_start,
                vgpus <- new_mutex!([const { None }; MAX_VGPUS], "gvt_rs_i915_vgpus"),
                _dir: dir,
            }),
            GFP_KERNEL,
        );
        let gpu = match gpu {
            Ok(g) => g,
            Err(e) => {
                // SAFETY: Reserved just above, still in the `init` op.
                unsafe { ffi::intel_gvt_gm_release(gvt, pool_start) };
                return Err(e);
            }
        };
        if let Err(e) = gpu.timer.bind(gpu.clone()) {
            // SAFETY: Reserved just above, still in the `init` op.
            unsafe { ffi::intel_gvt_gm_release(gvt, pool_start) };
            return Err(e);
        }
        Ok(gpu)
    }

    /// Dense engine index of i915 engine `id`.
    fn engine(&self, id: c_uint) -> Option<usize> {
        let i = *self.engine_index.get(usize::try_from(id).ok()?)?;
        usize::from(i).checked_sub(1)
    }

    fn request_schedule(&self) {
        // SAFETY: `gvt` is valid while the GPU uses the policy.
        unsafe { ffi::intel_gvt_request_schedule(self.gvt) };
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

    fn vgpu_ptr(&self, id: VgpuId) -> *mut IntelVgpu {
        let t = self.vgpus.lock();
        t.get(usize::from(id))
            .and_then(Option::as_ref)
            .map_or(ptr::null_mut(), |e| e.vgpu)
    }

    fn id_of(&self, vgpu: *mut IntelVgpu) -> Option<VgpuId> {
        let t = self.vgpus.lock();
        let i = t
            .iter()
            .position(|e| e.as_ref().is_some_and(|e| e.vgpu == vgpu))?;
        VgpuId::try_from(i).ok()
    }
}

impl Provider for I915Gpu {
    // GVT-g loads a vGPU's shared high GM into the GGTT itself, per 64 MB
    // chunk it does not own yet, before `switched` (its GGTT residency).
    fn load_gtt(&self, _vgpu: VgpuId, _vgpu_start: u16, _first_slot: u16, _slots: u16) {}

    // The aperture stays private to each vGPU on GVT-g.
    fn load_low_gtt(&self, _vgpu: VgpuId) {}

    // Never called: the engine runs without relocation for this provider.
    fn relocate(&self, _m: &Move) {}

    fn vm_cpu_ns(&self, vgpu: VgpuId) -> Option<u64> {
        let p = self.vgpu_ptr(vgpu);
        if p.is_null() {
            return None;
        }
        // SAFETY: Called by the engine from the `pick_next` op (under
        // `sched_lock`), and `p` is a vGPU between `alloc_high` and
        // `free_high`.
        Some(unsafe { ffi::intel_vgpu_vcpu_time_ns(p) })
    }
}

/// The timer (process context): ask GVT-g for a decision.
impl TimerTarget for I915Gpu {
    fn timer_expired(&self, _index: usize) {
        self.request_schedule();
    }
}

/// The GPU of a GVT-g instance that uses the policy.
///
/// # Safety
///
/// `gvt` must be a GPU between the policy's `init` and `clean` ops, and the
/// returned reference must not outlive the running op.
unsafe fn gpu<'a>(gvt: *mut IntelGvt) -> Option<ArcBorrow<'a, I915Gpu>> {
    // SAFETY: `gvt` is valid (the caller's guarantee).
    let p = unsafe { *ffi::intel_gvt_policy_priv(gvt) };
    if p.is_null() {
        return None;
    }
    // SAFETY: Set by `init` with `into_foreign` and reclaimed only by
    // `clean`, which does not run concurrently with another op.
    Some(unsafe { <Arc<I915Gpu> as ForeignOwnable>::borrow(p) })
}

/// The GPU and engine id of a vGPU (`None` for the idle vGPU).
///
/// # Safety
///
/// `vgpu` must be a vGPU of a GPU that uses the policy, in an op between
/// its `init_vgpu` and `clean_vgpu`.
unsafe fn vgpu<'a>(vgpu: *mut IntelVgpu) -> Option<(ArcBorrow<'a, I915Gpu>, VgpuId)> {
    // SAFETY: `vgpu` is valid (the caller's guarantee).
    let tag = unsafe { *ffi::intel_vgpu_policy_priv(vgpu) } as usize;
    let id = VgpuId::try_from(tag.checked_sub(1)?).ok()?;
    // SAFETY: As above; its GPU uses the policy.
    let g = unsafe { gpu(ffi::intel_vgpu_gvt(vgpu)) }?;
    Some((g, id))
}

/// The GPU, engine id and dense engine index of a vGPU's workload event.
///
/// # Safety
///
/// As for [`vgpu`].
unsafe fn vgpu_engine<'a>(
    v: *mut IntelVgpu,
    engine: c_uint,
) -> Option<(ArcBorrow<'a, I915Gpu>, VgpuId, usize)> {
    // SAFETY: The caller's guarantee.
    let (g, id) = unsafe { vgpu(v) }?;
    let e = g.engine(engine)?;
    Some((g, id, e))
}

fn errno(e: Error) -> c_int {
    e.to_errno()
}

// ---- the ops (gvt_rs_i915.h); kvmgt.ko calls them under its locks ----------

#[no_mangle]
extern "C" fn gvt_rs_i915_init(gvt: *mut IntelGvt) -> c_int {
    let r = REGISTRATION.load(Ordering::Acquire);
    if r.is_null() {
        return errno(ENODEV);
    }
    // SAFETY: The registration outlives every op (it unregisters on drop).
    let reg = unsafe { &*r };
    match I915Gpu::new(gvt, reg) {
        Ok(g) => {
            // SAFETY: `gvt` is the GPU of this `init` op.
            unsafe { *ffi::intel_gvt_policy_priv(gvt) = g.into_foreign() };
            0
        }
        Err(e) => errno(e),
    }
}

#[no_mangle]
extern "C" fn gvt_rs_i915_clean(gvt: *mut IntelGvt) {
    // SAFETY: `gvt` is the GPU of this `clean` op.
    let slot = unsafe { ffi::intel_gvt_policy_priv(gvt) };
    // SAFETY: `slot` is valid; `init` stored an owned `Arc<I915Gpu>`.
    let p = unsafe { core::mem::take(&mut *slot) };
    // SAFETY: `p` came from `into_foreign` in `init` and is reclaimed once.
    let Some(g) = (unsafe { <Arc<I915Gpu> as ForeignOwnable>::try_from_foreign(p) }) else {
        return;
    };
    g.timer.shutdown();
    let start = g.pool_start;
    drop(g);
    // SAFETY: Reserved by `init`; released in `clean` as required.
    unsafe { ffi::intel_gvt_gm_release(gvt, start) };
}

#[no_mangle]
extern "C" fn gvt_rs_i915_alloc_high(v: *mut IntelVgpu, size: u64, start: *mut u64) -> c_int {
    // SAFETY: `v` is a vGPU being created on a GPU that uses the policy.
    let Some(g) = (unsafe { gpu(ffi::intel_vgpu_gvt(v)) }) else {
        return errno(ENODEV);
    };
    let Ok(high_mb) = u32::try_from(size >> 20) else {
        return errno(EINVAL);
    };
    // SAFETY: `v` is valid; its type's weight is set before placement.
    let weight = unsafe { ffi::intel_vgpu_weight(v) };
    let times = match KBox::new(QueueTimes::EMPTY, GFP_KERNEL) {
        Ok(t) => t,
        Err(e) => return errno(e.into()),
    };
    let id = match g.engine.place_vgpu(&*g, high_mb, 0, weight) {
        Ok(id) => id,
        Err(e) => return errno(e),
    };
    let Some(pl) = g.engine.vgpu_slots(id).map(|(p, _)| p) else {
        let _ = g.engine.unplace_vgpu(&*g, id);
        return errno(EINVAL);
    };
    let at = u64::from(pl.start)
        .checked_mul(SHARED_GM_ALIGN)
        .and_then(|off| g.pool_start.checked_add(off));
    let Some(at) = at else {
        let _ = g.engine.unplace_vgpu(&*g, id);
        return errno(EINVAL);
    };
    if let Some(e) = g.vgpus.lock().get_mut(usize::from(id)) {
        *e = Some(Entry {
            vgpu: v,
            times,
            dir: None,
        });
    }
    // SAFETY: `start` is GVT-g's out-pointer for this call.
    unsafe { *start = at };
    0
}

#[no_mangle]
extern "C" fn gvt_rs_i915_free_high(v: *mut IntelVgpu) {
    // SAFETY: `v` is a vGPU of a GPU that uses the policy.
    let Some(g) = (unsafe { gpu(ffi::intel_vgpu_gvt(v)) }) else {
        return;
    };
    let Some(id) = g.id_of(v) else {
        return;
    };
    if let Err(e) = g.engine.unplace_vgpu(&*g, id) {
        // Still in the scheduler (it had work in flight at `clean_vgpu`):
        // its id and slots stay taken until the policy is switched off, but
        // the vGPU itself is gone, so forget the pointer.
        pr_err!("gvt-rs: vGPU {} keeps its slots: {:?}\n", id, e);
        if let Some(Some(ent)) = g.vgpus.lock().get_mut(usize::from(id)) {
            ent.vgpu = ptr::null_mut();
        }
        return;
    }
    let gone = g
        .vgpus
        .lock()
        .get_mut(usize::from(id))
        .and_then(Option::take);
    drop(gone);
}

#[no_mangle]
extern "C" fn gvt_rs_i915_high_avail(gvt: *mut IntelGvt, size: u64) -> c_uint {
    // SAFETY: `gvt` is a GPU that uses the policy, in this op.
    let Some(g) = (unsafe { gpu(gvt) }) else {
        return 0;
    };
    let Ok(mb) = u32::try_from(size >> 20) else {
        return 0;
    };
    g.engine.available_mb(mb, 0)
}

#[no_mangle]
extern "C" fn gvt_rs_i915_init_vgpu(v: *mut IntelVgpu) -> c_int {
    // SAFETY: `v` is valid in this op.
    if unsafe { ffi::intel_vgpu_id(v) } == 0 {
        // The idle vGPU: nothing to keep.
        return 0;
    }
    // SAFETY: `v` is a vGPU of a GPU that uses the policy.
    let Some(g) = (unsafe { gpu(ffi::intel_vgpu_gvt(v)) }) else {
        return errno(ENODEV);
    };
    // Placed by `alloc_high`, which GVT-g calls first for every vGPU.
    let Some(id) = g.id_of(v) else {
        return errno(EINVAL);
    };
    if let Err(e) = g.engine.attach_vgpu(id) {
        return errno(e);
    }
    // SAFETY: `v` is valid; its mdev device is registered (GVT-g creates
    // vGPUs from the mdev probe) and outlives `clean_vgpu`.
    let dev = unsafe { ffi::intel_vgpu_device(v) }.cast::<kernel::bindings::device>();
    let dir = if dev.is_null() {
        None
    } else {
        // SAFETY: `dev` is a live device, see above.
        let dev: &Device = unsafe { Device::from_raw(dev) };
        match esysfs::vgpu_dir(kernel::sysfs::Parent::device(dev), g.engine.clone(), id) {
            Ok(d) => Some(d),
            Err(e) => {
                let _ = g.engine.detach_vgpu(id);
                return errno(e);
            }
        }
    };
    if let Some(Some(e)) = g.vgpus.lock().get_mut(usize::from(id)) {
        e.dir = dir;
    }
    let tag = usize::from(id).saturating_add(1);
    // SAFETY: `v` is valid; the tag is read back by the other vGPU ops.
    unsafe { *ffi::intel_vgpu_policy_priv(v) = tag as *mut c_void };
    0
}

#[no_mangle]
extern "C" fn gvt_rs_i915_clean_vgpu(v: *mut IntelVgpu) {
    // SAFETY: `v` is valid in this op, between `init_vgpu` and here.
    let Some((g, id)) = (unsafe { vgpu(v) }) else {
        return;
    };
    // GVT-g stops and idles a vGPU before destroying it; be sure.
    let _ = g.engine.stop(id);
    if let Err(e) = g.engine.detach_vgpu(id) {
        pr_err!("gvt-rs: vGPU {} still busy at destruction: {:?}\n", id, e);
    }
    let dir = g
        .vgpus
        .lock()
        .get_mut(usize::from(id))
        .and_then(Option::as_mut)
        .and_then(|e| e.dir.take());
    drop(dir);
    // SAFETY: `v` is valid.
    unsafe { *ffi::intel_vgpu_policy_priv(v) = ptr::null_mut() };
}

#[no_mangle]
extern "C" fn gvt_rs_i915_start_schedule(v: *mut IntelVgpu) {
    // SAFETY: `v` is valid in this op.
    if let Some((g, id)) = unsafe { vgpu(v) } {
        let _ = g.engine.start(id);
    }
}

#[no_mangle]
extern "C" fn gvt_rs_i915_stop_schedule(v: *mut IntelVgpu) {
    // SAFETY: `v` is valid in this op.
    if let Some((g, id)) = unsafe { vgpu(v) } {
        // GVT-g keeps the queues of engines a reset does not touch, and
        // reports each workload it discards as cancelled: keep the counts
        // (and queue times), so that what still runs is charged.
        let _ = g.engine.stop_keeping_queued(id);
        g.request_schedule();
    }
}

#[no_mangle]
extern "C" fn gvt_rs_i915_pick_next(gvt: *mut IntelGvt, _now: i64, timer: bool) -> *mut IntelVgpu {
    // SAFETY: `gvt` uses the policy, in this op.
    let Some(g) = (unsafe { gpu(gvt) }) else {
        return ptr::null_mut();
    };
    let answer = g.engine.gvtg_pick_next(&*g, timer);
    g.arm_timer();
    match answer {
        GvtgAnswer::Keep => ptr::null_mut(),
        // SAFETY: `gvt` is valid.
        GvtgAnswer::Idle => unsafe { ffi::intel_gvt_idle_vgpu(gvt) },
        GvtgAnswer::Run(id) => g.vgpu_ptr(id),
    }
}

#[no_mangle]
extern "C" fn gvt_rs_i915_switched(
    gvt: *mut IntelGvt,
    _prev: *mut IntelVgpu,
    next: *mut IntelVgpu,
    _now: i64,
) {
    // SAFETY: `gvt` uses the policy, in this op.
    let Some(g) = (unsafe { gpu(gvt) }) else {
        return;
    };
    // SAFETY: `next` is GVT-g's new current vGPU, valid in this op.
    let to_idle = next.is_null() || unsafe { ffi::intel_vgpu_id(next) } == 0;
    if g.engine.gvtg_switched(to_idle) {
        g.request_schedule();
    }
}

#[no_mangle]
extern "C" fn gvt_rs_i915_queued(v: *mut IntelVgpu, engine: c_uint) {
    // SAFETY: `v` is valid in this op.
    let Some((g, id, e)) = (unsafe { vgpu_engine(v, engine) }) else {
        return;
    };
    if g.engine.queued(id, e, 0).is_err() {
        return;
    }
    let now = g.engine.now_ns();
    if let Some(Some(ent)) = g.vgpus.lock().get_mut(usize::from(id)) {
        ent.times.push(e, now);
    }
    if g.engine.need_resched() {
        g.request_schedule();
    }
}

#[no_mangle]
extern "C" fn gvt_rs_i915_may_dispatch(v: *mut IntelVgpu, engine: c_uint) -> bool {
    // SAFETY: `v` is valid in this op.
    let Some((g, id, e)) = (unsafe { vgpu_engine(v, engine) }) else {
        return true;
    };
    let ok = g.engine.may_dispatch(id, e);
    if !ok {
        g.request_schedule();
    }
    ok
}

#[no_mangle]
extern "C" fn gvt_rs_i915_dispatched(v: *mut IntelVgpu, engine: c_uint) {
    // SAFETY: `v` is valid in this op.
    let Some((g, id, e)) = (unsafe { vgpu_engine(v, engine) }) else {
        return;
    };
    let now = g.engine.now_ns();
    let at = g
        .vgpus
        .lock()
        .get_mut(usize::from(id))
        .and_then(Option::as_mut)
        .map_or(now, |ent| ent.times.pop(e, now));
    let _ = g.engine.dispatched(id, e, at);
}

#[no_mangle]
extern "C" fn gvt_rs_i915_completed(v: *mut IntelVgpu, engine: c_uint, gpu_ns: u64, status: c_int) {
    // SAFETY: `v` is valid in this op.
    let Some((g, id, e)) = (unsafe { vgpu_engine(v, engine) }) else {
        return;
    };
    if status == ECANCELED {
        // Discarded before dispatch: it leaves the queue, not the GPU.
        if g.engine.cancelled(id, e).is_ok() {
            let now = g.engine.now_ns();
            if let Some(Some(ent)) = g.vgpus.lock().get_mut(usize::from(id)) {
                let _ = ent.times.pop(e, now);
            }
        }
        return;
    }
    let _ = g.engine.completed(id, e, gpu_ns);
}
