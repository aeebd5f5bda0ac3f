// SPDX-License-Identifier: GPL-2.0

//! FairGV's CPU-GPU interactivity classifier, re-derived for GVT-g.
//!
//! FairGV counts a VM's synchronous API calls (a call whose caller waits
//! for the GPU's answer) and classifies a vGPU making more than 10 per
//! 10 ms as CPU-GPU interactive. GVT-g sees no API calls, only workloads;
//! what it can see of a synchronous call is its round trip: the vGPU's
//! last workload completes, the guest wakes, does a little CPU work and
//! submits again. So a *synchronous round trip* is a submission that finds
//! the vGPU with nothing queued or in flight within `gap_ns` of its last
//! completion (`interactive_gap_us`, 1 ms: longer than the GPU is held for
//! a vGPU, `idle_threshold_us`, because the guest's answer is late by
//! however long its vCPU waits for a host CPU, which coscheduling is there
//! to remove; far shorter than a frame's think time). A vGPU with more than `calls` round trips in
//! a window of 10 ms *of its own GPU time* is interactive from that moment
//! to the end of the next window (the classification of a complete window
//! holds through the one after it, so a steady pattern stays classified
//! across window edges). `calls` = 0 classifies every vGPU as interactive.
//!
//! The window counts the vGPU's GPU time, not wall time, because on a
//! shared GPU the rate of a vGPU's round trips is set by how soon the
//! scheduler serves it: a synchronous client that waits for a neighbour's
//! 5 ms batch after each of its own makes two round trips per 10 ms of
//! wall time, and counted that way it would never be classified, never be
//! held for, and so stay slow. Per 10 ms of its own GPU time its round
//! trips measure the workload itself, as FairGV's profile of each program
//! run alone (Table 3) does.

/// The classification window: 10 ms of the vGPU's GPU time (FairGV's 10 ms).
pub(crate) const WINDOW_NS: u64 = 10_000_000;

/// Classifier state of one vGPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Interact {
    /// When its last workload completed leaving nothing queued or in flight.
    idle_at: Option<u64>,
    /// GPU time of the vGPU in the current window, ns.
    served: u64,
    /// Round trips in the current window.
    trips: u32,
    /// Classification of the last complete window.
    last: bool,
    /// Round trips since creation.
    pub(crate) total: u64,
}

impl Interact {
    /// No history.
    pub(crate) const NEW: Self = Self {
        idle_at: None,
        served: 0,
        trips: 0,
        last: false,
        total: 0,
    };

    /// The vGPU's last workload completed at `now`; nothing is queued or in
    /// flight.
    pub(crate) fn idle(&mut self, now: u64) {
        self.idle_at = Some(now);
    }

    /// The vGPU queued work at `now` with nothing queued or in flight:
    /// whether that is a round trip (it went idle at most `gap_ns` before).
    pub(crate) fn woke(&mut self, now: u64, gap_ns: u64) -> bool {
        let trip = self
            .idle_at
            .take()
            .is_some_and(|t| now >= t && now.saturating_sub(t) <= gap_ns);
        if trip {
            self.trips = self.trips.saturating_add(1);
            self.total = self.total.saturating_add(1);
        }
        trip
    }

    /// The vGPU used `gpu_ns` more of GPU time: closes the windows that
    /// this completes, for a threshold of `calls` round trips per window.
    pub(crate) fn served(&mut self, gpu_ns: u64, calls: u32) {
        self.served = self.served.saturating_add(gpu_ns);
        if self.served < WINDOW_NS {
            return;
        }
        // Only the round trips of the first window closed are known; any
        // further windows this one workload spans had none.
        let closed = self.served / WINDOW_NS;
        self.last = closed == 1 && self.trips > calls;
        self.served %= WINDOW_NS;
        self.trips = 0;
    }

    /// Whether the vGPU is interactive for a threshold of `calls` round
    /// trips per window.
    pub(crate) fn interactive(&self, calls: u32) -> bool {
        calls == 0 || self.last || self.trips > calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    /// `n` round trips of `svc` of GPU time each, with a `gap` between a
    /// completion and the next submission.
    fn trips(c: &mut Interact, n: u64, svc: u64, gap: u64, calls: u32) {
        let mut t = 0;
        for _ in 0..n {
            t += svc;
            c.served(svc, calls);
            c.idle(t);
            t += gap;
            c.woke(t, 200 * US);
            // Waiting for a neighbour's batch after the submission.
            t += 5 * MS;
        }
    }

    #[test]
    fn more_than_ten_round_trips_per_10ms_of_gpu_time_is_interactive() {
        // FairGV's Fig. 11 foreground: a 207 us kernel, 20 us of CPU.
        let mut c = Interact::NEW;
        assert!(!c.interactive(10));
        trips(&mut c, 11, 207 * US, 20 * US, 10);
        // 11 round trips in the first 2.3 ms of GPU time: classified at once.
        assert!(c.interactive(10));
        // Every round trip waits 5 ms for a neighbour's batch, so it makes
        // two per 10 ms of wall time; per 10 ms of its own GPU time, 48.
        trips(&mut c, 500, 207 * US, 20 * US, 10);
        assert!(c.interactive(10));
        assert_eq!(c.total, 511);
        // It turns into a batch: interactive until the next window closes
        // without round trips, then not.
        c.served(10 * MS, 10);
        assert!(c.interactive(10));
        c.served(10 * MS, 10);
        assert!(!c.interactive(10));
        // Exactly 10 per window is not more than 10.
        let mut d = Interact::NEW;
        trips(&mut d, 100, MS, 20 * US, 10);
        assert!(!d.interactive(10));
        let mut e = Interact::NEW;
        trips(&mut e, 100, MS, 20 * US, 9);
        assert!(e.interactive(9));
    }

    #[test]
    fn a_long_think_time_is_no_round_trip() {
        // The frame vGPU of the interactive scenario: 1 ms of GPU, 15 ms
        // of think time: never a round trip, never interactive.
        let mut c = Interact::NEW;
        trips(&mut c, 100, MS, 15 * MS, 10);
        assert_eq!(c.total, 0);
        assert!(!c.interactive(10));
        // ... except with calls = 0 (every vGPU counts as interactive).
        assert!(c.interactive(0));
        // A submission without a completion before it is no round trip.
        let mut d = Interact::NEW;
        assert!(!d.woke(5 * MS, 200 * US));
        // Nor is a clock that went backwards.
        d.idle(9 * MS);
        assert!(!d.woke(8 * MS, 200 * US));
        d.idle(9 * MS);
        assert!(d.woke(9 * MS + 200 * US, 200 * US));
        assert_eq!(d.total, 1);
    }
}
