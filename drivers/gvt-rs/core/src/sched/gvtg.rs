// SPDX-License-Identifier: GPL-2.0

//! GVT-g's switch protocol, seen from the policy.
//!
//! GVT-g calls its policy's `pick_next()` on every scheduling request and
//! takes the answer only when no switch is pending; the switch itself waits
//! until every engine has drained, and stops dispatch meanwhile. A policy can
//! make the engines drain only by naming a different vGPU. [`GvtgSwitch`]
//! keeps what the policy must remember of GVT-g's state for that: a turn
//! that ends with work in flight names the idle vGPU (a drain barrier), the
//! policy decides once the barrier was switched to, and while it is pending
//! no decision is made (GVT-g would drop it).

#[cfg(doc)]
use super::Scheduler;
use super::{
    SwitchStep,
    TurnState, //
};

/// The policy's view of GVT-g's switch state, for one GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GvtgSwitch {
    /// A drain barrier was named and not switched to yet.
    draining: bool,
    /// GVT-g's current vGPU is the idle vGPU (or none).
    on_idle: bool,
}

impl Default for GvtgSwitch {
    fn default() -> Self {
        Self::new()
    }
}

impl GvtgSwitch {
    /// A GPU that runs nothing yet.
    pub const fn new() -> Self {
        Self {
            draining: false,
            on_idle: true,
        }
    }

    /// GVT-g asks `pick_next()` while the scheduler's turn stands at
    /// `turn` ([`Scheduler::turn_state`]): what to do.
    /// [`SwitchStep::Pick`]: call [`Scheduler::pick`] and name its choice;
    /// [`SwitchStep::Drain`]: name the idle vGPU; [`SwitchStep::Keep`]:
    /// name nothing.
    pub fn step(&mut self, turn: TurnState) -> SwitchStep {
        if self.draining {
            return SwitchStep::Keep;
        }
        let step = match turn.step {
            // GVT-g idles while the scheduler has a vGPU in its turn (after
            // a drain): decide now, or the GPU stays idle.
            SwitchStep::Keep if self.on_idle && turn.running && turn.inflight == 0 => {
                SwitchStep::Pick
            }
            other => other,
        };
        if step == SwitchStep::Drain {
            self.draining = true;
        }
        step
    }

    /// GVT-g switched to the idle vGPU (`to_idle`) or to a vGPU. Returns
    /// whether the policy must ask for a decision now
    /// (`intel_gvt_request_schedule()`): a drain barrier just completed.
    pub fn switched(&mut self, to_idle: bool) -> bool {
        self.on_idle = to_idle;
        let drained = self.draining;
        self.draining = false;
        drained && to_idle
    }

    /// Whether a drain barrier is pending.
    pub const fn draining(&self) -> bool {
        self.draining
    }
}
