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

/// Owner value meaning "no vGPU's entries are resident".
pub(crate) const NO_OWNER: u8 = u8::MAX;

/// Resident owner of every high-GM slot and of the shared low-GM region.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Residency<const M: usize> {
    owner: [u8; M],
    low_owner: u8,
}

impl<const M: usize> Residency<M> {
    pub(crate) const fn new() -> Self {
        Residency {
            owner: [NO_OWNER; M],
            low_owner: NO_OWNER,
        }
    }

    /// Marks `[start, start + size)` resident for `id`; fills `copy` with the
    /// slots that were not and returns how many there were.
    pub(crate) fn switch_in(&mut self, id: u8, start: u16, size: u16, copy: &mut [bool; M]) -> u16 {
        let end = usize::from(start.saturating_add(size));
        let mut n: u16 = 0;
        let owners = self
            .owner
            .get_mut(usize::from(start)..end)
            .unwrap_or(&mut []);
        let flags = copy.get_mut(usize::from(start)..end).unwrap_or(&mut []);
        for (o, f) in owners.iter_mut().zip(flags.iter_mut()) {
            if *o != id {
                *o = id;
                *f = true;
                n = n.saturating_add(1);
            }
        }
        n
    }

    /// Makes `id` the owner of the low-GM region; true if it was not.
    pub(crate) fn take_low(&mut self, id: u8) -> bool {
        let changed = self.low_owner != id;
        self.low_owner = id;
        changed
    }

    /// Forgets `id`'s residency in `[start, start + size)` (after a move: the
    /// hardware entries there are stale for everybody).
    pub(crate) fn forget_range(&mut self, id: u8, start: u16, size: u16) {
        let end = usize::from(start.saturating_add(size));
        for o in self
            .owner
            .get_mut(usize::from(start)..end)
            .unwrap_or(&mut [])
        {
            if *o == id {
                *o = NO_OWNER;
            }
        }
    }

    /// Forgets every residency of `id` (destroy).
    pub(crate) fn forget(&mut self, id: u8) {
        for o in self.owner.iter_mut() {
            if *o == id {
                *o = NO_OWNER;
            }
        }
        if self.low_owner == id {
            self.low_owner = NO_OWNER;
        }
    }

    pub(crate) fn owner(&self, slot: u16) -> Option<u8> {
        match self.owner.get(usize::from(slot)) {
            Some(&o) if o != NO_OWNER => Some(o),
            _ => None,
        }
    }

    pub(crate) fn low_owner(&self) -> Option<u8> {
        if self.low_owner == NO_OWNER {
            None
        } else {
            Some(self.low_owner)
        }
    }
}

/// What the kernel must do when it switches a vGPU in.
///
/// Apply [`SwitchPlan::moves`] first (relocate those vGPUs' private GTTs),
/// then write the vGPU's private entries for every slot in
/// [`SwitchPlan::copy_runs`] into the hardware GTT, then the low-GM region if
/// [`SwitchPlan::copy_low`], then invalidate the GGTT once.
#[derive(Clone, Copy, Debug)]
pub struct SwitchPlan<const V: usize, const M: usize> {
    id: u8,
    start: u16,
    size: u16,
    copy: [bool; M],
    high_slots: u16,
    low: bool,
    low_entries: u32,
    moves: Moves<V>,
}

impl<const V: usize, const M: usize> SwitchPlan<V, M> {
    pub(crate) const fn new(id: u8, start: u16, size: u16) -> Self {
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
    pub const fn id(&self) -> u8 {
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

    /// Forgets all residency (after a GPU reset or resume rewrote the GTT):
    /// every vGPU's next switch-in copies its whole range.
    pub fn forget_residency(&mut self) {
        self.res = Residency::new();
    }
}
