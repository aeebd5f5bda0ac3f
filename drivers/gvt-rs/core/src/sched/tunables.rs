// SPDX-License-Identifier: GPL-2.0

//! Run-time tunables of a GPU's scheduler: ranges and defaults (the sysfs
//! file names are the engine's, `engine/sysfs.rs`).

use super::Error;

/// A run-time tunable of the whole GPU. Values are in the unit the name ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tunable {
    /// `tbs` timer period (upstream `GVT_DEFAULT_TIME_SLICE`), us.
    TbsTickUs,
    /// `tbs` balance period (`GVT_TS_BALANCE_PERIOD_MS`), ms.
    TbsBalanceMs,
    /// `tbs` balance stages per debt reset (`GVT_TS_BALANCE_STAGE_NUM`).
    TbsStages,
    /// `tbs` start-up priority window (`GVT_SCHED_VGPU_PRI_TIME`), ms.
    TbsStartBoostMs,
    /// `vmcg` slice ceiling given to the largest CPU demand, us.
    VmcgSliceCeilingUs,
    /// `vmcg` smallest slice (the zero-CPU-time starvation fix), us.
    VmcgMinSliceUs,
    /// `vmcg` credit pool `CREDIT` shared by Eq. 2.
    VmcgCreditPool,
    /// `vmcg` workloads dispatched per credit.
    VmcgBatch,
    /// `vmcg` PCI-E link bandwidth `BW` normalising `BW_i`, MB/s.
    VmcgLinkMbps,
    /// `vmcg` total graphics memory `MSIZE` normalising `MSIZE_i`, MB.
    VmcgGmTotalMb,
    /// `sfq` non-preemptive slice, us.
    SfqSliceUs,
    /// `sfq` wake-up rule: 1 = `S <- max(V, F)`, 0 = `S <- V` (paper).
    SfqWakeMaxVf,
    /// `sfq` wake-up preemption: 1 = a vGPU that wakes owed service ends
    /// the running vGPU's turn at the next workload boundary, 0 = it waits
    /// for the turn to end.
    SfqWakePreempt,
    /// Usage throttle on (1) or off (0), applies to every policy.
    Throttle,
    /// Throttle factor in percent of the least-served busy vGPU's usage.
    ThrottleFactorPct,
    /// Fairness window, ms.
    WindowMs,
    /// `sfq`/`eevdf`/`vmcg`: how long the running vGPU keeps the GPU after
    /// its queue empties, waiting for its next submission (FairGV's hybrid
    /// spinning; `eevdf` holds only for interactive vGPUs), us.
    IdleThresholdUs,
    /// Synchronous round trips per 10 ms of a vGPU's GPU time above which
    /// it is interactive (FairGV's classifier; 0: every vGPU is).
    InteractiveCalls,
    /// Longest completion-to-submission gap of a synchronous round trip, us.
    InteractiveGapUs,
    /// `eevdf` anticipation: longest time the GPU is held idle ahead of a
    /// light periodic vGPU's predicted submission (0: off), us.
    AnticipateUs,
}

const TUNABLES: usize = 20;

impl Tunable {
    /// Every tunable.
    pub const ALL: [Tunable; TUNABLES] = [
        Tunable::TbsTickUs,
        Tunable::TbsBalanceMs,
        Tunable::TbsStages,
        Tunable::TbsStartBoostMs,
        Tunable::VmcgSliceCeilingUs,
        Tunable::VmcgMinSliceUs,
        Tunable::VmcgCreditPool,
        Tunable::VmcgBatch,
        Tunable::VmcgLinkMbps,
        Tunable::VmcgGmTotalMb,
        Tunable::SfqSliceUs,
        Tunable::SfqWakeMaxVf,
        Tunable::SfqWakePreempt,
        Tunable::Throttle,
        Tunable::ThrottleFactorPct,
        Tunable::WindowMs,
        Tunable::IdleThresholdUs,
        Tunable::InteractiveCalls,
        Tunable::InteractiveGapUs,
        Tunable::AnticipateUs,
    ];

    /// Inclusive range of accepted values.
    pub const fn range(self) -> (u64, u64) {
        match self {
            Tunable::TbsTickUs => (100, 100_000),
            Tunable::TbsBalanceMs => (10, 10_000),
            Tunable::TbsStages => (1, 1000),
            Tunable::TbsStartBoostMs => (0, 60_000),
            Tunable::VmcgSliceCeilingUs => (1000, 1_000_000),
            Tunable::VmcgMinSliceUs => (100, 1_000_000),
            Tunable::VmcgCreditPool => (1, 1_000_000),
            Tunable::VmcgBatch => (1, 1024),
            Tunable::VmcgLinkMbps => (1, 1_000_000),
            Tunable::VmcgGmTotalMb => (1, 1 << 20),
            Tunable::SfqSliceUs => (100, 1_000_000),
            Tunable::SfqWakeMaxVf => (0, 1),
            Tunable::SfqWakePreempt => (0, 1),
            Tunable::Throttle => (0, 1),
            Tunable::ThrottleFactorPct => (100, 10_000),
            Tunable::WindowMs => (10, 60_000),
            Tunable::IdleThresholdUs => (0, 10_000),
            Tunable::InteractiveCalls => (0, 1000),
            Tunable::InteractiveGapUs => (0, 100_000),
            Tunable::AnticipateUs => (0, 10_000),
        }
    }

