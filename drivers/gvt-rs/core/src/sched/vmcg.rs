// SPDX-License-Identifier: GPL-2.0

//! `vmcg`: V-Channels with credits (Eq. 2) and CPU-time-scaled slices (VMCG, Tan et al.).
//!
//! Rounds ("polling periods"): at the start of a round every backlogged vGPU
//! gets a slice scaled from its CPU demand, the largest getting the ceiling
//! (16 ms), and the vGPUs are served in descending slice order (ties: lower
//! id). A turn lasts until the slice is used, the queue is empty, or the
//! credits are gone. Each credit buys a batch of `batch` (4) workloads.
//!
//! Credits, our normalisation of the paper's Eq. 2 (see scheduling.rst):
//!
//! ```text
//! b_i = min(BW_i / BW_link, 1)      m_i = min(GM_i / GM_total, 1)     (dimensionless)
//! n_i = w_i * (e^(b_i * m_i) + NUM_i)
//! CREDIT_i = max(1, round(CREDIT * n_i / sum_j n_j))   over started vGPUs
//! ```
//!
//! so shares sum to 1 (up to rounding) and the exponent stays in `[0, 1]`.
//! Refill: a vGPU whose credits are 0 is refilled at the start of the next
//! round (interval end), or at once if no other backlogged vGPU has credits
//! (early exhaustion with spare GPU), which keeps the policy work-conserving.
//!
//! Slices: `d_i = cpu_rate_i * w_i` (CPU time per wall time since the vGPU's
//! last round, times weight); `t_i = max(min_slice, ceiling * d_i / d_max)`;
//! if every `d_i` is 0 (no CPU information) `t_i = ceiling * w_i / w_max`.
//! This fixes the paper's division by zero (`d_max = 0`), the starvation of
//! a zero-CPU-time VM (`t = 0`), and its broken sort (a correct descending
//! sort with an explicit tie-break replaces the printed loop).

use super::fixed::{
    exp_q16,
    mul_div_round,
    mul_div_sat,
    PPM,
    Q16_ONE, //
};
use super::vchannel::{
    Life,
    Vgpu, //
};
use super::{
    VgpuArray,
    VgpuId,
    VgpuSet,
    MAX_VGPUS, //
};

/// Cap on the pending count entering Eq. 2 (keeps the sums in 64 bits).
const NUM_CAP: u64 = 1 << 20;

/// Tunables the policy reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VmcgCfg {
    pub(crate) ceiling_ns: u64,
    pub(crate) min_slice_ns: u64,
    pub(crate) pool: u32,
    pub(crate) batch: u32,
    pub(crate) link_mbps: u64,
    pub(crate) gm_total_mb: u64,
}

/// VMCG state for the vGPUs of a GPU.
#[derive(Clone, Copy)]
pub(crate) struct Vmcg {
    /// The round's order: its first `len` entries.
    order: [VgpuId; MAX_VGPUS],
    len: usize,
    cursor: usize,
    pub(crate) slice_ns: VgpuArray<u64>,
    pub(crate) credits: VgpuArray<u32>,
    cpu_mark: VgpuArray<u64>,
    bytes_mark: VgpuArray<u64>,
    mark_time: VgpuArray<u64>,
    pub(crate) cpu_rate_ppm: VgpuArray<u64>,
    pub(crate) bw_mbps: VgpuArray<u64>,
    exp_term: VgpuArray<u64>,
    term: VgpuArray<u64>,
    sum: u64,
    has_credit: VgpuSet,
    pub(crate) rounds: u64,
    batch_left: u32,
    pub(crate) denied: bool,
}

impl Vmcg {
    pub(crate) const fn new() -> Self {
        Self {
            order: [VgpuId::FIRST; MAX_VGPUS],
            len: 0,
            cursor: 0,
            slice_ns: VgpuArray::filled(0),
            credits: VgpuArray::filled(0),
            cpu_mark: VgpuArray::filled(0),
            bytes_mark: VgpuArray::filled(0),
            mark_time: VgpuArray::filled(0),
            cpu_rate_ppm: VgpuArray::filled(0),
            bw_mbps: VgpuArray::filled(0),
            exp_term: VgpuArray::filled(Q16_ONE),
            term: VgpuArray::filled(0),
            sum: 0,
            has_credit: VgpuSet::EMPTY,
            rounds: 0,
            batch_left: 0,
            denied: false,
        }
    }

