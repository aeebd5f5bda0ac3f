// SPDX-License-Identifier: GPL-2.0

//! The scheduler driven through GVT-g's switch protocol, as the i915
//! provider drives it.
//!
//! `Gvt` below is a model of `drivers/gpu/drm/i915/gvt/sched_policy.c` and
//! `scheduler.c` with the gvt-rs patches applied: `intel_gvt_schedule()`
//! (the policy's `pick_next` on every request; its answer is taken only when
//! no switch is pending), `try_to_schedule_next_vgpu()` (the switch waits
//! until every engine's current workload completed, and stops dispatch
//! meanwhile), `pick_next_workload()` (engine threads take the current
//! vGPU's head workload, asking `may_dispatch` first) and the completion
//! path (which asks for a decision while a switch is pending). The policy
//! side is what `drivers/gvt-rs/i915/` does with the engine: `switch_step`,
//! `pick`, the idle vGPU as a drain barrier, `may_dispatch` and a timer.
//!
//! On a real GPU none of this can run here; this test is what checks that
//! the two protocols fit: no stall, no dispatch outside the current vGPU's
//! turn, switches only on drained engines, and the policies' shares.

extern crate std;

use super::*;
use crate::engine::GpuConfig;
use crate::slots::AllocatorKind;
use crate::testing::{
    vid,
    Gpu,
    Recorder, //
};
use std::collections::VecDeque;
use std::vec;
use std::vec::Vec;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;
const ENGINES: usize = 3;

/// What GVT-g has as `current_vgpu` / `next_vgpu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum V {
    Idle,
    Vgpu(usize),
}

struct Gvt<const N: usize> {
    /// The engine state, as the i915 provider configures it (private
    /// ranges, no relocation), driven through the engine logic.
    gpu: Gpu<N, 64>,
    now: u64,
    /// Per vGPU and engine: service times of queued workloads.
    q: Vec<[VecDeque<u64>; ENGINES]>,
    /// Per engine: the running workload (vGPU, ends at, started at).
    running: [Option<(usize, u64, u64)>; ENGINES],
    current: Option<V>,
    next: Option<V>,
    need_reschedule: bool,
    /// A `may_dispatch` refusal is waiting for a decision (patch 0108).
    dispatch_held: bool,
    /// The policy asked for a decision (`intel_gvt_request_schedule`).
    request: bool,
    /// The i915 provider's view of the switch state.
    sw: GvtgSwitch,
    use_may_dispatch: bool,
    busy: Vec<u64>,
    vgpus: usize,
    switches_to_idle: u64,
    /// Time with work queued and every engine idle.
    stall_ns: u64,
    /// Workloads dispatched after the scheduler ended the turn.
    late_dispatches: u64,
}

impl<const N: usize> Gvt<N> {
    fn new(policy: Policy, weights: &[u32], use_may_dispatch: bool) -> Self {
        Self::with_tunables(policy, weights, use_may_dispatch, &[])
    }

    fn with_tunables(
        policy: Policy,
        weights: &[u32],
        use_may_dispatch: bool,
        tunables: &[(Tunable, u64)],
    ) -> Self {
        let cfg = GpuConfig {
            engines: ENGINES,
            low_mb: u32::MAX,
            slots: 64,
            low_shared_entries: 0,
            relocate: false,
            max_vgpus: N,
        };
        let mut gpu = Gpu::new(cfg, AllocatorKind::Static, Recorder::counting()).unwrap();
        gpu.sched.set_policy(policy, 0).unwrap();
        for (t, v) in tunables {
            gpu.sched.set_tunable(*t, *v, 0).unwrap();
        }
        for (i, w) in weights.iter().enumerate() {
            assert_eq!(gpu.create(512, *w, 0), Ok(vid(i)));
            gpu.sched.start(vid(i), 0).unwrap();
        }
        Self {
            gpu,
            now: 0,
            q: (0..N).map(|_| Default::default()).collect(),
            running: [None; ENGINES],
            current: None,
            next: None,
            need_reschedule: false,
            dispatch_held: false,
            request: false,
            sw: GvtgSwitch::new(),
            use_may_dispatch,
            busy: vec![0; N],
            vgpus: weights.len(),
            switches_to_idle: 0,
            stall_ns: 0,
            late_dispatches: 0,
        }
    }

