// SPDX-License-Identifier: GPL-2.0

//! `dymgpu-size`: DymGPU's size-based allocator (Algorithm 1) and the rules
//! the paper gives for creating, destroying and idle vGPUs, with its gaps
//! closed. Every rule is listed in `Documentation/gvt-rs/gm-slots.rst`.

use super::plan::{
    by_size_desc,
    first_free_window,
    has_exclusive,
    occupancy,
    shared_run,
    shared_slots,
    Item,
    Items, //
};

/// Algorithm 1. Sets the start of every item of `items` (which it sorts by
/// non-increasing size, older first on ties) and returns `P_K`, the start of
/// the right-aligned vGPU the rest stack on, or `None` when everything fits
/// without sharing.
///
/// Fixes of the pseudo-code: the first loop also stops when the vGPUs run
/// out (`index < N`), so when `sum(S) < M` it does not read past the end and
/// there is no `K`; sizes are at most `M` (checked at create), so `S_0 = M`
/// gives `P_0 = 0` and no vGPU is ever placed at a negative start.
pub(crate) fn algorithm1<const V: usize>(items: &mut Items<V>, m: u16) -> Option<u16> {
    items.sort_by(by_size_desc);
    let mut sum: u32 = 0;
    let mut anchor: Option<u16> = None;
    for it in items.as_mut_slice() {
        if let Some(pk) = anchor {
            // Sorted, so it.size <= S_K: [P_K, P_K + S) stays inside the pool.
            it.start = pk;
            continue;
        }
        let end = sum.saturating_add(u32::from(it.size));
        if end < u32::from(m) {
            it.start = u16::try_from(sum).unwrap_or(0);
        } else {
            it.start = m.saturating_sub(it.size);
            anchor = Some(it.start);
        }
        sum = end;
    }
    anchor
}

/// Shared slots of `items` placed as they are.
pub(crate) fn shared_of<const V: usize, const M: usize>(items: &Items<V>, m: u16) -> u32 {
    shared_slots(&occupancy::<V, M>(items, m))
}

/// Result of a placement decision: the new layout of every active vGPU
/// (including the one being added) and the new anchor `P_K`.
pub(crate) struct Layout<const V: usize> {
    pub items: Items<V>,
    pub anchor: Option<u16>,
}

/// Candidate A of the create rule: a free window if one exists (nothing gets
/// shared), else on top of the anchor `P_K` (clamped to end inside the
/// pool), else right-aligned as Algorithm 1 places `V_K` (which becomes the
/// anchor). Returns the start and the anchor after the placement.
fn candidate_a<const M: usize>(
    occ: &[u8; M],
    size: u16,
    anchor: Option<u16>,
    m: u16,
) -> (u16, Option<u16>) {
    if let Some(p) = first_free_window(occ, size, m) {
        return (p, anchor);
    }
    let right = m.saturating_sub(size);
    match anchor {
        Some(pk) => (pk.min(right), anchor),
        None => (right, Some(right)),
    }
}

/// Create rule. `cur` holds the active vGPUs, `new` the one to add.
///
/// * If there is no free window and `S_new <= L` (the run of shared slots
///   starting at `P_K`), the new vGPU stacks at `P_K` (the paper's rule).
/// * Otherwise candidate A (above) is compared with re-running Algorithm 1
///   over all vGPUs; the one with fewer shared slots wins and ties keep
///   candidate A, which moves nobody. Without relocation only A is possible.
pub(crate) fn create<const V: usize, const M: usize>(
    cur: &Items<V>,
    new: Item,
    anchor: Option<u16>,
    m: u16,
    relocation: bool,
) -> Layout<V> {
    let occ = occupancy::<V, M>(cur, m);
    let (a_start, a_anchor) = candidate_a(&occ, new.size, anchor, m);
    let mut la = *cur;
    la.push(Item {
        start: a_start,
        ..new
    });
    let a = Layout {
        items: la,
        anchor: a_anchor,
    };
    let free = first_free_window(&occ, new.size, m).is_some();
    let stacks = match anchor {
        Some(pk) => !free && new.size <= shared_run(&occ, pk),
        None => false,
    };
    if stacks || !relocation {
        return a;
    }
    let mut lb = *cur;
    lb.push(new);
    let b_anchor = algorithm1(&mut lb, m);
    if shared_of::<V, M>(&lb, m) < shared_of::<V, M>(&a.items, m) {
        Layout {
            items: lb,
            anchor: b_anchor,
        }
    } else {
        a
    }
}

/// Destroy (and idle) rule: `rest` are the remaining active vGPUs, `gone`
/// the removed one and `occ_before` the occupancy before removal. If `gone`
/// held a slot nobody else used, every remaining vGPU is re-placed with
/// Algorithm 1; otherwise nothing changes (`None`).
pub(crate) fn remove<const V: usize, const M: usize>(
    rest: &Items<V>,
    gone: &Item,
    occ_before: &[u8; M],
    m: u16,
    relocation: bool,
) -> Option<Layout<V>> {
    if !relocation || !has_exclusive(occ_before, gone.start, gone.size) {
        return None;
    }
    let mut items = *rest;
    let anchor = algorithm1(&mut items, m);
    Some(Layout { items, anchor })
}

/// Return rule for a vGPU parked as idle: it keeps its old range (candidate
/// C) unless the create rule's candidates share fewer slots; ties prefer C,
/// then A, then a full re-run of Algorithm 1.
pub(crate) fn unpark<const V: usize, const M: usize>(
    cur: &Items<V>,
    back: Item,
    anchor: Option<u16>,
    m: u16,
    relocation: bool,
) -> Layout<V> {
    let mut lc = *cur;
    lc.push(back);
    let c = Layout { items: lc, anchor };
    if !relocation {
        return c;
    }
    let other = create::<V, M>(cur, back, anchor, m, relocation);
    if shared_of::<V, M>(&other.items, m) < shared_of::<V, M>(&c.items, m) {
        other
    } else {
        c
    }
}