    fn term_of(v: &Vgpu, e: u64) -> u64 {
        if v.life != Life::Started {
            return 0;
        }
        let num = u64::from(v.pending).min(NUM_CAP);
        u64::from(v.weight).saturating_mul(e.saturating_add(num.saturating_mul(Q16_ONE)))
    }

    /// Recomputes `n_i` of `id` after its pending count, weight or
    /// lifecycle changed. O(1).
    pub(crate) fn refresh(&mut self, id: VgpuId, v: &Vgpu) {
        let new = Self::term_of(v, self.exp_term[id]);
        let old = self.term[id];
        self.sum = self.sum.wrapping_sub(old).wrapping_add(new);
        self.term[id] = new;
    }

    /// Eq. 2 (normalised) for `id`.
    pub(crate) fn credit_for(&self, id: VgpuId, pool: u32) -> u32 {
        let t = self.term[id];
        let c = mul_div_round(u64::from(pool), t, self.sum).unwrap_or(0);
        c.clamp(1, u64::from(u32::MAX)) as u32
    }

    fn set_credits(&mut self, id: VgpuId, c: u32) {
        self.credits[id] = c;
        self.has_credit.set(id, c > 0);
    }

    fn refill(&mut self, id: VgpuId, pool: u32) {
        let c = self.credit_for(id, pool);
        self.set_credits(id, c);
    }

    /// Whether no backlogged vGPU other than `id` holds credits.
    fn spare(&self, id: VgpuId, backlogged: &VgpuSet) -> bool {
        !self.has_credit.and(backlogged).any_except(id)
    }

    /// Samples CPU time and bytes of `id` since its last mark.
    fn measure(&mut self, id: VgpuId, v: &Vgpu, now: u64, cfg: &VmcgCfg) {
        let dt = now.saturating_sub(self.mark_time[id]);
        if dt > 0 {
            let dcpu = v.cpu_ns.saturating_sub(self.cpu_mark[id]);
            self.cpu_rate_ppm[id] = mul_div_sat(dcpu, PPM, dt);
            let bw = if v.bw_override_mbps > 0 {
                u64::from(v.bw_override_mbps)
            } else {
                // bytes per ns * 1000 = MB/s.
                mul_div_sat(v.bytes.saturating_sub(self.bytes_mark[id]), 1000, dt)
            };
            self.bw_mbps[id] = bw;
            self.cpu_mark[id] = v.cpu_ns;
            self.bytes_mark[id] = v.bytes;
            self.mark_time[id] = now;
        } else if v.bw_override_mbps > 0 {
            self.bw_mbps[id] = u64::from(v.bw_override_mbps);
        }
        let b = mul_div_sat(self.bw_mbps[id], Q16_ONE, cfg.link_mbps).min(Q16_ONE);
        let m = mul_div_sat(u64::from(v.gm_mb), Q16_ONE, cfg.gm_total_mb).min(Q16_ONE);
        self.exp_term[id] = exp_q16(b.saturating_mul(m) >> 16);
        self.refresh(id, v);
    }

    /// A vGPU starts: its measurement interval begins now.
    pub(crate) fn start(&mut self, id: VgpuId, v: &Vgpu, now: u64) {
        self.cpu_mark[id] = v.cpu_ns;
        self.bytes_mark[id] = v.bytes;
        self.mark_time[id] = now;
        self.exp_term[id] = Q16_ONE;
        self.set_credits(id, 0);
        self.refresh(id, v);
    }

    /// A vGPU stops: it leaves the denominator of Eq. 2.
    pub(crate) fn stop(&mut self, id: VgpuId, v: &Vgpu) {
        self.set_credits(id, 0);
        self.refresh(id, v);
    }

