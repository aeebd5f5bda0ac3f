// SPDX-License-Identifier: GPL-2.0

//! `eevdf`: `sfq`'s tags and charges with EEVDF's choice (the eligible vGPU
//! with the earliest virtual deadline), deadline-based wake-up preemption,
//! and the GPU held idle only for interactive vGPUs.

use super::{
    super::{
        fixed::vdiff,
        Scheduler,
        Tunable, //
    },
    sfq::{
        activate_all,
        charge_turn,
        wake_rule, //
    },
    PolicyOps,
};

/// The ops of `eevdf`.
pub(super) struct EevdfOps;

impl<const N: usize> PolicyOps<N> for EevdfOps {
    fn switched_to(&self, s: &mut Scheduler<N>, _now: u64) {
        activate_all(s);
    }

    /// A round trip keeps the vGPU's tag (`S <- F` even when `F < V`): it
    /// was away for at most `interactive_gap_us`, waiting for its own
    /// result, and is treated as if it had stayed backlogged, as EEVDF
    /// keeps the lag of a short sleeper. Without this, every round trip
    /// would forfeit whatever service it is owed, and a synchronous client
    /// beside a saturating neighbour would get one workload per neighbour
    /// turn.
    ///
    /// Wake-up preemption as `sfq`'s, with EEVDF's test: the waking vGPU is
    /// eligible (its tag no later than the weighted average) and its
    /// virtual deadline is no later than the running vGPU's ("no later" as
    /// in `sfq`'s test, so that vGPUs with equal requests are treated
    /// exactly as by `sfq`). O(N) for the average.
    fn activated(&self, s: &mut Scheduler<N>, id: usize, trip: bool) {
        if trip {
            s.sfq.resume(id);
        } else {
            let rule = wake_rule(s);
            s.sfq.activate(id, rule);
        }
        let Some(c) = s.wake_preempt_candidate(id) else {
            return;
        };
        let v = &s.v;
        let weight = |i: usize| v.get(i).map_or(1, |g| g.weight);
        let slice = s.tun.us(Tunable::SfqSliceUs);
        let avg = s.sfq.average(&weight);
        if s.sfq.eligible(id, avg)
            && vdiff(s.sfq.deadline(id, slice), s.sfq.deadline(c, slice)) <= 0
        {
            s.force = true;
        }
    }

    /// Only for an interactive vGPU: another's next submission is not
    /// expected soon, and holding would only waste GPU time and charge it
    /// for it.
    fn hold_ns(&self, s: &Scheduler<N>, c: usize) -> u64 {
        if s.is_interactive(c) {
            s.tun.us(Tunable::IdleThresholdUs)
        } else {
            0
        }
    }

    fn turn_ended(&self, s: &mut Scheduler<N>, c: usize, now: u64) {
        charge_turn(s, c, now);
    }

    fn pick_next(&self, s: &mut Scheduler<N>, _prev: Option<usize>, _now: u64) -> Option<usize> {
        let lim = s.throttle_limit();
        let on = lim != u64::MAX;
        let thr = &s.thr;
        let el = |id: usize| thr.usage(id) <= lim;
        let v = &s.v;
        let weight = |i: usize| v.get(i).map_or(1, |g| g.weight);
        let slice = s.tun.us(Tunable::SfqSliceUs);
        s.sfq
            .pick_eevdf(&weight, slice, if on { Some(&el) } else { None })
    }

    fn begin_turn(&self, s: &mut Scheduler<N>, _id: usize) -> u64 {
        s.tun.us(Tunable::SfqSliceUs)
    }
}
