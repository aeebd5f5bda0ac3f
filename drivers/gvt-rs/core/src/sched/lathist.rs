// SPDX-License-Identifier: GPL-2.0

//! Submit-to-dispatch latency histogram with log-linear buckets.
//!
//! Latencies are counted in microseconds. Below [`SUB`] us every
//! microsecond has its own bucket; above, each power of two `[2^k,
//! 2^(k+1))` is split into [`SUB`] equal buckets of width `2^(k-3)`, up to
//! `2^25` us (33.5 s); one last bucket holds everything longer. A
//! percentile is reported as the middle of the bucket that holds it
//! (clamped to the largest latency seen), so it is within `1/16` (6.25%)
//! of the true value above 8 us and within 0.5 us below. Fixed size, no
//! allocation: [`LAT_BUCKETS`] counters per vGPU.

/// Sub-buckets per power of two (a power of two itself).
pub(crate) const SUB: u64 = 8;
const SUB_BITS: u32 = 3;
/// Largest power of two of microseconds with its own buckets (exclusive).
const TOP: u32 = 25;

/// Buckets of the histogram: the linear ones below 8 us, 8 per
/// power of two from `2^3` to `2^24` us, and one for everything longer.
pub const LAT_BUCKETS: usize = (SUB as usize) * (1 + (TOP - SUB_BITS) as usize) + 1;

const OVERFLOW: usize = LAT_BUCKETS - 1;

/// The bucket of a latency of `ns` nanoseconds.
pub(crate) const fn bucket(ns: u64) -> usize {
    let us = ns / 1000;
    if us < SUB {
        return us as usize;
    }
    let k = 63u32.saturating_sub(us.leading_zeros());
    if k >= TOP {
        return OVERFLOW;
    }
    let shift = k.saturating_sub(SUB_BITS);
    let sub = ((us >> shift) & (SUB - 1)) as usize;
    let octave = (k.saturating_sub(SUB_BITS) as usize).saturating_add(1);
    octave.saturating_mul(SUB as usize).saturating_add(sub)
}

/// Lower bound and width of bucket `b` in microseconds (`None` for the
/// overflow bucket and out-of-range indices).
pub(crate) const fn bounds_us(b: usize) -> Option<(u64, u64)> {
    if b >= OVERFLOW {
        return None;
    }
    let sub = SUB as usize;
    if b < sub {
        return Some((b as u64, 1));
    }
    // b >= 8: octave 1 is [8, 16) us.
    let (Some(octave), Some(j)) = (b.checked_div(sub), b.checked_rem(sub)) else {
        return None;
    };
    let shift = (octave as u32).saturating_sub(1);
    Some(((SUB | j as u64) << shift, 1 << shift))
}

/// Counts of one vGPU's latencies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LatHist {
    count: [u32; LAT_BUCKETS],
}

impl LatHist {
    /// No latency recorded.
    pub(crate) const EMPTY: Self = Self {
        count: [0; LAT_BUCKETS],
    };

    /// Records one latency.
    pub(crate) fn record(&mut self, ns: u64) {
        // `bucket` is at most `OVERFLOW`, the last bucket.
        if let Some(c) = self.count.get_mut(bucket(ns)) {
            *c = c.saturating_add(1);
        }
    }

    /// The `pct`-th percentile (nearest rank) in ns: the middle of the
    /// bucket that holds it, at most `max_ns`; 0 when nothing was recorded.
    pub(crate) fn percentile_ns(&self, pct: u64, max_ns: u64) -> u64 {
        quantile_ns(self.count.iter().map(|&c| u64::from(c)), pct, 100, max_ns)
    }
}

