// SPDX-License-Identifier: GPL-2.0

//! The engine logic of one GPU: what the kernel's policy engine does
//! between taking its locks and reading its clock.
//!
//! The scheduler ([`Scheduler`]) decides who runs and the slot pool
//! ([`SlotPool`]) where each vGPU's graphics memory lives; this module ties
//! them to a GPU provider: it keeps the table of vGPUs (placed, attached to
//! the scheduler, their type's weight and low GM), charges low GM under the
//! `static` allocator, loads GTT slots through the [`Provider`] when a vGPU
//! is switched in or its range moved under it, and feeds the allocators
//! their utilization samples. The kernel engine (`engine/mod.rs`) wraps it
//! with two mutexes and the monotonic clock; the host tests and `gvt-sim`
//! run the same code.
//!
//! The state is split as the kernel locks it: a [`VgpuTable`] and the
//! [`Scheduler`] under the policy lock, the [`SlotPool`] under the slot lock.
//! Each function takes what it needs, and a function that takes both is
//! called with both locks held (policy, then slots).

use super::{
    sched::{
        Pick,
        Scheduler, //
    },
    slots::{
        Move,
        ReplacePlan,
        SlotPool, //
    },
    Error,
    VgpuId, //
};

mod holds;
mod load;
#[cfg(test)]
mod tests;

pub use holds::{
    HoldStats,
    HoldSummary, //
};
pub use load::Load;

/// Fixed properties of the GPU a provider drives.
#[derive(Clone, Copy, Debug)]
pub struct GpuConfig {
    /// Number of engines (at most [`super::sched::MAX_ENGINES`]).
    pub engines: usize,
    /// Low GM available to guests, MB (private per vGPU under `static`;
    /// `u32::MAX` when the provider accounts low GM itself).
    pub low_mb: u32,
    /// High-GM slots available to guests (at least 1, at most the pool's
    /// capacity).
    pub slots: u16,
    /// GTT entries of the shared low-GM region under the sharing allocators
    /// (0: the provider keeps low GM private to each vGPU).
    pub low_shared_entries: u32,
    /// Whether the provider can move a vGPU's high-GM range after creation
    /// ([`Provider::relocate`]). GVT-g cannot: the guest learns its range
    /// once. Without it, relocation stays off and cannot be turned on.
    pub relocate: bool,
    /// The most vGPUs the GPU takes at once, chosen by the provider when
    /// the GPU registers (at least 1, at most the capacity `V` of the
    /// [`VgpuTable`] and the core's structures): ids stay below it, so the
    /// provider's and the kernel engine's per-vGPU state is allocated for
    /// this many, once.
    pub max_vgpus: usize,
}

impl GpuConfig {
    /// The vGPU limit of a table of capacity `v`: [`GpuConfig::max_vgpus`]
    /// clamped to `v`.
    pub const fn vgpu_limit(&self, v: usize) -> usize {
        if self.max_vgpus < v {
            self.max_vgpus
        } else {
            v
        }
    }
}

/// Actions the engine asks of a GPU provider.
///
/// Called with the engine's locks held (the slot lock; the policy lock
/// too, except for a GTT load's steps, [`Load::step`]): they must not call
/// back into the engine and must not block on a workload.
pub trait Provider {
    /// Writes `vgpu`'s private GTT entries for high-GM slots
    /// `[first_slot, first_slot + slots)` into the hardware GTT. The vGPU's
    /// range starts at `vgpu_start`. Called with all engines drained, under
    /// the slot lock.
    fn load_gtt(&self, vgpu: VgpuId, vgpu_start: u16, first_slot: u16, slots: u16);
    /// Writes `vgpu`'s entries of the shared low-GM region into the hardware
    /// GTT (sharing allocators only). The default does nothing: for a
    /// provider whose low GM stays private to each vGPU (GVT-g's aperture).
    fn load_low_gtt(&self, _vgpu: VgpuId) {}
    /// A vGPU's high-GM range moved (relocation by an allocator; only if
    /// [`GpuConfig::relocate`]). The default does nothing: for a provider
    /// whose private GTT is indexed relative to the vGPU's range, which the
    /// next switch-in copies to where the range is now.
    fn relocate(&self, _m: &Move) {}
    /// Cumulative CPU time of the VM that owns `vgpu` (all vCPUs), ns.
    /// Asked while the engine decides (every [`CPU_SAMPLE_NS`], for each
    /// started vGPU), with its locks and the provider's held: its cost must
    /// not grow with what a tenant controls, such as the number of threads
    /// of its VMM. A value read earlier, outside the provider's locks, or a
    /// read bounded by the hardware's limits (GVT-g: one per vCPU thread).
    /// The default, `None`, is a provider that cannot tell: without CPU
    /// time, `vmcg` sizes slices by the weights alone.
    fn vm_cpu_ns(&self, _vgpu: VgpuId) -> Option<u64> {
        None
    }
}

