// SPDX-License-Identifier: GPL-2.0

//! The fair queue of `sfq` and `eevdf`: an augmented AVL tree of vGPU ids
//! ordered by start tag, in fixed arrays indexed by id.
//!
//! It is what Linux's EEVDF keeps in its augmented rbtree (the
//! `min_deadline` of each subtree, and `avg_vruntime`'s sums), without
//! allocation: node `i` is vGPU `i`, and the links are vGPU ids. Each
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
//! insertion); the height is at most 1.44 log2(n + 2), 8 for 64 vGPUs,
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

use super::fixed::{
    mul_wide,
    vdiff, //
};
use super::{
    VgpuArray,
    VgpuId,
    VgpuSet, //
};

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

/// A link of the tree as its arrays keep it: a member's id, or [`Link::NIL`]
/// (one byte, so that reading a child's aggregate is a load and a select,
/// see [`at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Link(u8);

impl Link {
    /// No node: the only link that is not an id (`u8::MAX >= MAX_VGPUS`).
    const NIL: Self = Self(u8::MAX);

    /// The link to member `id`.
    const fn to(id: VgpuId) -> Self {
        Self(id.raw())
    }

    /// The member linked to, `None` for [`Link::NIL`].
    fn id(self) -> Option<VgpuId> {
        VgpuId::new(usize::from(self.0))
    }
}

/// `a[l]`, or `nil` for [`Link::NIL`] (the empty subtree's value), without
/// a branch: any link reads some entry (`NIL` wraps to an id) and the
/// select keeps it only for a member.
fn at<T: Copy>(a: &VgpuArray<T>, l: Link, nil: T) -> T {
    let v = a[VgpuId::wrapping(u32::from(l.0))];
    if l == Link::NIL {
        nil
    } else {
        v
    }
}

/// The fair queue: vGPU ids ordered by tag, augmented for `eevdf`.
#[derive(Clone, Copy)]
pub(crate) struct TagTree {
    left: VgpuArray<Link>,
    right: VgpuArray<Link>,
    height: VgpuArray<u8>,
    /// Start tag of each member.
    key: VgpuArray<u64>,
    /// Virtual deadline of each member.
    dl: VgpuArray<u64>,
    /// Weight of each member (at least 1).
    w: VgpuArray<u32>,
    /// `w * rel(key)` of each member.
    own: VgpuArray<Wide>,
    /// Leftmost id of each member's subtree.
    first: VgpuArray<VgpuId>,
    /// Best id of each member's subtree in deadline order.
    best: VgpuArray<VgpuId>,
    /// Sum of the weights in each member's subtree.
    sw: VgpuArray<u64>,
    /// Sum of `w * rel(key)` in each member's subtree.
    swu: VgpuArray<Wide>,
    member: VgpuSet,
    root: Link,
    len: usize,
    /// The tag the weighted sums are relative to.
    base: u64,
}

