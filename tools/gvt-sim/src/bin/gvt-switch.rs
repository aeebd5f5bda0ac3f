// SPDX-License-Identifier: GPL-2.0

//! gvt-switch: the host cost of the engine's work at a switch point with
//! 64 vGPUs of one type on the simulated GPU's slot pool (54 slots of
//! 64 MB, the shared low GM, `gscale`), every decision a switch:
//!
//! * `decide`: `VgpuTable::decide` (the samples, the scheduler's choice,
//!   the pool's switch-in), which the kernel engine makes under both of
//!   its locks;
//! * `switch_in`: the decision's whole GTT load (`Load::step` until done),
//!   with a provider that copies GTT entries as the simulated GPU does
//!   (16384 entries of 8 bytes a slot, and the shared low GM's);
//! * `load_step`: each of its steps (one slot, or the shared low GM), which
//!   the kernel engine makes under the slot lock alone, released between
//!   steps.
//!
//! `decide` and `load_step` are the work inside the two locks' holds at a
//! switch, natively:
//! the test VM (TCG) shows the same holds many times longer
//! (`GVT_RS_BENCH=locks make bench`, debugfs `pick_holds`). Each part is
//! timed with `Instant` per call; printed are percentiles over all calls
//! and the longest, which on a busy host includes preemption.
//!
//! Usage: `gvt-switch [DECISIONS]` (default 100000 per vGPU type).

use gvt_core::engine::{
    GpuConfig,
    Observer,
    Provider,
    VgpuTable, //
};
use gvt_core::sched::{
    Policy,
    Scheduler,
    Tunable, //
};
use gvt_core::slots::{
    AllocatorKind,
    PoolConfig,
    SlotPool, //
};
use gvt_core::VgpuId;
use std::cell::{
    Cell,
    RefCell, //
};
use std::time::Instant;

const MS: u64 = 1_000_000;
/// The simulated GPU's GTT entries per 64 MB slot.
const ENTRIES: usize = 16384;
/// Its high-GM slots and vGPU limit (`drivers/gvt-rs/sim/mod.rs`).
const SLOTS: u16 = 54;
const V: usize = 64;
const S: usize = 64;

/// A provider that keeps every vGPU's private GTT and copies it into the
/// hardware GTT as the simulated GPU's provider does.
struct CopyingGtt {
    phys: RefCell<Vec<u64>>,
    phys_low: RefCell<Vec<u64>>,
    private: Vec<Vec<u64>>,
    private_low: Vec<Vec<u64>>,
}

impl Provider for CopyingGtt {
    fn load_gtt(&self, vgpu: VgpuId, vgpu_start: u16, first_slot: u16, slots: u16) {
        let src = &self.private[usize::from(vgpu)];
        let rel = usize::from(first_slot - vgpu_start) * ENTRIES;
        let n = usize::from(slots) * ENTRIES;
        let at = usize::from(first_slot) * ENTRIES;
        self.phys.borrow_mut()[at..at + n].copy_from_slice(&src[rel..rel + n]);
    }

    fn load_low_gtt(&self, vgpu: VgpuId) {
        self.phys_low
            .borrow_mut()
            .copy_from_slice(&self.private_low[usize::from(vgpu)]);
    }

    fn vm_cpu_ns(&self, vgpu: VgpuId) -> Option<u64> {
        Some(u64::from(vgpu) * MS)
    }
}

/// Counts the GTT entries loaded at switch-ins.
#[derive(Default)]
struct Loaded(Cell<u64>);

impl Observer for Loaded {
    fn gtt_loaded(&self, _id: VgpuId, _high_slots: u16, entries: u64, _reload: bool) {
        self.0.set(self.0.get() + entries);
    }
}