/// What the engine tells whoever watches it (the kernel: trace events and
/// event counters). Every method defaults to nothing.
pub trait Observer {
    /// A vGPU's range moved; the provider was told first.
    fn relocated(&self, _m: &Move) {}
    /// The running vGPU changed from `prev` to `next` (`None`: the idle
    /// vGPU), for a turn of `slice_ns`.
    fn switched(&self, _prev: Option<VgpuId>, _next: Option<VgpuId>, _slice_ns: u64) {}
    /// `entries` GTT entries of `id` were loaded, `high_slots` of them in
    /// high-GM slots: at a switch-in, or (`reload`) because a placement
    /// moved the range of the vGPU that runs.
    fn gtt_loaded(&self, _id: VgpuId, _high_slots: u16, _entries: u64, _reload: bool) {}
    /// The scheduler and the pool disagreed with the table: `what` names
    /// the call the engine expected to succeed. A bug, never a consequence
    /// of user or guest input (the kernel warns).
    fn inconsistent(&self, _what: &'static str, _e: Error) {}
}

/// The observer that watches nothing.
impl Observer for () {}

/// What the engine keeps of one vGPU besides the scheduler and the pool.
#[derive(Clone, Copy, Debug)]
struct Meta {
    /// In the scheduler ([`VgpuTable::attach`]), not only placed.
    attached: bool,
    high_mb: u32,
    type_weight: u32,
    low_mb: u32,
    /// Its low GM counts against [`GpuConfig::low_mb`] (placed under an
    /// allocator that does not share low GM).
    charged_low: bool,
    bw_mbps: u32,
    /// `busy_ns` at the last utilization sample.
    last_busy_ns: u64,
}

/// How often VM CPU time is sampled for `vmcg`, ns.
pub const CPU_SAMPLE_NS: u64 = 5_000_000;

/// The vGPUs of one GPU: one entry per id, from placement to unplacement.
#[derive(Debug)]
pub struct VgpuTable<const V: usize> {
    meta: [Option<Meta>; V],
    low_used_mb: u32,
    last_sample_ns: u64,
    last_cpu_ns: u64,
}

impl<const V: usize> Default for VgpuTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Tells the provider and the observer about each move.
fn apply_moves<P, O>(p: &P, o: &O, moves: &[Move])
where
    P: Provider + ?Sized,
    O: Observer + ?Sized,
{
    for m in moves {
        p.relocate(m);
        o.relocated(m);
    }
}

/// What [`VgpuTable::decide`] chose: the vGPU that runs next and, on a
/// switch, the GTT load of its non-resident slots, which must complete
/// before its first dispatch.
#[must_use = "a switch-in's GTT load must be performed before the vGPU runs"]
#[derive(Clone, Copy, Debug)]
pub struct Decision<const V: usize, const S: usize> {
    vgpu: Option<VgpuId>,
    load: Option<Load<V, S>>,
}

impl<const V: usize, const S: usize> Decision<V, S> {
    /// The vGPU that runs next (`None`: the idle vGPU).
    pub fn vgpu(&self) -> Option<VgpuId> {
        self.vgpu
    }

    /// Whether the decision has a switch-in to load (moves, slots, the
    /// shared low GM; possibly nothing left to copy).
    pub fn loads(&self) -> bool {
        self.load.is_some()
    }

    /// The switch-in's load, to perform in steps ([`Load::step`]), each
    /// under the slot lock, before the vGPU runs.
    pub fn into_load(self) -> Option<Load<V, S>> {
        self.load
    }

    /// Performs the switch-in's load, if any, at once ([`Load::finish`],
    /// under the slot lock); the vGPU that runs next.
    pub fn load<P, O>(self, pool: &mut SlotPool<V, S>, p: &P, o: &O) -> Option<VgpuId>
    where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        if let Some(l) = self.load {
            l.finish(pool, p, o);
        }
        self.vgpu
    }
}

impl<const V: usize> VgpuTable<V> {
    /// An empty table.
    pub const fn new() -> Self {
        Self {
            meta: [None; V],
            low_used_mb: 0,
            last_sample_ns: 0,
            last_cpu_ns: 0,
        }
    }

