// SPDX-License-Identifier: GPL-2.0

//! Exact minimum-copy static placement for small cases (branch and bound).
//!
//! For a fixed switch-in trace, a slot shared by the vGPUs `O` is copied once
//! for every maximal run of one vGPU in the trace restricted to `O` (the
//! first switch-in counts: the GTT starts empty). That count depends only on
//! `O`, so it is tabulated for all `2^n` subsets, and a placement costs the
//! sum over slots of its occupant set's count. The count never decreases
//! when a vGPU is added to `O` (removing an element from a sequence never
//! adds a run), so the cost of a partial placement is a lower bound for
//! every completion: the search places vGPUs largest first, tries every
//! start, and prunes when the bound reaches the best complete cost.

/// Copies of every occupant subset for `trace` over `n` vGPUs.
pub fn subset_costs(n: usize, trace: &[u8]) -> Vec<u64> {
    (0..1usize << n)
        .map(|mask| {
            let mut last = u8::MAX;
            let mut runs = 0u64;
            for &v in trace {
                if mask >> v & 1 == 1 && v != last {
                    runs += 1;
                    last = v;
                }
            }
            runs
        })
        .collect()
}

/// High-GM copies of a static placement (`starts[i]`, `sizes[i]`).
pub fn placement_cost(sizes: &[u16], starts: &[u16], m: u16, costs: &[u64]) -> u64 {
    let mut masks = vec![0usize; m as usize];
    for (i, (&s, &p)) in sizes.iter().zip(starts).enumerate() {
        for x in p..p + s {
            masks[x as usize] |= 1 << i;
        }
    }
    masks.iter().map(|&k| costs[k]).sum()
}

struct Search<'a> {
    sizes: &'a [u16],
    order: Vec<usize>,
    m: u16,
    costs: &'a [u64],
    masks: Vec<usize>,
    starts: Vec<u16>,
    best: u64,
    best_starts: Vec<u16>,
    nodes: u64,
}

impl Search<'_> {
    fn bound(&self) -> u64 {
        self.masks.iter().map(|&k| self.costs[k]).sum()
    }

    fn dfs(&mut self, k: usize) {
        self.nodes += 1;
        if k == self.order.len() {
            let c = self.bound();
            if c < self.best {
                self.best = c;
                self.best_starts = self.starts.clone();
            }
            return;
        }
        let i = self.order[k];
        let s = self.sizes[i];
        for p in 0..=self.m - s {
            for x in p..p + s {
                self.masks[x as usize] |= 1 << i;
            }
            if self.bound() < self.best {
                self.starts[i] = p;
                self.dfs(k + 1);
            }
            for x in p..p + s {
                self.masks[x as usize] &= !(1 << i);
            }
        }
    }
}

/// Result of the exact search.
#[derive(Clone, Debug)]
pub struct Optimum {
    /// Minimum high-GM slot copies over the trace.
    pub copies: u64,
    /// A placement achieving it.
    pub starts: Vec<u16>,
    /// Search nodes visited.
    pub nodes: u64,
}

/// Minimum-copy static placement of `sizes` on `m` slots for `trace`;
/// `upper` (a known placement and its cost) seeds the bound.
pub fn optimal(sizes: &[u16], m: u16, trace: &[u8], upper: Option<(u64, Vec<u16>)>) -> Optimum {
    let n = sizes.len();
    assert!(n <= 16, "exact search is for small cases");
    let costs = subset_costs(n, trace);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let (best, best_starts) = match upper {
        Some((c, s)) => (c, s),
        None => (u64::MAX, vec![0; n]),
    };
    let mut s = Search {
        sizes,
        order,
        m,
        costs: &costs,
        masks: vec![0; m as usize],
        starts: vec![0; n],
        best,
        best_starts,
        nodes: 0,
    };
    s.dfs(0);
    Optimum {
        copies: s.best,
        starts: s.best_starts,
        nodes: s.nodes,
    }
}

