// SPDX-License-Identifier: GPL-2.0

//! Built-in scenarios: the papers' experiments in the shape a DES can reproduce.

use super::engine::{
    Config,
    Load,
    VmSpec,
    MS,
    US, //
};

/// A named workload mix with its default settings.
pub struct Scenario {
    pub name: String,
    pub about: &'static str,
    pub vms: Vec<VmSpec>,
    pub cfg: Config,
}

fn sat(name: &str, w: u32, svc: u64) -> VmSpec {
    VmSpec::new(
        name,
        w,
        Load::Saturate {
            depth: 2,
            svc_ns: svc,
        },
    )
}

/// FairGV-style weighted mixes: `weights`, workload size per VM.
fn mix(name: &str, about: &'static str, weights: &[u32], sizes: &[u64]) -> Scenario {
    let vms = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| sat(&format!("vm{}-w{}", i + 1, w), w, sizes[i % sizes.len()]))
        .collect();
    Scenario {
        name: name.to_string(),
        about,
        vms,
        cfg: Config::default(),
    }
}

/// Names of every scenario, for `list` and `all`.
pub const NAMES: &[&str] = &[
    "issue187",
    "issue187-alone",
    "teapot",
    "mix123-short",
    "mix123-long",
    "mix123-mixed",
    "mix122334-short",
    "mix122334-long",
    "mix122334-mixed",
    "fig11",
    "fig11-alone",
    "joinleave",
    "interactive-alone",
    "interactive-1",
    "interactive-3",
    "interactive-7",
    "interactive-15",
    "fairgv-8-bs",
    "fairgv-8-srd1",
    "fairgv-9-bs",
    "fairgv-9-srd1",
    "fairgv-alone-bs",
    "fairgv-alone-srd1",
];

/// FairGV's CPU-GPU interactive programs as synchronous round trips (GPU
/// time, CPU time per round trip): BlackScholes (377 us kernels, Table 3)
/// and srad_v1 (46 us kernels). The CPU time between them is not in the
/// paper; 20 us and 10 us are assumptions.
pub const FAIRGV_PROGRAMS: &[(&str, u64, u64)] =
    &[("bs", 377 * US, 20 * US), ("srd1", 46 * US, 10 * US)];

/// Weights of FairGV's Fig. 8 (3 VMs) and Fig. 9 (6 VMs).
pub const FAIRGV_WEIGHTS: &[(&str, &[u32])] = &[("8", &[1, 2, 3]), ("9", &[1, 2, 2, 3, 3, 4])];

/// Background kernel sizes of the FairGV Fig. 11 sweep, us.
pub const FIG11_SIZES_US: &[u64] = &[21, 51, 102, 172, 285, 391, 800, 1605, 5000];