impl TagTree {
    /// An empty tree.
    pub(crate) const fn new() -> Self {
        Self {
            left: VgpuArray::filled(Link::NIL),
            right: VgpuArray::filled(Link::NIL),
            height: VgpuArray::filled(0),
            key: VgpuArray::filled(0),
            dl: VgpuArray::filled(0),
            w: VgpuArray::filled(1),
            own: VgpuArray::filled(Wide::ZERO),
            first: VgpuArray::filled(VgpuId::FIRST),
            best: VgpuArray::filled(VgpuId::FIRST),
            sw: VgpuArray::filled(0),
            swu: VgpuArray::filled(Wide::ZERO),
            member: VgpuSet::EMPTY,
            root: Link::NIL,
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
    pub(crate) fn contains(&self, id: VgpuId) -> bool {
        self.member.contains(id)
    }

    /// Tag of `id` (meaningful only while it is a member).
    pub(crate) fn key(&self, id: VgpuId) -> u64 {
        self.key[id]
    }

    /// Weight of member `id`.
    pub(crate) fn weight(&self, id: VgpuId) -> u32 {
        self.w[id]
    }

    /// Sum of the members' weights.
    pub(crate) fn total_weight(&self) -> u64 {
        at(&self.sw, self.root, 0)
    }

    /// The member with the smallest tag (ties: lower id). O(1).
    pub(crate) fn min(&self) -> Option<VgpuId> {
        self.root.id().map(|r| self.first[r])
    }

    /// Members in id order (for the linear fallbacks).
    pub(crate) fn ids(&self) -> impl Iterator<Item = VgpuId> {
        self.member.iter()
    }

    /// Removes every member.
    pub(crate) fn clear(&mut self) {
        *self = const { Self::new() };
    }

    /// Inserts `id` with tag `key`, deadline `dl` and weight `w`, or
    /// updates them if it is a member.
    pub(crate) fn upsert(&mut self, id: VgpuId, key: u64, dl: u64, w: u32) {
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
                self.own[m] = self.wu_of(m);
            }
        }
        self.key[id] = key;
        self.dl[id] = dl;
        self.w[id] = w.max(1);
        self.own[id] = self.wu_of(id);
        self.left[id] = Link::NIL;
        self.right[id] = Link::NIL;
        self.member.set(id, true);
        self.len = self.len.saturating_add(1);
        self.root = Link::to(self.insert_at(self.root, id));
        if far {
            self.repull(self.root);
        }
    }

    /// Removes `id` if it is a member.
    pub(crate) fn remove(&mut self, id: VgpuId) {
        if !self.contains(id) {
            return;
        }
        self.root = self.remove_at(self.root, id);
        self.member.set(id, false);
        self.len = self.len.saturating_sub(1);
    }

