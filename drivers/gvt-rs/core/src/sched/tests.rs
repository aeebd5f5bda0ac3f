// SPDX-License-Identifier: GPL-2.0

//! Scenario and property tests of the scheduler, driven by a tiny one-engine
//! discrete-event harness that follows the kernel contract of `mod.rs`.

extern crate std;

use super::throttle::paper_rule_waits;
use super::*;
use crate::testing::{
    vid,
    Rng, //
};
use std::collections::VecDeque;
use std::format;
use std::vec;
use std::vec::Vec;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// One-engine harness: per-vGPU FIFO of (queued_at, service ns).
struct Sim<const N: usize> {
    s: Scheduler<N>,
    now: u64,
    q: Vec<VecDeque<(u64, u64)>>,
    running: Option<(usize, u64, u64)>,
    arrivals: Vec<(u64, usize, u64)>,
    saturate: Vec<Option<u64>>,
    /// Closed-loop frames: (GPU ns, think ns): the next frame is queued
    /// `think` after the last one completed.
    frames: Vec<Option<(u64, u64)>>,
    busy: Vec<u64>,
    measure_from: u64,
    picks: Vec<(u64, usize)>,
    last_dispatch: Vec<u64>,
    max_gap: Vec<u64>,
    /// How late every policy timer fires, ns (a busy host).
    timer_late: u64,
    /// Host time from a workload's end to its completion processed, ns:
    /// the engine takes nothing else meanwhile (`sim/gpu.rs` and
    /// `sim/delivery.rs`: the timer interrupt, the work item, the
    /// status-page write).
    overhead: u64,
    /// Engine time each vGPU held in the measured period, ns: from dispatch
    /// to the completion processed, measured here, not by the scheduler.
    held: Vec<u64>,
    dispatched_at: u64,
}

impl<const N: usize> Sim<N> {
    fn new(policy: Policy) -> Self {
        let mut s = Scheduler::<N>::new();
        s.set_policy(policy, 0).unwrap();
        Self {
            s,
            now: 0,
            q: vec![VecDeque::new(); N],
            running: None,
            arrivals: Vec::new(),
            saturate: vec![None; N],
            frames: vec![None; N],
            busy: vec![0; N],
            measure_from: 0,
            picks: Vec::new(),
            last_dispatch: vec![0; N],
            max_gap: vec![0; N],
            timer_late: 0,
            overhead: 0,
            held: vec![0; N],
            dispatched_at: 0,
        }
    }

    fn add(&mut self, id: usize, weight: u32) {
        self.s.create(vid(id), weight, 512).unwrap();
        self.s.start(vid(id), self.now).unwrap();
        self.last_dispatch[id] = self.now;
    }

    fn queue(&mut self, id: usize, svc: u64) {
        self.q[id].push_back((self.now, svc));
        self.s.queued(vid(id), 0, self.now).unwrap();
    }

    fn at(&mut self, t: u64, id: usize, svc: u64) {
        self.arrivals.push((t, id, svc));
        self.arrivals.sort_by_key(|a| core::cmp::Reverse(a.0));
    }

    fn refill(&mut self) {
        for id in 0..N {
            if let Some(svc) = self.saturate[id] {
                let started = self.s.stats(vid(id)).is_some_and(|st| st.started);
                while started && self.q[id].len() < 2 {
                    self.queue(id, svc);
                }
            }
        }
    }

    fn drive(&mut self) {
        self.refill();
        if self.running.is_some() {
            return;
        }
        if (self.s.current().is_none() || self.s.need_resched(self.now))
            && self.s.gpu_stats().inflight == 0
        {
            if let Pick::Run { vgpu, .. } = self.s.pick(self.now).unwrap() {
                self.picks.push((self.now, usize::from(vgpu)));
            }
        }
        if let Some(id) = self.s.next_vgpu(0, self.now).map(usize::from) {
            let (qa, svc) = self.q[id].pop_front().unwrap();
            self.s.dispatched(vid(id), 0, qa, self.now).unwrap();
            let gap = self
                .now
                .saturating_sub(self.last_dispatch[id].max(self.measure_from));
            if self.now >= self.measure_from {
                self.max_gap[id] = self.max_gap[id].max(gap);
            }
            self.last_dispatch[id] = self.now;
            self.dispatched_at = self.now;
            self.running = Some((id, self.now + svc + self.overhead, svc));
        }
    }

    fn run_until(&mut self, end: u64) {
        loop {
            self.drive();
            let mut t = self.s.next_timer(self.now).saturating_add(self.timer_late);
            if let Some((_, done, _)) = self.running {
                t = t.min(done);
            }
            if let Some(&(a, _, _)) = self.arrivals.last() {
                t = t.min(a);
            }
            if t > end {
                self.now = end;
                return;
            }
            self.now = t;
            if let Some((id, done, svc)) = self.running {
                if done == t {
                    self.running = None;
                    self.s.completed(vid(id), 0, svc, t).unwrap();
                    // Attribute busy time to the measurement window.
                    let from = self.measure_from.max(t - svc - self.overhead);
                    self.busy[id] += t.saturating_sub(self.overhead + from).min(svc);
                    let from = self.measure_from.max(self.dispatched_at);
                    self.held[id] += t.saturating_sub(from);
                    if let Some((f, think)) = self.frames[id] {
                        if self.q[id].is_empty() {
                            self.at(t + think, id, f);
                        }
                    }
                }
            }
            while let Some(&(a, id, svc)) = self.arrivals.last() {
                if a != t {
                    break;
                }
                self.arrivals.pop();
                self.queue(id, svc);
            }
            self.s.tick(t);
        }
    }

    /// Starts measuring busy time and starvation gaps from now.
    fn measure(&mut self) {
        self.measure_from = self.now;
        self.busy = vec![0; N];
        self.held = vec![0; N];
        self.max_gap = vec![0; N];
    }

    fn fairness(&self, ids: &[usize]) -> Fairness {
        let w: Vec<(u64, u64)> = ids
            .iter()
            .map(|&i| (self.s.stats(vid(i)).unwrap().weight.into(), self.busy[i]))
            .collect();
        metrics::fairness(w.iter().copied())
    }
}

fn vtag(s: &Scheduler<4>, id: usize) -> u64 {
    s.stats(vid(id)).unwrap().vtag_ns / MS
}

// ---- FairGV ------------------------------------------------------------

#[test]
fn fairgv_fig4_trace() {
    for rule in [1, 0] {
        let mut sim = Sim::<4>::new(Policy::Sfq);
        sim.s.set_tunable(Tunable::SfqSliceUs, 10_000, 0).unwrap();
        sim.s.set_tunable(Tunable::SfqWakeMaxVf, rule, 0).unwrap();
        sim.add(0, 1); // the paper's vGPU 1
        sim.add(1, 2); // the paper's vGPU 2
        for _ in 0..3 {
            sim.queue(0, 10 * MS);
        }
        for _ in 0..20 {
            sim.queue(1, 10 * MS);
        }
        sim.at(105 * MS, 0, 10 * MS);
        sim.run_until(10 * MS + 1);
        assert_eq!(vtag(&sim.s, 0), 10, "S1 = 10 after the first quantum");
        sim.run_until(20 * MS + 1);
        assert_eq!(vtag(&sim.s, 1), 5, "S2 = 5 after vGPU 2's first run");
        sim.run_until(104 * MS);
        assert_eq!(vtag(&sim.s, 0), 30);
        assert_eq!(vtag(&sim.s, 1), 35);
        sim.run_until(106 * MS);
        assert_eq!(vtag(&sim.s, 0), 35, "wake-up tag is V = 35 at t = 105");
        sim.run_until(115 * MS);
        let order: Vec<(u64, usize)> = sim.picks.iter().map(|&(t, v)| (t / MS, v)).collect();
        assert_eq!(
            order,
            vec![
                (0, 0),
                (10, 1),
                (20, 1),
                (30, 0),
                (40, 1),
                (50, 1),
                (60, 0),
                (70, 1),
                (80, 1),
                (90, 1),
                (100, 1),
                (110, 0)
            ]
        );
    }
}

#[test]
fn sfq_wake_rule_keeps_or_erases_debt() {
    let mut first_rerun = Vec::new();
    for rule in [1, 0] {
        let mut sim = Sim::<4>::new(Policy::Sfq);
        sim.s.set_tunable(Tunable::SfqSliceUs, 10_000, 0).unwrap();
        sim.s.set_tunable(Tunable::SfqWakeMaxVf, rule, 0).unwrap();
        sim.add(0, 1);
        sim.add(1, 1);
        sim.queue(0, 40 * MS); // one long non-preemptive batch: 30 ms overrun
        for _ in 0..20 {
            sim.queue(1, 10 * MS);
        }
        sim.at(45 * MS, 0, 10 * MS);
        sim.run_until(200 * MS);
        let rerun = sim.picks.iter().skip(1).find(|p| p.1 == 0).unwrap().0 / MS;
        first_rerun.push(rerun);
    }
    // max(V, F): the 40 ms of debt is kept, vGPU 0 runs again when vGPU 1
    // has had its 40 ms too. S <- V (paper): the debt is forgotten.
    assert_eq!(first_rerun, vec![80, 50]);
}

