// SPDX-License-Identifier: GPL-2.0

//! The engine logic as a provider drives it: placement, the scheduler's
//! lifecycle, switch-ins and reloads that load the GTT, samples.

#![allow(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::unwrap_used
)]

extern crate std;
use std::vec;

use super::*;
use crate::sched::Policy;
use crate::slots::{
    AllocatorKind,
    ENTRIES_PER_SLOT, //
};
use crate::testing::{
    vid,
    Event,
    Recorder, //
};

const MS: u64 = 1_000_000;

type Gpu = crate::testing::Gpu<4, 16>;

/// As the i915 provider configures its engine: no relocation, low GM
/// accounted by GVT-g.
fn i915(slots: u16) -> Gpu {
    let cfg = GpuConfig {
        engines: 2,
        low_mb: u32::MAX,
        slots,
        low_shared_entries: 0,
        relocate: false,
        max_vgpus: 4,
    };
    Gpu::new(cfg, AllocatorKind::Static, Recorder::logging()).unwrap()
}

fn gpu(cfg: GpuConfig, allocator: AllocatorKind) -> Gpu {
    Gpu::new(cfg, allocator, Recorder::logging()).unwrap()
}

#[test]
fn placement_and_scheduling_are_separate_steps() {
    let mut g = i915(8);
    // alloc_high x2: 256 MB = 4 slots each fill the 8-slot pool.
    assert_eq!(g.available_mb(256, 0), 2);
    let a = g.place(256, 0, 4, 0).unwrap();
    let b = g.place(256, 0, 8, 0).unwrap();
    assert_eq!((a, b), (vid(0), vid(1)));
    assert_eq!(g.place(256, 0, 4, 0), Err(Error::NoSpace));
    assert_eq!(g.available_mb(256, 0), 0);
    // Placed, not yet in the scheduler.
    assert!(g.sched.stats(a).is_none());
    assert_eq!(g.sched.start(a, 0), Err(Error::Invalid));
    assert_eq!(g.table.type_weight(a), Some(4));
    // init_vgpu.
    g.attach(a).unwrap();
    assert_eq!(g.attach(a), Err(Error::Invalid));
    assert_eq!(g.sched.stats(a).map(|s| s.weight), Some(4));
    // free_high before clean_vgpu is refused and changes nothing.
    assert_eq!(g.unplace(a, 0), Err(Error::Busy));
    assert_eq!(g.table.len(), 2);
    // A started vGPU cannot leave the scheduler.
    g.sched.start(a, 0).unwrap();
    assert_eq!(g.detach(a), Err(Error::Busy));
    g.sched.stop(a, 0).unwrap();
    g.detach(a).unwrap();
    assert_eq!(g.detach(a), Err(Error::Invalid));
    g.unplace(a, 0).unwrap();
    assert_eq!(g.unplace(a, 0), Err(Error::Invalid));
    // b never entered the scheduler (init_vgpu failed, say).
    g.unplace(b, 0).unwrap();
    assert!(g.table.is_empty());
    assert_eq!(g.available_mb(256, 0), 2);
    // A static pool without relocation moves nothing and loads nothing.
    assert_eq!(g.rec.take(), []);
}

#[test]
fn the_table_reuses_the_lowest_free_id_and_refuses_a_fifth_vgpu() {
    let mut g = i915(16);
    for want in 0..4 {
        assert_eq!(g.place(64, 0, 1, 0), Ok(vid(want)));
    }
    assert_eq!(g.available_mb(64, 0), 0);
    assert_eq!(g.place(64, 0, 1, 0), Err(Error::NoSpace));
    g.unplace(vid(2), 0).unwrap();
    assert_eq!(g.place(64, 0, 1, 0), Ok(vid(2)));
}

#[test]
fn low_gm_is_charged_only_where_the_allocator_keeps_it_private() {
    let cfg = GpuConfig {
        engines: 1,
        low_mb: 256,
        slots: 16,
        low_shared_entries: 0,
        relocate: true,
        max_vgpus: 4,
    };
    let mut g = gpu(cfg, AllocatorKind::Static);
    assert_eq!(g.available_mb(64, 128), 2);
    let a = g.place(64, 128, 1, 0).unwrap();
    g.place(64, 128, 1, 0).unwrap();
    // The high GM would fit; the low GM is used up, and a refusal
    // changes nothing.
    assert_eq!(g.available_mb(64, 128), 0);
    assert_eq!(g.place(64, 128, 1, 0), Err(Error::NoSpace));
    assert_eq!(g.table.len(), 2);
    assert_eq!(g.pool.in_use(), 2);
    g.unplace(a, 0).unwrap();
    assert_eq!(g.available_mb(64, 128), 1);
    // A sharing allocator shares the low region: no charge.
    let shared = GpuConfig {
        low_shared_entries: 32,
        ..cfg
    };
    let mut g = gpu(shared, AllocatorKind::Gscale);
    for _ in 0..4 {
        g.place(64, 128, 1, 0).unwrap();
    }
    assert_eq!(g.place(64, 128, 1, 0), Err(Error::NoSpace));
    assert_eq!(g.table.len(), 4);
}

