// SPDX-License-Identifier: GPL-2.0

//! Anticipation for light periodic vGPUs (`eevdf`'s `anticipate_us`).
//!
//! GVT-g cannot preempt a workload, so a vGPU that submits while a
//! neighbour's workload runs waits for the rest of it however it is
//! scheduled: a frame vGPU (1 ms of GPU, 15 ms of think time) beside
//! neighbours with 2 ms workloads waits 1 ms on average, 16/17 = 94.1% of
//! its alone frame rate, what any work-conserving policy gets when the
//! neighbours' workloads are identical (one that predicted unequal lengths
//! could pick one that ends on the arrival).
//! Anticipatory scheduling (Iyer and Druschel, SOSP 2001, for disk heads;
//! BFQ's idling for soft real-time queues) gives up work conservation
//! where it pays: it predicts when an idle vGPU submits next and, at a
//! workload boundary where the next neighbour workload would still run at
//! that time, keeps the GPU idle until then, so the vGPU's workload starts
//! at once.
//!
//! This file is the predictor, one per vGPU: its *think time* is the gap
//! from its going idle (its last workload completed with nothing queued or
//! in flight) to its next submission. After [`STABLE`] think times in a
//! row, each within the tolerance of the one before, the next submission
//! is predicted at the idle time plus the latest think time. A hold that
//! ends without the submission (a miss) clears the streak: no more holds
//! until the pattern is stable again. The decision (when to hold, for whom,
//! for how long) is `eevdf`'s, in `policy/eevdf.rs`.

/// Think times in a row, each within the tolerance of the one before, that
/// make a vGPU's next submission predictable.
use super::VgpuId;

pub(crate) const STABLE: u8 = 3;

/// Smallest tolerance of a think time and slack of a prediction, ns.
pub(crate) const MIN_SLACK_NS: u64 = 20_000;

/// Predictor and counters of one vGPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Predictor {
    /// When it last went idle, while it is idle.
    idle_at: Option<u64>,
    /// Its latest think time, ns.
    think: u64,
    /// Think times in a row that agree (capped at [`STABLE`]).
    agree: u8,
    /// GPU time of its last completed workload, ns (0: none yet): the
    /// length its next workload is expected to have.
    pub(crate) work_ns: u64,
    /// Holds that its submission ended.
    pub(crate) hits: u64,
    /// Holds that ended without its submission.
    pub(crate) misses: u64,
    /// GPU time held idle ahead of its predicted submissions, ns.
    pub(crate) held_ns: u64,
}

impl Predictor {
    /// No history.
    pub(crate) const NEW: Self = Self {
        idle_at: None,
        think: 0,
        agree: 0,
        work_ns: 0,
        hits: 0,
        misses: 0,
        held_ns: 0,
    };

    /// A workload of the vGPU completed at `now` after `gpu_ns`; `idle`:
    /// nothing of it is queued or in flight any more.
    pub(crate) fn completed(&mut self, gpu_ns: u64, idle: bool, now: u64) {
        self.work_ns = gpu_ns;
        if idle {
            self.idle_at = Some(now);
        }
    }

    /// Tolerance of a think time around `think` and slack of a prediction:
    /// 1/16 of it, at least [`MIN_SLACK_NS`].
    fn tolerance(think: u64) -> u64 {
        (think / 16).max(MIN_SLACK_NS)
    }

    /// The vGPU queued work at `now` with nothing queued or in flight.
    pub(crate) fn woke(&mut self, now: u64) {
        let Some(t) = self.idle_at.take() else {
            return;
        };
        let Some(gap) = now.checked_sub(t) else {
            // The clock went backwards: no sample.
            return;
        };
        self.agree = if self.agree > 0 && gap.abs_diff(self.think) <= Self::tolerance(self.think) {
            self.agree.saturating_add(1).min(STABLE)
        } else {
            1
        };
        self.think = gap;
    }

    /// When the idle vGPU is predicted to submit next, `None` if it is not
    /// idle or its pattern is not stable.
    pub(crate) fn arrival(&self) -> Option<u64> {
        match self.idle_at {
            Some(t) if self.agree >= STABLE => Some(t.saturating_add(self.think)),
            _ => None,
        }
    }

