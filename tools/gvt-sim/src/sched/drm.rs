// SPDX-License-Identifier: GPL-2.0

//! The DRM scheduler's own KUnit scenarios (`tests_scheduler.c` of the
//! pinned Linux 7.3 tree) side by side: the upstream fair scheduler's model
//! ([`super::drmfair`]) against gvt-rs's policies.
//!
//! Each client is `drm_sched_client_work()`: `cycles` times submit
//! `job_cnt` jobs of `job_us`, wait for the last if synchronous, sleep
//! `wait_us`; `cycles` makes the ideal run 1000 ms (1000 ms / clients in
//! the many-clients suite). A run lasts until every client is done; the
//! figures are taken over the time all clients were running (up to the
//! first one's last completion), where the policy decides who runs.
//! KUnit's priorities become gvt-rs weights by a [`Mapping`].

use super::drmfair::{
    DrmFair,
    Prio, //
};
use super::engine::{
    run,
    run_on,
    Config,
    Load,
    RunResult,
    VmSpec,
    MS,
    US, //
};
use super::report::{
    table,
    ANTICIPATE_US, //
};
use gvt_core::sched::{
    metrics,
    Policy,
    Tunable, //
};
use std::fmt::Write;

/// One `struct drm_sched_client_params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Client {
    pub prio: Prio,
    pub job_cnt: u32,
    pub job_us: u64,
    pub sync: bool,
    pub wait_us: u64,
}

impl Client {
    const fn new(prio: Prio, job_cnt: u32, job_us: u64, sync: bool, wait_us: u64) -> Self {
        Self {
            prio,
            job_cnt,
            job_us,
            sync,
            wait_us,
        }
    }

    /// GPU time per cycle, us.
    fn work_us(&self) -> u64 {
        u64::from(self.job_cnt) * self.job_us
    }

    /// The client's cycles for an ideal run of `duration_us`, as
    /// `drm_sched_client_work()` computes them.
    pub fn cycles(&self, duration_us: u64) -> u32 {
        duration_us.div_ceil(self.work_us() + self.wait_us) as u32
    }

    /// The share of the GPU the client uses alone: a synchronous one waits
    /// its sleep after its work, an asynchronous one submits a cycle every
    /// sleep (all at once without one).
    pub fn demand(&self) -> f64 {
        let w = self.work_us() as f64;
        if self.sync {
            w / (w + self.wait_us as f64)
        } else if self.wait_us == 0 {
            1.0
        } else {
            (w / self.wait_us as f64).min(1.0)
        }
    }

    fn about(&self) -> String {
        format!(
            "{} x {} us, {}, sleep {} us",
            self.job_cnt,
            self.job_us,
            if self.sync { "sync" } else { "async" },
            self.wait_us
        )
    }
}

/// The suites of `tests_scheduler.c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// `drm_sched_scheduler_overhead` (one credit).
    Overhead,
    /// `drm_sched_scheduler_two_clients1` and `..2` (one and two credits).
    TwoClients,
    /// `drm_sched_scheduler_many_clients` (two credits).
    Many,
}

/// One test case: its upstream description, its clients, each client's
/// ideal duration.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: &'static str,
    pub desc: &'static str,
    pub suite: Suite,
    pub clients: Vec<Client>,
    pub duration_ms: u64,
}

use Prio::{
    High,
    Low,
    Normal, //
};

