// SPDX-License-Identifier: GPL-2.0

//! GTT residency: which vGPU's entries each hardware slot holds, and what a
//! switch-in has to copy; the [`SlotPool`] entry points that make a vGPU's
//! range resident (switch-in, reload) are here with it.

use super::moves::Moves;
use super::pool::{
    in_use_mut,
    ms_of,
    SlotPool,
    State,
    HISTORY, //
};
use super::stats::CopyStats;
use super::{
    Error,
    VgpuId,
    ENTRIES_PER_SLOT, //
};

/// Owner of every high-GM slot and of the shared low-GM region, and whether
/// the owner's entries are still to be loaded there.
///
/// A switch-in names its vGPU the owner of the slots it copies at once; the
/// engine marks them pending, and each is loaded, and stops being pending,
/// in a step of its own ([`Load::step`](super::super::engine::Load::step)), so that the kernel
/// can let guest GTT accesses in between. Until then the hardware does not
/// hold the owner's entries there ([`Residency::holds`]).
///
/// # Invariants
///
/// A pending slot (or low region) has an owner: every change of owner sets
/// or clears the flag with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Residency<const M: usize> {
    owner: [Option<VgpuId>; M],
    pending: [bool; M],
    low_owner: Option<VgpuId>,
    low_pending: bool,
}

impl<const M: usize> Residency<M> {
    pub(crate) const fn new() -> Self {
        Residency {
            owner: [None; M],
            pending: [false; M],
            low_owner: None,
            low_pending: false,
        }
    }

    /// Names `id` the owner of `[start, start + size)`; flags in `copy`
    /// the slots whose entries the hardware does not hold yet (another
    /// owner, none, or a load of `id`'s that did not finish), and returns
    /// how many there were. They are not pending: the engine, which loads
    /// them a step at a time, marks them ([`Residency::set_pending`]).
    pub(crate) fn switch_in(
        &mut self,
        id: VgpuId,
        start: u16,
        size: u16,
        copy: &mut [bool; M],
    ) -> u16 {
        let range = usize::from(start)..usize::from(start.saturating_add(size));
        let mut n: u16 = 0;
        let owners = self.owner.get_mut(range.clone()).unwrap_or(&mut []);
        let pending = self.pending.get_mut(range.clone()).unwrap_or(&mut []);
        let flags = copy.get_mut(range).unwrap_or(&mut []);
        for ((o, p), f) in owners
            .iter_mut()
            .zip(pending.iter_mut())
            .zip(flags.iter_mut())
        {
            if *o != Some(id) || *p {
                *o = Some(id);
                *p = false;
                *f = true;
                n = n.saturating_add(1);
            }
        }
        n
    }

    /// Makes `id` the owner of the low-GM region; true if the hardware does
    /// not hold its entries yet.
    pub(crate) fn take_low(&mut self, id: VgpuId) -> bool {
        let load = self.low_owner != Some(id) || self.low_pending;
        self.low_owner = Some(id);
        self.low_pending = false;
        load
    }

    /// Marks `slot`, which `id` owns, pending: the hardware does not hold
    /// `id`'s entries there until [`Residency::loaded`].
    pub(crate) fn set_pending(&mut self, slot: u16, id: VgpuId) {
        let s = usize::from(slot);
        if let (Some(&o), Some(p)) = (self.owner.get(s), self.pending.get_mut(s)) {
            if o == Some(id) {
                *p = true;
            }
        }
    }

    /// The low region's counterpart of [`Residency::set_pending`].
    pub(crate) fn set_low_pending(&mut self, id: VgpuId) {
        if self.low_owner == Some(id) {
            self.low_pending = true;
        }
    }

    /// Whether `id` owns `slot` and its entries are still to be loaded
    /// there.
    pub(crate) fn pending(&self, slot: u16, id: VgpuId) -> bool {
        let s = usize::from(slot);
        self.owner.get(s) == Some(&Some(id)) && self.pending.get(s) == Some(&true)
    }

    /// Whether the hardware holds `id`'s entries in `slot`: `id` owns it
    /// and its load is done.
    pub(crate) fn holds(&self, slot: u16, id: VgpuId) -> bool {
        self.owner.get(usize::from(slot)) == Some(&Some(id)) && !self.pending(slot, id)
    }

    /// `slot` is pending for `id`: marks it loaded and returns true. False,
    /// and nothing changes, if it is not (its owner changed meanwhile).
    pub(crate) fn loaded(&mut self, slot: u16, id: VgpuId) -> bool {
        let load = self.pending(slot, id);
        if let (true, Some(p)) = (load, self.pending.get_mut(usize::from(slot))) {
            *p = false;
        }
        load
    }

    /// The low region's counterpart of [`Residency::pending`].
    pub(crate) fn low_pending(&self, id: VgpuId) -> bool {
        self.low_owner == Some(id) && self.low_pending
    }

    /// The low region's counterpart of [`Residency::loaded`].
    pub(crate) fn low_loaded(&mut self, id: VgpuId) -> bool {
        let load = self.low_pending(id);
        if load {
            self.low_pending = false;
        }
        load
    }