/// Lower bound on the high-GM copies of *any* static placement of `sizes`
/// on `m` slots for `trace` (usable when exact search is out of reach).
///
/// Rank vGPUs by switch-in count `a_i` (ties by id). In a slot shared by
/// `O`, let `t` be its top-ranked member. Every other member `j` pays
/// `runs_j(O) >= runs_j({j, t})` copies (dropping other sharers from the
/// sequence never splits a run of `j`), hence at least
/// `g_j = min over t ranked above j of runs_j({j, t})`. Only the top pays
/// nothing in this bound, and each slot has one top, so
///
/// ```text
/// copies >= sum_i S_i * g_i - (the m largest unit values g_i, at most S_i each)
/// ```
///
/// (contiguity is dropped, so the bound is optimistic for the placement).
pub fn lower_bound(sizes: &[u16], m: u16, trace: &[u8]) -> u64 {
    let n = sizes.len();
    let mut a = vec![0u64; n];
    for &v in trace {
        a[v as usize] += 1;
    }
    let rank = |i: usize| (a[i], i);
    let mut g = vec![0u64; n];
    for (j, gj) in g.iter_mut().enumerate() {
        let mut best = u64::MAX;
        for t in 0..n {
            if t == j || rank(t) < rank(j) {
                continue;
            }
            let mut last = u8::MAX;
            let mut runs = 0u64;
            for &v in trace {
                if (v as usize == j || v as usize == t) && v != last {
                    if v as usize == j {
                        runs += 1;
                    }
                    last = v;
                }
            }
            best = best.min(runs);
        }
        *gj = if best == u64::MAX { 0 } else { best };
    }
    let mut total: u64 = sizes.iter().zip(&g).map(|(&s, &x)| u64::from(s) * x).sum();
    let mut units: Vec<(u64, u16)> = g.iter().zip(sizes).map(|(&x, &s)| (x, s)).collect();
    units.sort_by_key(|u| std::cmp::Reverse(u.0));
    let mut left = m;
    for (save, s) in units {
        let take = s.min(left);
        total -= save * u64::from(take);
        left -= take;
    }
    total
}

/// High-GM copies of a static placement over `trace`, slot by slot (for
/// cases too large for [`subset_costs`]).
pub fn placement_cost_direct(sizes: &[u16], starts: &[u16], m: u16, trace: &[u8]) -> u64 {
    let mut total = 0;
    for s in 0..m {
        let mask: u64 = sizes
            .iter()
            .zip(starts)
            .enumerate()
            .filter(|(_, (&z, &p))| p <= s && s < p + z)
            .fold(0, |a, (i, _)| a | 1 << i);
        let mut last = u8::MAX;
        for &v in trace {
            if mask >> v & 1 == 1 && v != last {
                total += 1;
                last = v;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placement of `sizes` on `m` slots, the slow way.
    fn brute_force(sizes: &[u16], m: u16, trace: &[u8]) -> u64 {
        let mut best = u64::MAX;
        let mut starts = vec![0u16; sizes.len()];
        loop {
            best = best.min(placement_cost_direct(sizes, &starts, m, trace));
            let mut i = 0;
            loop {
                if i == sizes.len() {
                    return best;
                }
                starts[i] += 1;
                if starts[i] + sizes[i] <= m {
                    break;
                }
                starts[i] = 0;
                i += 1;
            }
        }
    }

    #[test]
    fn subset_costs_count_runs() {
        let trace = [0u8, 1, 0, 0, 2, 1];
        let c = subset_costs(3, &trace);
        assert_eq!(c[0b000], 0);
        assert_eq!(c[0b001], 1, "vGPU 0 alone: its switch-ins are one run");
        assert_eq!(c[0b010], 1, "1 . . . 1: no one in between, one run");
        assert_eq!(c[0b011], 4, "0 1 00 1");
        assert_eq!(
            c[0b101], 2,
            "000 2: vGPU 1 in between does not split 0's run"
        );
        assert_eq!(c[0b111], 5, "0 1 00 2 1");
        // Two vGPUs of 2 slots on 3 slots share the middle one.
        assert_eq!(placement_cost(&[2, 2], &[0, 1], 3, &c), 1 + 4 + 1);
        assert_eq!(
            placement_cost(&[2, 2], &[0, 1], 3, &c),
            placement_cost_direct(&[2, 2], &[0, 1], 3, &trace)
        );
    }

    #[test]
    fn exact_search_matches_brute_force_and_bounds_hold() {
        let mut rng = gvt_core::testing::Rng::new(99);
        for case in 0..12 {
            let m = 6 + rng.below(4) as u16;
            let n = 2 + rng.below(3) as usize;
            let sizes: Vec<u16> = (0..n)
                .map(|_| 1 + rng.below(u64::from(m / 2)) as u16)
                .collect();
            let trace: Vec<u8> = (0..40).map(|_| rng.below(n as u64) as u8).collect();
            let want = brute_force(&sizes, m, &trace);
            let opt = optimal(&sizes, m, &trace, None);
            assert_eq!(opt.copies, want, "case {case}: {sizes:?} on {m}");
            assert_eq!(placement_cost_direct(&sizes, &opt.starts, m, &trace), want);
            assert!(opt.starts.iter().zip(&sizes).all(|(&p, &s)| p + s <= m));
            let lb = lower_bound(&sizes, m, &trace);
            assert!(lb <= want, "case {case}: bound {lb} above optimum {want}");
            // A seed at the optimum cannot be beaten and is returned as is.
            let seeded = optimal(&sizes, m, &trace, Some((want, opt.starts.clone())));
            assert_eq!((seeded.copies, seeded.starts), (want, opt.starts));
        }
        // Enough room for everyone: each vGPU pays only its first switch-in.
        assert_eq!(optimal(&[2, 3], 5, &[0, 1, 0, 1], None).copies, 5);
        assert_eq!(lower_bound(&[2, 3], 5, &[0, 1, 0, 1]), 0);
    }
}
