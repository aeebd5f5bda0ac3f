// SPDX-License-Identifier: GPL-2.0

//! `gscale`: gScale's slot-sharing placement, the baseline of DymGPU.
//!
//! Every slot is scored: an empty slot adds nothing, and each vGPU occupying
//! it adds [`GSCALE_WEIGHT`] (the paper: "weight, deliberately set to a very
//! large value"). The contiguous window with the lowest total wins; ties go
//! to the leftmost window. gScale never moves a placed vGPU.
//!
//! The weight is counted once per occupant. Counting it once per occupied
//! slot (a yes/no score) would not reproduce Fig. 4a: the fourth vGPU would
//! land on slots 0-5 with vGPU1 and vGPU3 and the example would copy 18
//! slots a round instead of the 24 the paper states (see the tests).

/// Score added per occupant of a slot.
pub const GSCALE_WEIGHT: u64 = 1 << 20;

/// Start slot for a new vGPU of `size` slots given the occupancy `occ` of a
/// pool of `m` slots; `None` if `size` is 0 or larger than the pool.
/// `per_occupant` selects the scoring (true: gScale as reproduced).
pub(crate) fn place(occ: &[u8], size: u16, m: u16, per_occupant: bool) -> Option<u16> {
    if size == 0 || size > m {
        return None;
    }
    let last = m.checked_sub(size)?;
    let mut best: Option<(u64, u16)> = None;
    for p in 0..=last {
        let end = usize::from(p.saturating_add(size));
        let score = occ
            .get(usize::from(p)..end)
            .unwrap_or(&[])
            .iter()
            .fold(0u64, |a, &o| {
                let n = if per_occupant {
                    u64::from(o)
                } else {
                    u64::from(o > 0)
                };
                a.saturating_add(n.saturating_mul(GSCALE_WEIGHT))
            });
        // Strictly lower only: the leftmost window wins ties.
        if best.is_none_or(|(b, _)| score < b) {
            best = Some((score, p));
        }
    }
    best.map(|(_, p)| p)
}
