// SPDX-License-Identifier: GPL-2.0

//! A table with one entry per possible vGPU, indexed by [`VgpuId`]: the
//! id's invariant is the bound, so a lookup cannot miss and needs no
//! fallback for an id that cannot exist.

use core::ops::{
    Index,
    IndexMut, //
};

use super::{
    VgpuId,
    MAX_VGPUS, //
};

/// One `T` per vGPU id (`MAX_VGPUS` entries, whatever the owner's own
/// limit on ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct VgpuArray<T>([T; MAX_VGPUS]);

impl<T: Copy> VgpuArray<T> {
    /// Every entry `v`.
    pub(crate) const fn filled(v: T) -> Self {
        Self([v; MAX_VGPUS])
    }

    /// Sets every entry to `v`.
    pub(crate) fn fill(&mut self, v: T) {
        self.0 = [v; MAX_VGPUS];
    }
}

impl<T> VgpuArray<T> {
    /// Every entry with its id, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (VgpuId, &T)> {
        VgpuId::ALL.zip(self.0.iter())
    }

    /// Every entry, in id order.
    pub(crate) fn values(&self) -> core::slice::Iter<'_, T> {
        self.0.iter()
    }

    /// Every entry, mutable, in id order.
    pub(crate) fn values_mut(&mut self) -> core::slice::IterMut<'_, T> {
        self.0.iter_mut()
    }
}

impl<T> Index<VgpuId> for VgpuArray<T> {
    type Output = T;

    // The one place a vGPU id indexes: `id.index() < MAX_VGPUS`, the
    // array's length (the invariant of `VgpuId`, which `index()` masks
    // into view of the compiler), so the index is never out of bounds.
    #[allow(clippy::indexing_slicing)]
    fn index(&self, id: VgpuId) -> &T {
        &self.0[id.index()]
    }
}

impl<T> IndexMut<VgpuId> for VgpuArray<T> {
    // As for `index`.
    #[allow(clippy::indexing_slicing)]
    fn index_mut(&mut self, id: VgpuId) -> &mut T {
        &mut self.0[id.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_has_its_entry() {
        let mut a = VgpuArray::filled(0usize);
        for id in VgpuId::ALL {
            a[id] = id.index() * 2;
        }
        assert!(a.iter().all(|(id, &v)| v == id.index() * 2));
        assert_eq!(a.values().count(), MAX_VGPUS);
        a.fill(7);
        assert!(a.values().all(|&v| v == 7));
    }
}
