// SPDX-License-Identifier: GPL-2.0

//! Host benchmarks: placement, switch-in and re-placement cost against the
//! number of vGPUs and slots (release build; wall-clock per call).

use super::report::Table;
use super::workload::Rng;
use gvt_core::slots::{AllocatorKind, PoolConfig, SlotPool, ENTRIES_PER_SLOT};
use std::hint::black_box;
use std::time::Instant;

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
        if p.create(i as u8, s, 0).is_ok() {
            created += 1;
        }
    }
    p.tick(0);
    for t in 0..400u64 {
        let v = (r.below(u64::from(created.max(1))) * r.below(u64::from(created.max(1)))
            / u64::from(created.max(1))) as u8;
        let _ = p.switch_in(v, t * 16);
    }
    for id in 0..created {
        let _ = p.sample(id, (r.below(1_000_000)) as u32, 10_000);
    }
    let _ = p.tick(20_000);
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
    let _ = pre.destroy(last, 0);
    let create = time(iters, || {
        let mut p = pre.clone();
        black_box(p.create(last, (m / 4).max(1), 30_000).ok());
    }) - time(iters, || {
        black_box(pre.clone());
    });
    let mut sp = base.clone();
    let mut k = 0u8;
    let switch = time(iters * 10, || {
        k = (k + 1) % n as u8;
        black_box(sp.switch_in(k, 30_000).ok());
    });
    let replace = time(iters, || {
        let mut p = base.clone();
        black_box(p.replace_now());
    }) - time(iters, || {
        black_box(base.clone());
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
