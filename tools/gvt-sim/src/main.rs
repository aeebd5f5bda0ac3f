// SPDX-License-Identifier: GPL-2.0

//! gvt-sim: discrete-event simulator of GVT-g vGPU scheduling over the gvt-rs core.

mod sched;

use gvt_core::sched::{
    Policy,
    Tunable, //
};
use sched::engine::{
    run,
    Config,
    MS,
    US, //
};
use sched::{
    drm,
    drmtune,
    plot,
    report,
    scenarios, //
};
use std::process::ExitCode;

const USAGE: &str = "usage: gvt-sim COMMAND [options]

commands:
  list                      scenarios
  run SCENARIO              one run: per-VM table (--csv, --svg for share over time)
  compare SCENARIO          every policy side by side
  fig4                      FairGV Fig. 4 trace through the core
  vmcg                      VMCG worked example, teapot lambda, Table 2 lambdas
  issue187                  gvt-linux #187 idle-neighbour loss, every policy
  fig11                     FairGV Fig. 11 sweep, every policy
  mixes                     FairGV-style weighted mixes, every policy
  interactive               a light frame vGPU beside 1/3/7/15 saturating ones, every policy
  fairgv                    FairGV Figs. 8/9 shape: min-max and aggregated overhead, coscheduling
  anticipate                eevdf's anticipation (anticipate_us) over every other scenario: its cost
  drmfair                   the DRM scheduler's KUnit scenarios: its fair policy (modelled) vs gvt-rs policies
                            (--switch-cost-us N: one more switch cost for the ping-pong chain;
                            --set: every gvt-rs policy with these tunables)
  drmtune                   drmfair's many-clients waits under sfq and eevdf per tunable setting, and their cost
  all --out DIR             everything above, written to DIR (txt, csv, svg)

options:
  --policy tbs|vmcg|sfq|eevdf  (run) policy, default sfq
  --throttle                (run) enable the usage throttle
  --set NAME=VALUE          core tunable by sysfs name (repeatable), e.g. sfq_slice_us=6000
  --duration-ms N           simulated time (default 10000)
  --warmup-ms N             start of the measurement window (default per scenario)
  --sample-ms N             share-over-time sample interval (default 100)
  --switch-cost-us N        vGPU context-switch cost (default 0)
  --engines N               engines (default 1)
  --bg-us N                 fig11 background kernel size (default 1605)
  --seed N                  jitter seed (default 1)
  --csv FILE  --svg FILE    (run) share-over-time outputs
";

#[derive(Debug)]
struct Opts {
    cmd: String,
    arg: Option<String>,
    policy: Policy,
    throttle: bool,
    sets: Vec<String>,
    duration_ms: Option<u64>,
    warmup_ms: Option<u64>,
    sample_ms: Option<u64>,
    switch_cost_us: u64,
    engines: usize,
    bg_us: u64,
    seed: u64,
    csv: Option<String>,
    svg: Option<String>,
    out: Option<String>,
}

/// Parses the command line (without the program name).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Opts, String> {
    let mut a = args.into_iter();
    let cmd = a.next().ok_or("missing command")?;
    let mut o = Opts {
        cmd,
        arg: None,
        policy: Policy::Sfq,
        throttle: false,
        sets: Vec::new(),
        duration_ms: None,
        warmup_ms: None,
        sample_ms: None,
        switch_cost_us: 0,
        engines: 1,
        bg_us: 1605,
        seed: 1,
        csv: None,
        svg: None,
        out: None,
    };
    while let Some(x) = a.next() {
        let mut val = |name: &str| a.next().ok_or(format!("{name} needs a value"));
        let num = |s: String| s.parse::<u64>().map_err(|e| format!("{s}: {e}"));
        match x.as_str() {
            "--policy" => {
                let p = val("--policy")?;
                o.policy = Policy::from_name(&p).ok_or(format!("unknown policy {p}"))?;
            }
            "--throttle" => o.throttle = true,
            "--set" => o.sets.push(val("--set")?),
            "--duration-ms" => o.duration_ms = Some(num(val(&x)?)?),
            "--warmup-ms" => o.warmup_ms = Some(num(val(&x)?)?),
            "--sample-ms" => o.sample_ms = Some(num(val(&x)?)?),
            "--switch-cost-us" => o.switch_cost_us = num(val(&x)?)?,
            "--engines" => o.engines = num(val(&x)?)? as usize,
            "--bg-us" => o.bg_us = num(val(&x)?)?,
            "--seed" => o.seed = num(val(&x)?)?,
            "--csv" => o.csv = Some(val(&x)?),
            "--svg" => o.svg = Some(val(&x)?),
            "--out" => o.out = Some(val(&x)?),
            "-h" | "--help" => return Err(String::new()),
            s if !s.starts_with("--") && o.arg.is_none() => o.arg = Some(s.to_string()),
            s => return Err(format!("unknown option {s}")),
        }
    }
    Ok(o)
}

