// SPDX-License-Identifier: GPL-2.0

//! The raw side of the i915 provider: GVT-g's policy interface
//! (`include/drm/intel/gvt_policy.h`, exported by `kvmgt.ko` in the
//! `INTEL_GVT_POLICY` namespace) over bindgen's types.
//!
//! This file is the only place where the provider handles raw pointers. It
//! builds the `struct intel_gvt_sched_policy_ops` table inside a pinned
//! [`Registration`] (with `THIS_MODULE` from the `module!` machinery),
//! implements every op as an `unsafe extern "C" fn` that turns GVT-g's
//! pointers into the handles below, and calls the safe [`I915Gpu`] with
//! them. The handles ([`Gvt`], [`Vgpu`], [`GmReservation`],
//! [`SchedLocked`]) wrap the accessors of the header; their invariants say
//! how long GVT-g keeps the objects alive.
//!
//! GVT-g keeps one private data pointer per GPU and per vGPU for the
//! policy: the GPU's holds the [`I915Gpu`] (a `Pin<KBox<_>>` given away with
//! [`ForeignOwnable::into_foreign`] by `init` and taken back by `clean`), a
//! vGPU's holds its engine id plus one (0: none, e.g. the idle vGPU).

use super::I915Gpu;
use crate::engine::{
    GvtgAnswer,
    VgpuId, //
};
use core::{
    marker::PhantomData,
    ptr::{
        self,
        NonNull, //
    },
};
use kernel::{
    bindings,
    device::Device,
    error::to_result,
    prelude::*,
    sync::Arc,
    sysfs::Dir,
    types::{
        ForeignOwnable,
        Opaque, //
    },
    ThisModule, //
};

/// The name the policy is registered and selected under.
const POLICY_NAME: &CStr = c"gvt-rs";

/// The `gvt-rs` policy, registered with GVT-g while this exists.
///
/// # Invariants
///
/// `ops` holds a complete ops table whose `owner` is this module, and it is
/// registered with GVT-g (`intel_gvt_register_sched_policy()`) from the end
/// of the initialiser to [`PinnedDrop::drop`]; `top` is initialised before
/// it is registered.
#[pin_data(PinnedDrop)]
pub(crate) struct Registration {
    /// The directory each GPU that activates the policy gets its own under.
    top: Arc<Dir<crate::Global>>,
    /// The table GVT-g links into its list (`ops.link`) and calls.
    #[pin]
    ops: Opaque<bindings::intel_gvt_sched_policy_ops>,
}

// SAFETY: After registration the table is only read and linked by GVT-g
// under its policy lock; Rust only passes its address to `unregister`, from
// any thread. `top` is an `Arc` of a `Send` and `Sync` directory.
unsafe impl Send for Registration {}
// SAFETY: See `Send`: no `&self` method touches the table's contents.
unsafe impl Sync for Registration {}

impl Registration {
    /// Registers the `gvt-rs` policy with GVT-g for `module`; GPUs that
    /// activate it get their directory under `top`.
    pub(crate) fn new(
        top: Arc<Dir<crate::Global>>,
        module: &'static ThisModule,
    ) -> impl PinInit<Self, Error> {
        // `top` comes first: GVT-g may activate the policy (and call `init`,
        // which reads it) before `intel_gvt_register_sched_policy()` returns.
        try_pin_init!(Self {
            top,
            ops <- Opaque::try_ffi_init(move |slot: *mut bindings::intel_gvt_sched_policy_ops| {
                // SAFETY: `slot` is valid for writes.
                unsafe { slot.write(ops_table(module)) };
                // The table is complete and pinned (GVT-g links it into its
                // list); it stays registered until the unregister in `drop`.
                // SAFETY: As required, by the type invariant (above).
                to_result(unsafe { bindings::intel_gvt_register_sched_policy(slot) })
            }),
        })
    }

