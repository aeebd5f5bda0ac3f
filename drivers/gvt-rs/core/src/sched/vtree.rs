// SPDX-License-Identifier: GPL-2.0

//! The fair queue of `sfq` and `eevdf`: an augmented AVL tree of vGPU ids
//! ordered by start tag, in fixed arrays indexed by id.
//!
//! It is what Linux's EEVDF keeps in its augmented rbtree (the
//! `min_deadline` of each subtree, and `avg_vruntime`'s sums), without
//! allocation: node `i` is vGPU `i`, and the links are `u16` ids. Each
//! subtree keeps
//!
//! * its leftmost id: the smallest tag, `sfq`'s choice, in O(1);
//! * its best id in `eevdf`'s order (earliest deadline, then smaller tag,
//!   then lower id): the eligible vGPUs are those whose tag is no later
//!   than the weighted average, a prefix in tag order, so the eligible one
//!   with the earliest deadline is the best of at most one subtree per
//!   level of the tree (Linux's `pick_eevdf`), O(log n);
//! * the sum of its weights and of its weighted tags, so that the weighted
//!   lead of the tags above virtual time `V`, `sum w_i (S_i - V)` over
//!   `S_i > V`, is a suffix sum, O(log n), and the average
//!   `V + lead / sum w_i` is the one a scan of every vGPU computes, to the
//!   unit (the scan clamps tags below `V` to `V`: a suffix sum leaves them
//!   out the same way).
//!
//! Tags wrap around `u64` and are compared with wrapping differences, as
//! the scan compares them. The weighted sums are kept exactly in 128 bits
//! (two `u64`: the kernel has no 128-bit arithmetic helpers) of tags
//! relative to a base, moved (an O(n) rebuild) when a tag comes within
//! 2^61 units of leaving the range the sums can hold: after days of GPU
//! time.
//!
//! Insert, remove and update are O(log n) (an update is a removal and an
//! insertion); the height is at most 1.44 log2(n + 2), 12 for 256 vGPUs,
//! which bounds the recursion.
//!
//! # Invariants
//!
//! * An id is in the tree iff its bit in `member` is set; `len` counts them.
//! * In-order, the members are sorted by `(key, id)`, `key` compared with
//!   [`vdiff`]; all members' keys lie within [`OFFSET`] of `base`, and a
//!   key inserted without moving the base within [`REBASE`] of it.
//! * Every member's `height`, `first`, `best`, `sw` and `swu` are those of
//!   its subtree: AVL height (a leaf is 1), leftmost id, best id in
//!   deadline order, sum of `w`, and sum of `w * rel(key)`.

use super::{
    bitmap::Bitmap,
    fixed::{
        mul_wide,
        vdiff, //
    },
};

/// No id: an empty link.
const NONE: u16 = u16::MAX;

/// Offset of a tag relative to the base: `rel(k) = vdiff(k, base) + OFFSET`
/// is positive for every member.
const OFFSET: u64 = 1 << 62;

/// A tag further than this from the base moves the base.
const REBASE: u64 = 1 << 61;

/// An unsigned 128-bit value as two `u64` halves (add, subtract, multiply
/// by a `u64`), for the weighted sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wide {
    hi: u64,
    lo: u64,
}

impl Wide {
    pub(crate) const ZERO: Self = Self { hi: 0, lo: 0 };

    /// `a * b`, exactly.
    pub(crate) const fn mul(a: u64, b: u64) -> Self {
        let (hi, lo) = mul_wide(a, b);
        Self { hi, lo }
    }

    /// `self + o`, modulo 2^128 (the sums never come near it).
    pub(crate) const fn add(self, o: Self) -> Self {
        let (lo, c) = self.lo.overflowing_add(o.lo);
        Self {
            hi: self.hi.wrapping_add(o.hi).wrapping_add(c as u64),
            lo,
        }
    }

