// SPDX-License-Identifier: GPL-2.0

//! Slot experiments for `gvt-slots`: paper reproductions, copies per policy
//! and allocator, the exact optimum for small cases and benchmarks.

pub mod bench;
pub mod optimal;
pub mod policy;
pub mod reloc;
pub mod report;
pub mod sim;
pub mod switchcost;
pub mod workload;

use gvt_core::slots::{
    layout,
    AllocatorKind,
    PoolConfig,
    ENTRIES_PER_SLOT, //
};
use gvt_core::testing::{
    vid,
    Rng, //
};
use policy::{
    PolicyKind,
    Pool, //
};
use report::{
    ratio,
    reduction,
    Table, //
};
use sim::{
    simulate,
    SimCfg, //
};
use workload::{
    mixed_set,
    same_workload,
    Class,
    VmSpec,
    TABLE2, //
};

/// One millisecond in ns, the unit of the pool's `now`.
const MS: u64 = 1_000_000;

/// The allocators compared against gScale.
pub const SHARING: [AllocatorKind; 4] = [
    AllocatorKind::Gscale,
    AllocatorKind::DymSize,
    AllocatorKind::DymUtil,
    AllocatorKind::Cost,
];

fn pool(slots: u16, kind: AllocatorKind) -> Pool {
    Pool::new(PoolConfig {
        slots,
        low_entries: ENTRIES_PER_SLOT,
        allocator: kind,
    })
    .expect("pool")
}

/// Algorithm 1's worked example and Fig. 4.
pub fn repro() -> Vec<Table> {
    let mut t1 = Table::new(
        "Algorithm 1 example: M = 5, S = (4, 4, 3, 2)",
        &["source", "P", "K", "shared slots"],
    );
    let specs: [layout::Spec; 4] = [
        (vid(0), 4, 0, 0, 0),
        (vid(1), 4, 1, 0, 0),
        (vid(2), 3, 2, 0, 0),
        (vid(3), 2, 3, 0, 0),
    ];
    let mut out = [0u16; 4];
    let k = layout::algorithm1::<4>(&specs, 5, &mut out);
    let mut p = pool(5, AllocatorKind::DymSize);
    for (i, s) in [4u16, 4, 3, 2].iter().enumerate() {
        p.create(vid(i), *s, 0).expect("create");
    }
    t1.row(vec![
        "paper".into(),
        "(0, 1, 1, 1)".into(),
        "1".into(),
        "3 (1-3)".into(),
    ]);
    t1.row(vec![
        "layout::algorithm1".into(),
        format!("{out:?}"),
        format!("{}", k.map(|_| 1).unwrap_or(0)),
        "-".into(),
    ]);
    let starts: Vec<u16> = (0..4)
        .map(|i| p.placement(vid(i)).expect("placed").start)
        .collect();
    t1.row(vec![
        "pool, created one by one".into(),
        format!("{starts:?}"),
        "1".into(),
        format!("{}", p.shared_slots()),
    ]);

    let mut t2 = Table::new(
        "Fig. 4: 12 slots, four vGPUs of 6 slots, round robin, slot copies after n rounds",
        &[
            "n",
            "gscale",
            "paper 24+24(n-1)",
            "dymgpu-size",
            "paper 24+18(n-1)",
            "cost",
            "gscale yes/no score",
        ],
    );
    for n in 1..=6u64 {
        let mut row = vec![n.to_string()];
        for (k, formula) in [
            (AllocatorKind::Gscale, 24 + 24 * (n - 1)),
            (AllocatorKind::DymSize, 24 + 18 * (n - 1)),
            (AllocatorKind::Cost, 0),
        ] {
            let mut p = pool(12, k);
            for i in 0..4 {
                p.create(vid(i), 6, 0).expect("create");
            }
            for r in 0..n {
                for i in 0..4u8 {
                    p.switch_in(vid(i), (r * 64 + u64::from(i) * 16) * MS)
                        .expect("switch");
                }
            }
            row.push(p.totals().slot_copies().to_string());
            if formula != 0 {
                row.push(formula.to_string());
            }
        }
        // Yes/no scoring puts vGPU4 at 0 with vGPU1 and vGPU3 (18/round).
        let occ = [2u8, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1];
        let yn = layout::gscale(&occ, 6, 12, false).expect("fits");
        row.push(if yn == 0 {
            (24 + 18 * (n - 1)).to_string()
        } else {
            "?".into()
        });
        t2.rows.push(row);
    }
    vec![t1, t2]
}