/// p50, p99, p99.9 and the longest of `ns`, in µs.
fn summary(ns: &mut [u64]) -> String {
    ns.sort_unstable();
    let q = |p: f64| ns[((ns.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    format!(
        "{:>8.2} {:>8.2} {:>8.2} {:>8.2}",
        q(0.5),
        q(0.99),
        q(0.999),
        ns[ns.len() - 1] as f64 / 1000.0
    )
}

/// 64 vGPUs of `high_mb`/`low_mb`, always backlogged; `decisions` switch
/// points. Returns the summaries of the three parts and the GTT entries
/// loaded per switch-in (high GM and the shared low GM's).
fn run(high_mb: u32, low_mb: u32, decisions: usize) -> ([String; 3], u64) {
    let cfg = GpuConfig {
        engines: 2,
        low_mb: 896,
        slots: SLOTS,
        low_shared_entries: ENTRIES as u32,
        relocate: true,
        max_vgpus: V,
    };
    let mut pool: Box<SlotPool<V, S>> = Box::new(
        SlotPool::new(PoolConfig {
            slots: SLOTS,
            low_entries: ENTRIES as u32,
            allocator: AllocatorKind::Gscale,
        })
        .unwrap(),
    );
    pool.set_relocation(true);
    let mut sched: Box<Scheduler<V>> = Box::default();
    sched.set_policy(Policy::Sfq, 0).unwrap();
    // Every turn ends at the next decision: each decision switches.
    sched.set_tunable(Tunable::SfqSliceUs, 100, 0).unwrap();
    let mut table: Box<VgpuTable<V>> = Box::default();
    let entries = (high_mb as usize / 64) * ENTRIES;
    let p = CopyingGtt {
        phys: RefCell::new(vec![0; usize::from(SLOTS) * ENTRIES]),
        phys_low: RefCell::new(vec![0; ENTRIES]),
        private: (0..V).map(|i| vec![i as u64; entries]).collect(),
        private_low: (0..V).map(|i| vec![i as u64; ENTRIES]).collect(),
    };
    let o = Loaded::default();
    let mut now = MS;
    for i in 0..V {
        let w = 1 + (i as u32 % 4);
        let id = table
            .place(&cfg, &mut pool, &p, &o, (high_mb, low_mb, w), now)
            .unwrap();
        table.attach(&mut sched, id).unwrap();
        sched.start(id, now).unwrap();
        sched.queued(id, 0, now).unwrap();
        sched.queued(id, 0, now).unwrap();
    }
    let (mut decide, mut load, mut steps) = (Vec::new(), Vec::new(), Vec::new());
    let mut running: Option<VgpuId> = None;
    for _ in 0..decisions {
        now += 2 * MS;
        if let Some(id) = running.take() {
            sched.completed(id, 0, 2 * MS, now).unwrap();
            sched.queued(id, 0, now).unwrap();
        }
        let t = Instant::now();
        let d = table.decide(&mut sched, &mut pool, &p, &o, now).unwrap();
        decide.push(t.elapsed().as_nanos() as u64);
        if let Some(mut l) = d.into_load() {
            let whole = Instant::now();
            loop {
                let t = Instant::now();
                let more = l.step(&mut pool, &p, &o);
                steps.push(t.elapsed().as_nanos() as u64);
                if !more {
                    break;
                }
            }
            load.push(whole.elapsed().as_nanos() as u64);
        }
        if let Some(id) = sched.next_vgpu(0, now) {
            sched.dispatched(id, 0, now, now).unwrap();
            running = Some(id);
        }
    }
    let per = o.0.get() / (load.len() as u64).max(1);
    (
        [
            summary(&mut decide),
            summary(&mut load),
            summary(&mut steps),
        ],
        per,
    )
}

fn main() {
    let decisions: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    println!(
        "# gvt-switch: a switch point's parts at {V} vGPUs, gscale on {SLOTS} slots, sfq, \
         {decisions} decisions each; us per call"
    );
    println!(
        "{:<11} {:<9} {:>8} {:>8} {:>8} {:>8}",
        "type", "part", "p50", "p99", "p99.9", "max"
    );
    // The simulated GPU's GVTg_V5_64 (one slot) and GVTg_V5_8 (six).
    for (name, high, low) in [("GVTg_V5_64", 64, 16), ("GVTg_V5_8", 384, 64)] {
        let ([d, l, step], entries) = run(high, low, decisions);
        println!("{name:<11} {:<9} {d}", "decide");
        println!(
            "{name:<11} {:<9} {l}  ({entries} entries a switch-in)",
            "switch_in"
        );
        println!("{name:<11} {:<9} {step}", "load_step");
    }
}