fn config(o: &Opts, base: &Config) -> Result<Config, String> {
    let mut c = base.clone();
    c.policy = o.policy;
    c.throttle = o.throttle;
    for s in &o.sets {
        c.tunables.push(report::parse_set(s)?);
    }
    if let Some(d) = o.duration_ms {
        c.duration_ns = d * MS;
    }
    if let Some(w) = o.warmup_ms {
        c.warmup_ns = w * MS;
    }
    if let Some(s) = o.sample_ms {
        c.sample_ns = s.max(1) * MS;
    }
    if c.warmup_ns >= c.duration_ns {
        return Err("warm-up must end before the run does".into());
    }
    c.switch_cost_ns = o.switch_cost_us * US;
    c.engines = o.engines.max(1);
    c.seed = o.seed;
    Ok(c)
}

/// The core tunables of `--set`, for the commands that build their own
/// configurations (`drmfair`).
fn sets(o: &Opts) -> Result<Vec<(Tunable, u64)>, String> {
    o.sets.iter().map(|s| report::parse_set(s)).collect()
}

fn write(path: &str, data: &str) -> Result<(), String> {
    std::fs::write(path, data).map_err(|e| format!("{path}: {e}"))
}

fn main() -> ExitCode {
    let o = match parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("gvt-sim: {e}");
            }
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match real_main(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gvt-sim: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main(o: &Opts) -> Result<(), String> {
    let scen = |name: &str| {
        scenarios::get(name, o.bg_us).ok_or(format!("unknown scenario {name} (see gvt-sim list)"))
    };
    match o.cmd.as_str() {
        "list" => {
            for n in scenarios::NAMES {
                let s = scen(n)?;
                println!("{:<18} {}", n, s.about);
            }
        }
        "run" => {
            let name = o.arg.as_deref().ok_or("run needs a scenario")?;
            let s = scen(name)?;
            let cfg = config(o, &s.cfg)?;
            let r = run(&s.vms, &cfg);
            println!(
                "# {} ({}), policy {}{}",
                s.name,
                s.about,
                cfg.policy.name(),
                if cfg.throttle { "+throttle" } else { "" }
            );
            print!("{}", report::run_table(&r));
            if let Some(p) = &o.csv {
                write(p, &plot::csv(&r))?;
            }
            if let Some(p) = &o.svg {
                let title = format!("{}: {}", s.name, cfg.policy.name());
                write(p, &plot::svg(&r, &title))?;
            }
        }
        "compare" => {
            let name = o.arg.as_deref().ok_or("compare needs a scenario")?;
            let s = scen(name)?;
            print!("{}", report::compare(name, &config(o, &s.cfg)?, o.bg_us));
        }
        "fig4" => print!("{}", report::fig4()),
        "vmcg" => {
            print!("{}", report::vmcg());
            let s = scen("teapot")?;
            println!();
            print!("{}", report::compare("teapot", &config(o, &s.cfg)?, 0));
        }
        "issue187" => print!("{}", report::issue187(&config(o, &scen("issue187")?.cfg)?)),
        "fig11" => print!("{}", report::fig11(&config(o, &scen("fig11")?.cfg)?)),
        "mixes" => print!("{}", report::mixes(&config(o, &Config::default())?)),
        "interactive" => {
            let c = config(o, &Config::default())?;
            print!("{}", report::interactive(&c));
            println!();
            print!("{}", report::interactive_breakdown(&c));
        }
        "fairgv" => print!("{}", report::fairgv(&config(o, &Config::default())?)),
        "anticipate" => print!(
            "{}",
            report::anticipation_cost(&config(o, &Config::default())?)
        ),
        "drmfair" => print!("{}", drm::report(o.switch_cost_us, &sets(o)?)),
        "drmtune" => print!("{}", drmtune::report()),
        "all" => {
            let dir = o.out.as_deref().ok_or("all needs --out DIR")?;
            std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
            let mut parts = vec![
                ("fig4.txt", report::fig4()),
                ("vmcg.txt", {
                    let s = scen("teapot")?;
                    format!(
                        "{}\n{}",
                        report::vmcg(),
                        report::compare("teapot", &config(o, &s.cfg)?, 0)
                    )
                }),
                (
                    "issue187.txt",
                    report::issue187(&config(o, &scen("issue187")?.cfg)?),
                ),
                ("fig11.txt", report::fig11(&config(o, &scen("fig11")?.cfg)?)),
                ("mixes.txt", report::mixes(&config(o, &Config::default())?)),
                (
                    "interactive.txt",
                    format!(
                        "{}\n{}",
                        report::interactive(&config(o, &Config::default())?),
                        report::interactive_breakdown(&config(o, &Config::default())?)
                    ),
                ),
                (
                    "fairgv.txt",
                    report::fairgv(&config(o, &Config::default())?),
                ),
                (
                    "anticipate.txt",
                    report::anticipation_cost(&config(o, &Config::default())?),
                ),
                ("drmfair.txt", drm::report(o.switch_cost_us, &sets(o)?)),
            ];
            for p in [Policy::Tbs, Policy::Vmcg, Policy::Sfq] {
                let s = scen("joinleave")?;
                let mut cfg = config(o, &s.cfg)?;
                cfg.policy = p;
                let r = run(&s.vms, &cfg);
                write(&format!("{dir}/joinleave-{}.csv", p.name()), &plot::csv(&r))?;
                write(
                    &format!("{dir}/joinleave-{}.svg", p.name()),
                    &plot::svg(&r, &format!("joinleave: {}", p.name())),
                )?;
                parts.push((
                    if p == Policy::Tbs {
                        "joinleave-tbs.txt"
                    } else if p == Policy::Vmcg {
                        "joinleave-vmcg.txt"
                    } else {
                        "joinleave-sfq.txt"
                    },
                    format!(
                        "# joinleave, policy {}\n{}",
                        p.name(),
                        report::run_table(&r)
                    ),
                ));
            }
            for (f, text) in &parts {
                write(&format!("{dir}/{f}"), text)?;
                println!("{text}");
            }
        }
        c => return Err(format!("unknown command {c}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gvt_core::sched::Tunable;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parse_defaults_and_positional_argument() {
        let o = parse(args("run teapot")).unwrap();
        assert_eq!(o.cmd, "run");
        assert_eq!(o.arg.as_deref(), Some("teapot"));
        assert_eq!(o.policy, Policy::Sfq);
        assert!(!o.throttle);
        assert!(o.sets.is_empty());
        assert_eq!(
            (o.duration_ms, o.warmup_ms, o.sample_ms),
            (None, None, None)
        );
        assert_eq!(
            (o.switch_cost_us, o.engines, o.bg_us, o.seed),
            (0, 1, 1605, 1)
        );
        assert_eq!((o.csv, o.svg, o.out), (None, None, None));
    }

    #[test]
    fn parse_every_option() {
        let o = parse(args(
            "run --policy vmcg fig11 --throttle --set sfq_slice_us=6000 --set throttle=1 \
             --duration-ms 500 --warmup-ms 100 --sample-ms 20 --switch-cost-us 7 \
             --engines 2 --bg-us 51 --seed 9 --csv a.csv --svg a.svg --out dir",
        ))
        .unwrap();
        assert_eq!(o.arg.as_deref(), Some("fig11"));
        assert_eq!(o.policy, Policy::Vmcg);
        assert!(o.throttle);
        assert_eq!(o.sets, ["sfq_slice_us=6000", "throttle=1"]);
        assert_eq!(
            (o.duration_ms, o.warmup_ms, o.sample_ms),
            (Some(500), Some(100), Some(20))
        );
        assert_eq!(
            (o.switch_cost_us, o.engines, o.bg_us, o.seed),
            (7, 2, 51, 9)
        );
        assert_eq!(o.csv.as_deref(), Some("a.csv"));
        assert_eq!(o.svg.as_deref(), Some("a.svg"));
        assert_eq!(o.out.as_deref(), Some("dir"));
    }

    #[test]
    fn parse_rejects_bad_command_lines() {
        let err = |s: &str| parse(args(s)).unwrap_err();
        assert_eq!(err(""), "missing command");
        assert_eq!(err("run --policy cfq"), "unknown policy cfq");
        assert_eq!(err("run --seed"), "--seed needs a value");
        assert!(err("run --seed x").starts_with("x: "));
        assert!(err("run --seed -1").starts_with("-1: "));
        assert_eq!(err("run --bogus"), "unknown option --bogus");
        assert_eq!(err("run a b"), "unknown option b");
        // --help prints only the usage: an empty message.
        assert_eq!(err("run --help"), "");
    }

    #[test]
    fn config_converts_units_and_validates() {
        let o = parse(args(
            "run --duration-ms 3000 --warmup-ms 1000 --sample-ms 0 --switch-cost-us 5 \
             --engines 0 --seed 4 --policy tbs --throttle --set sfq_slice_us=6000",
        ))
        .unwrap();
        let c = config(&o, &Config::default()).unwrap();
        assert_eq!(c.duration_ns, 3000 * MS);
        assert_eq!(c.warmup_ns, 1000 * MS);
        assert_eq!(c.sample_ns, MS, "a zero sample interval becomes 1 ms");
        assert_eq!(c.switch_cost_ns, 5 * US);
        assert_eq!(c.engines, 1, "at least one engine");
        assert_eq!(c.seed, 4);
        assert_eq!((c.policy, c.throttle), (Policy::Tbs, true));
        assert_eq!(c.tunables, [(Tunable::SfqSliceUs, 6000)]);

        // Unset options keep the scenario's settings.
        let base = Config {
            warmup_ns: 42 * MS,
            ..Config::default()
        };
        let c = config(&parse(args("run")).unwrap(), &base).unwrap();
        assert_eq!((c.warmup_ns, c.duration_ns), (42 * MS, base.duration_ns));

        let bad = |s: &str| config(&parse(args(s)).unwrap(), &Config::default()).unwrap_err();
        assert_eq!(
            bad("run --duration-ms 1000 --warmup-ms 1000"),
            "warm-up must end before the run does"
        );
        // The default warm-up (2.5 s) is past a 2 s run.
        assert!(bad("run --duration-ms 2000").starts_with("warm-up"));
        assert_eq!(bad("run --set nosuch=1"), "unknown tunable nosuch");
    }
}
