// SPDX-License-Identifier: GPL-2.0

//! The provider-agnostic policy engine of one physical GPU.
//!
//! An [`Engine`] wraps the pure policy core (`gvt_core::sched::Scheduler`,
//! `gvt_core::slots::SlotPool` and the engine logic that ties them to a
//! provider, `gvt_core::engine`, which the host tests and `gvt-sim` run
//! too) with the kernel's locks, clock, trace events and counters, and is
//! driven by a GPU *provider* (the simulated GPU in `sim/`, or GVT-g through
//! the i915 hook patch) through the contract described in
//! `Documentation/gvt-rs/provider-contract.rst`:
//!
//! * events, called by the provider: [`Engine::create_vgpu`],
//!   [`Engine::start`], [`Engine::stop`], [`Engine::destroy_vgpu`],
//!   [`Engine::queued`], [`Engine::dispatched`], [`Engine::completed`],
//!   [`Engine::tick`];
//! * decisions, asked by the provider: [`Engine::next_vgpu`] (which vGPU an
//!   idle engine takes work from), [`Engine::need_resched`] and
//!   [`Engine::pick`] (switch when all engines drained; this also swaps the
//!   GTT slots through [`Provider::load_gtt`]), [`Engine::next_timer`],
//!   [`Engine::available`];
//! * actions, implemented by the provider ([`Provider`]): copy GTT slots,
//!   relocate a vGPU's range, sample the VM's CPU time.
//!
//! # Locking
//!
//! Two mutexes, always taken in this order and innermost in the provider's
//! own order (GVT-g: `vgpu_lock` -> `sched_lock` -> engine locks):
//! `policy` (the scheduler and vGPU table), then `slots` (the slot pool;
//! [`Provider::load_gtt`] and [`Provider::relocate`] run under it; a
//! switch-in's GTT load runs a slot per hold of it, after [`Engine::pick`]
//! released both locks: see there why nothing sees the vGPU half loaded).
//! Neither
//! is held while allocating: everything is allocated when the GPU or the
//! vGPU is created. Every call may sleep (mutexes), so providers call in from
//! process context: hrtimer callbacks defer to a work item first.
//!
//! The policy lock's holds stay short, whatever the number of vGPUs: the
//! scheduler's calls are O(log n) (see `Documentation/gvt-rs/scheduling.rst`),
//! a switch-in's GTT copy runs without it, and the slot
//! allocators' periodic re-placement, a `cost` search of 0.9-1.9 ms for 16
//! vGPUs and 10-15 ms for 64, is planned outside both locks: at a switch
//! point [`Engine::pick`] copies the pool into a preallocated snapshot and
//! queues the [`Replanner`]'s work item, which plans on the snapshot; the
//! next switch point applies the plan under the locks, unless a placement
//! changed meanwhile (then it plans again). The longest hold of each lock
//! is kept in [`Counters::policy_lock_max_ns`] and
//! [`Counters::slots_lock_max_ns`], and every hold in the lock's
//! [`HoldStats`], kept apart when the holder was switched out meanwhile
//! (debugfs `lock_holds`, [`debugfs`]). A switch-in's GTT copy, which
//! grows with the vGPU's slots, holds the slot lock a slot at a time; a
//! decision and its load's steps are recorded apart too (debugfs
//! `pick_holds`).

pub mod debugfs;
mod kunit;
mod per_vgpu;
pub mod sysfs;
mod trace;

