// SPDX-License-Identifier: GPL-2.0

//! Host benchmarks: placement, switch-in and re-placement cost against the
//! number of vGPUs and slots (release build; wall-clock per call).

use super::report::Table;
use gvt_core::slots::{
    AllocatorKind,
    PoolConfig,
    SlotPool,
    ENTRIES_PER_SLOT, //
};
use gvt_core::testing::{
    vid,
    Rng, //
};
use std::hint::black_box;
use std::time::Instant;

/// One millisecond in ns, the unit of the pool's `now`.
const MS: u64 = 1_000_000;

/// Builds a pool of `n` vGPUs with random sizes (1..=m/3 slots), some
/// switch-in history with skewed rates and utilization samples, and one
/// completed re-placement period.
fn setup<const V: usize>(kind: AllocatorKind, n: usize, m: u16, seed: u64) -> SlotPool<V, 64> {
    let mut r = Rng::new(seed);
    let mut p = SlotPool::<V, 64>::new(PoolConfig {
        slots: m,
        low_entries: ENTRIES_PER_SLOT,
        allocator: kind,
    })
    .expect("pool");
    p.set_relocation(true);
    let mut created = 0u8;
    for i in 0..n {
        let s = 1 + r.below(u64::from((m / 3).max(1))) as u16;
        if p.create(vid(i), s, 0).is_ok() {
            created += 1;
        }
    }
    p.tick(0);
    for t in 0..400u64 {
        let v = (r.below(u64::from(created.max(1))) * r.below(u64::from(created.max(1)))
            / u64::from(created.max(1))) as u8;
        let _ = p.switch_in(vid(v), t * 16 * MS);
    }
    for id in 0..created {
        let _ = p.sample(vid(id), (r.below(1_000_000)) as u32, 10_000 * MS);
    }
    let _ = p.tick(20_000 * MS);
    p
}

fn time<F: FnMut()>(iters: u32, mut f: F) -> f64 {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(iters)
}

fn measure<const V: usize>(kind: AllocatorKind, n: usize, m: u16) -> (f64, f64, f64) {
    let base = setup::<V>(kind, n, m, 99);
    let iters = 200;
    // Create the n-th vGPU into a pool of n-1 (the decision under the lock).
    let mut pre = setup::<V>(kind, n, m, 99);
    let last = (n - 1) as u8;
    let _ = pre.destroy(vid(last), 0);
    let create = time(iters, || {
        let mut p = pre;
        black_box(p.create(vid(last), (m / 4).max(1), 30_000 * MS).ok());
    }) - time(iters, || {
        black_box(pre);
    });
    let mut sp = base;
    let mut k = 0u8;
    let switch = time(iters * 10, || {
        k = (k + 1) % n as u8;
        black_box(sp.switch_in(vid(k), 30_000 * MS).ok());
    });
    let replace = time(iters, || {
        let mut p = base;
        black_box(p.replace_now());
    }) - time(iters, || {
        black_box(base);
    });
    (create.max(0.0), switch, replace.max(0.0))
}

/// Table of per-call costs.
pub fn bench() -> Table {
    let mut t = Table::new(
        "Per-call cost on this host (release build, ns): create the N-th vGPU, switch_in, full re-placement (replace_now)",
        &["allocator", "N", "M", "create ns", "switch_in ns", "re-place ns"],
    );
    let kinds = [
        AllocatorKind::Static,
        AllocatorKind::Gscale,
        AllocatorKind::DymSize,
        AllocatorKind::DymUtil,
        AllocatorKind::Cost,
    ];
    for kind in kinds {
        for &(n, m) in &[
            (4usize, 16u16),
            (8, 32),
            (16, 54),
            (16, 64),
            (32, 64),
            (64, 64),
        ] {
            let (c, s, r) = if n <= 16 {
                measure::<16>(kind, n, m)
            } else {
                measure::<64>(kind, n, m)
            };
            let rep = match kind {
                AllocatorKind::DymUtil | AllocatorKind::Cost => format!("{r:.0}"),
                _ => "-".into(),
            };
            t.row(vec![
                kind.name().into(),
                n.to_string(),
                m.to_string(),
                format!("{c:.0}"),
                format!("{s:.0}"),
                rep,
            ]);
        }
    }
    t
}

