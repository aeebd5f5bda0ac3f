// SPDX-License-Identifier: GPL-2.0

//! Deterministic discrete-event simulator of GVT-g engines driven by the gvt-rs core.
//!
//! The simulator plays the kernel's part exactly as `sched/mod.rs` documents
//! it: guests queue workloads on V-Channels, engine "threads" ask the core
//! which vGPU to take work from, workloads execute non-preemptively for
//! their stated GPU time, completions report that time, switches happen only
//! when every engine is idle (plus an optional context-switch cost), and a
//! timer calls `tick` when the core asks for it. vGPUs are placed and
//! picked through the engine logic the kernel runs (`gvt_core::engine`, by
//! way of `gvt_core::testing::Gpu`), not the scheduler alone.
//!
//! Host CPU contention is one number, `vcpu_wake_ns`: after a completion a
//! guest's vCPU needs that long to get a host CPU before its CPU work (think
//! time, the gap of a synchronous round trip) starts. With `cosched` the
//! provider acts on the core's coscheduling hint
//! ([`Scheduler::coschedule`]): a vGPU that completes work while it is the
//! interactive running vGPU has its vCPU favoured, which removes that delay
//! (FairGV's Algorithms 3 and 4: wake the vCPU and make its CPU reschedule).

use gvt_core::engine::GpuConfig;
use gvt_core::sched::{
    metrics,
    Fairness,
    Policy,
    Scheduler,
    Tunable, //
};
use gvt_core::slots::AllocatorKind;
use gvt_core::testing::{
    vid,
    Gpu,
    Recorder,
    Rng, //
};
use std::cmp::Reverse;
use std::collections::{
    BinaryHeap,
    VecDeque, //
};

/// Room for vGPUs in the simulated GPU.
pub const CAP: usize = 64;
/// Most high-GM slots of the simulated GPU (4 GB, as the kernel's
/// largest), the default of [`Config::slots`].
pub const SLOTS: u16 = 64;

pub const MS: u64 = 1_000_000;
pub const US: u64 = 1_000;

/// What a guest does with its vGPU.
#[derive(Clone, Debug)]
pub enum Load {
    /// Closed-loop frames: CPU think time, then `blocks` workloads of
    /// `svc_ns` each, then wait until all completed (one frame), repeat.
    Frames {
        think_ns: u64,
        blocks: u32,
        svc_ns: u64,
        jitter_pct: u64,
    },
    /// A compute batch that always keeps `depth` workloads queued.
    Saturate { depth: u32, svc_ns: u64 },
    /// Open-loop arrivals every `period_ns` (compute batches submitted on a timer).
    Open { period_ns: u64, svc_ns: u64 },
    /// Closed loop with one workload at a time and a short CPU gap (FairGV's
    /// synchronous, CPU-GPU interactive pattern).
    Sync { gap_ns: u64, svc_ns: u64 },
    /// A client of the DRM scheduler's KUnit scenarios
    /// (`drm_sched_client_work()` in `tests_scheduler.c`): `first_ns`
    /// after its vGPU starts, `cycles` times, submit `job_cnt` workloads of
    /// `svc_ns`, wait for the last one if `sync`, then sleep `wait_ns`;
    /// then wait for the last one and stop. A sleep over 10 us lasts
    /// between `wait_ns` and 1.25 x `wait_ns` (drawn from the seeded
    /// jitter), the range `fsleep()` gives `usleep_range()`.
    Cycles {
        first_ns: u64,
        job_cnt: u32,
        svc_ns: u64,
        sync: bool,
        wait_ns: u64,
        cycles: u32,
    },
    /// One of the two clients of `tests_scheduler.c`'s ping-pong chain
    /// (`drm_sched_scheduler_ping_pong`), in which every job depends on
    /// the other client's previous one: `first_ns` after its vGPU starts,
    /// the `lead` submits the chain's first workload; each workload the
    /// VM completes releases the next of VM `peer`, queued at that
    /// completion (the fence callback) or, with `vcpu_wake_ns`, that much
    /// later; each side runs `jobs` workloads of `svc_ns`.
    PingPong {
        first_ns: u64,
        lead: bool,
        peer: usize,
        jobs: u32,
        svc_ns: u64,
    },
    /// Started but idle.
    Idle,
}