#[test]
fn a_switch_in_loads_the_slots_of_the_vgpu_that_runs() {
    let mut g = i915(8);
    let a = g.place(128, 0, 1, 0).unwrap();
    let b = g.place(256, 0, 1, 0).unwrap();
    for id in [a, b] {
        g.attach(id).unwrap();
        g.sched.start(id, 0).unwrap();
    }
    g.sched.set_policy(Policy::Sfq, 0).unwrap();
    g.sched.queued(b, 0, 0).unwrap();
    assert_eq!(g.pick(MS), Ok(Some(b)));
    // b's 4 slots at 2, a slot per step; the static pool has no shared low
    // region.
    let (start, entries) = (2, 4 * ENTRIES_PER_SLOT);
    let load = |first| Event::LoadGtt {
        id: b,
        start,
        first,
        slots: 1,
    };
    assert_eq!(
        g.rec.take(),
        [
            Event::Switched(None, Some(b)),
            load(2),
            load(3),
            load(4),
            load(5),
            Event::GttLoaded {
                id: b,
                entries: u64::from(entries),
                reload: false
            },
        ]
    );
    // Its turn again: no switch, nothing loaded.
    assert_eq!(g.pick(2 * MS), Ok(Some(b)));
    assert_eq!(g.rec.take(), []);
    // Nothing queued any more: the idle vGPU.
    g.sched.cancelled(b, 0).unwrap();
    assert_eq!(g.pick(3 * MS), Ok(None));
    assert_eq!(g.rec.take(), [Event::Switched(Some(b), None)]);
}

#[test]
fn a_move_under_the_running_vgpu_is_reloaded_only_at_a_drained_point() {
    // dymgpu-size over 10 slots: 6 at 0, then 4 at 6; a third of 5 makes
    // the second move to 5 (the pool's own test of this layout).
    let cfg = GpuConfig {
        engines: 1,
        low_mb: u32::MAX,
        slots: 10,
        low_shared_entries: 0,
        relocate: true,
        max_vgpus: 4,
    };
    let mut g = gpu(cfg, AllocatorKind::DymSize);
    g.place(6 * 64, 0, 1, 0).unwrap();
    let run = g.place(4 * 64, 0, 1, 0).unwrap();
    g.attach(run).unwrap();
    g.sched.start(run, 0).unwrap();
    g.sched.queued(run, 0, 0).unwrap();
    assert_eq!(g.pick(MS), Ok(Some(run)));
    assert!(g.ensure_resident(run, false));
    g.rec.take();
    g.place(5 * 64, 0, 1, 0).unwrap();
    let moved = Move {
        id: run,
        from: 6,
        to: 5,
        slots: 4,
    };
    assert_eq!(
        g.rec.take(),
        [Event::Relocate(moved), Event::Relocated(moved)]
    );
    // Work in flight: the dispatch waits, nothing is loaded.
    assert!(!g.ensure_resident(run, false));
    assert_eq!(g.rec.take(), []);
    // Drained: the new range is loaded, and the vGPU is resident.
    assert!(g.ensure_resident(run, true));
    let events = g.rec.take();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::LoadGtt { id, start: 5, .. } if *id == run)));
    assert!(matches!(
        events.last(),
        Some(Event::GttLoaded { reload: true, .. })
    ));
    assert!(g.ensure_resident(run, false));
}

