// SPDX-License-Identifier: GPL-2.0

//! Reproductions of the paper's examples and each allocator's rules.

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
use crate::testing::vid;

/// One millisecond in ns, the unit of the pool's `now`.
const MS: u64 = 1_000_000;

type Pool = SlotPool<16, 64>;

fn pool(slots: u16, kind: AllocatorKind) -> Pool {
    Pool::new(PoolConfig {
        slots,
        low_entries: ENTRIES_PER_SLOT,
        allocator: kind,
    })
    .unwrap()
}

fn starts(p: &Pool, n: u8) -> Vec<u16> {
    (0..n).map(|i| p.placement(vid(i)).unwrap().start).collect()
}

/// Round robin over vGPUs `0..n`, `rounds` times; returns high slot copies.
fn rr(p: &mut Pool, n: u8, rounds: u32, now: &mut u64) -> u64 {
    let before = p.totals().high_slots;
    for _ in 0..rounds {
        for i in 0..n {
            *now += 16;
            p.switch_in(vid(i), *now * MS).unwrap();
        }
    }
    p.totals().high_slots - before
}

// ------------------------------------------------------- paper reproductions

#[test]
fn algorithm1_paper_example() {
    // M = 5, S = (4, 4, 3, 2) gives P = (0, 1, 1, 1), K = 1, L = 3.
    let specs: [Spec; 4] = [
        (vid(0), 4, 0, 0, 0),
        (vid(1), 4, 1, 0, 0),
        (vid(2), 3, 2, 0, 0),
        (vid(3), 2, 3, 0, 0),
    ];
    let mut out = [0u16; 4];
    let k = layout::algorithm1::<4>(&specs, 5, &mut out);
    assert_eq!(out, [0, 1, 1, 1]);
    assert_eq!(k, Some(1));
}

#[test]
fn algorithm1_paper_example_through_create_rules() {
    // The same vGPUs created one by one under dymgpu-size end up in the
    // same layout, with copies only on the three shared slots 1..=3.
    let mut p = pool(5, AllocatorKind::DymSize);
    for (i, s) in [4u16, 4, 3, 2].iter().enumerate() {
        let c = p.create(vid(i as u8), *s, 0).unwrap();
        assert!(c.moves.is_empty());
    }
    assert_eq!(starts(&p, 4), [0, 1, 1, 1]);
    assert_eq!(p.dymgpu_anchor(), Some(1));
    assert_eq!(p.shared_slots(), 3);
    let mut now = 0;
    rr(&mut p, 4, 1, &mut now);
    let steady = rr(&mut p, 4, 1, &mut now);
    // Slot 0 belongs to vGPU0 alone, slot 4 to vGPU1 alone.
    assert_eq!(p.owner(0), Some(vid(0)));
    assert_eq!(p.owner(4), Some(vid(1)));
    assert_eq!(steady, 3 + 3 + 3 + 2);
}

#[test]
fn fig4_gscale_copies_24_per_round() {
    // 12 slots, four vGPUs of 6, round robin: 24 + 24(n - 1).
    for n in 1..=6u32 {
        let mut p = pool(12, AllocatorKind::Gscale);
        for i in 0..4 {
            p.create(vid(i), 6, 0).unwrap();
        }
        assert_eq!(starts(&p, 4), [0, 6, 0, 6]);
        let mut now = 0;
        assert_eq!(rr(&mut p, 4, n, &mut now), u64::from(24 + 24 * (n - 1)));
    }
}

#[test]
fn fig4_better_placement_copies_18_per_round() {
    // DymGPU size-based puts vGPU4 with vGPU3 and vGPU1: 24 + 18(n - 1).
    for n in 1..=6u32 {
        let mut p = pool(12, AllocatorKind::DymSize);
        for i in 0..4 {
            p.create(vid(i), 6, 0).unwrap();
        }
        assert_eq!(starts(&p, 4), [0, 6, 6, 6]);
        let mut now = 0;
        assert_eq!(rr(&mut p, 4, n, &mut now), u64::from(24 + 18 * (n - 1)));
    }
}

#[test]
fn fig4_yes_no_scoring_would_not_reproduce_gscale() {
    // Occupancy after vGPU1..3 in Fig. 4a: slots 0-5 twice, 6-11 once.
    let occ = [2u8, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1];
    assert_eq!(layout::gscale(&occ, 6, 12, true), Some(6));
    assert_eq!(layout::gscale(&occ, 6, 12, false), Some(0));
}

