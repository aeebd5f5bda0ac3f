// SPDX-License-Identifier: GPL-2.0

//! External vGPU scheduling policies for Intel GVT-g.
//!
//! C header: [`include/drm/intel/gvt_policy.h`](srctree/include/drm/intel/gvt_policy.h).
//!
//! GVT-g (`kvmgt.ko`) schedules the vGPUs of each GPU with one policy at a
//! time, chosen in sysfs among the registered ones. A policy implements
//! [`Policy`] and is registered while a [`Registration`] exists; this module
//! builds the `struct intel_gvt_sched_policy_ops` table (with the `owner`
//! of the module that implements the trait), turns GVT-g's pointers into
//! the references below and keeps the policy's data in GVT-g's private
//! pointers:
//!
//! - [`Policy::init`] makes the data of a GPU ([`Policy::GpuData`]) when the
//!   GPU activates the policy; it is dropped when the GPU leaves it (the
//!   `clean` op), so its [`Drop`] must cancel the policy's timers and work.
//! - [`Policy::init_vgpu`] may return a [`VgpuRef`], which carries the vGPU's
//!   data ([`Policy::VgpuData`]) until `clean_vgpu`. The scheduling ops of a
//!   vGPU reach the policy only while it has one: GVT-g also calls
//!   `init_vgpu` for the GPU's idle vGPU, which never has work.
//! - [`Gvt`] and [`Vgpu`] are references to GVT-g's objects that live as
//!   long as the op that received them. What a policy keeps beyond an op is
//!   a [`VgpuRef`], usable while its vGPU is in the scheduler, a
//!   [`VgpuKey`] to recognise a vGPU, or a [`ScheduleHandle`], which stops
//!   working when the GPU leaves the policy. High GM reserved in `init`
//!   ([`InitContext::gm_reserve`]) is released by this module after the
//!   GPU's data is dropped.
//!
//! GVT-g serialises the ops of a GPU: scheduling ops run under its
//! `sched_lock`, the placement ops (`alloc_high`, `free_high`, `high_avail`)
//! under `gvt->lock` or the vGPU's lock, and none runs concurrently with
//! the GPU's `init` or `clean` (see the header; `free_high` because a policy
//! switch waits, under `gtt.residency_lock`, until no vGPU the policy placed
//! remains).
//!
//! # Where this lives
//!
//! The interface is private to GVT-g and this is its only Rust user, so
//! the abstraction is part of the i915 provider of `gvt_rs.ko`, not of the
//! `kernel` crate; every `unsafe` block of the provider is in this file.
//! `intel_gvt_register_sched_policy()` and the accessors are exported by
//! `kvmgt.ko` (and reach `i915.ko`) in the `INTEL_GVT_POLICY` namespace,
//! which `gvt_rs.ko` imports, and `gvt_rs.ko` then depends on `kvmgt.ko`.
//! The types are generic over the policy, so that the ops table and the
//! trampolines are built for the [`Policy`] that the provider implements.

use core::{
    marker::PhantomData,
    ptr::{
        self,
        NonNull, //
    },
    sync::atomic::{
        AtomicBool,
        Ordering, //
    }, //
};
use kernel::{
    bindings,
    device::Device,
    error::{
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    module::this_module,
    new_spinlock_irq,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        SpinLockIrq, //
    },
    types::{
        ForeignOwnable,
        Opaque, //
    }, //
};

