// SPDX-License-Identifier: GPL-2.0

//! A model of the upstream DRM scheduler's "fair" policy, for comparison
//! only: it is not, and is not meant to be, part of gvt-rs.
//!
//! Modelled on the pinned Linux 7.3 tree, `drivers/gpu/drm/scheduler/`
//! (`drm_sched_policy = DRM_SCHED_POLICY_FAIR`; that tree's module
//! parameter still defaults to FIFO and calls fair "experimental"). It
//! follows, in `sched_rq.c`:
//!
//! - `drm_sched_rq_add_entity()`: an entity whose job queue was empty joins
//!   the single run queue at `drm_sched_rq_get_min_vruntime()` (the head's
//!   virtual time, 0 if the queue is empty) plus what
//!   `drm_sched_entity_restore_vruntime()` gives: its saved distance past
//!   the minimum, or, when that is 0 and another entity heads the queue,
//!   `(1 + own average job + scheduler average job) us << shift` behind
//!   the head if it is of lower priority, the priority difference in ns
//!   ahead if higher, and 1 ns ahead (shorter average jobs than the
//!   scheduler's) or behind if equal;
//! - `drm_sched_rq_pop_entity()`: after a job is taken, an entity with more
//!   queued is re-keyed by `drm_sched_entity_update_vruntime()` (virtual
//!   time += GPU time accounted since the last update `<< vruntime_shift`
//!   of its priority: kernel 1, high 2, normal 4, low 7); one left empty
//!   leaves the queue and `drm_sched_entity_save_vruntime()` keeps its
//!   distance past the new minimum (0 if not past it or the queue is
//!   empty);
//! - `drm_sched_rq_select_entity()` and `drm_sched_can_queue()`: the first
//!   entity in virtual-time order (ties: the earlier inserted, as
//!   `rb_add_cached()` places equal keys) runs its next job if a credit is
//!   free (every job takes one; `credit_limit` jobs in the hardware);
//!
//! and in `sched_entity.c` / `sched_main.c`: a job's GPU time is
//! `finished - scheduled` (`drm_sched_entity_stats_job_add_gpu_time()`,
//! where "scheduled" is when `run_job()` handed it to the hardware, so with
//! two credits it includes the wait behind the job ahead), accounted
//! when the job is freed, before the next selection (both on the ordered
//! submit workqueue), and averaged per entity and per scheduler with
//! `DECLARE_EWMA(drm_sched_avgtime, 6, 4)`. The hardware is the KUnit mock's
//! (`mock_sched_run_job()`): jobs run one after the other in `run_job()`
//! order.
//!
//! Left out: job dependencies and fences (every queued job is ready; the
//! ping-pong chain's dependency is the load's, which submits a job when
//! the one it depends on completes), the RR and FIFO policies, load
//! balancing over several schedulers (`drm_sched_entity_select_rq()`: one
//! engine), priority changes at run time, entity teardown, timeouts and
//! resets, and the workers' own CPU time (decisions are instantaneous, as
//! the gvt-rs core's are here; the engine's `switch_cost_ns`, charged when
//! the hardware goes from one entity's job to another's, is the one cost
//! of a hand-over).

use super::engine::{
    Backend,
    VmSpec, //
};
use std::collections::VecDeque;

/// `enum drm_sched_priority`, in its order (kernel is the highest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Prio {
    Kernel,
    High,
    Normal,
    Low,
}

impl Prio {
    pub const ALL: [Prio; 4] = [Prio::Kernel, Prio::High, Prio::Normal, Prio::Low];

    /// `vruntime_shift[]`: GPU time is charged `<< shift` of virtual time.
    pub fn shift(self) -> u32 {
        match self {
            Prio::Kernel => 1,
            Prio::High => 2,
            Prio::Normal => 4,
            Prio::Low => 7,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Prio::Kernel => "kernel",
            Prio::High => "high",
            Prio::Normal => "normal",
            Prio::Low => "low",
        }
    }
}

/// `DECLARE_EWMA(drm_sched_avgtime, 6, 4)`: 6 bits of fraction, each new
/// value weighs 1/4.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ewma(u64);

impl Ewma {
    pub fn add(&mut self, val: u64) {
        self.0 = if self.0 == 0 {
            val << 6
        } else {
            ((self.0 << 2) - self.0 + (val << 6)) >> 2
        };
    }

    pub fn read(&self) -> u64 {
        self.0 >> 6
    }
}