#[test]
fn samples_feed_vmcg_the_vm_cpu_time_and_the_pool_its_utilization() {
    let mut g = i915(8);
    let a = g.place(128, 0, 1, 0).unwrap();
    g.attach(a).unwrap();
    g.sched.start(a, 0).unwrap();
    *g.rec.cpu_ns.borrow_mut() = vec![Some(7 * MS)];
    g.sched.queued(a, 0, 0).unwrap();
    assert_eq!(g.pick(CPU_SAMPLE_NS), Ok(Some(a)));
    assert_eq!(g.sched.stats(a).map(|s| s.cpu_ns), Some(7 * MS));
    g.sched.dispatched(a, 0, 0, CPU_SAMPLE_NS).unwrap();
    let period = g.pool.tunables().sample_period_ns();
    g.sched
        .completed(a, 0, period / 2, CPU_SAMPLE_NS + period / 2)
        .unwrap();
    // The first sample, a period after the engine began (none before):
    // busy half a period of the time since then, in ppm.
    assert_eq!(g.pool.utilization(a), Some(0));
    let now = CPU_SAMPLE_NS + period;
    g.pick(now).unwrap();
    let ppm = u32::try_from(period / 2 * 1_000_000 / now).unwrap();
    assert_eq!(g.pool.utilization(a), Some(ppm));
    assert_eq!(g.rec.inconsistencies(), 0);
    // What the samples read: the two fields of the full statistics.
    let full = g.sched.stats(a).map(|s| (s.started, s.busy_ns));
    assert_eq!(g.sched.sample_view(a), full);
    assert_eq!(full, Some((true, period / 2)));
    assert_eq!(g.sched.sample_view(vid(3)), None);
}

#[test]
fn the_gpu_takes_at_most_its_max_vgpus() {
    // The simulated GPU: 54 slots, the low region shared, 64 vGPUs.
    let cfg = GpuConfig {
        engines: 2,
        low_mb: 896,
        slots: 54,
        low_shared_entries: 16_384,
        relocate: true,
        max_vgpus: 64,
    };
    let mut g: crate::testing::Gpu<64, 64> =
        crate::testing::Gpu::new(cfg, AllocatorKind::Gscale, Recorder::counting()).unwrap();
    for n in 0..64u8 {
        assert_eq!(g.available_mb(64, 16), u32::from(64 - n));
        assert_eq!(g.place(64, 16, 1, 0), Ok(vid(n)));
    }
    assert_eq!(g.available_mb(64, 16), 0);
    assert_eq!(g.place(64, 16, 1, 0), Err(Error::NoSpace));
    // A limit below the table's capacity: ids stay below it.
    let small = GpuConfig {
        max_vgpus: 3,
        ..cfg
    };
    let mut g: crate::testing::Gpu<64, 64> =
        crate::testing::Gpu::new(small, AllocatorKind::Gscale, Recorder::counting()).unwrap();
    assert_eq!(g.available_mb(64, 16), 3);
    for n in 0..3u8 {
        assert_eq!(g.place(64, 16, 1, 0), Ok(vid(n)));
    }
    assert_eq!(g.available_mb(64, 16), 0);
    assert_eq!(g.place(64, 16, 1, 0), Err(Error::NoSpace));
    assert_eq!(g.table.len(), 3);
    g.unplace(vid(1), 0).unwrap();
    assert_eq!(g.available_mb(64, 16), 1);
    assert_eq!(g.place(64, 16, 1, 0), Ok(vid(1)));
}

/// Three vGPUs sharing 4 slots (gscale, the low region shared), as the
/// simulated GPU's: every switch copies.
fn sharing() -> Gpu {
    let cfg = GpuConfig {
        engines: 1,
        low_mb: 896,
        slots: 4,
        low_shared_entries: 16_384,
        relocate: true,
        max_vgpus: 4,
    };
    let mut g = gpu(cfg, AllocatorKind::Gscale);
    for _ in 0..3 {
        let id = g.place(4 * 64, 16, 1, 0).unwrap();
        g.attach(id).unwrap();
        g.sched.start(id, 0).unwrap();
    }
    g.sched.set_policy(Policy::Sfq, 0).unwrap();
    g.rec.take();
    g
}

/// [`VgpuTable::decide`] on `g`'s state, which must decide.
fn decide(g: &mut Gpu, now: u64) -> Decision<4, 16> {
    g.table
        .decide(&mut g.sched, &mut g.pool, &g.rec, &g.rec, now)
        .unwrap()
}