    /// Forgets `id`'s residency in `[start, start + size)` (after a move: the
    /// hardware entries there are stale for everybody).
    pub(crate) fn forget_range(&mut self, id: VgpuId, start: u16, size: u16) {
        let range = usize::from(start)..usize::from(start.saturating_add(size));
        let owners = self.owner.get_mut(range.clone()).unwrap_or(&mut []);
        let pending = self.pending.get_mut(range).unwrap_or(&mut []);
        for (o, p) in owners.iter_mut().zip(pending.iter_mut()) {
            if *o == Some(id) {
                *o = None;
                *p = false;
            }
        }
    }

    /// Forgets every residency of `id` (destroy).
    pub(crate) fn forget(&mut self, id: VgpuId) {
        for (o, p) in self.owner.iter_mut().zip(self.pending.iter_mut()) {
            if *o == Some(id) {
                *o = None;
                *p = false;
            }
        }
        if self.low_owner == Some(id) {
            self.low_owner = None;
            self.low_pending = false;
        }
    }

    pub(crate) fn owner(&self, slot: u16) -> Option<VgpuId> {
        self.owner.get(usize::from(slot)).copied().flatten()
    }

    pub(crate) fn low_owner(&self) -> Option<VgpuId> {
        self.low_owner
    }
}

/// What the kernel must do when it switches a vGPU in.
///
/// Apply [`SwitchPlan::moves`] first (relocate those vGPUs' private GTTs),
/// then write the vGPU's private entries for every slot in
/// [`SwitchPlan::copy_runs`] into the hardware GTT, then the low-GM region if
/// [`SwitchPlan::copy_low`]. The engine does it a slot at a time
/// ([`Load`](super::super::engine::Load)), each slot pending in the pool
/// until its step.
#[derive(Clone, Copy, Debug)]
pub struct SwitchPlan<const V: usize, const M: usize> {
    id: VgpuId,
    start: u16,
    size: u16,
    copy: [bool; M],
    high_slots: u16,
    low: bool,
    low_entries: u32,
    moves: Moves<V>,
}

impl<const V: usize, const M: usize> SwitchPlan<V, M> {
    pub(crate) const fn new(id: VgpuId, start: u16, size: u16) -> Self {
        SwitchPlan {
            id,
            start,
            size,
            copy: [false; M],
            high_slots: 0,
            low: false,
            low_entries: 0,
            moves: Moves::new(),
        }
    }

    pub(crate) fn copy_mut(&mut self) -> &mut [bool; M] {
        &mut self.copy
    }

    pub(crate) fn set_high(&mut self, n: u16) {
        self.high_slots = n;
    }

    pub(crate) fn set_low(&mut self, entries: u32) {
        self.low = true;
        self.low_entries = entries;
    }

    pub(crate) fn moves_mut(&mut self) -> &mut Moves<V> {
        &mut self.moves
    }

    /// The vGPU switched in.
    pub const fn id(&self) -> VgpuId {
        self.id
    }

    /// Its first slot and size in slots (its whole high-GM range).
    pub const fn range(&self) -> (u16, u16) {
        (self.start, self.size)
    }

    /// Number of high-GM slots to copy.
    pub const fn high_slots(&self) -> u16 {
        self.high_slots
    }

    /// Whether the shared low-GM region must be copied.
    pub const fn copy_low(&self) -> bool {
        self.low
    }

    /// GTT entries of the shared low-GM region to copy (0 if none).
    pub const fn low_entries(&self) -> u32 {
        if self.low {
            self.low_entries
        } else {
            0
        }
    }

    /// Whether slot `s` must be copied.
    pub fn copies_slot(&self, s: u16) -> bool {
        self.copy.get(usize::from(s)).copied().unwrap_or(false)
    }

    /// GTT entries to copy: 16,384 per high slot plus the low region.
    pub fn entries(&self) -> u64 {
        u64::from(self.high_slots)
            .saturating_mul(u64::from(ENTRIES_PER_SLOT))
            .saturating_add(u64::from(self.low_entries))
    }

    /// Moves made before this switch (a returning idle vGPU re-inserted).
    pub const fn moves(&self) -> &Moves<V> {
        &self.moves
    }

    /// Maximal runs `(first slot, number of slots)` to copy, in slot order.
    pub fn copy_runs(&self) -> CopyRuns<'_> {
        CopyRuns {
            copy: &self.copy,
            pos: 0,
        }
    }
}

/// Iterator over the runs of slots a [`SwitchPlan`] copies.
#[derive(Clone, Debug)]
pub struct CopyRuns<'a> {
    copy: &'a [bool],
    pos: usize,
}

impl Iterator for CopyRuns<'_> {
    type Item = (u16, u16);

    fn next(&mut self) -> Option<(u16, u16)> {
        let rest = self.copy.get(self.pos..)?;
        let skip = rest.iter().take_while(|&&c| !c).count();
        let start = self.pos.checked_add(skip)?;
        let len = self.copy.get(start..)?.iter().take_while(|&&c| c).count();
        if len == 0 {
            self.pos = self.copy.len();
            return None;
        }
        self.pos = start.saturating_add(len);
        Some((u16::try_from(start).ok()?, u16::try_from(len).ok()?))
    }
}