#[test]
fn gscale_paper_example() {
    // 5 slots, slots 1-4 (1-based) held by one VM: a 2-slot vGPU gets 4-5.
    let mut p = pool(5, AllocatorKind::Gscale);
    p.create(vid(0), 4, 0).unwrap();
    assert_eq!(p.create(vid(1), 2, 0).unwrap().start, 3);
}

/// Steady-state high-GM slot copies per round, M = 54, sizes 6/11/16
/// repeating, round robin in creation order.
fn steady(kind: AllocatorKind, n: u8) -> u64 {
    let mut p = pool(54, kind);
    for i in 0..n {
        p.create(vid(i), [6, 11, 16][usize::from(i % 3)], 0)
            .unwrap();
    }
    let mut now = 0;
    rr(&mut p, n, 2, &mut now);
    rr(&mut p, n, 1, &mut now)
}

#[test]
fn steady_state_copies_1_1_1_mix() {
    let want = [
        (3u8, 0u64, 0u64),
        (6, 24, 18),
        (9, 90, 56),
        (12, 132, 89),
        (15, 165, 127),
    ];
    for (n, g, s) in want {
        assert_eq!(steady(AllocatorKind::Gscale, n), g, "gscale n={n}");
        assert_eq!(steady(AllocatorKind::DymSize, n), s, "dymgpu-size n={n}");
    }
}

// ------------------------------------------------------- Algorithm 1 gaps

#[test]
fn algorithm1_sum_below_pool_packs_left_without_anchor() {
    let specs: [Spec; 3] = [
        (vid(0), 2, 0, 0, 0),
        (vid(1), 3, 1, 0, 0),
        (vid(2), 1, 2, 0, 0),
    ];
    let mut out = [9u16; 3];
    assert_eq!(layout::algorithm1::<4>(&specs, 10, &mut out), None);
    // Sorted 3, 2, 1: starts 0, 3, 5 (by the original order: 3, 0, 5).
    assert_eq!(out, [3, 0, 5]);
}

#[test]
fn algorithm1_exact_fit_anchors_last() {
    let specs: [Spec; 3] = [
        (vid(0), 3, 0, 0, 0),
        (vid(1), 2, 1, 0, 0),
        (vid(2), 2, 2, 0, 0),
    ];
    let mut out = [0u16; 3];
    // 3 + 2 = 5 = M: the strict "<" right-aligns V1 at 5 - 2 = 3 and it
    // becomes K; V2 stacks on it.
    assert_eq!(layout::algorithm1::<4>(&specs, 5, &mut out), Some(3));
    assert_eq!(out, [0, 3, 3]);
}

#[test]
fn algorithm1_first_vgpu_as_large_as_pool() {
    let specs: [Spec; 3] = [
        (vid(0), 5, 0, 0, 0),
        (vid(1), 5, 1, 0, 0),
        (vid(2), 1, 2, 0, 0),
    ];
    let mut out = [9u16; 3];
    assert_eq!(layout::algorithm1::<4>(&specs, 5, &mut out), Some(0));
    assert_eq!(out, [0, 0, 0]);
}

#[test]
fn algorithm1_ties_keep_creation_order() {
    let specs: [Spec; 3] = [
        (vid(2), 4, 0, 0, 0),
        (vid(0), 4, 1, 0, 0),
        (vid(1), 4, 2, 0, 0),
    ];
    let mut out = [0u16; 3];
    // Equal sizes keep creation order: seq 0 (id 2) at 0, seq 1 (id 0) at
    // 4, seq 2 (id 1) right-aligned at 6 and K.
    assert_eq!(layout::algorithm1::<4>(&specs, 10, &mut out), Some(6));
    assert_eq!(out, [0, 4, 6]);
}

#[test]
fn vgpu_larger_than_pool_is_refused() {
    for k in AllocatorKind::ALL {
        let mut p = pool(5, k);
        assert_eq!(p.create(vid(0), 6, 0).unwrap_err(), Error::OutOfRange);
        assert_eq!(p.in_use(), 0);
    }
}

// ----------------------------------------------------------------- dymgpu-size