#[test]
fn decide_leaves_the_switch_in_load_to_the_caller() {
    let (mut whole, mut split) = (sharing(), sharing());
    // Only one vGPU has work at each point: a switch every time.
    for (i, id) in [0u8, 1, 2, 0, 2, 1].into_iter().enumerate() {
        let now = (i as u64 + 1) * MS;
        for g in [&mut whole, &mut split] {
            if let Some(prev) = g.sched.current() {
                g.sched.cancelled(prev, 0).unwrap();
            }
            g.sched.queued(vid(id), 0, 0).unwrap();
        }
        assert_eq!(whole.pick(now), Ok(Some(vid(id))));
        let d = decide(&mut split, now);
        assert_eq!(d.vgpu(), Some(vid(id)));
        assert!(d.loads());
        // Decided: the switch is told, nothing is loaded yet, and the pool
        // already names the vGPU the owner of its whole range, but does not
        // hold its entries there until the load: a guest access meanwhile
        // goes to its private copy, and no other vGPU's switch-in or
        // placement takes the slots as free.
        let decided = split.rec.take();
        assert!(matches!(decided.first(), Some(Event::Switched(_, Some(n))) if *n == vid(id)));
        assert!(!decided.iter().any(|e| matches!(
            e,
            Event::LoadGtt { .. } | Event::LoadLowGtt(_) | Event::GttLoaded { .. }
        )));
        assert!(!split.pool.resident(vid(id)));
        let pl = split.pool.placement(vid(id)).unwrap();
        assert!((pl.start..pl.start + pl.slots).all(|s| split.pool.owner(s) == Some(vid(id))));
        // The load: the same calls, in the same order, as `pick`'s.
        assert_eq!(
            d.load(&mut split.pool, &split.rec, &split.rec),
            Some(vid(id))
        );
        assert!(split.pool.resident(vid(id)));
        let mut events = decided;
        events.extend(split.rec.take());
        let all = whole.rec.take();
        assert_eq!(events, all);
        assert!(all
            .iter()
            .any(|e| matches!(e, Event::LoadGtt { id: l, .. } if *l == vid(id))));
        assert!(all.contains(&Event::LoadLowGtt(vid(id))));
    }
    assert_eq!(whole.rec.gtt_entries(), split.rec.gtt_entries());
    assert_eq!(
        (whole.rec.inconsistencies(), split.rec.inconsistencies()),
        (0, 0)
    );
    // Its turn again, or the idle vGPU: nothing to load.
    let now = 10 * MS;
    let d = decide(&mut split, now);
    assert_eq!((d.vgpu(), d.loads()), (Some(vid(1)), false));
    assert_eq!(
        d.load(&mut split.pool, &split.rec, &split.rec),
        Some(vid(1))
    );
    split.sched.cancelled(vid(1), 0).unwrap();
    let d = decide(&mut split, 11 * MS);
    assert_eq!((d.vgpu(), d.loads()), (None, false));
    assert_eq!(split.rec.take(), [Event::Switched(Some(vid(1)), None)]);
}

/// A gscale GPU of 8 slots with a six-slot vGPU (0) and a one-slot vGPU
/// (1), both started; then a decision that switches 0 in.
fn six_slot_switch_in() -> (Gpu, Load<4, 16>) {
    let cfg = GpuConfig {
        engines: 1,
        low_mb: 896,
        slots: 8,
        low_shared_entries: 16_384,
        relocate: true,
        max_vgpus: 4,
    };
    let mut g = gpu(cfg, AllocatorKind::Gscale);
    for mb in [6 * 64, 64] {
        let id = g.place(mb, 16, 1, 0).unwrap();
        g.attach(id).unwrap();
        g.sched.start(id, 0).unwrap();
    }
    g.sched.set_policy(Policy::Sfq, 0).unwrap();
    g.sched.queued(vid(0), 0, 0).unwrap();
    g.rec.take();
    let d = decide(&mut g, MS);
    assert_eq!(d.vgpu(), Some(vid(0)));
    let load = d.into_load().unwrap();
    assert_eq!(load.vgpu(), vid(0));
    g.rec.take();
    (g, load)
}

/// The slots of `id`'s range whose entries the hardware holds.
fn held(g: &Gpu, id: VgpuId) -> vec::Vec<u16> {
    let pl = g.pool.placement(id).unwrap();
    (pl.start..pl.start + pl.slots)
        .filter(|&s| g.pool.holds(id, s))
        .collect()
}

