// SPDX-License-Identifier: GPL-2.0

//! Planning view shared by the allocators: a fixed-capacity list of the
//! vGPUs to place, and occupancy arithmetic over a tentative placement.

use super::VgpuId;
use core::cmp::Ordering;

/// One vGPU as the allocators see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item {
    /// vGPU id (index in the pool).
    pub id: VgpuId,
    /// Size in slots, 1..=pool size.
    pub size: u16,
    /// First slot (input: current placement; output: new placement).
    pub start: u16,
    /// Creation sequence number: the tie-breaker (older first).
    pub seq: u32,
    /// Average utilization over the window, parts per million.
    pub util: u32,
    /// Switch-in rate used by the cost model (fixed point, > 0).
    pub freq: u32,
}

const NO_ITEM: Item = Item {
    id: VgpuId::FIRST,
    size: 0,
    start: 0,
    seq: 0,
    util: 0,
    freq: 0,
};

/// Fixed-capacity list of [`Item`]s.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Items<const V: usize> {
    items: [Item; V],
    len: usize,
}

impl<const V: usize> Items<V> {
    pub(crate) const fn new() -> Self {
        Items {
            items: [NO_ITEM; V],
            len: 0,
        }
    }

    pub(crate) fn push(&mut self, it: Item) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = it;
            self.len = self.len.saturating_add(1);
        }
    }

    pub(crate) fn as_slice(&self) -> &[Item] {
        self.items.get(..self.len).unwrap_or(&[])
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [Item] {
        let len = self.len;
        self.items.get_mut(..len).unwrap_or(&mut [])
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Sorts with a total order (callers end their comparators with `seq`
    /// and `id`, so the unstable sort is deterministic).
    pub(crate) fn sort_by(&mut self, f: impl FnMut(&Item, &Item) -> Ordering) {
        self.as_mut_slice().sort_unstable_by(f);
    }

    pub(crate) fn get_by_id(&self, id: VgpuId) -> Option<&Item> {
        self.as_slice().iter().find(|i| i.id == id)
    }
}

/// Number of vGPUs of `items` covering each slot of a pool of `m` slots.
pub(crate) fn occupancy<const V: usize, const M: usize>(items: &Items<V>, m: u16) -> [u8; M] {
    let mut occ = [0u8; M];
    for it in items.as_slice() {
        add_range(&mut occ, it.start, it.size, m);
    }
    occ
}

/// Adds one occupant to slots `[start, start + size)` (clipped to `m`).
pub(crate) fn add_range<const M: usize>(occ: &mut [u8; M], start: u16, size: u16, m: u16) {
    let end = start.saturating_add(size).min(m);
    let r = occ
        .get_mut(usize::from(start)..usize::from(end))
        .unwrap_or(&mut []);
    for o in r {
        *o = o.saturating_add(1);
    }
}

/// Number of slots with two or more occupants (DymGPU's "shared slots").
pub(crate) fn shared_slots(occ: &[u8]) -> u32 {
    occ.iter()
        .fold(0u32, |a, &o| if o >= 2 { a.saturating_add(1) } else { a })
}

/// Whether slots `[start, start + size)` hold exactly one occupant somewhere
/// (the vGPU owning that range has an unshared slot).
pub(crate) fn has_exclusive(occ: &[u8], start: u16, size: u16) -> bool {
    let end = usize::from(start.saturating_add(size));
    occ.get(usize::from(start)..end).unwrap_or(&[]).contains(&1)
}

/// Leftmost start of a window of `size` slots that are all free (occupancy
/// 0) in the first `m` slots of `occ`.
pub(crate) fn first_free_window(occ: &[u8], size: u16, m: u16) -> Option<u16> {
    if size == 0 || size > m {
        return None;
    }
    let mut run: u16 = 0;
    for (s, &o) in occ.iter().take(usize::from(m)).enumerate() {
        if o == 0 {
            run = run.saturating_add(1);
            if run >= size {
                let end = u16::try_from(s).ok()?.checked_add(1)?;
                return end.checked_sub(size);
            }
        } else {
            run = 0;
        }
    }
    None
}

/// How many disjoint free windows of `size` slots the pool has.
pub(crate) fn free_windows(occ: &[u8], size: u16, m: u16) -> u32 {
    if size == 0 {
        return 0;
    }
    let mut n: u32 = 0;
    let mut run: u16 = 0;
    for &o in occ.iter().take(usize::from(m)) {
        if o == 0 {
            run = run.saturating_add(1);
            if run == size {
                n = n.saturating_add(1);
                run = 0;
            }
        } else {
            run = 0;
        }
    }
    n
}

/// Length of the run of shared slots (occupancy >= 2) beginning at `start`.
pub(crate) fn shared_run(occ: &[u8], start: u16) -> u16 {
    let n = occ
        .get(usize::from(start)..)
        .unwrap_or(&[])
        .iter()
        .take_while(|&&o| o >= 2)
        .count();
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Comparator: larger size first, then older, then lower id.
pub(crate) fn by_size_desc(a: &Item, b: &Item) -> Ordering {
    b.size
        .cmp(&a.size)
        .then(a.seq.cmp(&b.seq))
        .then(a.id.cmp(&b.id))
}

/// Comparator: higher utilization first, then older, then lower id.
pub(crate) fn by_util_desc(a: &Item, b: &Item) -> Ordering {
    b.util
        .cmp(&a.util)
        .then(a.seq.cmp(&b.seq))
        .then(a.id.cmp(&b.id))
}
