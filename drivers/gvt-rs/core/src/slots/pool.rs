// SPDX-License-Identifier: GPL-2.0

//! The slot pool: the vGPU table, placement of created and destroyed
//! vGPUs, and the layout bookkeeping the other entry points share. The
//! tunable setters are in `config.rs`, switch-in and residency in
//! `residency.rs`, sampling and re-placement in `replace.rs`.

use super::alloc_dymsize;
use super::alloc_dymutil;
use super::config::{
    AllocatorKind,
    Tunables, //
};
use super::monitor::{
    Monitor,
    FREQ_ONE, //
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
use super::residency::Residency;
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
    VgpuArray,
    VgpuId, //
};

/// Switch-ins the pool remembers for the `cost` allocator's estimator.
pub const HISTORY: usize = 256;

/// Largest vGPU capacity `V` (ids are bits of a `u64` in the cost model).
pub use super::super::MAX_VGPUS;
const _: () = assert!(MAX_VGPUS <= u64::BITS as usize);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Free,
    Active,
    /// Idle under `dymgpu-size`: keeps its range but is ignored by placement
    /// decisions (it is not switched in, so sharing with it costs nothing).
    Parked,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Vgpu {
    pub(super) state: State,
    pub(super) size: u16,
    pub(super) start: u16,
    pub(super) seq: u32,
    pub(super) mon: Monitor,
    pub(super) stats: CopyStats,
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
    pub(super) m: u16,
    pub(super) low_entries: u32,
    pub(super) kind: AllocatorKind,
    pub(super) tun: Tunables,
    /// Every possible id's entry; only ids below `V` are ever in use.
    pub(super) vgpus: VgpuArray<Vgpu>,
    pub(super) res: Residency<M>,
    pub(super) next_seq: u32,
    pub(super) anchor: Option<u16>,
    pub(super) last_replace_ms: Option<u64>,
    pub(super) totals: CopyStats,
    pub(super) current: Option<VgpuId>,
    pub(super) hist: [u8; HISTORY],
    pub(super) hist_head: usize,
    pub(super) hist_len: usize,
    pub(super) gaps: alloc_cost::Gaps<HISTORY>,
    pub(super) generation: u64,
    pub(super) deferred: bool,
    pub(super) pending: bool,
}

impl<const V: usize, const M: usize> SlotPool<V, M> {
    /// Makes an empty pool. Fails with `OutOfRange` when `V` is 0 or above
    /// [`MAX_VGPUS`], or `cfg.slots` is 0 or above `M`.
    ///
    /// `const` so that the kernel can build it straight into its heap
    /// allocation from a constant: at 27 KB (64 slots; about as much for
    /// any `V`, its vGPU table has an entry for every id) it must not be
    /// built on a 16 KB kernel stack.
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
            vgpus: VgpuArray::filled(FREE_VGPU),
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
        self.vgpus
            .values()
            .filter(|v| v.state != State::Free)
            .count()
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
            .values()
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

    // ----------------------------------------------------------------- events

    /// Creates vGPU `id` needing `size` slots and places it.
    ///
    /// Errors: `OutOfRange` (id not below `V`, or `size` above the pool),
    /// `Invalid` (size 0), `Exists` (id in use), `NoSpace` (`static` has no
    /// free window). Moves of other vGPUs are returned for the kernel to
    /// apply before the new vGPU first runs.
    pub fn create(&mut self, id: VgpuId, size: u16, now: u64) -> Result<Created<V>, Error> {
        let now_ms = ms_of(now);
        if id.index() >= V {
            return Err(Error::OutOfRange);
        }
        if self.vgpus[id].state != State::Free {
            return Err(Error::Exists);
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
        let slot = &mut self.vgpus[id];
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
        let x = in_use_mut::<V>(&mut self.vgpus, id)?;
        let v = *x;
        x.state = State::Free;
        let mut moves = Moves::new();
        self.generation = self.generation.wrapping_add(1);
        self.res.forget(id);
        for h in self.hist.iter_mut().filter(|h| **h == id.raw()) {
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

    // -------------------------------------------------------------- internals

    pub(super) fn used(&self, id: VgpuId) -> Result<&Vgpu, Error> {
        in_use::<V>(&self.vgpus, id)
    }

    /// Active vGPUs as planning items (utilization averaged, rates with the
    /// prior filled in).
    pub(super) fn active_items(&self) -> Items<V> {
        let w = self.tun.window_samples();
        let mut it = Items::new();
        for (id, v) in self.vgpus.iter() {
            if v.state == State::Active {
                let mut i = item_of(id, v);
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
        for v in self.vgpus.values().filter(|v| v.state != State::Free) {
            add_range(&mut occ, v.start, v.size, self.m);
        }
        occ
    }

    /// Moves every vGPU of `layout` whose start differs from its current one.
    pub(super) fn apply(&mut self, layout: &Items<V>, moves: &mut Moves<V>) {
        self.generation = self.generation.wrapping_add(1);
        for it in layout.as_slice() {
            let v = &mut self.vgpus[it.id];
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
    pub(super) fn account(&mut self, moves: &Moves<V>) {
        for mv in moves.iter() {
            let add = CopyStats {
                moves: 1,
                move_slots: u64::from(mv.slots),
                ..CopyStats::default()
            };
            self.vgpus[mv.id].stats.add(&add);
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

    pub(super) fn park(&mut self, id: VgpuId, moves: &mut Moves<V>) {
        // Taken before the state changes: the layout `id` leaves.
        let occ_before = occupancy::<V, M>(&self.active_items(), self.m);
        let Ok(x) = in_use_mut::<V>(&mut self.vgpus, id) else {
            return;
        };
        let v = *x;
        x.state = State::Parked;
        self.generation = self.generation.wrapping_add(1);
        self.after_remove(&item_of(id, &v), &occ_before, moves);
    }

    pub(super) fn unpark(&mut self, id: VgpuId, moves: &mut Moves<V>) {
        // Taken before the state changes: the layout `id` joins.
        let cur = self.active_items();
        let Ok(x) = in_use_mut::<V>(&mut self.vgpus, id) else {
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
}

/// vGPU `id` of `vgpus`: `OutOfRange` if not below `V`, `Invalid` if free.
/// A free function, so that a caller can hold the vGPU while it updates
/// the pool's other fields.
fn in_use<const V: usize>(vgpus: &VgpuArray<Vgpu>, id: VgpuId) -> Result<&Vgpu, Error> {
    match &vgpus[id] {
        _ if id.index() >= V => Err(Error::OutOfRange),
        v if v.state == State::Free => Err(Error::Invalid),
        v => Ok(v),
    }
}

/// [`in_use`], mutable.
pub(super) fn in_use_mut<const V: usize>(
    vgpus: &mut VgpuArray<Vgpu>,
    id: VgpuId,
) -> Result<&mut Vgpu, Error> {
    match &mut vgpus[id] {
        _ if id.index() >= V => Err(Error::OutOfRange),
        v if v.state == State::Free => Err(Error::Invalid),
        v => Ok(v),
    }
}

pub(super) fn item_of(id: VgpuId, v: &Vgpu) -> Item {
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
pub(super) fn prior_freq<const V: usize>(items: &Items<V>) -> u32 {
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
pub(super) const fn ms_of(now: u64) -> u64 {
    now / 1_000_000
}