#[test]
fn dymsize_create_compares_with_full_replacement() {
    // M = 10: 6 then 4 fit exactly (no anchor); a 5 cannot stack (no
    // anchor, no free window), so A = right-aligned (5 shared slots) vs
    // Algorithm 1 over {6, 5, 4}: 6 at 0, 5 at 5 (K, L = 1), 4 at 5
    // (shared 5..9 = 4 slots... counted below).
    let mut p = pool(10, AllocatorKind::DymSize);
    p.create(vid(0), 6, 0).unwrap();
    p.create(vid(1), 4, 0).unwrap();
    assert_eq!(starts(&p, 2), [0, 6]);
    let c = p.create(vid(2), 5, 0).unwrap();
    // A: 5 at 5 -> slots 5..9 shared: 5..5 (with 6) and 6..9 (with 4) = 5.
    // B: 6@0, 5@5, 4@5 -> slot 5 (6,5,4), 6..8 (5,4) = 4 shared: B wins.
    assert_eq!(starts(&p, 3), [0, 5, 5]);
    assert_eq!(p.shared_slots(), 4);
    assert_eq!(c.moves.len(), 1);
    assert_eq!(
        c.moves.as_slice()[0],
        Move {
            id: vid(1),
            from: 6,
            to: 5,
            slots: 4
        }
    );
    assert_eq!(p.totals().move_slots, 4);
}

#[test]
fn dymsize_without_relocation_never_moves() {
    let mut p = pool(10, AllocatorKind::DymSize);
    p.set_relocation(false);
    p.create(vid(0), 6, 0).unwrap();
    p.create(vid(1), 4, 0).unwrap();
    let c = p.create(vid(2), 5, 0).unwrap();
    assert!(c.moves.is_empty());
    assert_eq!(starts(&p, 3), [0, 6, 5]);
}

#[test]
fn dymsize_destroy_replaces_only_when_an_exclusive_slot_is_freed() {
    let mut p = pool(5, AllocatorKind::DymSize);
    for (i, s) in [4u16, 4, 3, 2].iter().enumerate() {
        p.create(vid(i as u8), *s, 0).unwrap();
    }
    // vGPU3 (2 slots at 1) only holds shared slots: nothing moves.
    assert!(p.destroy(vid(3), 0).unwrap().is_empty());
    // vGPU0 (0..3) holds slot 0 alone: Algorithm 1 over {4, 3}: 4 at 0,
    // 3 right-aligned at 2.
    let mv = p.destroy(vid(0), 0).unwrap();
    assert_eq!(p.placement(vid(1)).unwrap().start, 0);
    assert_eq!(p.placement(vid(2)).unwrap().start, 2);
    assert_eq!(mv.len(), 2);
}

#[test]
fn dymsize_idle_vgpu_is_parked_and_reinserted() {
    let mut p = pool(12, AllocatorKind::DymSize);
    for i in 0..3 {
        p.create(vid(i), 6, 0).unwrap();
    }
    // 6@0, 6@6 (K), 6@6.
    assert_eq!(starts(&p, 3), [0, 6, 6]);
    p.tick(0);
    // vGPU 0 and 1 keep working, vGPU 2 goes quiet.
    for t in 1..=25u64 {
        let now = t * 1000;
        p.sample(vid(0), 500_000, now * MS).unwrap();
        p.sample(vid(1), 500_000, now * MS).unwrap();
        p.sample(vid(2), 0, now * MS).unwrap();
        p.tick(now * MS);
    }
    assert!(p.placement(vid(2)).unwrap().parked);
    assert!(!p.placement(vid(0)).unwrap().parked);
    // Parked vGPU 2 shared everything with vGPU 1: no re-placement, and
    // now nothing is shared among the active ones.
    assert_eq!(p.shared_slots(), 0);
    // It comes back: it keeps its range (no candidate shares fewer slots).
    let plan = p.switch_in(vid(2), 26_000 * MS).unwrap();
    assert!(plan.moves().is_empty());
    assert!(!p.placement(vid(2)).unwrap().parked);
    assert_eq!(p.shared_slots(), 6);
}