#[test]
fn a_switch_in_loads_a_slot_per_step() {
    let (mut g, mut load) = six_slot_switch_in();
    let pl = g.pool.placement(vid(0)).unwrap();
    assert_eq!(pl.slots, 6);
    assert!(held(&g, vid(0)).is_empty());
    // Six steps of one slot each, in slot order; the hardware holds each
    // from its step on, and no other before: a guest's GTT access between
    // steps (`slot_of`, the kernel's `with_residency`) goes to the hardware
    // only there, elsewhere to the private copy, never to the entries of
    // the slots' previous tenant.
    let accesses = |g: &Gpu| -> vec::Vec<bool> {
        (0..6)
            .map(|r| g.pool.slot_of(vid(0), r).unwrap().1)
            .collect()
    };
    assert_eq!(accesses(&g), [false; 6]);
    assert_eq!(g.pool.slot_of(vid(0), 6), Err(Error::OutOfRange));
    assert_eq!(g.pool.slot_of(vid(3), 0), Err(Error::Invalid));
    for i in 0..6 {
        assert!(load.step(&mut g.pool, &g.rec, &g.rec));
        let first = pl.start + i;
        assert_eq!(
            g.rec.take(),
            [Event::LoadGtt {
                id: vid(0),
                start: pl.start,
                first,
                slots: 1
            }]
        );
        assert_eq!(
            held(&g, vid(0)),
            (pl.start..=first).collect::<vec::Vec<_>>()
        );
        let n = usize::from(i) + 1;
        assert_eq!(
            accesses(&g),
            [[true; 6], [false; 6]].concat()[6 - n..12 - n]
        );
        assert_eq!(g.pool.slot_of(vid(0), i).unwrap().0, first);
    }
    // The high-GM range is held; the shared low GM is still to load.
    assert!(g.pool.resident(vid(0)));
    // Then the shared low GM, the last step, which tells the observer.
    assert!(!load.step(&mut g.pool, &g.rec, &g.rec));
    assert_eq!(
        g.rec.take(),
        [
            Event::LoadLowGtt(vid(0)),
            Event::GttLoaded {
                id: vid(0),
                entries: 7 * u64::from(ENTRIES_PER_SLOT),
                reload: false
            }
        ]
    );
    assert!(g.pool.resident(vid(0)));
    // Done: a further step does nothing.
    assert!(!load.step(&mut g.pool, &g.rec, &g.rec));
    assert!(g.rec.take().is_empty());
    assert!(g.ensure_resident(vid(0), false));
    assert_eq!(g.rec.inconsistencies(), 0);
}

#[test]
fn a_reset_between_load_steps_leaves_the_rest_to_the_reload() {
    let (mut g, mut load) = six_slot_switch_in();
    for _ in 0..2 {
        assert!(load.step(&mut g.pool, &g.rec, &g.rec));
    }
    assert_eq!(held(&g, vid(0)).len(), 2);
    // Between two steps, the slot lock released: a GPU reset rewrote the
    // hardware GTT. The load's remaining steps find nothing of the vGPU's
    // pending and load nothing; the observer hears of the two slots loaded.
    g.pool.forget_residency();
    g.rec.take();
    assert!(!load.step(&mut g.pool, &g.rec, &g.rec));
    assert_eq!(
        g.rec.take(),
        [Event::GttLoaded {
            id: vid(0),
            entries: 2 * u64::from(ENTRIES_PER_SLOT),
            reload: false
        }]
    );
    // Nothing is held: before its dispatch, the vGPU's range is reloaded
    // whole (drained), a slot per step.
    assert!(held(&g, vid(0)).is_empty());
    assert!(!g.ensure_resident(vid(0), false));
    let Resident::Reload(mut reload) = check_resident(&mut g.pool, &g.rec, vid(0), true) else {
        panic!("a range nobody holds must be reloaded");
    };
    let mut steps = 0;
    while reload.step(&mut g.pool, &g.rec, &g.rec) {
        steps += 1;
    }
    assert_eq!(steps, 5);
    let loads: vec::Vec<_> = g
        .rec
        .take()
        .into_iter()
        .filter(|e| matches!(e, Event::LoadGtt { slots: 1, .. }))
        .collect();
    assert_eq!(loads.len(), 6);
    assert_eq!(held(&g, vid(0)).len(), 6);
    assert!(g.pool.resident(vid(0)));
}

#[test]
fn a_slot_taken_between_load_steps_is_not_loaded() {
    let (mut g, mut load) = six_slot_switch_in();
    assert!(load.step(&mut g.pool, &g.rec, &g.rec));
    g.rec.take();
    // Between steps, the vGPU is removed (its slots forgotten) and another
    // takes its id and slots: the load must not write the old tenant's
    // entries over the new one's, nor count them.
    g.sched.cancelled(vid(0), 0).unwrap();
    g.sched.stop(vid(0), MS).unwrap();
    g.detach(vid(0)).unwrap();
    g.unplace(vid(0), MS).unwrap();
    let again = g.place(6 * 64, 16, 1, MS).unwrap();
    assert_eq!(again, vid(0));
    g.rec.take();
    assert!(!load.step(&mut g.pool, &g.rec, &g.rec));
    let events = g.rec.take();
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::LoadGtt { .. } | Event::LoadLowGtt(_))));
    assert!(events.contains(&Event::GttLoaded {
        id: vid(0),
        entries: u64::from(ENTRIES_PER_SLOT),
        reload: false
    }));
    assert!(held(&g, vid(0)).is_empty());
}