    /// The directory for the GPUs of the registration whose table is `ops`.
    ///
    /// # Safety
    ///
    /// `ops` must be the `ops` field of a [`Registration`] that is registered,
    /// and the returned reference must not outlive that registration.
    unsafe fn top<'a>(
        ops: *const bindings::intel_gvt_sched_policy_ops,
    ) -> &'a Arc<Dir<crate::Global>> {
        let ops = Opaque::cast_from(ops).cast_mut();
        // SAFETY: `ops` is the `ops` field of a `Registration` (the caller's
        // guarantee), so the container is in the same allocation.
        let reg = unsafe { kernel::container_of!(ops, Registration, ops) };
        // `top` is initialised before the table is registered and never
        // written afterwards (type invariant); only that field is referenced,
        // not the `Opaque` that GVT-g may be writing.
        // SAFETY: `reg` is valid and its `top` initialised and unchanging.
        unsafe { &*ptr::addr_of!((*reg).top) }
    }
}

#[pinned_drop]
impl PinnedDrop for Registration {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered since the initialiser (type invariant). A GPU
        // that uses the policy holds a reference on this module, so none
        // does now, and no op runs after this returns.
        unsafe { bindings::intel_gvt_unregister_sched_policy(self.ops.get()) };
    }
}

/// The ops table of the policy.
fn ops_table(module: &'static ThisModule) -> bindings::intel_gvt_sched_policy_ops {
    bindings::intel_gvt_sched_policy_ops {
        name: POLICY_NAME.as_char_ptr(),
        owner: module.as_ptr(),
        init: Some(init),
        clean: Some(clean),
        init_vgpu: Some(init_vgpu),
        clean_vgpu: Some(clean_vgpu),
        start_schedule: Some(start_schedule),
        stop_schedule: Some(stop_schedule),
        pick_next: Some(pick_next),
        switched: Some(switched),
        queued: Some(queued),
        dispatched: Some(dispatched),
        may_dispatch: Some(may_dispatch),
        completed: Some(completed),
        alloc_high: Some(alloc_high),
        free_high: Some(free_high),
        high_avail: Some(high_avail),
        // `link` belongs to GVT-g.
        ..pin_init::zeroed()
    }
}

/// A GPU that uses the policy (`struct intel_gvt`).
///
/// # Invariants
///
/// `ptr` points to a `struct intel_gvt` whose current policy is `gvt-rs`,
/// from the start of its `init` op until its `clean` op returns. Every
/// `Gvt` is owned, directly or through its timer, by the GPU's [`I915Gpu`],
/// which `clean` drops, or by an op's stack frame.
#[derive(Clone)]
pub(super) struct Gvt {
    ptr: NonNull<bindings::intel_gvt>,
}

// SAFETY: The accessors used below may be called from any thread while the
// GPU is alive (type invariant).
unsafe impl Send for Gvt {}
// SAFETY: The accessors take no `&mut`; GVT-g serialises what needs it.
unsafe impl Sync for Gvt {}

impl Gvt {
    /// # Safety
    ///
    /// `ptr` must be a GPU in one of the policy's ops (as the type invariant
    /// says), and the handle must not outlive the GPU's `clean` op.
    unsafe fn from_raw(ptr: *mut bindings::intel_gvt) -> Option<Self> {
        // INVARIANT: The caller's guarantee.
        NonNull::new(ptr).map(|ptr| Self { ptr })
    }

    fn as_raw(&self) -> *mut bindings::intel_gvt {
        self.ptr.as_ptr()
    }

    /// The GPU's PCI device.
    pub(super) fn device(&self) -> &Device {
        // SAFETY: The GPU is alive (type invariant) and its device outlives
        // it; `intel_gvt_device()` never returns NULL for a live GPU.
        unsafe { Device::from_raw(bindings::intel_gvt_device(self.as_raw())) }
    }

    /// Bit `i` set: i915 engine `i` (`enum intel_engine_id`) exists.
    pub(super) fn engine_mask(&self) -> u32 {
        // SAFETY: The GPU is alive (type invariant).
        unsafe { bindings::intel_gvt_engine_mask(self.as_raw()) }
    }

