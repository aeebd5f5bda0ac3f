// SPDX-License-Identifier: GPL-2.0

//! What the scheduler answers when asked for a decision.

/// Decision of [`Scheduler::pick`](super::Scheduler::pick).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Make `vgpu` current: it may dispatch for about `slice_ns` (the turn
    /// ends at a dispatch boundary; in-flight work is never preempted).
    Run {
        /// The vGPU to run.
        vgpu: super::VgpuId,
        /// Length of the turn (for `tbs`, until the next tick).
        slice_ns: u64,
        /// Whether this is a different vGPU than before (a context switch).
        switched: bool,
    },
    /// Nothing may run: switch to the idle vGPU.
    Idle,
}

/// What a provider whose switch protocol is GVT-g's should do when asked
/// for a decision ([`Scheduler::switch_step`](super::Scheduler::switch_step)).
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
    /// The turn is over and nothing is in flight: call [`Scheduler::pick`](super::Scheduler::pick).
    Pick,
    /// The turn is over with work in flight: switch to the idle vGPU so that
    /// the engines drain, then ask again.
    Drain,
}

/// Where the running vGPU's turn stands
/// ([`Scheduler::turn_state`](super::Scheduler::turn_state)): what a
/// provider that switches vGPUs only once the engines drained needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnState {
    /// What to do now, as [`Scheduler::switch_step`](super::Scheduler::switch_step).
    pub step: SwitchStep,
    /// Whether a vGPU is in its turn.
    pub running: bool,
    /// Workloads executing on the GPU.
    pub inflight: u32,
}
