// SPDX-License-Identifier: GPL-2.0

//! Statistics: per-vGPU and whole-GPU counters, and the fairness window.

use super::{
    fixed::{
        mul_div_sat,
        PPM, //
    },
    metrics::{
        self,
        Fairness, //
    },
    vchannel::Life,
    Scheduler,
    Tunable,
    VgpuId,
    VSCALE, //
};

/// Statistics of one vGPU, for sysfs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VgpuStats {
    /// Whether the vGPU is started.
    pub started: bool,
    /// Scheduling weight.
    pub weight: u32,
    /// Graphics memory size, MB.
    pub gm_mb: u32,
    /// GPU time of completed workloads since creation, as the provider
    /// measured it (the workloads' own length), ns.
    pub busy_ns: u64,
    /// Engine occupancy charged for its completed workloads since creation:
    /// from dispatch to the completion processed, at least the GPU time
    /// (see `Scheduler::completed`), ns. What the vGPU cost the GPU, and
    /// what the policies and the fairness figures count.
    pub occupied_ns: u64,
    /// The part of `occupied_ns` that completed while every other started
    /// vGPU had work queued or in flight, ns: with competing vGPUs, what the
    /// policy divided among them.
    pub contended_ns: u64,
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
    /// `sfq`/`eevdf`: service charged to its tag since creation (GPU time
    /// plus GPU time held idle for it), ns.
    pub charged_ns: u64,
    /// GPU time the policy held idle for this vGPU's turns while other
    /// vGPUs had work queued, up to each decision's deadline (its part of
    /// [`GpuStats::withheld_ns`]), ns.
    pub withheld_ns: u64,
    /// `eevdf` anticipation: holds ended by its submission.
    pub anticipate_hits: u64,
    /// `eevdf` anticipation: holds that ended without its submission.
    pub anticipate_misses: u64,
    /// `eevdf` anticipation: GPU time held idle ahead of its predicted
    /// submissions (charged to it, counted in `withheld_ns`), ns.
    pub anticipate_held_ns: u64,
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
    /// GPU time left idle while work waited past a decision's deadline:
    /// how late the machine acted on the policy's decisions (timers, work
    /// items, descheduled CPUs), not a choice of the policy, ns.
    pub overdue_ns: u64,
}

impl<const N: usize> Scheduler<N> {
    /// Closes the fairness window if it ended before `now`. O(N) per window.
    pub(super) fn roll(&mut self, now: u64) {
        let win = self.tun.ms(Tunable::WindowMs);
        if now < self.win_start.saturating_add(win) {
            return;
        }
        self.fair = metrics::fairness(
            self.v
                .values()
                .filter(|g| g.life != Life::Free && g.win_active)
                .map(|g| (u64::from(g.weight), g.win_busy_ns)),
        );
        let total: u64 = self
            .v
            .values()
            .map(|g| g.win_busy_ns)
            .fold(0, u64::saturating_add);
        for g in self.v.values_mut() {
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

    /// Whole-GPU counters.
    pub fn gpu_stats(&self) -> GpuStats {
        GpuStats {
            picks: self.picks,
            switches: self.switches,
            rounds: self.vmcg.rounds,
            inflight: self.inflight,
            withheld_ns: self.withheld.total_ns(self.last_now),
            overdue_ns: self.withheld.overdue_ns(self.last_now),
        }
    }

    /// What a switch point samples of vGPU `id` (the engine's `sample`),
    /// `None` if it does not exist: whether it is started, and its
    /// `busy_ns`. Two fields of [`Scheduler::stats`], without the rest of
    /// it, whose latency percentiles each scan a histogram: a decision
    /// asks for every vGPU's, under the engine's locks.
    pub fn sample_view(&self, id: VgpuId) -> Option<(bool, u64)> {
        let g = self.vg(id).ok()?;
        Some((g.life == Life::Started, g.busy_ns))
    }

    /// Statistics of vGPU `id`, `None` if it does not exist.
    pub fn stats(&self, id: VgpuId) -> Option<VgpuStats> {
        let g = self.vg(id).ok()?;
        Some(VgpuStats {
            started: g.life == Life::Started,
            weight: g.weight,
            gm_mb: g.gm_mb,
            busy_ns: g.busy_ns,
            occupied_ns: g.occupied_ns,
            contended_ns: g.contended_ns,
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
            credits: self.vmcg.credits[id],
            slice_ns: self.vmcg.slice_ns[id],
            left_ts_ns: self.tbs.left_ts[id],
            vtag_ns: self.sfq.tag(id) / VSCALE,
            usage_ns: self.thr.usage(id) / VSCALE,
            request_ns: self.sfq.request(id, self.tun.us(Tunable::SfqSliceUs)),
            interactive: self.is_interactive(id),
            round_trips: g.ia.total,
            charged_ns: g.charged_ns,
            withheld_ns: g
                .withheld_ns
                .saturating_add(self.withheld.open_for(id, self.last_now)),
            anticipate_hits: g.ant.hits,
            anticipate_misses: g.ant.misses,
            anticipate_held_ns: g.ant.held_ns,
        })
    }
}