    /// Graphics memory of the GPU that vGPUs may use: (low, high), bytes.
    pub(super) fn gm_avail(&self) -> (u64, u64) {
        let (mut low, mut high) = (0u64, 0u64);
        // SAFETY: The GPU is alive (type invariant); the out-pointers are
        // local.
        unsafe { bindings::intel_gvt_gm_avail(self.as_raw(), &mut low, &mut high) };
        (low, high)
    }

    /// Reserves `size` bytes of high GM for the slot pool, until the
    /// reservation drops.
    pub(super) fn gm_reserve(&self, _init: &InitOp<'_>, size: u64) -> Result<GmReservation> {
        let mut start = 0u64;
        // SAFETY: The GPU is alive (type invariant) and this is its `init`
        // op (`_init`), where the interface allows a reservation.
        to_result(unsafe { bindings::intel_gvt_gm_reserve(self.as_raw(), size, &mut start) })?;
        // INVARIANT: Reserved just above.
        Ok(GmReservation {
            gvt: self.clone(),
            start,
        })
    }

    /// Asks GVT-g's service thread for a decision (`pick_next` with
    /// `timer = true`). Any context.
    pub(super) fn request_schedule(&self) {
        // SAFETY: The GPU is alive (type invariant); callable from any
        // context.
        unsafe { bindings::intel_gvt_request_schedule(self.as_raw()) };
    }

    /// The slot that holds the policy's data of this GPU.
    fn priv_slot(&self) -> *mut *mut c_void {
        // SAFETY: The GPU is alive (type invariant).
        unsafe { bindings::intel_gvt_policy_priv(self.as_raw()) }
    }

    /// The GPU's [`I915Gpu`], `None` before `init` stored it.
    ///
    /// # Safety
    ///
    /// Only from an op of this GPU other than `clean`; the reference must
    /// not outlive the op.
    unsafe fn gpu<'a>(&self) -> Option<Pin<&'a I915Gpu>> {
        // SAFETY: The slot is valid, and ops of a GPU are serialised by GVT-g.
        let p = unsafe { *self.priv_slot() };
        // A non-NULL value was stored by `init` with `into_foreign` and is
        // taken back only by `clean`, which is not running (the caller's
        // guarantee).
        // SAFETY: `p` came from `into_foreign` and is still owned by GVT-g.
        (!p.is_null()).then(|| unsafe { <Pin<KBox<I915Gpu>> as ForeignOwnable>::borrow(p) })
    }

    /// Hands `gpu` to GVT-g's private pointer of the GPU, until `clean`.
    fn set_gpu(&self, gpu: Pin<KBox<I915Gpu>>) {
        // SAFETY: The slot is valid and ops of a GPU are serialised; in
        // `init` it holds nothing of this policy.
        unsafe { *self.priv_slot() = gpu.into_foreign() };
    }

    /// Takes the GPU's [`I915Gpu`] back from GVT-g.
    ///
    /// # Safety
    ///
    /// Only from the GPU's `clean` op.
    unsafe fn take_gpu(&self) -> Option<Pin<KBox<I915Gpu>>> {
        // SAFETY: The slot is valid, and no other op runs during `clean`. It
        // holds NULL or what `init` stored with `into_foreign`, taken back
        // once here.
        unsafe {
            let p = ptr::replace(self.priv_slot(), ptr::null_mut());
            <Pin<KBox<I915Gpu>> as ForeignOwnable>::try_from_foreign(p)
        }
    }

    /// The GPU's idle vGPU, for GVT-g.
    fn idle_vgpu(&self) -> *mut bindings::intel_vgpu {
        // SAFETY: The GPU is alive (type invariant).
        unsafe { bindings::intel_gvt_idle_vgpu(self.as_raw()) }
    }
}

/// The GPU's `init` op is running: what the interface allows only there.
pub(super) struct InitOp<'a>(PhantomData<&'a ()>);

/// GVT-g holds the GPU's `sched_lock`: a scheduling op is running.
pub(super) struct SchedLocked<'a>(PhantomData<&'a ()>);

/// The slot pool's share of the GPU's high GM, reserved in `init` and
/// released on drop.
///
/// # Invariants
///
/// `start` is a reservation of `gvt`, made in its `init` op; the
/// reservation is owned by the GPU's [`I915Gpu`], which only `init` (on
/// failure) and `clean` drop, where the interface allows the release.
pub(super) struct GmReservation {
    gvt: Gvt,
    start: u64,
}