    /// `self - o`, modulo 2^128 (callers subtract only what they added).
    pub(crate) const fn sub(self, o: Self) -> Self {
        let (lo, b) = self.lo.overflowing_sub(o.lo);
        Self {
            hi: self.hi.wrapping_sub(o.hi).wrapping_sub(b as u64),
            lo,
        }
    }

    /// The value, or `u64::MAX` if it does not fit: what a sum of the
    /// same terms with saturating `u64` arithmetic gives.
    pub(crate) const fn saturated(self) -> u64 {
        if self.hi == 0 {
            self.lo
        } else {
            u64::MAX
        }
    }
}

/// The fair queue: ids `0..N` ordered by tag, augmented for `eevdf`.
#[derive(Clone, Copy)]
pub(crate) struct TagTree<const N: usize> {
    left: [u16; N],
    right: [u16; N],
    height: [u8; N],
    /// Start tag of each member.
    key: [u64; N],
    /// Virtual deadline of each member.
    dl: [u64; N],
    /// Weight of each member (at least 1).
    w: [u32; N],
    /// `w * rel(key)` of each member.
    own: [Wide; N],
    /// Leftmost id of each member's subtree.
    first: [u16; N],
    /// Best id of each member's subtree in deadline order.
    best: [u16; N],
    /// Sum of the weights in each member's subtree.
    sw: [u64; N],
    /// Sum of `w * rel(key)` in each member's subtree.
    swu: [Wide; N],
    member: Bitmap,
    root: u16,
    len: usize,
    /// The tag the weighted sums are relative to.
    base: u64,
}

fn at<T: Copy>(a: &[T], i: u16, none: T) -> T {
    a.get(usize::from(i)).copied().unwrap_or(none)
}

fn put<T>(a: &mut [T], i: u16, v: T) {
    if let Some(x) = a.get_mut(usize::from(i)) {
        *x = v;
    }
}

impl<const N: usize> TagTree<N> {
    /// An empty tree.
    pub(crate) const fn new() -> Self {
        Self {
            left: [NONE; N],
            right: [NONE; N],
            height: [0; N],
            key: [0; N],
            dl: [0; N],
            w: [1; N],
            own: [Wide::ZERO; N],
            first: [NONE; N],
            best: [NONE; N],
            sw: [0; N],
            swu: [Wide::ZERO; N],
            member: Bitmap::EMPTY,
            root: NONE,
            len: 0,
            base: 0,
        }
    }

    /// Number of members.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether `id` is a member.
    pub(crate) fn contains(&self, id: usize) -> bool {
        id < N && self.member.get(id)
    }

    /// Tag of `id` (meaningful only while it is a member).
    pub(crate) fn key(&self, id: usize) -> u64 {
        self.key.get(id).copied().unwrap_or(0)
    }

    /// Weight of member `id`.
    pub(crate) fn weight(&self, id: usize) -> u32 {
        self.w.get(id).copied().unwrap_or(1)
    }

    /// Sum of the members' weights.
    pub(crate) fn total_weight(&self) -> u64 {
        at(&self.sw, self.root, 0)
    }

    /// The member with the smallest tag (ties: lower id). O(1).
    pub(crate) fn min(&self) -> Option<usize> {
        match at(&self.first, self.root, NONE) {
            NONE => None,
            i => Some(usize::from(i)),
        }
    }