    /// Computes the slices of the backlogged vGPUs (Algorithm 1, steps 1-13,
    /// fixed) and refills exhausted credits (step 14).
    pub(crate) fn new_round(
        &mut self,
        now: u64,
        v: &VgpuArray<Vgpu>,
        backlogged: &VgpuSet,
        cfg: &VmcgCfg,
    ) {
        let mut dmax: u64 = 0;
        let mut len = 0usize;
        for (slot, id) in self.order.iter_mut().zip(backlogged.iter()) {
            *slot = id;
            len = len.saturating_add(1);
        }
        for id in backlogged.iter() {
            let g = &v[id];
            self.measure(id, g, now, cfg);
            let d = self.cpu_rate_ppm[id].saturating_mul(u64::from(g.weight));
            dmax = dmax.max(d);
        }
        let wmax = backlogged
            .iter()
            .map(|id| u64::from(v[id].weight))
            .max()
            .unwrap_or(1);
        for id in backlogged.iter() {
            let w = u64::from(v[id].weight);
            let d = self.cpu_rate_ppm[id].saturating_mul(w);
            let t = if dmax == 0 {
                // No CPU information at all: slices from the weights alone.
                mul_div_sat(cfg.ceiling_ns, w, wmax).max(cfg.min_slice_ns)
            } else {
                mul_div_sat(cfg.ceiling_ns, d, dmax).max(cfg.min_slice_ns)
            };
            self.slice_ns[id] = t.min(cfg.ceiling_ns);
        }
        let slices = &self.slice_ns;
        let round = self.order.get_mut(..len).unwrap_or_default();
        round.sort_unstable_by(|&a, &b| slices[b].cmp(&slices[a]).then(a.cmp(&b)));
        self.len = len;
        self.cursor = 0;
        self.rounds = self.rounds.wrapping_add(1);
        for id in self.round() {
            if self.credits[id] == 0 {
                self.refill(id, cfg.pool);
            }
        }
    }

    /// The round's order (its first `len` entries: one per vGPU
    /// backlogged when it began, at most `MAX_VGPUS`).
    fn round(&self) -> impl Iterator<Item = VgpuId> {
        let order = self.order;
        order.into_iter().take(self.len)
    }

    /// The vGPU at the round's cursor, if the round has one left.
    fn at_cursor(&self) -> Option<VgpuId> {
        self.order
            .get(self.cursor)
            .copied()
            .filter(|_| self.cursor < self.len)
    }

    /// Next vGPU in round order with work and credits (starting a new round
    /// at most once), or `None` if nothing is backlogged.
    pub(crate) fn pick(
        &mut self,
        now: u64,
        v: &VgpuArray<Vgpu>,
        backlogged: &VgpuSet,
        cfg: &VmcgCfg,
        eligible: &dyn Fn(VgpuId) -> bool,
    ) -> Option<VgpuId> {
        let mut fresh = false;
        loop {
            while let Some(id) = self.at_cursor() {
                self.cursor = self.cursor.saturating_add(1);
                if !backlogged.contains(id) || !eligible(id) {
                    continue;
                }
                if self.credits[id] == 0 {
                    if !self.spare(id, backlogged) {
                        continue;
                    }
                    self.refill(id, cfg.pool);
                }
                return Some(id);
            }
            if fresh || backlogged.is_empty() {
                return None;
            }
            self.new_round(now, v, backlogged, cfg);
            fresh = true;
        }
    }

    /// A turn of `id` begins.
    pub(crate) fn begin_turn(&mut self) {
        self.batch_left = 0;
        self.denied = false;
    }

    /// Whether `id` may dispatch one more workload in its turn.
    pub(crate) fn can_dispatch(&mut self, id: VgpuId, backlogged: &VgpuSet) -> bool {
        let ok = self.batch_left > 0 || self.credits[id] > 0 || self.spare(id, backlogged);
        if !ok {
            self.denied = true;
        }
        ok
    }

    /// `id` dispatched a workload: a new batch costs one credit.
    pub(crate) fn dispatched(&mut self, id: VgpuId, cfg: &VmcgCfg) {
        if self.batch_left == 0 {
            if self.credits[id] == 0 {
                // Early exhaustion with spare GPU (or a racing dispatch).
                self.refill(id, cfg.pool);
            }
            let c = self.credits[id].saturating_sub(1);
            self.set_credits(id, c);
            self.batch_left = cfg.batch;
        }
        self.batch_left = self.batch_left.saturating_sub(1);
    }

    /// Forgets the round (policy or tunable change); credits restart empty.
    pub(crate) fn reset(&mut self, v: &VgpuArray<Vgpu>, now: u64) {
        *self = const { Self::new() };
        for (id, g) in v.iter() {
            if g.life == Life::Started {
                self.start(id, g, now);
            }
        }
    }
}