impl GmReservation {
    /// Start of the reservation in the GGTT, bytes.
    pub(super) fn start(&self) -> u64 {
        self.start
    }
}

impl Drop for GmReservation {
    fn drop(&mut self) {
        // SAFETY: A reservation of this GPU, released once, from its `init`
        // or `clean` op (type invariant).
        unsafe { bindings::intel_gvt_gm_release(self.gvt.as_raw(), self.start) };
    }
}

/// A vGPU (`struct intel_vgpu`) of a GPU that uses the policy.
///
/// # Invariants
///
/// `ptr` points to a live `struct intel_vgpu`: a `Vgpu` is made by an op
/// and lives in its stack frame, or is the one that `alloc_high` hands to
/// [`I915Gpu::alloc_high`], which keeps it until that vGPU's `free_high`
/// (the invariant of [`I915Gpu`]'s vGPU table).
pub(super) struct Vgpu {
    ptr: NonNull<bindings::intel_vgpu>,
}

// SAFETY: GVT-g's vGPUs may be used from any thread while alive; the
// accessors used below take no `&mut`.
unsafe impl Send for Vgpu {}
// SAFETY: See `Send`.
unsafe impl Sync for Vgpu {}

impl PartialEq for Vgpu {
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}

impl Vgpu {
    /// # Safety
    ///
    /// `ptr` must be a vGPU of a GPU that uses the policy, in one of its ops,
    /// and the handle must not outlive that op, except as the type
    /// invariant allows.
    unsafe fn from_raw(ptr: *mut bindings::intel_vgpu) -> Option<Self> {
        // INVARIANT: The caller's guarantee.
        NonNull::new(ptr).map(|ptr| Self { ptr })
    }

    fn as_raw(&self) -> *mut bindings::intel_vgpu {
        self.ptr.as_ptr()
    }

    /// The GPU of the vGPU.
    fn gvt(&self) -> Option<Gvt> {
        // SAFETY: The vGPU is alive (type invariant); its GPU outlives it
        // and uses the policy.
        unsafe { Gvt::from_raw(bindings::intel_vgpu_gvt(self.as_raw())) }
    }

    /// Whether this is the GPU's idle vGPU (GVT-g's id 0).
    fn is_idle(&self) -> bool {
        // SAFETY: The vGPU is alive (type invariant).
        unsafe { bindings::intel_vgpu_id(self.as_raw()) == 0 }
    }

    /// The weight of the vGPU's type (1-16).
    pub(super) fn weight(&self) -> u32 {
        // SAFETY: The vGPU is alive (type invariant).
        unsafe { bindings::intel_vgpu_weight(self.as_raw()) }
    }

    /// The vGPU's mdev device (`None` for the idle vGPU). GVT-g creates a
    /// vGPU from the mdev probe, so its device outlives it.
    pub(super) fn device(&self) -> Option<&Device> {
        // SAFETY: The vGPU is alive (type invariant). A non-NULL `dev` is its
        // registered mdev device, alive at least as long as the vGPU (see
        // above).
        unsafe {
            let dev = bindings::intel_vgpu_device(self.as_raw());
            (!dev.is_null()).then(|| Device::from_raw(dev))
        }
    }

    /// CPU time of the VM's vCPU threads, ns; 0 unless the vGPU is being
    /// scheduled.
    pub(super) fn vcpu_time_ns(&self, _locked: &SchedLocked<'_>) -> u64 {
        // SAFETY: The vGPU is alive (type invariant), and `sched_lock` is
        // held (`_locked`), as `intel_vgpu_vcpu_time_ns()` requires.
        unsafe { bindings::intel_vgpu_vcpu_time_ns(self.as_raw()) }
    }

    /// The slot that holds the policy's data of this vGPU.
    fn priv_slot(&self) -> *mut *mut c_void {
        // SAFETY: The vGPU is alive (type invariant).
        unsafe { bindings::intel_vgpu_policy_priv(self.as_raw()) }
    }