use crate::gvt_core::{
    engine::{
        apply_replace,
        check_resident,
        HoldStats,
        HoldSummary,
        Load,
        Observer,
        Resident,
        VgpuTable, //
    },
    sched::{
        Fairness,
        GpuStats,
        Policy,
        Scheduler,
        Tunable,
        TurnState,
        VgpuStats, //
    },
    slots::{
        AllocatorKind,
        CopyStats,
        Move,
        Placement,
        PoolConfig,
        ReplacePlan,
        SlotPool, //
    },
    Error as CoreError, //
};
use crate::lock_class::lock_class;
use core::{
    ops::{
        Deref,
        DerefMut, //
    },
    sync::atomic::{
        AtomicBool,
        AtomicU64,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::{
        Arc,
        Mutex,
        MutexGuard, //
    },
    time::{
        Instant,
        Monotonic, //
    },
    warn_on,
    workqueue::{
        self,
        impl_has_work,
        Work,
        WorkItem, //
    }, //
};

pub use crate::gvt_core::engine::{
    GpuConfig,
    Provider, //
};
pub use per_vgpu::PerVgpu;

/// The capacity of the core's structures in the kernel: the most vGPUs a
/// GPU may state as its limit ([`GpuConfig::max_vgpus`]), the bound of a
/// [`VgpuId`]. 64: the slot pool's cost model keeps a slot's occupants in
/// a `u64`. The per-vGPU tables ([`PerVgpu`]) and the core's fixed arrays
/// are allocated for this capacity, once per GPU, when it registers (see
/// `Documentation/gvt-rs/scheduling.rst`, "64 vGPUs per GPU").
pub const MAX_VGPUS: usize = crate::gvt_core::MAX_VGPUS;
/// Most high-GM slots per GPU (64 MB each: 4 GB).
pub const MAX_SLOTS: usize = 64;

/// The scheduler type of one GPU.
pub type Sched = Scheduler<MAX_VGPUS>;
/// The slot pool type of one GPU.
pub type Pool = SlotPool<MAX_VGPUS, MAX_SLOTS>;
/// A GTT load of the pool's slots.
type PoolLoad = Load<MAX_VGPUS, MAX_SLOTS>;
/// A vGPU's id in its GPU: the core's id, checked below [`MAX_VGPUS`] when
/// it is made, the same for the scheduler, the slot pool and the per-vGPU
/// tables ([`PerVgpu`]). The engine gives a GPU's vGPUs ids below its
/// [`GpuConfig::max_vgpus`].
pub type VgpuId = crate::gvt_core::VgpuId;

/// A kind of vGPU, as GVT-g's `intel_vgpu_configs[]`.
pub struct VgpuType {
    /// Type name without the parent prefix, e.g. `GVTg_V5_4`.
    pub name: &'static CStr,
    /// Low (aperture, CPU-mappable) graphics memory, MB.
    pub low_mb: u32,
    /// High (hidden) graphics memory, MB: a multiple of the 64 MB slot.
    pub high_mb: u32,
    /// Fence registers.
    pub fences: u32,
    /// Default scheduling weight.
    pub weight: u32,
    /// Display resolution advertised in the description.
    pub resolution: &'static str,
}

/// Event counters of one GPU (debugfs-style, shown in sysfs `events`).
#[derive(Default)]
pub struct Counters {
    /// Workloads queued.
    pub queued: AtomicU64,
    /// Workloads dispatched to an engine.
    pub dispatched: AtomicU64,
    /// Workloads completed.
    pub completed: AtomicU64,
    /// Context switches to a different vGPU.
    pub switches: AtomicU64,
    /// GTT entries copied at switch-in.
    pub gtt_entries: AtomicU64,
    /// vGPU range relocations.
    pub relocations: AtomicU64,
    /// GTT reloads of a running vGPU whose range a placement changed.
    pub reloads: AtomicU64,
    /// Time spent in [`Engine::pick`], ns: deciding, under both engine
    /// locks, and a switch-in's GTT load, a slot per hold of the slot
    /// lock; the provider's scheduling lock is held throughout.
    pub pick_ns: AtomicU64,
    /// The longest hold of the policy lock since the engine was made, ns.
    pub policy_lock_max_ns: AtomicU64,
    /// The longest hold of the slot lock since the engine was made, ns.
    pub slots_lock_max_ns: AtomicU64,
    /// Re-placements planned outside the locks and applied.
    pub replans: AtomicU64,
    /// Re-placements planned outside the locks and refused at the switch
    /// point because a placement changed meanwhile (planned again).
    pub replans_stale: AtomicU64,
}

impl Counters {
    fn bump(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// The state under an engine lock keeps the record of the lock's holds.
trait Timed {
    fn holds(&mut self) -> &mut HoldStats;
}

/// A held engine lock that, when released, records the hold: how long, in
/// the largest-hold counter `max` (the figure a path waiting for the lock
/// may have to wait, readable without the lock), and in the lock's
/// [`HoldStats`], with whether the holder was switched out meanwhile.
struct Held<'a, T: Timed + Unpin> {
    guard: MutexGuard<'a, T>,
    span: Span,
    max: &'a AtomicU64,
}

impl<'a, T: Timed + Unpin> Held<'a, T> {
    fn lock(m: &'a Mutex<T>, max: &'a AtomicU64) -> Self {
        let guard = m.lock();
        Self {
            guard,
            span: Span::start(),
            max,
        }
    }
}

/// A stretch of the current task's time, timed as a lock's hold is.
struct Span {
    since: Instant<Monotonic>,
    switches: usize,
}

impl Span {
    fn start() -> Self {
        Self {
            since: Instant::now(),
            switches: kernel::current!().context_switches(),
        }
    }

    /// Its length, ns, and whether the task was switched out meanwhile.
    fn end(&self) -> (u64, bool) {
        let ns = u64::try_from(self.since.elapsed().as_nanos()).unwrap_or(0);
        (ns, kernel::current!().context_switches() != self.switches)
    }

    /// Records it in `h`.
    fn record(self, h: &mut HoldStats) {
        let (ns, switched_out) = self.end();
        h.record(ns, switched_out);
    }
}

impl<T: Timed + Unpin> Deref for Held<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: Timed + Unpin> DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T: Timed + Unpin> Drop for Held<'_, T> {
    fn drop(&mut self) {
        // Runs before `guard` is dropped: the lock is still held.
        let (ns, switched_out) = self.span.end();
        self.guard.holds().record(ns, switched_out);
        self.max.fetch_max(ns, Ordering::Relaxed);
    }
}

/// A GPU's statistics at one moment ([`Engine::snapshot`]).
#[derive(Clone, Copy)]
pub struct GpuSnapshot {
    /// The scheduler's whole-GPU counters.
    pub sched: GpuStats,
    /// Fairness of the last window.
    pub fairness: Fairness,
    /// The running vGPU.
    pub current: Option<VgpuId>,
    /// The running vGPU if the scheduler asks for its vCPUs to be favoured
    /// (GPU-centric coscheduling, `Scheduler::coschedule`).
    pub coschedule: Option<VgpuId>,
    /// Slots shared by more than one vGPU.
    pub shared_slots: u32,
    /// GTT entries the slot pool had copied.
    pub gtt_entries_copied: u64,
    /// [`Counters::pick_ns`].
    pub pick_ns: u64,
    /// [`Counters::queued`].
    pub queued: u64,
    /// [`Counters::dispatched`].
    pub dispatched: u64,
    /// [`Counters::completed`].
    pub completed: u64,
    /// [`Counters::switches`].
    pub switch_events: u64,
    /// [`Counters::relocations`].
    pub relocations: u64,
    /// [`Counters::reloads`].
    pub reloads: u64,
    /// [`Counters::policy_lock_max_ns`].
    pub policy_lock_max_ns: u64,
    /// [`Counters::slots_lock_max_ns`].
    pub slots_lock_max_ns: u64,
    /// [`Counters::replans`].
    pub replans: u64,
}

/// A vGPU's figures at one moment ([`Engine::vgpu_snapshot`]).
#[derive(Clone, Copy)]
pub struct VgpuSnapshot {
    /// The scheduler's record of the vGPU.
    pub sched: VgpuStats,
    /// The weight of its type (its default weight).
    pub type_weight: u32,
    /// Admin-set PCI-E bandwidth, MB/s (0: measured).
    pub bandwidth: u32,
    /// Its high graphics-memory slots.
    pub placement: Placement,
    /// What the slot pool copied for it.
    pub copies: CopyStats,
    /// Well-formed register accesses its device ignored
    /// ([`Engine::ignored_access`]) since it was created.
    pub ignored_accesses: u64,
    /// Runs of its completions' delivery ([`Engine::completions_delivered`]).
    pub delivery_runs: u64,
    /// Host CPU its completions' delivery took, ns.
    pub delivery_cpu_ns: u64,
}

/// What the [`Replanner`] and [`Engine::pick`] share.
struct ReplanState {
    /// The pool as it was when the re-placement became due.
    snapshot: KVBox<Pool>,
    /// The plan made on it, until a switch point applies it.
    plan: Option<ReplacePlan<MAX_VGPUS>>,
}

/// Plans the slot allocators' periodic re-placement on a snapshot of the
/// pool, from a work item, outside the engine's locks.
///
/// # Invariants
///
/// While `busy` is set, the work item owns `state`: [`Engine::pick`] does
/// not lock it (so a plan being made never delays a decision), and sets
/// `busy` again only after it queued the work item.
#[pin_data]
struct Replanner {
    #[pin]
    work: Work<Replanner>,
    busy: AtomicBool,
    #[pin]
    state: Mutex<ReplanState>,
}

impl_has_work! {
    impl HasWork<Self> for Replanner { self.work }
}

impl WorkItem for Replanner {
    type Pointer = Arc<Replanner>;

    fn run(this: Arc<Replanner>) {
        let mut st = this.state.lock();
        let plan = st.snapshot.plan_replace();
        st.plan = Some(plan);
        drop(st);
        this.busy.store(false, Ordering::Release);
    }
}

struct PolicyState {
    sched: KVBox<Sched>,
    table: VgpuTable<MAX_VGPUS>,
    holds: HoldStats,
}

struct SlotState {
    pool: KVBox<Pool>,
    holds: HoldStats,
    /// [`Engine::pick`]'s parts, each a hold of the slot lock of its own:
    /// the decision (with the policy lock) and each step of the switch-in's
    /// GTT load (without).
    decides: HoldStats,
    loads: HoldStats,
}

impl Timed for PolicyState {
    fn holds(&mut self) -> &mut HoldStats {
        &mut self.holds
    }
}

impl Timed for SlotState {
    fn holds(&mut self) -> &mut HoldStats {
        &mut self.holds
    }
}

/// The errno of a refused call of the core (the only place it is chosen;
/// a function, as `From` cannot be implemented here between two foreign
/// types: the core is a crate of its own).
pub fn errno(e: CoreError) -> Error {
    match e {
        CoreError::Invalid => EINVAL,
        CoreError::OutOfRange => ERANGE,
        CoreError::Busy => EBUSY,
        // What upstream GVT-g reports when a vGPU does not fit.
        CoreError::NoSpace => ENOSPC,
        CoreError::Exists => EEXIST,
    }
}

/// A heap copy of `src`, a value too large for the 16 KB kernel stack that
/// a `const fn` built at compile time (the scheduler is 78 KB at 64 vGPUs,
/// the slot pool 27 KB): initialised in place, copied from read-only data
/// straight into its allocation, never through the stack. `KVBox`: past
/// what the page allocator gives contiguously, vmalloc.
pub(crate) fn boxed_copy<T: Copy>(src: &'static T) -> Result<KVBox<T>> {
    let copy = move |slot: *mut T| {
        // SAFETY: `slot` is valid for writes of one `T` (the allocation
        // being initialised), which does not overlap `src`.
        unsafe { slot.copy_from_nonoverlapping(src, 1) };
        Ok::<(), Error>(())
    };
    // SAFETY: `copy` initialises the whole slot, with a bitwise copy of
    // `*src` (a valid `T`: `T: Copy`), and never fails.
    let init = unsafe { pin_init::init_from_closure(copy) };
    KVBox::init(init, GFP_KERNEL)
}

#[inline(never)]
fn boxed_sched() -> Result<KVBox<Sched>> {
    boxed_copy(&const { Sched::new() })
}

#[inline(never)]
fn boxed_pool(cfg: &GpuConfig) -> Result<KVBox<Pool>> {
    // Built for the largest pool, then shrunk to the GPU's (`reconfigure`).
    let init: &'static Result<Pool, CoreError> = &const {
        Pool::new(PoolConfig {
            slots: MAX_SLOTS as u16,
            low_entries: 0,
            allocator: AllocatorKind::Static,
        })
    };
    let init = init.as_ref().map_err(|e| errno(*e))?;
    let mut pool = boxed_copy(init)?;
    pool.reconfigure(cfg.slots, cfg.low_shared_entries)
        .map_err(errno)?;
    if !cfg.relocate {
        pool.set_relocation(false);
    }
    // Planned outside the locks (`Replanner`).
    pool.set_deferred_replace(true);
    Ok(pool)
}