#[test]
fn sfq_lag_moves_with_a_vgpu() {
    // On GPU a, vGPU 0 overruns its slice by 30 ms: it leaves with debt.
    let mut a = Sim::<4>::new(Policy::Sfq);
    a.s.set_tunable(Tunable::SfqSliceUs, 10_000, 0).unwrap();
    a.add(0, 1);
    a.add(1, 1);
    a.queue(0, 40 * MS);
    for _ in 0..2 {
        a.queue(1, 10 * MS);
    }
    a.run_until(45 * MS);
    a.s.stop(vid(0), a.now).unwrap();
    let lag = a.s.fq_lag(vid(0)).unwrap();
    assert!(lag > 0, "an overrun is debt");
    // On GPU b, whose virtual time is elsewhere, it keeps that position.
    let mut b = Sim::<4>::new(Policy::Sfq);
    b.s.set_tunable(Tunable::SfqSliceUs, 10_000, 0).unwrap();
    b.add(2, 1);
    for _ in 0..10 {
        b.queue(2, 10 * MS);
    }
    b.run_until(55 * MS);
    b.s.create(vid(0), 1, 512).unwrap();
    b.s.set_fq_lag(vid(0), lag).unwrap();
    assert_eq!(b.s.fq_lag(vid(0)).unwrap(), lag);
    b.s.start(vid(0), b.now).unwrap();
    assert_eq!(b.s.set_fq_lag(vid(0), 0), Err(Error::Busy));
    b.queue(0, 10 * MS);
    assert_eq!(
        b.s.fq_lag(vid(0)).unwrap(),
        lag,
        "woken with its debt, max(V, F)"
    );
}

#[test]
fn sfq_overrun_charged_and_ties_by_id() {
    let mut sim = Sim::<4>::new(Policy::Sfq);
    sim.add(0, 1);
    sim.add(1, 1);
    sim.saturate[0] = Some(20 * MS); // overruns the 6 ms slice
    sim.saturate[1] = Some(MS);
    sim.run_until(2000 * MS);
    let b0 = sim.s.stats(vid(0)).unwrap().busy_ns;
    let b1 = sim.s.stats(vid(1)).unwrap().busy_ns;
    // Long and short batches get the same GPU time within one long batch.
    assert!(b0.abs_diff(b1) <= 21 * MS, "{b0} {b1}");
}

#[test]
fn sfq_tags_wrap_around() {
    let mut sim = Sim::<4>::new(Policy::Sfq);
    sim.s.sfq.vtime = u64::MAX - 5 * VSCALE * MS;
    sim.add(0, 1);
    sim.add(1, 3);
    sim.saturate[0] = Some(MS);
    sim.saturate[1] = Some(MS);
    sim.run_until(3000 * MS);
    let b0 = sim.s.stats(vid(0)).unwrap().busy_ns as f64;
    let b1 = sim.s.stats(vid(1)).unwrap().busy_ns as f64;
    assert!((b1 / b0 - 3.0).abs() < 0.05, "{}", b1 / b0);
}

#[test]
fn sfq_weighted_mixes_min_max() {
    // FairGV Fig. 8 / Fig. 9 weight mixes with short and long workloads.
    for weights in [&[1u32, 2, 3][..], &[1, 2, 2, 3, 3, 4][..]] {
        for svc in [200 * US, 5 * MS] {
            let mut sim = Sim::<8>::new(Policy::Sfq);
            let ids: Vec<usize> = (0..weights.len()).collect();
            for (&i, &w) in ids.iter().zip(weights) {
                sim.add(i, w);
                sim.saturate[i] = Some(svc);
            }
            sim.measure_from = 1000 * MS;
            sim.run_until(21_000 * MS);
            let f = sim.fairness(&ids);
            assert!(f.min_max_ppm >= 990_000, "{weights:?} {svc}: {f:?}");
            assert!(f.lambda_ppm <= 10_000, "{weights:?} {svc}: {f:?}");
        }
    }
}

// ---- VMCG ----------------------------------------------------------------

#[test]
fn vmcg_worked_example_credits_and_slices() {
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Vmcg, 0).unwrap();
    for id in 0..3 {
        s.create(vid(id), 1, 512).unwrap();
        s.start(vid(id), 0).unwrap();
    }
    for (id, n) in [(0, 34), (1, 33), (2, 33)] {
        for _ in 0..n {
            s.queued(vid(id), 0, 0).unwrap();
        }
    }
    // Teapot DomU used 16 ms of CPU per 100 ms, the gear DomUs 15 ms.
    s.cpu_time(vid(0), 16 * MS).unwrap();
    s.cpu_time(vid(1), 15 * MS).unwrap();
    s.cpu_time(vid(2), 15 * MS).unwrap();
    let p = s.pick(100 * MS).unwrap();
    assert_eq!(
        p,
        Pick::Run {
            vgpu: vid(0),
            slice_ns: 16 * MS,
            switched: true
        }
    );
    let c: Vec<u32> = (0..3).map(|i| s.stats(vid(i)).unwrap().credits).collect();
    assert_eq!(c, vec![34, 33, 33]);
    let t: Vec<u64> = (0..3)
        .map(|i| s.stats(vid(i)).unwrap().slice_ns / MS)
        .collect();
    assert_eq!(t, vec![16, 15, 15]);
    // A credit buys a batch of 4 workloads.
    for k in 0..5 {
        assert_eq!(s.next_vgpu(0, 100 * MS), Some(vid(0)));
        s.dispatched(vid(0), 0, 0, 100 * MS).unwrap();
        s.completed(vid(0), 0, 100 * US, 100 * MS).unwrap();
        let want = if k < 4 { 33 } else { 32 };
        assert_eq!(s.stats(vid(0)).unwrap().credits, want);
    }
    // Descending slice order: 16 ms first, then the two 15 ms DomUs by id.
    assert_eq!(
        s.pick(101 * MS).unwrap(),
        Pick::Run {
            vgpu: vid(1),
            slice_ns: 15 * MS,
            switched: true
        }
    );
    assert_eq!(
        s.pick(101 * MS).unwrap(),
        Pick::Run {
            vgpu: vid(2),
            slice_ns: 15 * MS,
            switched: true
        }
    );
}

/// Algorithm 1 steps 1-8 exactly as printed (1-based indices).
fn paper_sort(cpu: &mut [u64]) {
    let n = cpu.len();
    for i in 1..=n {
        for j in (i + 1)..=n {
            if cpu[j - 1] > cpu[j - 2] {
                cpu.swap(j - 1, j - 2);
            }
        }
    }
}

#[test]
fn vmcg_sort_bug_fixed() {
    let mut a = [1, 2, 3];
    paper_sort(&mut a);
    assert_eq!(a, [2, 3, 1], "the printed loop does not sort");
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Vmcg, 0).unwrap();
    for id in 0..3 {
        s.create(vid(id), 1, 512).unwrap();
        s.start(vid(id), 0).unwrap();
        s.queued(vid(id), 0, 0).unwrap();
        s.cpu_time(vid(id), (id + 1) * 10 * MS).unwrap();
    }
    let order: Vec<usize> = (0..3)
        .map(|_| match s.pick(100 * MS).unwrap() {
            Pick::Run { vgpu, .. } => usize::from(vgpu),
            Pick::Idle => usize::MAX,
        })
        .collect();
    assert_eq!(order, vec![2, 1, 0]);
    let t: Vec<u64> = (0..3).map(|i| s.stats(vid(i)).unwrap().slice_ns).collect();
    assert_eq!(t, vec![16 * MS / 3, 32 * MS / 3, 16 * MS]);
}

#[test]
fn vmcg_zero_cpu_time_and_division_by_zero() {
    // All CPU times zero: the paper divides by zero; we fall back to weights.
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Vmcg, 0).unwrap();
    for (id, w) in [(0, 4), (1, 2), (2, 1)] {
        s.create(vid(id), w, 512).unwrap();
        s.start(vid(id), 0).unwrap();
        s.queued(vid(id), 0, 0).unwrap();
    }
    s.pick(50 * MS).unwrap();
    let t: Vec<u64> = (0..3).map(|i| s.stats(vid(i)).unwrap().slice_ns).collect();
    assert_eq!(t, vec![16 * MS, 8 * MS, 4 * MS]);
    // One VM with zero CPU time among busy ones gets the minimum slice, not 0.
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Vmcg, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 1, 512).unwrap();
        s.start(vid(id), 0).unwrap();
        s.queued(vid(id), 0, 0).unwrap();
    }
    s.cpu_time(vid(0), 30 * MS).unwrap();
    assert_eq!(
        s.pick(100 * MS).unwrap(),
        Pick::Run {
            vgpu: vid(0),
            slice_ns: 16 * MS,
            switched: true
        }
    );
    assert_eq!(
        s.pick(100 * MS).unwrap(),
        Pick::Run {
            vgpu: vid(1),
            slice_ns: MS,
            switched: true
        }
    );
}

#[test]
fn vmcg_refill_rules() {
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Vmcg, 0).unwrap();
    s.set_tunable(Tunable::VmcgCreditPool, 2, 0).unwrap();
    s.set_tunable(Tunable::VmcgBatch, 1, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 1, 512).unwrap();
        s.start(vid(id), 0).unwrap();
        for _ in 0..10 {
            s.queued(vid(id), 0, 0).unwrap();
        }
    }
    // Pool 2 over two equal vGPUs: 1 credit each, batch 1.
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    assert_eq!(s.stats(vid(0)).unwrap().credits, 1);
    assert_eq!(s.next_vgpu(0, 0), Some(vid(0)));
    s.dispatched(vid(0), 0, 0, 0).unwrap();
    s.completed(vid(0), 0, 10, 0).unwrap();
    // Credits gone while vGPU 1 still holds one: no early refill, turn over.
    assert_eq!(s.next_vgpu(0, 0), None);
    assert!(s.need_resched(0));
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(1)));
    s.dispatched(vid(1), 0, 0, 0).unwrap();
    s.completed(vid(1), 0, 10, 0).unwrap();
    assert_eq!(s.stats(vid(1)).unwrap().credits, 0);
    // Both exhausted: the next round (interval end) refills both.
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    assert_eq!(s.stats(vid(0)).unwrap().credits, 1);
    assert_eq!(s.stats(vid(1)).unwrap().credits, 1);
    // Early exhaustion with spare GPU: vGPU 1 stops, vGPU 0 refills at once.
    s.stop(vid(1), 0).unwrap();
    for _ in 0..3 {
        assert_eq!(s.next_vgpu(0, 0), Some(vid(0)));
        s.dispatched(vid(0), 0, 0, 0).unwrap();
        s.completed(vid(0), 0, 10, 0).unwrap();
        assert!(!s.need_resched(0) || s.gpu_stats().rounds > 0);
    }
    assert_eq!(s.stats(vid(0)).unwrap().dispatched, 4);
}