/// `drm_sched_cases[]`, in order: (name, description, client 0, client 1).
const TWO: &[(&str, &str, Client, Client)] = &[
    (
        "normal-normal",
        "Normal priority and normal priority",
        Client::new(Normal, 1, 8000, false, 0),
        Client::new(Normal, 1, 8000, false, 0),
    ),
    (
        "normal-low",
        "Normal priority and low priority",
        Client::new(Normal, 1, 8000, false, 0),
        Client::new(Low, 1, 8000, false, 0),
    ),
    (
        "high-normal",
        "High priority and normal priority",
        Client::new(High, 1, 8000, false, 0),
        Client::new(Normal, 1, 8000, false, 0),
    ),
    (
        "high-low",
        "High priority and low priority",
        Client::new(High, 1, 8000, false, 0),
        Client::new(Low, 1, 8000, false, 0),
    ),
    (
        "50-50",
        "50% and 50%",
        Client::new(Normal, 1, 1500, true, 1500),
        Client::new(Normal, 1, 2500, true, 2500),
    ),
    (
        "50-50low",
        "50% and 50% low priority",
        Client::new(Normal, 1, 1500, true, 1500),
        Client::new(Low, 1, 2500, true, 2500),
    ),
    (
        "50high-50",
        "50% high priority and 50%",
        Client::new(High, 1, 1500, true, 1500),
        Client::new(Normal, 1, 2500, true, 2500),
    ),
    (
        "lowhog-interactive",
        "Low priority hog and interactive client",
        Client::new(Low, 3, 2500, false, 500),
        Client::new(Normal, 1, 500, true, 10000),
    ),
    (
        "heavy-interactive",
        "Heavy rendering and interactive client",
        Client::new(Normal, 3, 2500, true, 2500),
        Client::new(Normal, 1, 1000, true, 9000),
    ),
    (
        "veryheavy-interactive",
        "Very heavy rendering and interactive client",
        Client::new(Normal, 4, 50000, true, 1),
        Client::new(Normal, 1, 1000, true, 9000),
    ),
];

/// `drm_sched_many_cases[]`: (clients, jobs per cycle); 1000 us jobs,
/// synchronous, no sleep, normal priority.
const MANY: &[(&str, usize, u32)] = &[
    ("many-2", 2, 4),
    ("many-3", 3, 4),
    ("many-7", 7, 4),
    ("many-13", 13, 4),
    ("many-31", 31, 2),
];

/// Every scenario of `tests_scheduler.c` with clients of
/// `drm_sched_client_work()` (`drm_sched_scheduler_ping_pong`, a chain of
/// jobs across two clients, is [`ping_pong`]).
pub fn cases() -> Vec<Case> {
    let mut v = vec![Case {
        name: "queue-overhead",
        desc: "drm_sched_scheduler_queue_overhead: 1000 x 1000 us queued at once",
        suite: Suite::Overhead,
        clients: vec![Client::new(Normal, 1000, 1000, false, 0)],
        duration_ms: 1000,
    }];
    for &(name, desc, a, b) in TWO {
        v.push(Case {
            name,
            desc,
            suite: Suite::TwoClients,
            clients: vec![a, b],
            duration_ms: 1000,
        });
    }
    for &(name, n, jobs) in MANY {
        v.push(Case {
            name,
            desc: "many clients",
            suite: Suite::Many,
            clients: vec![Client::new(Normal, jobs, 1000, true, 0); n],
            duration_ms: 1000 / n as u64,
        });
    }
    v
}

/// How a KUnit priority becomes a gvt-rs weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapping {
    /// `128 >> vruntime_shift`: kernel 64, high 32, normal 8, low 1, the
    /// GPU time ratios the fair scheduler aims at for backlogged entities.
    Shift,
    /// Powers of ten: kernel 1000, high 100, normal 10, low 1 (high : low
    /// is the 100:1 an administrator may ask for).
    Decade,
}

impl Mapping {
    pub fn weight(self, p: Prio) -> u32 {
        match self {
            Mapping::Shift => 128 >> p.shift(),
            Mapping::Decade => match p {
                Prio::Kernel => 1000,
                High => 100,
                Normal => 10,
                Low => 1,
            },
        }
    }

    pub fn name(self) -> String {
        let rule = match self {
            Mapping::Shift => "128 >> vruntime_shift",
            Mapping::Decade => "10^(3 - priority)",
        };
        let each: Vec<String> = Prio::ALL
            .iter()
            .map(|&p| format!("{} {}", p.name(), self.weight(p)))
            .collect();
        format!("weight = {rule} ({})", each.join(", "))
    }
}

/// A scheduler of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    /// The fair DRM scheduler's model with this many credits.
    DrmFair(u32),
    /// A gvt-rs policy, and `anticipate_us` for it.
    Core(Policy, u64),
}

/// The columns of every table.
pub const SCHEDS: &[Sched] = &[
    Sched::DrmFair(1),
    Sched::DrmFair(2),
    Sched::Core(Policy::Tbs, 0),
    Sched::Core(Policy::Sfq, 0),
    Sched::Core(Policy::Eevdf, 0),
    Sched::Core(Policy::Eevdf, ANTICIPATE_US),
];

impl Sched {
    pub fn name(self) -> String {
        match self {
            Sched::DrmFair(c) => format!("drm-fair c{c}"),
            Sched::Core(p, 0) => p.name().to_string(),
            Sched::Core(p, _) => format!("{}+anticipate", p.name()),
        }
    }

