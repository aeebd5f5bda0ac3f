// SPDX-License-Identifier: GPL-2.0

//! vGPU scheduling policies: upstream TBS, VMCG credits and slices, FairGV
//! SFQ, and EEVDF-style latency-aware fair queueing.
//!
//! One [`Scheduler`] per physical GPU holds up to `N` vGPUs (ids `0..N`,
//! `N <= 256`) and one of four [`Policy`]s, switchable at run time, plus an
//! optional usage throttle. It is a pure state machine: events in, decisions
//! out, time passed in as `u64` nanoseconds of a monotonic clock. It never
//! allocates, sleeps, takes locks, panics or uses floating point, so the
//! kernel holds it under one lock (`gvt->sched_lock`, a mutex, or a spinlock
//! taken from any context) and calls it with that lock held.
//!
//! # How the kernel drives it
//!
//! | event | call |
//! |---|---|
//! | mdev created / removed | [`Scheduler::create`] / [`Scheduler::destroy`] |
//! | vGPU activated / deactivated (`start_schedule` / `stop_schedule`) | [`Scheduler::start`] / [`Scheduler::stop`] |
//! | workload queued on engine `e` (`intel_vgpu_queue_workload`) | [`Scheduler::queued`], then kick the scheduler if [`Scheduler::need_resched`] |
//! | engine thread looking for work (`pick_next_workload`) | [`Scheduler::next_vgpu`]; `Some(id)`: take the head of `id`'s queue on that engine and report [`Scheduler::dispatched`] |
//! | workload completed with measured GPU time | [`Scheduler::completed`] |
//! | all engines idle and [`Scheduler::need_resched`] (`try_to_schedule_next_vgpu`) | [`Scheduler::pick`]: switch to the returned vGPU (or idle) |
//! | timer (hrtimer at [`Scheduler::next_timer`], or a periodic 1 ms tick) | [`Scheduler::tick`] |
//! | VM CPU time sampled / bytes moved | [`Scheduler::cpu_time`] / [`Scheduler::transferred`] |
//! | sysfs | [`Scheduler::set_policy`], [`Scheduler::set_tunable`], [`Scheduler::set_weight`], [`Scheduler::stats`], [`Scheduler::fairness`] |
//!
//! Switching is non-preemptive like GVT-g's: [`Scheduler::next_vgpu`] stops
//! handing out work once the current turn is over, and [`Scheduler::pick`]
//! refuses with [`Error::Busy`] while any workload is in flight.
//!
//! Cost: every call is O(1) or O(log N) except where noted: `tbs`'s pick
//! walks its LRU list (O(N), as upstream), `vmcg` sorts the backlogged vGPUs
//! once per round (O(k log k), amortised over the k turns of the round), the
//! throttle scans the backlogged set (O(N)), `eevdf`'s pick and wake-up
//! test scan the active vGPUs (O(N)), and lifecycle, policy and
//! fairness-window changes are O(N).

mod bitmap;
mod fixed;
mod gvtg;
mod heap;
mod interact;
mod lathist;
pub mod metrics;
mod sfq;
mod tbs;
mod throttle;
mod vchannel;
mod vmcg;
mod withheld;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_gvtg;

use bitmap::{Bitmap, BITS};
use fixed::{mul_div_sat, vdiff, PPM};
pub use gvtg::GvtgSwitch;
pub use lathist::LAT_BUCKETS;
pub use metrics::Fairness;
use sfq::Sfq;
pub use sfq::{WakeRule, VSCALE};
use tbs::{Target, Tbs};
use throttle::Throttle;
pub use vchannel::MAX_ENGINES;
use vchannel::{Life, Vgpu};
use vmcg::{Vmcg, VmcgCfg};
use withheld::Withheld;

/// Largest supported number of vGPUs per scheduler.
pub const MAX_VGPUS: usize = BITS;

/// Smallest and largest vGPU weight (the range of cgroup v2 `cpu.weight`;
/// GVT-g's types use 2, 4, 8 and 16).
pub const WEIGHT_RANGE: (u32, u32) = (1, 10_000);

/// Error of a rejected call; nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Malformed request: unknown id or engine, wrong lifecycle state (`-EINVAL`).
    Invalid,
    /// Value outside its documented range (`-ERANGE`).
    OutOfRange,
    /// Not now: the object is in use (`-EBUSY`).
    Busy,
}

impl Error {
    /// The positive errno the kernel returns negated.
    pub const fn errno(self) -> i32 {
        match self {
            Error::Invalid => 22,
            Error::OutOfRange => 34,
            Error::Busy => 16,
        }
    }
}

/// Scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Upstream GVT-g's time-based scheduler (the baseline).
    Tbs,
    /// VMCG: credits from Eq. 2 and CPU-time-scaled slices.
    Vmcg,
    /// FairGV: start-time fair queueing on measured GPU time.
    Sfq,
    /// `sfq`'s tags and charges with EEVDF's choice (eligible vGPU with the
    /// earliest virtual deadline), deadline-based wake-up preemption and
    /// the GPU held idle only for interactive vGPUs.
    Eevdf,
}

impl Policy {
    /// Every policy, in sysfs listing order.
    pub const ALL: [Policy; 4] = [Policy::Tbs, Policy::Vmcg, Policy::Sfq, Policy::Eevdf];

    /// Name as shown and accepted by sysfs.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Tbs => "tbs",
            Policy::Vmcg => "vmcg",
            Policy::Sfq => "sfq",
            Policy::Eevdf => "eevdf",
        }
    }

    /// Whether the policy keeps `sfq`'s start tags (`sfq` and `eevdf`).
    pub const fn fair_queueing(self) -> bool {
        matches!(self, Policy::Sfq | Policy::Eevdf)
    }

    /// Parses a name (exact match; the caller strips a trailing newline).
    pub fn from_name(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == s)
    }
}

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
}