#[test]
fn vmcg_equal_sizes_follow_weights() {
    let mut sim = Sim::<8>::new(Policy::Vmcg);
    for (i, w) in [1u32, 2, 3].into_iter().enumerate() {
        sim.add(i, w);
        sim.saturate[i] = Some(MS);
    }
    sim.run_until(1000 * MS);
    sim.measure();
    sim.run_until(11_000 * MS);
    let f = sim.fairness(&[0, 1, 2]);
    // Slices 5.3/10.7/16 ms are served in whole 1 ms workloads (6/11/16)
    // and VMCG carries no overrun debt: about 0.89, not 1.
    assert!(f.min_max_ppm > 850_000 && f.lambda_ppm < 60_000, "{f:?}");
}

#[test]
fn vmcg_eq2_bandwidth_and_memory() {
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Vmcg, 0).unwrap();
    s.set_tunable(Tunable::VmcgGmTotalMb, 1024, 0).unwrap();
    s.set_tunable(Tunable::VmcgLinkMbps, 1000, 0).unwrap();
    s.create(vid(0), 1, 1024).unwrap();
    s.create(vid(1), 1, 1024).unwrap();
    s.set_bandwidth_mbps(vid(0), 1000).unwrap(); // b*m = 1: e^1
    for id in 0..2 {
        s.start(vid(id), 0).unwrap();
        s.queued(vid(id), 0, 0).unwrap();
    }
    s.pick(10 * MS).unwrap();
    // n = (e + 1) : (1 + 1) = 3.718 : 2 -> 65.0 and 35.0 of 100.
    assert_eq!(s.stats(vid(0)).unwrap().credits, 65);
    assert_eq!(s.stats(vid(1)).unwrap().credits, 35);
}

// ---- TBS -----------------------------------------------------------------

#[test]
fn tbs_balance_debt_and_reset() {
    let mut s = Scheduler::<4>::new();
    s.create(vid(0), 4, 512).unwrap();
    s.create(vid(1), 12, 512).unwrap();
    s.start(vid(0), 0).unwrap();
    s.start(vid(1), 0).unwrap();
    assert_eq!(
        s.stats(vid(0)).unwrap().left_ts_ns,
        0,
        "a new vGPU starts with no budget"
    );
    s.tick(MS); // first tick: stage 0
    assert_eq!(s.stats(vid(0)).unwrap().left_ts_ns, 25 * MS as i64);
    assert_eq!(s.stats(vid(1)).unwrap().left_ts_ns, 75 * MS as i64);
    // Simulate a 40 ms debt for vGPU 0 and run stages 1..9: debt carried.
    s.tbs.left_ts[vid(0)] = -40 * MS as i64;
    for k in 1..10u64 {
        s.tick(MS + k * 100 * MS);
    }
    assert_eq!(
        s.stats(vid(0)).unwrap().left_ts_ns,
        (-40 + 9 * 25) * MS as i64
    );
    // Stage 0 again: reset, debt forgiven.
    s.tick(MS + 1000 * MS);
    assert_eq!(s.stats(vid(0)).unwrap().left_ts_ns, 25 * MS as i64);
}

#[test]
fn tbs_lru_round_robin_and_gate() {
    let mut sim = Sim::<4>::new(Policy::Tbs);
    sim.s.set_tunable(Tunable::TbsStartBoostMs, 0, 0).unwrap();
    for id in 0..3 {
        sim.add(id, 1);
        sim.saturate[id] = Some(250 * US);
    }
    sim.run_until(30 * MS);
    // 1 ms ticks rotate the LRU run queue: each runs in turn.
    let order: Vec<usize> = sim.picks.iter().skip(1).take(6).map(|p| p.1).collect();
    assert!(order.windows(2).all(|w| w[0] != w[1]), "{order:?}");
    // Over whole balance periods the equal weights share equally.
    sim.measure_from = 100 * MS;
    sim.run_until(2100 * MS);
    let f = sim.fairness(&[0, 1, 2]);
    assert!(f.min_max_ppm > 950_000, "{f:?}");
}

#[test]
fn tbs_start_boost() {
    let mut sim = Sim::<4>::new(Policy::Tbs);
    sim.add(0, 1);
    sim.saturate[0] = Some(MS);
    sim.run_until(3000 * MS);
    sim.add(1, 1);
    sim.saturate[1] = Some(MS);
    sim.measure();
    sim.run_until(4500 * MS);
    // The new vGPU owns the GPU for its 2 s priority window.
    assert!(
        sim.busy[1] > 1490 * MS && sim.busy[0] < 10 * MS,
        "{:?}",
        sim.busy
    );
}

/// gvt-linux #187: one busy VM, a second started but idle.
fn issue187(policy: Policy, second: bool) -> u64 {
    let mut sim = Sim::<4>::new(policy);
    sim.add(0, 8);
    sim.saturate[0] = Some(MS);
    if second {
        sim.add(1, 8);
    }
    sim.measure_from = 3000 * MS;
    sim.run_until(6000 * MS);
    sim.busy[0]
}

#[test]
fn issue187_idle_neighbour() {
    for p in Policy::ALL {
        let alone = issue187(p, false);
        let with = issue187(p, true);
        let loss_ppm = (alone - with) * 1_000_000 / alone;
        if p == Policy::Tbs {
            assert!(loss_ppm >= 450_000, "tbs loses about half: {loss_ppm}");
        } else {
            assert!(loss_ppm < 20_000, "{p:?} loses {loss_ppm} ppm");
        }
    }
}

// ---- throttle --------------------------------------------------------------

#[test]
fn throttle_skips_heavy_vgpu() {
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Sfq, 0).unwrap();
    s.set_tunable(Tunable::Throttle, 1, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 1, 512).unwrap();
        s.start(vid(id), 0).unwrap();
        s.queued(vid(id), 0, 0).unwrap();
    }
    // vGPU 0 has the smaller tag but 3x the usage of vGPU 1.
    s.thr.set_usage(vid(0), 300);
    s.thr.set_usage(vid(1), 100);
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(1)));
    s.thr.set_usage(vid(0), 200); // exactly 2x: allowed
    s.force = true;
    s.sfq.charge(vid(1), 1, 1);
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
}

#[test]
fn throttle_zero_usage_stall_guard() {
    // The paper's rule: a newcomer with usage 0 makes everybody else wait.
    assert!(paper_rule_waits(0, 1));
    let mut sim = Sim::<4>::new(Policy::Tbs);
    sim.s.set_tunable(Tunable::Throttle, 1, 0).unwrap();
    sim.s.set_tunable(Tunable::TbsStartBoostMs, 0, 0).unwrap();
    for id in 0..2 {
        sim.add(id, 1);
        sim.saturate[id] = Some(MS);
    }
    sim.run_until(3000 * MS);
    let before = sim
        .s
        .stats(vid(0))
        .unwrap()
        .usage_ns
        .min(sim.s.stats(vid(1)).unwrap().usage_ns);
    sim.add(2, 1);
    sim.saturate[2] = Some(MS);
    sim.measure();
    sim.run_until(3500 * MS);
    // The newcomer joined level with the least-served VM ...
    assert!(sim.s.stats(vid(2)).unwrap().usage_ns >= before);
    // ... and the old VMs kept running.
    assert!(
        sim.busy[0] > 100 * MS && sim.busy[1] > 100 * MS,
        "{:?}",
        sim.busy
    );
}

#[test]
fn throttle_bounds_usage_ratio_under_tbs() {
    // Long batches overrun TBS budgets; the throttle keeps usage within 2x.
    let mut sim = Sim::<4>::new(Policy::Tbs);
    sim.s.set_tunable(Tunable::Throttle, 1, 0).unwrap();
    sim.add(0, 1);
    sim.add(1, 1);
    sim.saturate[0] = Some(30 * MS);
    sim.saturate[1] = Some(100 * US);
    sim.run_until(5000 * MS);
    let u0 = sim.s.stats(vid(0)).unwrap().usage_ns;
    let u1 = sim.s.stats(vid(1)).unwrap().usage_ns;
    assert!(u0 <= 2 * u1 + 30 * MS, "{u0} {u1}");
}

// ---- API edge cases -----------------------------------------------------------

