// SPDX-License-Identifier: GPL-2.0

//! vGPU scheduling policies: upstream TBS, VMCG credits and slices, FairGV
//! SFQ, and EEVDF-style latency-aware fair queueing.
//!
//! One [`Scheduler`] per physical GPU holds up to `N` vGPUs (ids `0..N`,
//! `N <= MAX_VGPUS`) and one of four [`Policy`]s, switchable at run time, plus an
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
//! Cost: every per-event call (`queued`, `dispatched`, `completed`,
//! `cancelled`, `next_vgpu`, `may_dispatch`, `need_resched`, `pick`,
//! `tick`) is O(1) or O(log n) for `sfq`, `eevdf` and `vmcg`, with or
//! without the throttle: the fair queue is an augmented tree (`vtree.rs`:
//! `eevdf`'s eligible pick and weighted average in O(log n), as Linux's
//! EEVDF), the throttle's minimum a tournament tree (`throttle.rs`), and a
//! completion's contention and anticipation's candidates come from sets
//! of vGPU ids in one word (`VgpuSet`). The exceptions: `tbs` walks its LRU list on a
//! pick and on every submission (O(n), upstream's algorithm, kept as the
//! baseline); `vmcg` sorts the backlogged vGPUs once per round (O(k log k),
//! amortised over the k turns of the round); the throttle, when it holds
//! back the vGPU the policy chose, falls back to a scan of the active
//! vGPUs (O(n)); anticipation, when on, looks at each vGPU with a
//! predicted submission (O(p)); the end of a fairness window (once per
//! `fairness_window_ms`), a `sfq_slice_us` change under `eevdf`, and
//! lifecycle and policy changes are O(N). `gvt-bench` measures every call
//! at 4, 16 and 64 vGPUs (`results-scheduling.rst`).
//!
//! # Layout
//!
//! [`Scheduler`] (`scheduler.rs`) keeps what every policy shares: the
//! vGPU table, the backlogged set, the running turn. It asks the active
//! policy through its ops table (`policy/`: the `PolicyOps` trait and one
//! file per policy). `tunables.rs` has the tunables (ranges, defaults; the
//! file names are the engine's), `stats.rs` the statistics and the fairness
//! window, `decision.rs` the answers to a provider. Each policy's own bookkeeping
//! is in `tbs.rs`, `vmcg.rs` and `sfq.rs` (`sfq` and `eevdf`); the usage
//! throttle in `throttle.rs`, the interactivity classifier in
//! `interact.rs`, `eevdf`'s think-time predictor in `anticipate.rs`.
//!
//! Every per-vGPU table is a `VgpuArray` indexed by [`VgpuId`] and every
//! set of vGPUs a `VgpuSet` (`vgpu_array.rs`, `vgpu_set.rs` beside this
//! directory): an id is checked once, where it enters (`create` refuses
//! ids of `N` and above; every other call finds a vGPU by its life in the
//! table, [`Error::Invalid`] for one that does not exist), and from there
//! no lookup can miss, so no code path has a fallback for an id that
//! cannot exist. The tables have an entry for every possible id whatever
//! `N` is.

mod anticipate;
mod decision;
mod fixed;
mod gvtg;
mod interact;
pub(crate) mod lathist;
pub mod metrics;
mod policy;
mod scheduler;
mod sfq;
mod stats;
mod tbs;
mod throttle;
mod tunables;
mod vchannel;
mod vmcg;
mod vtree;
mod withheld;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_gvtg;

use super::{
    Error,
    VgpuArray,
    VgpuId,
    VgpuSet, //
};
pub use decision::{
    Pick,
    SwitchStep,
    TurnState, //
};
pub use gvtg::GvtgSwitch;
pub use lathist::LAT_BUCKETS;
pub use metrics::Fairness;
pub use policy::Policy;
pub use scheduler::{
    Scheduler,
    COMPLETION_OVERHEAD_MAX_NS, //
};
pub use sfq::{
    WakeRule,
    VSCALE, //
};
pub use stats::{
    GpuStats,
    VgpuStats, //
};
pub use tunables::Tunable;
pub use vchannel::MAX_ENGINES;

/// Largest supported number of vGPUs per scheduler: every table has an
/// entry per id, every set a bit.
pub use super::MAX_VGPUS;

/// Smallest and largest vGPU weight (the range of cgroup v2 `cpu.weight`;
/// GVT-g's types use 2, 4, 8 and 16).
pub const WEIGHT_RANGE: (u32, u32) = (1, 10_000);
