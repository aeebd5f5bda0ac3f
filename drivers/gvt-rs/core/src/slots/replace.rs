// SPDX-License-Identifier: GPL-2.0

//! Sampling and periodic re-placement of a [`SlotPool`]: utilization
//! samples, the periodic tick, and the deferred re-placement the kernel
//! plans on a copy of the pool outside its lock. Separate from placement
//! (`pool.rs`) because only the re-placing allocators (`dymgpu-util`,
//! `cost`) and the deferred snapshot/plan/apply protocol use it.

use super::alloc_dymutil::algorithm2;
use super::config::AllocatorKind;
use super::monitor::UTIL_FULL_PPM;
use super::moves::Moves;
use super::plan::Items;
use super::pool::{
    in_use_mut,
    ms_of,
    SlotPool,
    State,
    HISTORY, //
};
use super::{
    alloc_cost,
    Error,
    VgpuId, //
};

/// A re-placement computed by [`SlotPool::plan_replace`], typically on a
/// clone of the pool outside the lock, to be applied with
/// [`SlotPool::apply_replace`].
#[derive(Clone, Copy, Debug)]
pub struct ReplacePlan<const V: usize> {
    generation: u64,
    items: Option<Items<V>>,
}

impl<const V: usize, const M: usize> SlotPool<V, M> {
    /// Records a utilization sample of vGPU `id`: `busy_ppm` is the fraction
    /// of the last sample period it kept the GPU busy, in parts per million
    /// (0..=1 000 000, `OutOfRange` above). A non-zero sample also counts as
    /// activity for the idle rule.
    pub fn sample(&mut self, id: VgpuId, busy_ppm: u32, now: u64) -> Result<(), Error> {
        let now_ms = ms_of(now);
        let x = in_use_mut::<V>(&mut self.vgpus, id)?;
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
            for id in VgpuId::ALL.take(V) {
                let v = self.vgpus[id];
                if v.state == State::Active && now_ms.saturating_sub(v.mon.last_active_ms()) >= thr
                {
                    self.park(id, &mut moves);
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
            for v in self.vgpus.values_mut().filter(|v| v.state != State::Free) {
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
        for (d, s) in self.vgpus.values_mut().zip(vgpus.values()) {
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