#[test]
fn dymsize_parking_exclusive_vgpu_replaces_the_others() {
    let mut p = pool(12, AllocatorKind::DymSize);
    p.create(vid(0), 8, 0).unwrap();
    p.create(vid(1), 6, 0).unwrap(); // right-aligned at 6, anchor 6
    p.create(vid(2), 4, 0).unwrap(); // stacks at 6
    assert_eq!(starts(&p, 3), [0, 6, 6]);
    p.tick(0);
    for t in 1..=20u64 {
        p.sample(vid(1), 1, (t * 1000) * MS).unwrap();
        p.sample(vid(2), 1, (t * 1000) * MS).unwrap();
    }
    let mv = p.tick(20_000 * MS);
    // vGPU0 (exclusive 0..5) parked: Algorithm 1 over {6, 4} packs left
    // (6@0, 4@6, nothing shared, no anchor); only vGPU1 moves.
    assert!(p.placement(vid(0)).unwrap().parked);
    assert_eq!(starts(&p, 3), [0, 0, 6]);
    assert_eq!(
        mv.as_slice(),
        [Move {
            id: vid(1),
            from: 6,
            to: 0,
            slots: 6
        }]
    );
    assert_eq!(p.dymgpu_anchor(), None);
    // When it returns: staying at 0 shares 8 slots, right-aligning at 4
    // shares 6, a full re-run (8@0, 6@6, 4@6) shares 4: the re-run wins.
    let plan = p.switch_in(vid(0), 21_000 * MS).unwrap();
    assert_eq!(
        plan.moves().as_slice(),
        [Move {
            id: vid(1),
            from: 0,
            to: 6,
            slots: 6
        }]
    );
    assert_eq!(starts(&p, 3), [0, 6, 6]);
    assert_eq!(p.shared_slots(), 4);
}

// ----------------------------------------------------------------- dymgpu-util

#[test]
fn algorithm2_right_aligns_each_low_util_vgpu() {
    // Utilization order 2, 0, 3, 1; M = 10.
    let specs: [Spec; 4] = [
        (vid(0), 4, 0, 600_000, 0),
        (vid(1), 3, 1, 100_000, 0),
        (vid(2), 5, 2, 900_000, 0),
        (vid(3), 2, 3, 300_000, 0),
    ];
    let mut out = [0u16; 4];
    layout::algorithm2::<4>(&specs, 10, &mut out);
    // 2 -> 0..4, 0 -> 5..8 (5 + 4 = 9 < 10), 3: 9 + 2 >= 10 -> 8, 1 -> 7.
    assert_eq!(out, [5, 7, 0, 8]);
}

#[test]
fn dymutil_replaces_every_period_by_utilization() {
    let mut p = pool(12, AllocatorKind::DymUtil);
    for i in 0..3 {
        p.create(vid(i), 6, 0).unwrap();
    }
    // Create rule: 0@0, 1@6, 2 right-aligned @6.
    assert_eq!(starts(&p, 3), [0, 6, 6]);
    p.tick(0);
    for t in 1..=20u64 {
        p.sample(vid(0), 10_000, (t * 1000) * MS).unwrap();
        p.sample(vid(1), 300_000, (t * 1000) * MS).unwrap();
        p.sample(vid(2), 900_000, (t * 1000) * MS).unwrap();
        let mv = p.tick((t * 1000) * MS);
        if t < 20 {
            assert!(mv.is_empty());
        }
    }
    // At 20 s: order 2, 1, 0 -> 2@0, 1@6 (K), 0@6.
    assert_eq!(starts(&p, 3), [6, 6, 0]);
    assert_eq!(p.totals().moves, 2);
    assert_eq!(p.utilization(vid(2)), Some(900_000));
}

#[test]
fn dymutil_window_uses_last_samples_only() {
    let mut p = pool(12, AllocatorKind::DymUtil);
    p.create(vid(0), 6, 0).unwrap();
    p.set_util_window_ms(3000).unwrap();
    for (t, u) in [0u32, 0, 0, 300, 600, 900].iter().enumerate() {
        p.sample(vid(0), *u * 1000, (t as u64 * 1000) * MS).unwrap();
    }
    assert_eq!(p.utilization(vid(0)), Some(600_000));
}

// --------------------------------------------------------------------- static

#[test]
fn static_is_exclusive_and_refuses_when_full() {
    let mut p = pool(54, AllocatorKind::Static);
    assert_eq!(p.available_instances(6), 9);
    assert_eq!(p.available_instances_mb(1024), 3);
    for i in 0..9 {
        p.create(vid(i), 6, 0).unwrap();
    }
    assert_eq!(p.available_instances(6), 0);
    assert_eq!(p.create(vid(9), 6, 0).unwrap_err(), Error::NoSpace);
    // Destroy one in the middle: exactly one 6-slot hole.
    p.destroy(vid(4), 0).unwrap();
    assert_eq!(p.available_instances(6), 1);
    assert_eq!(p.available_instances(7), 0);
    assert_eq!(p.create(vid(9), 6, 0).unwrap().start, 24);
    // Sharing allocators fit more: limited by the table only.
    let g = pool(54, AllocatorKind::Gscale);
    assert_eq!(g.available_instances(6), 16);
    assert_eq!(g.available_instances(55), 0);
}

