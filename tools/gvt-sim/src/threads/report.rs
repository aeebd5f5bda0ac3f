// SPDX-License-Identifier: GPL-2.0

//! Kang & Yu's experiments (Figs. 3, 4, 7-10) on the thread-division model:
//! 6 VMs, 10 runs each with seeded request arrivals, per-VM spread of the
//! task time (request to completion) under FIFO and thread division.

use super::{
    run,
    Charge,
    Gpu,
    Scheme,
    Task,
    Throttle, //
};

/// N x N matrix multiplication: N^2 threads of N multiply-adds; the lane
/// time per thread is scaled so that 14K alone takes 1.155 s on 2048
/// lanes (Table 2, one VM).
pub fn matmul(name: &'static str, n: u64) -> Task {
    Task {
        name,
        threads: n * n,
        ns_per_thread: n * 862 / 1000,
    }
}

/// Sobel filter over a `px` x `px` image: one thread per pixel, 20 us of
/// lane time each (8192^2 alone: 0.66 s; scaled like matmul, the paper
/// gives no times).
pub fn sobel(name: &'static str, px: u64) -> Task {
    Task {
        name,
        threads: px * px,
        ns_per_thread: 20_000,
    }
}

/// Binomial option pricing: one thread per option, 400 us of lane time
/// each (10M alone: 1.95 s; scaled like matmul).
pub fn binomial(name: &'static str, samples: u64) -> Task {
    Task {
        name,
        threads: samples,
        ns_per_thread: 400_000,
    }
}

/// One experiment: its figure, title and the six VMs' tasks.
pub struct Experiment {
    /// Paper figure.
    pub fig: &'static str,
    /// What runs.
    pub title: &'static str,
    /// One task per VM.
    pub tasks: Vec<Task>,
}

fn three_three(a: Task, b: Task) -> Vec<Task> {
    vec![a, a, a, b, b, b]
}

/// The paper's experiments (Fig. 3 is Fig. 8a's set under FIFO; Fig. 7's
/// sizes are not stated, we use Fig. 4's).
pub fn experiments() -> Vec<Experiment> {
    let m = |n: u64| {
        let names = ["9K", "10K", "11K", "13K", "14K"];
        let i = [9u64, 10, 11, 13, 14]
            .iter()
            .position(|&x| x == n)
            .expect("a size of the paper");
        matmul(names[i], n * 1000)
    };
    vec![
        Experiment {
            fig: "3, 8a",
            title: "matmul 3 x 9K + 3 x 14K",
            tasks: three_three(m(9), m(14)),
        },
        Experiment {
            fig: "4a, 7",
            title: "matmul 6 x 9K",
            tasks: vec![m(9); 6],
        },
        Experiment {
            fig: "4b, 7",
            title: "matmul 6 x 10K",
            tasks: vec![m(10); 6],
        },
        Experiment {
            fig: "8b",
            title: "matmul 3 x 10K + 3 x 14K",
            tasks: three_three(m(10), m(14)),
        },
        Experiment {
            fig: "8c",
            title: "matmul 3 x 11K + 3 x 13K",
            tasks: three_three(m(11), m(13)),
        },
        Experiment {
            fig: "9a",
            title: "sobel 6 x 2560^2",
            tasks: vec![sobel("2560^2", 2560); 6],
        },
        Experiment {
            fig: "9b",
            title: "sobel 6 x 8192^2",
            tasks: vec![sobel("8192^2", 8192); 6],
        },
        Experiment {
            fig: "9c",
            title: "sobel 3 x 2560^2 + 3 x 8192^2",
            tasks: three_three(sobel("2560^2", 2560), sobel("8192^2", 8192)),
        },
        Experiment {
            fig: "10a",
            title: "binomial 6 x 5M",
            tasks: vec![binomial("5M", 5_000_000); 6],
        },
        Experiment {
            fig: "10b",
            title: "binomial 6 x 10M",
            tasks: vec![binomial("10M", 10_000_000); 6],
        },
        Experiment {
            fig: "10c",
            title: "binomial 3 x 10M + 3 x 20M",
            tasks: three_three(binomial("10M", 10_000_000), binomial("20M", 20_000_000)),
        },
    ]
}

/// Runs per experiment (the paper's 10).
pub const RUNS: u64 = 10;

