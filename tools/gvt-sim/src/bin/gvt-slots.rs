// SPDX-License-Identifier: GPL-2.0

//! `gvt-slots`: graphics-memory slot experiments over the gvt-rs core.
//!
//! ```text
//! gvt-slots [--csv] [--secs S] [--seeds K] [--policy P[,P...]] COMMAND
//!   repro     Algorithm 1 example and Fig. 4
//!   mix       3-15 VMs, 1:1:1 sizes: ideal round robin and simulated (Fig. 10a)
//!   sets      the five mixed 15-VM sets, policy x allocator (Fig. 10c)
//!   optimal   small cases against the exact minimum-copy placement
//!   switch    switch time charged at the measured copy cost (DymGPU
//!             Figs. 3, 8, 9, 11, 12, 13 and a cost sweep)
//!   reloc     DymGPU with relocation off (i915) vs on
//!   bench     placement / switch-in / re-placement cost vs N and M
//!   copybench the simulated GPU's GTT copy, ps per entry
//!   detail    one run per allocator in detail (--cases 1-5: mixed set,
//!             6-15: that many high-class VMs)
//!   all       everything above
//! ```
//! Policies: rr, slot-aware, tbs, sfq, vmcg (default: all for `sets`, rr
//! for `mix` and `optimal`).

#[path = "../slots/mod.rs"]
mod slots;

use slots::policy::PolicyKind;
use slots::report::Table;
use slots::sim::SimCfg;

struct Opts {
    csv: bool,
    secs: u64,
    seeds: u64,
    policies: Option<Vec<PolicyKind>>,
    cases: u64,
}

fn usage() -> ! {
    eprintln!(
        "usage: gvt-slots [--csv] [--secs S] [--seeds K] [--cases N] [--policy P[,P...]] \
         repro|mix|sets|optimal|switch|reloc|detail|bench|copybench|all\n\
         policies: rr, slot-aware, tbs, sfq, vmcg"
    );
    std::process::exit(2);
}

fn emit(o: &Opts, tables: &[Table]) {
    for t in tables {
        if o.csv {
            println!("{}", t.csv());
        } else {
            println!("{}", t.text());
        }
    }
}

fn main() {
    let mut o = Opts {
        csv: false,
        secs: 120,
        seeds: 3,
        policies: None,
        cases: 8,
    };
    let mut cmd = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let num = |args: &mut dyn Iterator<Item = String>| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|&v| v > 0)
                .unwrap_or_else(|| usage())
        };
        match a.as_str() {
            "--csv" => o.csv = true,
            "--secs" => o.secs = num(&mut args),
            "--seeds" => o.seeds = num(&mut args),
            "--cases" => o.cases = num(&mut args),
            "--policy" => {
                let v = args.next().unwrap_or_else(|| usage());
                let ps: Option<Vec<_>> = v.split(',').map(PolicyKind::from_name).collect();
                o.policies = Some(ps.unwrap_or_else(|| usage()));
            }
            "-h" | "--help" => usage(),
            c if cmd.is_none() && !c.starts_with('-') => cmd = Some(c.to_string()),
            _ => usage(),
        }
    }
    let cfg = SimCfg {
        secs: o.secs,
        ..SimCfg::default()
    };
    let pol = |default: &[PolicyKind]| o.policies.clone().unwrap_or_else(|| default.to_vec());
    let cmd = cmd.unwrap_or_else(|| usage());
    let run = |c: &str| match c {
        "repro" => emit(&o, &slots::repro()),
        "mix" => {
            emit(&o, &[slots::mix_ideal()]);
            emit(&o, &slots::mix_sim(&pol(&[PolicyKind::Rr]), &cfg, o.seeds));
            emit(
                &o,
                &slots::mix_sim_class(
                    &pol(&[PolicyKind::Rr]),
                    &cfg,
                    o.seeds,
                    slots::workload::Class::Low,
                ),
            );
        }
        "reloc" => emit(&o, &slots::reloc::reloc(&cfg, o.seeds)),
        "switch" => {
            use slots::switchcost as sc;
            emit(&o, &[sc::fig3(o.secs, o.seeds)]);
            emit(&o, &[sc::fig11_12(16, o.secs, o.seeds)]);
            emit(&o, &[sc::fig11_12(32, o.secs, o.seeds)]);
            emit(&o, &sc::perf(o.secs, o.seeds));
            emit(&o, &[sc::sweep(o.secs, o.seeds)]);
            emit(&o, &[sc::fig13(o.secs.min(60), o.seeds)]);
        }
        "sets" => emit(&o, &slots::sets(&pol(&PolicyKind::ALL), &cfg, o.seeds)),
        "optimal" => {
            for p in pol(&[PolicyKind::Rr]) {
                emit(&o, &[slots::optimal_small(p, o.secs, o.cases)]);
            }
        }
        "bench" => emit(&o, &[slots::bench::bench()]),
        "copybench" => emit(&o, &[slots::bench::copy_bench()]),
        "detail" => {
            let n = o.cases as usize;
            for p in pol(&[PolicyKind::Rr]) {
                let vms = if n <= 5 {
                    slots::workload::mixed_set(n, 1)
                } else {
                    slots::workload::same_workload(n, slots::workload::Class::High)
                };
                emit(&o, &[slots::detail(&vms, p, &cfg)]);
            }
        }
        _ => usage(),
    };
    if cmd == "all" {
        for c in [
            "repro", "mix", "sets", "optimal", "switch", "reloc", "bench",
        ] {
            run(c);
        }
    } else {
        run(&cmd);
    }
}