    /// The engine id `init_vgpu` tagged the vGPU with.
    fn id(&self) -> Option<VgpuId> {
        // SAFETY: The slot is valid; the vGPU's ops are serialised.
        let tag = unsafe { *self.priv_slot() }.addr();
        VgpuId::try_from(tag.checked_sub(1)?).ok()
    }

    /// Tags the vGPU with its engine id (or clears the tag).
    fn set_id(&self, id: Option<VgpuId>) {
        let tag = id.map_or(0, |id| usize::from(id).saturating_add(1));
        // SAFETY: The slot is valid; the vGPU's ops are serialised. The tag
        // is an integer, never dereferenced.
        unsafe { *self.priv_slot() = ptr::without_provenance_mut(tag) };
    }
}

/// The GPU `gvt` in one of its ops.
///
/// # Safety
///
/// `gvt` must be a GPU that uses the policy, in an op other than its `init`
/// and `clean`; the result must not outlive the op.
unsafe fn gpu_op<'a>(gvt: *mut bindings::intel_gvt) -> Option<Pin<&'a I915Gpu>> {
    // SAFETY: The caller's guarantee; the handle lives in this frame.
    unsafe { Gvt::from_raw(gvt)?.gpu() }
}

/// The vGPU `v` and its GPU, in an op of the vGPU.
///
/// # Safety
///
/// `v` must be a vGPU of a GPU that uses the policy, in an op other than the
/// GPU's `init` and `clean`; the results must not outlive the op, except
/// as the invariant of [`Vgpu`] allows.
unsafe fn vgpu_gpu<'a>(v: *mut bindings::intel_vgpu) -> Option<(Vgpu, Pin<&'a I915Gpu>)> {
    // SAFETY: The caller's guarantee.
    let vgpu = unsafe { Vgpu::from_raw(v) }?;
    // SAFETY: In an op of the GPU other than `init` and `clean`.
    let gpu = unsafe { vgpu.gvt()?.gpu() }?;
    Some((vgpu, gpu))
}

/// The GPU of the vGPU `v` and its engine id, in an op of the vGPU between
/// its `init_vgpu` and `clean_vgpu`.
///
/// # Safety
///
/// As for [`vgpu_gpu`].
unsafe fn vgpu_op<'a>(v: *mut bindings::intel_vgpu) -> Option<(Pin<&'a I915Gpu>, VgpuId)> {
    // SAFETY: The caller's guarantee.
    let (vgpu, gpu) = unsafe { vgpu_gpu(v) }?;
    Some((gpu, vgpu.id()?))
}

// ---- the ops; kvmgt.ko calls them with the locks gvt_policy.h names -------
//
// Every op below is only called by GVT-g through the table of a registered
// `Registration`, for a GPU whose current policy is `gvt-rs` (or that is
// switching to it, for `init` and the idle vGPU's `init_vgpu`). GVT-g
// serialises the ops of a GPU (all scheduling ops under `sched_lock`,
// placement under `gvt->lock` or the vGPU's lock), and runs none of them
// concurrently with the GPU's `init` or `clean`.