/// A vGPU scheduling policy.
///
/// The value that implements it is kept by the [`Registration`] and given
/// to [`Policy::init`]; the other ops get the GPU's data.
#[vtable]
pub trait Policy: Send + Sync + Sized + 'static {
    /// The name the policy is selected by (shorter than 16 bytes, not
    /// `tbs`).
    const NAME: &'static CStr;

    /// What the policy keeps of a GPU that uses it.
    type GpuData: Send + Sync;

    /// What the policy keeps of a vGPU in its scheduler.
    type VgpuData: Send + Sync;

    /// The GPU `gvt` activates the policy (`gvt->lock` and `sched_lock`
    /// held).
    fn init(&self, gvt: &Gvt<Self>, ctx: &mut InitContext<'_, Self>) -> Result<Self::GpuData>;

    /// `vgpu` enters the scheduler, stopped (`sched_lock` held). Returns
    /// the [`VgpuRef`] the scheduling ops of the vGPU get, or `None` to get
    /// none of them (the idle vGPU, for which this is also called).
    fn init_vgpu(gpu: &Self::GpuData, vgpu: &Vgpu<Self>) -> Result<Option<VgpuRef<Self>>>;

    /// `vgpu` leaves the scheduler (`sched_lock` held): the [`VgpuRef`]
    /// [`Policy::init_vgpu`] returned, which no longer gives access to it.
    fn clean_vgpu(gpu: &Self::GpuData, vgpu: &Vgpu<Self>, vref: VgpuRef<Self>);

    /// The vGPU becomes schedulable.
    fn start_schedule(gpu: &Self::GpuData, vgpu: &Vgpu<Self>, data: &Self::VgpuData);

    /// The vGPU stops being schedulable.
    fn stop_schedule(gpu: &Self::GpuData, vgpu: &Vgpu<Self>, data: &Self::VgpuData);

    /// A scheduling request (`timer`: from [`ScheduleHandle::request`] or
    /// [`Gvt::request_schedule`]): the vGPU to run next.
    fn pick_next(
        gpu: &Self::GpuData,
        gvt: &Gvt<Self>,
        timer: bool,
        locked: &SchedLocked<'_, Self>,
    ) -> Pick<Self>;

    /// Every engine drained and `next` (`None`: no vGPU) is the current
    /// vGPU.
    fn switched(
        _gpu: &Self::GpuData,
        _gvt: &Gvt<Self>,
        _prev: Option<&Vgpu<Self>>,
        _next: Option<&Vgpu<Self>>,
    ) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The vGPU queued a workload on i915 engine `engine`.
    fn queued(_gpu: &Self::GpuData, _vgpu: &Vgpu<Self>, _data: &Self::VgpuData, _engine: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Whether `engine` may take the vGPU's next workload; `false` ends the
    /// vGPU's turn, and the policy must then request a schedule.
    fn may_dispatch(
        _gpu: &Self::GpuData,
        _vgpu: &Vgpu<Self>,
        _data: &Self::VgpuData,
        _engine: u32,
    ) -> bool {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// `engine` took the vGPU's oldest queued workload.
    fn dispatched(_gpu: &Self::GpuData, _vgpu: &Vgpu<Self>, _data: &Self::VgpuData, _engine: u32) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// A workload queued on `engine` left the queue after `gpu_ns` of GPU
    /// time, with `status` (`Err(ECANCELED)`: discarded before it ran).
    fn completed(
        _gpu: &Self::GpuData,
        _vgpu: &Vgpu<Self>,
        _data: &Self::VgpuData,
        _engine: u32,
        _gpu_ns: u64,
        _status: Result,
    ) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Places `size` bytes of high GM for `vgpu`, being created, inside the
    /// GPU's reservation; returns their start (`gvt->lock` held). Needs
    /// [`Policy::free_high`].
    fn alloc_high(_gpu: &Self::GpuData, _vgpu: &Vgpu<Self>, _size: u64) -> Result<u64> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Undoes [`Policy::alloc_high`]; GVT-g frees `vgpu` after this.
    fn free_high(_gpu: &Self::GpuData, _vgpu: &Vgpu<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// How many more vGPUs with `size` bytes of high GM fit (`gvt->lock`
    /// held).
    fn high_avail(_gpu: &Self::GpuData, _gvt: &Gvt<Self>, _size: u64) -> u32 {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// The answer of [`Policy::pick_next`].
pub enum Pick<T: Policy> {
    /// Keep the current vGPU.
    Keep,
    /// Switch to the GPU's idle vGPU (every engine drains).
    Idle,
    /// Switch to this vGPU of the GPU; one that left the scheduler is
    /// refused (as [`Pick::Keep`], with a warning).
    Run(VgpuRef<T>),
}

/// A GPU (`struct intel_gvt`) whose policy is `T`, for the duration of an
/// op.
///
/// # Invariants
///
/// A `&Gvt<T>` points to a live `struct intel_gvt` that uses (or, in
/// [`Policy::init`], activates) the policy `T`, for at least its lifetime.
#[repr(transparent)]
pub struct Gvt<T> {
    gvt: Opaque<bindings::intel_gvt>,
    _t: PhantomData<T>,
}

// SAFETY: The methods of `&Gvt<T>` call accessors that GVT-g allows from any
// thread while the GPU is alive; what needs a lock takes a proof of it.
unsafe impl<T> Sync for Gvt<T> {}

impl<T: Policy> Gvt<T> {
    /// # Safety
    ///
    /// `ptr` must be non-null and satisfy the type invariant for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::intel_gvt) -> &'a Self {
        // SAFETY: `Gvt<T>` is a transparent wrapper of the (opaque) C type,
        // and the caller guarantees the rest.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_raw(&self) -> *mut bindings::intel_gvt {
        self.gvt.get()
    }

    /// The GPU's PCI device.
    pub fn device(&self) -> &Device {
        // SAFETY: The GPU is alive (type invariant); its device is never NULL
        // and outlives it.
        unsafe { Device::from_raw(bindings::intel_gvt_device(self.as_raw())) }
    }

    /// Bit `i` set: i915 engine `i` (`enum intel_engine_id`) exists.
    pub fn engine_mask(&self) -> u32 {
        // SAFETY: The GPU is alive (type invariant).
        unsafe { bindings::intel_gvt_engine_mask(self.as_raw()) }
    }

    /// Graphics memory of the GPU that vGPUs may use: (low, high), bytes.
    pub fn gm_avail(&self) -> (u64, u64) {
        let (mut low, mut high) = (0u64, 0u64);
        // SAFETY: The GPU is alive (type invariant); the out-pointers are
        // local.
        unsafe { bindings::intel_gvt_gm_avail(self.as_raw(), &mut low, &mut high) };
        (low, high)
    }

    /// Asks GVT-g for a scheduling decision ([`Policy::pick_next`] with
    /// `timer` set). Any context.
    pub fn request_schedule(&self) {
        // SAFETY: The GPU is alive (type invariant); callable from any
        // context.
        unsafe { bindings::intel_gvt_request_schedule(self.as_raw()) };
    }

    /// The slot GVT-g keeps the policy's data of the GPU in.
    fn priv_slot(&self) -> *mut *mut c_void {
        // SAFETY: The GPU is alive (type invariant).
        unsafe { bindings::intel_gvt_policy_priv(self.as_raw()) }
    }

    /// The GPU's state, `None` outside `init` to `clean`.
    ///
    /// # Safety
    ///
    /// Only from an op of the GPU other than `init` and `clean`; the
    /// reference must not outlive the op.
    unsafe fn state<'a>(&self) -> Option<&'a GpuState<T>> {
        // SAFETY: The slot is valid; only `init` and `clean` write it, and
        // they do not run concurrently with other ops of the GPU.
        let p = unsafe { *self.priv_slot() };
        // A non-NULL value was stored by `init` with `into_foreign` and is
        // taken back only by `clean`, which is not running (the caller's
        // guarantee).
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` came from `into_foreign` and is still owned by GVT-g.
        let state = unsafe { <KBox<GpuState<T>> as ForeignOwnable>::borrow(p) };
        Some(state)
    }

    /// The idle vGPU of the GPU, for GVT-g.
    fn idle_vgpu(&self) -> *mut bindings::intel_vgpu {
        // SAFETY: The GPU is alive (type invariant).
        unsafe { bindings::intel_gvt_idle_vgpu(self.as_raw()) }
    }
}

/// A vGPU (`struct intel_vgpu`) of a GPU whose policy is `T`, for the
/// duration of an op.
///
/// # Invariants
///
/// A `&Vgpu<T>` points to a live `struct intel_vgpu` of a GPU that uses the
/// policy `T`, for at least its lifetime; GVT-g sets its GPU pointer before
/// any op sees it.
#[repr(transparent)]
pub struct Vgpu<T> {
    vgpu: Opaque<bindings::intel_vgpu>,
    _t: PhantomData<T>,
}

// SAFETY: As for `Gvt<T>`.
unsafe impl<T> Sync for Vgpu<T> {}

impl<T: Policy> Vgpu<T> {
    /// # Safety
    ///
    /// `ptr` must be non-null and satisfy the type invariant for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::intel_vgpu) -> &'a Self {
        // SAFETY: `Vgpu<T>` is a transparent wrapper of the (opaque) C type,
        // and the caller guarantees the rest.
        unsafe { &*ptr.cast::<Self>() }
    }

    fn as_raw(&self) -> *mut bindings::intel_vgpu {
        self.vgpu.get()
    }

    /// The GPU of the vGPU.
    pub fn gvt(&self) -> &Gvt<T> {
        // SAFETY: The vGPU is alive (type invariant), and GVT-g sets its GPU,
        // which outlives it and uses the same policy, when it creates it.
        unsafe { Gvt::from_raw(bindings::intel_vgpu_gvt(self.as_raw())) }
    }

    /// Whether this is the GPU's idle vGPU (GVT-g's id 0).
    pub fn is_idle(&self) -> bool {
        // SAFETY: The vGPU is alive (type invariant).
        unsafe { bindings::intel_vgpu_id(self.as_raw()) == 0 }
    }

    /// The weight of the vGPU's type (1-16).
    pub fn weight(&self) -> u32 {
        // SAFETY: The vGPU is alive (type invariant).
        unsafe { bindings::intel_vgpu_weight(self.as_raw()) }
    }

    /// The vGPU's mdev device (`None` for the idle vGPU).
    pub fn device(&self) -> Option<&Device> {
        // SAFETY: The vGPU is alive (type invariant).
        let dev = unsafe { bindings::intel_vgpu_device(self.as_raw()) };
        // GVT-g creates a vGPU from the probe of its mdev device, which
        // therefore outlives it.
        if dev.is_null() {
            return None;
        }
        // SAFETY: A non-NULL `dev` is that registered device.
        let dev = unsafe { Device::from_raw(dev) };
        Some(dev)
    }

    /// CPU time of the vCPU threads of the vGPU's VM, ns; 0 unless the vGPU
    /// is being scheduled, or if `locked` is another GPU's.
    pub fn vcpu_time_ns(&self, locked: &SchedLocked<'_, T>) -> u64 {
        if !ptr::eq(self.gvt(), locked.gvt) {
            return 0;
        }
        // SAFETY: The vGPU is alive (type invariant), and its GPU's
        // `sched_lock` is held (`locked`), as `intel_vgpu_vcpu_time_ns()`
        // requires.
        unsafe { bindings::intel_vgpu_vcpu_time_ns(self.as_raw()) }
    }

    /// What identifies the vGPU while it exists.
    pub fn key(&self) -> VgpuKey {
        VgpuKey(self.as_raw().addr())
    }

    /// The slot GVT-g keeps the policy's data of the vGPU in.
    fn priv_slot(&self) -> *mut *mut c_void {
        // SAFETY: The vGPU is alive (type invariant).
        unsafe { bindings::intel_vgpu_policy_priv(self.as_raw()) }
    }

    /// The vGPU's reference, `None` outside `init_vgpu` to `clean_vgpu`.
    ///
    /// # Safety
    ///
    /// Only from a scheduling op of the vGPU's GPU other than `init_vgpu` and
    /// `clean_vgpu` of this vGPU; the result must not outlive the op.
    unsafe fn vref<'a>(&self) -> Option<ArcBorrow<'a, VgpuInner<T>>> {
        // SAFETY: The slot is valid; only `init_vgpu` and `clean_vgpu` write
        // it, serialised with the caller by `sched_lock`.
        let p = unsafe { *self.priv_slot() };
        // A non-NULL value was stored by `init_vgpu` with `into_foreign` and
        // is taken back only by `clean_vgpu`, not running.
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` came from `into_foreign` and is still owned by GVT-g.
        let vref = unsafe { <Arc<VgpuInner<T>> as ForeignOwnable>::borrow(p) };
        Some(vref)
    }
}

/// Identifies a vGPU while it exists: equal keys, same vGPU. It gives no
/// access to the vGPU; a vGPU created after another was freed may get its
/// key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct VgpuKey(usize);

/// A vGPU's data, and access to the vGPU while it is in the scheduler
/// (from its `init_vgpu` to its `clean_vgpu`).
///
/// Cloning it is cheap (reference counted).
pub struct VgpuRef<T: Policy>(Arc<VgpuInner<T>>);

/// # Invariants
///
/// `attached` is only changed under the `sched_lock` of the GPU `gvt`; while
/// it is set, `vgpu` is a vGPU of `gvt` between its `init_vgpu` and
/// `clean_vgpu`, and this is the reference in its private slot.
struct VgpuInner<T: Policy> {
    vgpu: NonNull<bindings::intel_vgpu>,
    gvt: NonNull<bindings::intel_gvt>,
    attached: AtomicBool,
    data: T::VgpuData,
}

// SAFETY: The pointers are only dereferenced while `attached` says the vGPU is
// alive, under its GPU's `sched_lock`, from any thread; `data` is `Send`.
unsafe impl<T: Policy> Send for VgpuInner<T> {}
// SAFETY: See `Send`; `data` is `Sync`, `attached` atomic.
unsafe impl<T: Policy> Sync for VgpuInner<T> {}

impl<T: Policy> VgpuRef<T> {
    /// A reference to `vgpu` with `data`, for [`Policy::init_vgpu`] to
    /// return; it gives access to the vGPU once it did.
    pub fn new(vgpu: &Vgpu<T>, data: T::VgpuData) -> Result<Self> {
        let inner = VgpuInner {
            // INVARIANT: Not attached until `init_vgpu` stores it.
            vgpu: NonNull::from(vgpu).cast(),
            gvt: NonNull::from(vgpu.gvt()).cast(),
            attached: AtomicBool::new(false),
            data,
        };
        Ok(Self(Arc::new(inner, GFP_KERNEL)?))
    }

    /// The vGPU's data.
    pub fn data(&self) -> &T::VgpuData {
        &self.0.data
    }

    /// The vGPU, while it is in the scheduler of the GPU whose `sched_lock`
    /// `locked` says is held.
    pub fn get<'a>(&'a self, locked: &'a SchedLocked<'_, T>) -> Option<&'a Vgpu<T>> {
        let inner = &*self.0;
        if inner.gvt.as_ptr() != locked.gvt.as_raw() || !inner.attached.load(Ordering::Relaxed) {
            return None;
        }
        // SAFETY: Attached, so alive until its `clean_vgpu`, which cannot
        // run while `sched_lock` is held for the lifetime `'a` (`locked`).
        let vgpu = unsafe { Vgpu::from_raw(inner.vgpu.as_ptr()) };
        Some(vgpu)
    }

    /// Whether this is a reference to `vgpu`.
    pub fn is(&self, vgpu: &Vgpu<T>) -> bool {
        // A vGPU may reuse a freed one's memory, on another GPU.
        self.0.vgpu.as_ptr() == vgpu.as_raw() && self.0.gvt.as_ptr() == vgpu.gvt().as_raw()
    }
}

impl<T: Policy> Clone for VgpuRef<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

/// GVT-g holds the `sched_lock` of a GPU: [`Policy::pick_next`] is running.
pub struct SchedLocked<'a, T> {
    gvt: &'a Gvt<T>,
}

/// What [`Policy::init`] may do only there.
pub struct InitContext<'a, T: Policy> {
    gvt: &'a Gvt<T>,
    sched: &'a ScheduleHandle<T>,
    pool: Option<u64>,
}

