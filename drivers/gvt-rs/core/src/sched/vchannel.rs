// SPDX-License-Identifier: GPL-2.0

//! Per-vGPU bookkeeping: one V-Channel per engine, lifecycle and statistics.
//!
//! A V-Channel (VMCG's per-DomU queue) is the pair (vGPU, engine). The
//! workloads themselves stay in the kernel's per-vGPU per-engine lists
//! (`workload_q_head`); the core only counts them, which is all a policy
//! needs and keeps the core free of allocation.

use super::anticipate::Predictor;
use super::interact::Interact;
use super::lathist::LatHist;

/// Most engines per GPU the core tracks (GVT-g has 5: RCS, BCS, VCS, VCS2, VECS).
pub const MAX_ENGINES: usize = 8;

/// Counters of one V-Channel.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Channel {
    pub(crate) pending: u32,
    pub(crate) inflight: u32,
}

/// Lifecycle of a vGPU slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Life {
    Free,
    Created,
    Started,
}

/// Everything the core knows about one vGPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vgpu {
    pub(crate) life: Life,
    /// Started at least once since creation: a later start is a restart
    /// (device reset, VMM reopening the vGPU) and buys nothing.
    pub(crate) ever_started: bool,
    pub(crate) weight: u32,
    pub(crate) gm_mb: u32,
    pub(crate) bw_override_mbps: u32,
    pub(crate) ch: [Channel; MAX_ENGINES],
    pub(crate) pending: u32,
    pub(crate) inflight: u32,
    pub(crate) submitted: u64,
    pub(crate) dispatched: u64,
    pub(crate) completed: u64,
    pub(crate) busy_ns: u64,
    /// Engine occupancy charged for its workloads
    /// ([`Scheduler::completed`](super::Scheduler::completed)), ns.
    pub(crate) occupied_ns: u64,
    /// Part of `occupied_ns` that completed while every other started vGPU
    /// had work queued or in flight.
    pub(crate) contended_ns: u64,
    pub(crate) lat_sum_ns: u64,
    pub(crate) lat_max_ns: u64,
    pub(crate) lat: LatHist,
    pub(crate) ia: Interact,
    /// Think-time predictor and anticipation counters (`anticipate.rs`).
    pub(crate) ant: Predictor,
    /// `sfq`/`eevdf`: service charged to its tag (GPU time plus GPU time
    /// held idle for it), ns.
    pub(crate) charged_ns: u64,
    /// GPU time held idle for its turns while other vGPUs' work waited
    /// (closed stretches, `withheld.rs`), ns.
    pub(crate) withheld_ns: u64,
    pub(crate) cpu_ns: u64,
    pub(crate) bytes: u64,
    pub(crate) win_busy_ns: u64,
    pub(crate) win_active: bool,
    pub(crate) share_ppm: u32,
}

impl Vgpu {
    /// An unused slot.
    pub(crate) const FREE: Self = Self {
        life: Life::Free,
        ever_started: false,
        weight: 0,
        gm_mb: 0,
        bw_override_mbps: 0,
        ch: [Channel {
            pending: 0,
            inflight: 0,
        }; MAX_ENGINES],
        pending: 0,
        inflight: 0,
        submitted: 0,
        dispatched: 0,
        completed: 0,
        busy_ns: 0,
        occupied_ns: 0,
        contended_ns: 0,
        lat_sum_ns: 0,
        lat_max_ns: 0,
        lat: LatHist::EMPTY,
        ia: Interact::NEW,
        ant: Predictor::NEW,
        charged_ns: 0,
        withheld_ns: 0,
        cpu_ns: 0,
        bytes: 0,
        win_busy_ns: 0,
        win_active: false,
        share_ppm: 0,
    };

    /// Whether the vGPU has queued work on any engine.
    pub(crate) fn backlogged(&self) -> bool {
        self.pending > 0
    }

    /// Records one submit-to-dispatch latency.
    pub(crate) fn record_latency(&mut self, ns: u64) {
        self.lat_sum_ns = self.lat_sum_ns.saturating_add(ns);
        self.lat_max_ns = self.lat_max_ns.max(ns);
        self.lat.record(ns);
    }
}
