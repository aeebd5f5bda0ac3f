// SPDX-License-Identifier: GPL-2.0

//! The DRM scheduler's many-clients scenarios under `sfq` and `eevdf` with
//! other core tunables, and what each setting costs in the other
//! scenarios of the comparison ([`super::drm`]): one row per setting and
//! policy.
//!
//! With 7, 13 and 31 synchronous clients of 4 (2) x 1 ms jobs the two
//! policies' worst waits are two to three rounds of the others' turns at
//! their defaults. Each setting here is one a host can make through sysfs
//! (`--set` of `gvt-sim drmfair` runs every scenario with it); none
//! changes the core's defaults.

use super::drm::{
    cases,
    figures,
    interactive,
    outcome,
    ping_pong,
    sets_name,
    weighted,
    Case,
    Mapping,
    Sched,
    Tunables, //
};
use super::report::table;
use gvt_core::sched::{
    Policy,
    Tunable, //
};

use Tunable::{
    IdleThresholdUs,
    InteractiveCalls,
    SfqSliceUs,
    SfqWakePreempt, //
};

/// A setting of the study: core tunables, the same for every scenario,
/// or `sfq_slice_us` from a latency target over the scenario's clients.
#[derive(Clone, Copy, Debug)]
pub enum Setting {
    /// These tunables (none: the core's defaults).
    Set(Tunables<'static>),
    /// `sfq_slice_us` = `target_us` / the scenario's clients, at least
    /// `floor_us` and at most the default slice: a stand-in for a slice
    /// that shrinks with the number of backlogged vGPUs (in the
    /// many-clients cases every client resubmits at once, so all of them
    /// are backlogged but for instants; with two clients it is the default).
    PerClients { target_us: u64, floor_us: u64 },
}

impl Setting {
    /// The tunables for `case` (of `clients` clients).
    pub fn tunables(self, clients: usize) -> Vec<(Tunable, u64)> {
        match self {
            Setting::Set(t) => t.to_vec(),
            Setting::PerClients {
                target_us,
                floor_us,
            } => {
                let n = clients.max(1) as u64;
                let slice = (target_us / n)
                    .max(floor_us)
                    .min(SfqSliceUs.default_value());
                vec![(SfqSliceUs, slice)]
            }
        }
    }

    pub fn name(self) -> String {
        match self {
            Setting::Set([]) => "defaults".to_string(),
            Setting::Set(t) => sets_name(t),
            Setting::PerClients {
                target_us,
                floor_us,
            } => format!(
                "sfq_slice_us={target_us}/clients, {floor_us}..={}",
                SfqSliceUs.default_value()
            ),
        }
    }
}

/// The settings of the study, the defaults first.
pub const SETTINGS: &[Setting] = &[
    Setting::Set(&[]),
    Setting::Set(&[(IdleThresholdUs, 0)]),
    Setting::Set(&[(InteractiveCalls, 0)]),
    Setting::Set(&[(SfqWakePreempt, 0)]),
    Setting::Set(&[(IdleThresholdUs, 0), (SfqWakePreempt, 0)]),
    Setting::Set(&[(SfqSliceUs, 4000)]),
    Setting::Set(&[(SfqSliceUs, 2000)]),
    Setting::Set(&[(SfqSliceUs, 1000)]),
    Setting::PerClients {
        target_us: 24_000,
        floor_us: 1000,
    },
];

/// The policies of the study.
pub const POLICIES: &[Policy] = &[Policy::Sfq, Policy::Eevdf];

/// The many-clients cases whose worst waits the study is about.
pub const MANY: &[&str] = &["many-7", "many-13", "many-31"];

/// The weighted pairs of backlogged clients (share errors under both
/// mappings).
pub const PAIRS: &[&str] = &["normal-normal", "normal-low", "high-normal", "high-low"];

/// The pairs of 50% clients (share errors under both mappings).
pub const HALVES: &[&str] = &["50-50", "50-50low", "50high-50"];

/// The cases with an interactive client: its p99 and the case's largest
/// share error.
pub const INTERACTIVE: &[&str] = &[
    "50-50",
    "lowhog-interactive",
    "heavy-interactive",
    "veryheavy-interactive",
];

fn case<'a>(cs: &'a [Case], name: &str) -> &'a Case {
    cs.iter()
        .find(|c| c.name == name)
        .expect("a case of tests_scheduler.c")
}

/// `case` under `s` with `set` and mapping `m`: the largest |gpu% -
/// want%| of a client, pp, the worst client's p99 wait and the
/// interactive client's, us, and the vGPU switches.
fn figs(case: &Case, m: Mapping, s: Sched, set: Setting) -> (f64, f64, f64, u64) {
    let tun = set.tunables(case.clients.len());
    let out = outcome(case, m, s, &tun);
    let f = figures(case, m, &out);
    let err = f
        .iter()
        .map(|x| (x.gpu_pct - x.want_pct).abs())
        .fold(0.0, f64::max);
    let worst = f.iter().map(|x| x.p99_us).fold(0.0, f64::max);
    let ia = interactive(case).map_or(f64::NAN, |k| f[k].p99_us);
    (err, worst, ia, out.r.switches)
}