/// `init`: the GPU activates the policy.
///
/// # Safety
///
/// `gvt` is a live GPU switching to the policy, with `gvt->lock` and
/// `sched_lock` held, and `ops` is the table GVT-g calls, the `ops` field
/// of a registered [`Registration`].
unsafe extern "C" fn init(
    gvt: *mut bindings::intel_gvt,
    ops: *const bindings::intel_gvt_sched_policy_ops,
) -> c_int {
    // SAFETY: `ops` is a registered registration's table, which stays
    // registered while this op runs, and `gvt` a GPU in its `init` op (the
    // caller's guarantee); the handle is dropped by `clean`.
    let (top, gvt) = unsafe { (Registration::top(ops), Gvt::from_raw(gvt)) };
    let Some(gvt) = gvt else {
        return ENODEV.to_errno();
    };
    let op = InitOp(PhantomData);
    match I915Gpu::new(gvt.clone(), top, &op) {
        Ok(gpu) => {
            gvt.set_gpu(gpu);
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// `clean`: the GPU leaves the policy (or goes away).
///
/// # Safety
///
/// `gvt` is a GPU whose `init` succeeded, with `sched_lock` held; no other
/// op of the GPU runs, and none runs after this one until a new `init`.
unsafe extern "C" fn clean(gvt: *mut bindings::intel_gvt) {
    // SAFETY: A GPU in its `clean` op; the handle lives in this frame.
    if let Some(gvt) = unsafe { Gvt::from_raw(gvt) } {
        // SAFETY: In the GPU's `clean` op.
        let gpu = unsafe { gvt.take_gpu() };
        // Its drop stops the timer and releases the slot pool, here, in
        // `clean`.
        drop(gpu);
    }
}

/// `alloc_high`: places a vGPU's high GM before it is created.
///
/// # Safety
///
/// `v` is a vGPU being created on a GPU that uses the policy, under
/// `gvt->lock`, and stays alive until its `free_high`; `start` is valid for
/// a write.
unsafe extern "C" fn alloc_high(v: *mut bindings::intel_vgpu, size: u64, start: *mut u64) -> c_int {
    // SAFETY: A vGPU in an op of its GPU; the handle is kept by the
    // provider until its `free_high`, as the invariant of `Vgpu` allows.
    let Some((vgpu, gpu)) = (unsafe { vgpu_gpu(v) }) else {
        return ENODEV.to_errno();
    };
    match gpu.alloc_high(vgpu, size) {
        Ok(at) => {
            // SAFETY: GVT-g's out-pointer for this call.
            unsafe { start.write(at) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// `free_high`: a vGPU's high GM is released, the vGPU goes away.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, under its lock or
/// `gvt->lock`; after this op it is freed.
unsafe extern "C" fn free_high(v: *mut bindings::intel_vgpu) {
    // SAFETY: A vGPU in an op of its GPU; the handle lives in this frame.
    if let Some((vgpu, gpu)) = unsafe { vgpu_gpu(v) } {
        gpu.free_high(&vgpu);
    }
}

/// `high_avail`: how many vGPUs of `size` bytes of high GM still fit.
///
/// # Safety
///
/// `gvt` is a GPU that uses the policy, under `gvt->lock`.
unsafe extern "C" fn high_avail(gvt: *mut bindings::intel_gvt, size: u64) -> c_uint {
    // SAFETY: A GPU in an op other than `init` and `clean`.
    unsafe { gpu_op(gvt) }.map_or(0, |g| g.high_avail(size))
}

/// `init_vgpu`: the vGPU (or the idle vGPU) reaches the scheduler.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy (after its `alloc_high`, or
/// the idle vGPU), with `sched_lock` held.
unsafe extern "C" fn init_vgpu(v: *mut bindings::intel_vgpu) -> c_int {
    // SAFETY: A vGPU in an op of its GPU; the handle lives in this frame.
    let Some(vgpu) = (unsafe { Vgpu::from_raw(v) }) else {
        return EINVAL.to_errno();
    };
    if vgpu.is_idle() {
        // The idle vGPU: nothing to keep.
        return 0;
    }
    // SAFETY: An op of the GPU other than `init` and `clean`.
    let Some(gpu) = (unsafe { vgpu.gvt().and_then(|gvt| gvt.gpu()) }) else {
        return ENODEV.to_errno();
    };
    match gpu.init_vgpu(&vgpu) {
        Ok(id) => {
            vgpu.set_id(Some(id));
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// `clean_vgpu`: the vGPU leaves the scheduler.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, stopped, with `sched_lock`
/// held.
unsafe extern "C" fn clean_vgpu(v: *mut bindings::intel_vgpu) {
    // SAFETY: A vGPU in an op of its GPU; the handle lives in this frame.
    let Some((vgpu, gpu)) = (unsafe { vgpu_gpu(v) }) else {
        return;
    };
    if let Some(id) = vgpu.id() {
        gpu.clean_vgpu(id);
        vgpu.set_id(None);
    }
}

/// `start_schedule`: the vGPU becomes schedulable.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn start_schedule(v: *mut bindings::intel_vgpu) {
    // SAFETY: The caller's guarantee.
    if let Some((gpu, id)) = unsafe { vgpu_op(v) } {
        gpu.start_schedule(id);
    }
}

/// `stop_schedule`: the vGPU stops being schedulable.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn stop_schedule(v: *mut bindings::intel_vgpu) {
    // SAFETY: The caller's guarantee.
    if let Some((gpu, id)) = unsafe { vgpu_op(v) } {
        gpu.stop_schedule(id);
    }
}

/// `pick_next`: a scheduling request; names the next vGPU, or NULL.
///
/// # Safety
///
/// `gvt` is a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn pick_next(
    gvt: *mut bindings::intel_gvt,
    _now: bindings::ktime_t,
    timer: bool,
) -> *mut bindings::intel_vgpu {
    // SAFETY: A GPU in one of its ops; the handle lives in this frame.
    let Some(gvt) = (unsafe { Gvt::from_raw(gvt) }) else {
        return ptr::null_mut();
    };
    // SAFETY: An op other than `init` and `clean`.
    let Some(gpu) = (unsafe { gvt.gpu() }) else {
        return ptr::null_mut();
    };
    let locked = SchedLocked(PhantomData);
    match gpu.pick_next(timer, &locked) {
        GvtgAnswer::Keep => ptr::null_mut(),
        GvtgAnswer::Idle => gvt.idle_vgpu(),
        // A vGPU of the table: alive until its `free_high`.
        GvtgAnswer::Run(id) => gpu.with_vgpu(id, Vgpu::as_raw).unwrap_or(ptr::null_mut()),
    }
}

/// `switched`: every engine drained and `next` is the current vGPU.
///
/// # Safety
///
/// `gvt` is a GPU that uses the policy, with `sched_lock` held; `next` is
/// NULL or one of its vGPUs (or its idle vGPU).
unsafe extern "C" fn switched(
    gvt: *mut bindings::intel_gvt,
    _prev: *mut bindings::intel_vgpu,
    next: *mut bindings::intel_vgpu,
    _now: bindings::ktime_t,
) {
    // SAFETY: A GPU in an op other than `init` and `clean`, and `next` NULL
    // or alive in this op; the handles live in this frame.
    let (gpu, next) = unsafe { (gpu_op(gvt), Vgpu::from_raw(next)) };
    if let Some(gpu) = gpu {
        gpu.switched(next.is_none_or(|v| v.is_idle()));
    }
}

/// `queued`: the vGPU queued a workload on i915 engine `engine`.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn queued(v: *mut bindings::intel_vgpu, engine: c_uint) {
    // SAFETY: The caller's guarantee.
    if let Some((gpu, id)) = unsafe { vgpu_op(v) } {
        gpu.queued(id, engine);
    }
}

/// `may_dispatch`: whether engine `engine` may take the vGPU's next
/// workload.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn may_dispatch(v: *mut bindings::intel_vgpu, engine: c_uint) -> bool {
    // SAFETY: The caller's guarantee.
    unsafe { vgpu_op(v) }.is_none_or(|(gpu, id)| gpu.may_dispatch(id, engine))
}

/// `dispatched`: engine `engine` took the vGPU's oldest workload.
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn dispatched(v: *mut bindings::intel_vgpu, engine: c_uint) {
    // SAFETY: The caller's guarantee.
    if let Some((gpu, id)) = unsafe { vgpu_op(v) } {
        gpu.dispatched(id, engine);
    }
}

/// `completed`: a workload of the vGPU left engine `engine` (or was
/// discarded, `status == -ECANCELED`).
///
/// # Safety
///
/// `v` is a vGPU of a GPU that uses the policy, with `sched_lock` held.
unsafe extern "C" fn completed(
    v: *mut bindings::intel_vgpu,
    engine: c_uint,
    gpu_ns: u64,
    status: c_int,
) {
    // SAFETY: The caller's guarantee.
    if let Some((gpu, id)) = unsafe { vgpu_op(v) } {
        gpu.completed(id, engine, gpu_ns, status);
    }
}