/// Steady state with every VM always runnable, round robin in creation
/// order (one switch-in per VM per round, 16 ms apart): slot copies in one
/// round after a minute of warm-up (so re-placing allocators have re-placed).
pub fn ideal_round(vms: &[VmSpec], kind: AllocatorKind) -> Option<u64> {
    let mut p = pool(54, kind);
    for (i, v) in vms.iter().enumerate() {
        p.create(vid(i), v.slots, 0).ok()?;
    }
    let n = vms.len() as u8;
    let mut now = 0u64;
    p.tick(0);
    let round = |p: &mut Pool, now: &mut u64| {
        let before = p.totals().slot_copies();
        for i in 0..n {
            *now += 16;
            p.switch_in(vid(i), *now * MS).expect("switch");
            if *now % 1000 < 16 {
                for j in 0..n {
                    p.sample(vid(j), 1_000_000 / u32::from(n), *now * MS)
                        .expect("sample");
                }
                p.tick(*now * MS);
            }
        }
        p.totals().slot_copies() - before
    };
    while now < 61_000 {
        round(&mut p, &mut now);
    }
    Some(round(&mut p, &mut now))
}

/// Table: 3..15 VMs, 1:1:1 sizes, ideal round robin.
pub fn mix_ideal() -> Table {
    let mut t = Table::new(
        "Steady-state high-GM slot copies per round, 54 slots, 384/704/1024 MB 1:1:1, every VM always runnable, round robin",
        &["VMs", "slots", "static", "gscale", "dymgpu-size", "dymgpu-util", "cost", "size vs gscale", "cost vs gscale"],
    );
    for n in (3..=15).step_by(3) {
        let vms = same_workload(n, Class::High);
        let demand: u16 = vms.iter().map(|v| v.slots).sum();
        let mut row = vec![n.to_string(), demand.to_string()];
        let st = ideal_round(&vms, AllocatorKind::Static);
        row.push(
            st.map(|x| x.to_string())
                .unwrap_or_else(|| "refused".into()),
        );
        let mut vals = Vec::new();
        for k in SHARING {
            let v = ideal_round(&vms, k).expect("sharing allocators place all");
            vals.push(v);
            row.push(v.to_string());
        }
        row.push(reduction(vals[1] as f64, vals[0] as f64));
        row.push(reduction(vals[3] as f64, vals[0] as f64));
        t.row(row);
    }
    t
}

/// Mean slot copies (switch-in plus re-placement) over seeds.
fn mean_copies(
    vms_of: &dyn Fn(u64) -> Vec<VmSpec>,
    p: PolicyKind,
    k: AllocatorKind,
    cfg: &SimCfg,
    seeds: u64,
) -> f64 {
    let mut sum = 0u64;
    for s in 1..=seeds {
        let c = SimCfg {
            seed: cfg.seed.wrapping_add(s),
            ..*cfg
        };
        sum += simulate(&vms_of(s), p, k, &c).slot_copies();
    }
    sum as f64 / seeds as f64
}

/// Mean lower bound for any static placement, and mean copies of the
/// `cost` search run offline on the whole trace (a static placement chosen
/// knowing the future), over seeds. The trace of a gscale run is used (the
/// same for every allocator except under the slot-aware order).
fn mean_bound(
    vms_of: &dyn Fn(u64) -> Vec<VmSpec>,
    p: PolicyKind,
    cfg: &SimCfg,
    seeds: u64,
) -> (f64, f64) {
    let (mut lb, mut off) = (0u64, 0u64);
    for s in 1..=seeds {
        let c = SimCfg {
            seed: cfg.seed.wrapping_add(s),
            ..*cfg
        };
        let vms = vms_of(s);
        let r = simulate(&vms, p, AllocatorKind::Gscale, &c);
        let sizes: Vec<u16> = vms.iter().map(|v| v.slots).collect();
        lb += optimal::lower_bound(&sizes, c.slots, &r.trace);
        let specs: Vec<layout::Spec> = sizes
            .iter()
            .enumerate()
            .map(|(i, &z)| (vid(i), z, i as u32, 0, 16))
            .collect();
        let mut starts = vec![0u16; sizes.len()];
        layout::cost_layout::<16, 64, 8192>(&specs, c.slots, &r.trace, &mut starts);
        off += optimal::placement_cost_direct(&sizes, &starts, c.slots, &r.trace);
    }
    (lb as f64 / seeds as f64, off as f64 / seeds as f64)
}