/// The policy engine of one GPU.
#[pin_data(PinnedDrop)]
pub struct Engine {
    cfg: GpuConfig,
    /// The GPU's name (sysfs directory, trace events).
    name: trace::GpuName,
    base: Instant<Monotonic>,
    #[pin]
    policy: Mutex<PolicyState>,
    #[pin]
    slots: Mutex<SlotState>,
    /// Event counters.
    pub counters: Counters,
    /// Per vGPU id, the well-formed register accesses its device ignored.
    ignored: PerVgpu<AtomicU64>,
    /// Per vGPU id, the host CPU its completions' delivery took.
    delivery: PerVgpu<DeliveryCost>,
    /// A placement moved ranges since [`Engine::ensure_resident`] last
    /// found the running vGPU resident: the next dispatch checks again.
    layout_changed: AtomicBool,
    /// Plans re-placements outside the locks.
    replanner: Arc<Replanner>,
}

#[pinned_drop]
impl PinnedDrop for Engine {
    fn drop(self: Pin<&mut Self>) {
        // No plan is made after this, and none is being made: the work
        // item's code stays until it returned.
        Work::<Replanner>::disable_sync(&self.replanner);
    }
}

/// The host CPU a vGPU's completion delivery took: the provider's work
/// done for it alone, outside the engine's locks and the VM's threads.
struct DeliveryCost {
    runs: AtomicU64,
    ns: AtomicU64,
}