#[test]
fn static_copies_only_the_first_fill() {
    let mut p = pool(12, AllocatorKind::Static);
    p.create(vid(0), 6, 0).unwrap();
    p.create(vid(1), 6, 0).unwrap();
    let mut now = 0;
    assert_eq!(rr(&mut p, 2, 3, &mut now), 12);
    assert_eq!(p.totals().low_copies, 0);
}

// ------------------------------------------------------------------ residency

#[test]
fn switch_in_copies_only_non_resident_slots_and_low_gm() {
    let mut p = pool(12, AllocatorKind::Gscale);
    p.create(vid(0), 8, 0).unwrap(); // 0..7
    p.create(vid(1), 6, 0).unwrap(); // 6..11 (score 2 slots) vs ... leftmost min
    assert_eq!(starts(&p, 2), [0, 6]);
    let a = p.switch_in(vid(0), MS).unwrap();
    assert_eq!(a.high_slots(), 8);
    assert!(a.copy_low());
    assert_eq!(a.entries(), 9 * 16_384);
    assert_eq!(a.copy_runs().collect::<Vec<_>>(), [(0, 8)]);
    let b = p.switch_in(vid(1), 2 * MS).unwrap();
    assert_eq!(b.high_slots(), 6);
    let a = p.switch_in(vid(0), 3 * MS).unwrap();
    assert_eq!(a.high_slots(), 2);
    assert_eq!(a.copy_runs().collect::<Vec<_>>(), [(6, 2)]);
    assert!(a.copies_slot(7) && !a.copies_slot(5));
    // Same vGPU again: nothing to copy, not even low GM.
    let a = p.switch_in(vid(0), 4 * MS).unwrap();
    assert_eq!(a.high_slots(), 0);
    assert!(!a.copy_low());
    let s0 = p.stats(vid(0)).unwrap();
    assert_eq!((s0.switch_ins, s0.high_slots, s0.low_copies), (3, 10, 2));
    assert_eq!(p.totals().entries(), (16 + 3) * 16_384);
    assert_eq!(p.totals().slot_copies(), 16);
}

#[test]
fn destroy_and_forget_residency() {
    let mut p = pool(12, AllocatorKind::Gscale);
    p.create(vid(0), 6, 0).unwrap();
    p.switch_in(vid(0), MS).unwrap();
    assert_eq!(p.owner(0), Some(vid(0)));
    p.forget_residency();
    assert_eq!(p.owner(0), None);
    assert_eq!(p.switch_in(vid(0), 2 * MS).unwrap().high_slots(), 6);
    p.destroy(vid(0), 3 * MS).unwrap();
    assert_eq!(p.owner(0), None);
    assert_eq!(p.low_owner(), None);
    assert_eq!(p.totals().high_slots, 12);
}

#[test]
fn copy_runs_split_on_resident_slots() {
    let mut p = pool(12, AllocatorKind::Gscale);
    p.create(vid(0), 12, 0).unwrap();
    p.create(vid(1), 2, 0).unwrap(); // 0..1 (all windows score 2, leftmost)
    p.create(vid(2), 2, 0).unwrap(); // 2..3
    p.switch_in(vid(0), MS).unwrap();
    p.switch_in(vid(1), 2 * MS).unwrap();
    p.switch_in(vid(2), 3 * MS).unwrap();
    let plan = p.switch_in(vid(0), 4 * MS).unwrap();
    assert_eq!(plan.copy_runs().collect::<Vec<_>>(), [(0, 4)]);
    p.switch_in(vid(1), 5 * MS).unwrap();
    let plan = p.switch_in(vid(0), 6 * MS).unwrap();
    assert_eq!(plan.copy_runs().collect::<Vec<_>>(), [(0, 2)]);
}

// ----------------------------------------------------------------------- cost