    /// Recomputes every member's deadline with `f(id, key)` (the slice the
    /// deadlines are computed for changed). O(n).
    pub(crate) fn set_deadlines(&mut self, f: &dyn Fn(VgpuId, u64) -> u64) {
        for id in self.member.iter() {
            self.dl[id] = f(id, self.key[id]);
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
        let mut link = self.root;
        while let Some(n) = link.id() {
            if vdiff(self.key[n], v) > 0 {
                let r = self.right[n];
                w = w
                    .saturating_add(u64::from(self.w[n]))
                    .saturating_add(at(&self.sw, r, 0));
                wu = wu.add(self.own[n]).add(at(&self.swu, r, Wide::ZERO));
                link = self.left[n];
            } else {
                link = self.right[n];
            }
        }
        Some(wu.sub(Wide::mul(rv, w)))
    }

    /// `eevdf`'s choice among the members whose tag is no later than
    /// `avg` (the eligible ones): the earliest deadline, then the smaller
    /// tag, then the lower id. `None` if none is eligible. O(log n).
    pub(crate) fn pick_eligible(&self, avg: u64) -> Option<VgpuId> {
        let mut best: Option<VgpuId> = None;
        let mut link = self.root;
        while let Some(n) = link.id() {
            if vdiff(self.key[n], avg) <= 0 {
                // `n` and its whole left subtree are eligible.
                let b = self.better(n, at(&self.best, self.left[n], n));
                best = Some(best.map_or(b, |x| self.better(x, b)));
                link = self.right[n];
            } else {
                link = self.left[n];
            }
        }
        best
    }

    // ---- internals ------------------------------------------------------
    //
    // The helpers of an insertion or removal are `#[inline(always)]`:
    // left to the compiler, they were called out of line on every level
    // of the recursion, and an `eevdf` pick at 64 vGPUs took 240 ns
    // instead of 183 (`gvt-bench`).

    /// Height of the subtree at `n` (0: empty).
    fn h(&self, n: Link) -> u8 {
        at(&self.height, n, 0)
    }

    /// Whether `a` comes before `b` in tag order.
    #[inline(always)]
    fn less(&self, a: VgpuId, b: VgpuId) -> bool {
        let d = vdiff(self.key[a], self.key[b]);
        d < 0 || (d == 0 && a < b)
    }

    /// The better of two members in deadline order.
    #[inline(always)]
    fn better(&self, a: VgpuId, b: VgpuId) -> VgpuId {
        let dd = vdiff(self.dl[b], self.dl[a]);
        let dk = vdiff(self.key[b], self.key[a]);
        if dd < 0 || (dd == 0 && (dk < 0 || (dk == 0 && b < a))) {
            b
        } else {
            a
        }
    }

    /// `w * rel(key)` of `id` from its key and weight.
    fn wu_of(&self, id: VgpuId) -> Wide {
        // Members are within OFFSET of the base (invariant).
        let r = self.rel(self.key[id]).unwrap_or(OFFSET);
        Wide::mul(r, u64::from(self.w[id]))
    }

    /// Recomputes the aggregates of `n` from its children's (an empty
    /// child's: height 0, no id better than `n`, sums 0).
    #[inline(always)]
    fn pull(&mut self, n: VgpuId) {
        let (l, r) = (self.left[n], self.right[n]);
        self.height[n] = self.h(l).max(self.h(r)).saturating_add(1);
        self.first[n] = at(&self.first, l, n);
        let b = self.better(n, at(&self.best, l, n));
        self.best[n] = self.better(b, at(&self.best, r, n));
        self.sw[n] = u64::from(self.w[n])
            .saturating_add(at(&self.sw, l, 0))
            .saturating_add(at(&self.sw, r, 0));
        self.swu[n] =
            self.own[n]
                .add(at(&self.swu, l, Wide::ZERO))
                .add(at(&self.swu, r, Wide::ZERO));
    }

    /// Recomputes the aggregates of the whole subtree at `n`.
    fn repull(&mut self, n: Link) {
        let Some(n) = n.id() else {
            return;
        };
        self.repull(self.left[n]);
        self.repull(self.right[n]);
        self.pull(n);
    }

    /// Rotates the subtree at `n` right around its left child `l`.
    #[inline(always)]
    fn rotate_right(&mut self, n: VgpuId, l: VgpuId) -> VgpuId {
        self.left[n] = self.right[l];
        self.right[l] = Link::to(n);
        self.pull(n);
        self.pull(l);
        l
    }

    /// Rotates the subtree at `n` left around its right child `r`.
    #[inline(always)]
    fn rotate_left(&mut self, n: VgpuId, r: VgpuId) -> VgpuId {
        self.right[n] = self.left[r];
        self.left[r] = Link::to(n);
        self.pull(n);
        self.pull(r);
        r
    }

    /// Pulls `n` and restores the AVL balance there; returns the subtree's
    /// new root. A side two levels taller has a child, and a child whose
    /// inner side is taller has that grandchild: the rotations' pivots
    /// exist.
    #[inline(always)]
    fn balance(&mut self, n: VgpuId) -> VgpuId {
        self.pull(n);
        let (hl, hr) = (self.h(self.left[n]), self.h(self.right[n]));
        if hl > hr.saturating_add(1) {
            if let Some(mut l) = self.left[n].id() {
                if self.h(self.left[l]) < self.h(self.right[l]) {
                    if let Some(lr) = self.right[l].id() {
                        l = self.rotate_left(l, lr);
                        self.left[n] = Link::to(l);
                    }
                }
                return self.rotate_right(n, l);
            }
        } else if hr > hl.saturating_add(1) {
            if let Some(mut r) = self.right[n].id() {
                if self.h(self.right[r]) < self.h(self.left[r]) {
                    if let Some(rl) = self.left[r].id() {
                        r = self.rotate_right(r, rl);
                        self.right[n] = Link::to(r);
                    }
                }
                return self.rotate_left(n, r);
            }
        }
        n
    }

    fn insert_at(&mut self, n: Link, i: VgpuId) -> VgpuId {
        let Some(n) = n.id() else {
            self.pull(i);
            return i;
        };
        if self.less(i, n) {
            self.left[n] = Link::to(self.insert_at(self.left[n], i));
        } else {
            self.right[n] = Link::to(self.insert_at(self.right[n], i));
        }
        self.balance(n)
    }

    /// Removes the leftmost id of the subtree at `n` (`first`, known to
    /// the caller); returns the subtree's new root.
    fn remove_first(&mut self, n: VgpuId) -> Link {
        let Some(l) = self.left[n].id() else {
            return self.right[n];
        };
        self.left[n] = self.remove_first(l);
        Link::to(self.balance(n))
    }

    fn remove_at(&mut self, n: Link, i: VgpuId) -> Link {
        let Some(n) = n.id() else {
            return Link::NIL;
        };
        if n == i {
            let (l, r) = (self.left[n], self.right[n]);
            let Some(r) = r.id() else {
                return l;
            };
            if l == Link::NIL {
                return Link::to(r);
            }
            let m = self.first[r];
            self.right[m] = self.remove_first(r);
            self.left[m] = l;
            return Link::to(self.balance(m));
        }
        if self.less(i, n) {
            self.left[n] = self.remove_at(self.left[n], i);
        } else {
            self.right[n] = self.remove_at(self.right[n], i);
        }
        Link::to(self.balance(n))
    }

    /// Deadline of member `id`.
    #[cfg(test)]
    pub(crate) fn deadline(&self, id: VgpuId) -> u64 {
        self.dl[id]
    }

    /// Checks every invariant; the depth of the tree.
    #[cfg(test)]
    pub(crate) fn check(&self) -> usize {
        fn walk(t: &TagTree, n: Link, count: &mut usize) -> (u8, u64, Wide) {
            let Some(n) = n.id() else {
                assert_eq!(n, Link::NIL);
                return (0, 0, Wide::ZERO);
            };
            *count += 1;
            assert!(t.member.contains(n));
            let (l, r) = (t.left[n], t.right[n]);
            if let Some(l) = l.id() {
                assert!(t.less(l, n));
            }
            if let Some(r) = r.id() {
                assert!(t.less(n, r));
            }
            assert!(vdiff(t.key[n], t.base).unsigned_abs() < OFFSET);
            assert_eq!(t.own[n], t.wu_of(n));
            let (hl, wl, ul) = walk(t, l, count);
            let (hr, wr, ur) = walk(t, r, count);
            assert!(hl.abs_diff(hr) <= 1, "unbalanced at {n}");
            assert_eq!(t.height[n], hl.max(hr) + 1);
            let w = wl + wr + u64::from(t.w[n]);
            let u = ul.add(ur).add(t.own[n]);
            assert_eq!(t.sw[n], w);
            assert_eq!(t.swu[n], u);
            // `first` and `best` by brute force over the subtree.
            fn collect(t: &TagTree, n: Link, ids: &mut [VgpuId], k: &mut usize) {
                let Some(n) = n.id() else {
                    return;
                };
                collect(t, t.left[n], ids, k);
                ids[*k] = n;
                *k += 1;
                collect(t, t.right[n], ids, k);
            }
            let mut ids = [VgpuId::FIRST; crate::MAX_VGPUS];
            let mut k = 0;
            collect(t, Link::to(n), &mut ids, &mut k);
            assert_eq!(t.first[n], ids[0]);
            let b = ids[..k].iter().fold(ids[0], |b, &i| t.better(b, i));
            assert_eq!(t.best[n], b);
            (t.height[n], w, u)
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
            let mut t = TagTree::new();
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
                            t.remove(VgpuId::new(id).unwrap());
                            *e = None;
                        }
                    }
                }
                let x = r.next_u64();
                let i = (x % n) as usize;
                let id = VgpuId::new(i).unwrap();
                if x & 0x300 == 0 {
                    t.remove(id);
                    m[i] = None;
                } else {
                    let k = origin.wrapping_add((x >> 20) % 5000);
                    let d = k.wrapping_add((x >> 40) % 3000);
                    let w = 1 + ((x >> 12) % 16) as u32;
                    t.upsert(id, k, d, w);
                    m[i] = Some((k, d, w));
                }
                let depth = t.check();
                // The tallest AVL tree of 64 nodes has height 8.
                assert!(depth <= 8, "depth {depth}");
                if t.base != base && t.len() > 1 {
                    rebased += 1;
                }
                base = t.base;
                let live = || {
                    m.iter()
                        .enumerate()
                        .filter_map(|(i, e)| e.map(|e| (VgpuId::new(i).unwrap(), e)))
                };
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