impl DeliveryCost {
    const fn new() -> Self {
        Self {
            runs: AtomicU64::new(0),
            ns: AtomicU64::new(0),
        }
    }

    fn reset(&self) {
        self.runs.store(0, Ordering::Relaxed);
        self.ns.store(0, Ordering::Relaxed);
    }
}

impl Engine {
    /// A new engine running `tbs` with the `static` allocator, as upstream
    /// GVT-g, for the GPU `cfg` describes, called `name` (its sysfs
    /// directory and trace events). Allocates the scheduler and the slot
    /// pool, and the per-vGPU counters ([`PerVgpu`]). `EINVAL` for an
    /// engine count, pool size or vGPU limit out of range (1 to
    /// [`MAX_VGPUS`]), or a name longer than 31 bytes.
    pub fn new(name: &CStr, cfg: GpuConfig) -> Result<impl PinInit<Self, Error>> {
        let name = trace::GpuName::new(name)?;
        if cfg.engines == 0 || cfg.engines > crate::gvt_core::sched::MAX_ENGINES {
            return Err(EINVAL);
        }
        if cfg.slots == 0 || usize::from(cfg.slots) > MAX_SLOTS {
            return Err(EINVAL);
        }
        if cfg.max_vgpus == 0 || cfg.max_vgpus > MAX_VGPUS {
            return Err(EINVAL);
        }
        let ignored = PerVgpu::new(|| AtomicU64::new(0))?;
        let delivery = PerVgpu::new(DeliveryCost::new)?;
        let sched = boxed_sched()?;
        let pool = boxed_pool(&cfg)?;
        let snapshot = boxed_pool(&cfg)?;
        // Not `new_mutex!` and `new_work!`: a provider in another module
        // runs the initializer (`crate::lock_class`).
        let (work_name, work_key) = lock_class!("gvt_rs::Replanner::work");
        let (replan_name, replan_key) = lock_class!("gvt_rs_replan");
        let (policy_name, policy_key) = lock_class!("gvt_rs_policy");
        let (slots_name, slots_key) = lock_class!("gvt_rs_slots");
        let replanner = Arc::pin_init(
            pin_init!(Replanner {
                work <- Work::new(work_name, work_key),
                busy: AtomicBool::new(false),
                state <- Mutex::new(ReplanState {
                    snapshot,
                    plan: None,
                }, replan_name, replan_key),
            }),
            GFP_KERNEL,
        )?;
        Ok(try_pin_init!(Self {
            cfg,
            name,
            base: Instant::now(),
            policy <- Mutex::new(PolicyState {
                sched,
                table: VgpuTable::new(),
                holds: HoldStats::EMPTY,
            }, policy_name, policy_key),
            slots <- Mutex::new(SlotState {
                pool,
                holds: HoldStats::EMPTY,
                decides: HoldStats::EMPTY,
                loads: HoldStats::EMPTY,
            }, slots_name, slots_key),
            counters: Counters::default(),
            ignored,
            delivery,
            layout_changed: AtomicBool::new(true),
            replanner,
        }? Error))
    }