/// One VM and its vGPU.
#[derive(Clone, Debug)]
pub struct VmSpec {
    pub name: String,
    pub weight: u32,
    pub gm_mb: u32,
    pub load: Load,
    pub engine: usize,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// CPU time spent per submitted workload (driver work), ns.
    pub cpu_per_block_ns: u64,
    pub bytes_per_block: u64,
}

impl VmSpec {
    pub fn new(name: &str, weight: u32, load: Load) -> Self {
        Self {
            name: name.to_string(),
            weight,
            gm_mb: 512,
            load,
            engine: 0,
            start_ns: 0,
            stop_ns: None,
            cpu_per_block_ns: 20 * US,
            bytes_per_block: 64 * 1024,
        }
    }

    pub fn at(mut self, start_ms: u64, stop_ms: Option<u64>) -> Self {
        self.start_ns = start_ms * MS;
        self.stop_ns = stop_ms.map(|s| s * MS);
        self
    }
}

/// Simulation settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub policy: Policy,
    pub throttle: bool,
    pub tunables: Vec<(Tunable, u64)>,
    pub engines: usize,
    pub switch_cost_ns: u64,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub sample_ns: u64,
    pub seed: u64,
    /// Host CPU delay before a guest's CPU work after a completion, ns.
    pub vcpu_wake_ns: u64,
    /// The provider favours the vCPUs of the vGPU the core names in
    /// `coschedule()` (no `vcpu_wake_ns` delay for them).
    pub cosched: bool,
    /// High-GM slots of the simulated GPU, at most 64 (gScale shares them
    /// when the VMs' graphics memory does not fit).
    pub slots: u16,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            policy: Policy::Sfq,
            throttle: false,
            tunables: Vec::new(),
            engines: 1,
            switch_cost_ns: 0,
            duration_ns: 10_000 * MS,
            warmup_ns: 2500 * MS,
            sample_ns: 100 * MS,
            seed: 1,
            vcpu_wake_ns: 0,
            cosched: false,
            slots: SLOTS,
        }
    }
}

/// Per-VM results over the measurement window.
#[derive(Clone, Debug, Default)]
pub struct VmResult {
    pub name: String,
    pub weight: u32,
    pub busy_ns: u64,
    pub completed: u64,
    pub frames: u64,
    pub lat: Vec<u64>,
    /// GPU time held idle for the vGPU in the window (its turn, nothing in
    /// flight, nothing of its queued), ns: `sfq` and `eevdf` charge it.
    pub held_ns: u64,
    pub active: bool,
    /// `eevdf` anticipation in the window: holds its submission ended,
    /// holds that ended without it, and the GPU time held, ns.
    pub ant_hits: u64,
    pub ant_misses: u64,
    pub ant_held_ns: u64,
    /// GPU share per sample interval (fraction of the interval), for plots.
    pub series: Vec<f64>,
    pub cpu_ns: u64,
    /// When a [`Load::Cycles`] client's last workload completed, ns.
    pub done_ns: Option<u64>,
}

impl VmResult {
    pub fn lat_mean_us(&self) -> f64 {
        if self.lat.is_empty() {
            return 0.0;
        }
        self.lat.iter().sum::<u64>() as f64 / self.lat.len() as f64 / 1000.0
    }

    pub fn lat_p99_us(&self) -> f64 {
        self.lat_pct_us(99)
    }

    /// The `pct`th percentile of submit-to-dispatch waits (nearest rank), us.
    pub fn lat_pct_us(&self, pct: u32) -> f64 {
        if self.lat.is_empty() {
            return 0.0;
        }
        let mut v = self.lat.clone();
        v.sort_unstable();
        let i = ((v.len() as f64) * f64::from(pct) / 100.0).ceil() as usize;
        v[i.clamp(1, v.len()) - 1] as f64 / 1000.0
    }
}

/// Whole-run results.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub vms: Vec<VmResult>,
    pub window_ns: u64,
    pub switches: u64,
    pub busy_total_ns: u64,
    pub sample_ns: u64,
    pub samples_from_ns: u64,
    /// GPU time the policy left idle while work waited, in the window
    /// (the core's `withheld_ns`), ns.
    pub withheld_ns: u64,
}

impl RunResult {
    /// Fairness of GPU time among the active VMs.
    pub fn fairness_busy(&self) -> Fairness {
        metrics::fairness(
            self.vms
                .iter()
                .filter(|v| v.active)
                .map(|v| (v.weight as u64, v.busy_ns)),
        )
    }

