// SPDX-License-Identifier: GPL-2.0

//! Per-vGPU bookkeeping: one V-Channel per engine, lifecycle and statistics.
//!
//! A V-Channel (VMCG's per-DomU queue) is the pair (vGPU, engine). The
//! workloads themselves stay in the kernel's per-vGPU per-engine lists
//! (`workload_q_head`); the core only counts them, which is all a policy
//! needs and keeps the core free of allocation.

use super::fixed::log2_bucket;

/// Most engines per GPU the core tracks (GVT-g has 5: RCS, BCS, VCS, VCS2, VECS).
pub const MAX_ENGINES: usize = 8;

/// Buckets of the submit-to-dispatch latency histogram (powers of two of
/// microseconds: bucket `k` holds latencies in `[2^k, 2^(k+1))` us, bucket 0
/// also holds everything below 2 us, the last bucket everything above).
pub const LAT_BUCKETS: usize = 24;

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
    pub(crate) lat_sum_ns: u64,
    pub(crate) lat_max_ns: u64,
    pub(crate) lat_hist: [u32; LAT_BUCKETS],
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
        lat_sum_ns: 0,
        lat_max_ns: 0,
        lat_hist: [0; LAT_BUCKETS],
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
        let b = (log2_bucket(ns / 1000) as usize).min(LAT_BUCKETS - 1);
        if let Some(h) = self.lat_hist.get_mut(b) {
            *h = h.saturating_add(1);
        }
    }

    /// Upper bound of the bucket holding the `pct`-th percentile latency, in ns.
    pub(crate) fn latency_percentile_ns(&self, pct: u64) -> u64 {
        let total: u64 = self
            .lat_hist
            .iter()
            .map(|&c| u64::from(c))
            .fold(0, u64::saturating_add);
        if total == 0 {
            return 0;
        }
        let want = total.saturating_mul(pct).div_ceil(100).max(1);
        let mut acc: u64 = 0;
        for (k, &c) in self.lat_hist.iter().enumerate() {
            acc = acc.saturating_add(u64::from(c));
            if acc >= want {
                return (2u64 << k).saturating_mul(1000);
            }
        }
        self.lat_max_ns
    }
}