#[test]
fn errors_change_nothing() {
    let mut s = Scheduler::<4>::new();
    assert_eq!(s.create(vid(4), 1, 0), Err(Error::OutOfRange));
    assert_eq!(s.create(vid(0), 0, 0), Err(Error::OutOfRange));
    assert_eq!(s.create(vid(0), 10_001, 0), Err(Error::OutOfRange));
    s.create(vid(0), 2, 64).unwrap();
    assert_eq!(s.create(vid(0), 2, 64), Err(Error::Busy));
    assert_eq!(s.queued(vid(0), 0, 0), Err(Error::Invalid), "not started");
    assert_eq!(s.queued(vid(3), 0, 0), Err(Error::Invalid), "no such vGPU");
    s.start(vid(0), 0).unwrap();
    assert_eq!(s.queued(vid(0), MAX_ENGINES, 0), Err(Error::Invalid));
    assert_eq!(
        s.dispatched(vid(0), 0, 0, 0),
        Err(Error::Invalid),
        "nothing queued"
    );
    assert_eq!(
        s.completed(vid(0), 0, 5, 0),
        Err(Error::Invalid),
        "nothing in flight"
    );
    assert_eq!(s.destroy(vid(0)), Err(Error::Busy), "started");
    s.queued(vid(0), 0, 0).unwrap();
    assert!(matches!(s.pick(1).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    assert_eq!(s.next_vgpu(0, 1), Some(vid(0)));
    s.dispatched(vid(0), 0, 0, 5).unwrap();
    assert_eq!(s.pick(6), Err(Error::Busy), "work in flight");
    s.stop(vid(0), 6).unwrap();
    assert_eq!(s.destroy(vid(0)), Err(Error::Busy), "in flight");
    s.completed(vid(0), 0, 5, 7).unwrap();
    s.destroy(vid(0)).unwrap();
    assert_eq!(s.stats(vid(0)), None);
    // Tunables: range and cross checks, value unchanged on error.
    assert_eq!(
        s.set_tunable(Tunable::VmcgSliceCeilingUs, 999, 0),
        Err(Error::OutOfRange)
    );
    assert_eq!(
        s.set_tunable(Tunable::VmcgMinSliceUs, 20_000, 0),
        Err(Error::OutOfRange)
    );
    assert_eq!(s.tunable(Tunable::VmcgMinSliceUs), 1000);
    s.set_tunable(Tunable::VmcgMinSliceUs, 16_000, 0).unwrap();
    assert_eq!(
        s.set_tunable(Tunable::VmcgSliceCeilingUs, 15_000, 0),
        Err(Error::OutOfRange)
    );
    assert_eq!(s.tunable(Tunable::VmcgSliceCeilingUs), 16_000);
    assert_eq!(s.set_weight(vid(1), 5), Err(Error::Invalid));
    s.create(vid(1), 5, 0).unwrap();
    assert_eq!(s.set_weight(vid(1), 0), Err(Error::OutOfRange));
    assert_eq!(s.stats(vid(1)).unwrap().weight, 5);
    for t in Tunable::ALL {
        let (lo, hi) = t.range();
        assert!(lo <= t.default_value() && t.default_value() <= hi, "{t:?}");
    }
    for p in Policy::ALL {
        assert_eq!(Policy::from_name(p.name()), Some(p));
    }
    assert_eq!(Policy::from_name("cfq"), None);
}

#[test]
fn latency_and_window_metrics() {
    let mut sim = Sim::<4>::new(Policy::Sfq);
    sim.add(0, 1);
    sim.add(1, 3);
    sim.saturate[0] = Some(MS);
    sim.saturate[1] = Some(MS);
    sim.run_until(2500 * MS);
    let f = sim.s.fairness();
    assert_eq!(f.active, 2);
    assert!(f.min_max_ppm > 980_000, "{f:?}");
    let st = sim.s.stats(vid(0)).unwrap();
    assert!(st.share_ppm.abs_diff(250_000) < 10_000, "{}", st.share_ppm);
    assert!(st.latency_avg_ns > 0 && st.latency_max_ns >= st.latency_avg_ns);
    assert!(st.latency_p99_ns >= st.latency_avg_ns / 2);
    assert_eq!(st.submitted, st.dispatched + u64::from(st.queue_depth));
}

#[test]
fn policy_switch_mid_run() {
    let mut sim = Sim::<4>::new(Policy::Tbs);
    for id in 0..3 {
        sim.add(id, id as u32 + 1);
        sim.saturate[id] = Some(700 * US);
    }
    sim.run_until(500 * MS);
    for (k, p) in [Policy::Sfq, Policy::Vmcg, Policy::Tbs, Policy::Sfq]
        .into_iter()
        .enumerate()
    {
        sim.s.set_policy(p, sim.now).unwrap();
        let t = sim.now;
        sim.run_until(t + 500 * MS);
        for id in 0..3 {
            assert!(
                sim.now - sim.last_dispatch[id] < 200 * MS,
                "switch {k} to {p:?}: {id} starved"
            );
        }
    }
}

// ---- properties --------------------------------------------------------------

#[test]
fn property_no_starvation_and_weighted_shares() {
    for seed in 1..=12u64 {
        let mut r = Rng::new(seed);
        let n = r.range(2, 8) as usize;
        let weights: Vec<u32> = (0..n).map(|_| r.range(1, 8) as u32).collect();
        let svcs: Vec<u64> = (0..n).map(|_| r.range(50, 3000) * US).collect();
        for p in Policy::ALL {
            let mut sim = Sim::<8>::new(p);
            for i in 0..n {
                sim.add(i, weights[i]);
                sim.saturate[i] = Some(svcs[i]);
            }
            // Measure after upstream's 2 s start-up priority window.
            sim.run_until(2500 * MS);
            sim.measure();
            sim.run_until(10_500 * MS);
            let ids: Vec<usize> = (0..n).collect();
            // No starvation: every backlogged vGPU is served regularly.
            for i in 0..n {
                assert!(
                    sim.max_gap[i] < 400 * MS,
                    "seed {seed} {p:?}: vGPU {i} waited {} ms",
                    sim.max_gap[i] / MS
                );
            }
            let f = sim.fairness(&ids);
            match p {
                Policy::Sfq | Policy::Eevdf => assert!(
                    f.lambda_ppm < 20_000 && f.min_max_ppm > 970_000,
                    "seed {seed} {p:?} {f:?} {weights:?} {svcs:?}"
                ),
                // TBS is weight-proportional when everybody is busy, up to
                // the overruns of non-preemptive workloads.
                Policy::Tbs => assert!(
                    f.lambda_ppm < 100_000,
                    "seed {seed} tbs {f:?} {weights:?} {svcs:?}"
                ),
                // VMCG counts credits in workloads, not time: a vGPU with
                // short workloads runs out of credits long before its slice
                // ends, so shares follow weights only for equal workload
                // sizes (see vmcg_equal_sizes_follow_weights). No share
                // property, by design of the paper; no starvation holds.
                Policy::Vmcg => {}
            }
        }
    }
}

#[test]
fn property_random_events_never_break_invariants() {
    // Random joins, leaves, weights, queueing and policy switches: the
    // scheduler never returns inconsistent decisions and counters balance.
    for seed in 1..=20u64 {
        let mut r = Rng::new(seed);
        let mut sim = Sim::<8>::new(Policy::ALL[(seed % 3) as usize]);
        sim.s.set_tunable(Tunable::Throttle, seed % 2, 0).unwrap();
        for i in 0..8 {
            sim.s.create(vid(i), r.range(1, 16) as u32, 256).unwrap();
        }
        for step in 0..400u64 {
            let t = sim.now + r.range(0, 3) * MS;
            let id = r.range(0, 7) as usize;
            match r.below(10) {
                0 => {
                    sim.s.start(vid(id), sim.now).unwrap();
                }
                1 if sim.s.stats(vid(id)).unwrap().started => {
                    sim.s.stop(vid(id), sim.now).unwrap();
                    sim.q[id].clear();
                    sim.saturate[id] = None;
                }
                2 => sim.s.set_weight(vid(id), r.range(1, 100) as u32).unwrap(),
                3 if step % 50 == 0 => {
                    sim.s
                        .set_policy(Policy::ALL[r.below(3) as usize], sim.now)
                        .unwrap();
                }
                4 if sim.s.stats(vid(id)).unwrap().started => {
                    sim.saturate[id] = Some(r.range(10, 4000) * US)
                }
                _ if sim.s.stats(vid(id)).unwrap().started => sim.at(t, id, r.range(10, 2000) * US),
                _ => {}
            }
            sim.s.cpu_time(vid(id), sim.now / 3).unwrap();
            sim.s.transferred(vid(id), r.range(0, 1 << 20)).unwrap();
            let end = sim.now + 5 * MS;
            // Arrivals for stopped vGPUs are dropped.
            sim.arrivals
                .retain(|a| sim.s.stats(vid(a.1)).is_some_and(|s| s.started));
            sim.run_until(end);
            if let Some(c) = sim.s.current() {
                assert!(sim.s.stats(c).is_some());
            }
            for i in 0..8 {
                let st = sim.s.stats(vid(i)).unwrap();
                assert_eq!(
                    st.queue_depth as usize,
                    sim.q[i].len(),
                    "seed {seed} step {step}"
                );
            }
        }
        // Drain: everything queued is eventually served (work-conserving).
        sim.saturate = vec![None; 8];
        let end = sim.now + 60_000 * MS;
        sim.run_until(end);
        for i in 0..8 {
            assert!(
                sim.q[i].is_empty(),
                "seed {seed}: vGPU {i} left with {}",
                sim.q[i].len()
            );
        }
    }
}

// ---- reset and reopen ---------------------------------------------------------

/// Two equal saturating vGPUs; vGPU 1 is stopped and started again every
/// `period` (a guest looping on device reset, or a VMM closing and
/// reopening the vGPU), losing its queued work each time. Returns vGPU 0's
/// share of the GPU, in ppm, over 8 s.
fn restart_loop_share(policy: Policy, period: u64) -> u64 {
    let mut sim = Sim::<4>::new(policy);
    // Upstream's start boost is on (the default): a restart must not renew it.
    sim.add(0, 4);
    sim.add(1, 4);
    sim.saturate[0] = Some(2 * MS);
    sim.saturate[1] = Some(2 * MS);
    sim.run_until(3000 * MS);
    sim.measure();
    let mut t = sim.now;
    while t < 11_000 * MS {
        t += period;
        sim.run_until(t);
        sim.s.stop(vid(1), sim.now).unwrap();
        sim.q[1].clear();
        sim.s.start(vid(1), sim.now).unwrap();
    }
    sim.busy[0] * 1_000_000 / (sim.busy[0] + sim.busy[1]).max(1)
}

#[test]
fn restart_buys_no_priority_and_keeps_debt() {
    for p in Policy::ALL {
        for period in [5 * MS, 50 * MS, 500 * MS] {
            let share = restart_loop_share(p, period);
            assert!(
                share >= 480_000,
                "{p:?}, restart every {} ms: the steady vGPU got {share} ppm",
                period / MS
            );
        }
    }
}

// ---- occupancy charging (issue #24, F1) -----------------------------------

/// The victim's share of the engine time the harness saw the two vGPUs
/// hold, in ppm, and its share of what the scheduler charged, beside a
/// vGPU flooding 1 us workloads, with `overhead` of host time per
/// completion.
fn flood(policy: Policy, overhead: u64) -> (u64, u64) {
    let mut sim = Sim::<4>::new(policy);
    sim.overhead = overhead;
    sim.add(0, 8);
    sim.saturate[0] = Some(2 * MS);
    sim.add(1, 8);
    sim.saturate[1] = Some(US);
    sim.run_until(200 * MS);
    let c0 = [0, 1].map(|i| sim.s.stats(vid(i)).unwrap().contended_ns);
    sim.measure();
    sim.run_until(1200 * MS);
    let c = [0, 1].map(|i| sim.s.stats(vid(i)).unwrap().contended_ns);
    let held = sim.held[0] * 1_000_000 / (sim.held[0] + sim.held[1]);
    let (v, a) = (c[0] - c0[0], c[1] - c0[1]);
    (held, v * 1_000_000 / (v + a))
}

#[test]
fn a_flood_of_tiny_workloads_pays_for_its_completions() {
    // The reliability audit's F1: charged the workloads' own 1 us, a vGPU
    // flooding the engine left an equal-weight neighbour 14.3 % (5 us of
    // host time per completion), 8.4 % (10 us) or 2.0 % (50 us) of the
    // engine under sfq and eevdf, while the charged figures read 50/50
    // (this harness's figures on the code before, over 5 s). Charged the engine
    // occupancy, the neighbour gets its half, and the charged figure says
    // what it got.
    for p in Policy::ALL {
        let (alone, _) = flood(p, 0);
        for overhead in [5 * US, 50 * US] {
            let (held, charged) = flood(p, overhead);
            let what = format!("{p:?}, {overhead} ns per completion");
            assert!(
                held.abs_diff(charged) <= 20_000,
                "{what}: held {held} ppm, charged {charged} ppm"
            );
            if p == Policy::Tbs {
                // tbs, GVT-g's own, splits 2 ms workloads and 1 us ones
                // 40:60 with no overhead at all (its wall-clock slices); the
                // overhead takes nothing more.
                assert!(
                    held + 10_000 >= alone,
                    "{what}: {held} ppm, {alone} without"
                );
            } else {
                // vmcg's credits count workloads: the victim gets more
                // than half, less as completions cost more.
                assert!(held >= 450_000, "{what}: the victim held {held} ppm");
            }
        }
    }
}

// ---- withheld GPU time -----------------------------------------------------

/// Withheld GPU time of issue187's run (one busy vGPU, a second started but
/// idle) over the measured 3 s, and the busy vGPU's loss against running
/// alone, both in ppm of the period.
fn issue187_withheld(policy: Policy) -> (u64, u64) {
    let alone = issue187(policy, false);
    let mut sim = Sim::<4>::new(policy);
    sim.add(0, 8);
    sim.saturate[0] = Some(MS);
    sim.add(1, 8);
    sim.run_until(3000 * MS);
    let w0 = sim.s.gpu_stats().withheld_ns;
    sim.measure();
    sim.run_until(6000 * MS);
    let w = sim.s.gpu_stats().withheld_ns - w0;
    let loss = alone.saturating_sub(sim.busy[0]);
    // Whatever was withheld was held for the idle neighbour's turns: the
    // busy vGPU never leaves another one waiting.
    let (busy, idle) = (sim.s.stats(vid(0)).unwrap(), sim.s.stats(vid(1)).unwrap());
    assert_eq!(busy.withheld_ns, 0, "{policy:?}");
    assert_eq!(
        idle.withheld_ns,
        sim.s.gpu_stats().withheld_ns,
        "{policy:?}"
    );
    (w * 1_000_000 / (3000 * MS), loss * 1_000_000 / (3000 * MS))
}

#[test]
fn withheld_is_the_idle_time_a_policy_chose() {
    // sfq, eevdf and vmcg never idle the GPU for a vGPU that submits
    // nothing.
    assert_eq!(issue187_withheld(Policy::Sfq).0, 0);
    assert_eq!(issue187_withheld(Policy::Eevdf).0, 0);
    assert_eq!(issue187_withheld(Policy::Vmcg).0, 0);
    // tbs gives the idle vGPU its turns: the busy one's loss is the time
    // withheld, to the 1 ms workloads cut by the period's edges.
    let (w, loss) = issue187_withheld(Policy::Tbs);
    assert!(
        w >= 450_000,
        "tbs withholds about half: {w} ppm, loss {loss} ppm"
    );
    assert!(
        w.abs_diff(loss) <= 1_000,
        "withheld {w} ppm, loss {loss} ppm"
    );
}

#[test]
fn withheld_counts_decisions_not_timer_latency() {
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Sfq, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 8, 512).unwrap();
        s.start(vid(id), 0).unwrap();
    }
    // vGPU 1 must wait for the held turn, not preempt it.
    s.set_tunable(Tunable::SfqWakePreempt, 0, 0).unwrap();
    let thr = s.tunable(Tunable::IdleThresholdUs) * US;
    s.queued(vid(0), 0, 0).unwrap();
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    assert_eq!(s.next_vgpu(0, 0), Some(vid(0)));
    s.dispatched(vid(0), 0, 0, 0).unwrap();
    s.queued(vid(1), 0, MS).unwrap();
    // vGPU 0 completes with nothing queued: its turn is held for the idle
    // threshold while vGPU 1 waits.
    s.completed(vid(0), 0, MS, 2 * MS).unwrap();
    assert_eq!(s.gpu_stats().withheld_ns, 0);
    assert!(!s.need_resched(2 * MS + thr - 1));
    // The engine acts 5 ms late: the lateness is not the policy's.
    let late = 2 * MS + thr + 5 * MS;
    assert!(s.need_resched(late));
    s.tick(late);
    assert!(matches!(s.pick(late).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(1)));
    assert_eq!(s.gpu_stats().withheld_ns, thr);
    assert_eq!(s.gpu_stats().overdue_ns, 5 * MS);
    // vGPU 1 dispatching ends the stretch.
    s.dispatched(vid(1), 0, MS, late).unwrap();
    s.completed(vid(1), 0, MS, late + MS).unwrap();
    assert_eq!(s.gpu_stats().withheld_ns, thr);
    // The GPU was held for vGPU 0's turn, none of it for vGPU 1.
    assert_eq!(s.stats(vid(0)).unwrap().withheld_ns, thr);
    assert_eq!(s.stats(vid(1)).unwrap().withheld_ns, 0);
}

