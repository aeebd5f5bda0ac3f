// SPDX-License-Identifier: GPL-2.0

//! GPU time the policy chose to leave idle while work waited.
//!
//! The GPU is *withheld* while nothing is in flight, some started vGPU has
//! work queued, and the decision in force lets none of it run: the turn
//! belongs to a vGPU with nothing queued (`tbs` gives every started vGPU
//! its turns; `sfq` and `vmcg` hold a turn for `idle_threshold_us` in case
//! its vGPU submits more; `eevdf` holds one it anticipates), or the policy
//! chose the idle vGPU (the throttle, `tbs` waiting for its tick). Each
//! such stretch counts up to the deadline the policy set for that
//! decision, not up to the moment the machine acted on it: timer latency,
//! a work item waiting for a CPU and a vCPU the host descheduled between
//! a submission and the pick it calls for are not the policy's doing. A
//! decision that is due at once (work arrived after the policy chose the
//! idle vGPU, a wake-up that preempts, a policy switch, a stopped current
//! vGPU) has its deadline at the event itself, so it counts nothing.
//!
//! What comes after a deadline, until the machine acted, is *overdue*: the
//! same idle GPU, but the engine's lateness rather than the policy's
//! choice. It is counted apart, so that a busy host shows up there and
//! never in the withheld time.
//!
//! Each stretch is withheld *for* a vGPU: the current one, whose turn the
//! GPU is held for, or none when the policy chose the idle vGPU. The
//! scheduler adds a closed stretch to that vGPU's own counter, so a test
//! can say exactly which vGPU the GPU was held for.

/// A stretch that closed: the vGPU it was held for and its withheld time.
use super::VgpuId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Closed {
    /// The vGPU whose turn the GPU was held for (`None`: the idle vGPU).
    pub(crate) holder: Option<VgpuId>,
    /// Withheld time of the stretch, ns.
    pub(crate) ns: u64,
}

/// Accumulator of withheld GPU time (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Withheld {
    /// Start of the open stretch, if the GPU is withheld now.
    since: Option<u64>,
    /// Deadline of the decision that opened it.
    until: u64,
    /// The vGPU the open stretch is held for.
    holder: Option<VgpuId>,
    /// Closed stretches, ns.
    total_ns: u64,
    /// Closed stretches past their deadlines, ns.
    overdue_ns: u64,
}

impl Withheld {
    /// Nothing withheld yet.
    pub(crate) const fn new() -> Self {
        Self {
            since: None,
            until: 0,
            holder: None,
            total_ns: 0,
            overdue_ns: 0,
        }
    }

    /// Closes the open stretch at `now`, then opens one at `now` if the GPU
    /// is withheld: `next` is the deadline of the decision in force and the
    /// vGPU it holds the GPU for. Returns the stretch that closed, if any.
    pub(crate) fn update(
        &mut self,
        now: u64,
        next: Option<(u64, Option<VgpuId>)>,
    ) -> Option<Closed> {
        let closed = self.since.map(|_| Closed {
            holder: self.holder,
            ns: self.open_ns(now),
        });
        self.total_ns = self.total_ns.saturating_add(self.open_ns(now));
        self.overdue_ns = self.overdue_ns.saturating_add(self.open_overdue_ns(now));
        self.since = next.map(|_| now);
        self.until = next.map_or(0, |(until, _)| until);
        self.holder = next.and_then(|(_, holder)| holder);
        closed
    }

    /// Withheld time up to `now`, ns.
    pub(crate) fn total_ns(&self, now: u64) -> u64 {
        self.total_ns.saturating_add(self.open_ns(now))
    }

    /// Idle time with work waiting past the decisions' deadlines, up to
    /// `now`, ns.
    pub(crate) fn overdue_ns(&self, now: u64) -> u64 {
        self.overdue_ns.saturating_add(self.open_overdue_ns(now))
    }

    /// Withheld time of the open stretch up to `now` if it is held for
    /// `id`, ns.
    pub(crate) fn open_for(&self, id: VgpuId, now: u64) -> u64 {
        if self.holder == Some(id) {
            self.open_ns(now)
        } else {
            0
        }
    }

    fn open_ns(&self, now: u64) -> u64 {
        self.since
            .map_or(0, |s| now.min(self.until).saturating_sub(s))
    }

    fn open_overdue_ns(&self, now: u64) -> u64 {
        self.since
            .map_or(0, |s| now.saturating_sub(s.max(self.until)))
    }
}