    /// Fairness of frame rates among the active VMs (frames x 1000 for resolution).
    pub fn fairness_frames(&self) -> Fairness {
        metrics::fairness(
            self.vms
                .iter()
                .filter(|v| v.active)
                .map(|v| (v.weight as u64, v.frames)),
        )
    }

    pub fn utilisation(&self) -> f64 {
        self.busy_total_ns as f64 / self.window_ns.max(1) as f64
    }

    pub fn per_s(&self, n: u64) -> f64 {
        n as f64 * 1e9 / self.window_ns.max(1) as f64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Complete(usize),
    Submit(usize),
    Start(usize),
    Stop(usize),
    Timer,
    Wake,
}

struct Vm {
    spec: VmSpec,
    q: VecDeque<(u64, u64)>,
    outstanding: u32,
    started: bool,
    cpu_ns: u64,
    /// [`Load::Cycles`]: cycles submitted, workloads completed.
    cycles_done: u32,
    jobs_done: u64,
}

/// What the simulated provider asks of a scheduler: the calls the kernel's
/// engine makes into gvt-rs, which [`run_on`] makes in the same order
/// whatever the scheduler. Two implement it: the gvt-rs core
/// ([`GvtCore`], every published table) and a model of the upstream DRM
/// fair scheduler (`super::drmfair::DrmFair`) that exists only to be
/// compared with it. VMs are named by their index in the spec list.
pub trait Backend {
    /// Makes VM `i` known (in index order) with `spec`'s weight and memory.
    fn create(&mut self, i: usize, spec: &VmSpec);
    fn start(&mut self, i: usize, now: u64);
    fn stop(&mut self, i: usize, now: u64);
    /// A workload of VM `i` was queued for engine `e`.
    fn queued(&mut self, i: usize, e: usize, now: u64);
    fn transferred(&mut self, i: usize, bytes: u64);
    /// VM `i`'s total CPU time so far.
    fn cpu_time(&mut self, i: usize, total_ns: u64);
    /// Nothing is in flight: switch vGPUs if the policy wants to. True if
    /// it switched from one vGPU to another (that costs `switch_cost_ns`).
    fn switch_point(&mut self, now: u64) -> bool;
    /// Called once per event, before engines are filled: work a scheduler
    /// does on its own after an event (the DRM scheduler's run-job worker).
    fn settle(&mut self, _now: u64) {}
    /// The vGPU whose turn it is, if the policy has turns.
    fn current(&self) -> Option<usize>;
    /// The VM whose workload engine `e` runs next, if any.
    fn next_vgpu(&mut self, e: usize, now: u64) -> Option<usize>;
    /// VM `i`'s workload queued at `queued_at` starts on engine `e`.
    fn dispatched(&mut self, i: usize, e: usize, queued_at: u64, now: u64);
    /// VM `i`'s workload on engine `e` completed after `svc_ns`.
    fn completed(&mut self, i: usize, e: usize, svc_ns: u64, now: u64);
    /// The VM whose vCPUs the provider should favour (FairGV's coscheduling).
    fn coschedule(&self) -> Option<usize>;
    /// When the policy next needs [`Backend::tick`], `u64::MAX` if never.
    fn next_timer(&self, now: u64) -> u64;
    fn tick(&mut self, now: u64);
    /// Cumulative counters: withheld GPU time, and per VM (anticipation
    /// hits, misses, held ns) for the first `n` VMs.
    fn counters(&self, n: usize) -> (u64, Vec<(u64, u64, u64)>);
    /// vGPU switches so far.
    fn switches(&self) -> u64;
}

/// The gvt-rs core: the engine logic the kernel runs (placement,
/// switch-ins, samples) around the scheduler.
pub struct GvtCore {
    gpu: Gpu<CAP, { SLOTS as usize }>,
}

impl GvtCore {
    /// gScale shares slots, so every VM fits; the provider reports no VM
    /// CPU time: the simulator gives it to the scheduler at each
    /// submission (`cpu_time`), finer than the kernel's sampling at switch
    /// points.
    pub fn new(cfg: &Config) -> Self {
        let gpu_cfg = GpuConfig {
            engines: cfg.engines,
            low_mb: u32::MAX,
            slots: cfg.slots.clamp(1, SLOTS),
            low_shared_entries: 0,
            relocate: false,
            max_vgpus: CAP,
        };
        let mut gpu: Gpu<CAP, { SLOTS as usize }> =
            Gpu::new(gpu_cfg, AllocatorKind::Gscale, Recorder::counting()).expect("gpu");
        gpu.sched.set_policy(cfg.policy, 0).expect("policy");
        gpu.sched
            .set_tunable(Tunable::Throttle, cfg.throttle as u64, 0)
            .expect("throttle");
        for &(t, v) in &cfg.tunables {
            gpu.sched
                .set_tunable(t, v, 0)
                .unwrap_or_else(|e| panic!("tunable {} = {v}: {e:?}", super::tunables::name(t)));
        }
        Self { gpu }
    }
}

impl Backend for GvtCore {
    fn create(&mut self, i: usize, spec: &VmSpec) {
        let id = self.gpu.create(spec.gm_mb, spec.weight, 0).expect("create");
        assert_eq!(id, vid(i), "ids are given in order");
    }

