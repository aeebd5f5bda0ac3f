// SPDX-License-Identifier: GPL-2.0

//! The slot pool: vGPU table, placement, residency and the event entry
//! points the kernel calls under its slot lock.

use super::alloc_dymsize;
use super::alloc_dymutil::{
    self,
    algorithm2, //
};
use super::config::{
    AllocatorKind,
    Tunables, //
};
use super::monitor::{
    Monitor,
    FREQ_ONE,
    UTIL_FULL_PPM, //
};
use super::moves::{
    Move,
    Moves, //
};
use super::plan::{
    add_range,
    free_windows,
    occupancy,
    shared_slots,
    Item,
    Items, //
};
use super::residency::{
    Residency,
    SwitchPlan, //
};
use super::stats::CopyStats;
use super::{
    alloc_cost,
    alloc_gscale,
    alloc_static,
    ENTRIES_PER_SLOT,
    SLOT_MB, //
};
use super::{
    Error,
    VgpuId, //
};

/// Switch-ins the pool remembers for the `cost` allocator's estimator.
pub const HISTORY: usize = 256;

/// Largest vGPU capacity `V` (ids are bits of a `u64` in the cost model).
pub const MAX_VGPUS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    Active,
    /// Idle under `dymgpu-size`: keeps its range but is ignored by placement
    /// decisions (it is not switched in, so sharing with it costs nothing).
    Parked,
}

#[derive(Clone, Copy, Debug)]
struct Vgpu {
    state: State,
    size: u16,
    start: u16,
    seq: u32,
    mon: Monitor,
    stats: CopyStats,
}

const FREE_VGPU: Vgpu = Vgpu {
    state: State::Free,
    size: 0,
    start: 0,
    seq: 0,
    mon: Monitor::new(0),
    stats: CopyStats::ZERO,
};

/// Configuration fixed when the pool is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// High-GM slots in the shared pool (1..=`M`). Real hardware: 54
    /// (3456 MB left for guests once the host has its 384 MB).
    pub slots: u16,
    /// GTT entries of the shared low-GM region copied when a different vGPU
    /// is switched in (16,384 for the paper's 64 MB; 0 to leave low GM out).
    pub low_entries: u32,
    /// Initial allocator.
    pub allocator: AllocatorKind,
}

impl PoolConfig {
    /// The paper's setup: 54 slots, a shared 64 MB low-GM region.
    pub const PAPER: PoolConfig = PoolConfig {
        slots: 54,
        low_entries: ENTRIES_PER_SLOT,
        allocator: AllocatorKind::Gscale,
    };
}

/// Where a vGPU sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// First slot.
    pub start: u16,
    /// Size in slots.
    pub slots: u16,
    /// Parked as idle (`dymgpu-size`): ignored by placement until it is
    /// switched in again.
    pub parked: bool,
}

impl Placement {
    /// Offset of the range from the start of the pool, in MB.
    pub const fn offset_mb(&self) -> u32 {
        (self.start as u32).saturating_mul(SLOT_MB)
    }
}

/// Result of [`SlotPool::create`].
#[derive(Clone, Copy, Debug)]
pub struct Created<const V: usize> {
    /// First slot of the new vGPU.
    pub start: u16,
    /// Other vGPUs moved to make room (only `dymgpu-size` does this).
    pub moves: Moves<V>,
}

/// Graphics-memory slot pool for up to `V` vGPUs over at most `M` slots.
///
/// # Invariants
///
/// Every vGPU in use has `1 <= size <= slots` and `start + size <= slots`:
/// it lies inside the pool and its range is never split. Only vGPUs in use
/// own slots in the residency table.
#[derive(Clone, Copy, Debug)]
pub struct SlotPool<const V: usize, const M: usize> {
    m: u16,
    low_entries: u32,
    kind: AllocatorKind,
    tun: Tunables,
    vgpus: [Vgpu; V],
    res: Residency<M>,
    next_seq: u32,
    anchor: Option<u16>,
    last_replace_ms: Option<u64>,
    totals: CopyStats,
    current: Option<u8>,
    hist: [u8; HISTORY],
    hist_head: usize,
    hist_len: usize,
    gaps: alloc_cost::Gaps<HISTORY>,
    generation: u64,
    deferred: bool,
    pending: bool,
}