    fn is_core(self) -> bool {
        matches!(self, Sched::Core(..))
    }
}

/// Simulated time of the first pass, long enough for every case to end.
const LIMIT_NS: u64 = 20_000 * MS;

/// When the clients start, after their vGPUs: past `tbs`'s boost of a
/// newly started vGPU (`tbs_start_boost_ms`, 2 s as in GVT-g), which a
/// guest's application does not start within. Figures are taken from here.
pub const FIRST_NS: u64 = 3000 * MS;

/// The clients of `case` as VMs with weights by `m`.
pub fn vms(case: &Case, m: Mapping) -> Vec<VmSpec> {
    case.clients
        .iter()
        .enumerate()
        .map(|(i, c)| {
            VmSpec::new(
                &format!("c{i}"),
                m.weight(c.prio),
                Load::Cycles {
                    first_ns: FIRST_NS,
                    job_cnt: c.job_cnt,
                    svc_ns: c.job_us * US,
                    sync: c.sync,
                    wait_ns: c.wait_us * US,
                    cycles: c.cycles(case.duration_ms * 1000),
                },
            )
        })
        .collect()
}

/// Core tunables (`--set`, by the kernel's sysfs names) that every gvt-rs
/// policy of a comparison runs with; a row's own setting (anticipation)
/// comes after them and wins. drm-fair has none.
pub type Tunables<'a> = &'a [(Tunable, u64)];

fn run_until(case: &Case, m: Mapping, s: Sched, until_ns: u64, tun: Tunables<'_>) -> RunResult {
    let prios: Vec<Prio> = case.clients.iter().map(|c| c.prio).collect();
    let cfg = Config {
        warmup_ns: FIRST_NS,
        duration_ns: until_ns,
        tunables: tun.to_vec(),
        ..Config::default()
    };
    run_sched(&vms(case, m), &prios, s, cfg)
}

/// Runs `specs` (of priorities `prios`) under `s` with `cfg`'s times.
fn run_sched(specs: &[VmSpec], prios: &[Prio], s: Sched, mut cfg: Config) -> RunResult {
    match s {
        Sched::DrmFair(c) => run_on(&mut DrmFair::new(c, prios), specs, &cfg),
        Sched::Core(p, ant) => {
            cfg.policy = p;
            if ant > 0 {
                cfg.tunables.push((Tunable::AnticipateUs, ant));
            }
            run(specs, &cfg)
        }
    }
}

/// `drm_sched_scheduler_ping_pong`: two normal-priority entities whose
/// jobs form one chain, each job depending on the other entity's
/// previous one; upstream times the chain against its ideal, the sum of
/// its jobs (one credit). The extra first job that holds the queue until
/// every job is submitted only starts the clock and is left out.
pub const PING_PONG_JOBS: u32 = 1000;
pub const PING_PONG_JOB_US: u64 = 1000;
/// The per-switch costs (`--switch-cost-us`) the chain runs with, us.
pub const PING_PONG_COSTS_US: &[u64] = &[0, 10, 100, 1000];

/// The two clients of the chain: c0 starts it at [`FIRST_NS`]; each
/// completion queues the other's next job at once.
pub fn ping_pong_vms() -> Vec<VmSpec> {
    (0..2)
        .map(|i| {
            VmSpec::new(
                &format!("c{i}"),
                Mapping::Shift.weight(Normal),
                Load::PingPong {
                    first_ns: FIRST_NS,
                    lead: i == 0,
                    peer: 1 - i,
                    jobs: PING_PONG_JOBS / 2,
                    svc_ns: PING_PONG_JOB_US * US,
                },
            )
        })
        .collect()
}