/// Fig. 10a: 3..15 VMs all running the high-utilization workload.
pub fn mix_sim(policies: &[PolicyKind], cfg: &SimCfg, seeds: u64) -> Vec<Table> {
    mix_sim_class(policies, cfg, seeds, Class::High)
}

/// Fig. 10a (high class, 3D nexuiz) or Fig. 10b (low class, the 2D midori
/// that "submits few GPU commands"): 3..15 VMs all of `class`.
pub fn mix_sim_class(
    policies: &[PolicyKind],
    cfg: &SimCfg,
    seeds: u64,
    class: Class,
) -> Vec<Table> {
    let mut out = Vec::new();
    for &p in policies {
        let mut t = Table::new(
            &format!(
                "Same workload ({} class), 3-15 VMs, 1:1:1 sizes, policy {}, {} s x {} seeds: slot copies normalized to gscale ({})",
                match class {
                    Class::Low => "low",
                    Class::Medium => "medium",
                    Class::High => "high",
                },
                p.name(),
                cfg.secs,
                seeds,
                if class == Class::High {
                    "paper Fig. 10a: size-based up to 35 %, util-based up to 30 % fewer"
                } else {
                    "paper Fig. 10b, 2D: \"similar\" to Fig. 10a"
                }
            ),
            &["VMs", "gscale copies", "dymgpu-size", "dymgpu-util", "cost", "size fewer", "util fewer", "cost fewer"],
        );
        for n in (3..=15).step_by(3) {
            let vals: Vec<f64> = SHARING
                .iter()
                .map(|&k| mean_copies(&|_| same_workload(n, class), p, k, cfg, seeds))
                .collect();
            let g = vals[0];
            t.row(vec![
                n.to_string(),
                format!("{g:.0}"),
                ratio(vals[1], g),
                ratio(vals[2], g),
                ratio(vals[3], g),
                reduction(vals[1], g),
                reduction(vals[2], g),
                reduction(vals[3], g),
            ]);
        }
        out.push(t);
    }
    out
}

/// Fig. 10c: the five mixed-utilization sets, every policy x allocator.
pub fn sets(policies: &[PolicyKind], cfg: &SimCfg, seeds: u64) -> Vec<Table> {
    let mut out = Vec::new();
    let mut summary = Table::new(
        &format!(
            "Mixed sets, {} s x {} seeds: copy reduction against gscale per policy (cost allocator; goal >= 50 %)",
            cfg.secs, seeds
        ),
        &["policy", "set 1", "set 2", "set 3", "set 4", "set 5", "mean"],
    );
    for &p in policies {
        let mut t = Table::new(
            &format!(
                "Mixed 15-VM sets (Table 2), policy {}, {} s x {} seeds: slot copies (switch-in + re-placement), normalized to gscale",
                p.name(),
                cfg.secs,
                seeds
            ),
            &[
                "set", "L:M:H", "gscale", "dymgpu-size", "dymgpu-util", "cost", "util vs size", "cost fewer",
                "offline", "bound",
            ],
        );
        let mut srow = vec![p.name().to_string()];
        let mut acc = 0.0;
        for (set, &(l, m, h)) in TABLE2.iter().enumerate() {
            let vals: Vec<f64> = SHARING
                .iter()
                .map(|&k| mean_copies(&|s| mixed_set(set + 1, s), p, k, cfg, seeds))
                .collect();
            let g = vals[0];
            let (lb, off) = mean_bound(&|s| mixed_set(set + 1, s), p, cfg, seeds);
            t.row(vec![
                (set + 1).to_string(),
                format!("{l}:{m}:{h}"),
                format!("{g:.0}"),
                ratio(vals[1], g),
                ratio(vals[2], g),
                ratio(vals[3], g),
                reduction(vals[2], vals[1]),
                reduction(vals[3], g),
                reduction(off, g),
                reduction(lb, g),
            ]);
            srow.push(reduction(vals[3], g));
            acc += 1.0 - vals[3] / g;
        }
        srow.push(format!("{:.0}%", 100.0 * acc / 5.0));
        summary.row(srow);
        out.push(t);
    }
    out.push(summary);
    out
}