/// A re-placement computed by [`SlotPool::plan_replace`], typically on a
/// clone of the pool outside the lock, to be applied with
/// [`SlotPool::apply_replace`].
#[derive(Clone, Copy, Debug)]
pub struct ReplacePlan<const V: usize> {
    generation: u64,
    items: Option<Items<V>>,
}

impl<const V: usize, const M: usize> SlotPool<V, M> {
    /// Makes an empty pool. Fails with `OutOfRange` when `V` is 0 or above
    /// [`MAX_VGPUS`], or `cfg.slots` is 0 or above `M`.
    ///
    /// `const` so that the kernel can build it straight into its heap
    /// allocation from a constant: at about 10 KB it must not be built on a
    /// 16 KB kernel stack.
    #[allow(clippy::cast_lossless, reason = "usize::from is not const")]
    pub const fn new(cfg: PoolConfig) -> Result<Self, Error> {
        if V == 0 || V > MAX_VGPUS || cfg.slots == 0 || cfg.slots as usize > M {
            return Err(Error::OutOfRange);
        }
        Ok(SlotPool {
            m: cfg.slots,
            low_entries: cfg.low_entries,
            kind: cfg.allocator,
            tun: Tunables::DEFAULT,
            vgpus: [FREE_VGPU; V],
            res: Residency::new(),
            next_seq: 0,
            anchor: None,
            last_replace_ms: None,
            totals: CopyStats::ZERO,
            current: None,
            hist: [u8::MAX; HISTORY],
            hist_head: 0,
            hist_len: 0,
            gaps: alloc_cost::Gaps::new(),
            generation: 0,
            deferred: false,
            pending: false,
        })
    }

    // ---------------------------------------------------------------- queries

    /// Slots in the pool.
    pub const fn slots(&self) -> u16 {
        self.m
    }

    /// Current allocator.
    pub const fn allocator(&self) -> AllocatorKind {
        self.kind
    }

    /// Current tunables.
    pub const fn tunables(&self) -> &Tunables {
        &self.tun
    }

    /// Number of vGPUs in use (active or parked).
    pub fn in_use(&self) -> usize {
        self.vgpus.iter().filter(|v| v.state != State::Free).count()
    }

    /// Placement of vGPU `id`, if it is in use.
    pub fn placement(&self, id: VgpuId) -> Option<Placement> {
        let v = self.used(id).ok()?;
        Some(Placement {
            start: v.start,
            slots: v.size,
            parked: v.state == State::Parked,
        })
    }

    /// Whose entries hardware slot `slot` holds.
    pub fn owner(&self, slot: u16) -> Option<VgpuId> {
        self.res.owner(slot)
    }

    /// Whose entries the shared low-GM region holds.
    pub fn low_owner(&self) -> Option<VgpuId> {
        self.res.low_owner()
    }

    /// Number of active (not parked) vGPUs covering `slot`.
    pub fn occupancy(&self, slot: u16) -> u8 {
        let s = slot;
        self.vgpus
            .iter()
            .filter(|v| {
                v.state == State::Active && v.start <= s && s < v.start.saturating_add(v.size)
            })
            .count()
            .try_into()
            .unwrap_or(u8::MAX)
    }

    /// Slots covered by two or more active vGPUs.
    pub fn shared_slots(&self) -> u32 {
        shared_slots(&occupancy::<V, M>(&self.active_items(), self.m))
    }

    /// Copy counters of vGPU `id` since it was created.
    pub fn stats(&self, id: VgpuId) -> Option<CopyStats> {
        self.used(id).ok().map(|v| v.stats)
    }

    /// Copy counters of the pool since it was made (destroyed vGPUs
    /// included).
    pub const fn totals(&self) -> CopyStats {
        self.totals
    }

    /// Average utilization of `id` over the window, in ppm.
    pub fn utilization(&self, id: VgpuId) -> Option<u32> {
        let w = self.tun.window_samples();
        self.used(id).ok().map(|v| v.mon.average(w))
    }