/// One run of the chain.
pub struct PingPong {
    /// First submission to last completion (`None` if it did not end).
    pub total_ns: Option<u64>,
    pub switches: u64,
    /// GPU time a policy held idle for a vGPU with nothing queued.
    pub held_ns: u64,
    /// GPU time of c0 and c1.
    pub busy_ns: [u64; 2],
    /// Submit-to-start waits of both clients' jobs, us.
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// The chain under `s` with a switch costing `switch_cost_us` (and, for
/// a gvt-rs policy, `tunables`).
pub fn ping_pong(s: Sched, switch_cost_us: u64, tunables: &[(Tunable, u64)]) -> PingPong {
    let cfg = Config {
        warmup_ns: FIRST_NS,
        duration_ns: FIRST_NS + LIMIT_NS,
        switch_cost_ns: switch_cost_us * US,
        tunables: tunables.to_vec(),
        ..Config::default()
    };
    let r = run_sched(&ping_pong_vms(), &[Normal, Normal], s, cfg);
    let done: Option<Vec<u64>> = r.vms.iter().map(|v| v.done_ns).collect();
    let mut all = crate::sched::engine::VmResult::default();
    for v in &r.vms {
        all.lat.extend_from_slice(&v.lat);
    }
    PingPong {
        total_ns: done.and_then(|d| d.into_iter().max()).map(|d| d - FIRST_NS),
        switches: r.switches,
        held_ns: r.vms.iter().map(|v| v.held_ns).sum(),
        busy_ns: [r.vms[0].busy_ns, r.vms[1].busy_ns],
        p50_us: all.lat_pct_us(50),
        p99_us: all.lat_pct_us(99),
        max_us: all.lat_pct_us(100),
    }
}

/// The ping-pong table: a row per scheduler and per-switch cost (the
/// table's costs and `extra_cost_us`, if another), and `sfq` again
/// without its hold of an emptied turn (`idle_threshold_us` = 0, after
/// `tun`).
pub fn ping_pong_table(extra_cost_us: u64, tun: Tunables<'_>) -> String {
    let mut costs = PING_PONG_COSTS_US.to_vec();
    if !costs.contains(&extra_cost_us) {
        costs.push(extra_cost_us);
        costs.sort_unstable();
    }
    let ideal_ms = u64::from(PING_PONG_JOBS) * PING_PONG_JOB_US / 1000;
    let mut o = format!(
        "# ping-pong (drm_sched_scheduler_ping_pong: two entities in one inter-dependency chain), overhead suite, 1 credit upstream\n\
         #   c0, c1: normal (weight {}), {} x {} us each, each job queued when the other client's previous one completes; ideal {ideal_ms} ms\n\
         #   total: first submission to last completion; over: total - ideal, per job; held: GPU time held idle for a vGPU with nothing queued\n",
        Mapping::Shift.weight(Normal),
        PING_PONG_JOBS / 2,
        PING_PONG_JOB_US
    );
    let mut rows = Vec::new();
    let mut sfq0 = tun.to_vec();
    sfq0.push((Tunable::IdleThresholdUs, 0));
    let runs = SCHEDS.iter().map(|&s| (s, s.name(), tun)).chain([(
        Sched::Core(Policy::Sfq, 0),
        "sfq idle_threshold 0".to_string(),
        &sfq0[..],
    )]);
    for (s, name, tun) in runs {
        for (k, &c) in costs.iter().enumerate() {
            let p = ping_pong(s, c, tun);
            let (total, over) = p.total_ns.map_or(("-".into(), "-".into()), |t| {
                (
                    format!("{:.1}", t as f64 / 1e6),
                    format!(
                        "{:.1}",
                        (t as f64 / 1e3 - (ideal_ms * 1000) as f64) / f64::from(PING_PONG_JOBS)
                    ),
                )
            });
            rows.push(vec![
                if k == 0 { name.clone() } else { String::new() },
                c.to_string(),
                total,
                over,
                p.switches.to_string(),
                format!("{:.1}", p.held_ns as f64 / 1e6),
                format!("{:.2}:1", p.busy_ns[0] as f64 / p.busy_ns[1].max(1) as f64),
                format!("{:.0}", p.p50_us),
                format!("{:.0}", p.p99_us),
                format!("{:.0}", p.max_us),
            ]);
        }
    }
    o.push_str(&table(
        &[
            "policy",
            "switch cost us",
            "total ms",
            "over us/job",
            "switches",
            "held ms",
            "c0:c1",
            "p50 us",
            "p99 us",
            "max us",
        ],
        &rows,
    ));
    o
}

/// One case under one scheduler: the figures over the time every client
/// ran, and when each client's last job completed (ns).
pub struct Outcome {
    pub r: RunResult,
    pub done: Vec<Option<u64>>,
}

/// Runs `case` to its end, then again up to the first client's end (the
/// run is deterministic: the second is the first's prefix, measured from
/// [`FIRST_NS`]). Done times are from [`FIRST_NS`]. A gvt-rs policy runs
/// with `tun`.
pub fn outcome(case: &Case, m: Mapping, s: Sched, tun: Tunables<'_>) -> Outcome {
    let full = run_until(case, m, s, FIRST_NS + LIMIT_NS, tun);
    let end = full
        .vms
        .iter()
        .map(|v| v.done_ns.unwrap_or(FIRST_NS + LIMIT_NS))
        .min()
        .unwrap_or(FIRST_NS + LIMIT_NS);
    Outcome {
        r: run_until(case, m, s, end.max(FIRST_NS + 1), tun),
        done: full
            .vms
            .iter()
            .map(|v| v.done_ns.map(|d| d - FIRST_NS))
            .collect(),
    }
}

/// Weighted max-min shares of the GPU, each capped by the client's demand
/// (a client that cannot use its weighted share leaves the rest).
pub fn entitled(weights: &[u32], demand: &[f64]) -> Vec<f64> {
    let mut share = vec![0.0; weights.len()];
    let mut open: Vec<usize> = (0..weights.len()).collect();
    let mut cap = 1.0f64;
    while !open.is_empty() {
        let w: f64 = open.iter().map(|&i| f64::from(weights[i])).sum();
        let capped: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| demand[i] <= cap * f64::from(weights[i]) / w)
            .collect();
        if capped.is_empty() {
            for &i in &open {
                share[i] = cap * f64::from(weights[i]) / w;
            }
            break;
        }
        for &i in &capped {
            share[i] = demand[i];
            cap -= demand[i];
        }
        open.retain(|i| !capped.contains(i));
    }
    share
}

