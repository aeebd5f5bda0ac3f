// SPDX-License-Identifier: GPL-2.0

//! `cost`: gvt-rs's cost-aware allocator.
//!
//! # Cost model
//!
//! A slot shared by the vGPUs `O` is copied every time one of them is
//! switched in after another member of `O` last used the slot. If `f_i` is
//! how often vGPU `i` is switched in during a period, `i`'s uses of the slot
//! fall into at most `min(f_i, F - f_i)` separate runs (`F` = sum of `f` over
//! `O`), since two runs of `i` must be separated by a use by somebody else.
//! Each run starts with one copy, so the slot costs at most
//!
//! ```text
//! cost(O) = sum over i in O of min(f_i, F - f_i)      (0 when |O| < 2)
//! ```
//!
//! copies per period, with equality when the schedule interleaves the
//! sharers as much as it can (round robin). The model captures both DymGPU
//! insights at once: with equal rates it is `|O| * f` for a shared slot and 0
//! for an exclusive one (size-based: maximize exclusive slots, stack the
//! rest), and a vGPU with a low rate adds little wherever it goes
//! (utilization-based: busy vGPUs alone, quiet ones together). Rates are the
//! measured switch-ins per re-placement period, not utilization: under round
//! robin a busy vGPU and a lightly loaded one that always has some work are
//! switched in equally often.
//!
//! # Search
//!
//! The placement minimizes `sum over slots of cost(O_s)` plus, for every
//! vGPU that moves, a penalty of `move_penalty_pct` percent of its slots
//! (the relocation copy and the refill). Three starting layouts are improved
//! by local search (each vGPU in turn moves to its best window while
//! anything improves, at most [`MAX_SWEEPS`] sweeps): the current layout,
//! a greedy layout (highest rate first into free windows, the rest
//! right-aligned) and Algorithm 1's layout. The best result wins; ties keep
//! the current layout. Cost: `O(sweeps * N * M * (N + S))` per start.

use super::alloc_dymsize::algorithm1;
use super::monitor::FREQ_ONE;
use super::plan::{
    first_free_window,
    Item,
    Items, //
};
use super::{
    VgpuArray,
    VgpuId, //
};
use core::cmp::Ordering;

/// Most local-search sweeps per starting layout.
pub const MAX_SWEEPS: u32 = 8;

fn bit(id: u8) -> u64 {
    1u64.checked_shl(u32::from(id)).unwrap_or(0)
}

/// Switch-in history the estimator replays: the ring's older and newer
/// parts, oldest first.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Hist<'a> {
    pub older: &'a [u8],
    pub newer: &'a [u8],
}

/// One class of switch-ins in the history: vGPU `v` switched in `count`
/// times with exactly the vGPUs in `others` switched in since its previous
/// switch-in (all bits for its first one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gap {
    others: u64,
    count: u16,
    v: u8,
}

const NO_GAP: Gap = Gap {
    others: 0,
    count: 0,
    v: u8::MAX,
};

/// The history compressed into [`Gap`] classes. A slot shared by `O`
/// needs a copy at a switch-in of `v` in `O` exactly when some other member
/// of `O` ran since `v` last did, so
/// `copies(O) = sum of count over classes with v in O and others & O != 0`:
/// exact for the history, and usually a few dozen classes instead of
/// [`HISTORY`](super::HISTORY) entries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gaps<const H: usize> {
    list: [Gap; H],
    len: usize,
    switches: usize,
}

/// Borrowed view of [`Gaps`] the estimator reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GapView<'a> {
    list: &'a [Gap],
    switches: usize,
}

impl<const H: usize> Gaps<H> {
    pub(crate) const fn new() -> Self {
        Gaps {
            list: [NO_GAP; H],
            len: 0,
            switches: 0,
        }
    }