#[test]
fn withheld_under_tbs_is_the_same_with_late_ticks() {
    // issue #25: in the test VM, tbs's 1 ms ticks fired late and each late
    // tick moved GPU time from withheld to overdue, although a tick on
    // time would have idled the GPU all the same until the next balance.
    let run = |late: u64| {
        let mut sim = Sim::<4>::new(Policy::Tbs);
        sim.timer_late = late;
        sim.add(0, 8);
        sim.saturate[0] = Some(MS);
        sim.add(1, 8);
        sim.run_until(3000 * MS);
        let g0 = sim.s.gpu_stats();
        sim.measure();
        sim.run_until(6000 * MS);
        let g = sim.s.gpu_stats();
        let (w, o) = (g.withheld_ns - g0.withheld_ns, g.overdue_ns - g0.overdue_ns);
        (w, o, 3000 * MS - sim.busy[0])
    };
    let (w0, o0, _) = run(0);
    assert_eq!(o0, 0);
    let (w1, o1, idle1) = run(300 * US);
    // The decisions are the same: withheld within 1 % of the period.
    assert!(
        w0.abs_diff(w1) <= 30 * MS,
        "withheld {w0} on time, {w1} late"
    );
    // What the late ticks cost the busy vGPU is overdue.
    assert!(o1 > 0);
    assert!(
        (w1 + o1).abs_diff(idle1) <= 30 * MS,
        "{w1} + {o1} vs {idle1}"
    );
}

/// Two started vGPUs under `p`; vGPU 0 ran one workload and went idle, and
/// the policy then chose the idle vGPU at `t`, returned.
fn idled_after_one_workload(p: Policy) -> (Scheduler<4>, u64) {
    let mut s = Scheduler::<4>::new();
    s.set_policy(p, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 8, 512).unwrap();
        s.start(vid(id), 0).unwrap();
    }
    s.queued(vid(0), 0, 0).unwrap();
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    s.dispatched(vid(0), 0, 0, 0).unwrap();
    s.completed(vid(0), 0, MS, MS).unwrap();
    // Well past any hold of the idle turn.
    let t = 20 * MS;
    s.tick(t);
    assert!(s.need_resched(t), "{p:?}");
    assert_eq!(s.pick(t).unwrap(), Pick::Idle, "{p:?}");
    (s, t)
}

