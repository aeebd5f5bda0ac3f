// SPDX-License-Identifier: GPL-2.0

//! gvt-bench: host cost of scheduler decisions per pick, dispatch, completion
//! and queue event, for 1..64 and 256 vGPUs and every policy.
//!
//! Every vGPU keeps work queued; each cycle completes the running workload,
//! re-queues it, picks (every cycle ends a turn: slices are shorter than a
//! workload) and dispatches. Each call is timed with `Instant`, the
//! calibrated cost of an empty `Instant` pair is subtracted, and the
//! figure kept is the minimum over 20 batches of the batch mean (the host
//! may be busy). `cycle` is a whole uninstrumented cycle (complete, queue,
//! tick, pick, dispatch), also the minimum batch mean.

use gvt_core::sched::{
    Pick,
    Policy,
    Scheduler,
    Tunable, //
};
use gvt_core::VgpuId;
use std::hint::black_box;
use std::time::Instant;

const MS: u64 = 1_000_000;

#[derive(Default, Clone, Copy)]
struct Cost {
    pick: f64,
    dispatch: f64,
    complete: f64,
    queue: f64,
}

/// Smallest mean cost of an empty `Instant::now()` + `elapsed()` pair.
fn overhead() -> f64 {
    let n = 100_000u32;
    let mut best = f64::MAX;
    for _ in 0..20 {
        let mut acc = 0u128;
        for _ in 0..n {
            let t = Instant::now();
            acc += black_box(t.elapsed().as_nanos());
        }
        best = best.min(acc as f64 / n as f64);
    }
    best
}

struct Run<const N: usize> {
    s: Box<Scheduler<N>>,
    now: u64,
    running: Option<VgpuId>,
}

impl<const N: usize> Run<N> {
    fn new(n: usize, busy: usize, policy: Policy, throttle: bool) -> Self {
        let mut s: Box<Scheduler<N>> = Box::default();
        s.set_policy(policy, 0).unwrap();
        s.set_tunable(Tunable::Throttle, throttle as u64, 0)
            .unwrap();
        s.set_tunable(Tunable::SfqSliceUs, 100, 0).unwrap();
        s.set_tunable(Tunable::VmcgSliceCeilingUs, 1000, 0).unwrap();
        s.set_tunable(Tunable::VmcgMinSliceUs, 100, 0).unwrap();
        s.set_tunable(Tunable::TbsStartBoostMs, 0, 0).unwrap();
        for i in 0..n {
            let id = VgpuId::try_from(i).unwrap();
            s.create(id, 1 + (i as u32 % 4), 512).unwrap();
            s.start(id, 0).unwrap();
            s.cpu_time(id, i as u64 * MS).unwrap();
        }
        for i in 0..busy {
            let id = VgpuId::try_from(i).unwrap();
            s.queued(id, 0, 0).unwrap();
            s.queued(id, 0, 0).unwrap();
        }
        Self {
            s,
            now: 0,
            running: None,
        }
    }

    /// One cycle; with `oh = Some(_)` every call is timed into `d`.
    #[inline(always)]
    fn cycle(&mut self, timed: bool, d: &mut Cost) {
        self.now += 2 * MS;
        let now = self.now;
        let s = &mut self.s;
        if let Some(id) = self.running.take() {
            let t = timed.then(Instant::now);
            black_box(s.completed(black_box(id), 0, 2 * MS, now)).unwrap();
            if let Some(t) = t {
                d.complete += t.elapsed().as_nanos() as f64;
            }
            let t = timed.then(Instant::now);
            black_box(s.queued(black_box(id), 0, now)).unwrap();
            if let Some(t) = t {
                d.queue += t.elapsed().as_nanos() as f64;
            }
        }
        s.tick(now);
        let t = timed.then(Instant::now);
        let p = black_box(s.pick(black_box(now))).unwrap();
        if let Some(t) = t {
            d.pick += t.elapsed().as_nanos() as f64;
        }
        if let Pick::Run { .. } = p {
            let t = timed.then(Instant::now);
            let id = s.next_vgpu(0, now);
            if let Some(id) = id {
                s.dispatched(id, 0, now, now).unwrap();
            }
            if let Some(t) = t {
                d.dispatch += t.elapsed().as_nanos() as f64;
            }
            self.running = id;
        }
    }
}

/// Minimum over batches of the mean cost per call (robust to a loaded host).
fn bench<const N: usize>(
    n: usize,
    busy: usize,
    policy: Policy,
    throttle: bool,
    cycles: u32,
    oh: f64,
) -> (Cost, f64) {
    const BATCHES: u32 = 20;
    let per = (cycles / BATCHES).max(1);
    let mut r = Run::<N>::new(n, busy, policy, throttle);
    let mut junk = Cost::default();
    for _ in 0..per {
        r.cycle(false, &mut junk);
    }
    let mut best = Cost {
        pick: f64::MAX,
        dispatch: f64::MAX,
        complete: f64::MAX,
        queue: f64::MAX,
    };
    let mut best_cycle = f64::MAX;
    for _ in 0..BATCHES {
        let mut d = Cost::default();
        for _ in 0..per {
            r.cycle(true, &mut d);
        }
        let f = per as f64;
        best.pick = best.pick.min(d.pick / f - oh);
        best.dispatch = best.dispatch.min(d.dispatch / f - oh);
        best.complete = best.complete.min(d.complete / f - oh);
        best.queue = best.queue.min(d.queue / f - oh);
        let t = Instant::now();
        for _ in 0..per {
            r.cycle(false, &mut junk);
        }
        best_cycle = best_cycle.min(t.elapsed().as_nanos() as f64 / f);
    }
    let z = |x: f64| x.max(0.0);
    (
        Cost {
            pick: z(best.pick),
            dispatch: z(best.dispatch),
            complete: z(best.complete),
            queue: z(best.queue),
        },
        best_cycle,
    )
}

fn main() {
    let cycles: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let oh = overhead();
    println!(
        "# gvt-bench: ns per call (Instant overhead {oh:.1} ns subtracted), {cycles} cycles each"
    );
    println!(
        "{:<9} {:>5} {:>5} {:>7} {:>9} {:>9} {:>7} {:>7}",
        "policy", "vgpus", "busy", "pick", "dispatch", "complete", "queue", "cycle"
    );
    let variants = [
        (Policy::Tbs, false, "tbs"),
        (Policy::Vmcg, false, "vmcg"),
        (Policy::Sfq, false, "sfq"),
        (Policy::Eevdf, false, "eevdf"),
        (Policy::Sfq, true, "sfq+thr"),
        (Policy::Tbs, true, "tbs+thr"),
    ];
    for (p, thr, name) in variants {
        for n in [1usize, 2, 4, 8, 16, 32, 64, 256] {
            for busy in [n, 1] {
                if busy == 1 && n == 1 {
                    continue;
                }
                let (c, cyc) = if n <= 64 {
                    bench::<64>(n, busy, p, thr, cycles, oh)
                } else {
                    bench::<256>(n, busy, p, thr, cycles, oh)
                };
                println!(
                    "{:<9} {:>5} {:>5} {:>7.1} {:>9.1} {:>9.1} {:>7.1} {:>7.1}",
                    name, n, busy, c.pick, c.dispatch, c.complete, c.queue, cyc
                );
            }
        }
    }
}