impl<T: Policy> InitContext<'_, T> {
    /// Reserves `size` bytes of the GPU's high GM (a multiple of
    /// `INTEL_GVT_SHARED_GM_ALIGN`) for the vGPUs the policy places;
    /// returns its start. Released after the GPU's data is dropped, or if
    /// `init` fails. One reservation per GPU: a second is `EBUSY`.
    pub fn gm_reserve(&mut self, size: u64) -> Result<u64> {
        if self.pool.is_some() {
            return Err(EBUSY);
        }
        let mut start = 0u64;
        // SAFETY: The GPU is alive, in its `init` op, where the interface
        // allows a reservation.
        let ret = unsafe { bindings::intel_gvt_gm_reserve(self.gvt.as_raw(), size, &mut start) };
        to_result(ret)?;
        self.pool = Some(start);
        Ok(start)
    }

    /// A handle that requests schedules of the GPU from anywhere.
    pub fn schedule_handle(&self) -> ScheduleHandle<T> {
        ScheduleHandle(self.sched.0.clone())
    }
}

/// Requests scheduling decisions of a GPU from outside its ops (a policy's
/// timer), until the GPU leaves the policy; then requests do nothing.
pub struct ScheduleHandle<T: Policy>(Arc<SchedInner<T>>);

/// # Invariants
///
/// `gvt` is `Some` from the GPU's `init` to its `clean`, while the GPU uses
/// the policy.
#[pin_data]
struct SchedInner<T> {
    #[pin]
    gvt: SpinLockIrq<Option<GvtPtr>>,
    _t: PhantomData<T>,
}

