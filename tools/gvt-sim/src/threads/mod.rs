// SPDX-License-Identifier: GPL-2.0

//! Kang & Yu's thread division (Symmetry 2021) on a model compute engine.
//!
//! The engine has `lanes` execution lanes shared *spatially*: every thread
//! group in flight progresses at once, each thread at rate
//! `min(1, lanes / threads in flight)` (processor sharing at thread
//! granularity: the co-execution of the paper's Fig. 6b). A task is
//! `threads` threads of `ns_per_thread` of lane time each.
//!
//! * `Fifo` (the paper's baseline): every task is launched whole when its
//!   request arrives and kernels run in arrival order, non-preemptively,
//!   each one alone on the lanes.
//! * `Divide`: each VM keeps one group in flight; the first group has
//!   Eq. 2's size `floor(lanes * beta / N / 64) * 64`; after each group
//!   the VM's usage grows by Eq. 1, `R * (1 + T_n / T_all)`; Algorithm 2
//!   resizes the group from the usage share, applied two rounds later
//!   (the paper's pipelining); the 2x throttle makes a VM skip a round.
//!
//! Where the listing is defective we decide (documented in
//! `Documentation/gvt-rs/papers.rst`): Algorithm 2's correction
//! `(1/N - ratio_n) * All` adds a time to a thread count; we scale the
//! dimensionless share error by `N * G_N` (`G_N` = Eq. 2's size for the `N`
//! VMs active now), times a gain, and keep the size within
//! `64 ..= lanes * beta`. The listing adds the correction to the previous
//! size (`cumulative`); by default the correction is applied to `G_N`
//! instead, since the cumulative form integrates an already cumulative
//! error and collapses groups to 64 threads (`gvt-threads` variants).

use gvt_core::testing::Rng;

/// A GPGPU task of one VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// Label for tables ("9K", "8192^2", "10M").
    pub name: &'static str,
    /// Threads (work-items) of the kernel.
    pub threads: u64,
    /// Lane time of one thread, ns.
    pub ns_per_thread: u64,
}

impl Task {
    /// Time alone on `lanes` lanes, ns.
    pub fn solo_ns(&self, lanes: u64) -> u64 {
        self.threads * self.ns_per_thread / lanes
    }
}

/// Which VM the 2x throttle stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    /// No throttle.
    Off,
    /// The paper's text: the VM with the most usage, if it exceeds twice
    /// the least usage, is stopped for one round.
    Text,
    /// The paper's listing (Algorithm 1, lines 24-27): VM n waits its
    /// previous runtime if that runtime exceeds twice the least usage.
    Listing,
}

/// How a group's runtime is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// Eq. 1: `R * (1 + T_n / T_all)`.
    Eq1,
    /// Runtime only: `R`.
    Runtime,
    /// The lanes actually used: `R * T_n / T_all`.
    Share,
}

/// Scheduling scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Whole kernels in arrival order.
    Fifo,
    /// Thread division.
    Divide {
        /// Usage charge.
        charge: Charge,
        /// Throttle rule.
        throttle: Throttle,
        /// Algorithm 2 gain in percent (0: Eq. 2's size forever).
        gain_pct: u64,
        /// Algorithm 2 as listed: the correction is added to the previous
        /// size (an integrator); otherwise the size is Eq. 2's size for the
        /// VMs active now, corrected in proportion to the share error.
        cumulative: bool,
    },
}

impl Scheme {
    /// The paper's method as we read it.
    pub const PAPER: Scheme = Scheme::Divide {
        charge: Charge::Eq1,
        throttle: Throttle::Text,
        gain_pct: 100,
        cumulative: false,
    };
}

/// The engine and the scheme's constants.
#[derive(Clone, Copy, Debug)]
pub struct Gpu {
    /// Execution lanes (RX 570: 32 compute units x 64 = 2048).
    pub lanes: u64,
    /// Eq. 2's beta (not given by the paper).
    pub beta: u64,
    /// Time to launch one group (kernel launch through OpenCL), ns.
    pub launch_ns: u64,
}

impl Gpu {
    /// Our defaults: 2048 lanes, beta 4096 (a first round of about 50 ms
    /// with 6 matmul VMs), 50 us per launch.
    pub const DEFAULT: Gpu = Gpu {
        lanes: 2048,
        beta: 4096,
        launch_ns: 50_000,
    };
}