    /// `P_K` of the last Algorithm 1 layout (`dymgpu-size` only).
    pub const fn dymgpu_anchor(&self) -> Option<u16> {
        self.anchor
    }

    /// How many more vGPUs of `size` slots can be created now. `static`
    /// counts free disjoint windows; the sharing allocators can place any
    /// vGPU that fits in the pool, so they are limited by free table entries.
    pub fn available_instances(&self, size: u16) -> u32 {
        if size == 0 || size > self.m {
            return 0;
        }
        let free_ids = u32::try_from(V.saturating_sub(self.in_use())).unwrap_or(0);
        if self.kind.shares() {
            return free_ids;
        }
        let occ = self.all_occupancy();
        free_windows(&occ, size, self.m).min(free_ids)
    }

    /// [`SlotPool::available_instances`] for a size in MB (0 if the size is
    /// not a positive multiple of 64 MB).
    pub fn available_instances_mb(&self, mb: u32) -> u32 {
        match mb_to_slots(mb) {
            Ok(s) => self.available_instances(s),
            Err(_) => 0,
        }
    }

    // --------------------------------------------------------------- tunables

    /// Selects the allocator. Only while no vGPU exists (`Busy` otherwise),
    /// since placements made by one allocator break another's rules.
    pub fn set_allocator(&mut self, kind: AllocatorKind) -> Result<(), Error> {
        if self.in_use() != 0 {
            return Err(Error::Busy);
        }
        self.kind = kind;
        self.anchor = None;
        Ok(())
    }

    /// Changes the pool size and the shared low-GM region at run time, for
    /// providers that learn them only when the GPU appears (the kernel
    /// builds the pool for `M` slots at compile time, then shrinks it).
    /// Only while no vGPU exists (`Busy`); `OutOfRange` unless
    /// `1 <= slots <= M`. Residency and copy totals start afresh.
    pub fn reconfigure(&mut self, slots: u16, low_entries: u32) -> Result<(), Error> {
        if self.in_use() != 0 {
            return Err(Error::Busy);
        }
        if slots == 0 || usize::from(slots) > M {
            return Err(Error::OutOfRange);
        }
        self.m = slots;
        self.low_entries = low_entries;
        self.anchor = None;
        self.forget_residency();
        self.totals = CopyStats::ZERO;
        Ok(())
    }