    /// Takes the policy lock, timed.
    fn lock_policy(&self) -> Held<'_, PolicyState> {
        Held::lock(&self.policy, &self.counters.policy_lock_max_ns)
    }

    /// Takes the slot lock, timed (after the policy lock, if both).
    fn lock_slots(&self) -> Held<'_, SlotState> {
        Held::lock(&self.slots, &self.counters.slots_lock_max_ns)
    }

    /// The holds of the policy lock and of the slot lock so far (each read
    /// under its lock, the reading's own hold not yet in it).
    pub fn lock_holds(&self) -> (HoldSummary, HoldSummary) {
        let policy = self.lock_policy().holds.summary();
        let slots = self.lock_slots().holds.summary();
        (policy, slots)
    }

    /// [`Engine::pick`]'s two parts so far, timed as the locks' holds
    /// are: its decisions (a re-placement applied, the samples, the choice,
    /// the pool's switch-in), held with both locks, and the steps of its
    /// switch-ins' GTT loads (a slot, or the shared low GM, each), held
    /// with the slot lock alone.
    pub fn pick_holds(&self) -> (HoldSummary, HoldSummary) {
        let sl = self.lock_slots();
        (sl.decides.summary(), sl.loads.summary())
    }

    /// The GPU's fixed properties.
    pub fn config(&self) -> &GpuConfig {
        &self.cfg
    }

    /// The most vGPUs the GPU takes at once ([`GpuConfig::max_vgpus`]):
    /// every id is below it.
    pub fn max_vgpus(&self) -> usize {
        self.cfg.max_vgpus
    }

    /// The GPU's name.
    pub fn name(&self) -> &CStr {
        self.name.as_cstr()
    }

    /// The engine clock: monotonic ns since the engine was made.
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(0)
    }

    // ---- lifecycle events ------------------------------------------------

    /// A vGPU of type `ty` is created: [`Engine::place_vgpu`] and
    /// [`Engine::attach_vgpu`] in one step. `ENOSPC` when it does not fit.
    pub fn create_vgpu<P: Provider + ?Sized>(&self, p: &P, ty: &VgpuType) -> Result<VgpuId> {
        let id = self.place_vgpu(p, ty.high_mb, ty.low_mb, ty.weight)?;
        if let Err(e) = self.attach_vgpu(id) {
            // Placed just above and not attached: it can be unplaced.
            warn_on!(self.unplace_vgpu(p, id).is_err());
            return Err(e);
        }
        Ok(id)
    }

    /// A stopped vGPU with nothing in flight is destroyed:
    /// [`Engine::detach_vgpu`] and [`Engine::unplace_vgpu`]. `EBUSY` while
    /// started or busy.
    pub fn destroy_vgpu<P: Provider + ?Sized>(&self, p: &P, id: VgpuId) -> Result {
        self.detach_vgpu(id)?;
        self.unplace_vgpu(p, id)
    }

    /// Places the graphics memory of a new vGPU (GVT-g: `alloc_high`, which
    /// comes before the vGPU reaches the scheduler) and reserves its id.
    /// `ENOSPC` when it does not fit.
    pub fn place_vgpu<P: Provider + ?Sized>(
        &self,
        p: &P,
        high_mb: u32,
        low_mb: u32,
        weight: u32,
    ) -> Result<VgpuId> {
        let now = self.now_ns();
        let mut guard = self.lock_policy();
        let st = &mut *guard;
        let mut sl = self.lock_slots();
        let id = st
            .table
            .place(
                &self.cfg,
                &mut sl.pool,
                p,
                self,
                (high_mb, low_mb, weight),
                now,
            )
            .map_err(errno)?;
        // The id may have been another vGPU's.
        self.ignored[id].store(0, Ordering::Relaxed);
        self.delivery[id].reset();
        Ok(id)
    }

    /// A placed vGPU enters the scheduler, stopped, with its type's weight
    /// (GVT-g: `init_vgpu`). `EINVAL` unless placed and not attached yet.
    pub fn attach_vgpu(&self, id: VgpuId) -> Result {
        let mut guard = self.lock_policy();
        let st = &mut *guard;
        st.table.attach(&mut st.sched, id).map_err(errno)
    }

    /// A stopped vGPU with nothing in flight leaves the scheduler (GVT-g:
    /// `clean_vgpu`); its placement stays until [`Engine::unplace_vgpu`].
    /// `EBUSY` while started or busy, `EINVAL` if not attached.
    pub fn detach_vgpu(&self, id: VgpuId) -> Result {
        let mut guard = self.lock_policy();
        let st = &mut *guard;
        st.table.detach(&mut st.sched, id).map_err(errno)
    }

    /// Frees a detached vGPU's graphics memory and id (GVT-g: `free_high`).
    /// `EBUSY` while still attached, `EINVAL` for an unknown id.
    pub fn unplace_vgpu<P: Provider + ?Sized>(&self, p: &P, id: VgpuId) -> Result {
        let now = self.now_ns();
        let mut st = self.lock_policy();
        let mut sl = self.lock_slots();
        st.table
            .unplace(&mut sl.pool, p, self, id, now)
            .map_err(errno)
    }

    /// The vGPU becomes schedulable (GVT-g: `start_schedule`, at VFIO open).
    pub fn start(&self, id: VgpuId) -> Result {
        let now = self.now_ns();
        self.lock_policy().sched.start(id, now).map_err(errno)
    }

    /// The vGPU stops being schedulable; its queued (not in-flight) work is
    /// forgotten and the provider discards it (the simulated GPU on close
    /// and reset; a GVT-g vGPU being destroyed).
    pub fn stop(&self, id: VgpuId) -> Result {
        let now = self.now_ns();
        self.lock_policy().sched.stop(id, now).map_err(errno)
    }

    /// Stops scheduling `id` but keeps the counts of its queued work, for a
    /// provider whose queues outlive a stop and that reports each discarded
    /// workload with [`Engine::cancelled`] (GVT-g: `stop_schedule` for a
    /// reset of some engines).
    pub fn stop_keeping_queued(&self, id: VgpuId) -> Result {
        let now = self.now_ns();
        self.lock_policy()
            .sched
            .stop_keeping_queued(id, now)
            .map_err(errno)
    }

    // ---- workload events -------------------------------------------------

    /// A workload moving `bytes` was queued on `engine` (GVT-g: `queued`).
    pub fn queued(&self, id: VgpuId, engine: usize, bytes: u64) -> Result {
        if engine >= self.cfg.engines {
            return Err(EINVAL);
        }
        let now = self.now_ns();
        let mut st = self.lock_policy();
        st.sched.queued(id, engine, now).map_err(errno)?;
        // `queued` just accepted `id`.
        warn_on!(st.sched.transferred(id, bytes).is_err());
        Counters::bump(&self.counters.queued, 1);
        Ok(())
    }

    /// The provider's device model ignored a well-formed register access
    /// of `id`: an unknown offset, a write to a read-only register (see
    /// the simulated GPU's `regs`). Counted, never logged: a guest cannot
    /// flood the host log with them. Lock-free, as a guest makes them in
    /// a loop.
    pub fn ignored_access(&self, id: VgpuId) {
        Counters::bump(&self.ignored[id], 1);
    }

    /// The provider delivered completions of `id` to its guest (status
    /// page, interrupt) in one run that took `ns` of host CPU. Lock-free.
    /// The work runs outside the VM's threads, so the VM's cgroup does not
    /// see it; this figure does, per tenant (see scheduling.rst).
    pub fn completions_delivered(&self, id: VgpuId, ns: u64) {
        let d = &self.delivery[id];
        Counters::bump(&d.runs, 1);
        Counters::bump(&d.ns, ns);
    }

    /// Engine `engine` is idle: the vGPU whose head workload it should take
    /// (GVT-g: `pick_next_workload` on `current_vgpu`), or `None`.
    pub fn next_vgpu(&self, engine: usize) -> Option<VgpuId> {
        let now = self.now_ns();
        self.lock_policy().sched.next_vgpu(engine, now)
    }

    /// The head workload of `id` on `engine`, queued at `queued_at` (engine
    /// clock), went to the hardware.
    pub fn dispatched(&self, id: VgpuId, engine: usize, queued_at: u64) -> Result {
        let now = self.now_ns();
        self.policy
            .lock()
            .sched
            .dispatched(id, engine, queued_at, now)
            .map_err(errno)?;
        trace::dispatch(&self.name, id, engine, now.saturating_sub(queued_at));
        Counters::bump(&self.counters.dispatched, 1);
        Ok(())
    }

    /// A workload of `id` on `engine` completed after `gpu_ns` of GPU time
    /// (GVT-g: `completed`, stamped by the context status notifier).
    pub fn completed(&self, id: VgpuId, engine: usize, gpu_ns: u64) -> Result {
        let now = self.now_ns();
        self.policy
            .lock()
            .sched
            .completed(id, engine, gpu_ns, now)
            .map_err(errno)?;
        trace::complete(&self.name, id, engine, gpu_ns);
        Counters::bump(&self.counters.completed, 1);
        Ok(())
    }

    /// A workload of `id` queued on `engine` was discarded before dispatch
    /// (GVT-g: `completed` with `-ECANCELED`). `EINVAL` if none is queued.
    pub fn cancelled(&self, id: VgpuId, engine: usize) -> Result {
        self.lock_policy()
            .sched
            .cancelled(id, engine)
            .map_err(errno)
    }

    /// Whether the engine thread of `engine` may take `id`'s head workload
    /// now (GVT-g: `may_dispatch`). When not, the turn is over and the
    /// provider must ask for a decision.
    pub fn may_dispatch(&self, id: VgpuId, engine: usize) -> bool {
        let now = self.now_ns();
        self.lock_policy().sched.may_dispatch(id, engine, now)
    }

    /// Timer event: call at [`Engine::next_timer`].
    pub fn tick(&self) {
        let now = self.now_ns();
        self.lock_policy().sched.tick(now);
    }

    /// When to call [`Engine::tick`] next, engine clock ns.
    pub fn next_timer(&self) -> u64 {
        let now = self.now_ns();
        self.lock_policy().sched.next_timer(now)
    }

    // ---- decisions -------------------------------------------------------

    /// Whether the running turn is over: stop dispatching and call
    /// [`Engine::pick`] once every engine drained.
    pub fn need_resched(&self) -> bool {
        let now = self.now_ns();
        self.lock_policy().sched.need_resched(now)
    }

    /// All engines are drained: choose the vGPU that runs next (GVT-g:
    /// `pick_next` + `switched` + `switch_in`). On a switch, the new vGPU's
    /// non-resident GTT slots are loaded through the provider before this
    /// returns. `Ok(None)` is the idle vGPU; `EBUSY` if work is in flight.
    ///
    /// The decision is made under both locks; the switch-in's GTT load
    /// ([`Load`], 16384 entries a slot on the simulated GPU) after both are
    /// released, a step at a time (one slot, or the shared low GM), each
    /// step under the slot lock alone, timed apart ([`Engine::pick_holds`]).
    /// So no hold grows with the vGPU's size, and nothing sees the new vGPU
    /// half loaded: the pool names it the owner of its slots from the
    /// decision on, each slot pending until its step; a guest's GTT access
    /// goes to the hardware only where the pool holds the vGPU's entries
    /// ([`Engine::with_residency`]), elsewhere to its private copy, which
    /// the steps copy from; a placement between steps (another vGPU
    /// created or destroyed) makes the steps skip the slots it took, and
    /// the dispatch's [`Engine::ensure_resident`] reloads them; the policy
    /// lock's paths (`queued`, `next_vgpu`, `stop`, ...) touch no GTT entry;
    /// and a provider dispatches only after this returned (its own
    /// scheduling lock, held around the call, serialises its dispatch loop
    /// and its next decision with it).
    pub fn pick<P: Provider + ?Sized>(&self, p: &P) -> Result<Option<VgpuId>> {
        let mut guard = self.lock_policy();
        let st = &mut *guard;
        let mut sl = self.lock_slots();
        // From here the locks are held.
        let now = self.now_ns();
        let decide = Span::start();
        // Not while the work item plans (see `Replanner`).
        let rp = &self.replanner;
        let idle = !rp.busy.load(Ordering::Acquire);
        if idle {
            // A plan made since the last switch point is applied at this
            // one, before the decision, where an inline re-placement ran.
            if let Some(plan) = rp.state.lock().plan.take() {
                match apply_replace(&mut sl.pool, &plan, p, self) {
                    Ok(()) => Counters::bump(&self.counters.replans, 1),
                    // Stale: still pending, planned again below.
                    Err(_) => Counters::bump(&self.counters.replans_stale, 1),
                }
            }
        }
        let decision = st.table.decide(&mut st.sched, &mut sl.pool, p, self, now);
        decide.record(&mut sl.decides);
        // The rest needs only the pool: the policy's paths go on meanwhile.
        drop(guard);
        if idle && sl.pool.replace_pending() {
            // A copy of the pool, planned without the locks, into the
            // preallocated snapshot, never through the stack
            // (`SlotPool::copy_from`).
            let mut st = rp.state.lock();
            st.snapshot.copy_from(&sl.pool);
            drop(st);
            rp.busy.store(true, Ordering::Release);
            if workqueue::system_unbound().enqueue(rp.clone()).is_err() {
                // Disabled: the engine is going away.
                rp.busy.store(false, Ordering::Release);
            }
        }
        drop(sl);
        let decision = decision.map_err(errno)?;
        let picked = decision.vgpu();
        if let Some(load) = decision.into_load() {
            self.load_in_steps(p, load, true);
        }
        Counters::bump(&self.counters.pick_ns, self.now_ns().saturating_sub(now));
        Ok(picked)
    }

    /// Performs `load` a step at a time, each under the slot lock, which is
    /// released between steps (see [`Engine::pick`]); each step's hold is
    /// recorded in [`Engine::pick_holds`] if `timed` (a switch-in's).
    fn load_in_steps<P: Provider + ?Sized>(&self, p: &P, mut load: PoolLoad, timed: bool) {
        loop {
            let mut sl = self.lock_slots();
            let step = Span::start();
            let more = load.step(&mut sl.pool, p, self);
            if timed {
                step.record(&mut sl.loads);
            }
            if !more {
                return;
            }
        }
    }

    /// Where the running vGPU's turn stands, after the policy's periodic
    /// work if `timer` (the provider's timer fired): for a provider whose
    /// hardware switches vGPUs only once every engine drained, which must
    /// then make the engines drain before it asks for a decision
    /// ([`Engine::pick`]). GVT-g's protocol is built on it in the i915
    /// provider.
    pub fn turn_state(&self, timer: bool) -> TurnState {
        let now = self.now_ns();
        let mut st = self.lock_policy();
        if timer {
            st.sched.tick(now);
        }
        st.sched.turn_state(now)
    }

    /// Called before each dispatch of `id`: whether its whole high-GM range
    /// is resident in the hardware GTT, so that its workload runs on its own
    /// entries. A placement (another vGPU created or destroyed, a
    /// re-placement) may have moved the range of the vGPU that runs, or
    /// given its slots to another; at a `drained` point the range is
    /// reloaded here, otherwise the caller must hold the dispatch back until
    /// the engines drained.
    pub fn ensure_resident<P: Provider + ?Sized>(&self, p: &P, id: VgpuId, drained: bool) -> bool {
        // Only moves take slots from the vGPU that runs (another vGPU's
        // slots become resident only when it is switched in): without a
        // move since the last check, there is nothing to look at.
        if !self.layout_changed.swap(false, Ordering::AcqRel) {
            return true;
        }
        let mut sl = self.lock_slots();
        let resident = match check_resident(&mut sl.pool, self, id, drained) {
            Resident::Yes => true,
            Resident::NotDrained => false,
            Resident::Reload(load) => {
                // In steps, as a switch-in's load (`Engine::pick`).
                drop(sl);
                self.load_in_steps(p, load, false);
                self.lock_slots().pool.resident(id)
            }
        };
        if !resident {
            self.layout_changed.store(true, Ordering::Release);
        }
        resident
    }

    /// How many more vGPUs of type `ty` can be created now
    /// (mdev `available_instances`, GVT-g: `avail`).
    pub fn available(&self, ty: &VgpuType) -> u32 {
        self.available_mb(ty.high_mb, ty.low_mb)
    }

    /// How many more vGPUs with `high_mb` of high GM and `low_mb` of low GM
    /// can be created now.
    pub fn available_mb(&self, high_mb: u32, low_mb: u32) -> u32 {
        let st = self.lock_policy();
        let sl = self.lock_slots();
        st.table.available_mb(&self.cfg, &sl.pool, high_mb, low_mb)
    }

    // ---- residency, for the provider's guest GTT accesses ----------------

    /// Runs `f(slot, resident)` for slot `rel_slot` of `id`'s high-GM range,
    /// under the slot lock so that no load step, switch-in or relocation
    /// runs meanwhile: `slot` is the absolute slot and `resident` whether
    /// the hardware GTT holds `id`'s entries there (not while a load has yet
    /// to copy them: [`SlotPool::slot_of`]). `ENODEV` if `id` is not placed,
    /// `ERANGE` past its range.
    pub fn with_residency<R>(
        &self,
        id: VgpuId,
        rel_slot: u16,
        f: impl FnOnce(u16, bool) -> R,
    ) -> Result<R> {
        let sl = self.lock_slots();
        let (slot, resident) = sl.pool.slot_of(id, rel_slot).map_err(|e| match e {
            CoreError::OutOfRange => ERANGE,
            _ => ENODEV,
        })?;
        Ok(f(slot, resident))
    }

    // ---- sysfs ------------------------------------------------------------

    /// The active policy.
    pub fn policy(&self) -> Policy {
        self.lock_policy().sched.policy()
    }

    /// Switches policy at run time (takes effect at the next switch point).
    pub fn set_policy(&self, p: Policy) -> Result {
        let now = self.now_ns();
        self.lock_policy().sched.set_policy(p, now).map_err(errno)
    }

    /// A scheduler tunable.
    pub fn tunable(&self, t: Tunable) -> u64 {
        self.lock_policy().sched.tunable(t)
    }

    /// Sets a scheduler tunable (`ERANGE` outside its range).
    pub fn set_tunable(&self, t: Tunable, v: u64) -> Result {
        let now = self.now_ns();
        self.lock_policy()
            .sched
            .set_tunable(t, v, now)
            .map_err(errno)
    }

    /// Runs `f` on the slot pool (read-only).
    pub fn with_pool<R>(&self, f: impl FnOnce(&Pool) -> R) -> R {
        f(&self.lock_slots().pool)
    }

    /// Runs `f` on the slot pool to change a tunable or the allocator.
    pub fn with_pool_mut<R>(&self, f: impl FnOnce(&mut Pool) -> Result<R, CoreError>) -> Result<R> {
        // The policy lock keeps vGPU creation out while the allocator changes.
        let _st = self.lock_policy();
        f(&mut self.lock_slots().pool).map_err(errno)
    }

    /// Turns periodic relocation on or off. `EOPNOTSUPP` to turn it on for
    /// a provider that cannot move a vGPU's range (GVT-g).
    pub fn set_relocation(&self, on: bool) -> Result {
        if on && !self.cfg.relocate {
            return Err(EOPNOTSUPP);
        }
        let _st = self.lock_policy();
        self.lock_slots().pool.set_relocation(on);
        Ok(())
    }

    /// The GPU's statistics at one moment (debugfs `stats`): read with
    /// both locks held, so that the figures belong together; the event
    /// counters, atomics, are read while the locks are held too.
    pub fn snapshot(&self) -> GpuSnapshot {
        let st = self.lock_policy();
        let sl = self.lock_slots();
        let c = &self.counters;
        let read = |a: &AtomicU64| a.load(Ordering::Relaxed);
        GpuSnapshot {
            sched: st.sched.gpu_stats(),
            fairness: st.sched.fairness(),
            current: st.sched.current(),
            coschedule: st.sched.coschedule(),
            shared_slots: sl.pool.shared_slots(),
            gtt_entries_copied: sl.pool.totals().entries(),
            pick_ns: read(&c.pick_ns),
            queued: read(&c.queued),
            dispatched: read(&c.dispatched),
            completed: read(&c.completed),
            switch_events: read(&c.switches),
            relocations: read(&c.relocations),
            reloads: read(&c.reloads),
            policy_lock_max_ns: read(&c.policy_lock_max_ns),
            slots_lock_max_ns: read(&c.slots_lock_max_ns),
            replans: read(&c.replans),
        }
    }

    /// Scheduler statistics of `id`.
    pub fn vgpu_stats(&self, id: VgpuId) -> Option<VgpuStats> {
        self.lock_policy().sched.stats(id)
    }

    /// Where `id`'s high graphics memory was placed, from
    /// [`Engine::place_vgpu`] on, before the vGPU enters the scheduler
    /// (GVT-g's `alloc_high` programs the GGTT range from it).
    pub fn placement(&self, id: VgpuId) -> Option<Placement> {
        self.lock_slots().pool.placement(id)
    }

    /// Every figure of `id` at one moment (its `gvt_rs/` files in sysfs):
    /// read with both locks held, as [`Engine::snapshot`] reads the GPU's,
    /// so that the figures belong together. `None` if `id` has no vGPU.
    pub fn vgpu_snapshot(&self, id: VgpuId) -> Option<VgpuSnapshot> {
        let st = self.lock_policy();
        let sl = self.lock_slots();
        let delivery = &self.delivery[id];
        let read = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Some(VgpuSnapshot {
            sched: st.sched.stats(id)?,
            type_weight: st.table.type_weight(id)?,
            bandwidth: st.table.bandwidth(id)?,
            placement: sl.pool.placement(id)?,
            copies: sl.pool.stats(id)?,
            ignored_accesses: read(&self.ignored[id]),
            delivery_runs: read(&delivery.runs),
            delivery_cpu_ns: read(&delivery.ns),
        })
    }

    /// Overrides the weight of `id`.
    pub fn set_weight(&self, id: VgpuId, w: u32) -> Result {
        self.lock_policy().sched.set_weight(id, w).map_err(errno)
    }

    /// The fair-queueing position of `id` relative to this GPU, carried by
    /// a migration (`Scheduler::fq_lag`).
    pub fn fq_lag(&self, id: VgpuId) -> Result<u64> {
        self.lock_policy().sched.fq_lag(id).map_err(errno)
    }

    /// Places stopped `id` at the fair-queueing position `lag` relative to
    /// this GPU (`Scheduler::set_fq_lag`).
    pub fn set_fq_lag(&self, id: VgpuId, lag: u64) -> Result {
        self.lock_policy().sched.set_fq_lag(id, lag).map_err(errno)
    }

    /// Sets the admin PCI-E bandwidth of `id`, MB/s (0: measure).
    pub fn set_bandwidth(&self, id: VgpuId, mbps: u32) -> Result {
        let mut guard = self.lock_policy();
        let st = &mut *guard;
        st.table
            .set_bandwidth(&mut st.sched, id, mbps)
            .map_err(errno)
    }

    /// Number of vGPUs.
    pub fn vgpus(&self) -> usize {
        self.lock_policy().table.len()
    }
}