    /// How long after the predicted arrival a hold may still wait for it.
    pub(crate) fn slack(&self) -> u64 {
        Self::tolerance(self.think)
    }

    /// A hold of `held_ns` ended with the vGPU's submission.
    pub(crate) fn hit(&mut self, held_ns: u64) {
        self.hits = self.hits.saturating_add(1);
        self.held_ns = self.held_ns.saturating_add(held_ns);
    }

    /// A hold of `held_ns` ended without the vGPU's submission: its pattern
    /// is no longer trusted.
    pub(crate) fn miss(&mut self, held_ns: u64) {
        self.misses = self.misses.saturating_add(1);
        self.held_ns = self.held_ns.saturating_add(held_ns);
        self.agree = 0;
    }
}

/// A hold in force: the GPU is kept idle for `id`, the current vGPU, from
/// `from` until its submission or `until`, whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hold {
    /// The vGPU held for.
    pub(crate) id: VgpuId,
    /// When the hold began (the turn's start), ns.
    pub(crate) from: u64,
    /// When it ends without a submission, ns.
    pub(crate) until: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    /// `n` periods of `svc` of GPU time and `think` of think time from `t`;
    /// returns the time of the last completion.
    fn periods(p: &mut Predictor, mut t: u64, n: u32, svc: u64, think: u64) -> u64 {
        for _ in 0..n {
            p.woke(t);
            t += svc;
            p.completed(svc, true, t);
            t += think;
        }
        t - think
    }

    #[test]
    fn a_stable_think_time_predicts_the_next_submission() {
        let mut p = Predictor::NEW;
        assert_eq!(p.arrival(), None);
        // The first submission has no idle time before it; the next two
        // give two think times: not yet stable.
        let t = periods(&mut p, 0, 3, MS, 15 * MS);
        assert_eq!(p.work_ns, MS);
        assert_eq!(p.arrival(), None);
        // A third agreeing think time: predicted 15 ms after going idle.
        let t = periods(&mut p, t + 15 * MS, 1, MS, 15 * MS);
        assert_eq!(p.arrival(), Some(t + 15 * MS));
        assert_eq!(p.slack(), 15 * MS / 16);
        // Jitter within 1/16 keeps it; the latest think time is predicted.
        let t = periods(&mut p, t + 15 * MS + 900 * US, 1, MS, 15 * MS);
        assert_eq!(p.arrival(), Some(t + 15 * MS + 900 * US));
        // While it has work it is not idle: nothing is predicted.
        p.woke(t + 15 * MS);
        assert_eq!(p.arrival(), None);
        p.completed(MS, true, t + 16 * MS);
        assert_eq!(p.arrival(), Some(t + 31 * MS));
        // A think time off by more than 1/16 starts a new streak.
        p.woke(t + 21 * MS);
        p.completed(MS, true, t + 22 * MS);
        assert_eq!(p.arrival(), None);
        // A clock that went backwards is no sample.
        let mut q = Predictor::NEW;
        q.completed(MS, true, 10 * MS);
        q.woke(9 * MS);
        assert_eq!(q.agree, 0);
        // Short think times agree within 20 us.
        let mut r = Predictor::NEW;
        let t = periods(&mut r, 0, 4, 200 * US, 30 * US);
        assert_eq!(r.arrival(), Some(t + 30 * US));
        assert_eq!(r.slack(), MIN_SLACK_NS);
    }

    #[test]
    fn a_miss_suspends_prediction_until_the_pattern_is_stable_again() {
        let mut p = Predictor::NEW;
        let t = periods(&mut p, 0, 4, MS, 15 * MS);
        assert!(p.arrival().is_some());
        p.hit(MS);
        p.miss(2 * MS);
        assert_eq!((p.hits, p.misses, p.held_ns), (1, 1, 3 * MS));
        assert_eq!(p.arrival(), None);
        // It comes back late (a think time of 40 ms), then keeps 15 ms: three
        // agreeing think times later it is predicted again.
        let t = periods(&mut p, t + 40 * MS, 3, MS, 15 * MS);
        assert_eq!(p.arrival(), None);
        let t = periods(&mut p, t + 15 * MS, 1, MS, 15 * MS);
        assert_eq!(p.arrival(), Some(t + 15 * MS));
    }
}
