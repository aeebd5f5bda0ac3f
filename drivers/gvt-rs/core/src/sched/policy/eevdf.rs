// SPDX-License-Identifier: GPL-2.0

//! `eevdf`: `sfq`'s tags and charges with EEVDF's choice (the eligible vGPU
//! with the earliest virtual deadline), deadline-based wake-up preemption,
//! the GPU held idle only for interactive vGPUs, and, as an option
//! (`anticipate_us`), held idle ahead of a light periodic vGPU's predicted
//! submission.

use super::{
    super::{
        anticipate::Hold,
        fixed::{
            mul_div_sat,
            vdiff, //
        },
        Scheduler,
        Tunable,
        VgpuId,
        VgpuSet,
        VSCALE, //
    },
    sfq::{
        activate_all,
        charge_turn,
        turn_charge,
        wake_rule, //
    },
    PolicyOps, //
};

/// The ops of `eevdf`.
pub(super) struct EevdfOps;

/// Anticipation (`anticipate_us`, see `anticipate.rs`): the hold due at
/// `now`, a workload boundary (nothing in flight) before the next workload
/// of `next`, or `None`. A hold is for the idle, started vGPU predicted to
/// submit soonest among those that
///
/// * are predicted to submit before `next`'s workload would end (its last
///   one's GPU time) and within `anticipate_us`, and not later than
///   their slack ago;
/// * are owed service with the hold charged: their tag, plus the hold
///   until the predicted submission and the workload they are expected to
///   submit (their last one's GPU time), at their weight, is no later
///   than the weighted average tag of the active vGPUs (EEVDF's
///   eligibility; `running`: the running vGPU and the service it has had
///   in its turn so far, not yet in its tag). So a hold never leaves them
///   in debt against the average, and a vGPU at or above its fair share
///   gets none;
/// * the throttle, if on, would let run.
///
/// Their own tag counts, not the one they would wake with (`sfq`'s
/// `max(V, F)`, which forgets service not used while idle): what they are
/// owed is at most the progress of `V` since they last woke, their share
/// of one period. The hold lasts until the predicted submission plus the
/// slack, at most `anticipate_us`. O(p + log n) for the p vGPUs with a
/// prediction (`Scheduler::predicted`: idle, with a stable think time;
/// none of the others can be held for), the average only when one is in
/// time; nothing when `anticipate_us` is 0.
fn anticipation<const N: usize>(
    s: &Scheduler<N>,
    next: VgpuId,
    running: Option<(VgpuId, u64)>,
    now: u64,
) -> Option<Hold> {
    let max = s.tun.us(Tunable::AnticipateUs);
    if max == 0 || s.inflight > 0 {
        return None;
    }
    let hold = anticipation_among(s, &s.started.and(&s.predicted), next, running, now);
    // The reference: every started vGPU.
    #[cfg(test)]
    assert_eq!(hold, anticipation_among(s, &s.started, next, running, now));
    hold
}

