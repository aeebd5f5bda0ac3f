// SPDX-License-Identifier: GPL-2.0

//! A fixed 256-bit set of vGPU ids, scanned a 64-bit word at a time.

/// Capacity of a [`Bitmap`] (and so the largest supported `N`).
pub(crate) const BITS: usize = 256;
const WORDS: usize = BITS / 64;

/// Set of small integers below [`BITS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bitmap {
    w: [u64; WORDS],
}

impl Bitmap {
    /// The empty set.
    pub(crate) const EMPTY: Self = Self { w: [0; WORDS] };

    /// Adds or removes `i`; out-of-range ids are ignored.
    pub(crate) fn set(&mut self, i: usize, on: bool) {
        if let Some(w) = self.w.get_mut(i / 64) {
            let bit = 1u64 << (i % 64);
            if on {
                *w |= bit;
            } else {
                *w &= !bit;
            }
        }
    }

    /// Whether `i` is in the set.
    pub(crate) fn get(&self, i: usize) -> bool {
        self.w.get(i / 64).is_some_and(|w| (w >> (i % 64)) & 1 == 1)
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.w.iter().all(|&w| w == 0)
    }

    /// Number of members.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u32 {
        self.w.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the set has a member other than `i`.
    pub(crate) fn any_except(&self, i: usize) -> bool {
        let mut c = *self;
        c.set(i, false);
        !c.is_empty()
    }

    /// Whether every member is also one of `of`.
    pub(crate) fn is_subset(&self, of: &Self) -> bool {
        self.w.iter().zip(of.w.iter()).all(|(a, b)| a & !b == 0)
    }

    /// Intersection of two sets.
    pub(crate) fn and(&self, o: &Self) -> Self {
        let mut r = *self;
        for (a, b) in r.w.iter_mut().zip(o.w.iter()) {
            *a &= *b;
        }
        r
    }

    /// The members not in `o`.
    pub(crate) fn and_not(&self, o: &Self) -> Self {
        let mut r = *self;
        for (a, b) in r.w.iter_mut().zip(o.w.iter()) {
            *a &= !*b;
        }
        r
    }

    /// Members in increasing order.
    pub(crate) fn iter(&self) -> BitIter {
        BitIter { w: self.w, word: 0 }
    }
}

/// Iterator over the members of a [`Bitmap`].
pub(crate) struct BitIter {
    w: [u64; WORDS],
    word: usize,
}

impl Iterator for BitIter {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while let Some(w) = self.w.get_mut(self.word) {
            if *w != 0 {
                let b = w.trailing_zeros() as usize;
                *w &= w.wrapping_sub(1);
                return Some(self.word.saturating_mul(64).saturating_add(b));
            }
            self.word = self.word.saturating_add(1);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_iter() {
        let mut b = Bitmap::EMPTY;
        for i in [0, 5, 63, 64, 200, 255] {
            b.set(i, true);
        }
        b.set(256, true); // ignored
        assert!(b.get(63) && b.get(64) && !b.get(1) && !b.get(256));
        assert_eq!(b.count(), 6);
        let mut v = [0usize; 6];
        for (slot, i) in v.iter_mut().zip(b.iter()) {
            *slot = i;
        }
        assert_eq!(v, [0, 5, 63, 64, 200, 255]);
        b.set(5, false);
        assert_eq!(b.count(), 5);
        let mut one = Bitmap::EMPTY;
        one.set(7, true);
        assert!(!one.any_except(7));
        assert!(one.any_except(8));
    }
}