/// The quantile `num / den` (nearest rank, `num <= den`) in ns of a
/// histogram given as its bucket counts: the middle of the bucket that
/// holds it, at most `max_ns` (the largest value recorded, which the
/// overflow bucket reports); 0 when nothing was recorded.
pub(crate) fn quantile_ns<I>(counts: I, num: u64, den: u64, max_ns: u64) -> u64
where
    I: Iterator<Item = u64> + Clone,
{
    let total = counts.clone().fold(0, u64::saturating_add);
    if total == 0 || den == 0 {
        return 0;
    }
    let want = total.saturating_mul(num.min(den)).div_ceil(den).max(1);
    let mut acc: u64 = 0;
    for (b, c) in counts.enumerate() {
        acc = acc.saturating_add(c);
        if acc >= want {
            return match bounds_us(b) {
                Some((lo, w)) => lo
                    .saturating_mul(1000)
                    .saturating_add(w.saturating_mul(500))
                    .min(max_ns),
                None => max_ns,
            };
        }
    }
    max_ns
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::vec::Vec;

    #[test]
    fn buckets_tile_the_range() {
        assert_eq!(LAT_BUCKETS, 185);
        // Every bucket starts where the previous one ends.
        let mut next = 0;
        for b in 0..OVERFLOW {
            let (lo, w) = bounds_us(b).unwrap();
            assert_eq!(lo, next, "bucket {b}");
            assert!(w * SUB <= lo.max(SUB), "bucket {b}: width {w} at {lo}");
            assert_eq!(bucket(lo * 1000), b);
            assert_eq!(bucket((lo + w) * 1000 - 1), b);
            next = lo + w;
        }
        assert_eq!(next, 1 << TOP);
        assert_eq!(bucket((1 << TOP) * 1000), OVERFLOW);
        assert_eq!(bucket(u64::MAX), OVERFLOW);
        assert_eq!(bounds_us(OVERFLOW), None);
        // Spot values: 1.2 ms lies in [1152, 1280) us.
        assert_eq!(bounds_us(bucket(1_200_000)), Some((1152, 128)));
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(7_999), 7);
        assert_eq!(bounds_us(bucket(8_000)), Some((8, 1)));
    }

    #[test]
    fn percentiles_within_a_sixteenth() {
        // Every value from 8 us to 40 s (in steps that cross many buckets)
        // is reported within 1/16 when it is the only one.
        let mut v: u64 = 8_000;
        while v < 40_000_000_000 {
            let mut h = LatHist::EMPTY;
            h.record(v);
            let p = h.percentile_ns(99, v);
            assert!(p.abs_diff(v) * 16 <= v, "{v}: {p}");
            v = v * 9 / 8 + 777;
        }
        // Below 8 us: within half a microsecond.
        let mut h = LatHist::EMPTY;
        h.record(1_200);
        assert_eq!(h.percentile_ns(50, 1_200), 1_200);
        h.record(3_100);
        assert_eq!(h.percentile_ns(100, 5_000), 3_500);
        assert_eq!(LatHist::EMPTY.percentile_ns(99, 0), 0);
    }

    #[test]
    fn nearest_rank_over_a_distribution() {
        // 1..=1000 ms: p50 = 500 ms, p99 = 990 ms, each within 1/16.
        let mut h = LatHist::EMPTY;
        let all: Vec<u64> = (1..=1000u64).map(|i| i * 1_000_000).collect();
        for &x in all.iter().rev() {
            h.record(x);
        }
        let max = 1_000_000_000;
        for (pct, want) in [(50, 500_000_000u64), (99, 990_000_000), (1, 10_000_000)] {
            let p = h.percentile_ns(pct, max);
            assert!(p.abs_diff(want) * 16 <= want, "p{pct}: {p} vs {want}");
        }
        // The 1000 ms bucket's middle (1015.8 ms) is past the largest seen.
        assert_eq!(h.percentile_ns(100, u64::MAX), 1_015_808_000);
        assert_eq!(h.percentile_ns(100, max), max);
        // Past 33.5 s the overflow bucket reports the maximum seen.
        let mut o = LatHist::EMPTY;
        o.record(60_000_000_000);
        assert_eq!(o.percentile_ns(99, 60_000_000_000), 60_000_000_000);
    }
}
