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
//! `eevdf` ([`Sfq::pick_eevdf`]) keeps these tags and charges and changes
//! only the choice, after EEVDF (Linux's fair class since 6.6): a vGPU is
//! *eligible* when its tag is no later than the weighted average `A` of the
//! active vGPUs' tags (it has received no more than its share, its lag
//! `A - S` is not negative), its *request* `r` is the length of the turns
//! it asks for (see [`Sfq::note_turn`]) and its virtual deadline is
//! `D = S + r * VSCALE`; the eligible vGPU with the earliest deadline runs.
//! The vGPU with the smallest tag is always eligible, so the choice is
//! work-conserving; a vGPU whose turns are short (a frame's one workload)
//! gets an early deadline and runs soon after it wakes, one whose turns
//! fill the slice waits for its tag, and both get their shares.
//!
//! Unlike Linux's EEVDF the deadline does not divide the request by the
//! weight: a turn here is one non-preemptive slice whatever the weight, so
//! dividing would only reorder vGPUs that all ask for whole slices (a
//! weight-4 vGPU ahead of a weight-1 one with an earlier tag) and widen
//! their lag, for no latency gain. Undivided, vGPUs with equal requests
//! (every saturating one asks for the slice) are chosen by tag exactly as
//! `sfq` chooses, and only a shorter request moves a vGPU ahead. Measured
//! with weights 1:2:2:3:3:4 over 7.5 s: min-max 0.988 and 0.982 divided,
//! the same as `sfq` (0.994, 0.993) undivided.
//!
//! The active vGPUs are kept in a [`TagTree`] ordered by tag and augmented
//! for `eevdf` (`vtree.rs`): `sfq`'s choice is O(1), `eevdf`'s choice and
//! the weighted average `A` are O(log n), and every tag, request or weight
//! change is O(log n), as in Linux's EEVDF.
//!
//! Virtual time units: `L * VSCALE / w` with `VSCALE` = the largest weight, so
//! the per-charge rounding error is below 1/10000 ns at weight 1. Tags wrap
//! around `u64` and are compared with wrapping differences; a stale tag more
//! than 2^62 units away from `V` is treated as no debt.

use super::fixed::{
    mul_div_sat,
    vdiff, //
};
use super::vtree::{
    TagTree,
    Wide, //
};
use super::{
    VgpuArray,
    VgpuId, //
};

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

/// SFQ state for the vGPUs of a GPU.
#[derive(Clone, Copy)]
pub(crate) struct Sfq {
    /// The active vGPUs (backlogged, or running): their tags, weights and
    /// virtual deadlines for [`Sfq::slice`].
    tree: TagTree,
    tag: VgpuArray<u64>,
    /// `eevdf` request per vGPU, ns (0: none measured yet, the slice).
    req: VgpuArray<u64>,
    pub(crate) vtime: u64,
    /// The slice the deadlines in `tree` are computed for (`eevdf` brings
    /// it up to date before it chooses).
    slice: u64,
}

impl Sfq {
    pub(crate) const fn new() -> Self {
        Self {
            tree: TagTree::new(),
            tag: VgpuArray::filled(0),
            req: VgpuArray::filled(0),
            vtime: 0,
            slice: 0,
        }
    }