#[test]
fn withheld_leaves_out_a_late_pick_after_the_idle_vgpu() {
    // issue #25: on a loaded host, the vCPU that queued a workload on an
    // idle GPU was descheduled before the pick that submission calls for;
    // the time until the pick counted as withheld (58-89 us in the test
    // VM) although the policy had decided nothing: the idle vGPU was
    // chosen while nothing waited.
    for p in [Policy::Sfq, Policy::Eevdf, Policy::Vmcg] {
        let (mut s, t) = idled_after_one_workload(p);
        s.queued(vid(0), 0, t + US).unwrap();
        assert!(s.need_resched(t + US), "{p:?}: a decision is due");
        let late = t + US + 80 * US;
        assert!(matches!(s.pick(late).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
        let g = s.gpu_stats();
        assert_eq!((g.withheld_ns, g.overdue_ns), (0, 80 * US), "{p:?}");
        assert_eq!(s.stats(vid(1)).unwrap().withheld_ns, 0, "{p:?}");
    }
}

#[test]
fn withheld_leaves_out_a_late_pick_after_a_preempting_wakeup() {
    // A wake-up that preempts the held turn makes the decision due at
    // once: the time until the engine's pick is the engine's.
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Sfq, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 8, 512).unwrap();
        s.start(vid(id), 0).unwrap();
    }
    s.set_tunable(Tunable::SfqWakePreempt, 1, 0).unwrap();
    let thr = s.tunable(Tunable::IdleThresholdUs) * US;
    assert!(thr > 100 * US);
    s.queued(vid(0), 0, 0).unwrap();
    assert!(matches!(s.pick(0).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    s.dispatched(vid(0), 0, 0, 0).unwrap();
    s.completed(vid(0), 0, MS, MS).unwrap();
    // vGPU 1, owed service, wakes during vGPU 0's held turn.
    s.queued(vid(1), 0, MS + 10 * US).unwrap();
    assert!(s.need_resched(MS + 10 * US));
    let late = MS + 90 * US;
    assert!(matches!(s.pick(late).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(1)));
    let g = s.gpu_stats();
    assert_eq!((g.withheld_ns, g.overdue_ns), (0, 80 * US));
    assert_eq!(s.stats(vid(0)).unwrap().withheld_ns, 0);
}

// ---- eevdf, interactivity, latency percentiles ---------------------------

#[test]
fn eevdf_chooses_as_sfq_when_requests_are_equal() {
    // Saturating vGPUs all ask for whole slices: eevdf's choice is sfq's,
    // pick for pick, whatever the weights and workload sizes.
    for seed in 1..=8u64 {
        let mut r = Rng::new(seed);
        let n = r.range(2, 8) as usize;
        let weights: Vec<u32> = (0..n).map(|_| r.range(1, 8) as u32).collect();
        let svcs: Vec<u64> = (0..n).map(|_| r.range(50, 9000) * US).collect();
        let mut picks = Vec::new();
        for p in [Policy::Sfq, Policy::Eevdf] {
            let mut sim = Sim::<8>::new(p);
            for i in 0..n {
                sim.add(i, weights[i]);
                sim.saturate[i] = Some(svcs[i]);
            }
            sim.run_until(3000 * MS);
            picks.push(sim.picks);
        }
        assert!(picks[0].len() > 100, "seed {seed}");
        assert_eq!(picks[0], picks[1], "seed {seed} {weights:?} {svcs:?}");
    }
}

/// vGPU 0 queues and runs one workload of `svc` at `t`; returns when its
/// turn is over.
fn turn_end_after_completion(s: &mut Scheduler<4>, t: u64, svc: u64) -> u64 {
    s.queued(vid(0), 0, t).unwrap();
    assert!(matches!(s.pick(t).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(0)));
    s.dispatched(vid(0), 0, t, t).unwrap();
    s.completed(vid(0), 0, svc, t + svc).unwrap();
    let mut now = t + svc;
    while !s.need_resched(now) {
        now = s.next_timer(now);
    }
    now
}

#[test]
fn eevdf_holds_the_gpu_only_for_interactive_vgpus() {
    for p in [Policy::Sfq, Policy::Eevdf] {
        let mut s = Scheduler::<4>::new();
        s.set_policy(p, 0).unwrap();
        s.create(vid(0), 1, 512).unwrap();
        s.start(vid(0), 0).unwrap();
        // Not interactive yet: sfq holds 200 us (FairGV's hybrid
        // spinning, for every vGPU), eevdf ends the turn at once.
        let end = turn_end_after_completion(&mut s, 0, 100 * US);
        let hold = if p == Policy::Eevdf { 0 } else { 200 * US };
        assert_eq!(end, 100 * US + hold, "{p:?}");
        assert!(!s.stats(vid(0)).unwrap().interactive);
        assert_eq!(s.coschedule(), None);
        // Eleven synchronous round trips (20 us of CPU each) in its first
        // 10 ms of GPU time make it interactive: now eevdf holds as well,
        // and names it for coscheduling while it runs.
        let mut t = end;
        for _ in 0..11 {
            t = turn_end_after_completion(&mut s, t + 20 * US, 100 * US);
        }
        let st = s.stats(vid(0)).unwrap();
        assert!(st.interactive && st.round_trips == 11, "{p:?} {st:?}");
        s.queued(vid(0), 0, t + 20 * US).unwrap();
        assert!(matches!(
            s.pick(t + 20 * US).unwrap(),
            Pick::Run { vgpu, .. } if vgpu == vid(0)
        ));
        assert_eq!(s.coschedule(), Some(vid(0)));
        s.dispatched(vid(0), 0, t + 20 * US, t + 20 * US).unwrap();
        s.completed(vid(0), 0, 100 * US, t + 120 * US).unwrap();
        assert!(!s.need_resched(t + 319 * US), "{p:?}");
        assert!(s.need_resched(t + 320 * US), "{p:?}");
    }
}

#[test]
fn eevdf_keeps_debt_after_a_sleep_and_lag_over_a_round_trip() {
    // The debt of a long batch survives a sleep longer than a round trip
    // (the same rerun time as sfq's max(V, F)).
    let mut sim = Sim::<4>::new(Policy::Eevdf);
    sim.s.set_tunable(Tunable::SfqSliceUs, 10_000, 0).unwrap();
    sim.add(0, 1);
    sim.add(1, 1);
    sim.queue(0, 40 * MS);
    for _ in 0..20 {
        sim.queue(1, 10 * MS);
    }
    sim.at(45 * MS, 0, 10 * MS);
    sim.run_until(200 * MS);
    let rerun = sim.picks.iter().skip(1).find(|p| p.1 == 0).unwrap().0 / MS;
    assert_eq!(rerun, 80);
    // A vGPU that comes back within interactive_gap_us keeps its tag even
    // below V: it is owed what it missed.
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Eevdf, 0).unwrap();
    for id in 0..2 {
        s.create(vid(id), 1, 512).unwrap();
        s.start(vid(id), 0).unwrap();
    }
    s.queued(vid(1), 0, 0).unwrap();
    s.queued(vid(1), 0, 0).unwrap();
    let end = turn_end_after_completion(&mut s, 0, MS);
    assert!(matches!(s.pick(end).unwrap(), Pick::Run { vgpu, .. } if vgpu == vid(1)));
    s.dispatched(vid(1), 0, 0, end).unwrap();
    s.completed(vid(1), 0, 5 * MS, end + 5 * MS).unwrap();
    // vGPU 1's turn goes on; vGPU 0 (tag 1 ms, V = 0 ms) comes back 500 us
    // after its completion: a round trip, tag kept.
    s.queued(vid(0), 0, end + 500 * US).unwrap();
    assert_eq!(s.stats(vid(0)).unwrap().vtag_ns, MS);
    assert_eq!(s.stats(vid(0)).unwrap().round_trips, 1);
}

// ---- eevdf anticipation ---------------------------------------------------

/// A frame vGPU 0 (1 ms of GPU, 15 ms of think time) beside `n`
/// saturating neighbours with 2 ms workloads, all of weight 1, under
/// `eevdf` with `anticipate_us` = `ant`, run for 1 s and measured for 1 s.
fn frame_beside<const N: usize>(n: usize, ant: u64) -> Sim<N> {
    let mut sim = Sim::<N>::new(Policy::Eevdf);
    sim.s.set_tunable(Tunable::AnticipateUs, ant, 0).unwrap();
    for i in 0..=n {
        sim.add(i, 1);
    }
    sim.frames[0] = Some((MS, 15 * MS));
    sim.at(0, 0, MS);
    for i in 1..=n {
        sim.saturate[i] = Some(2 * MS);
    }
    sim.run_until(1000 * MS);
    sim.measure();
    sim.run_until(2000 * MS);
    sim
}

#[test]
fn anticipation_is_off_by_default() {
    assert_eq!(Tunable::AnticipateUs.default_value(), 0);
    assert_eq!(Tunable::AnticipateUs.range(), (0, 10_000));
    let s = Scheduler::<4>::new();
    assert_eq!(s.tunable(Tunable::AnticipateUs), 0);
    // Off: the frame vGPU waits for the neighbour workload in flight, 1 ms
    // in this phase, every frame: 17 ms per frame.
    let sim = frame_beside::<4>(1, 0);
    let st = sim.s.stats(vid(0)).unwrap();
    assert_eq!((st.anticipate_hits, st.anticipate_misses), (0, 0));
    assert_eq!(st.anticipate_held_ns, 0);
    // 1 ms within the histogram's 1/16.
    assert!((15 * MS / 16..=MS).contains(&st.latency_p50_ns), "{st:?}");
    assert_eq!(sim.max_gap[0], 17 * MS);
    assert_eq!(sim.s.gpu_stats().withheld_ns, 0);
}

#[test]
fn anticipation_holds_the_gpu_for_a_light_periodic_vgpu() {
    let sim = frame_beside::<4>(1, 2000);
    let st = sim.s.stats(vid(0)).unwrap();
    // Three agreeing think times, then a hold before every frame, each
    // ended by the frame's submission: 1 ms of the neighbour's 2 ms
    // workload is left idle, and the frame starts at once: 16 ms per
    // frame, as alone.
    assert_eq!(st.anticipate_misses, 0);
    assert!(st.anticipate_hits >= 120, "{st:?}");
    assert_eq!(st.anticipate_held_ns, st.anticipate_hits * MS);
    assert_eq!(sim.max_gap[0], 16 * MS);
    assert!(st.latency_p50_ns < US, "{st:?}");
    // The held time is charged to it (it has no other idle time: it is
    // not interactive) and counted as withheld, and it is all of the
    // withheld time.
    assert!(!st.interactive);
    assert_eq!(st.charged_ns, st.busy_ns + st.anticipate_held_ns);
    assert_eq!(sim.s.gpu_stats().withheld_ns, st.anticipate_held_ns);
    // The neighbour keeps the rest: 14 of every 16 ms (875 ms of the
    // second, to a workload cut by its edges).
    assert!((874..=877).contains(&(sim.busy[1] / MS)), "{}", sim.busy[1]);
}

#[test]
fn anticipation_miss_ends_the_hold_and_suspends_it() {
    let mut sim = frame_beside::<4>(1, 2000);
    let before = sim.s.stats(vid(0)).unwrap();
    let withheld = sim.s.gpu_stats().withheld_ns;
    // The frame vGPU goes quiet: the next hold waits for it until the
    // predicted submission plus its slack (15 ms / 16), 1.9375 ms after
    // the neighbour's boundary, then the neighbour runs again; no further
    // hold for as long as it stays quiet.
    sim.frames[0] = None;
    sim.arrivals.clear();
    sim.measure();
    sim.run_until(3000 * MS);
    let st = sim.s.stats(vid(0)).unwrap();
    assert_eq!(st.anticipate_hits, before.anticipate_hits);
    assert_eq!(st.anticipate_misses, 1);
    let held = st.anticipate_held_ns - before.anticipate_held_ns;
    assert_eq!(held, MS + 15 * MS / 16);
    assert_eq!(sim.s.gpu_stats().withheld_ns - withheld, held);
    // The miss was charged; the neighbour lost nothing else (but the
    // workload still in flight at the end of the second).
    assert_eq!(st.charged_ns - before.charged_ns, held);
    assert!(sim.busy[1] + held + 2 * MS >= 1000 * MS, "{}", sim.busy[1]);
    // It comes back with the same pattern: three agreeing think times
    // later it is anticipated again.
    sim.frames[0] = Some((MS, 15 * MS));
    sim.at(3000 * MS, 0, MS);
    sim.run_until(3100 * MS);
    let back = sim.s.stats(vid(0)).unwrap();
    assert!(back.anticipate_hits > st.anticipate_hits, "{back:?}");
    assert_eq!(back.anticipate_misses, 1);
}

#[test]
fn anticipation_only_for_a_vgpu_owed_service() {
    // Beside 15 neighbours the frame vGPU's fair share is 1/16: holding
    // for every frame would charge it 2 ms per 16 ms. It is held for only
    // when its lag covers the hold and its frame, so its charged service
    // stays within its share and most frames wait as without anticipation.
    let sim = frame_beside::<16>(15, 2000);
    let st = sim.s.stats(vid(0)).unwrap();
    assert_eq!(st.anticipate_misses, 0);
    assert!(
        st.anticipate_hits > 0 && st.anticipate_hits * 10 <= st.completed,
        "{st:?}"
    );
    assert!(st.charged_ns <= 2000 * MS / 16 + 2 * MS, "{st:?}");
    // A periodic vGPU above its fair share (6 ms of GPU, 1 ms of think
    // time beside a saturating neighbour: 86% against 50%) runs with debt
    // and is never held for once in debt.
    let mut sim = Sim::<4>::new(Policy::Eevdf);
    sim.s.set_tunable(Tunable::AnticipateUs, 2000, 0).unwrap();
    sim.add(0, 1);
    sim.add(1, 1);
    sim.frames[0] = Some((6 * MS, MS));
    sim.at(0, 0, 6 * MS);
    sim.saturate[1] = Some(2 * MS);
    sim.run_until(1000 * MS);
    let h0 = sim.s.stats(vid(0)).unwrap().anticipate_hits;
    sim.measure();
    sim.run_until(2000 * MS);
    assert_eq!(sim.s.stats(vid(0)).unwrap().anticipate_hits, h0);
    let f = sim.fairness(&[0, 1]);
    assert!(f.min_max_ppm > 990_000, "{f:?}");
}

#[test]
fn property_anticipation_starves_nobody() {
    // Random frame vGPUs (some with jittery think times) beside saturating
    // ones, with anticipation: every saturating vGPU is served regularly,
    // they share what the frame vGPUs leave by weight, and every queued
    // workload is served when the load stops.
    for seed in 1..=8u64 {
        let mut r = Rng::new(seed);
        let mut sim = Sim::<8>::new(Policy::Eevdf);
        sim.s
            .set_tunable(Tunable::AnticipateUs, r.range(100, 10_000), 0)
            .unwrap();
        let nf = r.range(1, 3) as usize;
        let n = r.range(nf as u64 + 2, 8) as usize;
        for i in 0..n {
            sim.add(i, r.range(1, 4) as u32);
            if i < nf {
                let svc = r.range(100, 3000) * US;
                sim.frames[i] = Some((svc, r.range(100, 20_000) * US));
                sim.at(0, i, svc);
            } else {
                sim.saturate[i] = Some(r.range(50, 4000) * US);
            }
        }
        let mut t = 0;
        sim.measure();
        while t < 4000 * MS {
            t += 100 * MS;
            sim.run_until(t);
            // Jitter: a frame vGPU's next frame comes a little late.
            if r.below(4) == 0 {
                if let Some(a) = sim.arrivals.iter_mut().find(|a| a.1 < nf) {
                    a.0 += r.range(0, 3000) * US;
                }
                sim.arrivals.sort_by_key(|a| core::cmp::Reverse(a.0));
            }
        }
        for i in nf..n {
            assert!(
                sim.max_gap[i] < 400 * MS,
                "seed {seed}: vGPU {i} waited {} ms",
                sim.max_gap[i] / MS
            );
        }
        let held: u64 = (0..nf)
            .map(|i| sim.s.stats(vid(i)).unwrap().anticipate_held_ns)
            .sum();
        assert!(held <= sim.s.gpu_stats().withheld_ns, "seed {seed}");
        sim.saturate = vec![None; 8];
        sim.frames = vec![None; 8];
        sim.run_until(t + 60_000 * MS);
        for i in 0..n {
            assert!(sim.q[i].is_empty(), "seed {seed}: vGPU {i}");
        }
    }
}

#[test]
fn latency_percentiles_within_a_sixteenth() {
    // 200 waits of 0.1, 0.2, ... 20 ms: p50 = 10 ms, p99 = 19.8 ms.
    let mut s = Scheduler::<4>::new();
    s.create(vid(0), 1, 512).unwrap();
    s.start(vid(0), 0).unwrap();
    for i in 1..=200u64 {
        let t = i * 100 * MS;
        s.queued(vid(0), 0, t).unwrap();
        s.dispatched(vid(0), 0, t, t + i * 100 * US).unwrap();
        s.completed(vid(0), 0, 10 * US, t + i * 100 * US + 10 * US)
            .unwrap();
    }
    let st = s.stats(vid(0)).unwrap();
    assert_eq!(st.latency_max_ns, 20 * MS);
    for (got, want) in [
        (st.latency_p50_ns, 10 * MS),
        (st.latency_p99_ns, 19_800 * US),
    ] {
        assert!(got.abs_diff(want) * 16 <= want, "{got} vs {want}");
    }
    // 19.8 ms lies in [18.432, 20.48) ms: 19.456 ms (the power-of-two
    // bucket said 32.768 ms for anything from 16.4 to 32.8 ms).
    assert_eq!(st.latency_p99_ns, 19_456 * US);
    assert_eq!(st.latency_p50_ns, 9_728 * US);
}

#[test]
fn contended_time_counts_only_while_every_other_vgpu_has_work() {
    let mut s = Scheduler::<4>::new();
    let (a, b, c) = (vid(0), vid(1), vid(2));
    for id in [a, b, c] {
        s.create(id, 1, 0).unwrap();
    }
    s.start(a, 0).unwrap();
    // Alone: nothing to contend with.
    s.queued(a, 0, 0).unwrap();
    s.dispatched(a, 0, 0, 0).unwrap();
    s.completed(a, 0, 5 * MS, 5 * MS).unwrap();
    // b started and idle: a's time is what b left over.
    s.start(b, 5 * MS).unwrap();
    s.queued(a, 0, 5 * MS).unwrap();
    s.dispatched(a, 0, 5 * MS, 5 * MS).unwrap();
    s.completed(a, 0, 3 * MS, 8 * MS).unwrap();
    // b has work queued: contended.
    s.queued(a, 0, 8 * MS).unwrap();
    s.queued(b, 0, 8 * MS).unwrap();
    s.dispatched(a, 0, 8 * MS, 8 * MS).unwrap();
    s.completed(a, 0, 2 * MS, 10 * MS).unwrap();
    // b's workload completes while a has nothing queued or in flight: not
    // contended (c, created and never started, does not count).
    s.dispatched(b, 0, 8 * MS, 10 * MS).unwrap();
    s.completed(b, 0, 4 * MS, 14 * MS).unwrap();
    let st = |id| s.stats(id).unwrap();
    assert_eq!(st(a).busy_ns, 10 * MS);
    assert_eq!(st(a).contended_ns, 2 * MS);
    assert_eq!(st(b).busy_ns, 4 * MS);
    assert_eq!(st(b).contended_ns, 0);
    assert_eq!(st(c).contended_ns, 0);
}

// ---- incremental structures against scans ------------------------------------

/// Checks what the scheduler keeps incrementally against a scan of its
/// vGPUs: the fair queue (tags, weights, deadlines, membership), the
/// throttle's minimum, the `busy` and `predicted` sets. (The decisions
/// themselves are checked against scans inside the scheduler in test
/// builds: `completed`'s contention, the throttle limit, `eevdf`'s choice,
/// the weighted average and anticipation.)
fn check_incremental<const N: usize>(s: &Scheduler<N>) {
    let v = &s.v;
    s.sfq.check(&|i| v[i].weight);
    s.thr.check(&s.backlogged);
    for (id, g) in s.v.iter() {
        assert_eq!(
            s.busy.contains(id),
            g.pending > 0 || g.inflight > 0,
            "busy {id}"
        );
        assert_eq!(
            s.predicted.contains(id),
            g.ant.arrival().is_some(),
            "predicted {id}"
        );
        if s.sfq.active(id) {
            assert!(s.started.contains(id), "active {id} not started");
        }
    }
}

/// Random event sequences (wake-ups, dispatches, completions, stops with
/// and without the queue, cancellations, weight, slice, throttle,
/// anticipation and policy changes) on every policy: every decision is
/// the scan's and every incremental structure matches its scan.
#[test]
fn incremental_structures_match_scans_on_random_events() {
    fn run<const N: usize>(seed: u64, n: usize, steps: u32, holds: &mut u64) {
        let mut r = Rng::new(seed);
        let mut s = Scheduler::<N>::new();
        let policy = Policy::ALL[(seed % 4) as usize];
        s.set_policy(policy, 0).unwrap();
        let mut now = 0u64;
        // Engine 0: the workloads in flight in dispatch order.
        let mut inflight: VecDeque<usize> = VecDeque::new();
        for id in 0..n {
            s.create(vid(id), r.range(1, 8) as u32, 512).unwrap();
            s.start(vid(id), 0).unwrap();
        }
        s.set_tunable(Tunable::AnticipateUs, 2000 * (seed % 2), 0)
            .unwrap();
        // vGPU 0 is a frame client on engine 1 (if there are others): 100 us
        // of GPU time, then 3 ms of think time, so that anticipation can
        // predict it. `frame`: its workload's dispatch time.
        let mut next_frame = Some(0u64).filter(|_| n > 1);
        let mut frame: Option<u64> = None;
        let e = 0;
        for _ in 0..steps {
            now += r.range(1, 50) * US;
            if next_frame.is_some_and(|t| now >= t) && s.queued(vid(0), 1, now).is_ok() {
                next_frame = None;
            }
            if frame.is_none() && s.next_vgpu(1, now) == Some(vid(0)) {
                s.dispatched(vid(0), 1, now, now).unwrap();
                frame = Some(now);
            }
            if frame.is_some_and(|t| now >= t + 100 * US) {
                s.completed(vid(0), 1, 100 * US, now).unwrap();
                frame = None;
                next_frame = Some(now + 3 * MS);
            }
            check_incremental(&s);
            let id = if n > 1 {
                r.range(1, n as u64 - 1) as usize
            } else {
                0
            };
            match r.below(100) {
                0..=29 => {
                    let _ = s.queued(vid(id), e, now);
                }
                30..=49 => {
                    if let Some(c) = s.next_vgpu(e, now) {
                        s.dispatched(c, e, now, now).unwrap();
                        inflight.push_back(usize::from(c));
                    }
                }
                50..=69 => {
                    if let Some(c) = inflight.pop_front() {
                        s.completed(vid(c), e, r.range(10, 3000) * US, now).unwrap();
                    }
                }
                70..=79 => {
                    if s.need_resched(now) || s.current().is_none() {
                        let _ = s.pick(now);
                    }
                }
                80..=84 => s.tick(now),
                85 => {
                    let _ = s.stop(vid(id), now);
                    let _ = s.start(vid(id), now);
                }
                86 => {
                    let _ = s.stop_keeping_queued(vid(id), now);
                    let _ = s.cancelled(vid(id), e);
                    let _ = s.start(vid(id), now);
                }
                87..=89 => s.set_weight(vid(id), r.range(1, 20) as u32).unwrap(),
                90 => {
                    let slice = r.range(100, 5000);
                    s.set_tunable(Tunable::SfqSliceUs, slice, now).unwrap();
                }
                91 => {
                    let on = r.below(2);
                    s.set_tunable(Tunable::Throttle, on, now).unwrap();
                }
                92 if r.below(4) == 0 => {
                    let us = [0, 500, 3000][r.below(3) as usize];
                    s.set_tunable(Tunable::AnticipateUs, us, now).unwrap();
                }
                93 => {
                    let on = r.below(2);
                    s.set_tunable(Tunable::SfqWakePreempt, on, now).unwrap();
                }
                94 => {
                    let on = r.below(2);
                    s.set_tunable(Tunable::SfqWakeMaxVf, on, now).unwrap();
                }
                95 if r.below(20) == 0 => {
                    let p = Policy::ALL[r.below(4) as usize];
                    s.set_policy(p, now).unwrap();
                }
                _ => {}
            }
            check_incremental(&s);
        }
        let held: u64 = (0..n)
            .map(|i| s.v[vid(i)].ant.hits + s.v[vid(i)].ant.misses)
            .sum();
        *holds += held;
    }
    let mut holds = 0;
    for seed in 0..16 {
        run::<8>(seed, 1 + (seed as usize % 8), 6000, &mut holds);
        run::<64>(seed, 64, 6000, &mut holds);
        run::<64>(seed, [17, 40, 63][seed as usize % 3], 2000, &mut holds);
    }
    // Anticipation held the GPU: its candidates were compared too.
    assert!(holds > 0);
}

#[test]
fn sixty_four_saturating_vgpus_get_their_weights_shares() {
    // Issue #27: 64 vGPUs of weights 1-4, each always backlogged with 1 ms
    // workloads, as gvt_rs_density.sh runs them. A vGPU's service is
    // exact to about one turn: over 40 s the weight-1 vGPUs get 250 ms
    // each, and turns of sfq's default 6 ms slice leave them within 2.4 %
    // (min_max 0.976); with 2 ms slices, exact in this model.
    for (p, slice_us, min) in [
        (Policy::Sfq, 6000, 970_000),
        (Policy::Sfq, 2000, 985_000),
        (Policy::Eevdf, 2000, 985_000),
    ] {
        let mut sim = Sim::<64>::new(p);
        sim.s.set_tunable(Tunable::SfqSliceUs, slice_us, 0).unwrap();
        let ids: Vec<usize> = (0..64).collect();
        for &i in &ids {
            sim.add(i, (i % 4 + 1) as u32);
            sim.saturate[i] = Some(MS);
        }
        sim.measure_from = 1000 * MS;
        sim.run_until(41_000 * MS);
        let f = sim.fairness(&ids);
        std::eprintln!("{p:?} slice {slice_us} us, 64 vGPUs weights 1-4, 40 s: {f:?}");
        assert!(f.min_max_ppm >= min, "{p:?} {slice_us}: {f:?}");
        for &i in &ids {
            assert!(
                sim.max_gap[i] < 1000 * MS,
                "{p:?}: vGPU {i} waited {} ms",
                sim.max_gap[i] / MS
            );
        }
    }
}

#[test]
fn sixty_four_vgpus_staggered_as_in_the_vm() {
    // As gvt_rs_density.sh: created at weight 1, started one by one,
    // weighted while idle, then all saturating at once.
    for p in [Policy::Sfq] {
        let mut sim = Sim::<64>::new(p);
        sim.s.set_tunable(Tunable::SfqSliceUs, 2000, 0).unwrap();
        let ids: Vec<usize> = (0..64).collect();
        for &i in &ids {
            sim.run_until(sim.now + 700 * MS);
            sim.add(i, 1);
            sim.s.set_weight(vid(i), (i % 4 + 1) as u32).unwrap();
        }
        let t = sim.now;
        for &i in &ids {
            sim.saturate[i] = Some(MS);
        }
        sim.run_until(t + 1);
        sim.run_until(t + 5000 * MS);
        sim.measure();
        sim.run_until(t + 65_000 * MS);
        let f = sim.fairness(&ids);
        std::eprintln!("{p:?} staggered: {f:?} busy {:?}", &sim.busy[..8]);
        assert!(f.min_max_ppm >= 980_000, "{p:?}: {f:?}");
    }
}

#[test]
fn a_stalled_completion_does_not_starve_a_vgpu_at_64() {
    // Issue #27, gvt_rs_density.sh: in 2 of 3 runs one weight-1 vGPU (the
    // first to run, vGPU 0) got no engine time for the whole window, and
    // another got 2.44 times its share. The simulated GPU processes a
    // completion from a work item, which waited behind the 64 SCHED_FIFO
    // clients for a host CPU; the wait was charged as occupancy to the vGPU
    // whose workload was on the engine. Here vGPU 0's first completion is
    // processed 3 s late: charged all of it, its tag led everybody's by 3 s
    // of weight-1 service, which 63 vGPUs of weights 1-4 take 480 s to
    // catch up (min_max 0 over the next 60 s, vGPU 0 served 0 ns).
    let mut sim = Sim::<64>::new(Policy::Sfq);
    sim.s.set_tunable(Tunable::SfqSliceUs, 2000, 0).unwrap();
    let ids: Vec<usize> = (0..64).collect();
    for &i in &ids {
        sim.add(i, (i % 4 + 1) as u32);
        sim.saturate[i] = Some(MS);
    }
    sim.drive();
    let (id, done, svc) = sim.running.unwrap();
    assert_eq!((id, svc), (0, MS));
    let stalled = done + 3000 * MS;
    sim.running = Some((id, stalled, svc));
    sim.run_until(stalled);
    let st = sim.s.stats(vid(0)).unwrap();
    // Its own 1 ms and the overhead up to the cap, not the stall.
    assert_eq!(
        (st.busy_ns, st.occupied_ns, st.completed),
        (MS, MS + COMPLETION_OVERHEAD_MAX_NS, 1)
    );
    sim.run_until(stalled + 5000 * MS);
    sim.measure();
    sim.run_until(stalled + 65_000 * MS);
    let f = sim.fairness(&ids);
    assert!(f.min_max_ppm >= 980_000, "{f:?}, busy {:?}", &sim.busy[..8]);
    for &i in &ids {
        assert!(
            sim.max_gap[i] < 1000 * MS,
            "vGPU {i} waited {} ms",
            sim.max_gap[i] / MS
        );
    }
}