    fn meta_mut(&mut self, id: VgpuId) -> Option<&mut Meta> {
        self.meta.get_mut(usize::from(id))?.as_mut()
    }

    fn meta(&self, id: VgpuId) -> Option<&Meta> {
        self.meta.get(usize::from(id))?.as_ref()
    }

    /// Places the graphics memory of a new vGPU (GVT-g: `alloc_high`, which
    /// comes before the vGPU reaches the scheduler) and reserves its id, the
    /// lowest free one. `(high_mb, low_mb, weight)` are its high and low GM,
    /// MB, and its type's weight. [`Error::NoSpace`] when the GPU has
    /// [`GpuConfig::max_vgpus`] vGPUs already (the id is below that limit)
    /// or the vGPU does not fit the pool or the low GM left; the pool's
    /// error for a high GM size it refuses (not a multiple of the slot).
    pub fn place<P, O, const S: usize>(
        &mut self,
        cfg: &GpuConfig,
        pool: &mut SlotPool<V, S>,
        p: &P,
        o: &O,
        (high_mb, low_mb, weight): (u32, u32, u32),
        now: u64,
    ) -> Result<VgpuId, Error>
    where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        let limit = cfg.vgpu_limit(V);
        let (id, slot) = VgpuId::ALL
            .zip(self.meta.iter_mut().take(limit))
            .find(|(_, m)| m.is_none())
            .ok_or(Error::NoSpace)?;
        let charge_low = !pool.allocator().shares();
        let low_after = self.low_used_mb.checked_add(low_mb).ok_or(Error::NoSpace)?;
        if charge_low && low_after > cfg.low_mb {
            return Err(Error::NoSpace);
        }
        let created = pool.create_mb(id, high_mb, now)?;
        apply_moves(p, o, created.moves.as_slice());
        if charge_low {
            self.low_used_mb = low_after;
        }
        *slot = Some(Meta {
            attached: false,
            high_mb,
            type_weight: weight,
            low_mb,
            charged_low: charge_low,
            bw_mbps: 0,
            last_busy_ns: 0,
        });
        Ok(id)
    }

    /// A placed vGPU enters the scheduler, stopped, with its type's weight
    /// (GVT-g: `init_vgpu`). [`Error::Invalid`] unless placed and not
    /// attached yet.
    pub fn attach(&mut self, sched: &mut Scheduler<V>, id: VgpuId) -> Result<(), Error> {
        let m = match self.meta_mut(id) {
            Some(m) if !m.attached => m,
            _ => return Err(Error::Invalid),
        };
        // The scheduler weighs credits by all of the vGPU's graphics memory.
        sched.create(id, m.type_weight, m.low_mb.saturating_add(m.high_mb))?;
        m.attached = true;
        Ok(())
    }

    /// A stopped vGPU with nothing in flight leaves the scheduler (GVT-g:
    /// `clean_vgpu`); its placement stays until [`VgpuTable::unplace`].
    /// [`Error::Busy`] while started or busy, [`Error::Invalid`] if not
    /// attached.
    pub fn detach(&mut self, sched: &mut Scheduler<V>, id: VgpuId) -> Result<(), Error> {
        let m = match self.meta_mut(id) {
            Some(m) if m.attached => m,
            _ => return Err(Error::Invalid),
        };
        sched.destroy(id)?;
        m.attached = false;
        Ok(())
    }

    /// Frees a detached vGPU's graphics memory and id (GVT-g: `free_high`).
    /// [`Error::Busy`] while still attached, [`Error::Invalid`] for an
    /// unknown id.
    pub fn unplace<P, O, const S: usize>(
        &mut self,
        pool: &mut SlotPool<V, S>,
        p: &P,
        o: &O,
        id: VgpuId,
        now: u64,
    ) -> Result<(), Error>
    where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        let slot = self.meta.get_mut(usize::from(id)).ok_or(Error::Invalid)?;
        let m = match slot {
            Some(m) if m.attached => return Err(Error::Busy),
            Some(m) => *m,
            None => return Err(Error::Invalid),
        };
        let moves = pool.destroy(id, now)?;
        *slot = None;
        if m.charged_low {
            self.low_used_mb = self.low_used_mb.saturating_sub(m.low_mb);
        }
        apply_moves(p, o, moves.as_slice());
        Ok(())
    }

    /// All engines are drained: samples what the policies and allocators
    /// need, then chooses the vGPU that runs next (GVT-g: `pick_next` +
    /// `switched` + `switch_in`), and on a switch takes the new vGPU's
    /// slots in the pool ([`SlotPool::switch_in`]), so that the pool
    /// already names it their owner. The returned [`Decision`] carries the
    /// GTT load of its non-resident slots ([`Load`]; they are pending in
    /// the pool until loaded), which must be performed before it runs: the
    /// kernel engine performs it a step at a time, each under the slot lock
    /// alone, after it released both locks ([`Decision::into_load`]); the
    /// host model all at once ([`Decision::load`]). A decision of the idle
    /// vGPU (`None`) loads nothing. [`Error::Busy`] if work is in flight.
    pub fn decide<P, O, const S: usize>(
        &mut self,
        sched: &mut Scheduler<V>,
        pool: &mut SlotPool<V, S>,
        p: &P,
        o: &O,
        now: u64,
    ) -> Result<Decision<V, S>, Error>
    where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        self.sample(sched, pool, p, o, now);
        let prev = sched.current();
        match sched.pick(now)? {
            Pick::Idle => {
                if prev.is_some() {
                    o.switched(prev, None, 0);
                }
                Ok(Decision {
                    vgpu: None,
                    load: None,
                })
            }
            Pick::Run {
                vgpu,
                switched,
                slice_ns,
            } => {
                let mut load = None;
                if switched {
                    o.switched(prev, Some(vgpu), slice_ns);
                    // The scheduler runs only attached vGPUs, which are
                    // placed.
                    match pool.switch_in(vgpu, now) {
                        Ok(plan) => load = Some(Load::begin(plan, pool, false)),
                        Err(e) => o.inconsistent("switch_in", e),
                    }
                }
                Ok(Decision {
                    vgpu: Some(vgpu),
                    load,
                })
            }
        }
    }

    /// Periodic inputs at a switch point: VM CPU time (`vmcg`), every
    /// [`CPU_SAMPLE_NS`]; utilization samples and periodic re-placement
    /// (slot allocators), every sample period of the pool.
    ///
    /// The re-placement is planned here, inline (a `cost` search: 0.9-1.9 ms
    /// for 16 vGPUs, 10-15 ms for 64, once per `gm_replace_period_ms`),
    /// unless the pool is in deferred mode: then `tick` only marks it
    /// pending, and the caller plans it on a snapshot outside its locks and
    /// applies it with [`apply_replace`] (the kernel engine does, from a
    /// work item).
    fn sample<P, O, const S: usize>(
        &mut self,
        sched: &mut Scheduler<V>,
        pool: &mut SlotPool<V, S>,
        p: &P,
        o: &O,
        now: u64,
    ) where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        if now.saturating_sub(self.last_cpu_ns) >= CPU_SAMPLE_NS {
            self.last_cpu_ns = now;
            for id in VgpuId::ALL.take(V) {
                if !sched.sample_view(id).is_some_and(|(started, _)| started) {
                    continue;
                }
                if let Some(ns) = p.vm_cpu_ns(id) {
                    // A started vGPU is in the scheduler.
                    if let Err(e) = sched.cpu_time(id, ns) {
                        o.inconsistent("cpu_time", e);
                    }
                }
            }
        }
        let elapsed = now.saturating_sub(self.last_sample_ns);
        if elapsed < pool.tunables().sample_period_ns() || elapsed == 0 {
            return;
        }
        self.last_sample_ns = now;
        for (id, meta) in VgpuId::ALL.zip(self.meta.iter_mut()) {
            let (Some(m), Some(busy)) = (meta, sched.sample_view(id).map(|(_, busy)| busy)) else {
                continue;
            };
            let delta = busy.saturating_sub(m.last_busy_ns);
            m.last_busy_ns = busy;
            // `elapsed` is not 0 (checked above).
            let ppm = delta.saturating_mul(1_000_000).checked_div(elapsed);
            let ppm = u32::try_from(ppm.unwrap_or(0).min(1_000_000)).unwrap_or(1_000_000);
            // Placed (it has `meta`), and `ppm` is at most 1_000_000.
            if let Err(e) = pool.sample(id, ppm, now) {
                o.inconsistent("sample", e);
            }
        }
        let moves = pool.tick(now);
        apply_moves(p, o, moves.as_slice());
    }

    /// How many more vGPUs with `high_mb` of high GM and `low_mb` of low GM
    /// can be placed now (mdev `available_instances`, GVT-g: `avail`).
    pub fn available_mb<const S: usize>(
        &self,
        cfg: &GpuConfig,
        pool: &SlotPool<V, S>,
        high_mb: u32,
        low_mb: u32,
    ) -> u32 {
        let limit = cfg.vgpu_limit(V);
        let free = self.meta.iter().take(limit).filter(|m| m.is_none()).count();
        let free = u32::try_from(free).unwrap_or(0);
        let high = pool.available_instances_mb(high_mb).min(free);
        if pool.allocator().shares() {
            return high;
        }
        let low_left = cfg.low_mb.saturating_sub(self.low_used_mb);
        high.min(low_left.checked_div(low_mb).unwrap_or(free))
    }

    /// The weight of `id`'s type (its default weight).
    pub fn type_weight(&self, id: VgpuId) -> Option<u32> {
        self.meta(id).map(|m| m.type_weight)
    }

    /// The admin-set PCI-E bandwidth of `id`, MB/s (0: measured).
    pub fn bandwidth(&self, id: VgpuId) -> Option<u32> {
        self.meta(id).map(|m| m.bw_mbps)
    }

    /// Sets the admin PCI-E bandwidth of `id`, MB/s (0: measure).
    /// [`Error::Invalid`] unless attached.
    pub fn set_bandwidth(
        &mut self,
        sched: &mut Scheduler<V>,
        id: VgpuId,
        mbps: u32,
    ) -> Result<(), Error> {
        let m = match self.meta_mut(id) {
            Some(m) if m.attached => m,
            _ => return Err(Error::Invalid),
        };
        sched.set_bandwidth_mbps(id, mbps)?;
        m.bw_mbps = mbps;
        Ok(())
    }

    /// Number of placed vGPUs.
    pub fn len(&self) -> usize {
        self.meta.iter().filter(|m| m.is_some()).count()
    }

    /// Whether no vGPU is placed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Applies at a switch point (no workload in flight, the caller holds both