/// Small cases: each allocator's copies against the exact static optimum
/// for the same switch trace.
pub fn optimal_small(policy: PolicyKind, secs: u64, cases: u64) -> Table {
    let mut t = Table::new(
        &format!(
            "Small cases, policy {policy}, {secs} s: high-GM slot copies (incl. re-placement) against the exact minimum for a static placement",
            policy = policy.name()
        ),
        &["case", "M", "sizes", "classes", "optimum", "gscale", "dymgpu-size", "dymgpu-util", "cost", "nodes"],
    );
    let mut rng = Rng::new(4242);
    let mut list: Vec<(u16, Vec<VmSpec>)> = vec![(
        12,
        vec![
            VmSpec {
                class: Class::High,
                slots: 6
            };
            4
        ],
    )];
    for _ in 0..cases {
        let m = 10 + rng.below(7) as u16;
        let n = 4 + rng.below(3) as usize;
        let vms: Vec<VmSpec> = (0..n)
            .map(|_| VmSpec {
                class: [Class::Low, Class::Medium, Class::High][rng.below(3) as usize],
                slots: 2 + rng.below(u64::from(m / 2 - 1)) as u16,
            })
            .collect();
        list.push((m, vms));
    }
    for (ci, (m, vms)) in list.iter().enumerate() {
        let cfg = SimCfg {
            secs,
            slots: *m,
            seed: 7 + ci as u64,
            ..SimCfg::default()
        };
        let sizes: Vec<u16> = vms.iter().map(|v| v.slots).collect();
        let runs: Vec<_> = SHARING
            .iter()
            .map(|&k| simulate(vms, policy, k, &cfg))
            .collect();
        // Policies other than slot-aware give every allocator the same trace.
        let trace = &runs[0].trace;
        let costs = optimal::subset_costs(sizes.len(), trace);
        let seed = optimal::placement_cost(&sizes, &runs[1].starts, *m, &costs);
        let opt = optimal::optimal(&sizes, *m, trace, Some((seed, runs[1].starts.clone())));
        let mut row = vec![
            if ci == 0 {
                "Fig. 4".to_string()
            } else {
                ci.to_string()
            },
            m.to_string(),
            format!("{sizes:?}"),
            vms.iter().map(|v| v.class.tag()).collect(),
            format!("{} {:?}", opt.copies, opt.starts),
        ];
        for r in &runs {
            let c = r.slot_copies();
            row.push(format!(
                "{c} (+{:.0}%)",
                100.0 * (c as f64 / opt.copies.max(1) as f64 - 1.0)
            ));
        }
        row.push(opt.nodes.to_string());
        t.row(row);
    }
    t
}

/// One run in detail: every allocator's counters and final layout.
pub fn detail(vms: &[VmSpec], policy: PolicyKind, cfg: &SimCfg) -> Table {
    let mut t = Table::new(
        &format!(
            "Detail: {} VMs ({}), sizes {:?}, policy {}, {} s, seed {}",
            vms.len(),
            vms.iter().map(|v| v.class.tag()).collect::<String>(),
            vms.iter().map(|v| v.slots).collect::<Vec<_>>(),
            policy.name(),
            cfg.secs,
            cfg.seed
        ),
        &[
            "allocator",
            "switches",
            "high slots",
            "moves",
            "move slots",
            "low copies",
            "entries",
            "final starts",
        ],
    );
    for k in SHARING {
        let r = simulate(vms, policy, k, cfg);
        t.row(vec![
            k.name().into(),
            r.switches.to_string(),
            r.totals.high_slots.to_string(),
            r.totals.moves.to_string(),
            r.totals.move_slots.to_string(),
            r.totals.low_copies.to_string(),
            r.totals.entries().to_string(),
            format!("{:?}", r.starts),
        ]);
    }
    t
}