    /// See [`Tunables::set_sample_period_ms`].
    pub fn set_sample_period_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_sample_period_ms(ms)
    }

    /// See [`Tunables::set_util_window_ms`].
    pub fn set_util_window_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_util_window_ms(ms)
    }

    /// See [`Tunables::set_idle_threshold_ms`].
    pub fn set_idle_threshold_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_idle_threshold_ms(ms)
    }

    /// See [`Tunables::set_replace_period_ms`].
    pub fn set_replace_period_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_replace_period_ms(ms)
    }

    /// See [`Tunables::set_relocation`].
    pub fn set_relocation(&mut self, on: bool) {
        self.tun.set_relocation(on);
    }

    /// See [`Tunables::set_move_penalty_pct`].
    pub fn set_move_penalty_pct(&mut self, pct: u32) -> Result<(), Error> {
        self.tun.set_move_penalty_pct(pct)
    }

    // ----------------------------------------------------------------- events

    /// Creates vGPU `id` needing `size` slots and places it.
    ///
    /// Errors: `OutOfRange` (id not below `V`, or `size` above the pool),
    /// `Invalid` (size 0), `Exists` (id in use), `NoSpace` (`static` has no
    /// free window). Moves of other vGPUs are returned for the kernel to
    /// apply before the new vGPU first runs.
    pub fn create(&mut self, id: VgpuId, size: u16, now: u64) -> Result<Created<V>, Error> {
        let now_ms = ms_of(now);
        let idx = usize::from(id);
        match self.vgpus.get(idx) {
            None => return Err(Error::OutOfRange),
            Some(v) if v.state != State::Free => return Err(Error::Exists),
            Some(_) => {}
        }
        if size == 0 {
            return Err(Error::Invalid);
        }
        if size > self.m {
            return Err(Error::OutOfRange);
        }
        let m = self.m;
        let cur = self.active_items();
        let seq = self.next_seq;
        let new = Item {
            id,
            size,
            start: 0,
            seq,
            util: 0,
            freq: prior_freq(&cur),
        };
        let with = |p: u16| {
            let mut l = cur;
            l.push(Item { start: p, ..new });
            l
        };
        let (layout, anchor) = match self.kind {
            AllocatorKind::Static => {
                let p = alloc_static::place(&self.all_occupancy(), size, m)?;
                (with(p), None)
            }
            AllocatorKind::Gscale => {
                let p = alloc_gscale::place(&self.all_occupancy(), size, m, true)
                    .ok_or(Error::OutOfRange)?;
                (with(p), None)
            }
            AllocatorKind::DymSize => {
                let l =
                    alloc_dymsize::create::<V, M>(&cur, new, self.anchor, m, self.tun.relocation());
                (l.items, l.anchor)
            }
            AllocatorKind::DymUtil => (with(alloc_dymutil::create::<V, M>(&cur, size, m)), None),
            AllocatorKind::Cost => (with(alloc_cost::create::<V, M>(&cur, new, m)), None),
        };
        let start = layout
            .get_by_id(id)
            .map(|i| i.start)
            .ok_or(Error::Invalid)?;
        if start.checked_add(size).is_none_or(|end| end > m) {
            return Err(Error::OutOfRange);
        }
        let slot = self.vgpus.get_mut(idx).ok_or(Error::OutOfRange)?;
        // Commit: nothing below can fail.
        self.next_seq = seq.wrapping_add(1);
        *slot = Vgpu {
            state: State::Active,
            size,
            start,
            seq,
            mon: Monitor::new(now_ms),
            stats: CopyStats::default(),
        };
        let mut moves = Moves::new();
        self.apply(&layout, &mut moves);
        self.account(&moves);
        self.anchor = anchor;
        Ok(Created { start, moves })
    }

    /// [`SlotPool::create`] with the size in MB, which must be a positive
    /// multiple of 64 (`Invalid` otherwise).
    pub fn create_mb(&mut self, id: VgpuId, mb: u32, now: u64) -> Result<Created<V>, Error> {
        let s = mb_to_slots(mb)?;
        self.create(id, s, now)
    }

    /// Destroys vGPU `id` and forgets its residency. Under `dymgpu-size`, if
    /// it held a slot nobody else used, the others are re-placed (returned).
    /// Errors: `OutOfRange` (id not below `V`), `Invalid` (not in use).
    pub fn destroy(&mut self, id: VgpuId, _now: u64) -> Result<Moves<V>, Error> {
        // Taken before the state changes: the layout `id` leaves.
        let occ_before = occupancy::<V, M>(&self.active_items(), self.m);
        let x = in_use_mut(&mut self.vgpus, id)?;
        let v = *x;
        x.state = State::Free;
        let mut moves = Moves::new();
        self.generation = self.generation.wrapping_add(1);
        self.res.forget(id);
        for h in self.hist.iter_mut().filter(|h| **h == id) {
            *h = u8::MAX;
        }
        if self.current == Some(id) {
            self.current = None;
        }
        if self.kind == AllocatorKind::DymSize && v.state == State::Active {
            self.after_remove(&item_of(id, &v), &occ_before, &mut moves);
        }
        self.account(&moves);
        Ok(moves)
    }

    /// Switches vGPU `id` in: returns the slots (and low-GM region) whose
    /// entries the kernel must copy into the hardware GTT, and marks them
    /// resident. A parked vGPU is first re-inserted (moves in the plan).
    /// Errors: `OutOfRange` (id not below `V`), `Invalid` (not in use).
    pub fn switch_in(&mut self, id: VgpuId, now: u64) -> Result<SwitchPlan<V, M>, Error> {
        let now_ms = ms_of(now);
        let (mut plan, n) = self.load_range(id)?;
        let x = in_use_mut(&mut self.vgpus, id)?;
        let low = self.kind.shares() && self.low_entries > 0 && self.res.take_low(id);
        if low {
            plan.set_low(self.low_entries);
        }
        let add = CopyStats {
            switch_ins: 1,
            high_slots: u64::from(n),
            low_copies: u64::from(low),
            low_entries: if low { u64::from(self.low_entries) } else { 0 },
            moves: 0,
            move_slots: 0,
        };
        self.totals.add(&add);
        x.stats.add(&add);
        x.mon.note_switch(now_ms);
        self.current = Some(id);
        // `hist_head` wraps below `HISTORY`, the ring's length.
        if let Some(h) = self.hist.get_mut(self.hist_head) {
            *h = id;
        }
        self.hist_head = self.hist_head.saturating_add(1);
        if self.hist_head >= HISTORY {
            self.hist_head = 0;
        }
        self.hist_len = self.hist_len.saturating_add(1).min(HISTORY);
        Ok(plan)
    }

    /// Whether the hardware GTT holds every slot of `id`'s high-GM range
    /// (the low-GM region is not moved by placements, only by switch-ins).
    pub fn resident(&self, id: VgpuId) -> bool {
        let Some(p) = self.placement(id) else {
            return false;
        };
        (p.start..p.start.saturating_add(p.slots)).all(|s| self.res.owner(s) == Some(id))
    }

    /// Reloads the running vGPU `id` after placements moved its range or
    /// gave its slots to another vGPU: the slots to copy, as
    /// [`SlotPool::switch_in`] but without counting a switch. A parked vGPU is
    /// first re-inserted (moves in the plan).
    pub fn reload(&mut self, id: VgpuId) -> Result<SwitchPlan<V, M>, Error> {
        let (plan, n) = self.load_range(id)?;
        let x = in_use_mut(&mut self.vgpus, id)?;
        let add = CopyStats {
            high_slots: u64::from(n),
            ..CopyStats::ZERO
        };
        self.totals.add(&add);
        x.stats.add(&add);
        Ok(plan)
    }

    /// Makes `id`'s high-GM range resident (re-inserting it first if it is
    /// parked): the plan of slots to copy, with the moves, and their count.
    fn load_range(&mut self, id: u8) -> Result<(SwitchPlan<V, M>, u16), Error> {
        let mut moves = Moves::new();
        if self.used(id)?.state == State::Parked {
            self.unpark(id, &mut moves);
            self.account(&moves);
        }
        let v = *self.used(id)?;
        let mut plan = SwitchPlan::new(id, v.start, v.size);
        let n = self.res.switch_in(id, v.start, v.size, plan.copy_mut());
        plan.set_high(n);
        *plan.moves_mut() = moves;
        Ok((plan, n))
    }

    /// Records a utilization sample of vGPU `id`: `busy_ppm` is the fraction
    /// of the last sample period it kept the GPU busy, in parts per million
    /// (0..=1 000 000, `OutOfRange` above). A non-zero sample also counts as
    /// activity for the idle rule.
    pub fn sample(&mut self, id: VgpuId, busy_ppm: u32, now: u64) -> Result<(), Error> {
        let now_ms = ms_of(now);
        let x = in_use_mut(&mut self.vgpus, id)?;
        if busy_ppm > UTIL_FULL_PPM {
            return Err(Error::OutOfRange);
        }
        x.mon.sample(busy_ppm, now_ms);
        Ok(())
    }

    /// Periodic work, to be called every sample period at a switch point
    /// (no vGPU running on the engines): parks vGPUs idle for the threshold
    /// (`dymgpu-size`) and, every re-placement period, re-places vGPUs
    /// (`dymgpu-util`, `cost`). Returns the moves to apply.
    pub fn tick(&mut self, now: u64) -> Moves<V> {
        let now_ms = ms_of(now);
        let mut moves = Moves::new();
        let thr = u64::from(self.tun.idle_threshold_ms());
        if self.kind == AllocatorKind::DymSize && thr != 0 {
            for idx in 0..V {
                let Some(v) = self.vgpus.get(idx).copied() else {
                    break;
                };
                if v.state == State::Active && now_ms.saturating_sub(v.mon.last_active_ms()) >= thr
                {
                    self.park(u8::try_from(idx).unwrap_or(u8::MAX), &mut moves);
                }
            }
        }
        let due = match self.last_replace_ms {
            None => {
                self.last_replace_ms = Some(now_ms);
                false
            }
            Some(t) => now_ms.saturating_sub(t) >= u64::from(self.tun.replace_period_ms()),
        };
        if due {
            self.last_replace_ms = Some(now_ms);
            for v in self.vgpus.iter_mut().filter(|v| v.state != State::Free) {
                v.mon.roll_period();
            }
            if self.deferred {
                self.pending = self.replaces();
            } else {
                self.replace(&mut moves);
            }
        }
        self.account(&moves);
        moves
    }

    /// Re-places now (what `tick` does when the period is due), for an admin
    /// trigger or a test. Does nothing for allocators without re-placement.
    pub fn replace_now(&mut self) -> Moves<V> {
        let mut moves = Moves::new();
        self.replace(&mut moves);
        self.account(&moves);
        moves
    }

    /// Makes `tick` leave the periodic re-placement to the caller (default
    /// off). The `cost` allocator's search takes 0.9-1.9 ms for 16 vGPUs
    /// and 10-15 ms for 64 (`gvt-slots bench`); with this on, `tick` only
    /// raises [`SlotPool::replace_pending`], and the kernel copies the pool
    /// under its locks, runs [`SlotPool::plan_replace`] on the copy from a
    /// work item without them, and applies the plan with
    /// [`SlotPool::apply_replace`] at the next switch point.
    pub fn set_deferred_replace(&mut self, on: bool) {
        self.deferred = on;
        if !on {
            self.pending = false;
        }
    }

    /// Whether a deferred re-placement is due.
    pub const fn replace_pending(&self) -> bool {
        self.pending
    }

    /// Makes this pool a copy of `src`, a field and a vGPU at a time.
    ///
    /// For the kernel, which plans re-placement on a preallocated copy of
    /// its pool: `*copy = *pool` may go through a temporary of the whole
    /// pool (27 KB at 64 vGPUs) on a 16 KB kernel stack, and a slice copy
    /// has a length check whose failure path objtool does not know. Every
    /// field is named, so a field added to the pool must be added here.
    pub fn copy_from(&mut self, src: &Self) {
        let Self {
            m,
            low_entries,
            kind,
            tun,
            vgpus,
            res,
            next_seq,
            anchor,
            last_replace_ms,
            totals,
            current,
            hist,
            hist_head,
            hist_len,
            gaps,
            generation,
            deferred,
            pending,
        } = src;
        self.m = *m;
        self.low_entries = *low_entries;
        self.kind = *kind;
        self.tun = *tun;
        for (d, s) in self.vgpus.iter_mut().zip(vgpus) {
            *d = *s;
        }
        self.res = *res;
        self.next_seq = *next_seq;
        self.anchor = *anchor;
        self.last_replace_ms = *last_replace_ms;
        self.totals = *totals;
        self.current = *current;
        self.hist = *hist;
        self.hist_head = *hist_head;
        self.hist_len = *hist_len;
        self.gaps = *gaps;
        self.generation = *generation;
        self.deferred = *deferred;
        self.pending = *pending;
    }

    /// Computes the periodic re-placement without applying it (call it on a
    /// clone). The plan is empty for allocators that do not re-place.
    pub fn plan_replace(&mut self) -> ReplacePlan<V> {
        ReplacePlan {
            generation: self.generation,
            items: self.layout_now(),
        }
    }

    /// Applies a plan made on a clone. Fails with `Busy` (nothing changed,
    /// the re-placement stays pending) if a vGPU was created, destroyed,
    /// parked or moved since the clone was taken. A plan that relocation,
    /// turned off since, no longer allows is dropped (no moves).
    pub fn apply_replace(&mut self, plan: &ReplacePlan<V>) -> Result<Moves<V>, Error> {
        if plan.generation != self.generation {
            return Err(Error::Busy);
        }
        let mut moves = Moves::new();
        if let Some(items) = plan.items.as_ref().filter(|_| self.replaces()) {
            self.apply(items, &mut moves);
        }
        self.account(&moves);
        self.pending = false;
        Ok(moves)
    }

    /// Forgets all residency (after a GPU reset or resume rewrote the GTT):
    /// every vGPU's next switch-in copies its whole range.
    pub fn forget_residency(&mut self) {
        self.res = Residency::new();
    }

    // -------------------------------------------------------------- internals

    fn used(&self, id: u8) -> Result<&Vgpu, Error> {
        in_use(&self.vgpus, id)
    }

    /// Active vGPUs as planning items (utilization averaged, rates with the
    /// prior filled in).
    fn active_items(&self) -> Items<V> {
        let w = self.tun.window_samples();
        let mut it = Items::new();
        for (idx, v) in self.vgpus.iter().enumerate() {
            if v.state == State::Active {
                let mut i = item_of(u8::try_from(idx).unwrap_or(u8::MAX), v);
                i.util = v.mon.average(w);
                it.push(i);
            }
        }
        let prior = prior_freq(&it);
        for i in it.as_mut_slice() {
            if i.freq == 0 {
                i.freq = prior;
            }
        }
        it
    }

    /// Occupancy counting every vGPU in use (for `static` and `gscale`).
    fn all_occupancy(&self) -> [u8; M] {
        let mut occ = [0u8; M];
        for v in self.vgpus.iter().filter(|v| v.state != State::Free) {
            add_range(&mut occ, v.start, v.size, self.m);
        }
        occ
    }

    /// Moves every vGPU of `layout` whose start differs from its current one.
    fn apply(&mut self, layout: &Items<V>, moves: &mut Moves<V>) {
        self.generation = self.generation.wrapping_add(1);
        for it in layout.as_slice() {
            let Some(v) = self.vgpus.get_mut(usize::from(it.id)) else {
                continue;
            };
            if v.state == State::Free || v.start == it.start {
                continue;
            }
            if it.start.checked_add(v.size).is_none_or(|e| e > self.m) {
                continue; // never leave the pool (cannot happen)
            }
            self.res.forget_range(it.id, v.start, v.size);
            moves.push(Move {
                id: it.id,
                from: v.start,
                to: it.start,
                slots: v.size,
            });
            v.start = it.start;
        }
    }

    /// Counts the net moves of one operation (a vGPU moved twice within it
    /// is relocated once by the kernel, and counted once).
    fn account(&mut self, moves: &Moves<V>) {
        for mv in moves.iter() {
            let add = CopyStats {
                moves: 1,
                move_slots: u64::from(mv.slots),
                ..CopyStats::default()
            };
            // Moves name vGPUs of this pool (`apply`): below `V`.
            if let Some(v) = self.vgpus.get_mut(usize::from(mv.id)) {
                v.stats.add(&add);
            }
            self.totals.add(&add);
        }
    }

    fn after_remove(&mut self, gone: &Item, occ_before: &[u8; M], moves: &mut Moves<V>) {
        let rest = self.active_items();
        if let Some(l) =
            alloc_dymsize::remove::<V, M>(&rest, gone, occ_before, self.m, self.tun.relocation())
        {
            self.apply(&l.items, moves);
            self.anchor = l.anchor;
        }
        if rest.len() == 0 {
            self.anchor = None;
        }
    }

    fn park(&mut self, id: u8, moves: &mut Moves<V>) {
        // Taken before the state changes: the layout `id` leaves.
        let occ_before = occupancy::<V, M>(&self.active_items(), self.m);
        let Ok(x) = in_use_mut(&mut self.vgpus, id) else {
            return;
        };
        let v = *x;
        x.state = State::Parked;
        self.generation = self.generation.wrapping_add(1);
        self.after_remove(&item_of(id, &v), &occ_before, moves);
    }

    fn unpark(&mut self, id: u8, moves: &mut Moves<V>) {
        // Taken before the state changes: the layout `id` joins.
        let cur = self.active_items();
        let Ok(x) = in_use_mut(&mut self.vgpus, id) else {
            return;
        };
        let mut back = item_of(id, x);
        x.state = State::Active;
        back.freq = prior_freq(&cur);
        let l =
            alloc_dymsize::unpark::<V, M>(&cur, back, self.anchor, self.m, self.tun.relocation());
        self.apply(&l.items, moves);
        self.anchor = l.anchor;
    }

    /// Whether the allocator re-places periodically (and may now).
    fn replaces(&self) -> bool {
        self.tun.relocation() && matches!(self.kind, AllocatorKind::DymUtil | AllocatorKind::Cost)
    }

    /// The periodic re-placement layout, or `None` for allocators without.
    fn layout_now(&mut self) -> Option<Items<V>> {
        if !self.replaces() {
            return None;
        }
        let m = self.m;
        let mut items = self.active_items();
        match self.kind {
            AllocatorKind::DymUtil => algorithm2(&mut items, m),
            _ => {
                let pct = self.tun.move_penalty_pct();
                let h = history(&self.hist, self.hist_head, self.hist_len);
                self.gaps.build(h);
                items = alloc_cost::replace::<V, M>(&items, m, pct, Some(self.gaps.view()));
            }
        }
        Some(items)
    }

    fn replace(&mut self, moves: &mut Moves<V>) {
        if let Some(items) = self.layout_now() {
            self.apply(&items, moves);
        }
    }
}

