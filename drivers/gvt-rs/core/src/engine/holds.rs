// SPDX-License-Identifier: GPL-2.0

//! How long a lock was held: the distribution of its holds, and apart from
//! the rest the holds through which the holder ran.
//!
//! A hold timed by the clock includes every moment the holder did not run:
//! a sleeping or preempted holder keeps the lock, and in a virtual machine
//! the host may stop the vCPU. Whether the holder was switched out during
//! a hold (its context-switch count moved) is known to the kernel, so a hold
//! is recorded with it: the longest hold through which the holder ran is
//! the lock's own cost; the longest of all is what a waiter may meet. The
//! distribution is the histogram of submit-to-dispatch latencies
//! (`sched/lathist.rs`: 1 us buckets below 8 us, then within 1/16) with
//! 64-bit counts. The record is kept under the lock it describes.

// `super::super`, not `crate`: the kernel builds the core as a module of
// gvt_rs, the host as a crate of its own.
use super::super::sched::lathist::{
    bucket,
    quantile_ns,
    LAT_BUCKETS, //
};

/// The holds of one lock.
#[derive(Clone, Debug)]
pub struct HoldStats {
    count: [u64; LAT_BUCKETS],
    holds: u64,
    switched_out: u64,
    max_ns: u64,
    max_running_ns: u64,
}

/// What [`HoldStats::summary`] reports of a lock's holds, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoldSummary {
    /// Holds recorded.
    pub holds: u64,
    /// Holds during which the holder was switched out (it slept or was
    /// preempted while holding the lock).
    pub switched_out: u64,
    /// Median hold (within 1/16 above 8 us, 0.5 us below).
    pub p50_ns: u64,
    /// 99th percentile hold.
    pub p99_ns: u64,
    /// 99.9th percentile hold.
    pub p999_ns: u64,
    /// The longest hold.
    pub max_ns: u64,
    /// The longest hold through which the holder ran (not switched out).
    pub max_running_ns: u64,
}

impl HoldStats {
    /// No hold recorded.
    pub const EMPTY: Self = Self {
        count: [0; LAT_BUCKETS],
        holds: 0,
        switched_out: 0,
        max_ns: 0,
        max_running_ns: 0,
    };

    /// Records a hold of `ns`; `switched_out` if the holder was switched
    /// out meanwhile.
    pub fn record(&mut self, ns: u64, switched_out: bool) {
        // `bucket` is at most the last bucket, the overflow one.
        if let Some(c) = self.count.get_mut(bucket(ns)) {
            *c = c.saturating_add(1);
        }
        self.holds = self.holds.saturating_add(1);
        self.max_ns = self.max_ns.max(ns);
        if switched_out {
            self.switched_out = self.switched_out.saturating_add(1);
        } else {
            self.max_running_ns = self.max_running_ns.max(ns);
        }
    }

    /// The holds so far.
    pub fn summary(&self) -> HoldSummary {
        let q = |num, den| quantile_ns(self.count.iter().copied(), num, den, self.max_ns);
        HoldSummary {
            holds: self.holds,
            switched_out: self.switched_out,
            p50_ns: q(50, 100),
            p99_ns: q(99, 100),
            p999_ns: q(999, 1000),
            max_ns: self.max_ns,
            max_running_ns: self.max_running_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_recorded_reads_zero() {
        assert_eq!(HoldStats::EMPTY.summary(), HoldSummary::default());
    }

    #[test]
    fn a_switched_out_hold_counts_apart_from_the_running_ones() {
        let mut h = HoldStats::EMPTY;
        // 998 holds of 2-3 us, one of 40 us run through, one of 30 ms
        // during which the holder was preempted.
        for i in 0..998u64 {
            h.record(2_000 + i, false);
        }
        h.record(40_000, false);
        h.record(30_000_000, true);
        let s = h.summary();
        assert_eq!(s.holds, 1000);
        assert_eq!(s.switched_out, 1);
        assert_eq!(s.max_ns, 30_000_000);
        assert_eq!(s.max_running_ns, 40_000);
        // 1 us buckets below 8 us: the middles of [2, 3) and [2, 3) us.
        assert_eq!(s.p50_ns, 2_500);
        assert_eq!(s.p99_ns, 2_500);
        // The 999th of 1000 is the 40 us hold: its bucket, [40, 44) us.
        assert_eq!(s.p999_ns, 42_000);
    }

    #[test]
    fn quantiles_stay_within_the_largest_hold() {
        let mut h = HoldStats::EMPTY;
        h.record(100_100, false);
        let s = h.summary();
        // The bucket [96, 104) us has its middle at 100 us, below the hold.
        assert_eq!((s.p50_ns, s.p999_ns, s.max_ns), (100_000, 100_000, 100_100));
        // Past 33.5 s the overflow bucket reports the longest hold.
        h.record(60_000_000_000, true);
        assert_eq!(h.summary().p999_ns, 60_000_000_000);
        assert_eq!(h.summary().max_running_ns, 100_100);
    }
}
