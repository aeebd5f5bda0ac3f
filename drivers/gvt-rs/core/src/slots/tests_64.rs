// SPDX-License-Identifier: GPL-2.0

//! 64 vGPUs on one GPU: every allocator on the simulated GPU's pool (54
//! slots), with its small type (one slot) and GVT-g's smallest (six).

#![allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::unwrap_used
)]
#![allow(clippy::cast_possible_truncation, clippy::panic, clippy::expect_used)]

extern crate std;
use std::eprintln;

use super::*;
use crate::testing::vid;

const MS: u64 = 1_000_000;
/// The simulated GPU's high-GM slots (`sim/mod.rs`: 3456 MB).
const SIM_SLOTS: u16 = 54;

type Pool = SlotPool<64, 64>;

fn pool(kind: AllocatorKind) -> std::boxed::Box<Pool> {
    std::boxed::Box::new(
        Pool::new(PoolConfig {
            slots: SIM_SLOTS,
            low_entries: ENTRIES_PER_SLOT,
            allocator: kind,
        })
        .unwrap(),
    )
}

/// Creates vGPUs of `size` slots until the pool refuses one, checking
/// before each creation that `available_instances` is exactly the number
/// the pool still takes; returns how many were created.
fn fill(p: &mut Pool, size: u16) -> u32 {
    let first = p.available_instances(size);
    let mut made = 0u32;
    loop {
        let avail = p.available_instances(size);
        assert_eq!(avail, first - made, "available_instances after {made}");
        let id = made as u8;
        match p.create(vid(id), size, 0) {
            Ok(c) => {
                assert!(avail > 0, "created vGPU {id} beyond available_instances");
                let pl = p.placement(vid(id)).unwrap();
                assert_eq!(pl.start, c.start);
                assert!(pl.start + pl.slots <= SIM_SLOTS);
                made += 1;
            }
            Err(e) => {
                assert_eq!(avail, 0, "refused vGPU {id} ({e:?}) with {avail} available");
                break;
            }
        }
        if made == 64 {
            assert_eq!(p.available_instances(size), 0);
            // A 65th vGPU has no id.
            assert_eq!(VgpuId::new(64), None);
            break;
        }
    }
    made
}

/// 64 vGPUs switched in round robin with utilization samples, over four
/// re-placement periods; returns the pool's copy counters.
fn run(p: &mut Pool, n: u8) -> CopyStats {
    let period = u64::from(p.tunables().replace_period_ms());
    let mut now = 0u64;
    p.tick(0);
    while now < 4 * period + 1 {
        for id in 0..n {
            now += 5;
            p.switch_in(vid(id), now * MS).unwrap();
            // Utilization from 1 % to 64 %: the re-placers have
            // something to order by.
            p.sample(vid(id), (u32::from(id) + 1) * 10_000, now * MS)
                .unwrap();
        }
        p.tick(now * MS);
    }
    p.totals()
}

/// The per-vGPU counters add up to the pool's, and every vGPU still has its
/// size and a range inside the pool.
fn check_consistent(p: &Pool, n: u8, size: u16) {
    let mut sum = CopyStats::ZERO;
    for id in 0..n {
        let pl = p.placement(vid(id)).unwrap();
        assert_eq!(pl.slots, size);
        assert!(pl.start + pl.slots <= SIM_SLOTS);
        sum.add(&p.stats(vid(id)).unwrap());
    }
    let t = p.totals();
    assert_eq!(
        (sum.high_slots, sum.moves, sum.move_slots),
        (t.high_slots, t.moves, t.move_slots)
    );
    assert_eq!(
        t.move_slots,
        t.moves * u64::from(size),
        "a move copies the vGPU's slots"
    );
}

fn sixty_four(kind: AllocatorKind, size: u16) -> CopyStats {
    let mut p = pool(kind);
    let made = fill(&mut p, size);
    assert_eq!(made, 64, "{} fits 64 vGPUs of {size} slot(s)", kind.name());
    let t = run(&mut p, 64);
    check_consistent(&p, 64, size);
    eprintln!(
        "{:12} 64 x {size} slot(s) on {SIM_SLOTS}: shared slots {}, switch-ins {}, slots copied {}, moves {} ({} slots relocated)",
        kind.name(),
        p.shared_slots(),
        t.switch_ins,
        t.high_slots,
        t.moves,
        t.move_slots
    );
    // One destroyed: exactly one more fits, at the same id.
    p.destroy(vid(17), 0).unwrap();
    assert_eq!(p.available_instances(size), 1);
    p.create(vid(17), size, 0).unwrap();
    assert_eq!(p.available_instances(size), 0);
    t
}

#[test]
fn gscale_places_64_vgpus() {
    for size in [1, 6] {
        let t = sixty_four(AllocatorKind::Gscale, size);
        // gScale never re-places.
        assert_eq!(t.moves, 0);
    }
}

#[test]
fn dymgpu_size_places_64_vgpus() {
    for size in [1, 6] {
        sixty_four(AllocatorKind::DymSize, size);
    }
}

#[test]
fn dymgpu_util_places_64_vgpus() {
    for size in [1, 6] {
        sixty_four(AllocatorKind::DymUtil, size);
    }
}

#[test]
fn cost_places_64_vgpus() {
    for size in [1, 6] {
        sixty_four(AllocatorKind::Cost, size);
    }
}

#[test]
fn one_slot_vgpus_share_only_what_the_pool_lacks() {
    // 64 one-slot vGPUs on 54 slots: 10 must share, and no allocator
    // leaves a slot empty to stack them deeper.
    for kind in [
        AllocatorKind::Gscale,
        AllocatorKind::DymSize,
        AllocatorKind::DymUtil,
        AllocatorKind::Cost,
    ] {
        let mut p = pool(kind);
        assert_eq!(fill(&mut p, 1), 64);
        let occupied = (0..SIM_SLOTS).filter(|&s| p.occupancy(s) > 0).count();
        let total: u32 = (0..SIM_SLOTS).map(|s| u32::from(p.occupancy(s))).sum();
        assert_eq!(total, 64, "{}", kind.name());
        assert_eq!(
            occupied,
            usize::from(SIM_SLOTS),
            "{} leaves a slot empty",
            kind.name()
        );
    }
}

#[test]
fn static_fits_what_the_pool_holds_disjoint() {
    let mut p = pool(AllocatorKind::Static);
    assert_eq!(fill(&mut p, 1), u32::from(SIM_SLOTS));
    let mut p = pool(AllocatorKind::Static);
    assert_eq!(fill(&mut p, 6), u32::from(SIM_SLOTS / 6));
}