    /// `intel_vgpu_queue_workload` + the `queued` hook.
    fn queue(&mut self, id: usize, engine: usize, ns: u64) {
        self.q[id][engine].push_back(ns);
        self.gpu.sched.queued(vid(id), engine, self.now).unwrap();
        if self.gpu.sched.need_resched(self.now) {
            self.request = true;
        }
    }

    /// The policy's `pick_next` (i915 provider).
    fn pick_next(&mut self, timer: bool) -> Option<V> {
        if timer {
            self.gpu.sched.tick(self.now);
        }
        match self.sw.step(self.gpu.sched.turn_state(self.now)) {
            SwitchStep::Keep => None,
            SwitchStep::Drain => Some(V::Idle),
            SwitchStep::Pick => match self.gpu.pick(self.now).unwrap() {
                Some(vgpu) => Some(V::Vgpu(usize::from(vgpu))),
                None => Some(V::Idle),
            },
        }
    }

    /// `intel_gvt_schedule` with `try_to_schedule_next_vgpu`.
    fn schedule(&mut self, timer: bool) {
        let next = self.pick_next(timer);
        if self.next.is_none() {
            self.next = next;
        }
        if self.next.is_some() {
            self.try_switch();
        }
        if std::mem::take(&mut self.dispatch_held) {
            // Patch 0108: wake the engines that held work back.
        }
    }

    fn try_switch(&mut self) {
        if self.next == self.current {
            self.next = None;
            return;
        }
        self.need_reschedule = true;
        if self.running.iter().any(Option::is_some) {
            return;
        }
        let next = self.next.take();
        // The policy's `switched`: a finished drain asks for a decision.
        if next == Some(V::Idle) {
            self.switches_to_idle += 1;
        }
        if self.sw.switched(next == Some(V::Idle)) {
            self.request = true;
        }
        self.current = next;
        self.need_reschedule = false;
    }

    /// `pick_next_workload` for every free engine.
    fn dispatch(&mut self) {
        for e in 0..ENGINES {
            if self.running[e].is_some() || self.need_reschedule {
                continue;
            }
            let Some(V::Vgpu(c)) = self.current else {
                continue;
            };
            let Some(&ns) = self.q[c][e].front() else {
                continue;
            };
            if self.use_may_dispatch && !self.gpu.sched.may_dispatch(vid(c), e, self.now) {
                self.dispatch_held = true;
                self.request = true;
                continue;
            }
            if self.gpu.sched.need_resched(self.now) {
                self.late_dispatches += 1;
            }
            self.q[c][e].pop_front();
            self.gpu
                .sched
                .dispatched(vid(c), e, self.now, self.now)
                .unwrap();
            self.running[e] = Some((c, self.now + ns, self.now));
        }
    }

    /// Runs until `until`, keeping each vGPU's queues topped up per `load`.
    fn run(&mut self, until: u64, load: &dyn Fn(usize) -> Option<u64>) {
        let tick = MS;
        let mut next_tick = tick;
        while self.now < until {
            for id in 0..self.vgpus {
                if let Some(ns) = load(id) {
                    for e in 0..ENGINES {
                        if self.q[id][e].len() < 2 {
                            self.queue(id, e, ns);
                        }
                    }
                }
            }
            // Requests are served before time moves on, as the service
            // thread would between two events.
            self.dispatch();
            while std::mem::take(&mut self.request) {
                self.schedule(false);
                self.dispatch();
            }
            // Advance to the next completion or timer.
            let t_done = self.running.iter().flatten().map(|r| r.1).min();
            let t = t_done.map_or(next_tick, |d| d.min(next_tick));
            assert!(t >= self.now);
            let backlog = (0..N).any(|i| self.q[i].iter().any(|q| !q.is_empty()));
            if backlog && self.running.iter().all(Option::is_none) {
                self.stall_ns += t - self.now;
            }
            self.now = t;
            for e in 0..ENGINES {
                if let Some((id, end, start)) = self.running[e] {
                    if end == self.now {
                        self.running[e] = None;
                        self.busy[id] += end - start;
                        self.gpu
                            .sched
                            .completed(vid(id), e, end - start, self.now)
                            .unwrap();
                        if self.need_reschedule {
                            self.request = true;
                        }
                    }
                }
            }
            if self.now == next_tick {
                next_tick += tick;
                self.schedule(true);
            }
        }
        assert_eq!(self.gpu.rec.inconsistencies(), 0);
    }
}

fn shares(busy: &[u64]) -> Vec<f64> {
    let total: u64 = busy.iter().sum();
    busy.iter().map(|b| *b as f64 / total as f64).collect()
}

