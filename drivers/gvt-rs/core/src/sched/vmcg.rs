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

use super::bitmap::Bitmap;
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

/// VMCG state for up to `N` vGPUs.
#[derive(Clone, Copy)]
pub(crate) struct Vmcg<const N: usize> {
    order: [u16; N],
    len: usize,
    cursor: usize,
    pub(crate) slice_ns: [u64; N],
    pub(crate) credits: [u32; N],
    cpu_mark: [u64; N],
    bytes_mark: [u64; N],
    mark_time: [u64; N],
    pub(crate) cpu_rate_ppm: [u64; N],
    pub(crate) bw_mbps: [u64; N],
    exp_term: [u64; N],
    term: [u64; N],
    sum: u64,
    has_credit: Bitmap,
    pub(crate) rounds: u64,
    batch_left: u32,
    pub(crate) denied: bool,
}

fn get<T: Copy + Default>(a: &[T], i: usize) -> T {
    a.get(i).copied().unwrap_or_default()
}

fn put<T>(a: &mut [T], i: usize, v: T) {
    // Indices are validated ids or counts of them: below N.
    if let Some(x) = a.get_mut(i) {
        *x = v;
    }
}

impl<const N: usize> Vmcg<N> {
    pub(crate) const fn new() -> Self {
        Self {
            order: [0; N],
            len: 0,
            cursor: 0,
            slice_ns: [0; N],
            credits: [0; N],
            cpu_mark: [0; N],
            bytes_mark: [0; N],
            mark_time: [0; N],
            cpu_rate_ppm: [0; N],
            bw_mbps: [0; N],
            exp_term: [Q16_ONE; N],
            term: [0; N],
            sum: 0,
            has_credit: Bitmap::EMPTY,
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
    pub(crate) fn refresh(&mut self, id: usize, v: &Vgpu) {
        let new = Self::term_of(v, get(&self.exp_term, id));
        let old = get(&self.term, id);
        self.sum = self.sum.wrapping_sub(old).wrapping_add(new);
        put(&mut self.term, id, new);
    }

    /// Eq. 2 (normalised) for `id`.
    pub(crate) fn credit_for(&self, id: usize, pool: u32) -> u32 {
        let t = get(&self.term, id);
        let c = mul_div_round(u64::from(pool), t, self.sum).unwrap_or(0);
        c.clamp(1, u64::from(u32::MAX)) as u32
    }

    fn set_credits(&mut self, id: usize, c: u32) {
        put(&mut self.credits, id, c);
        self.has_credit.set(id, c > 0);
    }

    fn refill(&mut self, id: usize, pool: u32) {
        let c = self.credit_for(id, pool);
        self.set_credits(id, c);
    }

    /// Whether no backlogged vGPU other than `id` holds credits.
    fn spare(&self, id: usize, backlogged: &Bitmap) -> bool {
        !self.has_credit.and(backlogged).any_except(id)
    }

    /// Samples CPU time and bytes of `id` since its last mark.
    fn measure(&mut self, id: usize, v: &Vgpu, now: u64, cfg: &VmcgCfg) {
        let dt = now.saturating_sub(get(&self.mark_time, id));
        if dt > 0 {
            let dcpu = v.cpu_ns.saturating_sub(get(&self.cpu_mark, id));
            put(&mut self.cpu_rate_ppm, id, mul_div_sat(dcpu, PPM, dt));
            let bw = if v.bw_override_mbps > 0 {
                u64::from(v.bw_override_mbps)
            } else {
                // bytes per ns * 1000 = MB/s.
                mul_div_sat(v.bytes.saturating_sub(get(&self.bytes_mark, id)), 1000, dt)
            };
            put(&mut self.bw_mbps, id, bw);
            put(&mut self.cpu_mark, id, v.cpu_ns);
            put(&mut self.bytes_mark, id, v.bytes);
            put(&mut self.mark_time, id, now);
        } else if v.bw_override_mbps > 0 {
            put(&mut self.bw_mbps, id, u64::from(v.bw_override_mbps));
        }
        let b = mul_div_sat(get(&self.bw_mbps, id), Q16_ONE, cfg.link_mbps).min(Q16_ONE);
        let m = mul_div_sat(u64::from(v.gm_mb), Q16_ONE, cfg.gm_total_mb).min(Q16_ONE);
        put(&mut self.exp_term, id, exp_q16(b.saturating_mul(m) >> 16));
        self.refresh(id, v);
    }

    /// A vGPU starts: its measurement interval begins now.
    pub(crate) fn start(&mut self, id: usize, v: &Vgpu, now: u64) {
        put(&mut self.cpu_mark, id, v.cpu_ns);
        put(&mut self.bytes_mark, id, v.bytes);
        put(&mut self.mark_time, id, now);
        put(&mut self.exp_term, id, Q16_ONE);
        self.set_credits(id, 0);
        self.refresh(id, v);
    }

    /// A vGPU stops: it leaves the denominator of Eq. 2.
    pub(crate) fn stop(&mut self, id: usize, v: &Vgpu) {
        self.set_credits(id, 0);
        self.refresh(id, v);
    }

    /// Computes the slices of the backlogged vGPUs (Algorithm 1, steps 1-13,
    /// fixed) and refills exhausted credits (step 14).
    pub(crate) fn new_round(
        &mut self,
        now: u64,
        v: &[Vgpu; N],
        backlogged: &Bitmap,
        cfg: &VmcgCfg,
    ) {
        let mut dmax: u64 = 0;
        let mut len = 0usize;
        for id in backlogged.iter() {
            let Some(g) = v.get(id) else { continue };
            self.measure(id, g, now, cfg);
            let d = get(&self.cpu_rate_ppm, id).saturating_mul(u64::from(g.weight));
            dmax = dmax.max(d);
            put(&mut self.order, len, id as u16);
            len = len.saturating_add(1);
        }
        let wmax = backlogged
            .iter()
            .filter_map(|id| v.get(id))
            .map(|g| u64::from(g.weight))
            .max()
            .unwrap_or(1);
        for id in backlogged.iter() {
            let w = v.get(id).map_or(1, |g| u64::from(g.weight));
            let d = get(&self.cpu_rate_ppm, id).saturating_mul(w);
            let t = if dmax == 0 {
                // No CPU information at all: slices from the weights alone.
                mul_div_sat(cfg.ceiling_ns, w, wmax).max(cfg.min_slice_ns)
            } else {
                mul_div_sat(cfg.ceiling_ns, d, dmax).max(cfg.min_slice_ns)
            };
            put(&mut self.slice_ns, id, t.min(cfg.ceiling_ns));
        }
        let slices = &self.slice_ns;
        // One entry per backlogged id: `len <= N`.
        if let Some(o) = self.order.get_mut(..len) {
            o.sort_unstable_by(|&a, &b| {
                get(slices, b as usize)
                    .cmp(&get(slices, a as usize))
                    .then(a.cmp(&b))
            });
        }
        self.len = len;
        self.cursor = 0;
        self.rounds = self.rounds.wrapping_add(1);
        for k in 0..len {
            let id = get(&self.order, k) as usize;
            if get(&self.credits, id) == 0 {
                self.refill(id, cfg.pool);
            }
        }
    }

    /// Next vGPU in round order with work and credits (starting a new round
    /// at most once), or `None` if nothing is backlogged.
    pub(crate) fn pick(
        &mut self,
        now: u64,
        v: &[Vgpu; N],
        backlogged: &Bitmap,
        cfg: &VmcgCfg,
        eligible: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut fresh = false;
        loop {
            while self.cursor < self.len {
                let id = get(&self.order, self.cursor) as usize;
                self.cursor = self.cursor.saturating_add(1);
                if !backlogged.get(id) || !eligible(id) {
                    continue;
                }
                if get(&self.credits, id) == 0 {
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
    pub(crate) fn can_dispatch(&mut self, id: usize, backlogged: &Bitmap) -> bool {
        let ok = self.batch_left > 0 || get(&self.credits, id) > 0 || self.spare(id, backlogged);
        if !ok {
            self.denied = true;
        }
        ok
    }

    /// `id` dispatched a workload: a new batch costs one credit.
    pub(crate) fn dispatched(&mut self, id: usize, cfg: &VmcgCfg) {
        if self.batch_left == 0 {
            if get(&self.credits, id) == 0 {
                // Early exhaustion with spare GPU (or a racing dispatch).
                self.refill(id, cfg.pool);
            }
            let c = get(&self.credits, id).saturating_sub(1);
            self.set_credits(id, c);
            self.batch_left = cfg.batch;
        }
        self.batch_left = self.batch_left.saturating_sub(1);
    }

    /// Forgets the round (policy or tunable change); credits restart empty.
    pub(crate) fn reset(&mut self, v: &[Vgpu; N], now: u64) {
        *self = const { Self::new() };
        for (id, g) in v.iter().enumerate() {
            if g.life == Life::Started {
                self.start(id, g, now);
            }
        }
    }
}