    /// Default value.
    pub const fn default_value(self) -> u64 {
        match self {
            Tunable::TbsTickUs => 1000,
            Tunable::TbsBalanceMs => 100,
            Tunable::TbsStages => 10,
            Tunable::TbsStartBoostMs => 2000,
            Tunable::VmcgSliceCeilingUs => 16_000,
            Tunable::VmcgMinSliceUs => 1000,
            Tunable::VmcgCreditPool => 100,
            Tunable::VmcgBatch => 4,
            // PCI-E 3.0 x16, one direction.
            Tunable::VmcgLinkMbps => 15_754,
            // GVT-g host: 4 GiB of global graphics memory.
            Tunable::VmcgGmTotalMb => 4096,
            Tunable::SfqSliceUs => 6000,
            Tunable::SfqWakeMaxVf => 1,
            Tunable::SfqWakePreempt => 1,
            Tunable::Throttle => 0,
            Tunable::ThrottleFactorPct => 200,
            Tunable::WindowMs => 1000,
            Tunable::IdleThresholdUs => 200,
            Tunable::InteractiveCalls => 10,
            Tunable::InteractiveGapUs => 1000,
            // Off: every existing result stays as it was.
            Tunable::AnticipateUs => 0,
        }
    }
}

/// Default tunables, indexed by `Tunable as usize` (the order of
/// [`Tunable::ALL`]). Spelled out so that [`Scheduler::new`] can be `const`.
const fn defaults() -> [u64; TUNABLES] {
    [
        Tunable::TbsTickUs.default_value(),
        Tunable::TbsBalanceMs.default_value(),
        Tunable::TbsStages.default_value(),
        Tunable::TbsStartBoostMs.default_value(),
        Tunable::VmcgSliceCeilingUs.default_value(),
        Tunable::VmcgMinSliceUs.default_value(),
        Tunable::VmcgCreditPool.default_value(),
        Tunable::VmcgBatch.default_value(),
        Tunable::VmcgLinkMbps.default_value(),
        Tunable::VmcgGmTotalMb.default_value(),
        Tunable::SfqSliceUs.default_value(),
        Tunable::SfqWakeMaxVf.default_value(),
        Tunable::SfqWakePreempt.default_value(),
        Tunable::Throttle.default_value(),
        Tunable::ThrottleFactorPct.default_value(),
        Tunable::WindowMs.default_value(),
        Tunable::IdleThresholdUs.default_value(),
        Tunable::InteractiveCalls.default_value(),
        Tunable::InteractiveGapUs.default_value(),
        Tunable::AnticipateUs.default_value(),
    ]
}

/// The current value of every tunable.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tunables([u64; TUNABLES]);

impl Tunables {
    /// Every tunable at its default.
    pub(super) const fn new() -> Self {
        Self(defaults())
    }

    /// Current value of `t`.
    pub(super) fn get(&self, t: Tunable) -> u64 {
        self.0.get(t as usize).copied().unwrap_or(0)
    }

    /// Sets `t`; [`Error::OutOfRange`] outside [`Tunable::range`] or when
    /// `slice_min_us` would exceed `slice_ceiling_us`.
    pub(super) fn set(&mut self, t: Tunable, val: u64) -> Result<(), Error> {
        let (lo, hi) = t.range();
        if val < lo || val > hi {
            return Err(Error::OutOfRange);
        }
        match t {
            Tunable::VmcgMinSliceUs if val > self.get(Tunable::VmcgSliceCeilingUs) => {
                return Err(Error::OutOfRange)
            }
            Tunable::VmcgSliceCeilingUs if val < self.get(Tunable::VmcgMinSliceUs) => {
                return Err(Error::OutOfRange)
            }
            _ => {}
        }
        // Every `Tunable` indexes the table (`TUNABLES` of them).
        if let Some(slot) = self.0.get_mut(t as usize) {
            *slot = val;
        }
        Ok(())
    }

    /// A tunable in microseconds, in ns.
    pub(super) fn us(&self, t: Tunable) -> u64 {
        self.get(t).saturating_mul(1000)
    }

    /// A tunable in milliseconds, in ns.
    pub(super) fn ms(&self, t: Tunable) -> u64 {
        self.get(t).saturating_mul(1_000_000)
    }
}
