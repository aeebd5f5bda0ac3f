// SPDX-License-Identifier: GPL-2.0

//! `sfq`: weighted start-time fair queueing charged with measured GPU time (FairGV).
//!
//! Each vGPU has a start tag `S` in virtual time. The backlogged vGPU with the
//! smallest `S` runs (ties: lower id, as in FairGV's Fig. 4) for a
//! non-preemptive slice; at the end of its turn it is charged the GPU time its
//! workloads really used, overruns included: `F = S + L / w`, `S <- F`.
//! Virtual time `V` is the smallest start tag of the active vGPUs (the running
//! one included, with its tag as of its last charge) and never goes back.
//!
//! Wake-up rule (a vGPU going from idle to backlogged), selectable:
//! * [`WakeRule::MaxVF`] (default): `S <- max(V, F)`, standard SFQ; a vGPU
//!   that went idle right after an overrun keeps its debt;
//! * [`WakeRule::PaperV`]: `S <- V` as FairGV prints it, which erases that debt.
//!
//! Virtual time units: `L * VSCALE / w` with `VSCALE` = the largest weight, so
//! the per-charge rounding error is below 1/10000 ns at weight 1. Tags wrap
//! around `u64` and are compared with wrapping differences; a stale tag more
//! than 2^62 units away from `V` is treated as no debt.

use super::fixed::{mul_div_sat, vdiff};
use super::heap::IdHeap;

/// Virtual-time scale: a weight-`w` vGPU advances `VSCALE / w` units per ns.
pub const VSCALE: u64 = 10_000;

/// Rule for the start tag of a vGPU that becomes backlogged again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeRule {
    /// `S <- max(V, F)`: debt from an overrun survives a short sleep.
    MaxVF,
    /// `S <- V` (FairGV as printed): a sleep erases debt.
    PaperV,
}

/// SFQ state for up to `N` vGPUs.
pub(crate) struct Sfq<const N: usize> {
    heap: IdHeap<N>,
    tag: [u64; N],
    pub(crate) vtime: u64,
}

impl<const N: usize> Sfq<N> {
    pub(crate) const fn new() -> Self {
        Self {
            heap: IdHeap::new(),
            tag: [0; N],
            vtime: 0,
        }
    }

    /// Current virtual time `V`.
    pub(crate) fn vtime(&self) -> u64 {
        match self.heap.min() {
            Some(m) => {
                let k = self.heap.key(m);
                if vdiff(k, self.vtime) > 0 {
                    k
                } else {
                    self.vtime
                }
            }
            None => self.vtime,
        }
    }

    /// Start tag of `id`.
    pub(crate) fn tag(&self, id: usize) -> u64 {
        self.tag.get(id).copied().unwrap_or(0)
    }

    /// A vGPU becomes active (backlogged, or started).
    pub(crate) fn activate(&mut self, id: usize, rule: WakeRule) {
        if self.heap.contains(id) {
            return;
        }
        let v = self.vtime();
        self.vtime = v;
        let f = self.tag(id);
        let d = vdiff(f, v);
        let s = match rule {
            WakeRule::MaxVF if d > 0 && d < (1 << 62) => f,
            _ => v,
        };
        if let Some(t) = self.tag.get_mut(id) {
            *t = s;
        }
        self.heap.upsert(id, s);
    }

    /// A vGPU that is not running stops being active.
    pub(crate) fn deactivate(&mut self, id: usize) {
        if self.heap.contains(id) {
            self.vtime = self.vtime();
            self.heap.remove(id);
        }
    }

    /// Charges `gpu_ns` to `id` at weight `w`: `S <- S + L * VSCALE / w`.
    pub(crate) fn charge(&mut self, id: usize, gpu_ns: u64, w: u32) {
        let delta = mul_div_sat(gpu_ns, VSCALE, u64::from(w.max(1)));
        let Some(t) = self.tag.get_mut(id) else {
            return;
        };
        *t = t.wrapping_add(delta);
        let s = *t;
        if self.heap.contains(id) {
            self.heap.upsert(id, s);
        }
    }

    /// The active vGPU with the smallest start tag among those `eligible`.
    pub(crate) fn pick(&mut self, eligible: Option<&dyn Fn(usize) -> bool>) -> Option<usize> {
        self.vtime = self.vtime();
        let top = self.heap.min()?;
        let Some(ok) = eligible else {
            return Some(top);
        };
        if ok(top) {
            return Some(top);
        }
        // Throttle active: linear fallback over the active set.
        let mut best: Option<(u64, usize)> = None;
        for id in self.heap.ids() {
            if !ok(id) {
                continue;
            }
            let k = self.heap.key(id);
            let better = match best {
                None => true,
                Some((bk, bi)) => vdiff(k, bk) < 0 || (k == bk && id < bi),
            };
            if better {
                best = Some((k, id));
            }
        }
        best.map(|(_, i)| i)
    }

    /// Forgets every vGPU (policy change).
    pub(crate) fn reset(&mut self) {
        self.heap.clear();
        self.tag = [self.vtime; N];
    }
}
