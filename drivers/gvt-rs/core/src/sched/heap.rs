// SPDX-License-Identifier: GPL-2.0

//! Indexed binary min-heap of vGPU ids keyed by wrapping virtual time.
//!
//! O(log n) insert, remove and key update, O(1) minimum; no allocation.
//! Keys are compared with [`vdiff`] (wrapping), ties by lower id, so the
//! order is total as long as live keys are within 2^63 of each other.

use super::fixed::vdiff;

const NONE: u16 = u16::MAX;

/// Min-heap over ids `0..N`.
#[derive(Clone, Copy)]
pub(crate) struct IdHeap<const N: usize> {
    heap: [u16; N],
    pos: [u16; N],
    key: [u64; N],
    len: usize,
}

impl<const N: usize> IdHeap<N> {
    /// An empty heap.
    pub(crate) const fn new() -> Self {
        Self {
            heap: [NONE; N],
            pos: [NONE; N],
            key: [0; N],
            len: 0,
        }
    }

    /// Number of ids in the heap.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether `id` is in the heap.
    pub(crate) fn contains(&self, id: usize) -> bool {
        self.pos.get(id).is_some_and(|&p| p != NONE)
    }

    /// Key of `id` (meaningful only while it is in the heap).
    pub(crate) fn key(&self, id: usize) -> u64 {
        self.key.get(id).copied().unwrap_or(0)
    }

    /// Id with the smallest key.
    pub(crate) fn min(&self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.heap.first().map(|&i| i as usize)
    }

    fn less(&self, a: u16, b: u16) -> bool {
        let ka = self.key.get(a as usize).copied().unwrap_or(0);
        let kb = self.key.get(b as usize).copied().unwrap_or(0);
        let d = vdiff(ka, kb);
        d < 0 || (d == 0 && a < b)
    }

    fn at(&self, p: usize) -> u16 {
        self.heap.get(p).copied().unwrap_or(NONE)
    }

    fn place(&mut self, p: usize, id: u16) {
        // Heap positions are below `len` <= N and ids below N: both exist.
        if let Some(h) = self.heap.get_mut(p) {
            *h = id;
        }
        if let Some(q) = self.pos.get_mut(id as usize) {
            *q = p as u16;
        }
    }

    /// Moves the id at `p` up to its place; returns that place.
    fn sift_up(&mut self, mut p: usize) -> usize {
        let id = self.at(p);
        while p > 0 {
            let parent = p.saturating_sub(1) / 2;
            let pid = self.at(parent);
            if !self.less(id, pid) {
                break;
            }
            self.place(p, pid);
            p = parent;
        }
        self.place(p, id);
        p
    }

    fn sift_down(&mut self, mut p: usize) {
        let id = self.at(p);
        loop {
            let l = p.saturating_mul(2).saturating_add(1);
            if l >= self.len {
                break;
            }
            let r = l.saturating_add(1);
            let mut c = l;
            if r < self.len && self.less(self.at(r), self.at(l)) {
                c = r;
            }
            let cid = self.at(c);
            if !self.less(cid, id) {
                break;
            }
            self.place(p, cid);
            p = c;
        }
        self.place(p, id);
    }

    /// Inserts `id` with `key`, or updates its key if present.
    pub(crate) fn upsert(&mut self, id: usize, key: u64) {
        if id >= NONE as usize {
            return;
        }
        // Out of range (`id >= N`): ignored.
        let Some(k) = self.key.get_mut(id) else {
            return;
        };
        *k = key;
        match self.pos.get(id).copied() {
            Some(p) if p != NONE => {
                let np = self.sift_up(p as usize);
                self.sift_down(np);
            }
            _ => {
                if self.len >= N {
                    return;
                }
                let p = self.len;
                self.len = self.len.saturating_add(1);
                self.place(p, id as u16);
                self.sift_up(p);
            }
        }
    }

    /// Removes `id` if present.
    pub(crate) fn remove(&mut self, id: usize) {
        let Some(q) = self.pos.get_mut(id) else {
            return;
        };
        let p = *q;
        if p == NONE || self.len == 0 {
            return;
        }
        *q = NONE;
        let p = p as usize;
        self.len = self.len.saturating_sub(1);
        let last = self.at(self.len);
        // `len` was at least 1 and at most N: the old last position exists.
        if let Some(h) = self.heap.get_mut(self.len) {
            *h = NONE;
        }
        if p < self.len {
            self.place(p, last);
            let np = self.sift_up(p);
            self.sift_down(np);
        }
    }

    /// Removes every id.
    pub(crate) fn clear(&mut self) {
        self.heap = [NONE; N];
        self.pos = [NONE; N];
        self.len = 0;
    }

    /// Ids in heap-array order (not sorted), for linear fallbacks.
    pub(crate) fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.heap.iter().take(self.len).map(|&i| i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    #[test]
    fn ordered_pops_with_ties_and_wrap() {
        let mut h = IdHeap::<8>::new();
        h.upsert(3, 10);
        h.upsert(1, 10);
        h.upsert(5, u64::MAX - 2); // "before" 10 in wrapping order
        h.upsert(0, 30);
        assert_eq!(h.min(), Some(5));
        h.remove(5);
        assert_eq!(h.min(), Some(1)); // tie 10/10: lower id
        h.upsert(1, 40);
        assert_eq!(h.min(), Some(3));
        h.remove(3);
        assert_eq!(h.min(), Some(0));
        assert_eq!(h.len(), 2);
        assert!(h.contains(1) && !h.contains(3));
        h.remove(0);
        h.remove(1);
        assert_eq!(h.min(), None);
        h.remove(1); // absent: no-op
        h.upsert(99, 1); // out of range: ignored
        assert_eq!(h.len(), 0);
    }

    #[test]
    fn matches_linear_scan() {
        let mut h = IdHeap::<32>::new();
        let mut keys = [None::<u64>; 32];
        let mut r = Rng::new(0);
        for _ in 0..5000 {
            let x = r.next_u64();
            let id = (x % 32) as usize;
            if x & 0x100 == 0 {
                h.remove(id);
                keys[id] = None;
            } else {
                let k = (x >> 20) % 1000;
                h.upsert(id, k);
                keys[id] = Some(k);
            }
            let best = keys
                .iter()
                .enumerate()
                .filter_map(|(i, k)| k.map(|k| (k, i)))
                .min()
                .map(|(_, i)| i);
            assert_eq!(h.min(), best);
        }
    }
}