/// Builds scenario `name` (`fig11` takes the background size from `bg_us`).
pub fn get(name: &str, bg_us: u64) -> Option<Scenario> {
    let s = match name {
        "issue187" | "issue187-alone" => {
            // gvt-linux #187: Heaven at ~66 FPS alone; a second guest merely
            // started (GVTg_V5_4 type, weight 4 each).
            let mut vms = vec![VmSpec::new(
                "busy",
                4,
                Load::Frames {
                    think_ns: 2500 * US,
                    blocks: 5,
                    svc_ns: 2500 * US,
                    jitter_pct: 20,
                },
            )];
            if name == "issue187" {
                vms.push(VmSpec::new("idle", 4, Load::Idle));
            }
            Scenario {
                name: name.into(),
                about: "gvt-linux #187: one busy frame VM, a second VM started but idle",
                vms,
                cfg: Config {
                    warmup_ns: 3000 * MS,
                    ..Config::default()
                },
            }
        }
        "teapot" => {
            // VMCG Sec. 6.3: teapot in DomU1 (16 units of CPU per frame),
            // gear in DomU2/3 (15 units), weights 1:1:1, ~238 FPS each.
            let f = |name: &str, think: u64| {
                let mut v = VmSpec::new(
                    name,
                    1,
                    Load::Frames {
                        think_ns: think,
                        blocks: 4,
                        svc_ns: 350 * US,
                        jitter_pct: 30,
                    },
                );
                v.cpu_per_block_ns = 0;
                v
            };
            Scenario {
                name: name.into(),
                about: "VMCG teapot/gear: 3 DomUs, closed-loop frames, CPU 16:15:15, weights 1:1:1",
                vms: vec![
                    f("teapot", 1600 * US),
                    f("gear-1", 1500 * US),
                    f("gear-2", 1500 * US),
                ],
                cfg: Config::default(),
            }
        }
        "mix123-short" => mix(
            name,
            "FairGV Fig. 8 weights 1:2:3, 200 us workloads",
            &[1, 2, 3],
            &[200 * US],
        ),
        "mix123-long" => mix(name, "weights 1:2:3, 5 ms workloads", &[1, 2, 3], &[5 * MS]),
        "mix123-mixed" => mix(
            name,
            "weights 1:2:3, workloads 0.2/5/1 ms",
            &[1, 2, 3],
            &[200 * US, 5 * MS, MS],
        ),
        "mix122334-short" => mix(
            name,
            "FairGV Fig. 9 weights 1:2:2:3:3:4, 200 us workloads",
            &[1, 2, 2, 3, 3, 4],
            &[200 * US],
        ),
        "mix122334-long" => mix(
            name,
            "weights 1:2:2:3:3:4, 5 ms workloads",
            &[1, 2, 2, 3, 3, 4],
            &[5 * MS],
        ),
        "mix122334-mixed" => mix(
            name,
            "weights 1:2:2:3:3:4, workloads 0.2/5/1 ms",
            &[1, 2, 2, 3, 3, 4],
            &[200 * US, 5 * MS, MS],
        ),
        "fig11" | "fig11-alone" => {
            // FairGV Fig. 11: foreground MM (207 us kernels, synchronous),
            // background MM with kernels of bg_us, equal weights.
            let mut vms = vec![VmSpec::new(
                "fg-207us",
                1,
                Load::Sync {
                    gap_ns: 20 * US,
                    svc_ns: 207 * US,
                },
            )];
            if name == "fig11" {
                vms.push(VmSpec::new(
                    &format!("bg-{bg_us}us"),
                    1,
                    Load::Saturate {
                        depth: 8,
                        svc_ns: bg_us * US,
                    },
                ));
            }
            Scenario {
                name: name.into(),
                about: "FairGV Fig. 11: synchronous foreground vs background with long batches",
                vms,
                cfg: Config::default(),
            }
        }
        "joinleave" => {
            let mut fr = VmSpec::new(
                "frames-w2",
                2,
                Load::Frames {
                    think_ns: 4 * MS,
                    blocks: 6,
                    svc_ns: 1500 * US,
                    jitter_pct: 20,
                },
            );
            fr.gm_mb = 1024;
            Scenario {
                name: name.into(),
                about: "joins and leaves: frames w2, batch w1, long batches w2 join at 3 s and leave at 7 s, open-loop w1 joins at 5 s",
                vms: vec![
                    fr,
                    sat("batch-w1", 1, MS),
                    sat("long-w2", 2, 8 * MS).at(3000, Some(7000)),
                    VmSpec::new(
                        "open-w1",
                        1,
                        Load::Open {
                            period_ns: 2 * MS,
                            svc_ns: 1500 * US,
                        },
                    )
                    .at(5000, None),
                ],
                cfg: Config {
                    warmup_ns: 0,
                    duration_ns: 10_000 * MS,
                    ..Config::default()
                },
            }
        }
        n if n.starts_with("interactive-") => {
            // A light, interactive vGPU (one 1 ms workload per frame, then
            // 15 ms of CPU think time: about 6% of the GPU) beside N
            // saturating neighbours of equal weight that keep four 2 ms
            // workloads queued each (the test VM measurement of the
            // latency issue).
            let others = match &n["interactive-".len()..] {
                "alone" => 0,
                k => k.parse::<usize>().ok().filter(|&k| (1..=15).contains(&k))?,
            };
            let mut vms = vec![VmSpec::new(
                "frames",
                1,
                Load::Frames {
                    think_ns: 15 * MS,
                    blocks: 1,
                    svc_ns: MS,
                    jitter_pct: 0,
                },
            )];
            for i in 0..others {
                vms.push(VmSpec::new(
                    &format!("batch{}", i + 1),
                    1,
                    Load::Saturate {
                        depth: 4,
                        svc_ns: 2 * MS,
                    },
                ));
            }
            Scenario {
                name: name.into(),
                about: "a light frame vGPU (1 ms per frame, 15 ms think) beside N saturating neighbours (four 2 ms workloads queued), equal weights",
                vms,
                cfg: Config {
                    warmup_ns: 1000 * MS,
                    ..Config::default()
                },
            }
        }
        n if n.starts_with("fairgv-") => {
            // FairGV Figs. 8 and 9: the same interactive program in every
            // VM, vGPU weights 1:2:3 or 1:2:2:3:3:4 (one VM alone for the
            // normalisation).
            let (fig, prog) = n["fairgv-".len()..].split_once('-')?;
            let &(_, svc, gap) = FAIRGV_PROGRAMS.iter().find(|p| p.0 == prog)?;
            let weights: &[u32] = if fig == "alone" {
                &[1]
            } else {
                FAIRGV_WEIGHTS.iter().find(|w| w.0 == fig)?.1
            };
            let vms = weights
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    VmSpec::new(
                        &format!("{prog}{}-w{w}", i + 1),
                        w,
                        Load::Sync {
                            gap_ns: gap,
                            svc_ns: svc,
                        },
                    )
                })
                .collect();
            Scenario {
                name: name.into(),
                about: "FairGV Figs. 8/9: the same synchronous CPU-GPU interactive program in every VM, weighted",
                vms,
                cfg: Config::default(),
            }
        }
        _ => return None,
    };
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::engine::Load;

    #[test]
    fn every_listed_scenario_builds_and_is_sane() {
        for &n in NAMES {
            let s = get(n, 1605).unwrap_or_else(|| panic!("scenario {n} missing"));
            assert_eq!(s.name, n);
            assert!(!s.about.is_empty() && !s.vms.is_empty(), "{n}");
            assert!(
                s.cfg.warmup_ns < s.cfg.duration_ns,
                "{n}: warm-up past the end"
            );
            assert!(s.vms.iter().all(|v| v.weight > 0), "{n}: zero weight");
            let mut names: Vec<&str> = s.vms.iter().map(|v| v.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), s.vms.len(), "{n}: duplicate VM names");
        }
        assert!(get("nosuch", 0).is_none());
        assert!(get("", 0).is_none());
    }

    #[test]
    fn scenario_variants_differ_as_documented() {
        // issue187 adds an idle VM to issue187-alone.
        let alone = get("issue187-alone", 0).unwrap();
        let with = get("issue187", 0).unwrap();
        assert_eq!(alone.vms.len(), 1);
        assert_eq!(with.vms.len(), 2);
        assert!(matches!(with.vms[1].load, Load::Idle));
        // fig11 takes its background kernel size from bg_us.
        let f = get("fig11", 51).unwrap();
        assert_eq!(f.vms[1].name, "bg-51us");
        assert!(matches!(f.vms[1].load, Load::Saturate { svc_ns, .. } if svc_ns == 51 * US));
        assert_eq!(get("fig11-alone", 51).unwrap().vms.len(), 1);
        // Mixes: one VM per weight, names carry the weights, sizes cycle.
        let m = get("mix122334-mixed", 0).unwrap();
        let w: Vec<u32> = m.vms.iter().map(|v| v.weight).collect();
        assert_eq!(w, [1, 2, 2, 3, 3, 4]);
        assert_eq!(m.vms[5].name, "vm6-w4");
        let svc: Vec<u64> = m
            .vms
            .iter()
            .map(|v| match v.load {
                Load::Saturate { svc_ns, .. } => svc_ns,
                _ => panic!("mixes saturate"),
            })
            .collect();
        assert_eq!(svc, [200 * US, 5 * MS, MS, 200 * US, 5 * MS, MS]);
        // joinleave: the long-batch VM joins at 3 s and leaves at 7 s.
        let j = get("joinleave", 0).unwrap();
        assert_eq!(
            (j.vms[2].start_ns, j.vms[2].stop_ns),
            (3000 * MS, Some(7000 * MS))
        );
        assert_eq!((j.vms[3].start_ns, j.vms[3].stop_ns), (5000 * MS, None));
    }
}