    fn start(&mut self, i: usize, now: u64) {
        self.gpu.sched.start(vid(i), now).expect("start");
    }

    fn stop(&mut self, i: usize, now: u64) {
        self.gpu.sched.stop(vid(i), now).expect("stop");
    }

    fn queued(&mut self, i: usize, e: usize, now: u64) {
        self.gpu.sched.queued(vid(i), e, now).expect("queued");
    }

    fn transferred(&mut self, i: usize, bytes: u64) {
        self.gpu.sched.transferred(vid(i), bytes).expect("bytes");
    }

    fn cpu_time(&mut self, i: usize, total_ns: u64) {
        self.gpu.sched.cpu_time(vid(i), total_ns).expect("cpu");
    }

    fn switch_point(&mut self, now: u64) -> bool {
        let s = &mut self.gpu;
        if s.sched.current().is_none() || s.sched.need_resched(now) {
            s.pick(now).expect("pick");
            // From one vGPU to another: the idle vGPU costs no switch.
            return matches!(s.last_switch(), Some((Some(_), Some(_))));
        }
        false
    }

    fn current(&self) -> Option<usize> {
        self.gpu.sched.current().map(usize::from)
    }

    fn next_vgpu(&mut self, e: usize, now: u64) -> Option<usize> {
        self.gpu.sched.next_vgpu(e, now).map(usize::from)
    }

    fn dispatched(&mut self, i: usize, e: usize, queued_at: u64, now: u64) {
        self.gpu
            .sched
            .dispatched(vid(i), e, queued_at, now)
            .expect("dispatched");
    }

    fn completed(&mut self, i: usize, e: usize, svc_ns: u64, now: u64) {
        self.gpu
            .sched
            .completed(vid(i), e, svc_ns, now)
            .expect("completed");
    }

    fn coschedule(&self) -> Option<usize> {
        self.gpu.sched.coschedule().map(usize::from)
    }

    fn next_timer(&self, now: u64) -> u64 {
        self.gpu.sched.next_timer(now)
    }

    fn tick(&mut self, now: u64) {
        self.gpu.sched.tick(now);
    }

    fn counters(&self, n: usize) -> (u64, Vec<(u64, u64, u64)>) {
        let s: &Scheduler<CAP> = &self.gpu.sched;
        let v = (0..n)
            .map(|i| {
                s.stats(vid(i)).map_or((0, 0, 0), |st| {
                    (
                        st.anticipate_hits,
                        st.anticipate_misses,
                        st.anticipate_held_ns,
                    )
                })
            })
            .collect();
        (s.gpu_stats().withheld_ns, v)
    }