#[test]
fn switch_step_follows_the_turn() {
    let mut s = Scheduler::<4>::new();
    s.set_policy(Policy::Sfq, 0).unwrap();
    s.create(vid(0), 1, 512).unwrap();
    s.start(vid(0), 0).unwrap();
    s.queued(vid(0), 0, 0).unwrap();
    assert_eq!(s.switch_step(0), SwitchStep::Pick);
    assert!(matches!(s.pick(0), Ok(Pick::Run { vgpu, .. }) if vgpu == vid(0)));
    assert!(s.may_dispatch(vid(0), 0, 0));
    s.dispatched(vid(0), 0, 0, 0).unwrap();
    assert_eq!(s.switch_step(US), SwitchStep::Keep);
    // The turn ends with the workload still in flight: drain first.
    let late = 100 * MS;
    assert_eq!(s.switch_step(late), SwitchStep::Drain);
    s.queued(vid(0), 0, late).unwrap();
    assert!(!s.may_dispatch(vid(0), 0, late));
    s.completed(vid(0), 0, late, late).unwrap();
    assert_eq!(s.switch_step(late), SwitchStep::Pick);
}

#[test]
fn cancelled_forgets_queued_work_only() {
    let mut s = Scheduler::<4>::new();
    s.create(vid(1), 1, 512).unwrap();
    s.start(vid(1), 0).unwrap();
    assert_eq!(s.cancelled(vid(1), 0), Err(Error::Invalid));
    s.queued(vid(1), 0, 0).unwrap();
    s.queued(vid(1), 0, 0).unwrap();
    assert_eq!(s.cancelled(vid(1), 0), Ok(()));
    assert_eq!(s.stats(vid(1)).unwrap().queue_depth, 1);
    assert_eq!(
        s.cancelled(vid(1), ENGINES + MAX_ENGINES),
        Err(Error::Invalid)
    );
    assert_eq!(s.cancelled(vid(3), 0), Err(Error::Invalid));
    s.stop(vid(1), 0).unwrap();
    assert_eq!(s.cancelled(vid(1), 0), Err(Error::Invalid));
}

/// A reset of one engine: GVT-g stops the vGPU, discards that engine's
/// queue (one `cancelled` per workload) and keeps the other engine's, which
/// runs after the restart and must be charged. `stop` forgets all queued
/// work, so the kept workload could not even be dispatched (the i915
/// provider's bug before `stop_keeping_queued`).
#[test]
fn single_engine_reset_keeps_the_other_engines_work_charged() {
    for policy in [Policy::Tbs, Policy::Vmcg, Policy::Sfq] {
        for keep in [true, false] {
            let mut s = Scheduler::<4>::new();
            s.set_policy(policy, 0).unwrap();
            s.create(vid(1), 4, 512).unwrap();
            s.start(vid(1), 0).unwrap();
            s.queued(vid(1), 0, 0).unwrap();
            s.queued(vid(1), 0, 0).unwrap();
            s.queued(vid(1), 1, 0).unwrap();
            if keep {
                s.stop_keeping_queued(vid(1), MS).unwrap();
            } else {
                s.stop(vid(1), MS).unwrap();
            }
            let discarded = [s.cancelled(vid(1), 0), s.cancelled(vid(1), 0)];
            s.start(vid(1), 2 * MS).unwrap();
            // tbs gives a restarted vGPU no start boost: it runs once a
            // balance gave it a time slice.
            let mut now = 2 * MS;
            let mut picked = s.pick(now);
            while !matches!(picked, Ok(Pick::Run { vgpu, .. }) if vgpu == vid(1)) && now < 500 * MS
            {
                now += MS;
                s.tick(now);
                picked = s.pick(now);
            }
            let ran = s.dispatched(vid(1), 1, 0, now);
            if !keep {
                assert_eq!(discarded, [Err(Error::Invalid); 2]);
                assert_eq!(ran, Err(Error::Invalid), "{policy:?}");
                continue;
            }
            assert_eq!(discarded, [Ok(()), Ok(())], "{policy:?}");
            assert!(
                matches!(picked, Ok(Pick::Run { vgpu, .. }) if vgpu == vid(1)),
                "{policy:?}: {picked:?}"
            );
            assert_eq!(ran, Ok(()), "{policy:?}");
            assert_eq!(s.cancelled(vid(1), 0), Err(Error::Invalid));
            s.completed(vid(1), 1, 5 * MS, now + 5 * MS).unwrap();
            let st = s.stats(vid(1)).unwrap();
            assert_eq!(
                (st.busy_ns, st.completed, st.queue_depth),
                (5 * MS, 1, 0),
                "{policy:?}"
            );
        }
    }
}