/// The largest share error over `names` under both mappings (the second
/// only for weighted pairs).
fn worst_err(cs: &[Case], names: &[&str], s: Sched, set: Setting) -> f64 {
    let mut e = 0.0f64;
    for name in names {
        let c = case(cs, name);
        e = e.max(figs(c, Mapping::Shift, s, set).0);
        if weighted(c) {
            e = e.max(figs(c, Mapping::Decade, s, set).0);
        }
    }
    e
}

/// One row: `s` with `set`.
fn row(cs: &[Case], s: Sched, set: Setting) -> Vec<String> {
    let mut r = vec![set.name(), s.name()];
    let mut switches = 0;
    for name in MANY {
        let (_, worst, _, sw) = figs(case(cs, name), Mapping::Shift, s, set);
        r.push(format!("{:.0}", worst / 1000.0));
        switches = sw;
    }
    r.push(switches.to_string());
    r.push(format!("{:.1}", worst_err(cs, PAIRS, s, set)));
    r.push(format!("{:.1}", worst_err(cs, HALVES, s, set)));
    for name in INTERACTIVE {
        let (err, _, ia, _) = figs(case(cs, name), Mapping::Shift, s, set);
        r.push(format!("{ia:.0}"));
        if *name != "50-50" {
            r.push(format!("{err:.1}"));
        }
    }
    let p = ping_pong(s, 0, &set.tunables(2));
    r.push(
        p.total_ns
            .map_or("-".into(), |t| format!("{:.1}", t as f64 / 1e6)),
    );
    r
}

/// The study's table, with drm-fair (two credits) and `tbs` at their
/// defaults for reference.
pub fn report() -> String {
    let cs = cases();
    let mut o = String::from(
        "# many clients (tests_scheduler.c's many-clients suite) under sfq and eevdf per core tunable setting, and its cost in the other scenarios\n\
         # many-N: the worst client's p99 submit-to-start wait, ms; switches: vGPU switches in many-31;\n\
         # |err| pp: the largest |gpu% - want%| of a client: pairs: backlogged pairs, 50%: pairs of 50% clients (both mappings), and per case;\n\
         # p99 us: the interactive client's (c0 of 50-50, c1 of the others); ping-pong: the chain's total, ms (no switch cost)\n",
    );
    let mut rows = vec![
        row(&cs, Sched::DrmFair(2), Setting::Set(&[])),
        row(&cs, Sched::Core(Policy::Tbs, 0), Setting::Set(&[])),
    ];
    rows[0][0] = "-".to_string();
    for &set in SETTINGS {
        for &p in POLICIES {
            rows.push(row(&cs, Sched::Core(p, 0), set));
        }
    }
    o.push_str(&table(
        &[
            "setting",
            "policy",
            "many-7",
            "many-13",
            "many-31",
            "switches",
            "pairs",
            "50%",
            "50-50 p99",
            "lowhog p99",
            "|err|",
            "heavy p99",
            "|err|",
            "veryheavy p99",
            "|err|",
            "ping-pong",
        ],
        &rows,
    ));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_per_clients_is_clamped() {
        let s = Setting::PerClients {
            target_us: 24_000,
            floor_us: 1000,
        };
        assert_eq!(s.tunables(2), [(SfqSliceUs, 6000)]);
        assert_eq!(s.tunables(7), [(SfqSliceUs, 3428)]);
        assert_eq!(s.tunables(31), [(SfqSliceUs, 1000)]);
        assert_eq!(s.name(), "sfq_slice_us=24000/clients, 1000..=6000");
        assert_eq!(Setting::Set(&[]).name(), "defaults");
        assert_eq!(
            Setting::Set(&[(IdleThresholdUs, 0), (SfqWakePreempt, 0)]).name(),
            "idle_threshold_us=0, sfq_wake_preempt=0"
        );
    }

    /// The worst p99 wait of many-31 (2 x 1 ms jobs per cycle), ms.
    fn many31(p: Policy, t: Tunables<'static>) -> f64 {
        let cs = cases();
        figs(
            case(&cs, "many-31"),
            Mapping::Shift,
            Sched::Core(p, 0),
            Setting::Set(t),
        )
        .1 / 1000.0
    }

    #[test]
    fn the_worst_wait_is_a_round_of_the_others_turns() {
        // sfq: a turn is its 6 ms slice (the hold keeps it across the
        // client's resubmissions): 30 turns of 6 ms and one job.
        assert_eq!(many31(Policy::Sfq, &[]), 181.0);
        // A slice no longer than a cycle: 30 cycles of 2 ms and one job,
        // as tbs.
        assert_eq!(many31(Policy::Sfq, &[(SfqSliceUs, 2000)]), 61.0);
        assert_eq!(many31(Policy::Tbs, &[]), 61.0);
        // eevdf: one cycle a turn, but one client's cycle split over two
        // rounds by an equal-tag wake-up preemption.
        assert_eq!(many31(Policy::Eevdf, &[]), 120.0);
        assert_eq!(many31(Policy::Eevdf, &[(SfqWakePreempt, 0)]), 61.0);
        // Held for every vGPU, eevdf's turns are sfq's.
        assert_eq!(many31(Policy::Eevdf, &[(InteractiveCalls, 0)]), 181.0);
    }
}