/// Request arrivals are spread uniformly over the solo time of the
/// run's shortest task (RPC, data upload and start-up skew of six VMs
/// started together; the paper gives none).
pub fn spread_ns(tasks: &[Task], gpu: &Gpu) -> u64 {
    tasks
        .iter()
        .map(|t| t.solo_ns(gpu.lanes))
        .min()
        .unwrap_or(0)
}

/// Per-VM times over `RUNS` runs, ns (`[vm][run]`).
pub fn times(tasks: &[Task], scheme: Scheme, gpu: &Gpu) -> (Vec<Vec<u64>>, u64) {
    let spread = spread_ns(tasks, gpu);
    let mut out = vec![Vec::new(); tasks.len()];
    let mut waits = 0;
    for seed in 1..=RUNS {
        let r = run(tasks, scheme, gpu, spread, seed);
        for (o, t) in out.iter_mut().zip(&r.time_ns) {
            o.push(*t);
        }
        waits += r.waits.iter().sum::<u64>();
    }
    (out, waits)
}

/// (min, Q1, mean, Q3, max) of `xs`, nearest-rank quartiles.
pub fn summary(xs: &[u64]) -> (u64, u64, u64, u64, u64) {
    let mut v = xs.to_vec();
    v.sort_unstable();
    let q = |p: usize| v[((p * v.len()).div_ceil(4)).clamp(1, v.len()) - 1];
    let mean = v.iter().sum::<u64>() / v.len().max(1) as u64;
    (v[0], q(1), mean, q(3), v[v.len() - 1])
}

fn s(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e9)
}

/// One experiment as text: per VM, FIFO and thread-division spreads.
pub fn experiment_table(e: &Experiment, gpu: &Gpu) -> String {
    let (fifo, _) = times(&e.tasks, Scheme::Fifo, gpu);
    let (div, waits) = times(&e.tasks, Scheme::PAPER, gpu);
    let mut out = format!(
        "# Kang & Yu Fig. {}: {}, {RUNS} runs, seconds from request to completion (min/Q1/mean/Q3/max), max/min\n",
        e.fig, e.title
    );
    out += "VM  task    FIFO min    Q1  mean    Q3   max  max/min   divided min    Q1  mean    Q3   max  max/min\n";
    out += "--  ------  --------  ----  ----  ----  ----  -------   -----------  ----  ----  ----  ----  -------\n";
    for (i, t) in e.tasks.iter().enumerate() {
        let (a, b, c, d, x) = summary(&fifo[i]);
        let (a2, b2, c2, d2, x2) = summary(&div[i]);
        out += &format!(
            "{:<2}  {:<6}  {:>8}  {:>4}  {:>4}  {:>4}  {:>4}  {:>7.2}   {:>11}  {:>4}  {:>4}  {:>4}  {:>4}  {:>7.2}\n",
            i + 1,
            t.name,
            s(a),
            s(b),
            s(c),
            s(d),
            s(x),
            x as f64 / a.max(1) as f64,
            s(a2),
            s(b2),
            s(c2),
            s(d2),
            s(x2),
            x2 as f64 / a2.max(1) as f64,
        );
    }
    out += &format!("throttle waits (all VMs, {RUNS} runs): {waits}\n");
    out
}

/// Worst per-VM max/min and the mean time of the first and last VM class
/// (VMs 1-3, 4-6) for a scheme.
pub fn digest(tasks: &[Task], scheme: Scheme, gpu: &Gpu) -> (f64, f64, f64, u64) {
    let (t, waits) = times(tasks, scheme, gpu);
    let worst = t
        .iter()
        .map(|x| {
            let (a, _, _, _, m) = summary(x);
            m as f64 / a.max(1) as f64
        })
        .fold(0.0, f64::max);
    let mean = |r: std::ops::Range<usize>| {
        let n = r.len() as f64;
        r.map(|i| summary(&t[i]).2 as f64).sum::<f64>() / n / 1e9
    };
    (worst, mean(0..3), mean(3..6), waits)
}

