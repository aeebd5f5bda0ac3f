// SPDX-License-Identifier: GPL-2.0

//! Per-vGPU tables of a GPU, indexed by [`VgpuId`] without a check that
//! could fail: a [`VgpuId`] is below [`MAX_VGPUS`] and a table has that
//! many entries, so a vGPU's entry is always there.

use super::{
    VgpuId,
    MAX_VGPUS, //
};
use core::ops::{
    Index,
    IndexMut, //
};
use kernel::prelude::*;

/// One `T` per vGPU id of a GPU, allocated once, when the GPU registers
/// (nothing is allocated under the engine's locks).
///
/// # Invariants
///
/// Holds exactly [`MAX_VGPUS`] entries, the entry of id `i` at index `i`.
pub struct PerVgpu<T>(KVVec<T>);

impl<T> PerVgpu<T> {
    /// A table whose every entry is a value of `f`.
    pub fn new(mut f: impl FnMut() -> T) -> Result<Self> {
        let mut v = KVVec::with_capacity(MAX_VGPUS, GFP_KERNEL)?;
        for _ in 0..MAX_VGPUS {
            v.push(f(), GFP_KERNEL)?;
        }
        // INVARIANT: `MAX_VGPUS` entries were pushed.
        Ok(Self(v))
    }

    /// Every entry with its id, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (VgpuId, &T)> {
        VgpuId::ALL.zip(self.0.iter())
    }
}

impl<T> Index<VgpuId> for PerVgpu<T> {
    type Output = T;

    fn index(&self, id: VgpuId) -> &T {
        // Never out of bounds: `id.index() < MAX_VGPUS`, the table's length
        // (type invariants of `VgpuId` and `Self`).
        &self.0[id.index()]
    }
}

impl<T> IndexMut<VgpuId> for PerVgpu<T> {
    fn index_mut(&mut self, id: VgpuId) -> &mut T {
        // Never out of bounds, as in `index`.
        &mut self.0[id.index()]
    }
}