    pub(crate) fn view(&self) -> GapView<'_> {
        GapView {
            list: self.list.get(..self.len).unwrap_or(&[]),
            switches: self.switches,
        }
    }

    /// Rebuilds from a history (oldest first).
    pub(crate) fn build(&mut self, hist: Hist<'_>) {
        self.len = 0;
        self.switches = 0;
        let mut since = [0u64; 64];
        let mut seen: u64 = 0;
        for &v in hist.older.iter().chain(hist.newer.iter()) {
            let b = bit(v);
            if b == 0 {
                continue; // a destroyed vGPU's entry
            }
            let others = if seen & b == 0 {
                u64::MAX
            } else {
                since.get(usize::from(v)).copied().unwrap_or(u64::MAX)
            };
            seen |= b;
            for (w, x) in since.iter_mut().enumerate() {
                if w != usize::from(v) {
                    *x |= b;
                } else {
                    *x = 0;
                }
            }
            self.switches = self.switches.saturating_add(1);
            // One class at most per history entry (at most `H`): a new one fits.
            let len = self.len;
            let list = self.list.get_mut(..len).unwrap_or(&mut []);
            if let Some(g) = list.iter_mut().find(|g| g.v == v && g.others == others) {
                g.count = g.count.saturating_add(1);
            } else if let Some(g) = self.list.get_mut(len) {
                *g = Gap {
                    others,
                    count: 1,
                    v,
                };
                self.len = len.saturating_add(1);
            }
        }
    }
}

impl GapView<'_> {
    /// Copies a slot shared by `mask` would have needed over the history.
    fn runs(&self, mask: u64) -> u64 {
        self.list
            .iter()
            .filter(|g| mask & bit(g.v) != 0 && mask & g.others != 0)
            .fold(0u64, |a, g| a.saturating_add(u64::from(g.count)))
    }
}

/// Fewest recorded switch-ins before the history replaces the rate model.
pub const MIN_HISTORY: usize = 64;

/// Cost estimator: per-vGPU rates, and the recent switch-in history when
/// there is enough of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Est<'a, const V: usize> {
    pub freq: VgpuArray<u32>,
    pub gaps: Option<GapView<'a>>,
    /// Sum of the rates (scales history runs to copies per period).
    total: u64,
}

impl<'a, const V: usize> Est<'a, V> {
    pub(crate) fn new(items: &Items<V>, gaps: Option<GapView<'a>>) -> Self {
        let freq = freq_table(items);
        let total = freq
            .values()
            .fold(0u64, |a, &f| a.saturating_add(u64::from(f)));
        let gaps = gaps.filter(|g| g.switches >= MIN_HISTORY);
        Est { freq, gaps, total }
    }

    /// Predicted copies per period (fixed point, [`FREQ_ONE`] = one copy)
    /// of one slot shared by the vGPUs in `mask`.
    pub(crate) fn cost(&self, mask: u64) -> u64 {
        if mask.count_ones() < 2 {
            return 0;
        }
        if let Some(g) = self.gaps {
            // Copies over the history, scaled from its switch-ins to the
            // switch-ins of a period (`total` / FREQ_ONE).
            let n = u64::try_from(g.switches).unwrap_or(u64::MAX);
            return g
                .runs(mask)
                .saturating_mul(self.total)
                .checked_div(n)
                .unwrap_or(0);
        }
        set_cost(mask, &self.freq)
    }
}

/// Rate model of one slot shared by the vGPUs in `mask` (rates `freq`
/// indexed by id): `sum of min(f_i, F - f_i)`.
pub(crate) fn set_cost(mask: u64, freq: &VgpuArray<u32>) -> u64 {
    if mask.count_ones() < 2 {
        return 0;
    }
    // Bit `i` of a mask is id `i`, below 64 = `MAX_VGPUS`.
    let f = |i: u32| u64::from(freq[VgpuId::wrapping(i)]);
    let mut total: u64 = 0;
    let mut b = mask;
    while b != 0 {
        total = total.saturating_add(f(b.trailing_zeros()));
        b &= b.wrapping_sub(1);
    }
    let mut cost: u64 = 0;
    let mut b = mask;
    while b != 0 {
        let fi = f(b.trailing_zeros());
        cost = cost.saturating_add(fi.min(total.saturating_sub(fi)));
        b &= b.wrapping_sub(1);
    }
    cost
}