const TUNABLES: usize = 19;

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
    ];

    /// sysfs file name.
    pub const fn name(self) -> &'static str {
        match self {
            Tunable::TbsTickUs => "tbs_tick_us",
            Tunable::TbsBalanceMs => "tbs_balance_ms",
            Tunable::TbsStages => "tbs_stages",
            Tunable::TbsStartBoostMs => "tbs_start_boost_ms",
            Tunable::VmcgSliceCeilingUs => "slice_ceiling_us",
            Tunable::VmcgMinSliceUs => "slice_min_us",
            Tunable::VmcgCreditPool => "credit_pool",
            Tunable::VmcgBatch => "dispatch_batch",
            Tunable::VmcgLinkMbps => "pcie_link_mbps",
            Tunable::VmcgGmTotalMb => "gm_total_mb",
            Tunable::SfqSliceUs => "sfq_slice_us",
            Tunable::SfqWakeMaxVf => "sfq_wake_keeps_debt",
            Tunable::SfqWakePreempt => "sfq_wake_preempt",
            Tunable::Throttle => "throttle",
            Tunable::ThrottleFactorPct => "throttle_factor_pct",
            Tunable::WindowMs => "fairness_window_ms",
            Tunable::IdleThresholdUs => "idle_threshold_us",
            Tunable::InteractiveCalls => "interactive_calls",
            Tunable::InteractiveGapUs => "interactive_gap_us",
        }
    }

    /// Parses a sysfs file name.
    pub fn from_name(s: &str) -> Option<Tunable> {
        Tunable::ALL.into_iter().find(|t| t.name() == s)
    }

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
        }
    }
}

/// Decision of [`Scheduler::pick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Make `vgpu` current: it may dispatch for about `slice_ns` (the turn
    /// ends at a dispatch boundary; in-flight work is never preempted).
    Run {
        /// The vGPU to run.
        vgpu: usize,
        /// Length of the turn (for `tbs`, until the next tick).
        slice_ns: u64,
        /// Whether this is a different vGPU than before (a context switch).
        switched: bool,
    },
    /// Nothing may run: switch to the idle vGPU.
    Idle,
}

/// What a provider whose switch protocol is GVT-g's should do when asked
/// for a decision ([`Scheduler::switch_step`]).
///
/// GVT-g asks its policy on every scheduling request and switches only once
/// every engine has drained; the only way a policy can make the engines
/// drain is to name a different vGPU. A turn that ends with work in flight
/// therefore names the idle vGPU first ([`SwitchStep::Drain`]) and decides
/// once it has drained (see `Documentation/gvt-rs/provider-contract.rst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchStep {
    /// The turn goes on: keep the current vGPU.
    Keep,
    /// The turn is over and nothing is in flight: call [`Scheduler::pick`].
    Pick,
    /// The turn is over with work in flight: switch to the idle vGPU so that
    /// the engines drain, then ask again.
    Drain,
}

/// Statistics of one vGPU, for sysfs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VgpuStats {
    /// Whether the vGPU is started.
    pub started: bool,
    /// Scheduling weight.
    pub weight: u32,
    /// Graphics memory size, MB.
    pub gm_mb: u32,
    /// GPU time of completed workloads since creation, ns.
    pub busy_ns: u64,
    /// Share of the GPU time of the last fairness window, ppm.
    pub share_ppm: u32,
    /// Workloads queued and not yet dispatched, all engines.
    pub queue_depth: u32,
    /// Workloads dispatched and not yet completed.
    pub inflight: u32,
    /// Workloads queued since creation.
    pub submitted: u64,
    /// Workloads dispatched since creation.
    pub dispatched: u64,
    /// Workloads completed since creation.
    pub completed: u64,
    /// Mean submit-to-dispatch latency, ns.
    pub latency_avg_ns: u64,
    /// Largest submit-to-dispatch latency, ns.
    pub latency_max_ns: u64,
    /// Median submit-to-dispatch latency (within 1/16, see `lathist.rs`), ns.
    pub latency_p50_ns: u64,
    /// 99th percentile submit-to-dispatch latency (within 1/16), ns.
    pub latency_p99_ns: u64,
    /// Last sampled CPU time of the VM, ns.
    pub cpu_ns: u64,
    /// Bytes transferred since creation.
    pub bytes: u64,
    /// `vmcg`: remaining credits.
    pub credits: u32,
    /// `vmcg`: slice of the current round, ns.
    pub slice_ns: u64,
    /// `tbs`: remaining time slice (`left_ts`, negative is debt), ns.
    pub left_ts_ns: i64,
    /// `sfq`: start tag, in ns of GPU time at weight 1.
    pub vtag_ns: u64,
    /// Throttle usage (GPU ns scaled by `VSCALE / weight`), in ns at weight 1.
    pub usage_ns: u64,
    /// `sfq`/`eevdf`: the turn the vGPU asks for (`eevdf`'s request), ns.
    pub request_ns: u64,
    /// Whether the interactivity classifier counts the vGPU as interactive.
    pub interactive: bool,
    /// Synchronous round trips counted since creation.
    pub round_trips: u64,
}

/// Counters of the whole GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuStats {
    /// Calls to [`Scheduler::pick`] that returned a decision.
    pub picks: u64,
    /// Picks that changed the running vGPU (including to and from idle).
    pub switches: u64,
    /// `vmcg` rounds started.
    pub rounds: u64,
    /// Workloads in flight.
    pub inflight: u32,
    /// GPU time the policy chose to leave idle while a started vGPU had
    /// work queued, up to each decision's deadline (see `withheld.rs`), ns.
    pub withheld_ns: u64,
}