/// Per-client figures of one outcome.
pub struct ClientFig {
    pub gpu_pct: f64,
    pub want_pct: f64,
    pub jobs_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub done_ms: Option<f64>,
}

pub fn figures(case: &Case, m: Mapping, o: &Outcome) -> Vec<ClientFig> {
    let weights: Vec<u32> = case.clients.iter().map(|c| m.weight(c.prio)).collect();
    let demand: Vec<f64> = case.clients.iter().map(|c| c.demand()).collect();
    let want = entitled(&weights, &demand);
    o.r.vms
        .iter()
        .enumerate()
        .map(|(i, v)| ClientFig {
            gpu_pct: v.busy_ns as f64 / o.r.window_ns.max(1) as f64 * 100.0,
            want_pct: want[i] * 100.0,
            jobs_per_s: o.r.per_s(v.completed),
            p50_us: v.lat_pct_us(50),
            p99_us: v.lat_pct_us(99),
            max_us: v.lat_pct_us(100),
            done_ms: o.done[i].map(|d| d as f64 / 1e6),
        })
        .collect()
}

/// The client whose latency matters: the lightest synchronous one (then
/// the one with the shortest jobs). An asynchronous client's wait is
/// mostly its own queue, whatever the policy.
pub fn interactive(case: &Case) -> Option<usize> {
    (0..case.clients.len())
        .filter(|&i| case.clients[i].sync)
        .min_by(|&a, &b| {
            let (ca, cb) = (&case.clients[a], &case.clients[b]);
            ca.demand()
                .total_cmp(&cb.demand())
                .then(ca.job_us.cmp(&cb.job_us))
        })
}

/// Whether the case's clients differ in priority (the weighted pairs).
pub fn weighted(case: &Case) -> bool {
    case.clients.iter().any(|c| c.prio != case.clients[0].prio)
}

/// `tun` as `--set` spells it: `name=value` by sysfs name, comma-separated.
pub fn sets_name(tun: Tunables<'_>) -> String {
    let v: Vec<String> = tun
        .iter()
        .map(|&(t, x)| format!("{}={x}", super::tunables::name(t)))
        .collect();
    v.join(", ")
}

fn opt_ms(d: Option<f64>) -> String {
    d.map_or("-".into(), |d| format!("{d:.0}"))
}