#[test]
fn cost_matches_size_based_with_equal_rates() {
    // Fig. 4 again: after one re-placement period the cost allocator has
    // found a layout with 18 copies per round.
    let mut p = pool(12, AllocatorKind::Cost);
    for i in 0..4 {
        p.create(vid(i), 6, 0).unwrap();
    }
    p.tick(0);
    let mut now = 0;
    rr(&mut p, 4, 100, &mut now);
    p.tick(20_000 * MS);
    rr(&mut p, 4, 1, &mut now);
    assert_eq!(rr(&mut p, 4, 1, &mut now), 18);
}

#[test]
fn cost_gives_busy_vgpus_exclusive_slots() {
    // 12 slots, four vGPUs of 6; vGPUs 2 and 3 run 10x as often.
    let mut p = pool(12, AllocatorKind::Cost);
    for i in 0..4 {
        p.create(vid(i), 6, 0).unwrap();
    }
    p.tick(0);
    let mut now = 0;
    for r in 0..200 {
        for i in [2u8, 3] {
            now += 16;
            p.switch_in(vid(i), now * MS).unwrap();
        }
        if r % 10 == 0 {
            for i in [0u8, 1] {
                now += 16;
                p.switch_in(vid(i), now * MS).unwrap();
            }
        }
    }
    p.tick(20_000 * MS);
    let (a, b) = (
        p.placement(vid(2)).unwrap().start,
        p.placement(vid(3)).unwrap().start,
    );
    assert_ne!(a, b);
    // The quiet pair shares one busy vGPU's range... or each other's: in
    // any case each busy vGPU shares with at most one quiet vGPU.
    assert!(p.shared_slots() <= 12);
    let before = p.totals().slot_copies();
    for _ in 0..10 {
        for i in [2u8, 3] {
            now += 16;
            p.switch_in(vid(i), now * MS).unwrap();
        }
    }
    // After the first refill, busy vGPUs alternate without copies.
    assert!(p.totals().slot_copies() - before <= 12);
}

#[test]
fn cost_layout_function_is_inside_pool() {
    let specs: [Spec; 5] = [
        (vid(0), 6, 0, 0, 160),
        (vid(1), 11, 1, 0, 16),
        (vid(2), 16, 2, 0, 320),
        (vid(3), 6, 3, 0, 16),
        (vid(4), 16, 4, 0, 16),
    ];
    let mut out = [0u16; 5];
    layout::cost_layout::<8, 64, 16>(&specs, 30, &[], &mut out);
    for (s, o) in specs.iter().zip(out.iter()) {
        assert!(o + s.1 <= 30);
    }
    // The two busiest (ids 2 and 0, 22 slots) do not overlap each other.
    assert!(out[0] + 6 <= out[2] || out[2] + 16 <= out[0]);
}

// ----------------------------------------------------------- errors, tunables

#[test]
fn errors_change_nothing() {
    let mut p = pool(12, AllocatorKind::DymSize);
    p.create(vid(0), 6, 0).unwrap();
    p.switch_in(vid(0), MS).unwrap();
    let snap = format!("{p:?}");
    assert_eq!(p.create(vid(16), 1, 0).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.create(vid(0), 1, 0).unwrap_err(), Error::Exists);
    assert_eq!(p.create(vid(1), 0, 0).unwrap_err(), Error::Invalid);
    assert_eq!(p.create(vid(1), 13, 0).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.create_mb(vid(1), 100, 0).unwrap_err(), Error::Invalid);
    assert_eq!(p.create_mb(vid(1), 0, 0).unwrap_err(), Error::Invalid);
    assert_eq!(p.destroy(vid(5), 0).unwrap_err(), Error::Invalid);
    assert_eq!(p.destroy(vid(20), 0).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.switch_in(vid(5), 0).unwrap_err(), Error::Invalid);
    assert_eq!(
        p.sample(vid(0), 1_000_001, 0).unwrap_err(),
        Error::OutOfRange
    );
    assert_eq!(p.sample(vid(3), 0, 0).unwrap_err(), Error::Invalid);
    assert_eq!(
        p.set_allocator(AllocatorKind::Gscale).unwrap_err(),
        Error::Busy
    );
    assert_eq!(p.set_sample_period_ms(5).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.set_sample_period_ms(100).unwrap_err(), Error::OutOfRange); // 200 samples
    assert_eq!(p.set_util_window_ms(500).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.set_util_window_ms(65_000).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.set_idle_threshold_ms(999).unwrap_err(), Error::OutOfRange);
    assert_eq!(p.set_replace_period_ms(0).unwrap_err(), Error::OutOfRange);
    assert_eq!(
        p.set_move_penalty_pct(10_001).unwrap_err(),
        Error::OutOfRange
    );
    assert_eq!(format!("{p:?}"), snap);
}

