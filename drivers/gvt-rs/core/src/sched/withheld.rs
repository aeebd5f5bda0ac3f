// SPDX-License-Identifier: GPL-2.0

//! GPU time the policy chose to leave idle while work waited.
//!
//! The GPU is *withheld* while nothing is in flight, some started vGPU has
//! work queued, and the decision in force lets none of it run: the turn
//! belongs to a vGPU with nothing queued (`tbs` gives every started vGPU
//! its turns; `sfq` and `vmcg` hold a turn for `idle_threshold_us` in case
//! its vGPU submits more), or the policy chose the idle vGPU (`vmcg` out of
//! credits, `tbs` waiting for its tick). Each such stretch counts up to
//! the deadline the policy set for that decision, not up to the moment the
//! machine acted on it: timer latency and a work item waiting for a CPU
//! are not the policy's doing. The counter is therefore what the policy
//! decided, however fast or busy the machine is: zero for a policy that
//! never idles with work waiting.

/// Accumulator of withheld GPU time (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Withheld {
    /// Start of the open stretch, if the GPU is withheld now.
    since: Option<u64>,
    /// Deadline of the decision that opened it.
    until: u64,
    /// Closed stretches, ns.
    total_ns: u64,
}

impl Withheld {
    /// Nothing withheld yet.
    pub(crate) const fn new() -> Self {
        Self {
            since: None,
            until: 0,
            total_ns: 0,
        }
    }

    /// Closes the open stretch at `now`, then opens one at `now` with
    /// deadline `until` if the GPU is withheld (`Some`).
    pub(crate) fn update(&mut self, now: u64, until: Option<u64>) {
        self.total_ns = self.total_ns.saturating_add(self.open_ns(now));
        self.since = until.map(|_| now);
        self.until = until.unwrap_or(0);
    }

    /// Withheld time up to `now`, ns.
    pub(crate) fn total_ns(&self, now: u64) -> u64 {
        self.total_ns.saturating_add(self.open_ns(now))
    }

    fn open_ns(&self, now: u64) -> u64 {
        self.since
            .map_or(0, |s| now.min(self.until).saturating_sub(s))
    }
}