/// locks) a periodic re-placement planned on a snapshot of the pool without
/// them: [`SlotPool::set_deferred_replace`], then, once
/// [`SlotPool::replace_pending`], [`SlotPool::plan_replace`] on a copy.
/// The moves go to the provider and the observer. [`Error::Busy`] (nothing
/// moved, the re-placement stays pending: plan again) if a placement
/// changed since the snapshot.
pub fn apply_replace<P, O, const V: usize, const S: usize>(
    pool: &mut SlotPool<V, S>,
    plan: &ReplacePlan<V>,
    p: &P,
    o: &O,
) -> Result<(), Error>
where
    P: Provider + ?Sized,
    O: Observer + ?Sized,
{
    let moves = pool.apply_replace(plan)?;
    apply_moves(p, o, moves.as_slice());
    Ok(())
}

/// Where the range of a vGPU about to be dispatched stands
/// ([`check_resident`]).
#[derive(Clone, Copy, Debug)]
pub enum Resident<const V: usize, const S: usize> {
    /// The hardware GTT holds its whole high-GM range.
    Yes,
    /// It does not, and the engines are busy: hold the dispatch back until
    /// they drained.
    NotDrained,
    /// It does not: the reload to perform ([`Load::step`]) before the
    /// dispatch, after which the range is resident unless a placement moved
    /// it again meanwhile (check again).
    Reload(Load<V, S>),
}