/// Trace events and event counters of what the engine logic did.
impl Observer for Engine {
    fn relocated(&self, m: &Move) {
        // The range of the vGPU that runs may have moved: the next
        // dispatch checks (`ensure_resident`).
        self.layout_changed.store(true, Ordering::Release);
        trace::relocate(&self.name, m.id, m.from, m.to, m.slots);
        Counters::bump(&self.counters.relocations, 1);
    }

    fn switched(&self, prev: Option<VgpuId>, next: Option<VgpuId>, slice_ns: u64) {
        trace::switch(&self.name, prev, next, slice_ns);
        if next.is_some() {
            Counters::bump(&self.counters.switches, 1);
        }
    }

    fn gtt_loaded(&self, id: VgpuId, high_slots: u16, entries: u64, reload: bool) {
        if entries > 0 {
            trace::gtt_load(&self.name, id, high_slots, entries);
        }
        Counters::bump(&self.counters.gtt_entries, entries);
        if reload {
            Counters::bump(&self.counters.reloads, 1);
        }
    }

    fn inconsistent(&self, what: &'static str, e: CoreError) {
        pr_err!(
            "{}: the core refused {} ({}): engine state inconsistent\n",
            self.name(),
            what,
            e.name()
        );
        warn_on!(true);
    }
}
