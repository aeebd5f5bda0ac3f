// SPDX-License-Identifier: GPL-2.0

//! GVT-g's switch protocol on top of the engine.
//!
//! GVT-g calls its policy's `pick_next()` on every scheduling request and
//! takes the answer only when no switch is pending; it switches vGPUs once
//! every engine drained, and holds dispatch meanwhile. A policy can make the
//! engines drain only by naming a different vGPU, so a turn that ends with
//! work in flight names the idle vGPU (a drain barrier) and the decision
//! follows once GVT-g switched to it.
//!
//! The engine knows no provider's protocol: it reports where the running
//! turn stands ([`Engine::turn_state`]). The state machine is the core's
//! [`GvtgSwitch`], tested on the host against a model of GVT-g's scheduler;
//! this keeps it per GPU and turns its steps into GVT-g's answers.

use crate::engine::{
    Engine,
    Provider,
    VgpuId, //
};
use crate::gvt_core::sched::{
    GvtgSwitch,
    SwitchStep, //
};
use kernel::{
    new_mutex,
    prelude::*,
    sync::Mutex, //
};

/// What the policy names in GVT-g's `pick_next()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GvtgAnswer {
    /// Nothing: the current vGPU goes on.
    Keep,
    /// The idle vGPU (nothing to run, or a drain barrier).
    Idle,
    /// This vGPU.
    Run(VgpuId),
}

/// GVT-g's switch state of one GPU.
#[pin_data]
pub(crate) struct GvtgProtocol {
    /// Innermost lock: never held while the engine is called.
    #[pin]
    state: Mutex<GvtgSwitch>,
}

impl GvtgProtocol {
    /// A GPU that runs nothing yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            state <- new_mutex!(GvtgSwitch::new(), "gvt_rs_gvtg_switch"),
        })
    }

    /// `pick_next()` on `engine`, whose provider is `p`; `timer`: the
    /// policy's timer asked for it.
    pub(crate) fn pick_next<P: Provider + ?Sized>(
        &self,
        engine: &Engine,
        p: &P,
        timer: bool,
    ) -> GvtgAnswer {
        let turn = engine.turn_state(timer);
        let step = self.state.lock().step(turn);
        match step {
            SwitchStep::Keep => GvtgAnswer::Keep,
            SwitchStep::Drain => GvtgAnswer::Idle,
            SwitchStep::Pick => match engine.pick(p) {
                Ok(Some(id)) => GvtgAnswer::Run(id),
                Ok(None) => GvtgAnswer::Idle,
                // Work in flight after all (counts out of step): not now.
                Err(_) => GvtgAnswer::Keep,
            },
        }
    }

    /// GVT-g switched to the idle vGPU (`to_idle`) or to a vGPU. Returns
    /// whether a drain barrier completed: the provider must then ask GVT-g
    /// for a decision (`intel_gvt_request_schedule()`).
    pub(crate) fn switched(&self, to_idle: bool) -> bool {
        self.state.lock().switched(to_idle)
    }
}