/// Summary over every experiment: worst max/min and class means.
pub fn summary_table(gpu: &Gpu) -> String {
    let mut out = format!(
        "# Kang & Yu summary: worst per-VM max/min over {RUNS} runs and mean seconds of VMs 1-3 / 4-6, FIFO vs thread division (Eq. 1, Eq. 2, Algorithm 2, text throttle)\n"
    );
    out += "fig     experiment                      FIFO worst  mean 1-3  mean 4-6   divided worst  mean 1-3  mean 4-6\n";
    out += "------  ------------------------------  ----------  --------  --------   -------------  --------  --------\n";
    for e in experiments() {
        let (w, a, b, _) = digest(&e.tasks, Scheme::Fifo, gpu);
        let (w2, a2, b2, _) = digest(&e.tasks, Scheme::PAPER, gpu);
        out += &format!(
            "{:<6}  {:<30}  {:>10.2}  {:>8.2}  {:>8.2}   {:>13.2}  {:>8.2}  {:>8.2}\n",
            e.fig, e.title, w, a, b, w2, a2, b2
        );
    }
    out
}

/// The paper's choices against alternatives, on Fig. 8a's set: the Eq. 1
/// charge, the throttle as the text or the listing states it, Algorithm 2
/// on or off, and beta.
pub fn variants_table() -> String {
    let tasks = experiments().remove(0).tasks;
    let mut out = format!(
        "# Kang & Yu variants on matmul 3 x 9K + 3 x 14K, {RUNS} runs: worst per-VM max/min, mean seconds of the 9K and 14K VMs, throttle waits\n"
    );
    out += "variant                                    worst  mean 9K  mean 14K  waits\n";
    out += "-----------------------------------------  -----  -------  --------  -----\n";
    let d = |charge, throttle, gain_pct| Scheme::Divide {
        charge,
        throttle,
        gain_pct,
        cumulative: false,
    };
    let listed = Scheme::Divide {
        charge: Charge::Eq1,
        throttle: Throttle::Text,
        gain_pct: 100,
        cumulative: true,
    };
    let rows: [(&str, Scheme, Gpu); 11] = [
        ("FIFO", Scheme::Fifo, Gpu::DEFAULT),
        (
            "paper: Eq. 1, text throttle, Alg. 2",
            Scheme::PAPER,
            Gpu::DEFAULT,
        ),
        ("Alg. 2 cumulative, as listed", listed, Gpu::DEFAULT),
        (
            "listing throttle",
            d(Charge::Eq1, Throttle::Listing, 100),
            Gpu::DEFAULT,
        ),
        (
            "no throttle",
            d(Charge::Eq1, Throttle::Off, 100),
            Gpu::DEFAULT,
        ),
        (
            "no Alg. 2 (Eq. 2 size throughout)",
            d(Charge::Eq1, Throttle::Text, 0),
            Gpu::DEFAULT,
        ),
        (
            "charge runtime only",
            d(Charge::Runtime, Throttle::Text, 100),
            Gpu::DEFAULT,
        ),
        (
            "charge lane share T_n/T_all",
            d(Charge::Share, Throttle::Text, 100),
            Gpu::DEFAULT,
        ),
        (
            "beta 256 (3 ms rounds)",
            Scheme::PAPER,
            Gpu {
                beta: 256,
                ..Gpu::DEFAULT
            },
        ),
        (
            "beta 65536 (0.8 s rounds)",
            Scheme::PAPER,
            Gpu {
                beta: 65_536,
                ..Gpu::DEFAULT
            },
        ),
        (
            "launch 1 ms",
            Scheme::PAPER,
            Gpu {
                launch_ns: 1_000_000,
                ..Gpu::DEFAULT
            },
        ),
    ];
    for (name, scheme, gpu) in rows {
        let (w, a, b, waits) = digest(&tasks, scheme, &gpu);
        out += &format!("{name:<41}  {w:>5.2}  {a:>7.2}  {b:>8.2}  {waits:>5}\n");
    }
    out
}

/// Everything `gvt-threads` prints.
pub fn all() -> String {
    let gpu = Gpu::DEFAULT;
    let mut out = String::new();
    for e in experiments() {
        out += &experiment_table(&e, &gpu);
        out += "\n";
    }
    out += &summary_table(&gpu);
    out += "\n";
    out += &variants_table();
    out
}

#[cfg(test)]
mod tests {
    use super::super::RunResult;
    use super::*;