    fn switches(&self) -> u64 {
        self.gpu.sched.gpu_stats().switches
    }
}

/// How long `fsleep(wait_ns / 1000)` sleeps: exactly up to 10 us (a
/// busy wait), else anywhere in `usleep_range(us, us + us / 4)`.
fn fsleep(rng: &mut Rng, wait_ns: u64) -> u64 {
    if wait_ns <= 10 * US {
        wait_ns
    } else {
        rng.range(wait_ns, wait_ns + wait_ns / 4)
    }
}

/// Runs one simulation through the gvt-rs core.
pub fn run(specs: &[VmSpec], cfg: &Config) -> RunResult {
    run_on(&mut GvtCore::new(cfg), specs, cfg)
}

/// Runs one simulation through scheduler `s` (`cfg.policy`, `throttle` and
/// `tunables` are [`GvtCore`]'s; another backend has its own settings).
pub fn run_on(s: &mut impl Backend, specs: &[VmSpec], cfg: &Config) -> RunResult {
    // Plain xorshift64: the published tables' jitter was drawn with it.
    let mut rng = Rng::xorshift64(cfg.seed);
    let mut vms: Vec<Vm> = specs
        .iter()
        .map(|sp| Vm {
            spec: sp.clone(),
            q: VecDeque::new(),
            outstanding: 0,
            started: false,
            cpu_ns: 0,
            cycles_done: 0,
            jobs_done: 0,
        })
        .collect();
    let mut res: Vec<VmResult> = specs
        .iter()
        .map(|sp| VmResult {
            name: sp.name.clone(),
            weight: sp.weight,
            ..Default::default()
        })
        .collect();
    let nsamples =
        ((cfg.duration_ns.saturating_sub(cfg.warmup_ns)) / cfg.sample_ns.max(1)) as usize + 1;
    for r in res.iter_mut() {
        r.series = vec![0.0; nsamples];
    }
    let mut engines: Vec<Option<(usize, u64, u64)>> = vec![None; cfg.engines];
    let mut heap: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, t: u64, e: Ev| {
        seq += 1;
        heap.push(Reverse((t, seq, e)));
    };
    for (i, sp) in specs.iter().enumerate() {
        s.create(i, sp);
        push(&mut heap, sp.start_ns, Ev::Start(i));
        if let Some(t) = sp.stop_ns {
            push(&mut heap, t, Ev::Stop(i));
        }
    }
    let mut timer_at = u64::MAX;
    let mut switch_until = 0u64;
    let mut busy_total = 0u64;
    let (w0, w1) = (cfg.warmup_ns, cfg.duration_ns);

    // Attributes [a, b) of GPU time of vm to the window and samples.
    let account = |res: &mut Vec<VmResult>, busy_total: &mut u64, vm: usize, a: u64, b: u64| {
        let (a, b) = (a.max(w0), b.min(w1));
        if a >= b {
            return;
        }
        res[vm].busy_ns += b - a;
        *busy_total += b - a;
        let mut t = a;
        while t < b {
            let k = ((t - w0) / cfg.sample_ns) as usize;
            let end = (w0 + (k as u64 + 1) * cfg.sample_ns).min(b);
            if let Some(x) = res[vm].series.get_mut(k) {
                *x += (end - t) as f64 / cfg.sample_ns as f64;
            }
            t = end;
        }
    };

    // The core's cumulative counters at the start of the window: withheld
    // GPU time, and per VM (hits, misses, held ns) of anticipation.
    let mut at_w0 = None;
    let mut now = 0u64;
    loop {
        // Drive the core like the kernel would.
        s.settle(now);
        let inflight = engines.iter().any(|e| e.is_some());
        if !inflight && now >= switch_until && s.switch_point(now) && cfg.switch_cost_ns > 0 {
            switch_until = now + cfg.switch_cost_ns;
            push(&mut heap, switch_until, Ev::Wake);
        }
        if now >= switch_until {
            for (e, slot) in engines.iter_mut().enumerate() {
                if slot.is_some() {
                    continue;
                }
                if let Some(id) = s.next_vgpu(e, now) {
                    let Some((qa, svc)) = vms[id].q.pop_front() else {
                        panic!("core and simulator disagree on the queue of {id}");
                    };
                    s.dispatched(id, e, qa, now);
                    if now >= w0 && now < w1 {
                        res[id].lat.push(now - qa);
                    }
                    *slot = Some((id, now + svc, svc));
                    push(&mut heap, now + svc, Ev::Complete(e));
                }
            }
        }
        let t = s.next_timer(now);
        if t != timer_at {
            timer_at = t;
            push(&mut heap, t, Ev::Timer);
        }
        let Some(Reverse((t, _, ev))) = heap.pop() else {
            break;
        };
        if t > cfg.duration_ns {
            break;
        }
        if at_w0.is_none() && t >= w0 {
            at_w0 = Some(s.counters(specs.len()));
        }
        if let Some(c) = s.current() {
            if engines.iter().all(|e| e.is_none()) && vms[c].q.is_empty() {
                let (a, b) = (now.max(w0), t.min(w1));
                res[c].held_ns += b.saturating_sub(a);
            }
        }
        now = t;
        match ev {
            Ev::Timer => {
                if t == timer_at {
                    timer_at = u64::MAX;
                }
                // Stale timers are harmless: tick() acts only on due work.
                s.tick(now);
            }
            Ev::Wake => {}
            Ev::Start(i) => {
                s.start(i, now);
                vms[i].started = true;
                match vms[i].spec.load {
                    Load::Frames { think_ns, .. } => push(&mut heap, now + think_ns, Ev::Submit(i)),
                    Load::Cycles { first_ns, .. } => push(&mut heap, now + first_ns, Ev::Submit(i)),
                    Load::PingPong {
                        first_ns,
                        lead: true,
                        ..
                    } => push(&mut heap, now + first_ns, Ev::Submit(i)),
                    Load::PingPong { .. } | Load::Idle => {}
                    _ => push(&mut heap, now, Ev::Submit(i)),
                }
            }
            Ev::Stop(i) => {
                s.stop(i, now);
                vms[i].started = false;
                vms[i].q.clear();
            }
            Ev::Submit(i) => {
                if !vms[i].started {
                    continue;
                }
                let e = vms[i].spec.engine.min(cfg.engines - 1);
                let add = |vm: &mut Vm, svc: u64, s: &mut dyn Backend| {
                    vm.q.push_back((now, svc));
                    vm.outstanding += 1;
                    vm.cpu_ns += vm.spec.cpu_per_block_ns;
                    s.queued(i, e, now);
                    s.transferred(i, vm.spec.bytes_per_block);
                };
                match vms[i].spec.load.clone() {
                    Load::Frames {
                        think_ns,
                        blocks,
                        svc_ns,
                        jitter_pct,
                    } => {
                        vms[i].cpu_ns += think_ns;
                        for _ in 0..blocks {
                            let j = if jitter_pct > 0 {
                                let span = svc_ns * jitter_pct / 100;
                                rng.range(svc_ns - span, svc_ns + span)
                            } else {
                                svc_ns
                            };
                            add(&mut vms[i], j, s);
                        }
                    }
                    Load::Saturate { depth, svc_ns } => {
                        while (vms[i].q.len() as u32) < depth {
                            add(&mut vms[i], svc_ns, s);
                        }
                    }
                    Load::Open { period_ns, svc_ns } => {
                        add(&mut vms[i], svc_ns, s);
                        push(&mut heap, now + period_ns, Ev::Submit(i));
                    }
                    Load::Sync { svc_ns, .. } => add(&mut vms[i], svc_ns, s),
                    Load::Cycles {
                        job_cnt,
                        svc_ns,
                        sync,
                        wait_ns,
                        cycles,
                        ..
                    } => {
                        if vms[i].cycles_done < cycles {
                            vms[i].cycles_done += 1;
                            for _ in 0..job_cnt {
                                add(&mut vms[i], svc_ns, s);
                            }
                            // Asynchronous: the next cycle after the sleep
                            // (at once without one: a deep queue).
                            if !sync && vms[i].cycles_done < cycles {
                                let w = fsleep(&mut rng, wait_ns);
                                push(&mut heap, now + w, Ev::Submit(i));
                            }
                        }
                    }
                    Load::PingPong { jobs, svc_ns, .. } => {
                        if vms[i].cycles_done < jobs {
                            vms[i].cycles_done += 1;
                            add(&mut vms[i], svc_ns, s);
                        }
                    }
                    Load::Idle => {}
                }
                let c = vms[i].cpu_ns;
                s.cpu_time(i, c);
                if now >= w0 && now < w1 {
                    res[i].active = true;
                }
            }
            Ev::Complete(e) => {
                let Some((id, end, svc)) = engines[e].take() else {
                    continue;
                };
                debug_assert_eq!(end, now);
                s.completed(id, e, svc, now);
                // The vCPU's wait for a host CPU, unless coscheduled.
                let wake = if cfg.cosched && s.coschedule() == Some(id) {
                    0
                } else {
                    cfg.vcpu_wake_ns
                };
                account(&mut res, &mut busy_total, id, now - svc, now);
                if now > w0 && now <= w1 {
                    res[id].completed += 1;
                }
                let vm = &mut vms[id];
                vm.outstanding = vm.outstanding.saturating_sub(1);
                if !vm.started {
                    continue;
                }
                match vm.spec.load {
                    Load::Frames { think_ns, .. } if vm.outstanding == 0 && vm.q.is_empty() => {
                        if now > w0 && now <= w1 {
                            res[id].frames += 1;
                        }
                        push(&mut heap, now + wake + think_ns, Ev::Submit(id));
                    }
                    Load::Saturate { .. } => push(&mut heap, now, Ev::Submit(id)),
                    Load::Cycles {
                        job_cnt,
                        sync,
                        wait_ns,
                        cycles,
                        ..
                    } => {
                        vm.jobs_done += 1;
                        let cycle_end = vm.jobs_done.is_multiple_of(u64::from(job_cnt.max(1)));
                        if cycle_end && now > w0 && now <= w1 {
                            res[id].frames += 1;
                        }
                        let idle = vm.outstanding == 0 && vm.q.is_empty();
                        if idle && vm.cycles_done == cycles {
                            res[id].done_ns = Some(now);
                        } else if idle && sync {
                            let w = fsleep(&mut rng, wait_ns);
                            push(&mut heap, now + wake + w, Ev::Submit(id));
                        }
                    }
                    Load::Sync { gap_ns, .. } => {
                        if now > w0 && now <= w1 {
                            res[id].frames += 1;
                        }
                        vm.cpu_ns += gap_ns;
                        push(&mut heap, now + wake + gap_ns, Ev::Submit(id));
                    }
                    Load::PingPong { peer, jobs, .. } => {
                        vm.jobs_done += 1;
                        if vm.jobs_done == u64::from(jobs) {
                            res[id].done_ns = Some(now);
                        }
                        let Load::PingPong {
                            jobs: pj,
                            svc_ns: ps,
                            ..
                        } = vms[peer].spec.load
                        else {
                            panic!("the peer of a ping-pong client is one");
                        };
                        if wake > 0 {
                            push(&mut heap, now + wake, Ev::Submit(peer));
                        } else if vms[peer].started && vms[peer].cycles_done < pj {
                            // The dependency is met at the completion: the
                            // peer's job is queued before the next decision.
                            let pv = &mut vms[peer];
                            pv.cycles_done += 1;
                            pv.q.push_back((now, ps));
                            pv.outstanding += 1;
                            pv.cpu_ns += pv.spec.cpu_per_block_ns;
                            let pe = pv.spec.engine.min(cfg.engines - 1);
                            s.queued(peer, pe, now);
                            s.transferred(peer, pv.spec.bytes_per_block);
                            s.cpu_time(peer, pv.cpu_ns);
                            if now >= w0 && now < w1 {
                                res[peer].active = true;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let (wh0, ant0) = at_w0.unwrap_or_else(|| s.counters(specs.len()));
    let (wh1, ant1) = s.counters(specs.len());
    for (i, r) in res.iter_mut().enumerate() {
        r.cpu_ns = vms[i].cpu_ns;
        r.ant_hits = ant1[i].0 - ant0[i].0;
        r.ant_misses = ant1[i].1 - ant0[i].1;
        r.ant_held_ns = ant1[i].2 - ant0[i].2;
    }
    RunResult {
        vms: res,
        window_ns: w1.saturating_sub(w0),
        switches: s.switches(),
        busy_total_ns: busy_total,
        sample_ns: cfg.sample_ns,
        samples_from_ns: w0,
        withheld_ns: wh1 - wh0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short() -> Config {
        Config {
            duration_ns: 2000 * MS,
            warmup_ns: 500 * MS,
            ..Config::default()
        }
    }

    fn sat(name: &str, weight: u32, svc_ns: u64) -> VmSpec {
        VmSpec::new(name, weight, Load::Saturate { depth: 2, svc_ns })
    }

    #[test]
    fn latency_statistics() {
        let mut v = VmResult::default();
        assert_eq!((v.lat_mean_us(), v.lat_p99_us()), (0.0, 0.0));
        v.lat = vec![3000, 1000, 2000];
        assert_eq!(v.lat_mean_us(), 2.0);
        // Fewer than 100 samples: p99 is the maximum.
        assert_eq!(v.lat_p99_us(), 3.0);
        // 1..=200 us: p99 is the 198th smallest.
        v.lat = (1..=200u64).rev().map(|x| x * 1000).collect();
        assert_eq!(v.lat_p99_us(), 198.0);
        assert_eq!(v.lat_mean_us(), 100.5);
    }

    #[test]
    fn run_rates_guard_an_empty_window() {
        let r = RunResult {
            vms: Vec::new(),
            window_ns: 0,
            switches: 0,
            busy_total_ns: 0,
            sample_ns: MS,
            samples_from_ns: 0,
            withheld_ns: 0,
        };
        assert_eq!((r.utilisation(), r.per_s(5)), (0.0, 5e9));
        let r = RunResult {
            window_ns: 2000 * MS,
            busy_total_ns: 500 * MS,
            ..r
        };
        assert_eq!((r.utilisation(), r.per_s(30)), (0.25, 15.0));
    }

    #[test]
    fn saturating_vm_keeps_the_gpu_busy_and_idle_vm_gets_nothing() {
        let cfg = short();
        let r = run(
            &[sat("busy", 1, MS), VmSpec::new("idle", 1, Load::Idle)],
            &cfg,
        );
        assert_eq!(r.window_ns, 1500 * MS);
        assert!(r.utilisation() > 0.99, "utilisation {}", r.utilisation());
        assert_eq!(r.busy_total_ns, r.vms[0].busy_ns);
        assert!(r.vms[0].active && !r.vms[1].active);
        assert_eq!((r.vms[1].busy_ns, r.vms[1].completed), (0, 0));
        // 1 ms workloads over 1.5 s.
        assert!(
            (1490..=1500).contains(&r.vms[0].completed),
            "{}",
            r.vms[0].completed
        );
        // The share-over-time series covers the window, each sample a fraction.
        assert_eq!(r.vms[0].series.len(), 16);
        assert!(r.vms[0].series[..15]
            .iter()
            .all(|&x| x > 0.99 && x <= 1.0 + 1e-9));
        assert_eq!(r.fairness_busy().active, 1);
    }

    #[test]
    fn sfq_shares_follow_weights_and_runs_are_deterministic() {
        // SFQ charges measured GPU time, so shares follow the weights even
        // with workloads of different sizes (tbs boosts new vGPUs for its
        // first seconds, vmcg scales slices by CPU time).
        let cfg = short();
        for vms in [
            [sat("w1", 1, 200 * US), sat("w3", 3, 200 * US)],
            [sat("w1", 1, MS), sat("w3", 3, 200 * US)],
            [sat("w1", 1, 200 * US), sat("w3", 3, 2 * MS)],
        ] {
            let r = run(&vms, &cfg);
            let share = r.vms[1].busy_ns as f64 / r.busy_total_ns as f64;
            assert!(
                (share - 0.75).abs() < 0.03,
                "{vms:?}: weight-3 share {share}"
            );
            assert!(r.switches > 0);
            let again = run(&vms, &cfg);
            assert_eq!(r.switches, again.switches);
            assert_eq!(r.vms[0].busy_ns, again.vms[0].busy_ns);
            assert_eq!(r.vms[1].lat, again.vms[1].lat);
        }
    }

    #[test]
    fn sixty_four_one_slot_vms_on_54_shared_slots_get_their_shares() {
        // gvt_rs_density.sh's GPU: 64 one-slot vGPUs under gScale on 54
        // slots (10 shared by two), two engines, sfq with 2 ms turns, 64
        // saturating VMs of weights 1-4 through the engine logic
        // (placement, switch-ins loading shared slots).
        let cfg = Config {
            tunables: vec![(Tunable::SfqSliceUs, 2000)],
            engines: 2,
            duration_ns: 45_000 * MS,
            warmup_ns: 5_000 * MS,
            slots: 54,
            ..Config::default()
        };
        let specs: Vec<VmSpec> = (0..64)
            .map(|i| {
                let load = Load::Saturate {
                    depth: 16,
                    svc_ns: MS,
                };
                let mut v = VmSpec::new(&format!("v{i}"), (i % 4 + 1) as u32, load);
                v.gm_mb = 64;
                v.engine = i % 2;
                v
            })
            .collect();
        let mut core = GvtCore::new(&cfg);
        let r = run_on(&mut core, &specs, &cfg);
        // Every VM placed, 10 slots shared by two.
        let shared = (0..64u16)
            .filter_map(|i| core.gpu.pool.placement(vid(usize::from(i))))
            .filter(|p| p.start < 10)
            .count();
        assert_eq!(shared, 20);
        let f = r.fairness_busy();
        assert_eq!(f.active, 64);
        assert!(f.min_max_ppm >= 980_000, "{f:?}");
    }
}