/// One measurement of the simulated GPU's GTT load (`SimGpu::load_gtt`:
/// `copy_from_slice` of the vGPU's private `u64` entries into the physical
/// GTT), in picoseconds per entry.
#[derive(Clone, Copy, Debug)]
pub struct CopyCost {
    /// Slots per copy run.
    pub slots: u16,
    /// Minimum over batches, same source and destination every time (cache-warm).
    pub warm_ps: f64,
    /// Minimum over batches, rotating over the private GTTs of 15 vGPUs
    /// (6/11/16 slots, 37 MB with the physical GTT), as a 15-VM run does.
    pub rotating_ps: f64,
}

/// Measures the per-entry cost of the simulated GPU's GTT copy for copy
/// runs of `slots` slots, on a physical GTT of 54 slots.
pub fn copy_cost(slots: u16) -> CopyCost {
    const E: usize = ENTRIES_PER_SLOT as usize;
    let n = usize::from(slots) * E;
    let mut phys = vec![0u64; 54 * E];
    // 15 private GTTs of 6/11/16 slots, filled with PTE-like values.
    let privs: Vec<Vec<u64>> = (0..15u64)
        .map(|v| {
            let len = [6usize, 11, 16][(v % 3) as usize].max(usize::from(slots)) * E;
            (0..len as u64).map(|i| (v << 40) | (i << 12) | 1).collect()
        })
        .collect();
    let batches = 20;
    let per_batch = (4_000_000 / n).max(2);
    let mut run = |rotate: bool| -> f64 {
        let mut best = f64::MAX;
        let mut k = 0usize;
        for _ in 0..batches {
            let t = Instant::now();
            for _ in 0..per_batch {
                let src = &privs[if rotate { k % privs.len() } else { 0 }];
                // The destination slot follows the vGPU, as placements do.
                let at = if rotate {
                    (k * 7 % (54 - usize::from(slots) + 1)) * E
                } else {
                    0
                };
                phys[at..at + n].copy_from_slice(&src[..n]);
                k += 1;
            }
            black_box(&phys);
            let ps = t.elapsed().as_nanos() as f64 * 1000.0 / (per_batch * n) as f64;
            best = best.min(ps);
        }
        best
    };
    let warm_ps = run(false);
    let rotating_ps = run(true);
    CopyCost {
        slots,
        warm_ps,
        rotating_ps,
    }
}

/// Table of the GTT copy cost per entry and of the slot pool's switch-in
/// decision (the non-copy part of the simulated GPU's switch).
pub fn copy_bench() -> Table {
    let mut t = Table::new(
        "GTT load of the simulated GPU on this host (release build): copy_from_slice of private u64 PTEs into the physical GTT, ps per entry (minimum of 20 batches)",
        &["slots per run", "entries", "warm ps/entry", "rotating ps/entry", "rotating GB/s", "run us"],
    );
    for slots in [1u16, 6, 11, 16] {
        let c = copy_cost(slots);
        let entries = u64::from(slots) * u64::from(ENTRIES_PER_SLOT);
        t.row(vec![
            c.slots.to_string(),
            entries.to_string(),
            format!("{:.0}", c.warm_ps),
            format!("{:.0}", c.rotating_ps),
            format!("{:.1}", 8.0 / c.rotating_ps * 1000.0),
            format!("{:.1}", c.rotating_ps * entries as f64 / 1e6),
        ]);
    }
    // The decision part: SlotPool::switch_in of 15 vGPUs on 54 slots in
    // round robin (the plan only; no entry is copied).
    let mut p = SlotPool::<16, 64>::new(PoolConfig {
        slots: 54,
        low_entries: ENTRIES_PER_SLOT,
        allocator: AllocatorKind::Gscale,
    })
    .expect("pool");
    for i in 0..15u8 {
        p.create(vid(i), [6, 11, 16][usize::from(i % 3)], 0)
            .expect("create");
    }
    let mut best = f64::MAX;
    let mut k = 0u64;
    for _ in 0..20 {
        let ns = time(20_000, || {
            k += 1;
            black_box(p.switch_in(vid(k % 15), k / 64 * MS).ok());
        });
        best = best.min(ns);
    }
    t.row(vec![
        "switch_in decision".into(),
        "-".into(),
        "-".into(),
        "-".into(),
        "-".into(),
        format!("{:.3}", best / 1000.0),
    ]);
    t
}