/// One `drm_sched_entity` with its `drm_sched_entity_stats`.
#[derive(Clone, Debug)]
pub struct Entity {
    pub prio: Prio,
    /// Jobs in the entity's queue (pushed, not yet handed to the hardware).
    pub queued: u32,
    /// Its key in the run queue (virtual time, insertion order), if in it.
    pub key: Option<(i64, u64)>,
    /// GPU time accounted, and how much of it is in `vruntime`, ns.
    pub runtime: i64,
    pub prev_runtime: i64,
    pub vruntime: i64,
    pub avg_job_us: Ewma,
    started: bool,
}

/// A job handed to the hardware: its entity, when `run_job()` took it, and
/// whether it has started executing.
#[derive(Clone, Copy, Debug)]
struct HwJob {
    entity: usize,
    run_at: u64,
    started: bool,
}

/// One `drm_gpu_scheduler` with the fair policy's single run queue.
#[derive(Clone, Debug)]
pub struct DrmFair {
    pub ents: Vec<Entity>,
    prios: Vec<Prio>,
    credit_limit: usize,
    pub avg_job_us: Ewma,
    seq: u64,
    hw: VecDeque<HwJob>,
    last: Option<usize>,
    switches: u64,
}

impl DrmFair {
    /// A scheduler with `credit_limit` jobs in the hardware at most; VM `i`
    /// of the run becomes an entity of priority `prios[i]`.
    pub fn new(credit_limit: u32, prios: &[Prio]) -> Self {
        Self {
            ents: Vec::new(),
            prios: prios.to_vec(),
            credit_limit: credit_limit.max(1) as usize,
            avg_job_us: Ewma::default(),
            seq: 0,
            hw: VecDeque::new(),
            last: None,
            switches: 0,
        }
    }

    /// The run queue's head (`rb_first_cached()`).
    pub fn head(&self) -> Option<usize> {
        (0..self.ents.len())
            .filter(|&i| self.ents[i].key.is_some())
            .min_by_key(|&i| self.ents[i].key)
    }

    /// `drm_sched_rq_get_min_vruntime()`.
    fn min_vruntime(&self) -> i64 {
        self.head().map_or(0, |h| self.ents[h].vruntime)
    }

    /// `drm_sched_rq_update_fifo_locked()`: (re)inserts at `ts`.
    fn requeue(&mut self, i: usize, ts: i64) {
        self.seq += 1;
        self.ents[i].key = Some((ts, self.seq));
    }

    /// `drm_sched_entity_restore_vruntime()`.
    fn restore_vruntime(&mut self, i: usize, min: i64, head_prio: Option<Prio>) -> i64 {
        let sched_avg = self.avg_job_us.read() as i64;
        let e = &mut self.ents[i];
        let avg = e.avg_job_us.read() as i64;
        let mut v = e.vruntime;
        if let (0, Some(hp)) = (v, head_prio) {
            v = if e.prio > hp {
                // Lower priority: behind the head by about two jobs.
                ((1 + avg + sched_avg) << e.prio.shift()) * 1000
            } else if e.prio < hp {
                -(hp as i64 - e.prio as i64)
            } else if avg <= sched_avg {
                -1
            } else {
                1
            };
        }
        e.vruntime = min + v;
        e.vruntime
    }

    /// `drm_sched_rq_add_entity()` under the fair policy.
    fn add_entity(&mut self, i: usize) {
        let min = self.min_vruntime();
        let head_prio = self.head().map(|h| self.ents[h].prio);
        let ts = self.restore_vruntime(i, min, head_prio);
        self.requeue(i, ts);
    }

    /// `drm_sched_rq_pop_entity()` under the fair policy.
    fn pop_entity(&mut self, i: usize) {
        if self.ents[i].queued > 0 {
            // drm_sched_entity_update_vruntime()
            let e = &mut self.ents[i];
            let delta = e.runtime - e.prev_runtime;
            e.prev_runtime = e.runtime;
            e.vruntime += delta << e.prio.shift();
            let ts = e.vruntime;
            self.requeue(i, ts);
        } else {
            self.ents[i].key = None;
            // drm_sched_entity_save_vruntime()
            let min = self.min_vruntime();
            let e = &mut self.ents[i];
            e.vruntime = if min != 0 && e.vruntime > min {
                e.vruntime - min
            } else {
                0
            };
        }
    }

    /// `drm_sched_run_job_work()` while credits are free: select, pop,
    /// hand the job to the hardware.
    fn run_jobs(&mut self, now: u64) {
        while self.hw.len() < self.credit_limit {
            let Some(i) = self.head() else {
                break;
            };
            self.ents[i].queued -= 1;
            self.pop_entity(i);
            self.hw.push_back(HwJob {
                entity: i,
                run_at: now,
                started: false,
            });
        }
    }
}