/// A GPU pointer that [`SchedInner`] keeps while the GPU is alive.
struct GvtPtr(NonNull<bindings::intel_gvt>);

// SAFETY: `intel_gvt_request_schedule()`, the only use, may be called from
// any thread.
unsafe impl Send for GvtPtr {}

impl<T: Policy> ScheduleHandle<T> {
    fn new(gvt: &Gvt<T>) -> Result<Self> {
        let gvt = GvtPtr(NonNull::from(gvt).cast());
        let inner = Arc::pin_init(
            pin_init!(SchedInner {
                // INVARIANT: Made in the GPU's `init`.
                gvt <- new_spinlock_irq!(Some(gvt), "intel_gvt_policy_sched"),
                _t: PhantomData,
            }),
            GFP_KERNEL,
        )?;
        Ok(Self(inner))
    }

    /// Asks GVT-g for a scheduling decision ([`Policy::pick_next`] with
    /// `timer` set), if the GPU still uses the policy. Any context.
    pub fn request(&self) {
        if let Some(gvt) = &*self.0.gvt.lock() {
            // SAFETY: The GPU uses the policy (type invariant of
            // `SchedInner`), so it is alive; `clean` waits for the lock.
            unsafe { bindings::intel_gvt_request_schedule(gvt.0.as_ptr()) };
        }
    }