/// The header of a case's table.
fn header(case: &Case, m: Mapping) -> String {
    let mut o = format!("# {} ({})", case.name, case.desc);
    let _ = match case.suite {
        Suite::Overhead => writeln!(o, ", overhead suite, 1 credit upstream"),
        Suite::TwoClients => writeln!(o, ", two-clients suites, 1 and 2 credits upstream"),
        Suite::Many => writeln!(
            o,
            ", many-clients suite, 2 credits upstream: {} clients, {}, {} cycles (ideal {} ms)",
            case.clients.len(),
            case.clients[0].about(),
            case.clients[0].cycles(case.duration_ms * 1000),
            case.duration_ms
        ),
    };
    if case.suite != Suite::Many {
        for (i, c) in case.clients.iter().enumerate() {
            let cy = c.cycles(case.duration_ms * 1000);
            let _ = writeln!(
                o,
                "#   c{i}: {} (weight {}), {}, {cy} cycles (ideal {} ms), demand {:.1}%",
                c.prio.name(),
                m.weight(c.prio),
                c.about(),
                u64::from(cy) * (c.work_us() + c.wait_us) / 1000,
                c.demand() * 100.0
            );
        }
    }
    o
}

/// The table of one case: a row per scheduler and client (per scheduler in
/// the many-clients suite), gvt-rs policies with `tun`.
pub fn case_table(case: &Case, m: Mapping, tun: Tunables<'_>) -> String {
    let mut o = header(case, m);
    let mut rows = Vec::new();
    if case.suite == Suite::Many {
        for &s in SCHEDS {
            let out = outcome(case, m, s, tun);
            let f = figures(case, m, &out);
            let fair = metrics::fairness(out.r.vms.iter().map(|v| (1, v.busy_ns)));
            let lo = |g: fn(&ClientFig) -> f64| f.iter().map(g).fold(f64::INFINITY, f64::min);
            let hi = |g: fn(&ClientFig) -> f64| f.iter().map(g).fold(0.0, f64::max);
            let done: Vec<f64> = f.iter().filter_map(|c| c.done_ms).collect();
            rows.push(vec![
                s.name(),
                format!("{:.1}/{:.1}", lo(|c| c.gpu_pct), hi(|c| c.gpu_pct)),
                format!("{:.4}", f64::from(fair.min_max_ppm) / 1e6),
                format!("{:.0}/{:.0}", lo(|c| c.jobs_per_s), hi(|c| c.jobs_per_s)),
                format!("{:.0}", hi(|c| c.p50_us)),
                format!("{:.0}", hi(|c| c.p99_us)),
                format!("{:.0}", hi(|c| c.max_us)),
                format!(
                    "{:.0}/{:.0}",
                    done.iter().copied().fold(f64::INFINITY, f64::min),
                    done.iter().copied().fold(0.0, f64::max)
                ),
            ]);
        }
        o.push_str(&table(
            &[
                "policy",
                "gpu% min/max",
                "min-max",
                "jobs/s min/max",
                "worst p50 us",
                "p99 us",
                "max us",
                "done ms first/last",
            ],
            &rows,
        ));
        return o;
    }
    for &s in SCHEDS {
        let out = outcome(case, m, s, tun);
        let f = figures(case, m, &out);
        for (i, c) in f.iter().enumerate() {
            let ratio = if i == 0 && f.len() == 2 && out.r.vms[1].busy_ns > 0 {
                format!(
                    "{:.2}:1",
                    out.r.vms[0].busy_ns as f64 / out.r.vms[1].busy_ns as f64
                )
            } else {
                String::new()
            };
            rows.push(vec![
                if i == 0 { s.name() } else { String::new() },
                format!("c{i} {}", case.clients[i].prio.name()),
                format!("{:.1}", c.gpu_pct),
                format!("{:.1}", c.want_pct),
                format!("{:+.1}", c.gpu_pct - c.want_pct),
                ratio,
                format!("{:.1}", c.jobs_per_s),
                format!("{:.0}", c.p50_us),
                format!("{:.0}", c.p99_us),
                format!("{:.0}", c.max_us),
                opt_ms(c.done_ms),
            ]);
        }
    }
    o.push_str(&table(
        &[
            "policy", "client", "gpu%", "want%", "err pp", "c0:c1", "jobs/s", "p50 us", "p99 us",
            "max us", "done ms",
        ],
        &rows,
    ));
    o
}