/// The scheduler of one GPU with room for `N` vGPUs.
pub struct Scheduler<const N: usize> {
    policy: Policy,
    tun: [u64; TUNABLES],
    v: [Vgpu; N],
    started: Bitmap,
    backlogged: Bitmap,
    current: Option<usize>,
    turn_start: u64,
    turn_slice: u64,
    turn_gpu_ns: u64,
    turn_dispatched: u32,
    turn_idle_ns: u64,
    idle_since: Option<u64>,
    force: bool,
    inflight: u32,
    tbs: Tbs<N>,
    sfq: Sfq<N>,
    vmcg: Vmcg<N>,
    thr: Throttle<N>,
    win_start: u64,
    fair: Fairness,
    picks: u64,
    switches: u64,
    withheld: Withheld,
    /// The latest `now` of a call that updated `withheld`.
    last_now: u64,
}

impl<const N: usize> Default for Scheduler<N> {
    fn default() -> Self {
        Self::new()
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
    ]
}

impl<const N: usize> Scheduler<N> {
    /// An empty scheduler running `tbs` with default tunables.
    ///
    /// `N` above [`MAX_VGPUS`] is clamped: ids `>= MAX_VGPUS` are rejected.
    ///
    /// `const` so that the kernel can build it straight into its heap
    /// allocation (`const { Scheduler::new() }`): at several KB it must not
    /// be built on a 16 KB kernel stack.
    pub const fn new() -> Self {
        Self {
            policy: Policy::Tbs,
            tun: defaults(),
            v: [Vgpu::FREE; N],
            started: Bitmap::EMPTY,
            backlogged: Bitmap::EMPTY,
            current: None,
            turn_start: 0,
            turn_slice: 0,
            turn_gpu_ns: 0,
            turn_dispatched: 0,
            turn_idle_ns: 0,
            idle_since: None,
            force: false,
            inflight: 0,
            tbs: Tbs::new(),
            sfq: Sfq::new(),
            vmcg: Vmcg::new(),
            thr: Throttle::new(),
            win_start: 0,
            fair: Fairness::PERFECT,
            picks: 0,
            switches: 0,
            withheld: Withheld::new(),
            last_now: 0,
        }
    }

    // ---- tunables and policy -------------------------------------------

    /// The active policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Switches policy at `now`. The new policy starts from the current
    /// queues with fresh state (`tbs` budgets 0 until its first balance,
    /// `sfq` tags at virtual time, `vmcg` credits empty); the running turn
    /// ends at the next dispatch boundary.
    pub fn set_policy(&mut self, p: Policy, now: u64) -> Result<(), Error> {
        if p == self.policy {
            return Ok(());
        }
        self.policy = p;
        self.rebuild(now);
        Ok(())
    }

    fn rebuild(&mut self, now: u64) {
        self.tbs.reset();
        self.sfq.reset();
        self.vmcg.reset(&self.v, now);
        match self.policy {
            Policy::Tbs => {
                let tick = self.tick_ns();
                for id in self.started.iter() {
                    self.tbs.start(id, now, 0, tick, false);
                }
            }
            Policy::Sfq | Policy::Eevdf => {
                let rule = self.wake_rule();
                for id in self.backlogged.iter() {
                    self.sfq.activate(id, rule);
                }
                if let Some(c) = self.current {
                    self.sfq.activate(c, rule);
                }
            }
            Policy::Vmcg => {}
        }
        // The running turn's time belongs to the old policy.
        self.turn_start = now;
        self.turn_gpu_ns = 0;
        self.turn_dispatched = 0;
        self.turn_idle_ns = 0;
        self.idle_since = None;
        self.force = true;
    }

    /// Current value of a tunable.
    pub fn tunable(&self, t: Tunable) -> u64 {
        self.tun.get(t as usize).copied().unwrap_or(0)
    }

    /// Sets a tunable; [`Error::OutOfRange`] outside [`Tunable::range`] or
    /// when `slice_min_us` would exceed `slice_ceiling_us`.
    pub fn set_tunable(&mut self, t: Tunable, val: u64, now: u64) -> Result<(), Error> {
        let (lo, hi) = t.range();
        if val < lo || val > hi {
            return Err(Error::OutOfRange);
        }
        match t {
            Tunable::VmcgMinSliceUs if val > self.tunable(Tunable::VmcgSliceCeilingUs) => {
                return Err(Error::OutOfRange)
            }
            Tunable::VmcgSliceCeilingUs if val < self.tunable(Tunable::VmcgMinSliceUs) => {
                return Err(Error::OutOfRange)
            }
            _ => {}
        }
        if let Some(slot) = self.tun.get_mut(t as usize) {
            *slot = val;
        }
        if t == Tunable::TbsTickUs && self.tbs.next_tick.is_some() {
            self.tbs.next_tick = Some(now.saturating_add(self.tick_ns()));
        }
        Ok(())
    }

    fn us(&self, t: Tunable) -> u64 {
        self.tunable(t).saturating_mul(1000)
    }

    fn ms(&self, t: Tunable) -> u64 {
        self.tunable(t).saturating_mul(1_000_000)
    }

    fn tick_ns(&self) -> u64 {
        self.us(Tunable::TbsTickUs)
    }

    fn wake_rule(&self) -> WakeRule {
        if self.tunable(Tunable::SfqWakeMaxVf) == 1 {
            WakeRule::MaxVF
        } else {
            WakeRule::PaperV
        }
    }

