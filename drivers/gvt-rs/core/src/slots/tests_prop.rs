// SPDX-License-Identifier: GPL-2.0

//! Property tests: random event sequences against every allocator, with a
//! deterministic PRNG (`crate::testing::Rng`, no external crates).

#![allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::unwrap_used
)]
#![allow(clippy::cast_possible_truncation, clippy::panic, clippy::expect_used)]

extern crate std;
use std::format;
use std::vec::Vec;

use super::layout::{
    self,
    Spec, //
};
use super::*;
use crate::testing::{
    vid,
    Rng, //
};

/// One millisecond in ns, the unit of the pool's `now`.
const MS: u64 = 1_000_000;

const V: usize = 12;
const M: usize = 32;
type Pool = SlotPool<V, M>;

fn check_invariants(p: &Pool, kind: AllocatorKind) {
    let m = p.slots();
    let mut ranges = Vec::new();
    for id in 0..V as u8 {
        if let Some(pl) = p.placement(vid(id)) {
            assert!(pl.slots >= 1 && pl.slots <= m, "size {pl:?}");
            assert!(pl.start + pl.slots <= m, "outside pool {pl:?} m={m}");
            ranges.push((id, pl.start, pl.slots));
        }
    }
    for s in 0..m {
        if let Some(o) = p.owner(s) {
            let pl = p.placement(o).expect("owner in use");
            assert!(
                pl.start <= s && s < pl.start + pl.slots,
                "owner {o} of {s} outside {pl:?}"
            );
        }
    }
    if kind == AllocatorKind::Static {
        for (i, a) in ranges.iter().enumerate() {
            for b in ranges.iter().skip(i + 1) {
                assert!(
                    a.1 + a.2 <= b.1 || b.1 + b.2 <= a.1,
                    "static overlap {a:?} {b:?}"
                );
            }
        }
    }
}

fn run(seed: u64, kind: AllocatorKind, relocation: bool, steps: u32) {
    let mut r = Rng::new(seed);
    let m = 4 + r.below(M as u64 - 3) as u16;
    let mut p = Pool::new(PoolConfig {
        slots: m,
        low_entries: 16_384,
        allocator: kind,
    })
    .unwrap();
    p.set_relocation(relocation);
    let mut now: u64 = 0;
    let mut high: u64 = 0;
    let mut moved: u64 = 0;
    let count_moves = |p: &Pool, mv: &Moves<V>, moved: &mut u64| {
        for x in mv.iter() {
            assert!(x.to + x.slots <= p.slots());
            assert_ne!(x.from, x.to);
            assert_eq!(p.placement(x.id).unwrap().start, x.to);
            *moved += u64::from(x.slots);
        }
        if !kind.shares() || kind == AllocatorKind::Gscale || !relocation {
            assert!(mv.is_empty(), "{kind:?} moved");
        }
    };
    for _ in 0..steps {
        now += r.below(3000);
        let id = r.below(V as u64 + 1) as u8; // sometimes out of range
        let before = format!("{p:?}");
        let placements: Vec<_> = (0..V as u8).map(|i| p.placement(vid(i))).collect();
        match r.below(10) {
            0 | 1 => {
                let size = r.below(u64::from(m) + 2) as u16; // 0 and m+1 too
                match p.create(vid(id), size, now * MS) {
                    Ok(c) => {
                        assert_eq!(p.placement(vid(id)).unwrap().start, c.start);
                        count_moves(&p, &c.moves, &mut moved);
                    }
                    Err(_) => assert_eq!(format!("{p:?}"), before),
                }
            }
            2 => match p.destroy(vid(id), now * MS) {
                Ok(mv) => {
                    assert!(p.placement(vid(id)).is_none());
                    count_moves(&p, &mv, &mut moved);
                }
                Err(_) => assert_eq!(format!("{p:?}"), before),
            },
            3..=6 => match p.switch_in(vid(id), now * MS) {
                Ok(plan) => {
                    count_moves(&p, plan.moves(), &mut moved);
                    let pl = p.placement(vid(id)).unwrap();
                    assert_eq!(plan.range(), (pl.start, pl.slots));
                    assert!(plan.high_slots() <= pl.slots);
                    let mut n = 0;
                    for (s, len) in plan.copy_runs() {
                        assert!(s >= pl.start && s + len <= pl.start + pl.slots);
                        n += len;
                    }
                    assert_eq!(n, plan.high_slots());
                    for s in pl.start..pl.start + pl.slots {
                        assert_eq!(p.owner(s), Some(vid(id)));
                    }
                    high += u64::from(plan.high_slots());
                }
                Err(_) => assert_eq!(format!("{p:?}"), before),
            },
            7 => {
                let u = r.below(1_100_000) as u32;
                if p.sample(vid(id), u, now * MS).is_err() {
                    assert_eq!(format!("{p:?}"), before);
                }
            }
            _ => {
                let mv = p.tick(now * MS);
                count_moves(&p, &mv, &mut moved);
            }
        }
        // Sharing-free allocators never move anybody.
        if matches!(kind, AllocatorKind::Static | AllocatorKind::Gscale) {
            for (i, old) in placements.iter().enumerate() {
                if let (Some(a), Some(b)) = (old, p.placement(vid(i as u8))) {
                    assert_eq!(a.start, b.start);
                }
            }
        }
        check_invariants(&p, kind);
    }
    assert_eq!(p.totals().high_slots, high);
    assert_eq!(p.totals().move_slots, moved);
}