/// Per case: the interactive client's p99 and the largest share error,
/// drm-fair against the best gvt-rs policy for each (gvt-rs policies with
/// `tun`).
pub fn summary(cases: &[Case], m: Mapping, tun: Tunables<'_>) -> String {
    let mut rows = Vec::new();
    for case in cases {
        if m != Mapping::Shift && !weighted(case) {
            continue;
        }
        let k = interactive(case);
        let many = case.suite == Suite::Many;
        let mut p99 = Vec::new();
        let mut err = Vec::new();
        for &s in SCHEDS {
            let out = outcome(case, m, s, tun);
            let f = figures(case, m, &out);
            // Many equal clients: the worst one's p99.
            let p = match k {
                _ if many => f.iter().map(|c| c.p99_us).fold(0.0, f64::max),
                Some(k) => f[k].p99_us,
                None => f64::NAN,
            };
            let e = f
                .iter()
                .map(|c| (c.gpu_pct - c.want_pct).abs())
                .fold(0.0, f64::max);
            p99.push((s, p));
            err.push((s, e));
        }
        // The first gvt-rs policy with the least, in SCHEDS order.
        let best = |v: &[(Sched, f64)]| {
            v.iter()
                .filter(|x| x.0.is_core())
                .fold(None::<(Sched, f64)>, |b, &x| match b {
                    Some(b) if b.1 <= x.1 => Some(b),
                    _ => Some(x),
                })
                .map_or((String::new(), 0.0), |x| (x.0.name(), x.1))
        };
        let us = |x: f64| {
            if x.is_nan() {
                "-".to_string()
            } else {
                format!("{x:.0}")
            }
        };
        let (bp, bpv) = best(&p99);
        let (be, bev) = best(&err);
        rows.push(vec![
            case.name.to_string(),
            match k {
                _ if many => "worst".to_string(),
                Some(k) => format!("c{k}"),
                None => "-".to_string(),
            },
            us(p99[0].1),
            us(p99[1].1),
            if k.is_some() || many {
                format!("{} ({bp})", us(bpv))
            } else {
                "-".to_string()
            },
            format!("{:.1}", err[0].1),
            format!("{:.1}", err[1].1),
            format!("{bev:.1} ({be})"),
        ]);
    }
    let mut o = format!("# summary, {}\n", m.name());
    o.push_str(&table(
        &[
            "scenario",
            "client",
            "p99 us drm c1",
            "drm c2",
            "best gvt-rs",
            "|err| pp drm c1",
            "drm c2",
            "best gvt-rs",
        ],
        &rows,
    ));
    o
}