/// The switch-in history ring as two slices, oldest first.
fn history(hist: &[u8; HISTORY], head: usize, len: usize) -> alloc_cost::Hist<'_> {
    if len < HISTORY {
        alloc_cost::Hist {
            older: hist.get(..len).unwrap_or(&[]),
            newer: &[],
        }
    } else {
        alloc_cost::Hist {
            older: hist.get(head..).unwrap_or(&[]),
            newer: hist.get(..head).unwrap_or(&[]),
        }
    }
}

/// vGPU `id` of `vgpus`: `OutOfRange` if not below `V`, `Invalid` if free.
/// A free function, so that a caller can hold the vGPU while it updates
/// the pool's other fields.
fn in_use(vgpus: &[Vgpu], id: u8) -> Result<&Vgpu, Error> {
    match vgpus.get(usize::from(id)) {
        None => Err(Error::OutOfRange),
        Some(v) if v.state == State::Free => Err(Error::Invalid),
        Some(v) => Ok(v),
    }
}

/// [`in_use`], mutable.
fn in_use_mut(vgpus: &mut [Vgpu], id: u8) -> Result<&mut Vgpu, Error> {
    match vgpus.get_mut(usize::from(id)) {
        None => Err(Error::OutOfRange),
        Some(v) if v.state == State::Free => Err(Error::Invalid),
        Some(v) => Ok(v),
    }
}