impl Backend for DrmFair {
    fn create(&mut self, i: usize, _spec: &VmSpec) {
        assert_eq!(i, self.ents.len(), "entities are created in order");
        self.ents.push(Entity {
            prio: self.prios.get(i).copied().unwrap_or(Prio::Normal),
            queued: 0,
            key: None,
            runtime: 0,
            prev_runtime: 0,
            vruntime: 0,
            avg_job_us: Ewma::default(),
            started: false,
        });
    }

    fn start(&mut self, i: usize, _now: u64) {
        self.ents[i].started = true;
    }

    fn stop(&mut self, i: usize, _now: u64) {
        let e = &mut self.ents[i];
        e.started = false;
        e.queued = 0;
        e.key = None;
    }

    /// `drm_sched_entity_push_job()`: the first job of an empty queue adds
    /// the entity to the run queue.
    fn queued(&mut self, i: usize, _e: usize, _now: u64) {
        assert!(self.ents[i].started, "queued on a stopped entity");
        self.ents[i].queued += 1;
        if self.ents[i].queued == 1 {
            self.add_entity(i);
        }
    }

    fn transferred(&mut self, _i: usize, _bytes: u64) {}

    fn cpu_time(&mut self, _i: usize, _total_ns: u64) {}

    /// No turns: every job is a decision of its own. Nothing is in
    /// flight when the engine asks: a switch (that costs
    /// `switch_cost_ns`, as the gvt-rs core's) if the hardware's next job
    /// is another entity's than the last one.
    fn switch_point(&mut self, _now: u64) -> bool {
        let Some(j) = self.hw.iter().find(|j| !j.started) else {
            return false;
        };
        if self.last == Some(j.entity) {
            return false;
        }
        let from = self.last.replace(j.entity);
        self.switches += u64::from(from.is_some());
        from.is_some()
    }

    fn settle(&mut self, now: u64) {
        self.run_jobs(now);
    }

    fn current(&self) -> Option<usize> {
        None
    }

    /// The hardware runs its jobs in `run_job()` order.
    fn next_vgpu(&mut self, _e: usize, _now: u64) -> Option<usize> {
        let j = self.hw.iter_mut().find(|j| !j.started)?;
        j.started = true;
        if self.last != Some(j.entity) {
            self.switches += u64::from(self.last.is_some());
            self.last = Some(j.entity);
        }
        Some(j.entity)
    }

    fn dispatched(&mut self, _i: usize, _e: usize, _queued_at: u64, _now: u64) {}

    /// `drm_sched_free_job_work()`: the job's GPU time to its entity and
    /// both averages.
    fn completed(&mut self, i: usize, _e: usize, _svc_ns: u64, now: u64) {
        let j = self.hw.pop_front().expect("a job in the hardware");
        assert_eq!(j.entity, i, "the hardware completes in order");
        let d = now - j.run_at;
        let e = &mut self.ents[i];
        e.runtime += d as i64;
        e.avg_job_us.add(d / 1000);
        self.avg_job_us.add(d / 1000);
    }

    fn coschedule(&self) -> Option<usize> {
        None
    }

    fn next_timer(&self, _now: u64) -> u64 {
        u64::MAX
    }

    fn tick(&mut self, _now: u64) {}

    fn counters(&self, n: usize) -> (u64, Vec<(u64, u64, u64)>) {
        (0, vec![(0, 0, 0); n])
    }