#[test]
fn tunables_accept_their_ranges() {
    let mut p = pool(12, AllocatorKind::DymUtil);
    p.set_util_window_ms(64_000).unwrap();
    p.set_sample_period_ms(60_000).unwrap();
    assert_eq!(p.tunables().window_samples(), 1);
    p.set_sample_period_ms(1000).unwrap();
    assert_eq!(p.tunables().window_samples(), 64);
    p.set_idle_threshold_ms(0).unwrap();
    p.set_replace_period_ms(1000).unwrap();
    p.set_move_penalty_pct(0).unwrap();
    p.set_allocator(AllocatorKind::Static).unwrap();
    assert_eq!(p.allocator(), AllocatorKind::Static);
    assert_eq!(Tunables::default(), Tunables::DEFAULT);
}

#[test]
fn allocator_names_round_trip_strictly() {
    for k in AllocatorKind::ALL {
        assert_eq!(AllocatorKind::from_name(k.name().as_bytes()), Ok(k));
        let nl = format!("{}\n", k.name());
        assert_eq!(AllocatorKind::from_name(nl.as_bytes()), Ok(k));
    }
    for bad in ["", "GSCALE", "gscale ", "gscale\n\n", "dymgpu"] {
        assert_eq!(
            AllocatorKind::from_name(bad.as_bytes()),
            Err(Error::Invalid)
        );
    }
}

#[test]
fn pool_capacity_is_validated() {
    let cfg = |slots| PoolConfig {
        slots,
        low_entries: 0,
        allocator: AllocatorKind::Gscale,
    };
    assert_eq!(
        SlotPool::<16, 64>::new(cfg(0)).unwrap_err(),
        Error::OutOfRange
    );
    assert_eq!(
        SlotPool::<16, 64>::new(cfg(65)).unwrap_err(),
        Error::OutOfRange
    );
    assert_eq!(
        SlotPool::<65, 64>::new(cfg(8)).unwrap_err(),
        Error::OutOfRange
    );
    assert_eq!(
        SlotPool::<0, 64>::new(cfg(8)).unwrap_err(),
        Error::OutOfRange
    );
    assert!(SlotPool::<64, 64>::new(cfg(64)).is_ok());
    assert_eq!(mb_to_slots(704), Ok(11));
    assert_eq!(
        Placement {
            start: 3,
            slots: 1,
            parked: false
        }
        .offset_mb(),
        192
    );
}

#[test]
fn moves_list_merges_and_drops_round_trips() {
    let mut m: Moves<4> = Moves::new();
    m.push(Move {
        id: vid(1),
        from: 0,
        to: 5,
        slots: 2,
    });
    m.push(Move {
        id: vid(2),
        from: 3,
        to: 3,
        slots: 2,
    });
    assert_eq!(m.len(), 1);
    m.push(Move {
        id: vid(1),
        from: 5,
        to: 7,
        slots: 2,
    });
    assert_eq!(
        m.as_slice(),
        [Move {
            id: vid(1),
            from: 0,
            to: 7,
            slots: 2
        }]
    );
    m.push(Move {
        id: vid(2),
        from: 1,
        to: 2,
        slots: 3,
    });
    m.push(Move {
        id: vid(1),
        from: 7,
        to: 0,
        slots: 2,
    });
    assert_eq!(
        m.as_slice(),
        [Move {
            id: vid(2),
            from: 1,
            to: 2,
            slots: 3
        }]
    );
    assert_eq!(m.slots(), 3);
}

