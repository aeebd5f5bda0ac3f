// SPDX-License-Identifier: GPL-2.0

//! Allocator selection and run-time tunables, with strict validation.
//!
//! Every setter checks its argument and changes nothing on error, so the
//! kernel can map the result straight onto a sysfs `store` return value.
//! The [`SlotPool`] setters, which add the pool's own rules (no allocator
//! change while vGPUs exist), are here with them.

use super::pool::SlotPool;
use super::stats::CopyStats;
use super::Error;

/// Most utilization samples a vGPU keeps (the averaging window is at most
/// this many sample periods long).
pub const UTIL_WINDOW_MAX: u32 = 64;

/// Which placement algorithm the pool uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatorKind {
    /// Upstream GVT-g: every vGPU gets an exclusive range (first fit); a
    /// vGPU that does not fit is refused with [`Error::NoSpace`].
    Static,
    /// gScale: per-slot score = number of occupants times a large weight;
    /// the contiguous window with the lowest score wins, leftmost on ties.
    /// Never moves a vGPU.
    Gscale,
    /// DymGPU size-based (Algorithm 1) with its create, destroy and idle rules.
    DymSize,
    /// DymGPU utilization-based (Algorithm 2), re-run every re-placement period.
    DymUtil,
    /// gvt-rs cost-aware placement: minimizes a model of slot copies per
    /// period built from each vGPU's measured switch-in rate, with a penalty
    /// for moving a vGPU (see `Documentation/gvt-rs/gm-slots.rst`).
    Cost,
}

impl AllocatorKind {
    /// Every allocator, in the order sysfs lists them.
    pub const ALL: [AllocatorKind; 5] = [
        AllocatorKind::Static,
        AllocatorKind::Gscale,
        AllocatorKind::DymSize,
        AllocatorKind::DymUtil,
        AllocatorKind::Cost,
    ];

    /// The name used in sysfs and by the simulator.
    pub const fn name(self) -> &'static str {
        match self {
            AllocatorKind::Static => "static",
            AllocatorKind::Gscale => "gscale",
            AllocatorKind::DymSize => "dymgpu-size",
            AllocatorKind::DymUtil => "dymgpu-util",
            AllocatorKind::Cost => "cost",
        }
    }

    /// Parses a name exactly as [`AllocatorKind::name`] prints it. One
    /// trailing newline (as `echo` writes to sysfs) is accepted; anything
    /// else is [`Error::Invalid`].
    pub fn from_name(s: &[u8]) -> Result<AllocatorKind, Error> {
        let s = match s.split_last() {
            Some((b'\n', rest)) => rest,
            _ => s,
        };
        AllocatorKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().as_bytes() == s)
            .ok_or(Error::Invalid)
    }

    /// Whether this allocator lets vGPUs share slots.
    pub const fn shares(self) -> bool {
        !matches!(self, AllocatorKind::Static)
    }
}

/// Run-time tunables. Read them with the getters; change them only through
/// the validated setters (or the pool's wrappers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    sample_period_ms: u32,
    util_window_ms: u32,
    idle_threshold_ms: u32,
    replace_period_ms: u32,
    relocation: bool,
    move_penalty_pct: u32,
}

impl Default for Tunables {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Tunables {
    /// The paper's values: sample every 1 s, average over 20 s, idle after
    /// 20 s, re-place every 20 s; relocation allowed; move penalty 200 %.
    pub const DEFAULT: Tunables = Tunables {
        sample_period_ms: 1000,
        util_window_ms: 20_000,
        idle_threshold_ms: 20_000,
        replace_period_ms: 20_000,
        relocation: true,
        move_penalty_pct: 200,
    };

    /// Smallest sample period, in ms.
    pub const SAMPLE_PERIOD_MIN_MS: u32 = 10;
    /// Largest sample period, in ms.
    pub const SAMPLE_PERIOD_MAX_MS: u32 = 60_000;
    /// Smallest idle threshold or re-placement period (other than 0 for
    /// "off" where allowed), in ms.
    pub const PERIOD_MIN_MS: u32 = 1000;
    /// Largest idle threshold or re-placement period, in ms (one day).
    pub const PERIOD_MAX_MS: u32 = 86_400_000;
    /// Largest move penalty, in percent of the moved vGPU's slots.
    pub const MOVE_PENALTY_MAX_PCT: u32 = 10_000;

    /// How often the caller samples utilization, in ms (default 1000).
    pub const fn sample_period_ms(&self) -> u32 {
        self.sample_period_ms
    }

    /// [`Tunables::sample_period_ms`] in ns, the unit of the pool's `now`.
    pub fn sample_period_ns(&self) -> u64 {
        u64::from(self.sample_period_ms).saturating_mul(1_000_000)
    }

    /// Utilization averaging window, in ms (default 20 000).
    pub const fn util_window_ms(&self) -> u32 {
        self.util_window_ms
    }

    /// Idle threshold in ms (default 20 000; 0 = never park idle vGPUs).
    pub const fn idle_threshold_ms(&self) -> u32 {
        self.idle_threshold_ms
    }

    /// Periodic re-placement interval in ms (default 20 000).
    pub const fn replace_period_ms(&self) -> u32 {
        self.replace_period_ms
    }

    /// Whether allocators may move already placed vGPUs (default true).
    /// The i915 provider must set this to false: upstream guests learn
    /// their GM range once from PVINFO and cannot follow a move.
    pub const fn relocation(&self) -> bool {
        self.relocation
    }