    #[test]
    fn solo_times_follow_table2_calibration() {
        let g = Gpu::DEFAULT;
        let t14 = matmul("14K", 14_000).solo_ns(g.lanes);
        assert!((1_150_000_000..1_160_000_000).contains(&t14), "{t14}");
        assert_eq!(sobel("x", 8192).solo_ns(g.lanes), 655_360_000);
        assert_eq!(sobel("x", 2560).solo_ns(g.lanes), 64_000_000);
        assert_eq!(binomial("x", 10_000_000).solo_ns(g.lanes), 1_953_125_000);
    }

    #[test]
    fn a_lone_task_runs_at_full_speed_under_both_schemes() {
        let g = Gpu::DEFAULT;
        let t = [matmul("9K", 9000)];
        let solo = t[0].solo_ns(g.lanes);
        let f = run(&t, Scheme::Fifo, &g, 0, 1);
        assert_eq!(f.groups, [1]);
        assert!(f.time_ns[0].abs_diff(solo) <= 1, "{f:?} vs {solo}");
        // Divided alone: every group pays the launch, nothing else.
        let d = run(&t, Scheme::PAPER, &g, 0, 1);
        let groups = d.groups[0];
        assert!(groups > 1);
        let expect = solo + groups * g.launch_ns;
        assert!(
            d.time_ns[0].abs_diff(expect) < groups * 2,
            "{d:?} vs {expect}"
        );
        assert_eq!(d.waits, [0]);
    }

    #[test]
    fn fifo_serialises_and_division_co_runs() {
        let g = Gpu::DEFAULT;
        let (a, b) = (matmul("9K", 9000), matmul("14K", 14_000));
        let (sa, sb) = (a.solo_ns(g.lanes), b.solo_ns(g.lanes));
        // Simultaneous requests, FIFO in VM order: B waits for A.
        let f = run(&[a, b], Scheme::Fifo, &g, 0, 1);
        assert!(f.time_ns[0].abs_diff(sa) <= 1);
        assert!(f.time_ns[1].abs_diff(sa + sb) <= 2, "{f:?}");
        // Divided: A finishes in about twice its solo time (it shares the
        // lanes half and half), well before A + B.
        let d: RunResult = run(&[a, b], Scheme::PAPER, &g, 0, 1);
        assert!(d.time_ns[0] < sa * 5 / 2, "{d:?}");
        assert!(d.time_ns[0] > sa * 3 / 2, "{d:?}");
        // Work conserving: the last completion is the total work plus
        // launches, whatever the interleaving.
        let last = *d.time_ns.iter().max().expect("two");
        let launches: u64 = d.groups.iter().sum::<u64>() * g.launch_ns;
        assert!(last <= sa + sb + launches, "{d:?}");
    }

    #[test]
    fn division_narrows_the_papers_mixed_spread() {
        let g = Gpu::DEFAULT;
        let tasks = experiments().remove(0).tasks;
        let (fw, f9, f14, _) = digest(&tasks, Scheme::Fifo, &g);
        let (dw, d9, d14, _) = digest(&tasks, Scheme::PAPER, &g);
        // FIFO: the short tasks' worst case is several times their best.
        assert!(fw > 3.0, "FIFO worst {fw}");
        assert!(dw < fw / 2.0, "divided worst {dw} vs FIFO {fw}");
        // The short tasks are not slower on average, the long ones a bit.
        assert!(d9 <= f9, "{d9} vs {f9}");
        assert!(d14 >= f14 * 0.9, "{d14} vs {f14}");
    }

    #[test]
    fn listing_and_text_throttles_stop_different_rounds() {
        let tasks = experiments().remove(0).tasks;
        let g = Gpu::DEFAULT;
        let text = digest(&tasks, Scheme::PAPER, &g).3;
        let listing = digest(
            &tasks,
            Scheme::Divide {
                charge: Charge::Eq1,
                throttle: Throttle::Listing,
                gain_pct: 100,
                cumulative: false,
            },
            &g,
        )
        .3;
        assert_ne!(text, listing);
    }

    #[test]
    fn summary_quartiles() {
        assert_eq!(summary(&[5, 1, 4, 2, 3]), (1, 2, 3, 4, 5));
        assert_eq!(summary(&[7]), (7, 7, 7, 7, 7));
    }
}
