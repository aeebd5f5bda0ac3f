// SPDX-License-Identifier: GPL-2.0

//! `dymgpu-util`: DymGPU's utilization-based allocator (Algorithm 2), re-run
//! every re-placement period from each vGPU's average utilization.

use super::plan::{
    by_util_desc,
    first_free_window,
    occupancy,
    Items, //
};

/// Algorithm 2. Sorts `items` by non-increasing utilization (older first on
/// ties), packs them from the left while each fits without sharing, and
/// right-aligns every remaining vGPU individually (`P_i = M - S_i`). Like
/// Algorithm 1 the first loop also stops when the vGPUs run out.
pub(crate) fn algorithm2<const V: usize>(items: &mut Items<V>, m: u16) {
    items.sort_by(by_util_desc);
    let mut sum: u32 = 0;
    let mut packing = true;
    for it in items.as_mut_slice() {
        let end = sum.saturating_add(u32::from(it.size));
        if packing && end < u32::from(m) {
            it.start = u16::try_from(sum).unwrap_or(0);
            sum = end;
        } else {
            it.start = m.saturating_sub(it.size);
            packing = false;
        }
    }
}

/// Create rule (the paper gives none): a new vGPU has no utilization history
/// yet, so it takes the leftmost free window if there is one and is
/// otherwise right-aligned as the lowest-utilization vGPUs are. Nobody
/// moves; the next periodic re-placement ranks it by its measured use.
pub(crate) fn create<const V: usize, const M: usize>(cur: &Items<V>, size: u16, m: u16) -> u16 {
    let occ = occupancy::<V, M>(cur, m);
    first_free_window(&occ, size, m).unwrap_or(m.saturating_sub(size))
}
