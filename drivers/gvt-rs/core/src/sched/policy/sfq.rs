// SPDX-License-Identifier: GPL-2.0

//! `sfq`: FairGV's start-time fair queueing on measured GPU time (`Sfq`, in
//! `../sfq.rs`), and what `eevdf`, which keeps the same tags, shares with it.

use super::{
    super::{
        fixed::vdiff,
        Scheduler,
        Tunable,
        VgpuId,
        WakeRule, //
    },
    PolicyOps, //
};

/// The ops of `sfq`.
pub(super) struct SfqOps;

/// The wake-up rule `sfq_wake_keeps_debt` selects.
pub(super) fn wake_rule<const N: usize>(s: &Scheduler<N>) -> WakeRule {
    if s.tun.get(Tunable::SfqWakeMaxVf) == 1 {
        WakeRule::MaxVF
    } else {
        WakeRule::PaperV
    }
}

/// The fair-queueing state of a policy that becomes active: every vGPU
/// that is backlogged or current gets a tag at virtual time.
pub(super) fn activate_all<const N: usize>(s: &mut Scheduler<N>) {
    let rule = wake_rule(s);
    for id in s.backlogged.iter() {
        s.sfq.activate(id, rule, s.weight(id));
    }
    if let Some(c) = s.current {
        s.sfq.activate(c, rule, s.weight(c));
    }
}

/// What the running turn has to be charged at `now`: its measured GPU
/// time, or wall-clock ownership if none was measured, plus the time the
/// GPU was held idle for it (closed stretches: the open one is added when
/// the turn ends).
pub(super) fn turn_charge<const N: usize>(s: &Scheduler<N>, now: u64) -> u64 {
    let mut l = s.turn_gpu_ns;
    if l == 0 && s.turn_dispatched > 0 {
        // No GPU time measured: charge wall-clock ownership.
        l = now.saturating_sub(s.turn_start);
    }
    // The GPU was held idle for this vGPU: charge that too.
    l.saturating_add(s.turn_idle_ns)
}

/// Charges the turn of `c` that ended at `now`: its measured GPU time, or
/// wall-clock ownership if none was measured, plus the time the GPU was
/// held idle for it.
pub(super) fn charge_turn<const N: usize>(s: &mut Scheduler<N>, c: VgpuId, now: u64) {
    let l = turn_charge(s, now);
    let w = s.weight(c);
    s.v[c].charged_ns = s.v[c].charged_ns.saturating_add(l);
    let more = s.backlogged.contains(c);
    let turn = (s.turn_dispatched > 0).then(|| (l, more, s.tun.us(Tunable::SfqSliceUs)));
    s.sfq.end_turn(c, l, w, turn, more);
}

impl<const N: usize> PolicyOps<N> for SfqOps {
    fn switched_to(&self, s: &mut Scheduler<N>, _now: u64) {
        activate_all(s);
    }

    /// `sfq` wake-up preemption (`sfq_wake_preempt`): if `id` is owed
    /// service, its start tag no later than that of the running vGPU, which
    /// has already had service in this turn, the turn ends at the next
    /// workload boundary instead of running out its slice: a light vGPU
    /// then waits for at most the workloads in flight, not for a whole
    /// slice of every neighbour. A vGPU waking with debt (its tag past the
    /// running one's) waits for its turn as before.
    fn activated(&self, s: &mut Scheduler<N>, id: VgpuId, _trip: bool) {
        let rule = wake_rule(s);
        s.sfq.activate(id, rule, s.weight(id));
        if let Some(c) = s.wake_preempt_candidate(id) {
            if vdiff(s.sfq.tag(id), s.sfq.tag(c)) <= 0 {
                s.force = true;
            }
        }
    }

    fn turn_ended(&self, s: &mut Scheduler<N>, c: VgpuId, now: u64) {
        charge_turn(s, c, now);
    }

    fn pick_next(&self, s: &mut Scheduler<N>, _prev: Option<VgpuId>, _now: u64) -> Option<VgpuId> {
        let lim = s.throttle_limit();
        let on = lim != u64::MAX;
        let thr = &s.thr;
        let el = |id: VgpuId| thr.usage(id) <= lim;
        s.sfq.pick(if on { Some(&el) } else { None })
    }

    fn begin_turn(&self, s: &mut Scheduler<N>, _id: VgpuId) -> u64 {
        s.tun.us(Tunable::SfqSliceUs)
    }
}