fn weighted(policy: Policy, may_dispatch: bool) -> (Vec<f64>, Gvt<4>) {
    // Upstream TBS favours a newly started vGPU for 2 s; this run compares
    // steady shares, so the boost is off.
    let tun = [(Tunable::TbsStartBoostMs, 0)];
    let mut g = Gvt::<4>::with_tunables(policy, &[1, 2, 3], may_dispatch, &tun);
    g.run(3_000 * MS, &|_| Some(700 * US));
    (shares(&g.busy[..3]), g)
}

#[test]
fn gvtg_protocol_sfq_weighted_shares_without_stall() {
    for md in [true, false] {
        let (sh, g) = weighted(Policy::Sfq, md);
        std::eprintln!(
            "# figure: gvtg-model policy=sfq may_dispatch={md} shares={:.4}/{:.4}/{:.4} stall_ms={:.1} switches={} drains={}",
            sh[0],
            sh[1],
            sh[2],
            g.stall_ns as f64 / MS as f64,
            g.gpu.sched.gpu_stats().switches,
            g.switches_to_idle
        );
        for (i, want) in [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0].iter().enumerate() {
            assert!(
                (sh[i] - want).abs() < 0.03,
                "may_dispatch {md}: shares {sh:?}"
            );
        }
        // The GPU idles with work queued only between a tick and the
        // next dispatch (less than 1% of the run).
        assert!(g.stall_ns < 30 * MS, "may_dispatch {md}: {}", g.stall_ns);
        // Drains end in a decision, not on the idle vGPU for good.
        assert!(g.switches_to_idle > 0);
        assert!(g.gpu.sched.gpu_stats().switches > 100);
    }
}

#[test]
fn gvtg_protocol_vmcg_and_tbs_weighted_shares() {
    // Equal memory and CPU time: vmcg's credits follow the weights too.
    for policy in [Policy::Vmcg, Policy::Tbs] {
        let (sh, g) = weighted(policy, true);
        std::eprintln!(
            "# figure: gvtg-model policy={policy:?} may_dispatch=true shares={:.4}/{:.4}/{:.4} stall_ms={:.1}",
            sh[0],
            sh[1],
            sh[2],
            g.stall_ns as f64 / MS as f64
        );
        assert!(g.stall_ns < 30 * MS, "{policy:?}: stalled {}", g.stall_ns);
        for (i, want) in [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0].iter().enumerate() {
            assert!((sh[i] - want).abs() < 0.03, "{policy:?}: shares {sh:?}");
        }
    }
}

#[test]
fn gvtg_protocol_idle_neighbour_costs_nothing() {
    // vGPU 1 submits nothing: vGPU 0 must keep the whole GPU.
    let mut g = Gvt::<4>::new(Policy::Sfq, &[1, 1], true);
    g.run(1_000 * MS, &|id| (id == 0).then_some(500 * US));
    assert_eq!(g.busy[1], 0);
    let capacity = (ENGINES as u64) * 1_000 * MS;
    assert!(
        g.busy[0] * 100 > capacity * 95,
        "busy {} of {capacity}",
        g.busy[0]
    );
    assert!(g.stall_ns < 10 * MS, "stalled {}", g.stall_ns);
}

#[test]
fn may_dispatch_ends_turns_on_time() {
    // With the hook (patch 0108) no workload goes out once the scheduler
    // ended the turn; without it, dispatch goes on until GVT-g's next
    // request reaches pick_next (a completion or a timer tick).
    let late = |md: bool| {
        let mut g = Gvt::<4>::new(Policy::Sfq, &[1, 1], md);
        g.gpu
            .sched
            .set_tunable(Tunable::SfqSliceUs, 2_000, 0)
            .unwrap();
        g.run(500 * MS, &|_| Some(300 * US));
        assert!(g.stall_ns < 5 * MS, "stalled {}", g.stall_ns);
        g.late_dispatches
    };
    let (with, without) = (late(true), late(false));
    std::eprintln!(
        "# figure: gvtg-model late dispatches in 0.5 s: with may_dispatch {with}, without {without}"
    );
    assert_eq!(with, 0);
    assert!(without > 10, "{without}");
}