    /// Current virtual time `V`.
    pub(crate) fn vtime(&self) -> u64 {
        match self.tree.min() {
            Some(m) => {
                let k = self.tree.key(m);
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
    pub(crate) fn tag(&self, id: VgpuId) -> u64 {
        self.tag[id]
    }

    /// How far the start tag of `id` is ahead of `V`: its debt in virtual time, 0 with none (a
    /// tag behind `V`, or stale).
    pub(crate) fn lag(&self, id: VgpuId) -> u64 {
        let d = vdiff(self.tag(id), self.vtime());
        if d > 0 && d < (1 << 62) {
            d as u64
        } else {
            0
        }
    }

    /// Puts the tag of `id`, which is not active, `lag` ahead of `V` (at most 2^61: below what
    /// counts as stale).
    pub(crate) fn set_lag(&mut self, id: VgpuId, lag: u64) {
        if self.tree.contains(id) {
            return;
        }
        self.tag[id] = self.vtime().wrapping_add(lag.min(1 << 61));
    }

    /// Whether `id` is active.
    #[cfg(test)]
    pub(crate) fn active(&self, id: VgpuId) -> bool {
        self.tree.contains(id)
    }

    /// Checks the tree's invariants, and that it holds every active vGPU's
    /// tag, deadline and weight (`weight`: the scheduler's).
    #[cfg(test)]
    pub(crate) fn check(&self, weight: &dyn Fn(VgpuId) -> u32) {
        self.tree.check();
        for id in self.tree.ids() {
            assert_eq!(self.tree.key(id), self.tag(id), "tag of {id}");
            assert_eq!(self.tree.weight(id), weight(id).max(1), "weight of {id}");
            assert_eq!(
                self.tree.deadline(id),
                self.deadline(id, self.slice),
                "deadline of {id}"
            );
        }
    }

    /// (Re)inserts `id` into the tree with its tag, deadline and weight `w`.
    fn enter(&mut self, id: VgpuId, w: u32) {
        let s = self.tag(id);
        let d = self.deadline(id, self.slice);
        self.tree.upsert(id, s, d, w);
    }

    /// A vGPU of weight `w` becomes active (backlogged, or started).
    pub(crate) fn activate(&mut self, id: VgpuId, rule: WakeRule, w: u32) {
        if self.tree.contains(id) {
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
        self.tag[id] = s;
        self.enter(id, w);
    }

    /// A vGPU of weight `w` becomes active again keeping its tag, whatever
    /// `V` is (`eevdf`'s synchronous round trip, see `Scheduler::activate`).
    pub(crate) fn resume(&mut self, id: VgpuId, w: u32) {
        if self.tree.contains(id) {
            return;
        }
        self.vtime = self.vtime();
        self.enter(id, w);
    }

    /// A vGPU that is not running stops being active.
    pub(crate) fn deactivate(&mut self, id: VgpuId) {
        if self.tree.contains(id) {
            self.vtime = self.vtime();
            self.tree.remove(id);
        }
    }

    /// The weight of `id` changed to `w`.
    pub(crate) fn set_weight(&mut self, id: VgpuId, w: u32) {
        if self.tree.contains(id) {
            self.enter(id, w);
        }
    }

    /// Charges `gpu_ns` to `id` at weight `w`: `S <- S + L * VSCALE / w`.
    #[cfg(test)]
    pub(crate) fn charge(&mut self, id: VgpuId, gpu_ns: u64, w: u32) {
        let delta = mul_div_sat(gpu_ns, VSCALE, u64::from(w.max(1)));
        self.tag[id] = self.tag[id].wrapping_add(delta);
        if self.tree.contains(id) {
            self.enter(id, w);
        }
    }

    /// The active vGPU with the smallest start tag among those `eligible`.
    /// O(1), unless the throttle holds the smallest tag back: then
    /// O(active).
    pub(crate) fn pick(&mut self, eligible: Option<&dyn Fn(VgpuId) -> bool>) -> Option<VgpuId> {
        self.vtime = self.vtime();
        let top = self.tree.min()?;
        let Some(ok) = eligible else {
            return Some(top);
        };
        if ok(top) {
            return Some(top);
        }
        // Throttle active: linear fallback over the active set.
        let mut best: Option<(u64, VgpuId)> = None;
        for id in self.tree.ids() {
            if !ok(id) {
                continue;
            }
            let k = self.tree.key(id);
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
        self.tree.clear();
        self.tag.fill(self.vtime);
        self.req.fill(0);
    }

    /// Forgets `id`'s request (a new vGPU in its slot).
    pub(crate) fn forget(&mut self, id: VgpuId) {
        self.req[id] = 0;
    }

    /// `eevdf` request of `id` in ns: the turn it asks for, at most `slice`.
    pub(crate) fn request(&self, id: VgpuId, slice: u64) -> u64 {
        match self.req[id] {
            0 => slice,
            r => r.min(slice),
        }
    }

    /// `eevdf`: `id`'s turn ended after `l` ns charged. A vGPU that still
    /// had work queued (its slice ran out or a waking vGPU ended the turn)
    /// asked for a whole slice; one whose queue ran dry asked for `l`. The
    /// request follows the turns with a weight of 1/4 on the newest, so it
    /// takes a few turns to learn a pattern and one turn cannot swing it.
    fn note_turn(&mut self, id: VgpuId, l: u64, wanted_more: bool, slice: u64) {
        let sample = if wanted_more { slice } else { l.min(slice) };
        let old = self.request(id, slice);
        // old, sample <= slice <= 1e12 ns: no overflow.
        self.req[id] = old
            .saturating_mul(3)
            .saturating_add(sample)
            .div_ceil(4)
            .max(1);
    }

    /// The turn of `id` ended: charges it `gpu_ns` at weight `w` (as
    /// [`Sfq::charge`]), notes its request if `turn` is `Some((l,
    /// wanted_more, slice))` (see [`Sfq::note_turn`]), and, unless `stays`,
    /// deactivates it (as [`Sfq::deactivate`] after the charge: `V` counts
    /// its new tag). One update of the tree instead of three.
    pub(crate) fn end_turn(
        &mut self,
        id: VgpuId,
        gpu_ns: u64,
        w: u32,
        turn: Option<(u64, bool, u64)>,
        stays: bool,
    ) {
        let delta = mul_div_sat(gpu_ns, VSCALE, u64::from(w.max(1)));
        let k = self.tag[id].wrapping_add(delta);
        self.tag[id] = k;
        if let Some((l, more, slice)) = turn {
            self.note_turn(id, l, more, slice);
        }
        if !self.tree.contains(id) {
            return;
        }
        if stays {
            self.enter(id, w);
            return;
        }
        self.tree.remove(id);
        let m = match self.tree.min().map(|x| self.tree.key(x)) {
            Some(o) if vdiff(o, k) < 0 => o,
            _ => k,
        };
        if vdiff(m, self.vtime) > 0 {
            self.vtime = m;
        }
    }

    /// Virtual deadline of `id`: `S + r * VSCALE` (see the module
    /// documentation for why the request is not divided by the weight).
    pub(crate) fn deadline(&self, id: VgpuId, slice: u64) -> u64 {
        let r = self.request(id, slice).saturating_mul(VSCALE);
        self.tag(id).wrapping_add(r)
    }

    /// Weighted average `A` of the active vGPUs' tags:
    /// `V + sum w_i max(S_i - V, 0) / sum w_i`, O(log n) (see `vtree.rs`).
    /// The sum saturates only when the tags lead `V` by thousands of
    /// seconds of service; `A` then reads late, which makes more vGPUs
    /// eligible.
    pub(crate) fn average(&self) -> u64 {
        self.average_with(None)
    }

    /// [`Sfq::average`] as if `extra = Some((id, ns))` were already charged
    /// to `id` (the running vGPU's service in its turn so far).
    pub(crate) fn average_with(&self, extra: Option<(VgpuId, u64)>) -> u64 {
        let v = self.vtime();
        #[cfg(test)]
        let scan = self.average_scan(extra);
        let Some(mut lead) = self.tree.lead_above(v) else {
            // `V` too far from the tags for the sums (not seen in practice).
            return self.average_scan(extra);
        };
        if let Some((id, ns)) = extra.filter(|e| self.tree.contains(e.0)) {
            let w = u64::from(self.tree.weight(id));
            let k = self.tree.key(id);
            let k2 = k.wrapping_add(mul_div_sat(ns, VSCALE, w));
            let d = vdiff(k, v).max(0) as u64;
            let d2 = vdiff(k2, v).max(0) as u64;
            lead = lead.sub(Wide::mul(d, w)).add(Wide::mul(d2, w));
        }
        let a = match lead.saturated().checked_div(self.tree.total_weight()) {
            Some(a) => v.wrapping_add(a),
            None => v,
        };
        #[cfg(test)]
        assert_eq!(a, scan);
        a
    }

    /// [`Sfq::average_with`] by a scan of the active vGPUs, with the
    /// saturating sums the tree's exact ones reproduce. O(active).
    pub(crate) fn average_scan(&self, extra: Option<(VgpuId, u64)>) -> u64 {
        let v = self.vtime();
        let mut wsum: u64 = 0;
        let mut lead: u64 = 0;
        for id in self.tree.ids() {
            let w = u64::from(self.tree.weight(id));
            let mut k = self.tree.key(id);
            if let Some((_, ns)) = extra.filter(|e| e.0 == id) {
                k = k.wrapping_add(mul_div_sat(ns, VSCALE, w));
            }
            let d = vdiff(k, v).max(0) as u64;
            wsum = wsum.saturating_add(w);
            lead = lead.saturating_add(d.saturating_mul(w));
        }
        match lead.checked_div(wsum) {
            Some(a) => v.wrapping_add(a),
            None => v,
        }
    }

    /// Whether `id` is eligible against the average `avg`.
    pub(crate) fn eligible(&self, id: VgpuId, avg: u64) -> bool {
        vdiff(self.tag(id), avg) <= 0
    }

    /// `eevdf`: among the active vGPUs that pass `ok` (the throttle), the
    /// eligible one with the earliest virtual deadline (ties: smaller tag,
    /// then lower id); if none of them is eligible, the one with the
    /// smallest tag. O(log n) (the tree's choice among all active vGPUs,
    /// which is the answer when it passes `ok`); O(active) when the
    /// throttle holds that vGPU back. A change of `slice` recomputes every
    /// deadline first, O(n).
    pub(crate) fn pick_eevdf(
        &mut self,
        slice: u64,
        ok: Option<&dyn Fn(VgpuId) -> bool>,
    ) -> Option<VgpuId> {
        self.vtime = self.vtime();
        self.set_slice(slice);
        let avg = self.average();
        let best = self.tree.pick_eligible(avg).or_else(|| self.tree.min())?;
        match ok {
            Some(f) if !f(best) => self.pick_eevdf_scan(avg, ok),
            _ => Some(best),
        }
    }

    /// Brings the tree's deadlines to `slice`.
    fn set_slice(&mut self, slice: u64) {
        if slice == self.slice {
            return;
        }
        self.slice = slice;
        let req = &self.req;
        self.tree.set_deadlines(&|id, s| {
            let r = match req[id] {
                0 => slice,
                r => r.min(slice),
            };
            s.wrapping_add(r.saturating_mul(VSCALE))
        });
    }

    /// [`Sfq::pick_eevdf`] by a scan of the active vGPUs, against `avg`.
    /// O(active).
    pub(crate) fn pick_eevdf_scan(
        &self,
        avg: u64,
        ok: Option<&dyn Fn(VgpuId) -> bool>,
    ) -> Option<VgpuId> {
        // (eligible, key, tag, id): eligible first, then the earliest key,
        // which is the deadline for eligible vGPUs and the tag otherwise.
        let mut best: Option<(bool, u64, u64, VgpuId)> = None;
        for id in self.tree.ids() {
            if ok.is_some_and(|f| !f(id)) {
                continue;
            }
            let s = self.tree.key(id);
            let el = vdiff(s, avg) <= 0;
            let k = if el { self.deadline(id, self.slice) } else { s };
            let better = match best {
                None => true,
                Some((be, bk, bs, bi)) => {
                    (el && !be)
                        || (el == be
                            && (vdiff(k, bk) < 0
                                || (k == bk && (vdiff(s, bs) < 0 || (s == bs && id < bi)))))
                }
            };
            if better {
                best = Some((el, k, s, id));
            }
        }
        best.map(|(_, _, _, i)| i)
    }
}