    /// The GPU leaves the policy.
    fn revoke(&self) {
        *self.0.gvt.lock() = None;
    }
}

/// What this module keeps of a GPU that uses the policy, in GVT-g's private
/// pointer of the GPU from `init` to `clean`.
struct GpuState<T: Policy> {
    data: T::GpuData,
    sched: ScheduleHandle<T>,
    /// Start of the reservation made in `init`.
    pool: Option<u64>,
}

impl<T: Policy> GpuState<T> {
    /// Runs [`Policy::init`] for `gvt`, in its `init` op.
    fn new(policy: &T, gvt: &Gvt<T>) -> Result<KBox<Self>> {
        let sched = ScheduleHandle::new(gvt)?;
        let mut ctx = InitContext {
            gvt,
            sched: &sched,
            pool: None,
        };
        let state = match policy.init(gvt, &mut ctx) {
            Ok(data) => {
                let sched = ScheduleHandle(sched.0.clone());
                KBox::new(
                    Self {
                        data,
                        sched,
                        pool: ctx.pool,
                    },
                    GFP_KERNEL,
                )
                .map_err(Error::from)
            }
            Err(e) => Err(e),
        };
        if state.is_err() {
            // The data is gone: so is what it was given.
            sched.revoke();
            Self::release(gvt, ctx.pool);
        }
        state
    }

    /// Releases the reservation `pool` of `gvt`.
    fn release(gvt: &Gvt<T>, pool: Option<u64>) {
        if let Some(start) = pool {
            // SAFETY: A reservation of this GPU, made in `init`, released
            // once, from `init` or `clean`.
            unsafe { bindings::intel_gvt_gm_release(gvt.as_raw(), start) };
        }
    }

    /// Drops the policy's data, then revokes the schedule handles and
    /// releases the reservation: the GPU leaves the policy.
    fn clean(self, gvt: &Gvt<T>) {
        let Self { data, sched, pool } = self;
        drop(data);
        sched.revoke();
        Self::release(gvt, pool);
    }
}

/// A registered policy.
///
/// # Invariants
///
/// `ops` holds a complete ops table for `T` whose `owner` is `T`'s module;
/// it is registered with GVT-g from the end of the initialiser to
/// [`PinnedDrop::drop`]. `policy` is initialised before it is registered.
#[pin_data(PinnedDrop)]
pub struct Registration<T: Policy> {
    policy: T,
    #[pin]
    ops: Opaque<bindings::intel_gvt_sched_policy_ops>,
}

// SAFETY: After registration GVT-g only reads and links the table under its
// policy lock; `drop` passes its address to `unregister`, from any thread.
unsafe impl<T: Policy> Send for Registration<T> {}
// SAFETY: See `Send`; `&self` only gives `&T`, and `T` is `Sync`.
unsafe impl<T: Policy> Sync for Registration<T> {}