    /// Penalty for moving a vGPU in the `cost` allocator, in percent of the
    /// vGPU's slots per move (default 200: the relocation copy plus the
    /// refill on its next switch-in).
    pub const fn move_penalty_pct(&self) -> u32 {
        self.move_penalty_pct
    }

    /// Number of samples in the averaging window (at least 1).
    pub const fn window_samples(&self) -> u32 {
        match self.util_window_ms.checked_div(self.sample_period_ms) {
            Some(0) | None => 1,
            Some(n) => n,
        }
    }

    fn check_window(sample_ms: u32, window_ms: u32) -> Result<(), Error> {
        if window_ms < sample_ms {
            return Err(Error::OutOfRange);
        }
        match window_ms.checked_div(sample_ms) {
            Some(n) if (1..=UTIL_WINDOW_MAX).contains(&n) => Ok(()),
            _ => Err(Error::OutOfRange),
        }
    }

    /// Sets the sample period. Range 10..=60 000 ms, and the window must
    /// stay between 1 and [`UTIL_WINDOW_MAX`] samples.
    pub fn set_sample_period_ms(&mut self, ms: u32) -> Result<(), Error> {
        if !(Self::SAMPLE_PERIOD_MIN_MS..=Self::SAMPLE_PERIOD_MAX_MS).contains(&ms) {
            return Err(Error::OutOfRange);
        }
        Self::check_window(ms, self.util_window_ms)?;
        self.sample_period_ms = ms;
        Ok(())
    }

    /// Sets the averaging window: at least one sample period, at most
    /// [`UTIL_WINDOW_MAX`] sample periods.
    pub fn set_util_window_ms(&mut self, ms: u32) -> Result<(), Error> {
        Self::check_window(self.sample_period_ms, ms)?;
        self.util_window_ms = ms;
        Ok(())
    }

    /// Sets the idle threshold: 0 (off) or 1000..=86 400 000 ms.
    pub fn set_idle_threshold_ms(&mut self, ms: u32) -> Result<(), Error> {
        if ms != 0 && !(Self::PERIOD_MIN_MS..=Self::PERIOD_MAX_MS).contains(&ms) {
            return Err(Error::OutOfRange);
        }
        self.idle_threshold_ms = ms;
        Ok(())
    }

    /// Sets the re-placement period: 1000..=86 400 000 ms.
    pub fn set_replace_period_ms(&mut self, ms: u32) -> Result<(), Error> {
        if !(Self::PERIOD_MIN_MS..=Self::PERIOD_MAX_MS).contains(&ms) {
            return Err(Error::OutOfRange);
        }
        self.replace_period_ms = ms;
        Ok(())
    }

    /// Allows or forbids moving placed vGPUs.
    pub fn set_relocation(&mut self, on: bool) {
        self.relocation = on;
    }

    /// Sets the `cost` allocator's move penalty: 0..=10 000 %.
    pub fn set_move_penalty_pct(&mut self, pct: u32) -> Result<(), Error> {
        if pct > Self::MOVE_PENALTY_MAX_PCT {
            return Err(Error::OutOfRange);
        }
        self.move_penalty_pct = pct;
        Ok(())
    }
}

impl<const V: usize, const M: usize> SlotPool<V, M> {
    /// Selects the allocator. Only while no vGPU exists (`Busy` otherwise),
    /// since placements made by one allocator break another's rules.
    pub fn set_allocator(&mut self, kind: AllocatorKind) -> Result<(), Error> {
        if self.in_use() != 0 {
            return Err(Error::Busy);
        }
        self.kind = kind;
        self.anchor = None;
        Ok(())
    }

    /// Changes the pool size and the shared low-GM region at run time, for
    /// providers that learn them only when the GPU appears (the kernel
    /// builds the pool for `M` slots at compile time, then shrinks it).
    /// Only while no vGPU exists (`Busy`); `OutOfRange` unless
    /// `1 <= slots <= M`. Residency and copy totals start afresh.
    pub fn reconfigure(&mut self, slots: u16, low_entries: u32) -> Result<(), Error> {
        if self.in_use() != 0 {
            return Err(Error::Busy);
        }
        if slots == 0 || usize::from(slots) > M {
            return Err(Error::OutOfRange);
        }
        self.m = slots;
        self.low_entries = low_entries;
        self.anchor = None;
        self.forget_residency();
        self.totals = CopyStats::ZERO;
        Ok(())
    }

    /// See [`Tunables::set_sample_period_ms`].
    pub fn set_sample_period_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_sample_period_ms(ms)
    }

    /// See [`Tunables::set_util_window_ms`].
    pub fn set_util_window_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_util_window_ms(ms)
    }

    /// See [`Tunables::set_idle_threshold_ms`].
    pub fn set_idle_threshold_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_idle_threshold_ms(ms)
    }

    /// See [`Tunables::set_replace_period_ms`].
    pub fn set_replace_period_ms(&mut self, ms: u32) -> Result<(), Error> {
        self.tun.set_replace_period_ms(ms)
    }

    /// See [`Tunables::set_relocation`].
    pub fn set_relocation(&mut self, on: bool) {
        self.tun.set_relocation(on);
    }

    /// See [`Tunables::set_move_penalty_pct`].
    pub fn set_move_penalty_pct(&mut self, pct: u32) -> Result<(), Error> {
        self.tun.set_move_penalty_pct(pct)
    }
}