    fn vmcg_cfg(&self) -> VmcgCfg {
        VmcgCfg {
            ceiling_ns: self.us(Tunable::VmcgSliceCeilingUs),
            min_slice_ns: self.us(Tunable::VmcgMinSliceUs),
            pool: self
                .tunable(Tunable::VmcgCreditPool)
                .min(u64::from(u32::MAX)) as u32,
            batch: self.tunable(Tunable::VmcgBatch).min(u64::from(u32::MAX)) as u32,
            link_mbps: self.tunable(Tunable::VmcgLinkMbps),
            gm_total_mb: self.tunable(Tunable::VmcgGmTotalMb),
        }
    }

    // ---- lifecycle -----------------------------------------------------

    fn vg(&self, id: usize) -> Result<&Vgpu, Error> {
        match self.v.get(id) {
            Some(g) if g.life != Life::Free => Ok(g),
            _ => Err(Error::Invalid),
        }
    }

    fn vg_mut(&mut self, id: usize) -> Result<&mut Vgpu, Error> {
        match self.v.get_mut(id) {
            Some(g) if g.life != Life::Free => Ok(g),
            _ => Err(Error::Invalid),
        }
    }

    /// Creates vGPU `id` (stopped) with a weight and a graphics-memory size.
    pub fn create(&mut self, id: usize, weight: u32, gm_mb: u32) -> Result<(), Error> {
        if id >= N || id >= MAX_VGPUS {
            return Err(Error::OutOfRange);
        }
        if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
            return Err(Error::OutOfRange);
        }
        let g = self.v.get_mut(id).ok_or(Error::OutOfRange)?;
        if g.life != Life::Free {
            return Err(Error::Busy);
        }
        *g = Vgpu::FREE;
        g.life = Life::Created;
        g.weight = weight;
        g.gm_mb = gm_mb;
        self.sfq.forget(id);
        Ok(())
    }

    /// Destroys a stopped vGPU with no work in flight.
    pub fn destroy(&mut self, id: usize) -> Result<(), Error> {
        let g = self.vg(id)?;
        if g.life == Life::Started || g.inflight > 0 {
            return Err(Error::Busy);
        }
        if let Some(s) = self.v.get_mut(id) {
            *s = Vgpu::FREE;
        }
        if self.current == Some(id) {
            self.current = None;
        }
        Ok(())
    }

    /// Starts scheduling `id` (idempotent).
    pub fn start(&mut self, id: usize, now: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        if g.life == Life::Started {
            return Ok(());
        }
        g.life = Life::Started;
        let restart = core::mem::replace(&mut g.ever_started, true);
        self.started.set(id, true);
        match self.policy {
            Policy::Tbs => {
                // A restart (reset loop, reopen) gets no start boost and
                // keeps its time-slice debt: upstream's gift to a new VM
                // must not be something a guest can ask for again.
                let boost = if restart {
                    0
                } else {
                    self.ms(Tunable::TbsStartBoostMs)
                };
                let tick = self.tick_ns();
                self.tbs.start(id, now, boost, tick, restart);
            }
            Policy::Vmcg => {
                if let Some(g) = self.v.get(id) {
                    self.vmcg.start(id, g, now);
                }
            }
            Policy::Sfq | Policy::Eevdf => {}
        }
        // Work kept through a stop (`stop_keeping_queued`) is backlogged
        // again, as if it had just been queued.
        if self.vg(id)?.backlogged() {
            self.activate(id, false);
            if let Some(g) = self.v.get(id) {
                self.vmcg.refresh(id, g);
            }
        }
        self.note_withheld(now);
        Ok(())
    }

    /// Stops scheduling `id` (idempotent): its queued work is forgotten (the
    /// kernel discards it); completions of in-flight work are still accepted.
    pub fn stop(&mut self, id: usize, now: u64) -> Result<(), Error> {
        self.stop_with(id, now, false)
    }

    /// Stops scheduling `id` (idempotent) but keeps the counts of its queued
    /// work, for providers whose queues outlive a stop: GVT-g stops a vGPU
    /// for a reset of some of its engines and keeps the other engines'
    /// queues, reporting each workload it discards with
    /// [`Scheduler::cancelled`]. What is still queued is scheduled again
    /// after [`Scheduler::start`], and charged when it runs.
    pub fn stop_keeping_queued(&mut self, id: usize, now: u64) -> Result<(), Error> {
        self.stop_with(id, now, true)
    }

    fn stop_with(&mut self, id: usize, now: u64, keep_queued: bool) -> Result<(), Error> {
        self.roll(now);
        let g = self.vg_mut(id)?;
        if g.life != Life::Started {
            return Ok(());
        }
        g.life = Life::Created;
        if !keep_queued {
            for c in g.ch.iter_mut() {
                c.pending = 0;
            }
            g.pending = 0;
        }
        self.started.set(id, false);
        self.backlogged.set(id, false);
        self.tbs.stop(id);
        self.sfq.deactivate(id);
        if let Some(g) = self.v.get(id) {
            self.vmcg.stop(id, g);
        }
        if self.current == Some(id) {
            self.force = true;
        }
        self.note_withheld(now);
        Ok(())
    }

    /// Changes the weight of `id` (takes effect at the next charge, round or
    /// `tbs` balance).
    pub fn set_weight(&mut self, id: usize, weight: u32) -> Result<(), Error> {
        if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
            self.vg(id)?;
            return Err(Error::OutOfRange);
        }
        self.vg_mut(id)?.weight = weight;
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        Ok(())
    }

    /// Admin-set PCI-E bandwidth of `id` in MB/s for Eq. 2 (0: measure from
    /// [`Scheduler::transferred`]).
    pub fn set_bandwidth_mbps(&mut self, id: usize, mbps: u32) -> Result<(), Error> {
        if u64::from(mbps) > Tunable::VmcgLinkMbps.range().1 {
            self.vg(id)?;
            return Err(Error::OutOfRange);
        }
        self.vg_mut(id)?.bw_override_mbps = mbps;
        Ok(())
    }

    // ---- workload events -----------------------------------------------

    fn check_engine(engine: usize) -> Result<(), Error> {
        if engine < MAX_ENGINES {
            Ok(())
        } else {
            Err(Error::Invalid)
        }
    }

    /// A workload was queued on `engine` of started vGPU `id`.
    pub fn queued(&mut self, id: usize, engine: usize, now: u64) -> Result<(), Error> {
        Self::check_engine(engine)?;
        if self.vg(id)?.life != Life::Started {
            return Err(Error::Invalid);
        }
        self.roll(now);
        let gap = self.us(Tunable::InteractiveGapUs);
        let g = self.vg_mut(id)?;
        let was = g.backlogged();
        let trip = !was && g.inflight == 0 && g.ia.woke(now, gap);
        if let Some(c) = g.ch.get_mut(engine) {
            c.pending = c.pending.saturating_add(1);
        }
        g.pending = g.pending.saturating_add(1);
        g.submitted = g.submitted.saturating_add(1);
        g.win_active = true;
        if self.current == Some(id) {
            if let Some(t) = self.idle_since.take() {
                self.turn_idle_ns = self.turn_idle_ns.saturating_add(now.saturating_sub(t));
            }
        }
        if !was {
            self.activate(id, trip);
        }
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        if self.policy == Policy::Tbs {
            self.tbs_schedule(now, false);
        }
        self.note_withheld(now);
        Ok(())
    }

    /// `id` became backlogged: its throttle window, the backlogged set and
    /// its `sfq` tag (with wake-up preemption) follow. `trip`: it is a
    /// synchronous round trip (see `interact.rs`).
    ///
    /// Under `eevdf` a round trip keeps the vGPU's tag (`S <- F` even when
    /// `F < V`): it was away for at most `interactive_gap_us`, waiting for
    /// its own result, and is treated as if it had stayed backlogged, as
    /// EEVDF keeps the lag of a short sleeper. Without this, every round
    /// trip would forfeit whatever service it is owed, and a synchronous
    /// client beside a saturating neighbour would get one workload per
    /// neighbour turn.
    fn activate(&mut self, id: usize, trip: bool) {
        self.thr.activate(id, &self.backlogged);
        self.backlogged.set(id, true);
        if self.policy.fair_queueing() {
            if trip && self.policy == Policy::Eevdf {
                self.sfq.resume(id);
            } else {
                let rule = self.wake_rule();
                self.sfq.activate(id, rule);
            }
            self.sfq_wake_preempt(id);
        }
    }

    /// `sfq` wake-up preemption (`sfq_wake_preempt`): `id` just became
    /// backlogged. If it is owed service, its start tag no later than that
    /// of the running vGPU, which has already had service in this turn,
    /// the turn ends at the next workload boundary instead of running out
    /// its slice: a light vGPU then waits for at most the workloads in
    /// flight, not for a whole slice of every neighbour. A vGPU waking with
    /// debt (its tag past the running one's) waits for its turn as before.
    ///
    /// Under `eevdf` the test is EEVDF's: the waking vGPU is eligible (its
    /// tag no later than the weighted average) and its virtual deadline is
    /// no later than the running vGPU's ("no later" as in `sfq`'s test, so
    /// that vGPUs with equal requests are treated exactly as by `sfq`).
    /// O(N) for the average.
    fn sfq_wake_preempt(&mut self, id: usize) {
        if self.tunable(Tunable::SfqWakePreempt) != 1 || self.turn_dispatched == 0 {
            return;
        }
        let Some(c) = self.current.filter(|&c| c != id) else {
            return;
        };
        let owed = if self.policy == Policy::Eevdf {
            let v = &self.v;
            let weight = |i: usize| v.get(i).map_or(1, |g| g.weight);
            let slice = self.us(Tunable::SfqSliceUs);
            let avg = self.sfq.average(&weight);
            self.sfq.eligible(id, avg)
                && vdiff(self.sfq.deadline(id, slice), self.sfq.deadline(c, slice)) <= 0
        } else {
            vdiff(self.sfq.tag(id), self.sfq.tag(c)) <= 0
        };
        if owed {
            self.force = true;
        }
    }

    fn interactive_calls(&self) -> u32 {
        self.tunable(Tunable::InteractiveCalls)
            .min(u64::from(u32::MAX)) as u32
    }

    /// Whether `id` is interactive (see `interact.rs`).
    fn is_interactive(&self, id: usize) -> bool {
        let calls = self.interactive_calls();
        self.v.get(id).is_some_and(|g| g.ia.interactive(calls))
    }

    /// How long the GPU is held for the current vGPU `c` once its queue is
    /// empty: `idle_threshold_us`, except under `eevdf` for a vGPU that is
    /// not interactive (its next submission is not expected soon: holding
    /// would only waste GPU time and charge it for it).
    fn hold_ns(&self, c: usize) -> u64 {
        if self.policy == Policy::Eevdf && !self.is_interactive(c) {
            0
        } else {
            self.us(Tunable::IdleThresholdUs)
        }
    }

    /// GPU-centric coscheduling (FairGV's Algorithm 3): the running vGPU if
    /// it is interactive. While it holds the GPU the provider
    /// should favour its VM's vCPU threads (wake them, or let them run
    /// ahead of other threads), so that its synchronous round trips
    /// complete within the turn. A hint: the core's decisions do not
    /// depend on whether the provider acts on it.
    pub fn coschedule(&self) -> Option<usize> {
        self.current.filter(|&c| self.is_interactive(c))
    }

    fn tbs_schedule(&mut self, now: u64, timer: bool) {
        let lim = self.throttle_limit();
        let thr = &self.thr;
        let el = |id: usize| thr.usage(id) <= lim;
        let cfg = (
            self.ms(Tunable::TbsBalanceMs),
            self.tunable(Tunable::TbsStages),
        );
        self.tbs
            .schedule(now, timer, self.current, &self.v, cfg, &el);
    }

    /// Usage above which a backlogged vGPU waits (`u64::MAX`: throttle off).
    /// O(N) when the throttle is on, O(1) otherwise.
    fn throttle_limit(&self) -> u64 {
        if self.tunable(Tunable::Throttle) != 1 {
            return u64::MAX;
        }
        self.thr.limit(
            &self.backlogged,
            self.tunable(Tunable::ThrottleFactorPct) as u32,
        )
    }

    fn turn_over(&self, c: usize, now: u64) -> bool {
        if self.force {
            return true;
        }
        match self.policy {
            Policy::Tbs => self.tbs.target.is_some(),
            Policy::Sfq | Policy::Eevdf | Policy::Vmcg => {
                let idle_over = !self.backlogged.get(c)
                    && match self.idle_since {
                        Some(t) => now >= t.saturating_add(self.hold_ns(c)),
                        // Nothing queued, work in flight: wait for it.
                        None => self.v.get(c).is_none_or(|g| g.inflight == 0),
                    };
                idle_over
                    || now.saturating_sub(self.turn_start) >= self.turn_slice
                    || (self.policy == Policy::Vmcg && self.vmcg.denied)
            }
        }
    }

    /// Whether the current turn is over (or the idle GPU has a candidate):
    /// stop dispatching, and call [`Scheduler::pick`] once nothing is in flight.
    pub fn need_resched(&self, now: u64) -> bool {
        match self.current {
            Some(c) => self.turn_over(c, now),
            None => match self.policy {
                Policy::Tbs => self.force || self.tbs.target.is_some(),
                _ => self.force || !self.backlogged.is_empty(),
            },
        }
    }

    /// Engine `engine` is free: the vGPU whose head workload on that engine
    /// it should take, or `None` (nothing to do, or the turn is over).
    pub fn next_vgpu(&mut self, engine: usize, now: u64) -> Option<usize> {
        let c = self.current?;
        if self.turn_over(c, now) {
            return None;
        }
        let g = self.v.get(c)?;
        if g.ch.get(engine)?.pending == 0 {
            return None;
        }
        if self.policy == Policy::Vmcg && !self.vmcg.can_dispatch(c, &self.backlogged) {
            return None;
        }
        Some(c)
    }

    /// The head workload of `id` on `engine`, queued at `queued_at`, was
    /// dispatched to the hardware at `now`.
    pub fn dispatched(
        &mut self,
        id: usize,
        engine: usize,
        queued_at: u64,
        now: u64,
    ) -> Result<(), Error> {
        self.take_pending(id, engine)?;
        let g = self.vg_mut(id)?;
        if let Some(c) = g.ch.get_mut(engine) {
            c.inflight = c.inflight.saturating_add(1);
        }
        g.inflight = g.inflight.saturating_add(1);
        g.dispatched = g.dispatched.saturating_add(1);
        g.record_latency(now.saturating_sub(queued_at));
        self.inflight = self.inflight.saturating_add(1);
        if self.current == Some(id) {
            self.turn_dispatched = self.turn_dispatched.saturating_add(1);
            if self.policy == Policy::Vmcg {
                let cfg = self.vmcg_cfg();
                self.vmcg.dispatched(id, &cfg);
            }
        }
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        self.note_withheld(now);
        Ok(())
    }

    /// A workload of `id` on `engine` completed, having used `gpu_ns` of GPU time.
    pub fn completed(
        &mut self,
        id: usize,
        engine: usize,
        gpu_ns: u64,
        now: u64,
    ) -> Result<(), Error> {
        Self::check_engine(engine)?;
        self.vg(id)?;
        self.roll(now);
        let calls = self.interactive_calls();
        let g = self.vg_mut(id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        if c.inflight == 0 {
            return Err(Error::Invalid);
        }
        c.inflight = c.inflight.saturating_sub(1);
        g.inflight = g.inflight.saturating_sub(1);
        g.completed = g.completed.saturating_add(1);
        g.busy_ns = g.busy_ns.saturating_add(gpu_ns);
        g.win_busy_ns = g.win_busy_ns.saturating_add(gpu_ns);
        g.ia.served(gpu_ns, calls);
        let w = g.weight;
        let idle = g.pending == 0 && g.inflight == 0;
        if idle {
            g.ia.idle(now);
        }
        self.inflight = self.inflight.saturating_sub(1);
        if self.current == Some(id) {
            self.turn_gpu_ns = self.turn_gpu_ns.saturating_add(gpu_ns);
            if idle {
                self.idle_since = Some(now);
            }
        }
        self.thr.charge(id, gpu_ns, w);
        self.note_withheld(now);
        Ok(())
    }

    /// A workload of `id` queued on `engine` was discarded before it was
    /// dispatched (a vGPU or engine reset). `Invalid` if none is queued,
    /// which is the case after [`Scheduler::stop`] already forgot them.
    pub fn cancelled(&mut self, id: usize, engine: usize) -> Result<(), Error> {
        self.take_pending(id, engine)?;
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        self.note_withheld(self.last_now);
        Ok(())
    }

    /// One queued workload of `id` on `engine` leaves the queue (dispatched
    /// or discarded); `Invalid` if none is queued. A vGPU left with nothing
    /// queued stops being backlogged.
    fn take_pending(&mut self, id: usize, engine: usize) -> Result<(), Error> {
        Self::check_engine(engine)?;
        let g = self.vg_mut(id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        if c.pending == 0 {
            return Err(Error::Invalid);
        }
        c.pending = c.pending.saturating_sub(1);
        g.pending = g.pending.saturating_sub(1);
        if g.pending == 0 {
            self.backlogged.set(id, false);
            if self.current != Some(id) {
                self.sfq.deactivate(id);
            }
        }
        Ok(())
    }

    /// The next step of GVT-g's switch protocol at `now` (see [`SwitchStep`]).
    pub fn switch_step(&self, now: u64) -> SwitchStep {
        if !self.need_resched(now) {
            SwitchStep::Keep
        } else if self.inflight > 0 {
            SwitchStep::Drain
        } else {
            SwitchStep::Pick
        }
    }

    /// Whether the engine thread of `engine` may take `id`'s head workload
    /// now (GVT-g's `may_dispatch`). `false` only when the turn is over
    /// ([`Scheduler::need_resched`] then holds): a provider that holds work
    /// back must ask for a decision. Work the scheduler does not know of
    /// (counts out of step) is let through rather than stalled.
    pub fn may_dispatch(&mut self, id: usize, engine: usize, now: u64) -> bool {
        self.next_vgpu(engine, now) == Some(id) || !self.need_resched(now)
    }

    /// Cumulative CPU time of `id`'s VM (all vCPUs), sampled at `now`.
    pub fn cpu_time(&mut self, id: usize, total_ns: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        g.cpu_ns = g.cpu_ns.max(total_ns);
        Ok(())
    }

    /// `bytes` more were transferred for `id` (DMA or shadowed command bytes).
    pub fn transferred(&mut self, id: usize, bytes: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        g.bytes = g.bytes.saturating_add(bytes);
        Ok(())
    }

    /// Timer event at `now`.
    pub fn tick(&mut self, now: u64) {
        self.roll(now);
        if self.policy == Policy::Tbs {
            if let Some(t) = self.tbs.next_tick {
                if now >= t {
                    self.tbs_schedule(now, true);
                    self.tbs.next_tick = Some(now.saturating_add(self.tick_ns()));
                }
            }
        }
        self.note_withheld(now);
    }

    /// When [`Scheduler::tick`] should next be called (absolute ns, `>= now`;
    /// `now` only for a `tbs` tick that is already due).
    pub fn next_timer(&self, now: u64) -> u64 {
        let win = self.win_start.saturating_add(self.ms(Tunable::WindowMs));
        let t = match self.policy {
            Policy::Tbs => self.tbs.next_tick,
            _ => self.current.map(|c| {
                let end = self.turn_start.saturating_add(self.turn_slice);
                match self.idle_since {
                    Some(i) => end.min(i.saturating_add(self.hold_ns(c))),
                    None => end,
                }
            }),
        };
        let win = if win > now {
            win
        } else {
            now.saturating_add(self.ms(Tunable::WindowMs))
        };
        match t {
            // A due tbs tick is returned as `now`: tick() always advances it.
            Some(t) if self.policy == Policy::Tbs => t.max(now).min(win),
            Some(t) if t > now => t.min(win),
            _ => win,
        }
    }

    /// The deadline of the decision that leaves the GPU idle while a
    /// started vGPU has work queued, or `None` if the GPU is not withheld
    /// (see `withheld.rs`).
    fn withheld_until(&self, now: u64) -> Option<u64> {
        if self.inflight > 0 {
            return None;
        }
        let waiting = match self.current {
            // The current vGPU dispatches its own work (or its turn is over
            // and the next decision is due): nothing is held back.
            Some(c) if self.backlogged.get(c) => false,
            Some(c) => self.backlogged.any_except(c),
            None => !self.backlogged.is_empty(),
        };
        if !waiting {
            return None;
        }
        let deadline = match (self.policy, self.current) {
            // A switch is decided: the engine asks for it at once.
            (Policy::Tbs, _) if self.tbs.target.is_some() => now,
            (Policy::Tbs, _) => self.tbs.next_tick.unwrap_or(now),
            (_, Some(c)) => {
                let end = self.turn_start.saturating_add(self.turn_slice);
                match self.idle_since {
                    Some(i) => end.min(i.saturating_add(self.hold_ns(c))),
                    None => end,
                }
            }
            (_, None) if self.force => now,
            (_, None) => self.next_timer(now),
        };
        Some(deadline)
    }

    fn note_withheld(&mut self, now: u64) {
        let now = now.max(self.last_now);
        let until = self.withheld_until(now);
        self.withheld.update(now, until);
        self.last_now = now;
    }

    fn end_turn(&mut self, c: usize, now: u64) {
        if let Some(t) = self.idle_since.take() {
            self.turn_idle_ns = self.turn_idle_ns.saturating_add(now.saturating_sub(t));
        }
        if self.policy.fair_queueing() {
            let mut l = self.turn_gpu_ns;
            if l == 0 && self.turn_dispatched > 0 {
                // No GPU time measured: charge wall-clock ownership.
                l = now.saturating_sub(self.turn_start);
            }
            // The GPU was held idle for this vGPU: charge that too.
            l = l.saturating_add(self.turn_idle_ns);
            let w = self.v.get(c).map_or(1, |g| g.weight);
            self.sfq.charge(c, l, w);
            if self.turn_dispatched > 0 {
                let slice = self.us(Tunable::SfqSliceUs);
                let more = self.backlogged.get(c);
                self.sfq.note_turn(c, l, more, slice);
            }
            if !self.backlogged.get(c) {
                self.sfq.deactivate(c);
            }
        }
    }

    /// Chooses what runs next. Call only with no workload in flight
    /// (else [`Error::Busy`]), when [`Scheduler::need_resched`] says so or
    /// when nothing is current.
    pub fn pick(&mut self, now: u64) -> Result<Pick, Error> {
        let r = self.decide(now);
        self.note_withheld(now);
        r
    }

    fn decide(&mut self, now: u64) -> Result<Pick, Error> {
        if self.inflight > 0 {
            return Err(Error::Busy);
        }
        self.roll(now);
        let prev = self.current;
        if let Some(c) = prev {
            self.end_turn(c, now);
        }
        let lim = self.throttle_limit();
        let on = lim != u64::MAX;
        let chosen = match self.policy {
            Policy::Tbs => {
                if self.tbs.target.is_none() {
                    self.tbs_schedule(now, false);
                }
                self.tbs.update_timeslice(prev, now);
                let t = self.tbs.target.take();
                self.tbs.switched(now);
                match t {
                    Some(Target::Vgpu(id)) => Some(id),
                    Some(Target::Idle) => None,
                    None => prev.filter(|&p| self.started.get(p)),
                }
            }
            Policy::Sfq => {
                let thr = &self.thr;
                let el = |id: usize| thr.usage(id) <= lim;
                self.sfq.pick(if on { Some(&el) } else { None })
            }
            Policy::Eevdf => {
                let thr = &self.thr;
                let el = |id: usize| thr.usage(id) <= lim;
                let v = &self.v;
                let weight = |i: usize| v.get(i).map_or(1, |g| g.weight);
                let slice = self.us(Tunable::SfqSliceUs);
                self.sfq
                    .pick_eevdf(&weight, slice, if on { Some(&el) } else { None })
            }
            Policy::Vmcg => {
                let cfg = self.vmcg_cfg();
                let thr = &self.thr;
                let el = |id: usize| thr.usage(id) <= lim;
                self.vmcg.pick(now, &self.v, &self.backlogged, &cfg, &el)
            }
        };
        self.force = false;
        self.picks = self.picks.wrapping_add(1);
        if chosen != prev {
            self.switches = self.switches.wrapping_add(1);
        }
        self.current = chosen;
        self.turn_start = now;
        self.turn_gpu_ns = 0;
        self.turn_dispatched = 0;
        self.turn_idle_ns = 0;
        self.idle_since = None;
        let Some(id) = chosen else {
            self.turn_slice = 0;
            return Ok(Pick::Idle);
        };
        self.turn_slice = match self.policy {
            Policy::Tbs => self.tick_ns(),
            Policy::Sfq | Policy::Eevdf => self.us(Tunable::SfqSliceUs),
            Policy::Vmcg => {
                self.vmcg.begin_turn();
                self.vmcg.slice_ns.get(id).copied().unwrap_or(0)
            }
        };
        Ok(Pick::Run {
            vgpu: id,
            slice_ns: self.turn_slice,
            switched: chosen != prev,
        })
    }

    // ---- metrics ---------------------------------------------------------

    /// Closes the fairness window if it ended before `now`. O(N) per window.
    fn roll(&mut self, now: u64) {
        let win = self.ms(Tunable::WindowMs);
        if now < self.win_start.saturating_add(win) {
            return;
        }
        self.fair = metrics::fairness(
            self.v
                .iter()
                .filter(|g| g.life != Life::Free && g.win_active)
                .map(|g| (u64::from(g.weight), g.win_busy_ns)),
        );
        let total: u64 = self
            .v
            .iter()
            .map(|g| g.win_busy_ns)
            .fold(0, u64::saturating_add);
        for g in self.v.iter_mut() {
            g.share_ppm = if total == 0 {
                0
            } else {
                mul_div_sat(g.win_busy_ns, PPM, total) as u32
            };
            g.win_busy_ns = 0;
            g.win_active = g.life == Life::Started && (g.pending > 0 || g.inflight > 0);
        }
        let next = self.win_start.saturating_add(win);
        self.win_start = if now.saturating_sub(next) >= win {
            now
        } else {
            next
        };
    }

    /// Fairness of the last complete window (active vGPUs only).
    pub fn fairness(&self) -> Fairness {
        self.fair
    }

    /// The running vGPU, if any.
    pub fn current(&self) -> Option<usize> {
        self.current
    }

    /// Whole-GPU counters.
    pub fn gpu_stats(&self) -> GpuStats {
        GpuStats {
            picks: self.picks,
            switches: self.switches,
            rounds: self.vmcg.rounds,
            inflight: self.inflight,
            withheld_ns: self.withheld.total_ns(self.last_now),
        }
    }

    /// Statistics of vGPU `id`, `None` if it does not exist.
    pub fn stats(&self, id: usize) -> Option<VgpuStats> {
        let g = self.vg(id).ok()?;
        Some(VgpuStats {
            started: g.life == Life::Started,
            weight: g.weight,
            gm_mb: g.gm_mb,
            busy_ns: g.busy_ns,
            share_ppm: g.share_ppm,
            queue_depth: g.pending,
            inflight: g.inflight,
            submitted: g.submitted,
            dispatched: g.dispatched,
            completed: g.completed,
            latency_avg_ns: g.lat_sum_ns.checked_div(g.dispatched).unwrap_or(0),
            latency_max_ns: g.lat_max_ns,
            latency_p50_ns: g.lat.percentile_ns(50, g.lat_max_ns),
            latency_p99_ns: g.lat.percentile_ns(99, g.lat_max_ns),
            cpu_ns: g.cpu_ns,
            bytes: g.bytes,
            credits: self.vmcg.credits.get(id).copied().unwrap_or(0),
            slice_ns: self.vmcg.slice_ns.get(id).copied().unwrap_or(0),
            left_ts_ns: self.tbs.left_ts.get(id).copied().unwrap_or(0),
            vtag_ns: self.sfq.tag(id) / VSCALE,
            usage_ns: self.thr.usage(id) / VSCALE,
            request_ns: self.sfq.request(id, self.us(Tunable::SfqSliceUs)),
            interactive: self.is_interactive(id),
            round_trips: g.ia.total,
        })
    }
}