#[test]
fn deferred_replacement_matches_direct_and_detects_changes() {
    let setup = |deferred: bool| {
        let mut p = pool(12, AllocatorKind::DymUtil);
        p.set_deferred_replace(deferred);
        for i in 0..3 {
            p.create(vid(i), 6, 0).unwrap();
        }
        p.tick(0);
        for t in 1..=20u64 {
            p.sample(vid(0), 10_000, (t * 1000) * MS).unwrap();
            p.sample(vid(1), 300_000, (t * 1000) * MS).unwrap();
            p.sample(vid(2), 900_000, (t * 1000) * MS).unwrap();
        }
        p
    };
    let mut direct = setup(false);
    let want = direct.tick(20_000 * MS);
    assert!(!want.is_empty());
    let mut p = setup(true);
    assert!(p.tick(20_000 * MS).is_empty());
    assert!(p.replace_pending());
    let plan = p.clone().plan_replace();
    assert_eq!(p.apply_replace(&plan).unwrap(), want);
    assert!(!p.replace_pending());
    assert_eq!(starts(&p, 3), starts(&direct, 3));
    assert_eq!(p.totals(), direct.totals());
    // A plan made before a placement change is refused.
    let plan = p.clone().plan_replace();
    p.create(vid(3), 2, 21_000 * MS).unwrap();
    let snap = format!("{p:?}");
    assert_eq!(p.apply_replace(&plan).unwrap_err(), Error::Busy);
    assert_eq!(format!("{p:?}"), snap);
    // A plan made before relocation was turned off moves nothing.
    let mut p = setup(true);
    p.tick(20_000 * MS);
    let plan = p.clone().plan_replace();
    p.set_relocation(false);
    assert!(p.apply_replace(&plan).unwrap().is_empty());
    assert!(!p.replace_pending());
}

#[test]
fn reconfigure_resizes_an_empty_pool_only() {
    let mut p = pool(54, AllocatorKind::Static);
    assert_eq!(p.reconfigure(0, 0), Err(Error::OutOfRange));
    assert_eq!(p.reconfigure(65, 0), Err(Error::OutOfRange));
    assert_eq!(p.reconfigure(8, 0), Ok(()));
    assert_eq!(p.slots(), 8);
    // Static: two 4-slot vGPUs fill 8 slots; a third does not fit.
    p.create(vid(0), 4, 0).unwrap();
    p.create(vid(1), 4, 0).unwrap();
    assert_eq!(p.create(vid(2), 4, 0).map(|c| c.start), Err(Error::NoSpace));
    assert_eq!(p.available_instances(1), 0);
    // Not while vGPUs exist, and a failed call changes nothing.
    assert_eq!(p.reconfigure(16, 0), Err(Error::Busy));
    assert_eq!(p.slots(), 8);
    p.destroy(vid(0), 0).unwrap();
    p.destroy(vid(1), 0).unwrap();
    assert_eq!(p.reconfigure(16, 0), Ok(()));
    assert_eq!(p.available_instances(4), 4);
}

// ------------------------------------------------------- reload of the running vGPU

#[test]
fn reload_after_a_placement_took_the_running_vgpus_slots() {
    // gScale shares slots: B is placed over A's range while A runs.
    let mut p = pool(4, AllocatorKind::Gscale);
    p.create(vid(0), 4, 0).unwrap();
    p.switch_in(vid(0), MS).unwrap();
    assert!(p.resident(vid(0)));
    p.create(vid(1), 4, 2 * MS).unwrap();
    let b = p.placement(vid(1)).unwrap();
    let a = p.placement(vid(0)).unwrap();
    let overlap = a.start.max(b.start) < (a.start + a.slots).min(b.start + b.slots);
    assert!(overlap, "gscale shares the 4 slots: {a:?} {b:?}");
    p.switch_in(vid(1), 3 * MS).unwrap();
    assert!(!p.resident(vid(0)) && p.resident(vid(1)));
    let switches = p.totals().switch_ins;
    let plan = p.reload(vid(0)).unwrap();
    assert!(plan.entries() > 0);
    assert!(p.resident(vid(0)) && !p.resident(vid(1)));
    // A reload is not a switch, and a resident vGPU reloads nothing.
    assert_eq!(p.totals().switch_ins, switches);
    assert_eq!(p.reload(vid(0)).unwrap().entries(), 0);
    assert!(!p.resident(vid(7)));
}

#[test]
fn copy_from_makes_an_identical_pool() {
    let mut p = pool(10, AllocatorKind::Cost);
    p.set_deferred_replace(true);
    for (i, size) in [(0u8, 4u16), (1, 2), (2, 6), (3, 1)] {
        p.create(vid(i), size, 0).unwrap();
    }
    let mut now = 0;
    rr(&mut p, 4, 5, &mut now);
    let mut copy = pool(3, AllocatorKind::Static);
    copy.copy_from(&p);
    assert_eq!(format!("{copy:?}"), format!("{p:?}"));
    // And it plans as the original would.
    assert_eq!(
        format!("{:?}", copy.plan_replace()),
        format!("{:?}", p.plan_replace())
    );
}