fn item_of(id: u8, v: &Vgpu) -> Item {
    Item {
        id,
        size: v.size,
        start: v.start,
        seq: v.seq,
        util: 0,
        freq: v.mon.freq().unwrap_or(0),
    }
}

/// Rate assumed for a vGPU without a full period of history: the mean of
/// the others' known rates, or one switch-in per period.
fn prior_freq<const V: usize>(items: &Items<V>) -> u32 {
    let (sum, n) = items
        .as_slice()
        .iter()
        .filter(|i| i.freq != 0)
        .fold((0u64, 0u64), |(s, n), i| {
            (s.saturating_add(u64::from(i.freq)), n.saturating_add(1))
        });
    match sum.checked_div(n) {
        Some(x) if x > 0 => u32::try_from(x).unwrap_or(u32::MAX),
        _ => FREQ_ONE,
    }
}

/// Converts a size in MB to slots: a positive multiple of 64 MB.
pub fn mb_to_slots(mb: u32) -> Result<u16, Error> {
    if mb == 0 || mb % SLOT_MB != 0 {
        return Err(Error::Invalid);
    }
    u16::try_from(mb / SLOT_MB).map_err(|_| Error::OutOfRange)
}

/// The pool keeps its history in milliseconds (the unit of its tunables);
/// callers pass time as everywhere in the core, ns of a monotonic clock.
const fn ms_of(now: u64) -> u64 {
    now / 1_000_000
}
