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

use super::bitmap::Bitmap;
use super::fixed::mul_div_sat;
use super::sfq::VSCALE;

/// Throttle state for up to `N` vGPUs.
#[derive(Clone, Copy)]
pub(crate) struct Throttle<const N: usize> {
    pub(crate) usage: [u64; N],
}

impl<const N: usize> Throttle<N> {
    pub(crate) const fn new() -> Self {
        Self { usage: [0; N] }
    }

    /// Weighted usage of `id`.
    pub(crate) fn usage(&self, id: usize) -> u64 {
        self.usage.get(id).copied().unwrap_or(0)
    }

    /// Smallest usage among `set`.
    pub(crate) fn min_of(&self, set: &Bitmap) -> Option<u64> {
        set.iter().map(|i| self.usage(i)).min()
    }

    /// Charges measured GPU time.
    pub(crate) fn charge(&mut self, id: usize, gpu_ns: u64, w: u32) {
        // The scheduler charges only ids it validated (below N).
        if let Some(u) = self.usage.get_mut(id) {
            *u = u.saturating_add(mul_div_sat(gpu_ns, VSCALE, u64::from(w.max(1))));
        }
    }

    /// `id` becomes backlogged while `others` (not containing `id`) are: the
    /// zero-usage guard.
    pub(crate) fn activate(&mut self, id: usize, others: &Bitmap) {
        let mut o = *others;
        o.set(id, false);
        if let Some(m) = self.min_of(&o) {
            // The scheduler activates only ids it validated (below N).
            if let Some(u) = self.usage.get_mut(id) {
                *u = (*u).max(m);
            }
        }
    }

    /// Usage above which a vGPU waits, for `factor_pct` (200 = 2x).
    pub(crate) fn limit(&self, backlogged: &Bitmap, factor_pct: u32) -> u64 {
        match self.min_of(backlogged) {
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