impl<T: Policy> Registration<T> {
    /// Registers `policy` with GVT-g, which may activate it on a GPU (and
    /// call [`Policy::init`]) before this returns.
    pub fn new(policy: T) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            policy,
            ops <- Opaque::try_ffi_init(|slot: *mut bindings::intel_gvt_sched_policy_ops| {
                // SAFETY: `slot` is valid for writes.
                unsafe { slot.write(Self::ops_table()) };
                // INVARIANT: The table is complete and pinned (GVT-g links it
                // into its list), `policy` initialised; it stays registered
                // until the unregister in `drop`.
                // SAFETY: A complete table, pinned until unregistered.
                let ret = unsafe { bindings::intel_gvt_register_sched_policy(slot) };
                to_result(ret)
            }),
        })
    }

    /// The policy of `T`.
    pub fn policy(&self) -> &T {
        &self.policy
    }

    /// The ops table of `T`; GVT-g owns `link`.
    fn ops_table() -> bindings::intel_gvt_sched_policy_ops {
        bindings::intel_gvt_sched_policy_ops {
            name: T::NAME.as_char_ptr(),
            owner: this_module::<T::OwnerModule>().as_ptr(),
            init: Some(Self::init),
            clean: Some(Self::clean),
            init_vgpu: Some(Self::init_vgpu),
            clean_vgpu: Some(Self::clean_vgpu),
            start_schedule: Some(Self::start_schedule),
            stop_schedule: Some(Self::stop_schedule),
            pick_next: Some(Self::pick_next),
            switched: if T::HAS_SWITCHED {
                Some(Self::switched)
            } else {
                None
            },
            queued: if T::HAS_QUEUED {
                Some(Self::queued)
            } else {
                None
            },
            dispatched: if T::HAS_DISPATCHED {
                Some(Self::dispatched)
            } else {
                None
            },
            may_dispatch: if T::HAS_MAY_DISPATCH {
                Some(Self::may_dispatch)
            } else {
                None
            },
            completed: if T::HAS_COMPLETED {
                Some(Self::completed)
            } else {
                None
            },
            alloc_high: if T::HAS_ALLOC_HIGH {
                Some(Self::alloc_high)
            } else {
                None
            },
            free_high: if T::HAS_FREE_HIGH {
                Some(Self::free_high)
            } else {
                None
            },
            high_avail: if T::HAS_HIGH_AVAIL {
                Some(Self::high_avail)
            } else {
                None
            },
            ..pin_init::zeroed()
        }
    }

    // The ops. GVT-g calls them only through the table of a registered
    // `Registration<T>`, for a GPU whose policy is `T` (or that is switching
    // to it, for `init` and the idle vGPU's `init_vgpu`), with live objects,
    // the locks the header names and the serialisation described in the
    // module documentation.

    /// `init`: the GPU activates the policy.
    ///
    /// # Safety
    ///
    /// `gvt` is a live GPU switching to the policy, with `gvt->lock` and
    /// `sched_lock` held, and `ops` the `ops` field of a registered
    /// [`Registration<T>`].
    unsafe extern "C" fn init(
        gvt: *mut bindings::intel_gvt,
        ops: *const bindings::intel_gvt_sched_policy_ops,
    ) -> c_int {
        if gvt.is_null() {
            return ENODEV.to_errno();
        }
        let ops = Opaque::cast_from(ops).cast_mut();
        // SAFETY: `ops` is the `ops` field of a `Registration<T>` (the
        // caller's guarantee), so the container is in the same allocation.
        let reg = unsafe { kernel::container_of!(ops, Self, ops) };
        // `policy` is initialised before the table is registered and never
        // written afterwards (type invariant); only that field is referenced,
        // not the `Opaque` that GVT-g may be writing.
        // SAFETY: `reg` is valid and registered while this op runs.
        let policy = unsafe { &*ptr::addr_of!((*reg).policy) };
        // SAFETY: A live GPU in its `init` op; the reference lives in this
        // frame.
        let gvt = unsafe { Gvt::<T>::from_raw(gvt) };
        match GpuState::new(policy, gvt) {
            Ok(state) => {
                // SAFETY: The slot is valid, and no other op of the GPU runs;
                // it holds nothing of this policy in `init`.
                unsafe { *gvt.priv_slot() = state.into_foreign() };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `clean`: the GPU leaves the policy (or goes away).
    ///
    /// # Safety
    ///
    /// `gvt` is a GPU whose `init` succeeded, with `sched_lock` held; no
    /// other op of the GPU runs, and none runs after this one until a new
    /// `init`.
    unsafe extern "C" fn clean(gvt: *mut bindings::intel_gvt) {
        if gvt.is_null() {
            return;
        }
        // SAFETY: A live GPU in its `clean` op; the reference lives in this
        // frame.
        let gvt = unsafe { Gvt::<T>::from_raw(gvt) };
        // SAFETY: The slot is valid and no other op runs during `clean`.
        let p = unsafe { ptr::replace(gvt.priv_slot(), ptr::null_mut()) };
        // SAFETY: `p` is NULL or what `init` stored with `into_foreign`,
        // taken back once, here.
        let state = unsafe { <KBox<GpuState<T>> as ForeignOwnable>::try_from_foreign(p) };
        if let Some(state) = state {
            KBox::into_inner(state).clean(gvt);
        }
    }

    /// The vGPU `v` and its GPU's state.
    ///
    /// # Safety
    ///
    /// `v` is NULL or a live vGPU of a GPU that uses the policy, in an op of
    /// the GPU other than `init` and `clean`; the results must not outlive
    /// the op.
    unsafe fn vgpu_state<'a>(
        v: *mut bindings::intel_vgpu,
    ) -> Option<(&'a Vgpu<T>, &'a GpuState<T>)> {
        if v.is_null() {
            return None;
        }
        // SAFETY: The caller's guarantee.
        let vgpu = unsafe { Vgpu::<T>::from_raw(v) };
        // SAFETY: In an op of the GPU other than `init` and `clean`.
        let state = unsafe { vgpu.gvt().state() }?;
        Some((vgpu, state))
    }

    /// Runs `f` with the GPU's data, the vGPU `v` and its data, if it has
    /// a reference in the scheduler.
    ///
    /// # Safety
    ///
    /// `v` is a vGPU of a GPU that uses the policy, in a scheduling op other
    /// than its `init_vgpu` and `clean_vgpu`.
    unsafe fn with_vgpu<R>(
        v: *mut bindings::intel_vgpu,
        f: impl FnOnce(&T::GpuData, &Vgpu<T>, &T::VgpuData) -> R,
    ) -> Option<R> {
        // SAFETY: The caller's guarantee.
        let (vgpu, state) = unsafe { Self::vgpu_state(v) }?;
        // SAFETY: A scheduling op of the GPU other than `init_vgpu` and
        // `clean_vgpu`; the borrow ends with this function.
        let vref = unsafe { vgpu.vref() }?;
        Some(f(&state.data, vgpu, &vref.data))
    }

    /// `init_vgpu`: the vGPU (or the idle vGPU) enters the scheduler.
    ///
    /// # Safety
    ///
    /// `v` is a live vGPU of a GPU that uses the policy (or is switching to
    /// it, for the idle vGPU), with `sched_lock` held.
    unsafe extern "C" fn init_vgpu(v: *mut bindings::intel_vgpu) -> c_int {
        if v.is_null() {
            return EINVAL.to_errno();
        }
        // SAFETY: The caller's guarantee; the reference lives in this frame.
        let vgpu = unsafe { Vgpu::<T>::from_raw(v) };
        // SAFETY: An op of the GPU other than `init` and `clean`.
        let Some(state) = (unsafe { vgpu.gvt().state() }) else {
            // GVT-g may set up the idle vGPU around the policy's `init`.
            return if vgpu.is_idle() { 0 } else { ENODEV.to_errno() };
        };
        let vref = match T::init_vgpu(&state.data, vgpu) {
            Ok(Some(vref)) => vref,
            Ok(None) => return 0,
            Err(e) => return e.to_errno(),
        };
        // A reference made for another vGPU, or already in use, would give
        // access to the wrong vGPU.
        if !vref.is(vgpu) || vref.0.attached.load(Ordering::Relaxed) {
            kernel::warn_on!(true);
            T::clean_vgpu(&state.data, vgpu, vref);
            return EINVAL.to_errno();
        }
        // INVARIANT: Under `sched_lock`, stored in the vGPU's slot below.
        vref.0.attached.store(true, Ordering::Relaxed);
        // SAFETY: The slot is valid and the vGPU's scheduling ops are
        // serialised by `sched_lock`; it holds nothing before `init_vgpu`.
        unsafe { *vgpu.priv_slot() = vref.0.into_foreign() };
        0
    }

    /// `clean_vgpu`: the vGPU leaves the scheduler.
    ///
    /// # Safety
    ///
    /// `v` is a live vGPU of a GPU that uses the policy, stopped, with
    /// `sched_lock` held.
    unsafe extern "C" fn clean_vgpu(v: *mut bindings::intel_vgpu) {
        if v.is_null() {
            return;
        }
        // SAFETY: The caller's guarantee; the reference lives in this frame.
        let vgpu = unsafe { Vgpu::<T>::from_raw(v) };
        // SAFETY: The slot is valid and the vGPU's scheduling ops are
        // serialised by `sched_lock`.
        let p = unsafe { ptr::replace(vgpu.priv_slot(), ptr::null_mut()) };
        // SAFETY: `p` is NULL or what `init_vgpu` stored with `into_foreign`,
        // taken back once, here.
        let inner = unsafe { <Arc<VgpuInner<T>> as ForeignOwnable>::try_from_foreign(p) };
        let Some(inner) = inner else {
            return;
        };
        // INVARIANT: Under `sched_lock`, taken out of the slot above.
        inner.attached.store(false, Ordering::Relaxed);
        // SAFETY: An op of the GPU other than `init` and `clean`.
        if let Some(state) = unsafe { vgpu.gvt().state() } {
            T::clean_vgpu(&state.data, vgpu, VgpuRef(inner));
        }
    }

    /// `start_schedule`.
    ///
    /// # Safety
    ///
    /// `v` is a live vGPU of a GPU that uses the policy, with `sched_lock`
    /// held.
    unsafe extern "C" fn start_schedule(v: *mut bindings::intel_vgpu) {
        // SAFETY: The caller's guarantee.
        unsafe { Self::with_vgpu(v, T::start_schedule) };
    }

    /// `stop_schedule`.
    ///
    /// # Safety
    ///
    /// As for [`Self::start_schedule`].
    unsafe extern "C" fn stop_schedule(v: *mut bindings::intel_vgpu) {
        // SAFETY: The caller's guarantee.
        unsafe { Self::with_vgpu(v, T::stop_schedule) };
    }

    /// `pick_next`: a scheduling request; names the next vGPU, or NULL.
    ///
    /// # Safety
    ///
    /// `gvt` is a live GPU that uses the policy, with `sched_lock` held.
    unsafe extern "C" fn pick_next(
        gvt: *mut bindings::intel_gvt,
        _now: bindings::ktime_t,
        timer: bool,
    ) -> *mut bindings::intel_vgpu {
        if gvt.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: The caller's guarantee; the reference lives in this frame.
        let gvt = unsafe { Gvt::<T>::from_raw(gvt) };
        // SAFETY: An op other than `init` and `clean`.
        let Some(state) = (unsafe { gvt.state() }) else {
            return ptr::null_mut();
        };
        let locked = SchedLocked { gvt };
        match T::pick_next(&state.data, gvt, timer, &locked) {
            Pick::Keep => ptr::null_mut(),
            Pick::Idle => gvt.idle_vgpu(),
            // Only a vGPU of this GPU in its scheduler may run.
            Pick::Run(vref) => match vref.get(&locked) {
                Some(vgpu) => vgpu.as_raw(),
                None => {
                    kernel::warn_on!(true);
                    ptr::null_mut()
                }
            },
        }
    }

    /// `switched`: every engine drained and `next` is the current vGPU.
    ///
    /// # Safety
    ///
    /// `gvt` is a live GPU that uses the policy, with `sched_lock` held;
    /// `prev` and `next` are NULL or live vGPUs of it.
    unsafe extern "C" fn switched(
        gvt: *mut bindings::intel_gvt,
        prev: *mut bindings::intel_vgpu,
        next: *mut bindings::intel_vgpu,
        _now: bindings::ktime_t,
    ) {
        if gvt.is_null() {
            return;
        }
        // SAFETY: The caller's guarantee; the reference lives in this frame.
        let gvt = unsafe { Gvt::<T>::from_raw(gvt) };
        let prev = if prev.is_null() {
            None
        } else {
            // SAFETY: As for `gvt`.
            let prev = unsafe { Vgpu::<T>::from_raw(prev) };
            Some(prev)
        };
        let next = if next.is_null() {
            None
        } else {
            // SAFETY: As for `gvt`.
            let next = unsafe { Vgpu::<T>::from_raw(next) };
            Some(next)
        };
        // SAFETY: An op other than `init` and `clean`.
        if let Some(state) = unsafe { gvt.state() } {
            T::switched(&state.data, gvt, prev, next);
        }
    }

    /// `queued`.
    ///
    /// # Safety
    ///
    /// As for [`Self::start_schedule`].
    unsafe extern "C" fn queued(v: *mut bindings::intel_vgpu, engine: c_uint) {
        // SAFETY: The caller's guarantee.
        unsafe { Self::with_vgpu(v, |g, v, d| T::queued(g, v, d, engine)) };
    }

    /// `may_dispatch`.
    ///
    /// # Safety
    ///
    /// As for [`Self::start_schedule`].
    unsafe extern "C" fn may_dispatch(v: *mut bindings::intel_vgpu, engine: c_uint) -> bool {
        // SAFETY: The caller's guarantee.
        unsafe { Self::with_vgpu(v, |g, v, d| T::may_dispatch(g, v, d, engine)) }.unwrap_or(true)
    }

    /// `dispatched`.
    ///
    /// # Safety
    ///
    /// As for [`Self::start_schedule`].
    unsafe extern "C" fn dispatched(v: *mut bindings::intel_vgpu, engine: c_uint) {
        // SAFETY: The caller's guarantee.
        unsafe { Self::with_vgpu(v, |g, v, d| T::dispatched(g, v, d, engine)) };
    }

    /// `completed`.
    ///
    /// # Safety
    ///
    /// As for [`Self::start_schedule`].
    unsafe extern "C" fn completed(
        v: *mut bindings::intel_vgpu,
        engine: c_uint,
        gpu_ns: u64,
        status: c_int,
    ) {
        let status = to_result(status);
        // SAFETY: The caller's guarantee.
        unsafe { Self::with_vgpu(v, |g, v, d| T::completed(g, v, d, engine, gpu_ns, status)) };
    }

    /// `alloc_high`: places a vGPU's high GM before it is created.
    ///
    /// # Safety
    ///
    /// `v` is a live vGPU being created on a GPU that uses the policy, under
    /// `gvt->lock`; `start` is valid for a write.
    unsafe extern "C" fn alloc_high(
        v: *mut bindings::intel_vgpu,
        size: u64,
        start: *mut u64,
    ) -> c_int {
        // SAFETY: A vGPU in an op of its GPU other than `init` and `clean`.
        let Some((vgpu, state)) = (unsafe { Self::vgpu_state(v) }) else {
            return ENODEV.to_errno();
        };
        match T::alloc_high(&state.data, vgpu, size) {
            Ok(at) => {
                // SAFETY: GVT-g's out-pointer for this call.
                unsafe { start.write(at) };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `free_high`: a vGPU's high GM is released; the vGPU goes away.
    ///
    /// # Safety
    ///
    /// `v` is a live vGPU of a GPU that uses the policy, under its lock or
    /// `gvt->lock`.
    unsafe extern "C" fn free_high(v: *mut bindings::intel_vgpu) {
        // SAFETY: A vGPU in an op of its GPU other than `init` and `clean`.
        if let Some((vgpu, state)) = unsafe { Self::vgpu_state(v) } {
            T::free_high(&state.data, vgpu);
        }
    }

    /// `high_avail`: how many vGPUs of `size` bytes of high GM still fit.
    ///
    /// # Safety
    ///
    /// `gvt` is a live GPU that uses the policy, under `gvt->lock`.
    unsafe extern "C" fn high_avail(gvt: *mut bindings::intel_gvt, size: u64) -> c_uint {
        if gvt.is_null() {
            return 0;
        }
        // SAFETY: The caller's guarantee; the reference lives in this frame.
        let gvt = unsafe { Gvt::<T>::from_raw(gvt) };
        // SAFETY: An op other than `init` and `clean`.
        unsafe { gvt.state() }.map_or(0, |state| T::high_avail(&state.data, gvt, size))
    }
}

#[pinned_drop]
impl<T: Policy> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered since the initialiser (type invariant). A GPU
        // that uses the policy holds a reference on its module, so none does
        // now, and no op runs after this returns.
        unsafe { bindings::intel_gvt_unregister_sched_policy(self.ops.get()) };
    }
}