/// [`anticipation`] among the candidates `set`, in id order.
fn anticipation_among<const N: usize>(
    s: &Scheduler<N>,
    set: &VgpuSet,
    next: VgpuId,
    running: Option<(VgpuId, u64)>,
    now: u64,
) -> Option<Hold> {
    let max = s.tun.us(Tunable::AnticipateUs);
    let len = s.v[next].ant.work_ns;
    let reach = now.saturating_add(len.min(max));
    let lim = s.throttle_limit();
    let v = &s.v;
    let mut avg: Option<u64> = None;
    let mut best: Option<(u64, Hold)> = None;
    for id in set.iter() {
        let g = &v[id];
        if id == next || g.pending > 0 || g.inflight > 0 || s.thr.usage(id) > lim {
            continue;
        }
        let Some(at) = g.ant.arrival() else {
            continue;
        };
        let until = at
            .saturating_add(g.ant.slack())
            .min(now.saturating_add(max));
        if at >= reach || until <= now || best.is_some_and(|(b, _)| b <= at) {
            continue;
        }
        let charge = at
            .max(now)
            .saturating_sub(now)
            .saturating_add(g.ant.work_ns);
        let w = u64::from(g.weight.max(1));
        let tag = s.sfq.tag(id).wrapping_add(mul_div_sat(charge, VSCALE, w));
        let a = *avg.get_or_insert_with(|| s.sfq.average_with(running));
        if vdiff(tag, a) > 0 {
            continue;
        }
        best = Some((
            at,
            Hold {
                id,
                from: now,
                until,
            },
        ));
    }
    best.map(|(_, h)| h)
}

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
    /// exactly as by `sfq`). O(log n) for the average.
    fn activated(&self, s: &mut Scheduler<N>, id: VgpuId, trip: bool) {
        let w = s.weight(id);
        if trip {
            s.sfq.resume(id, w);
        } else {
            let rule = wake_rule(s);
            s.sfq.activate(id, rule, w);
        }
        let Some(c) = s.wake_preempt_candidate(id) else {
            return;
        };
        let slice = s.tun.us(Tunable::SfqSliceUs);
        let avg = s.sfq.average();
        if s.sfq.eligible(id, avg)
            && vdiff(s.sfq.deadline(id, slice), s.sfq.deadline(c, slice)) <= 0
        {
            s.force = true;
        }
    }

    /// Only for an interactive vGPU: another's next submission is not
    /// expected soon, and holding would only waste GPU time and charge it
    /// for it.
    ///
    /// Under an anticipation hold for `c`, until the hold's end.
    fn hold_ns(&self, s: &Scheduler<N>, c: VgpuId) -> u64 {
        if let Some(h) = s.ant.filter(|h| h.id == c) {
            h.until.saturating_sub(h.from)
        } else if s.is_interactive(c) {
            s.tun.us(Tunable::IdleThresholdUs)
        } else {
            0
        }
    }

    /// The vGPU held for submitted: the hold hit.
    fn queued(&self, s: &mut Scheduler<N>, now: u64) {
        let Some(h) = s.ant.filter(|h| s.backlogged.contains(h.id)) else {
            return;
        };
        s.ant = None;
        s.v[h.id].ant.hit(now.saturating_sub(h.from));
    }

    /// A turn also ends at a workload boundary of the running vGPU `c`
    /// where anticipation holds the GPU for another vGPU (not right after
    /// the pick, which already weighed it).
    fn turn_over(&self, s: &Scheduler<N>, c: VgpuId, now: u64) -> bool {
        s.turn_expired(c, now)
            || (s.turn_dispatched > 0
                && s.backlogged.contains(c)
                && anticipation(s, c, Some((c, turn_charge(s, now))), now).is_some())
    }

    /// A hold still in force when its turn ends missed.
    fn turn_ended(&self, s: &mut Scheduler<N>, c: VgpuId, now: u64) {
        if let Some(h) = s.ant.take() {
            s.v[h.id].ant.miss(now.saturating_sub(h.from));
            s.sync(h.id);
        }
        charge_turn(s, c, now);
    }

    /// EEVDF's choice, unless anticipation holds the GPU for a vGPU about
    /// to submit before the chosen one's next workload would end: that
    /// vGPU then gets the turn with nothing queued, the idle time charged
    /// to it.
    fn pick_next(&self, s: &mut Scheduler<N>, _prev: Option<VgpuId>, now: u64) -> Option<VgpuId> {
        let lim = s.throttle_limit();
        let on = lim != u64::MAX;
        let thr = &s.thr;
        let el = |id: VgpuId| thr.usage(id) <= lim;
        let slice = s.tun.us(Tunable::SfqSliceUs);
        let next = s.sfq.pick_eevdf(slice, if on { Some(&el) } else { None });
        #[cfg(test)]
        assert_eq!(
            next,
            s.sfq
                .pick_eevdf_scan(s.sfq.average_scan(None), if on { Some(&el) } else { None })
        );
        let next = next?;
        // The last turn is charged: every tag is up to date.
        let Some(h) = anticipation(s, next, None, now) else {
            return Some(next);
        };
        // It joins the fair queue when it submits, by the rule its
        // submission meets (a round trip keeps its tag); a miss charges
        // the hold to its tag all the same.
        s.ant = Some(h);
        Some(h.id)
    }

    /// A hold's turn starts idle: it is held from the pick.
    fn begin_turn(&self, s: &mut Scheduler<N>, id: VgpuId) -> u64 {
        if s.ant.is_some_and(|h| h.id == id) {
            s.idle_since = Some(s.turn_start);
        }
        s.tun.us(Tunable::SfqSliceUs)
    }
}
