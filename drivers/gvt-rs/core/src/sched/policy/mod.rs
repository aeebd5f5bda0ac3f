// SPDX-License-Identifier: GPL-2.0

//! The policies a GPU can run, selectable at run time, and the operations
//! each implements.
//!
//! [`Policy`] names a policy; [`PolicyOps`] is what the [`Scheduler`] asks
//! of it, in the manner of upstream GVT-g's `intel_gvt_sched_policy_ops`
//! and the Linux scheduler's `sched_class`: one stateless ops table per
//! policy (`tbs.rs`, `vmcg.rs`, `sfq.rs`, `eevdf.rs`) working on the
//! scheduler's state, so that switching policy at run time is changing
//! which table is used. Each policy's own bookkeeping (`Tbs`, `Vmcg`,
//! `Sfq`) stays in the scheduler, as it did before the table existed:
//! some of it (the `vmcg` demand inputs, the `sfq` tags of a vGPU that
//! leaves) is kept up to date whichever policy runs.

mod eevdf;
mod sfq;
mod tbs;
mod vmcg;

use super::{
    Scheduler,
    VgpuId, //
};
use eevdf::EevdfOps;
use sfq::SfqOps;
use tbs::TbsOps;
use vmcg::VmcgOps;

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

    /// Parses a name (exact match; the caller strips a trailing newline).
    pub fn from_name(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The policy's operations.
    pub(super) fn ops<const N: usize>(self) -> &'static dyn PolicyOps<N> {
        match self {
            Policy::Tbs => &TbsOps,
            Policy::Vmcg => &VmcgOps,
            Policy::Sfq => &SfqOps,
            Policy::Eevdf => &EevdfOps,
        }
    }
}

/// What the scheduler asks of its policy. `s` is the scheduler the policy
/// runs in; `c` the current vGPU, `id` the vGPU an event is about, `now`
/// the time of the call (ns). The defaults are those of the turn-based
/// policies (`vmcg`, `sfq`, `eevdf`): a turn lasts a slice, or until the
/// current vGPU has been idle for [`PolicyOps::hold_ns`].
pub(super) trait PolicyOps<const N: usize> {
    /// The policy became the active one: build its state from the current
    /// queues (its bookkeeping was reset just before).
    fn switched_to(&self, _s: &mut Scheduler<N>, _now: u64) {}

    /// `id` was started; `restart` if it was started before.
    fn started(&self, _s: &mut Scheduler<N>, _id: VgpuId, _restart: bool, _now: u64) {}

    /// A workload was queued (after the queue counts were updated).
    fn queued(&self, _s: &mut Scheduler<N>, _now: u64) {}

    /// `id` became backlogged (after it entered the backlogged set);
    /// `trip`: it returns from a synchronous round trip (see `interact.rs`).
    fn activated(&self, _s: &mut Scheduler<N>, _id: VgpuId, _trip: bool) {}

    /// The current vGPU `c` dispatched a workload.
    fn dispatched(&self, _s: &mut Scheduler<N>, _c: VgpuId) {}

    /// Whether the current vGPU `c`, whose turn is not over, may dispatch
    /// a workload now.
    fn may_dispatch(&self, _s: &mut Scheduler<N>, _c: VgpuId) -> bool {
        true
    }

    /// Timer event.
    fn tick(&self, _s: &mut Scheduler<N>, _now: u64) {}

    /// How long the GPU is held for the current vGPU `c` once its queue is
    /// empty, waiting for its next submission.
    fn hold_ns(&self, s: &Scheduler<N>, _c: VgpuId) -> u64 {
        s.tun.us(super::Tunable::IdleThresholdUs)
    }

    /// Whether the turn of the current vGPU `c` is over (not called while
    /// a policy switch or a wake-up forces a decision).
    fn turn_over(&self, s: &Scheduler<N>, c: VgpuId, now: u64) -> bool {
        s.turn_expired(c, now)
    }

    /// With nothing current: whether there is a vGPU to decide for.
    fn has_candidate(&self, s: &Scheduler<N>) -> bool {
        !s.backlogged.is_empty()
    }

    /// When the scheduler's timer should next fire for the policy, given
    /// the end `win` of the fairness window (`> now`).
    fn next_timer(&self, s: &Scheduler<N>, now: u64, win: u64) -> u64 {
        match s.turn_deadline() {
            Some(t) if t > now => t.min(win),
            _ => win,
        }
    }

    /// The deadline of the decision that leaves the GPU idle while a vGPU
    /// has work queued (see `withheld.rs`); a forced decision is due at
    /// once without asking. With nothing current, the idle vGPU's turn
    /// lasts until the policy's timer if the policy chose it with that work
    /// in view; work that arrived after it asks for a decision now
    /// (`has_candidate`).
    fn withheld_deadline(&self, s: &Scheduler<N>, now: u64) -> u64 {
        match s.turn_deadline() {
            Some(t) => t,
            None if s.idle_decided_for_waiting() => s.next_timer(now),
            None => now,
        }
    }

    /// The vGPU the GPU is withheld for while it is (see `withheld.rs`):
    /// the current one, whose turn it is; `None` for the idle vGPU.
    fn withheld_for(&self, s: &Scheduler<N>) -> Option<VgpuId> {
        s.current
    }

    /// The turn of `c` ended at `now` (its idle time is accounted).
    fn turn_ended(&self, _s: &mut Scheduler<N>, _c: VgpuId, _now: u64) {}

    /// Chooses the vGPU that runs next (`None`: the GPU idles); `prev` was
    /// current. The throttle's limit applies.
    fn pick_next(&self, s: &mut Scheduler<N>, prev: Option<VgpuId>, now: u64) -> Option<VgpuId>;

    /// `id` begins a turn: its length, ns.
    fn begin_turn(&self, s: &mut Scheduler<N>, id: VgpuId) -> u64;
}