/// Before a dispatch of `id`, whose range a placement may have moved since
/// it was switched in: whether its whole high-GM range is resident in the
/// hardware GTT, so that its workload runs on its own entries, and at a
/// `drained` point the reload of a range that is not.
pub fn check_resident<O, const V: usize, const S: usize>(
    pool: &mut SlotPool<V, S>,
    o: &O,
    id: VgpuId,
    drained: bool,
) -> Resident<V, S>
where
    O: Observer + ?Sized,
{
    if pool.resident(id) {
        return Resident::Yes;
    }
    if !drained {
        return Resident::NotDrained;
    }
    // Only the running vGPU is dispatched, and it is placed.
    match pool.reload(id) {
        Ok(plan) => Resident::Reload(Load::begin(plan, pool, true)),
        Err(e) => {
            o.inconsistent("reload", e);
            Resident::NotDrained
        }
    }
}

/// [`check_resident`] with its reload performed at once ([`Load::finish`]):
/// whether `id`'s whole range is resident, so that it may be dispatched.
pub fn ensure_resident<P, O, const V: usize, const S: usize>(
    pool: &mut SlotPool<V, S>,
    p: &P,
    o: &O,
    id: VgpuId,
    drained: bool,
) -> bool
where
    P: Provider + ?Sized,
    O: Observer + ?Sized,
{
    match check_resident(pool, o, id, drained) {
        Resident::Yes => true,
        Resident::NotDrained => false,
        Resident::Reload(l) => {
            l.finish(pool, p, o);
            pool.resident(id)
        }
    }
}