    /// Members in id order (for the linear fallbacks).
    pub(crate) fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.member.iter().filter(|&i| i < N)
    }

    /// Removes every member.
    pub(crate) fn clear(&mut self) {
        *self = const { Self::new() };
    }

    /// Inserts `id` with tag `key`, deadline `dl` and weight `w`, or
    /// updates them if it is a member. Ids `>= N` are ignored.
    pub(crate) fn upsert(&mut self, id: usize, key: u64, dl: u64, w: u32) {
        let Ok(i) = u16::try_from(id) else {
            return;
        };
        if id >= N || i == NONE {
            return;
        }
        if self.contains(id) {
            self.remove(id);
        }
        if self.len == 0 {
            self.base = key;
        }
        let far = vdiff(key, self.base).unsigned_abs() >= REBASE;
        if far {
            // The members are within 2^62 of the new tag (the live tags
            // are, as for the wrapping order): it becomes the base.
            self.base = key;
            for m in self.member.iter() {
                let o = self.wu_of(m);
                if let Some(x) = self.own.get_mut(m) {
                    *x = o;
                }
            }
        }
        put(&mut self.key, i, key);
        put(&mut self.dl, i, dl);
        put(&mut self.w, i, w.max(1));
        let own = self.wu_of(id);
        put(&mut self.own, i, own);
        put(&mut self.left, i, NONE);
        put(&mut self.right, i, NONE);
        self.member.set(id, true);
        self.len = self.len.saturating_add(1);
        self.root = self.insert_at(self.root, i);
        if far {
            self.repull(self.root);
        }
    }

    /// Removes `id` if it is a member.
    pub(crate) fn remove(&mut self, id: usize) {
        if !self.contains(id) {
            return;
        }
        let Ok(i) = u16::try_from(id) else {
            return;
        };
        self.root = self.remove_at(self.root, i);
        self.member.set(id, false);
        self.len = self.len.saturating_sub(1);
    }

    /// Recomputes every member's deadline with `f(id, key)` (the slice the
    /// deadlines are computed for changed). O(n).
    pub(crate) fn set_deadlines(&mut self, f: &dyn Fn(usize, u64) -> u64) {
        for id in self.member.iter() {
            if let Some(d) = self.dl.get_mut(id) {
                *d = f(id, self.key.get(id).copied().unwrap_or(0));
            }
        }
        self.repull(self.root);
    }

    /// `rel(k)`, or `None` if `k` is too far from the base for the sums.
    fn rel(&self, k: u64) -> Option<u64> {
        let d = vdiff(k, self.base);
        if d.unsigned_abs() >= OFFSET {
            return None;
        }
        Some(d.wrapping_add(OFFSET as i64) as u64)
    }

    /// Weighted lead of the tags above `v`: `sum w_i (S_i - v)` over the
    /// members with `S_i > v`, exactly; `None` when `v` is too far from
    /// the tags for the sums (then the caller scans). O(log n).
    pub(crate) fn lead_above(&self, v: u64) -> Option<Wide> {
        let rv = self.rel(v)?;
        let mut w: u64 = 0;
        let mut wu = Wide::ZERO;
        let mut n = self.root;
        while n != NONE {
            if vdiff(at(&self.key, n, 0), v) > 0 {
                let r = at(&self.right, n, NONE);
                let own = u64::from(at(&self.w, n, 1));
                w = w.saturating_add(own).saturating_add(at(&self.sw, r, 0));
                wu = wu.add(self.own_wu(n)).add(at(&self.swu, r, Wide::ZERO));
                n = at(&self.left, n, NONE);
            } else {
                n = at(&self.right, n, NONE);
            }
        }
        Some(wu.sub(Wide::mul(rv, w)))
    }

    /// `eevdf`'s choice among the members whose tag is no later than
    /// `avg` (the eligible ones): the earliest deadline, then the smaller
    /// tag, then the lower id. `None` if none is eligible. O(log n).
    pub(crate) fn pick_eligible(&self, avg: u64) -> Option<usize> {
        let mut best = NONE;
        let mut n = self.root;
        while n != NONE {
            if vdiff(at(&self.key, n, 0), avg) <= 0 {
                // `n` and its whole left subtree are eligible.
                best = self.better(best, n);
                best = self.better(best, at(&self.best, at(&self.left, n, NONE), NONE));
                n = at(&self.right, n, NONE);
            } else {
                n = at(&self.left, n, NONE);
            }
        }
        (best != NONE).then_some(usize::from(best))
    }

    // ---- internals ------------------------------------------------------

    /// Whether `a` comes before `b` in tag order.
    fn less(&self, a: u16, b: u16) -> bool {
        let d = vdiff(at(&self.key, a, 0), at(&self.key, b, 0));
        d < 0 || (d == 0 && a < b)
    }

    /// The better of two ids in deadline order (`NONE` loses).
    fn better(&self, a: u16, b: u16) -> u16 {
        if a == NONE {
            return b;
        }
        if b == NONE {
            return a;
        }
        let dd = vdiff(at(&self.dl, b, 0), at(&self.dl, a, 0));
        let dk = vdiff(at(&self.key, b, 0), at(&self.key, a, 0));
        if dd < 0 || (dd == 0 && (dk < 0 || (dk == 0 && b < a))) {
            b
        } else {
            a
        }
    }

    /// `w * rel(key)` of `id` from its key and weight.
    fn wu_of(&self, id: usize) -> Wide {
        let k = self.key.get(id).copied().unwrap_or(0);
        // Members are within OFFSET of the base (invariant).
        let r = self.rel(k).unwrap_or(OFFSET);
        Wide::mul(r, u64::from(self.w.get(id).copied().unwrap_or(1)))
    }

    fn own_wu(&self, n: u16) -> Wide {
        at(&self.own, n, Wide::ZERO)
    }

    fn h(&self, n: u16) -> u8 {
        at(&self.height, n, 0)
    }

    /// Recomputes the aggregates of `n` from its children's.
    fn pull(&mut self, n: u16) {
        let (l, r) = (at(&self.left, n, NONE), at(&self.right, n, NONE));
        let height = self.h(l).max(self.h(r)).saturating_add(1);
        put(&mut self.height, n, height);
        let first = if l == NONE { n } else { at(&self.first, l, n) };
        put(&mut self.first, n, first);
        let b = self.better(n, at(&self.best, l, NONE));
        let b = self.better(b, at(&self.best, r, NONE));
        put(&mut self.best, n, b);
        let sw = u64::from(at(&self.w, n, 1))
            .saturating_add(at(&self.sw, l, 0))
            .saturating_add(at(&self.sw, r, 0));
        put(&mut self.sw, n, sw);
        let swu =
            self.own_wu(n)
                .add(at(&self.swu, l, Wide::ZERO))
                .add(at(&self.swu, r, Wide::ZERO));
        put(&mut self.swu, n, swu);
    }

    /// Recomputes the aggregates of the whole subtree at `n`.
    fn repull(&mut self, n: u16) {
        if n == NONE {
            return;
        }
        self.repull(at(&self.left, n, NONE));
        self.repull(at(&self.right, n, NONE));
        self.pull(n);
    }

    fn rotate_right(&mut self, n: u16) -> u16 {
        let l = at(&self.left, n, NONE);
        put(&mut self.left, n, at(&self.right, l, NONE));
        put(&mut self.right, l, n);
        self.pull(n);
        self.pull(l);
        l
    }

    fn rotate_left(&mut self, n: u16) -> u16 {
        let r = at(&self.right, n, NONE);
        put(&mut self.right, n, at(&self.left, r, NONE));
        put(&mut self.left, r, n);
        self.pull(n);
        self.pull(r);
        r
    }

    /// Pulls `n` and restores the AVL balance there; returns the subtree's
    /// new root.
    fn balance(&mut self, n: u16) -> u16 {
        self.pull(n);
        let (l, r) = (at(&self.left, n, NONE), at(&self.right, n, NONE));
        let (hl, hr) = (self.h(l), self.h(r));
        if hl > hr.saturating_add(1) {
            if self.h(at(&self.left, l, NONE)) < self.h(at(&self.right, l, NONE)) {
                let nl = self.rotate_left(l);
                put(&mut self.left, n, nl);
            }
            self.rotate_right(n)
        } else if hr > hl.saturating_add(1) {
            if self.h(at(&self.right, r, NONE)) < self.h(at(&self.left, r, NONE)) {
                let nr = self.rotate_right(r);
                put(&mut self.right, n, nr);
            }
            self.rotate_left(n)
        } else {
            n
        }
    }

    fn insert_at(&mut self, n: u16, i: u16) -> u16 {
        if n == NONE {
            self.pull(i);
            return i;
        }
        if self.less(i, n) {
            let l = self.insert_at(at(&self.left, n, NONE), i);
            put(&mut self.left, n, l);
        } else {
            let r = self.insert_at(at(&self.right, n, NONE), i);
            put(&mut self.right, n, r);
        }
        self.balance(n)
    }

    /// Removes the leftmost id of the subtree at `n` (`first`, known to
    /// the caller); returns the subtree's new root.
    fn remove_first(&mut self, n: u16) -> u16 {
        let l = at(&self.left, n, NONE);
        if l == NONE {
            return at(&self.right, n, NONE);
        }
        let nl = self.remove_first(l);
        put(&mut self.left, n, nl);
        self.balance(n)
    }

    fn remove_at(&mut self, n: u16, i: u16) -> u16 {
        if n == NONE {
            return NONE;
        }
        if n == i {
            let (l, r) = (at(&self.left, n, NONE), at(&self.right, n, NONE));
            if l == NONE {
                return r;
            }
            if r == NONE {
                return l;
            }
            let m = at(&self.first, r, NONE);
            let nr = self.remove_first(r);
            put(&mut self.left, m, l);
            put(&mut self.right, m, nr);
            return self.balance(m);
        }
        if self.less(i, n) {
            let l = self.remove_at(at(&self.left, n, NONE), i);
            put(&mut self.left, n, l);
        } else {
            let r = self.remove_at(at(&self.right, n, NONE), i);
            put(&mut self.right, n, r);
        }
        self.balance(n)
    }

    /// Deadline of member `id`.
    #[cfg(test)]
    pub(crate) fn deadline(&self, id: usize) -> u64 {
        self.dl.get(id).copied().unwrap_or(0)
    }

    /// Checks every invariant; the depth of the tree.
    #[cfg(test)]
    pub(crate) fn check(&self) -> usize {
        fn walk<const N: usize>(t: &TagTree<N>, n: u16, count: &mut usize) -> (u8, u64, Wide) {
            if n == NONE {
                return (0, 0, Wide::ZERO);
            }
            *count += 1;
            assert!(t.member.get(usize::from(n)));
            let (l, r) = (at(&t.left, n, NONE), at(&t.right, n, NONE));
            if l != NONE {
                assert!(t.less(l, n));
            }
            if r != NONE {
                assert!(t.less(n, r));
            }
            assert!(vdiff(at(&t.key, n, 0), t.base).unsigned_abs() < OFFSET);
            assert_eq!(t.own_wu(n), t.wu_of(usize::from(n)));
            let (hl, wl, ul) = walk(t, l, count);
            let (hr, wr, ur) = walk(t, r, count);
            assert!(hl.abs_diff(hr) <= 1, "unbalanced at {n}");
            assert_eq!(t.h(n), hl.max(hr) + 1);
            let w = wl + wr + u64::from(at(&t.w, n, 1));
            let u = ul.add(ur).add(t.own_wu(n));
            assert_eq!(at(&t.sw, n, 0), w);
            assert_eq!(at(&t.swu, n, Wide::ZERO), u);
            // `first` and `best` by brute force over the subtree.
            let mut ids = [NONE; 512];
            let mut k = 0;
            fn collect<const N: usize>(t: &TagTree<N>, n: u16, ids: &mut [u16], k: &mut usize) {
                if n == NONE {
                    return;
                }
                collect(t, at(&t.left, n, NONE), ids, k);
                ids[*k] = n;
                *k += 1;
                collect(t, at(&t.right, n, NONE), ids, k);
            }
            collect(t, n, &mut ids, &mut k);
            assert_eq!(at(&t.first, n, NONE), ids[0]);
            let b = ids[..k].iter().fold(NONE, |b, &i| t.better(b, i));
            assert_eq!(at(&t.best, n, NONE), b);
            (t.h(n), w, u)
        }
        let mut count = 0;
        let (h, _, _) = walk(self, self.root, &mut count);
        assert_eq!(count, self.len);
        assert_eq!(self.member.iter().count(), self.len);
        usize::from(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    #[test]
    fn wide_arithmetic() {
        let a = Wide::mul(u64::MAX, 10_000);
        let b = Wide::mul(u64::MAX, 3);
        assert_eq!(a.sub(b), Wide::mul(u64::MAX, 9_997));
        assert_eq!(a.add(b).sub(a), b);
        assert_eq!(a.saturated(), u64::MAX);
        assert_eq!(Wide::mul(7, 6).saturated(), 42);
    }

    /// The tree against a list of members on random inserts, updates and
    /// removals, keys near the wrap and far apart enough to move the base.
    #[test]
    fn matches_a_scan() {
        for seed in 0..6u64 {
            let mut t = TagTree::<64>::new();
            let mut m: [Option<(u64, u64, u32)>; 64] = [None; 64];
            let mut r = Rng::new(seed);
            let n = [3, 17, 64, 64, 40, 9][seed as usize];
            let mut origin = u64::MAX - 1_000_000;
            let mut base = t.base;
            let mut rebased = 0;
            for step in 0..8000 {
                if step % 1000 == 999 {
                    // Virtual time moves on, far enough for the base to
                    // follow within two steps; members left more than
                    // 1.6 steps behind leave (live tags are within 2^62
                    // of each other).
                    origin = origin.wrapping_add(REBASE / 4 * 3);
                    for (id, e) in m.iter_mut().enumerate() {
                        if e.is_some_and(|e| vdiff(origin, e.0) > (REBASE / 10 * 16) as i64) {
                            t.remove(id);
                            *e = None;
                        }
                    }
                }
                let x = r.next_u64();
                let id = (x % n) as usize;
                if x & 0x300 == 0 {
                    t.remove(id);
                    m[id] = None;
                } else {
                    let k = origin.wrapping_add((x >> 20) % 5000);
                    let d = k.wrapping_add((x >> 40) % 3000);
                    let w = 1 + ((x >> 12) % 16) as u32;
                    t.upsert(id, k, d, w);
                    m[id] = Some((k, d, w));
                }
                let depth = t.check();
                // The tallest AVL tree of 64 nodes has height 8.
                assert!(depth <= 8, "depth {depth}");
                if t.base != base && t.len() > 1 {
                    rebased += 1;
                }
                base = t.base;
                let live = || m.iter().enumerate().filter_map(|(i, e)| e.map(|e| (i, e)));
                let min = live()
                    .min_by(|a, b| vdiff(a.1 .0, b.1 .0).cmp(&0).then(a.0.cmp(&b.0)))
                    .map(|e| e.0);
                assert_eq!(t.min(), min);
                let v = origin.wrapping_add((x >> 30) % 5000);
                // The lead of the tags above v, by scan.
                let lead = live()
                    .map(|(_, (k, _, w))| Wide::mul(vdiff(k, v).max(0) as u64, u64::from(w)))
                    .fold(Wide::ZERO, Wide::add);
                assert_eq!(t.lead_above(v), Some(lead));
                let wsum: u64 = live().map(|(_, e)| u64::from(e.2)).sum();
                assert_eq!(t.total_weight(), wsum);
                // The eligible pick, by scan.
                let best = live()
                    .filter(|(_, e)| vdiff(e.0, v) <= 0)
                    .min_by(|a, b| {
                        vdiff(a.1 .1, b.1 .1)
                            .cmp(&0)
                            .then(vdiff(a.1 .0, b.1 .0).cmp(&0))
                            .then(a.0.cmp(&b.0))
                    })
                    .map(|e| e.0);
                assert_eq!(t.pick_eligible(v), best);
            }
            // With few ids the tree empties often, and an empty tree takes
            // its first key as its base.
            assert!(
                n < 17 || rebased >= 2,
                "seed {seed}: {rebased} rebases, {} members",
                t.len()
            );
        }
    }
}