/// Occupant mask of every slot.
pub(crate) fn masks<const V: usize, const M: usize>(items: &Items<V>, m: u16) -> [u64; M] {
    let mut mk = [0u64; M];
    for it in items.as_slice() {
        set_range(&mut mk, it.start, it.size, m, bit(it.id.raw()), true);
    }
    mk
}

fn set_range<const M: usize>(mk: &mut [u64; M], start: u16, size: u16, m: u16, b: u64, on: bool) {
    let end = usize::from(start.saturating_add(size).min(m));
    for x in mk.get_mut(usize::from(start)..end).unwrap_or(&mut []) {
        if on {
            *x |= b;
        } else {
            *x &= !b;
        }
    }
}

/// Predicted copies per period of a whole layout.
pub(crate) fn total_cost<const V: usize, const M: usize>(mk: &[u64; M], est: &Est<'_, V>) -> u64 {
    // Consecutive slots usually share a mask: evaluate each run once.
    let mut prev: Option<(u64, u64)> = None;
    let mut sum: u64 = 0;
    for &x in mk.iter() {
        let c = match prev {
            Some((pm, pc)) if pm == x => pc,
            _ => est.cost(x),
        };
        prev = Some((x, c));
        sum = sum.saturating_add(c);
    }
    sum
}

/// Rates indexed by id.
pub(crate) fn freq_table<const V: usize>(items: &Items<V>) -> VgpuArray<u32> {
    let mut f = VgpuArray::filled(0);
    for it in items.as_slice() {
        f[it.id] = it.freq;
    }
    f
}

/// Penalty for moving a vGPU of `size` slots, in cost units.
pub(crate) fn penalty(size: u16, pct: u32) -> u64 {
    u64::from(size)
        .saturating_mul(u64::from(FREQ_ONE))
        .saturating_mul(u64::from(pct))
        .checked_div(100)
        .unwrap_or(0)
}

/// Best start for vGPU `id` of `size` slots given the other occupants in
/// `mk`: least added cost plus `pen` if it is not `home`; ties prefer
/// `home`, then `cur`, then the leftmost window.
#[expect(clippy::too_many_arguments)]
pub(crate) fn best_window<const V: usize, const M: usize>(
    mk: &[u64; M],
    m: u16,
    id: VgpuId,
    size: u16,
    est: &Est<'_, V>,
    home: Option<u16>,
    cur: Option<u16>,
    pen: u64,
) -> Option<u16> {
    let last = m.checked_sub(size)?;
    if size == 0 {
        return None;
    }
    let b = bit(id.raw());
    let mut add = [0u64; M];
    let mut prev: Option<(u64, u64)> = None;
    for (a, &x) in add.iter_mut().zip(mk.iter()).take(usize::from(m)) {
        *a = match prev {
            Some((pm, pa)) if pm == x => pa,
            _ => est.cost(x | b).saturating_sub(est.cost(x)),
        };
        prev = Some((x, *a));
    }
    let rank = |p: u16| (u8::from(Some(p) != home), u8::from(Some(p) != cur));
    let mut best: Option<(u64, (u8, u8), u16)> = None;
    for p in 0..=last {
        let end = usize::from(p.saturating_add(size));
        let mut c = add
            .get(usize::from(p)..end)
            .unwrap_or(&[])
            .iter()
            .fold(0u64, |s, &x| s.saturating_add(x));
        if home.is_some_and(|h| h != p) {
            c = c.saturating_add(pen);
        }
        let r = rank(p);
        let better = match best {
            None => true,
            Some((bc, br, _)) => c < bc || (c == bc && r < br),
        };
        if better {
            best = Some((c, r, p));
        }
    }
    best.map(|(_, _, p)| p)
}

fn by_freq_desc(a: &Item, b: &Item) -> Ordering {
    b.freq
        .cmp(&a.freq)
        .then(a.seq.cmp(&b.seq))
        .then(a.id.cmp(&b.id))
}