impl<const V: usize, const M: usize> SlotPool<V, M> {
    /// Switches vGPU `id` in: returns the slots (and low-GM region) whose
    /// entries the kernel must copy into the hardware GTT, and marks them
    /// resident. A parked vGPU is first re-inserted (moves in the plan).
    /// Errors: `OutOfRange` (id not below `V`), `Invalid` (not in use).
    pub fn switch_in(&mut self, id: VgpuId, now: u64) -> Result<SwitchPlan<V, M>, Error> {
        let now_ms = ms_of(now);
        let (mut plan, n) = self.load_range(id)?;
        let x = in_use_mut::<V>(&mut self.vgpus, id)?;
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
            *h = id.raw();
        }
        self.hist_head = self.hist_head.saturating_add(1);
        if self.hist_head >= HISTORY {
            self.hist_head = 0;
        }
        self.hist_len = self.hist_len.saturating_add(1).min(HISTORY);
        Ok(plan)
    }

    /// Whether the hardware GTT holds every slot of `id`'s high-GM range
    /// (the low-GM region is not moved by placements, only by switch-ins):
    /// each is `id`'s and loaded ([`SlotPool::holds`]).
    pub fn resident(&self, id: VgpuId) -> bool {
        let Some(p) = self.placement(id) else {
            return false;
        };
        (p.start..p.start.saturating_add(p.slots)).all(|s| self.res.holds(s, id))
    }

    /// Whether the hardware GTT holds `id`'s entries in `slot`: a guest's
    /// GTT access there goes to the hardware, otherwise to `id`'s private
    /// copy. False while a switch-in that named `id` the slot's owner
    /// ([`SlotPool::owner`]) has not loaded it yet.
    pub fn holds(&self, id: VgpuId, slot: u16) -> bool {
        self.res.holds(slot, id)
    }

    /// Marks what `plan` copies pending: the engine loads it a step at a
    /// time ([`Load`](super::super::engine::Load)), and the hardware does
    /// not hold the vGPU's entries there until each step.
    pub(crate) fn begin_load(&mut self, plan: &SwitchPlan<V, M>) {
        let (start, size) = plan.range();
        for s in start..start.saturating_add(size) {
            if plan.copies_slot(s) {
                self.res.set_pending(s, plan.id());
            }
        }
        if plan.copy_low() {
            self.res.set_low_pending(plan.id());
        }
    }

    /// Slot `rel_slot` of `id`'s high-GM range: the absolute slot, and
    /// whether the hardware GTT holds `id`'s entries there
    /// ([`SlotPool::holds`]), where a guest's GTT access of it goes (else
    /// to `id`'s private copy). `Invalid` if `id` is not placed,
    /// `OutOfRange` past its range.
    pub fn slot_of(&self, id: VgpuId, rel_slot: u16) -> Result<(u16, bool), Error> {
        let pl = self.placement(id).ok_or(Error::Invalid)?;
        if rel_slot >= pl.slots {
            return Err(Error::OutOfRange);
        }
        let slot = pl.start.checked_add(rel_slot).ok_or(Error::OutOfRange)?;
        Ok((slot, self.holds(id, slot)))
    }

    /// A load step wrote `id`'s entries into `slot`: true if it was pending
    /// for `id`, which the hardware now holds there; false if its owner
    /// changed since the switch-in (nothing to load).
    pub(crate) fn slot_loaded(&mut self, id: VgpuId, slot: u16) -> bool {
        self.res.loaded(slot, id)
    }

    /// Whether `slot` is pending for `id`, whose entries are still to be
    /// loaded there.
    pub(crate) fn slot_pending(&self, id: VgpuId, slot: u16) -> bool {
        self.res.pending(slot, id)
    }

    /// The low region's counterpart of [`SlotPool::slot_pending`].
    pub(crate) fn low_pending(&self, id: VgpuId) -> bool {
        self.res.low_pending(id)
    }

    /// The low region's counterpart of [`SlotPool::slot_loaded`].
    pub(crate) fn low_loaded(&mut self, id: VgpuId) -> bool {
        self.res.low_loaded(id)
    }

    /// Reloads the running vGPU `id` after placements moved its range or
    /// gave its slots to another vGPU: the slots to copy, as
    /// [`SlotPool::switch_in`] but without counting a switch. A parked vGPU is
    /// first re-inserted (moves in the plan).
    pub fn reload(&mut self, id: VgpuId) -> Result<SwitchPlan<V, M>, Error> {
        let (plan, n) = self.load_range(id)?;
        let x = in_use_mut::<V>(&mut self.vgpus, id)?;
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
    fn load_range(&mut self, id: VgpuId) -> Result<(SwitchPlan<V, M>, u16), Error> {
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

    /// Forgets all residency (after a GPU reset or resume rewrote the GTT):
    /// every vGPU's next switch-in copies its whole range.
    pub fn forget_residency(&mut self) {
        self.res = Residency::new();
    }
}
