// SPDX-License-Identifier: GPL-2.0

//! DymGPU's monitor: per-vGPU utilization window, last activity (for the
//! idle rule) and switch-in rate (for the `cost` allocator).

use super::config::UTIL_WINDOW_MAX;

/// Largest utilization sample: 100 % in parts per million.
pub const UTIL_FULL_PPM: u32 = 1_000_000;

/// Fixed-point scale of switch-in rates (1 switch-in per period = 16).
pub(crate) const FREQ_ONE: u32 = 16;

const RING: usize = UTIL_WINDOW_MAX as usize;

/// Per-vGPU monitor state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Monitor {
    samples: [u32; RING],
    head: usize,
    count: usize,
    last_active_ms: u64,
    switches_period: u32,
    freq: u32,
    periods: u32,
}

impl Monitor {
    pub(crate) const fn new(now_ms: u64) -> Self {
        Monitor {
            samples: [0; RING],
            head: 0,
            count: 0,
            last_active_ms: now_ms,
            switches_period: 0,
            freq: 0,
            periods: 0,
        }
    }

    /// Records one utilization sample (already range-checked).
    pub(crate) fn sample(&mut self, ppm: u32, now_ms: u64) {
        // `head` wraps below `RING`, the ring's length.
        if let Some(s) = self.samples.get_mut(self.head) {
            *s = ppm;
        }
        self.head = self.head.saturating_add(1);
        if self.head >= RING {
            self.head = 0;
        }
        if self.count < RING {
            self.count = self.count.saturating_add(1);
        }
        if ppm > 0 {
            self.active(now_ms);
        }
    }

    /// Average of the last `window` samples, in ppm (0 without samples).
    pub(crate) fn average(&self, window: u32) -> u32 {
        let n = self.count.min(usize::try_from(window).unwrap_or(RING));
        if n == 0 {
            return 0;
        }
        let mut sum: u64 = 0;
        let mut i = self.head;
        for _ in 0..n {
            i = if i == 0 {
                RING.saturating_sub(1)
            } else {
                i.saturating_sub(1)
            };
            sum = sum.saturating_add(u64::from(self.samples.get(i).copied().unwrap_or(0)));
        }
        let avg = sum.checked_div(u64::try_from(n).unwrap_or(1)).unwrap_or(0);
        u32::try_from(avg).unwrap_or(UTIL_FULL_PPM)
    }

    /// Marks the vGPU used at `now_ms`.
    pub(crate) fn active(&mut self, now_ms: u64) {
        if now_ms > self.last_active_ms {
            self.last_active_ms = now_ms;
        }
    }

    pub(crate) fn last_active_ms(&self) -> u64 {
        self.last_active_ms
    }

    /// Counts a switch-in.
    pub(crate) fn note_switch(&mut self, now_ms: u64) {
        self.switches_period = self.switches_period.saturating_add(1);
        self.active(now_ms);
    }

    /// Ends a re-placement period: folds its switch-ins into the rate (an
    /// exponential average with weight 1/2; the first period is taken as is).
    pub(crate) fn roll_period(&mut self) {
        let cur = self.switches_period.saturating_mul(FREQ_ONE);
        self.freq = if self.periods == 0 {
            cur
        } else {
            (self.freq / 2).saturating_add(cur / 2)
        };
        self.periods = self.periods.saturating_add(1);
        self.switches_period = 0;
    }

    /// Switch-in rate for the cost model (always at least 1), or `None`
    /// before the first full period.
    pub(crate) fn freq(&self) -> Option<u32> {
        if self.periods == 0 {
            None
        } else {
            Some(self.freq.saturating_add(1))
        }
    }
}