/// The whole comparison: every case under the first mapping (the
/// ping-pong chain after the queue overhead, as upstream orders them,
/// with `extra_cost_us` among its switch costs), the weighted pairs again
/// under the second, and the summaries. Every gvt-rs policy runs with
/// `tun` (named in the header if any: without, the published report).
pub fn report(extra_cost_us: u64, tun: Tunables<'_>) -> String {
    let cases = cases();
    let mut o = String::from(
        "# tests_scheduler.c scenarios: the upstream fair DRM scheduler's model (drm-fair, 1 and 2 credits) and gvt-rs policies\n\
         # figures over the time every client ran (until the first one's last job completed); gpu% of that time;\n\
         # want%: weighted max-min share capped by demand; p50/p99/max: submit-to-start wait; done: the client's last job\n",
    );
    if !tun.is_empty() {
        let _ = writeln!(o, "# gvt-rs policies with {}", sets_name(tun));
    }
    o.push('\n');
    for m in [Mapping::Shift, Mapping::Decade] {
        let _ = writeln!(o, "## {}\n", m.name());
        for case in &cases {
            if m == Mapping::Decade && !weighted(case) {
                continue;
            }
            o.push_str(&case_table(case, m, tun));
            o.push('\n');
            if m == Mapping::Shift && case.suite == Suite::Overhead {
                o.push_str(&ping_pong_table(extra_cost_us, tun));
                o.push('\n');
            }
        }
    }
    for m in [Mapping::Shift, Mapping::Decade] {
        o.push_str(&summary(&cases, m, tun));
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_follow_tests_scheduler_c() {
        let c = cases();
        assert_eq!(c.len(), 16);
        let two: Vec<&Case> = c.iter().filter(|c| c.suite == Suite::TwoClients).collect();
        assert_eq!(two.len(), 10);
        // Cycles as drm_sched_client_work() computes them for 1000 ms.
        let cy = |c: &Case| -> Vec<u32> {
            c.clients
                .iter()
                .map(|x| x.cycles(c.duration_ms * 1000))
                .collect()
        };
        assert_eq!(cy(two[0]), [125, 125]);
        assert_eq!(cy(two[4]), [334, 200]);
        assert_eq!(cy(two[7]), [125, 96]);
        assert_eq!(cy(two[9]), [5, 100]);
        let many: Vec<&Case> = c.iter().filter(|c| c.suite == Suite::Many).collect();
        assert_eq!(many[4].clients.len(), 31);
        assert_eq!(many[4].duration_ms, 32);
        assert_eq!(cy(many[4])[0], 16);
    }

    #[test]
    fn mappings_and_entitlement() {
        let w: Vec<u32> = Prio::ALL
            .iter()
            .map(|&p| Mapping::Shift.weight(p))
            .collect();
        assert_eq!(w, [64, 32, 8, 1]);
        let w: Vec<u32> = Prio::ALL
            .iter()
            .map(|&p| Mapping::Decade.weight(p))
            .collect();
        assert_eq!(w, [1000, 100, 10, 1]);
        // Backlogged: the weights; a light client keeps its demand and
        // leaves the rest.
        assert_eq!(entitled(&[8, 1], &[1.0, 1.0]), [8.0 / 9.0, 1.0 / 9.0]);
        let e = entitled(&[1, 8], &[1.0, 0.05]);
        assert!((e[0] - 0.95).abs() < 1e-12 && e[1] == 0.05, "{e:?}");
        assert_eq!(entitled(&[8, 8], &[0.5, 0.5]), [0.5, 0.5]);
    }

    #[test]
    fn drm_fair_keeps_the_shift_ratios_on_the_upstream_pairs() {
        // Jobs each client completed while both ran (8 ms jobs, until the
        // first client's 125th). Against the shifts' 8:1, 4:1 and 32:1
        // (15.6, 31.2 and 3.9 jobs) the lower class gets one job more
        // than under sfq: an entity's next job is keyed before the GPU
        // time of the one running is accounted, so it runs its first two
        // jobs before it is charged for one.
        let c = cases();
        let jobs = |name: &str, s: Sched| {
            let case = c.iter().find(|c| c.name == name).unwrap();
            let o = outcome(case, Mapping::Shift, s, &[]);
            (o.r.vms[0].completed, o.r.vms[1].completed)
        };
        for s in [Sched::DrmFair(1), Sched::DrmFair(2)] {
            assert_eq!(jobs("normal-normal", s), (125, 124), "{s:?}");
            assert_eq!(jobs("normal-low", s), (125, 17), "{s:?}");
            assert_eq!(jobs("high-normal", s), (125, 32), "{s:?}");
            assert_eq!(jobs("high-low", s), (125, 5), "{s:?}");
        }
        let s = Sched::Core(Policy::Sfq, 0);
        assert_eq!(jobs("normal-low", s), (125, 16));
        assert_eq!(jobs("high-normal", s), (125, 31));
        assert_eq!(jobs("high-low", s), (125, 4));
    }

    #[test]
    fn ping_pong_runs_one_job_at_a_time() {
        // Every job after the first is a hand-over to the other client:
        // drm-fair and eevdf take the ideal 1000 ms plus one switch cost
        // per hand-over, and each client runs its 500 jobs.
        for s in [Sched::DrmFair(1), Sched::Core(Policy::Eevdf, 0)] {
            for cost in [0, 100] {
                let p = ping_pong(s, cost, &[]);
                assert_eq!(
                    p.total_ns,
                    Some(1000 * MS + 999 * cost * US),
                    "{s:?} {cost}"
                );
                assert_eq!(p.busy_ns, [500 * MS, 500 * MS]);
                assert_eq!(p.held_ns, 0);
            }
        }
        assert_eq!(ping_pong(Sched::DrmFair(1), 0, &[]).switches, 999);
        // sfq holds each turn idle_threshold_us (200) for more work that
        // cannot come before the other client's job has run.
        let sfq = Sched::Core(Policy::Sfq, 0);
        let p = ping_pong(sfq, 0, &[]);
        let total = p.total_ns.unwrap();
        assert!((1199 * MS..1200 * MS).contains(&total), "{total} ns");
        assert!((199 * MS..200 * MS).contains(&p.held_ns), "{}", p.held_ns);
        // Without the hold, the ideal.
        let p = ping_pong(sfq, 0, &[(Tunable::IdleThresholdUs, 0)]);
        assert_eq!((p.total_ns, p.held_ns), (Some(1000 * MS), 0));
    }
}