/// Local search from the starts in `items`; returns the objective (layout
/// cost plus move penalties relative to `home`).
pub(crate) fn improve<const V: usize, const M: usize>(
    items: &mut Items<V>,
    home: &Items<V>,
    m: u16,
    pct: u32,
    gaps: Option<GapView<'_>>,
) -> u64 {
    items.sort_by(by_freq_desc);
    let est = Est::new(items, gaps);
    let mut mk = masks::<V, M>(items, m);
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for it in items.as_mut_slice() {
            let b = bit(it.id.raw());
            set_range(&mut mk, it.start, it.size, m, b, false);
            let h = home.get_by_id(it.id).map(|x| x.start);
            let p = best_window(
                &mk,
                m,
                it.id,
                it.size,
                &est,
                h,
                Some(it.start),
                penalty(it.size, pct),
            )
            .unwrap_or(it.start);
            set_range(&mut mk, p, it.size, m, b, true);
            if p != it.start {
                it.start = p;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    objective::<V, M>(items, home, m, pct, &est)
}

/// Layout cost plus move penalties relative to `home`.
pub(crate) fn objective<const V: usize, const M: usize>(
    items: &Items<V>,
    home: &Items<V>,
    m: u16,
    pct: u32,
    est: &Est<'_, V>,
) -> u64 {
    let mk = masks::<V, M>(items, m);
    let mut c = total_cost(&mk, est);
    for it in items.as_slice() {
        if home.get_by_id(it.id).is_some_and(|h| h.start != it.start) {
            c = c.saturating_add(penalty(it.size, pct));
        }
    }
    c
}

/// Greedy starting layout: highest rate first into the leftmost free window
/// (skipping vGPUs that no longer fit), the rest right-aligned.
fn greedy<const V: usize, const M: usize>(items: &mut Items<V>, m: u16) {
    items.sort_by(by_freq_desc);
    let mut occ = [0u8; M];
    let mut placed = [false; V];
    for (it, pl) in items.as_mut_slice().iter_mut().zip(placed.iter_mut()) {
        if let Some(p) = first_free_window(&occ, it.size, m) {
            it.start = p;
            super::plan::add_range(&mut occ, p, it.size, m);
            *pl = true;
        }
    }
    for (it, pl) in items.as_mut_slice().iter_mut().zip(placed.iter()) {
        if !*pl {
            it.start = m.saturating_sub(it.size);
        }
    }
}

/// Periodic re-placement: the best of the three improved starting layouts.
/// `cur` holds the active vGPUs at their current starts with their rates.
pub(crate) fn replace<const V: usize, const M: usize>(
    cur: &Items<V>,
    m: u16,
    pct: u32,
    gaps: Option<GapView<'_>>,
) -> Items<V> {
    let mut best = *cur;
    let mut best_obj = improve::<V, M>(&mut best, cur, m, pct, gaps);

    let mut g = *cur;
    greedy::<V, M>(&mut g, m);
    let g_obj = improve::<V, M>(&mut g, cur, m, pct, gaps);
    if g_obj < best_obj {
        best = g;
        best_obj = g_obj;
    }

    let mut a = *cur;
    let _ = algorithm1(&mut a, m);
    let a_obj = improve::<V, M>(&mut a, cur, m, pct, gaps);
    if a_obj < best_obj {
        best = a;
    }
    best
}

/// Create: the window adding the least predicted cost for a vGPU with the
/// given rate (the caller uses the mean of the others' rates); nobody moves.
pub(crate) fn create<const V: usize, const M: usize>(cur: &Items<V>, new: Item, m: u16) -> u16 {
    let mut all = *cur;
    all.push(new);
    // The newcomer has no history: use the rate model.
    let est = Est::new(&all, None);
    let mk = masks::<V, M>(cur, m);
    best_window(&mk, m, new.id, new.size, &est, None, None, 0).unwrap_or(m.saturating_sub(new.size))
}
