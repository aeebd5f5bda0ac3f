// SPDX-License-Identifier: GPL-2.0

//! Fairness figures: VMCG's lambda, FairGV's min-max ratio and Jain's index.
//!
//! All three are computed from pairs `(weight, throughput)` of the *active*
//! vGPUs of a window, in integer arithmetic. Definitions (also in
//! `Documentation/gvt-rs/scheduling.rst`):
//!
//! * entitled share `w_i = weight_i / sum(weight)`, received share
//!   `w'_i = G_i / sum(G)`;
//! * `lambda = sum |w_i - w'_i|` (VMCG, 0 is perfect, at most 2);
//! * `x_i = w'_i / w_i` (throughput over fair throughput), min-max ratio
//!   `MMR = min x_i / max x_i` (FairGV, 1 is perfect);
//! * Jain's index `(sum x_i)^2 / (n * sum x_i^2)` (1 is perfect, `1/n` worst).
//!
//! With no active vGPU, or no throughput at all, every figure reports
//! "perfect" (lambda 0, MMR 1, Jain 1): nothing was shared unfairly.
//!
//! FairGV's *aggregated overhead* ([`aggregated_overhead_ppm`]) is the
//! performance figure beside the min-max ratio: the ideal aggregated
//! throughput over the measured one. With each VM's throughput normalised
//! by its throughput alone on the GPU (`T_i / A_i`, the inverse of its
//! normalised run time), the ideal sum is 1 (the GPU time-shared without
//! loss), so the overhead is `1 / sum(T_i / A_i)`: 1 is ideal, above 1 is
//! throughput lost to sharing (switches, idle GPU, waiting CPUs).

use super::fixed::{
    mul_div_round,
    mul_div_sat,
    PPM, //
};

const PPB: u64 = 1_000_000_000;

/// Fairness of one measurement window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fairness {
    /// Number of active vGPUs the figures cover.
    pub active: u32,
    /// VMCG's lambda in parts per million (0 best, 2_000_000 worst).
    pub lambda_ppm: u32,
    /// FairGV's min-max ratio in parts per million (1_000_000 best).
    pub min_max_ppm: u32,
    /// Jain's fairness index in parts per million (1_000_000 best).
    pub jain_ppm: u32,
}

impl Fairness {
    /// The figures of an empty window.
    pub const PERFECT: Self = Self {
        active: 0,
        lambda_ppm: 0,
        min_max_ppm: PPM as u32,
        jain_ppm: PPM as u32,
    };
}

/// Computes the fairness of `(weight, throughput)` pairs.
///
/// Pairs with weight 0 are ignored. Throughput is in any unit (GPU
/// nanoseconds, frames, 1/run time) as long as it is the same for all pairs.
pub fn fairness<I>(pairs: I) -> Fairness
where
    I: Iterator<Item = (u64, u64)> + Clone,
{
    let mut n: u64 = 0;
    let mut wsum: u64 = 0;
    let mut gsum: u64 = 0;
    for (w, g) in pairs.clone() {
        if w == 0 {
            continue;
        }
        n = n.saturating_add(1);
        wsum = wsum.saturating_add(w);
        gsum = gsum.saturating_add(g);
    }
    if n == 0 || gsum == 0 {
        return Fairness {
            active: n.min(u64::from(u32::MAX)) as u32,
            ..Fairness::PERFECT
        };
    }
    // lambda in parts per billion, then rounded to ppm.
    let mut lambda_ppb: u64 = 0;
    // x_i in ppb of "fair": x_i = (G_i / G) * (W / w_i).
    let mut xmin = u64::MAX;
    let mut xmax: u64 = 0;
    let mut xsum: u64 = 0;
    for (w, g) in pairs.clone() {
        if w == 0 {
            continue;
        }
        let ent = mul_div_sat(w, PPB, wsum);
        let got = mul_div_sat(g, PPB, gsum);
        lambda_ppb = lambda_ppb.saturating_add(ent.abs_diff(got));
        let x = mul_div_sat(got, wsum, w);
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        xsum = xsum.saturating_add(x);
    }
    let lambda_ppm = (lambda_ppb.saturating_add(500) / 1000).min(2 * PPM);
    let min_max_ppm = mul_div_round(xmin, PPM, xmax).unwrap_or(PPM).min(PPM);
    // Jain = 1 / (n * sum y_i^2) with y_i = x_i / sum x (in ppb, y_i^2 <= 1e18).
    let mut ysq: u64 = 0;
    for (w, g) in pairs {
        if w == 0 {
            continue;
        }
        let got = mul_div_sat(g, PPB, gsum);
        let x = mul_div_sat(got, wsum, w);
        let y = mul_div_sat(x, PPB, xsum);
        ysq = ysq.saturating_add(y.saturating_mul(y));
    }
    let jain_ppm = match ysq {
        0 => PPM,
        s => mul_div_round(PPM, (PPB * PPB).checked_div(n).unwrap_or(0), s)
            .unwrap_or(PPM)
            .min(PPM),
    };
    Fairness {
        active: n.min(u64::from(u32::MAX)) as u32,
        lambda_ppm: lambda_ppm as u32,
        min_max_ppm: min_max_ppm as u32,
        jain_ppm: jain_ppm as u32,
    }
}

