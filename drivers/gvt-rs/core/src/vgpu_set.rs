// SPDX-License-Identifier: GPL-2.0

//! A set of vGPU ids in one 64-bit word: membership, intersections and
//! "anyone else?" in O(1), iteration in id order yielding [`VgpuId`]s.

use super::{
    VgpuId,
    MAX_VGPUS, //
};

// One bit per possible id, in one word.
const _: () = assert!(MAX_VGPUS == u64::BITS as usize);

/// A set of vGPU ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VgpuSet(u64);

impl VgpuSet {
    /// The empty set.
    pub(crate) const EMPTY: Self = Self(0);

    const fn bit(id: VgpuId) -> u64 {
        1u64 << id.index()
    }

    /// Adds (`on`) or removes `id`.
    pub(crate) fn set(&mut self, id: VgpuId, on: bool) {
        if on {
            self.0 |= Self::bit(id);
        } else {
            self.0 &= !Self::bit(id);
        }
    }

    /// Whether `id` is in the set.
    pub(crate) fn contains(&self, id: VgpuId) -> bool {
        self.0 & Self::bit(id) != 0
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Number of members.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set has a member other than `id`.
    pub(crate) fn any_except(&self, id: VgpuId) -> bool {
        self.0 & !Self::bit(id) != 0
    }

    /// Whether every member is also one of `of`.
    pub(crate) fn is_subset(&self, of: &Self) -> bool {
        self.0 & !of.0 == 0
    }

    /// Intersection of two sets.
    pub(crate) fn and(&self, o: &Self) -> Self {
        Self(self.0 & o.0)
    }

    /// The members not in `o`.
    pub(crate) fn and_not(&self, o: &Self) -> Self {
        Self(self.0 & !o.0)
    }

    /// Members in increasing order.
    pub(crate) fn iter(&self) -> VgpuSetIter {
        VgpuSetIter(self.0)
    }
}

/// Iterator over the members of a [`VgpuSet`].
pub(crate) struct VgpuSetIter(u64);

impl Iterator for VgpuSetIter {
    type Item = VgpuId;

    fn next(&mut self) -> Option<VgpuId> {
        if self.0 == 0 {
            return None;
        }
        // Below 64 = `MAX_VGPUS` for a non-zero word.
        let b = self.0.trailing_zeros();
        self.0 &= self.0.wrapping_sub(1);
        Some(VgpuId::wrapping(b))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    fn id(i: usize) -> VgpuId {
        VgpuId::new(i).unwrap()
    }

    #[test]
    fn set_contains_iter() {
        let mut b = VgpuSet::EMPTY;
        for i in [0, 5, 31, 32, 62, 63] {
            b.set(id(i), true);
        }
        assert!(b.contains(id(63)) && b.contains(id(0)) && !b.contains(id(1)));
        assert_eq!(b.count(), 6);
        let v: std::vec::Vec<usize> = b.iter().map(VgpuId::index).collect();
        assert_eq!(v, [0, 5, 31, 32, 62, 63]);
        b.set(id(5), false);
        assert_eq!(b.count(), 5);
        let mut one = VgpuSet::EMPTY;
        one.set(id(7), true);
        assert!(!one.any_except(id(7)));
        assert!(one.any_except(id(8)));
        assert!(one.is_subset(&b.and_not(&VgpuSet::EMPTY)) == b.contains(id(7)));
        assert_eq!(b.and(&one), VgpuSet::EMPTY);
    }
}