#[test]
fn random_event_sequences_keep_invariants() {
    for seed in 1..=24u64 {
        for kind in AllocatorKind::ALL {
            for reloc in [true, false] {
                run(seed * 7919 + kind as u64, kind, reloc, 300);
            }
        }
    }
}

#[test]
fn layout_functions_stay_inside_pool_and_unsplit() {
    let mut r = Rng::new(12345);
    for _ in 0..3000 {
        let m = 1 + r.below(64) as u16;
        let n = 1 + r.below(16) as usize;
        let specs: Vec<Spec> = (0..n)
            .map(|i| {
                (
                    vid(i),
                    1 + r.below(u64::from(m)) as u16,
                    r.below(4) as u32,
                    r.below(1_000_001) as u32,
                    1 + r.below(1000) as u32,
                )
            })
            .collect();
        let mut out = [0u16; 16];
        layout::algorithm1::<16>(&specs, m, &mut out[..n]);
        for (s, o) in specs.iter().zip(out.iter()) {
            assert!(o + s.1 <= m, "alg1 {specs:?} m={m} -> {out:?}");
        }
        layout::algorithm2::<16>(&specs, m, &mut out[..n]);
        for (s, o) in specs.iter().zip(out.iter()) {
            assert!(o + s.1 <= m, "alg2");
        }
        layout::cost_layout::<16, 64, 16>(&specs, m, &[], &mut out[..n]);
        for (s, o) in specs.iter().zip(out.iter()) {
            assert!(o + s.1 <= m, "cost");
        }
        let mut occ = [0u8; 64];
        let size = 1 + r.below(u64::from(m)) as u16;
        for o in occ.iter_mut().take(usize::from(m)) {
            *o = r.below(4) as u8;
        }
        let g = layout::gscale(&occ, size, m, true).unwrap();
        assert!(g + size <= m);
    }
}

#[test]
fn algorithm1_shares_only_at_the_anchor() {
    // Derived property: with K set, the shared slots are one run starting
    // at P_K, and V_0..V_{K-2} are exclusive.
    let mut r = Rng::new(777);
    for _ in 0..2000 {
        let m = 2 + r.below(60) as u16;
        let n = 1 + r.below(12) as usize;
        let specs: Vec<Spec> = (0..n)
            .map(|i| (vid(i), 1 + r.below(u64::from(m)) as u16, i as u32, 0, 0))
            .collect();
        let mut out = [0u16; 16];
        let k = layout::algorithm1::<16>(&specs, m, &mut out[..n]);
        let mut occ = [0u8; 64];
        for (s, o) in specs.iter().zip(out.iter()) {
            for x in *o..*o + s.1 {
                occ[usize::from(x)] += 1;
            }
        }
        let shared: Vec<u16> = (0..m).filter(|&x| occ[usize::from(x)] >= 2).collect();
        match k {
            None => assert!(shared.is_empty()),
            Some(pk) => {
                if let Some(&first) = shared.first() {
                    assert_eq!(first, pk);
                    assert_eq!(
                        *shared.last().unwrap() as usize,
                        pk as usize + shared.len() - 1
                    );
                }
            }
        }
    }
}