/// FairGV's aggregated overhead in ppm from `(alone, shared)` throughput
/// pairs (any unit, the same within a pair): `1 / sum(shared_i / alone_i)`.
/// `None` when there is no pair with an alone throughput, or nothing was
/// done at all.
pub fn aggregated_overhead_ppm<I>(pairs: I) -> Option<u32>
where
    I: Iterator<Item = (u64, u64)>,
{
    let mut sum_ppb: u64 = 0;
    let mut any = false;
    for (alone, shared) in pairs {
        if alone == 0 {
            continue;
        }
        any = true;
        sum_ppb = sum_ppb.saturating_add(mul_div_sat(shared, PPB, alone));
    }
    if !any || sum_ppb == 0 {
        return None;
    }
    mul_div_round(PPM, PPB, sum_ppb).map(|o| o.min(u64::from(u32::MAX)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(p: &[(u64, u64)]) -> Fairness {
        fairness(p.iter().copied())
    }

    #[test]
    fn vmcg_teapot_lambda() {
        // VMCG Sec. 6.3, Fig. 5c: teapot FPS in 3 DomUs at weights 1:1:1.
        // gVirt: 199, 227, 248 FPS -> lambda 0.076 (the paper rounds to 0.09).
        let g = f(&[(1, 1990), (1, 2270), (1, 2480)]);
        assert!(g.lambda_ppm.abs_diff(76_162) <= 2, "{}", g.lambda_ppm);
        // VMCG: 240.6, 237.1, 237.0 FPS -> lambda 0.0066 (paper: 0.01).
        let v = f(&[(1, 2406), (1, 2371), (1, 2370)]);
        assert!(v.lambda_ppm.abs_diff(6_622) <= 2, "{}", v.lambda_ppm);
    }

    #[test]
    fn perfect_and_degenerate() {
        let p = f(&[(1, 100), (2, 200), (3, 300)]);
        assert_eq!(p.lambda_ppm, 0);
        assert_eq!(p.min_max_ppm, 1_000_000);
        assert_eq!(p.jain_ppm, 1_000_000);
        assert_eq!(f(&[]), Fairness::PERFECT);
        let z = f(&[(1, 0), (1, 0)]);
        assert_eq!(z.active, 2);
        assert_eq!(z.lambda_ppm, 0);
        // Weight-0 pairs are ignored.
        assert_eq!(f(&[(0, 5), (1, 7)]).active, 1);
    }

    #[test]
    fn aggregated_overhead() {
        let o = |p: &[(u64, u64)]| aggregated_overhead_ppm(p.iter().copied());
        // Three VMs time-sharing without loss: 1/6 + 2/6 + 3/6 of alone.
        assert_eq!(o(&[(600, 100), (600, 200), (600, 300)]), Some(1_000_000));
        // Everybody at half of the ideal: overhead 2.
        assert_eq!(o(&[(600, 50), (600, 100), (600, 150)]), Some(2_000_000));
        // Different programs normalise by their own alone rates: 0.49 +
        // 0.49 of alone is an overhead of 1/0.98 = 1.020408, 0.49 + 14/30
        // one of 1/0.956667 = 1.045296.
        assert_eq!(o(&[(1000, 490), (300, 147)]), Some(1_020_408));
        assert_eq!(o(&[(1000, 490), (30, 14)]), Some(1_045_296));
        assert_eq!(o(&[]), None);
        assert_eq!(o(&[(0, 5)]), None);
        assert_eq!(o(&[(5, 0)]), None);
    }

    #[test]
    fn starvation_figures() {
        // One of two equal-weight vGPUs gets nothing.
        let s = f(&[(1, 100), (1, 0)]);
        assert_eq!(s.lambda_ppm, 1_000_000);
        assert_eq!(s.min_max_ppm, 0);
        assert_eq!(s.jain_ppm, 500_000);
        // 1:2 weights served 1:1.
        let h = f(&[(1, 100), (2, 100)]);
        assert_eq!(h.min_max_ppm, 500_000);
        assert!(h.lambda_ppm.abs_diff(333_333) <= 1);
        // Jain of x = (1.5, 0.75): 2.25^2 / (2 * 2.8125) = 0.9.
        assert!(h.jain_ppm.abs_diff(900_000) <= 1, "{}", h.jain_ppm);
    }
}