/// What one run measured per VM.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunResult {
    /// Completion time minus request arrival, per VM, ns.
    pub time_ns: Vec<u64>,
    /// Groups launched per VM.
    pub groups: Vec<u64>,
    /// Rounds skipped by the throttle per VM.
    pub waits: Vec<u64>,
}

#[derive(Clone, Debug)]
struct Vm {
    task: Task,
    arrive: u64,
    left: u64,
    /// Threads in flight and lane work left per thread (ns at rate 1).
    flight: Option<(u64, f64, u64)>,
    ready: Option<u64>,
    usage: f64,
    round: usize,
    /// Group size of every round (index 0 unused), decided two rounds ahead.
    sizes: Vec<u64>,
    prev_runtime: u64,
    done: Option<u64>,
    groups: u64,
    waits: u64,
}

/// Runs `tasks` (one VM each) under `scheme`; arrivals are uniform in
/// `0..=spread_ns` (seeded).
pub fn run(tasks: &[Task], scheme: Scheme, gpu: &Gpu, spread_ns: u64, seed: u64) -> RunResult {
    let mut rng = Rng::new(seed);
    let mut vms: Vec<Vm> = tasks
        .iter()
        .map(|&task| Vm {
            task,
            arrive: rng.below(spread_ns + 1),
            left: task.threads,
            flight: None,
            ready: None,
            usage: 0.0,
            round: 0,
            sizes: Vec::new(),
            prev_runtime: 0,
            done: None,
            groups: 0,
            waits: 0,
        })
        .collect();
    let n_all = vms.len() as u64;
    let g0 = ((gpu.lanes * gpu.beta / n_all.max(1)) / 64 * 64).max(64);
    let cap = (gpu.lanes * gpu.beta).max(64);
    let mut now = 0u64;
    // FIFO: order of arrival (ties by VM index).
    let mut order: Vec<usize> = (0..vms.len()).collect();
    order.sort_by_key(|&i| (vms[i].arrive, i));
    let mut fifo_next = 0usize;
    for v in &mut vms {
        v.ready = Some(v.arrive);
    }
    loop {
        // Launches due now.
        let active = vms.iter().filter(|v| v.done.is_none()).count() as u64;
        for i in 0..vms.len() {
            let due = vms[i].ready.is_some_and(|r| r <= now) && vms[i].flight.is_none();
            if !due || vms[i].left == 0 {
                continue;
            }
            match scheme {
                Scheme::Fifo => {
                    let busy = vms.iter().any(|v| v.flight.is_some());
                    if busy || order.get(fifo_next) != Some(&i) {
                        continue;
                    }
                    fifo_next += 1;
                    let v = &mut vms[i];
                    v.flight = Some((v.left, v.task.ns_per_thread as f64, now));
                    v.left = 0;
                    v.groups += 1;
                    v.ready = None;
                }
                Scheme::Divide {
                    throttle, gain_pct, ..
                } => {
                    // The least usage among VMs with history (the guard
                    // against a newcomer's zero, see scheduling.rst).
                    let min_u = vms
                        .iter()
                        .filter(|v| v.done.is_none() && v.groups > 0 && v.arrive <= now)
                        .map(|v| v.usage)
                        .fold(f64::INFINITY, f64::min);
                    let max_i = (0..vms.len())
                        .filter(|&j| vms[j].done.is_none() && vms[j].arrive <= now)
                        .max_by(|&a, &b| vms[a].usage.total_cmp(&vms[b].usage).then(b.cmp(&a)));
                    let v = &vms[i];
                    let stop = active > 1
                        && v.groups > 0
                        && min_u.is_finite()
                        && match throttle {
                            Throttle::Off => false,
                            Throttle::Text => max_i == Some(i) && v.usage > 2.0 * min_u,
                            Throttle::Listing => v.prev_runtime as f64 > 2.0 * min_u,
                        };
                    let v = &mut vms[i];
                    if stop {
                        v.waits += 1;
                        v.ready = Some(now + v.prev_runtime.max(1));
                        continue;
                    }
                    // Group size: Eq. 2 in the first two rounds, then the
                    // size Algorithm 2 computed two rounds earlier.
                    v.round += 1;
                    if v.sizes.is_empty() {
                        v.sizes = vec![0, g0, g0];
                    }
                    let size = if gain_pct == 0 {
                        g0
                    } else {
                        v.sizes.get(v.round).copied().unwrap_or(g0)
                    };
                    let t = size.min(v.left).max(1);
                    v.left -= t;
                    v.flight = Some((t, v.task.ns_per_thread as f64, now + gpu.launch_ns));
                    v.groups += 1;
                    v.ready = None;
                }
            }
        }
        // Next event: a completion at the current rate, or a ready time.
        let resident: u64 = vms
            .iter()
            .filter_map(|v| v.flight)
            .filter(|f| f.2 <= now)
            .map(|f| f.0)
            .sum();
        let rate = if resident == 0 {
            1.0
        } else {
            (gpu.lanes as f64 / resident as f64).min(1.0)
        };
        let mut next = u64::MAX;
        for v in &vms {
            if let Some((_, w, start)) = v.flight {
                if start > now {
                    next = next.min(start);
                } else {
                    next = next.min(now + (w / rate).ceil().max(1.0) as u64);
                }
            }
            if let Some(r) = v.ready {
                if r > now {
                    next = next.min(r);
                }
            }
        }
        if next == u64::MAX {
            break;
        }
        let dt = (next - now) as f64;
        now = next;
        let t_all: u64 = vms.iter().filter_map(|v| v.flight).map(|f| f.0).sum();
        let n_act = vms
            .iter()
            .filter(|v| v.done.is_none() && v.arrive <= now)
            .count();
        let mut finished = Vec::new();
        for (i, v) in vms.iter_mut().enumerate() {
            if let Some((t, w, start)) = v.flight.as_mut() {
                if *start < now {
                    let ran = dt.min((now - *start) as f64);
                    *w -= ran * rate;
                }
                if *start <= now && *w <= 1e-6 {
                    finished.push((i, *t, *start));
                }
            }
        }
        for &(i, t, start) in &finished {
            let v = &mut vms[i];
            v.flight = None;
            let runtime = now - start;
            v.prev_runtime = runtime;
            if let Scheme::Divide { charge, .. } = scheme {
                let share = t as f64 / t_all.max(1) as f64;
                v.usage += runtime as f64
                    * match charge {
                        Charge::Eq1 => 1.0 + share,
                        Charge::Runtime => 1.0,
                        Charge::Share => share,
                    };
            }
            if v.left == 0 {
                v.done = Some(now);
            } else {
                v.ready = Some(now);
            }
        }
        // Algorithm 2 for every VM that just finished round t: the size of
        // round t + 2 from its usage share, added to the size of t + 1.
        if let Scheme::Divide {
            gain_pct,
            cumulative,
            ..
        } = scheme
        {
            let all: f64 = vms
                .iter()
                .filter(|v| v.done.is_none() && v.arrive <= now)
                .map(|v| v.usage)
                .sum();
            for &(i, _, _) in &finished {
                let v = &mut vms[i];
                if v.done.is_some() {
                    continue;
                }
                let ratio = if all > 0.0 { v.usage / all } else { 0.0 };
                let err = 1.0 / n_act.max(1) as f64 - ratio;
                let gn = ((gpu.lanes * gpu.beta / (n_act.max(1) as u64)) / 64 * 64).max(64);
                let delta = err * n_act as f64 * gn as f64 * gain_pct as f64 / 100.0;
                let base = if cumulative {
                    v.sizes.get(v.round + 1).copied().unwrap_or(g0)
                } else {
                    gn
                };
                let new = ((base as f64 + delta).max(64.0) as u64 / 64 * 64).clamp(64, cap);
                v.sizes.resize(v.round + 3, g0);
                v.sizes[v.round + 2] = new;
            }
        }
    }
    RunResult {
        time_ns: vms
            .iter()
            .map(|v| v.done.unwrap_or(now).saturating_sub(v.arrive))
            .collect(),
        groups: vms.iter().map(|v| v.groups).collect(),
        waits: vms.iter().map(|v| v.waits).collect(),
    }
}

pub mod report;
