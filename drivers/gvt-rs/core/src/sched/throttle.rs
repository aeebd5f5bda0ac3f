// SPDX-License-Identifier: GPL-2.0

//! Kang & Yu's usage throttle, with a guard against the zero-usage stall.
//!
//! Every vGPU accumulates weighted usage `U_i += gpu_ns * VSCALE / w_i`
//! (Kang & Yu's Eq. 1 without the thread-share factor, which is constant
//! when one vGPU owns the GPU at a time; dividing by the weight is the
//! paper's own suggestion for priorities). At every pick, a backlogged vGPU
//! with `U_i > factor * min_j U_j` (min over *backlogged* vGPUs, factor 2 by
//! default) waits: it is skipped for that pick ("waits a round").
//!
//! The paper's rule stalls when a new VM joins with `U = 0`: `2 * 0` is below
//! everybody's usage, so every other VM waits until the newcomer has used
//! half of what they used over their whole life. Guard: a vGPU that becomes
//! backlogged (new or waking) has its usage raised to the current minimum of
//! the backlogged vGPUs, so it joins level with the least-served one and
//! cannot claim the past. The least-served backlogged vGPU is always
//! eligible (`factor >= 1`), so the throttle never idles the GPU.

//!
//! The minimum over the backlogged vGPUs is kept in a tournament tree over
//! the ids (a min-segment tree), so that a charge, a wake-up and the limit
//! are O(log N), O(log N) and O(1) whether the throttle is on or off.

use super::fixed::mul_div_sat;
use super::sfq::VSCALE;
use super::{
    VgpuArray,
    VgpuId,
    VgpuSet,
    MAX_VGPUS, //
};

/// Throttle state for the vGPUs of a scheduler that admits ids below `N`.
///
/// # Invariants
///
/// With `L` = [`Throttle::LEAVES`]: `min[j]` for `1 <= j < L` is the
/// smaller of its two children, child `c` being `min[c]` for `c < L` and
/// leaf `c - L` otherwise; leaf `i` is `usage[i]` if `i` is in `member`,
/// `u64::MAX` otherwise. So node 1 is the smallest usage of the members.
#[derive(Clone, Copy)]
pub(crate) struct Throttle<const N: usize> {
    usage: VgpuArray<u64>,
    /// The backlogged vGPUs, as the scheduler's set (`Scheduler::set_backlogged`).
    member: VgpuSet,
    /// The inner nodes, by position in the tree (`min[0]` unused).
    min: [u64; MAX_VGPUS],
}

impl<const N: usize> Throttle<N> {
    /// Leaves of the tree: one per id the scheduler admits, so that its
    /// depth is that of its `N` and not of [`MAX_VGPUS`].
    const LEAVES: usize = if N < MAX_VGPUS { N } else { MAX_VGPUS };

    pub(crate) const fn new() -> Self {
        Self {
            usage: VgpuArray::filled(0),
            member: VgpuSet::EMPTY,
            min: [u64::MAX; MAX_VGPUS],
        }
    }

    /// Weighted usage of `id`.
    pub(crate) fn usage(&self, id: VgpuId) -> u64 {
        self.usage[id]
    }

    /// Value of tree node `j` (`j >= L`: the leaf of id `j - L`).
    fn node(&self, j: usize) -> u64 {
        match j.checked_sub(Self::LEAVES) {
            Some(i) => {
                // `j < 2L` (children of inner nodes): `i` is an id.
                let id = VgpuId::wrapping(i as u32);
                if self.member.contains(id) {
                    self.usage[id]
                } else {
                    u64::MAX
                }
            }
            None => self.min.get(j).copied().unwrap_or(u64::MAX),
        }
    }

    /// Leaf `id` changed: updates its ancestors. O(log N).
    fn fix(&mut self, id: VgpuId) {
        let mut j = id.index().saturating_add(Self::LEAVES) / 2;
        while j >= 1 {
            let l = j.saturating_mul(2);
            let m = self.node(l).min(self.node(l.saturating_add(1)));
            // Inner positions `1 <= j < L`.
            if let Some(x) = self.min.get_mut(j) {
                *x = m;
            }
            j /= 2;
        }
    }

    /// Sets the usage of `id`.
    pub(crate) fn set_usage(&mut self, id: VgpuId, u: u64) {
        self.usage[id] = u;
        self.fix(id);
    }

    /// `id` joins (`on`) or leaves the backlogged set.
    pub(crate) fn set_member(&mut self, id: VgpuId, on: bool) {
        if self.member.contains(id) != on {
            self.member.set(id, on);
            self.fix(id);
        }
    }

    /// Smallest usage among the backlogged vGPUs. O(1).
    pub(crate) fn min_backlogged(&self) -> Option<u64> {
        if self.member.is_empty() {
            None
        } else {
            Some(self.node(1))
        }
    }

    /// Checks the tree against the usages and `set`, the backlogged vGPUs.
    #[cfg(test)]
    pub(crate) fn check(&self, set: &VgpuSet) {
        assert_eq!(&self.member, set);
        for j in 1..Self::LEAVES {
            let l = 2 * j;
            assert_eq!(self.node(j), self.node(l).min(self.node(l + 1)), "node {j}");
        }
        assert_eq!(self.min_backlogged(), self.min_of(set));
    }

    /// Smallest usage among `set`, by scan (the reference of the tests).
    #[cfg(test)]
    pub(crate) fn min_of(&self, set: &VgpuSet) -> Option<u64> {
        set.iter().map(|i| self.usage(i)).min()
    }

    /// Charges measured GPU time.
    pub(crate) fn charge(&mut self, id: VgpuId, gpu_ns: u64, w: u32) {
        let u = self
            .usage(id)
            .saturating_add(mul_div_sat(gpu_ns, VSCALE, u64::from(w.max(1))));
        self.set_usage(id, u);
    }

    /// `id` becomes backlogged while the others in the set are: the
    /// zero-usage guard. `id` joins the set.
    pub(crate) fn activate(&mut self, id: VgpuId) {
        // The minimum of the others: `id` is not in the set yet.
        self.set_member(id, false);
        if let Some(m) = self.min_backlogged() {
            self.usage[id] = self.usage[id].max(m);
        }
        // One pass up the tree for both changes.
        self.member.set(id, true);
        self.fix(id);
    }

    /// Usage above which a vGPU waits, for `factor_pct` (200 = 2x). O(1).
    pub(crate) fn limit(&self, factor_pct: u32) -> u64 {
        match self.min_backlogged() {
            Some(m) => mul_div_sat(m, u64::from(factor_pct), 100),
            None => u64::MAX,
        }
    }
}

/// The paper's test as printed (Algorithm 1, lines 24-27): VM `n` waits when
/// `2 * GPU_usage_MinVM < Prev_Task_runtime`. Kept for the regression test
/// that shows its zero-usage stall.
#[cfg(test)]
pub(crate) fn paper_rule_waits(min_usage: u64, prev_runtime: u64) -> bool {
    min_usage.saturating_mul(2) < prev_runtime
}
