// SPDX-License-Identifier: GPL-2.0

//! vGPU ids: checked once where an id enters (a provider's vGPU, a user's
//! number), so that every table of [`MAX_VGPUS`] entries is indexed by one
//! without a bounds check that could fail.

/// Most vGPUs a GPU can have: the bound of every [`VgpuId`].
pub const MAX_VGPUS: usize = 64;

// A power of two, so that masking keeps any number below it
// ([`VgpuId::wrapping`]).
const _: () = assert!(MAX_VGPUS.is_power_of_two());
const ID_MASK: usize = MAX_VGPUS - 1;

/// A vGPU's id on its GPU, the same in the scheduler and the slot pool.
///
/// # Invariants
///
/// The id is below [`MAX_VGPUS`], so that it indexes any table of
/// [`MAX_VGPUS`] entries (a `Scheduler<N>` or `SlotPool<V, M>` with fewer
/// still rejects the ids it has no entry for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VgpuId(u8);

impl VgpuId {
    /// The first id, 0.
    pub const FIRST: Self = Self(0);

    /// Every id, in order.
    pub const ALL: VgpuIds = VgpuIds(0);

    /// The id `raw`, or `None` when it is not below [`MAX_VGPUS`].
    pub const fn new(raw: usize) -> Option<Self> {
        if raw < MAX_VGPUS {
            // INVARIANT: checked just above.
            #[allow(clippy::cast_possible_truncation)]
            Some(Self(raw as u8))
        } else {
            None
        }
    }

    /// The id `raw` modulo [`MAX_VGPUS`]: for a number known to be below
    /// it by construction (a bit of a one-word set of ids), where a
    /// fallible [`VgpuId::new`] would need a branch that cannot be taken.
    pub(crate) const fn wrapping(raw: u32) -> Self {
        // INVARIANT: masked below `MAX_VGPUS`, which fits in a `u8`.
        #[allow(clippy::cast_possible_truncation)]
        Self((raw as usize & ID_MASK) as u8)
    }

    /// The id as an index, below [`MAX_VGPUS`].
    pub const fn index(self) -> usize {
        // `& ID_MASK` changes nothing (the invariant) but lets the
        // compiler see the bound where the id indexes an array of
        // `MAX_VGPUS` entries.
        self.0 as usize & ID_MASK
    }

    /// The id as the number user space and the logs see.
    pub const fn raw(self) -> u8 {
        self.0
    }
}

impl From<VgpuId> for usize {
    fn from(id: VgpuId) -> usize {
        id.index()
    }
}

impl From<VgpuId> for u32 {
    fn from(id: VgpuId) -> u32 {
        u32::from(id.0)
    }
}

impl From<VgpuId> for u64 {
    fn from(id: VgpuId) -> u64 {
        u64::from(id.0)
    }
}

impl core::fmt::Display for VgpuId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&self.0, f)
    }
}

/// The ids `0..MAX_VGPUS` from a start, in order ([`VgpuId::ALL`]).
#[derive(Clone, Debug)]
pub struct VgpuIds(usize);

impl Iterator for VgpuIds {
    type Item = VgpuId;

    fn next(&mut self) -> Option<VgpuId> {
        let id = VgpuId::new(self.0)?;
        self.0 = self.0.saturating_add(1);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn ids_are_below_max_vgpus() {
        assert_eq!(VgpuId::new(0), Some(VgpuId::FIRST));
        assert_eq!(
            VgpuId::new(MAX_VGPUS - 1).map(VgpuId::index),
            Some(MAX_VGPUS - 1)
        );
        assert_eq!(VgpuId::new(MAX_VGPUS), None);
        assert_eq!(VgpuId::new(usize::MAX), None);
        let all: std::vec::Vec<usize> = VgpuId::ALL.map(VgpuId::index).collect();
        assert_eq!(all, (0..MAX_VGPUS).collect::<std::vec::Vec<_>>());
        let id = VgpuId::new(42).unwrap();
        assert_eq!(
            (usize::from(id), u32::from(id), u64::from(id), id.raw()),
            (42, 42, 42, 42)
        );
        assert_eq!(std::format!("{id}"), "42");
        assert_eq!(VgpuId::wrapping(63).index(), 63);
        assert_eq!(VgpuId::wrapping(64 + 5).index(), 5);
    }
}
