// SPDX-License-Identifier: GPL-2.0

//! gvt-bench: host cost of every scheduler call on a workload's path (pick,
//! dispatch, completion, queueing behind queued work, wake-up), for 4, 16
//! and 64 vGPUs (64 is `MAX_VGPUS`, the bound of a `VgpuId`) and every
//! policy, on a `Scheduler<N>` with `N` the number of vGPUs.
//!
//! Of `n` vGPUs, `busy` keep work queued (all but one, or one) and the last
//! one sleeps. Each cycle completes the running workload, re-queues it
//! (`queue`: `queued` on a vGPU that has work), wakes the sleeper
//! (`wake`: `queued` on an idle vGPU, which enters the fair queue, the
//! throttle's set and the policy's wake-up preemption test) and puts it
//! back to sleep (`cancelled`, not timed), picks (every cycle ends a turn:
//! slices are shorter than a workload) and dispatches. Each call is timed
//! with `Instant`, the calibrated cost of an empty `Instant` pair is
//! subtracted, and the figure kept is the minimum over 20 batches of the
//! batch mean (the host may be busy). `cycle` is a whole uninstrumented
//! cycle (complete, queue, wake, sleep, tick, pick, dispatch), also the
//! minimum batch mean. The last table is the growth of each call from 16
//! to 64 vGPUs, busy = n - 1.

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
    wake: f64,
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
    sleeper: VgpuId,
}

/// A variant of a policy: the policy, the throttle on, `anticipate_us`.
type Variant = (Policy, bool, u64, &'static str);

impl<const N: usize> Run<N> {
    fn new(n: usize, busy: usize, (policy, throttle, anticipate, _): Variant) -> Self {
        let mut s: Box<Scheduler<N>> = Box::default();
        s.set_policy(policy, 0).unwrap();
        s.set_tunable(Tunable::Throttle, throttle as u64, 0)
            .unwrap();
        s.set_tunable(Tunable::AnticipateUs, anticipate, 0).unwrap();
        s.set_tunable(Tunable::SfqSliceUs, 100, 0).unwrap();
        s.set_tunable(Tunable::VmcgSliceCeilingUs, 1000, 0).unwrap();
        s.set_tunable(Tunable::VmcgMinSliceUs, 100, 0).unwrap();
        s.set_tunable(Tunable::TbsStartBoostMs, 0, 0).unwrap();
        for i in 0..n {
            let id = VgpuId::new(i).unwrap();
            s.create(id, 1 + (i as u32 % 4), 512).unwrap();
            s.start(id, 0).unwrap();
            s.cpu_time(id, i as u64 * MS).unwrap();
        }
        for i in 0..busy {
            let id = VgpuId::new(i).unwrap();
            s.queued(id, 0, 0).unwrap();
            s.queued(id, 0, 0).unwrap();
        }
        Self {
            s,
            now: 0,
            running: None,
            sleeper: VgpuId::new(n - 1).unwrap(),
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
        let z = self.sleeper;
        let t = timed.then(Instant::now);
        black_box(s.queued(black_box(z), 0, now)).unwrap();
        if let Some(t) = t {
            d.wake += t.elapsed().as_nanos() as f64;
        }
        s.cancelled(z, 0).unwrap();
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
fn bench<const N: usize>(busy: usize, v: Variant, cycles: u32, oh: f64) -> (Cost, f64) {
    const BATCHES: u32 = 20;
    let per = (cycles / BATCHES).max(1);
    let mut r = Run::<N>::new(N, busy, v);
    let mut junk = Cost::default();
    for _ in 0..per {
        r.cycle(false, &mut junk);
    }
    let mut best = Cost {
        pick: f64::MAX,
        dispatch: f64::MAX,
        complete: f64::MAX,
        queue: f64::MAX,
        wake: f64::MAX,
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
        best.wake = best.wake.min(d.wake / f - oh);
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
            wake: z(best.wake),
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
        "{:<9} {:>5} {:>5} {:>7} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "policy", "vgpus", "busy", "pick", "dispatch", "complete", "queue", "wake", "cycle"
    );
    let variants: [Variant; 7] = [
        (Policy::Tbs, false, 0, "tbs"),
        (Policy::Vmcg, false, 0, "vmcg"),
        (Policy::Sfq, false, 0, "sfq"),
        (Policy::Eevdf, false, 0, "eevdf"),
        (Policy::Eevdf, false, 2000, "eevdf+ant"),
        (Policy::Sfq, true, 0, "sfq+thr"),
        (Policy::Tbs, true, 0, "tbs+thr"),
    ];
    let mut growth = Vec::new();
    for v in variants {
        let mut at16 = None;
        for n in [4usize, 16, 64] {
            for busy in [n - 1, 1] {
                let (c, cyc) = match n {
                    4 => bench::<4>(busy, v, cycles, oh),
                    16 => bench::<16>(busy, v, cycles, oh),
                    _ => bench::<64>(busy, v, cycles, oh),
                };
                println!(
                    "{:<9} {:>5} {:>5} {:>7.1} {:>9.1} {:>9.1} {:>7.1} {:>7.1} {:>7.1}",
                    v.3, n, busy, c.pick, c.dispatch, c.complete, c.queue, c.wake, cyc
                );
                if busy == n - 1 && n == 16 {
                    at16 = Some(c);
                }
                if let (true, 64, Some(a)) = (busy == n - 1, n, at16) {
                    growth.push((v.3, a, c));
                }
            }
        }
    }
    println!();
    println!("# growth from 16 to 64 vGPUs (busy = n - 1): cost at 64 / cost at 16");
    println!(
        "{:<9} {:>7} {:>9} {:>9} {:>7} {:>7}",
        "policy", "pick", "dispatch", "complete", "queue", "wake"
    );
    // Below a few ns the ratio is noise: shown as `-`.
    let r = |a: f64, b: f64| {
        if a < 5.0 {
            "-".to_string()
        } else {
            format!("{:.2}", b / a)
        }
    };
    for (name, a, b) in growth {
        println!(
            "{:<9} {:>7} {:>9} {:>9} {:>7} {:>7}",
            name,
            r(a.pick, b.pick),
            r(a.dispatch, b.dispatch),
            r(a.complete, b.complete),
            r(a.queue, b.queue),
            r(a.wake, b.wake)
        );
    }
}
