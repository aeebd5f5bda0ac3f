// SPDX-License-Identifier: GPL-2.0

//! A vGPU's GTT load (at its switch-in, or a reload after a placement moved
//! its range) in steps of one slot: the kernel engine releases the slot lock
//! between steps, so that none of its holds grows with the vGPU's size.
//!
//! What makes the steps safe to interleave with whatever else takes the slot
//! lock: the load marks each slot it copies pending in the pool (which
//! already names the vGPU its owner), a guest's GTT access goes to the hardware only where the pool
//! [`holds`](SlotPool::holds) the vGPU's entries (elsewhere to its private
//! copy, which the load copies from), and a step loads only a slot still
//! pending for the vGPU: one that a placement gave to another vGPU or whose
//! range moved meanwhile is skipped, and the next dispatch's reload
//! ([`check_resident`](super::check_resident)) loads where the range is now.

use super::super::{
    slots::{
        SlotPool,
        SwitchPlan,
        ENTRIES_PER_SLOT, //
    },
    VgpuId, //
};
use super::{
    apply_moves,
    Observer,
    Provider, //
};

/// A GTT load in progress: the plan of a switch-in ([`SlotPool::switch_in`])
/// or reload ([`SlotPool::reload`]) and how far it got.
#[must_use = "the load must be performed (Load::step until it returns false) before the vGPU runs"]
#[derive(Clone, Copy, Debug)]
pub struct Load<const V: usize, const S: usize> {
    plan: SwitchPlan<V, S>,
    moved: bool,
    high_loaded: u16,
    low_loaded: bool,
    reload: bool,
    done: bool,
}

impl<const V: usize, const S: usize> Load<V, S> {
    /// The load of `plan`, which `pool` just made (`reload` if it reloads
    /// the running vGPU): what it copies becomes pending in the pool.
    pub(crate) fn begin(plan: SwitchPlan<V, S>, pool: &mut SlotPool<V, S>, reload: bool) -> Self {
        pool.begin_load(&plan);
        Self {
            plan,
            moved: false,
            high_loaded: 0,
            low_loaded: false,
            reload,
            done: false,
        }
    }

    /// The vGPU whose entries it loads.
    pub fn vgpu(&self) -> VgpuId {
        self.plan.id()
    }

    /// Performs one step through the provider, on the pool as it is now
    /// (under the slot lock): the plan's moves, if not done yet, and the
    /// next slot still pending for the vGPU; once no slot is, the shared
    /// low GM. The step that leaves nothing to do tells the observer what
    /// was loaded. Returns whether a step remains; once it returned false,
    /// a step does nothing.
    pub fn step<P, O>(&mut self, pool: &mut SlotPool<V, S>, p: &P, o: &O) -> bool
    where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        if self.done {
            return false;
        }
        let id = self.plan.id();
        if !self.moved {
            self.moved = true;
            apply_moves(p, o, self.plan.moves().as_slice());
        }
        let (start, _) = self.plan.range();
        // What is loaded is no longer pending: the next step finds the
        // next slot, then the low GM, then nothing.
        if let Some(s) = self.pending_slot(pool) {
            p.load_gtt(id, start, s, 1);
            if pool.slot_loaded(id, s) {
                self.high_loaded = self.high_loaded.saturating_add(1);
            }
        } else if self.low_pending(pool) {
            p.load_low_gtt(id);
            self.low_loaded = pool.low_loaded(id);
        }
        let more = self.pending_slot(pool).is_some() || self.low_pending(pool);
        if !more {
            self.done = true;
            let low = if self.low_loaded {
                u64::from(self.plan.low_entries())
            } else {
                0
            };
            let entries = u64::from(self.high_loaded)
                .saturating_mul(u64::from(ENTRIES_PER_SLOT))
                .saturating_add(low);
            o.gtt_loaded(id, self.high_loaded, entries, self.reload);
        }
        more
    }

    /// Performs every step at once (one hold of the slot lock).
    pub fn finish<P, O>(mut self, pool: &mut SlotPool<V, S>, p: &P, o: &O)
    where
        P: Provider + ?Sized,
        O: Observer + ?Sized,
    {
        while self.step(pool, p, o) {}
    }

    /// The first slot that the plan copies and that is still pending for
    /// the vGPU.
    fn pending_slot(&self, pool: &SlotPool<V, S>) -> Option<u16> {
        let (start, size) = self.plan.range();
        let id = self.plan.id();
        (start..start.saturating_add(size))
            .find(|&s| self.plan.copies_slot(s) && pool.slot_pending(id, s))
    }

    /// Whether the plan copies the shared low GM and it is still pending
    /// for the vGPU.
    fn low_pending(&self, pool: &SlotPool<V, S>) -> bool {
        self.plan.copy_low() && pool.low_pending(self.plan.id())
    }
}