    fn switches(&self) -> u64 {
        self.switches
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::engine::{
        run_on,
        Config,
        Load,
        MS,
        US, //
    };

    fn sat(name: &str, svc_ns: u64) -> VmSpec {
        VmSpec::new(name, 1, Load::Saturate { depth: 4, svc_ns })
    }

    fn cfg() -> Config {
        Config {
            duration_ns: 2000 * MS,
            warmup_ns: 500 * MS,
            ..Config::default()
        }
    }

    /// GPU time of each VM, ms, over the window.
    fn busy_ms(prios: &[Prio], vms: &[VmSpec], credits: u32) -> Vec<u64> {
        let mut s = DrmFair::new(credits, prios);
        let r = run_on(&mut s, vms, &cfg());
        r.vms.iter().map(|v| v.busy_ns / MS).collect()
    }

    #[test]
    fn ewma_follows_the_kernel_macro() {
        let mut e = Ewma::default();
        assert_eq!(e.read(), 0);
        e.add(8000);
        assert_eq!(e.read(), 8000, "the first value is taken as is");
        e.add(0);
        assert_eq!(e.read(), 6000, "each new value weighs 1/4");
        e.add(4000);
        assert_eq!(e.read(), 5500);
    }

    #[test]
    fn two_equal_clients_share_half_and_half() {
        // 1.5 s of 8 ms jobs (the window cuts one in flight at each end).
        let vms = [sat("a", 8 * MS), sat("b", 8 * MS)];
        for credits in [1, 2] {
            assert_eq!(
                busy_ms(&[Prio::Normal, Prio::Normal], &vms, credits),
                [752, 748],
                "{credits} credits"
            );
        }
        // Different job lengths, equal time.
        let vms = [sat("a", MS), sat("b", 5 * MS)];
        assert_eq!(busy_ms(&[Prio::Normal; 2], &vms, 1), [750, 746]);
    }

    #[test]
    fn priorities_order_as_upstream() {
        // Backlogged against a normal client, each class gets GPU time in
        // the ratio of the shifts: kernel 8:1, high 4:1, normal 1:1, low
        // 1:8 (1.5 s window of 8 ms jobs: 7.9:1, 3.9:1, 1:1, 1:7.9).
        let vms = [sat("x", 8 * MS), sat("normal", 8 * MS)];
        let got: Vec<Vec<u64>> = Prio::ALL
            .iter()
            .map(|&p| busy_ms(&[p, Prio::Normal], &vms, 1))
            .collect();
        assert_eq!(
            got,
            [
                vec![1332, 168],
                vec![1196, 304],
                vec![752, 748],
                vec![168, 1332]
            ]
        );
        for w in got.windows(2) {
            assert!(w[0][0] >= w[1][0], "{got:?}");
        }
    }

    #[test]
    fn a_waking_entity_is_placed_relative_to_the_minimum() {
        let mut s = DrmFair::new(1, &[Prio::Normal, Prio::Normal, Prio::Low, Prio::High]);
        for i in 0..4 {
            s.create(i, &sat("x", MS));
            s.start(i, 0);
        }
        // A normal entity heads the queue at virtual time 0 with 1000 us
        // jobs on average, as does the scheduler.
        s.queued(0, 0, 0);
        s.ents[0].avg_job_us.add(1000);
        s.avg_job_us.add(1000);
        assert_eq!(s.ents[0].key.map(|k| k.0), Some(0));
        // Equal priority, no longer average job: 1 ns ahead of the head.
        s.queued(1, 0, 0);
        assert_eq!(s.ents[1].vruntime, -1);
        assert_eq!(s.head(), Some(1));
        // Lower priority: (1 + 0 + 1000) us << 7 behind the head (-1).
        s.queued(2, 0, 0);
        assert_eq!(s.ents[2].vruntime, -1 + (1001 << 7) * 1000);
        // Higher priority: the priority difference (normal - high) in ns
        // ahead of the head.
        s.queued(3, 0, 0);
        assert_eq!(s.ents[3].vruntime, -1 - 1);
        assert_eq!(s.head(), Some(3));
        // Entity 3's only job runs: it leaves the queue keeping no
        // distance (it was before the new minimum), and when it rejoins
        // with the high entity's rule it again goes 1 ns ahead.
        s.settle(0);
        assert_eq!((s.ents[3].key, s.ents[3].vruntime), (None, 0));
        assert_eq!(s.next_vgpu(0, 0), Some(3));
        s.completed(3, 0, 500 * US, 500 * US);
        s.queued(3, 0, 500 * US);
        assert_eq!(s.ents[3].vruntime, -1 - 1);
    }

    #[test]
    fn an_entity_past_the_minimum_keeps_its_distance_while_idle() {
        let mut s = DrmFair::new(1, &[Prio::Normal, Prio::Normal]);
        for i in 0..2 {
            s.create(i, &sat("x", MS));
            s.start(i, 0);
        }
        s.ents[0].vruntime = 5000;
        s.ents[1].vruntime = 3000;
        s.requeue(1, 3000);
        // Entity 0 had a saved distance of 5000 past the minimum: it
        // rejoins there (3000 + 5000), before any rule for a zero distance.
        s.queued(0, 0, 0);
        assert_eq!(s.ents[0].vruntime, 8000);
        // Entity 1 leaves the run queue; entity 0's only job runs.
        s.ents[1].key = None;
        s.settle(0);
        assert_eq!(s.next_vgpu(0, 0), Some(0));
        // Empty queue, empty run queue: the distance is forgotten.
        assert_eq!((s.ents[0].key, s.ents[0].vruntime), (None, 0));
    }
}
