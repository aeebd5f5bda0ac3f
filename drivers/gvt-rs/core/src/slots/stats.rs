// SPDX-License-Identifier: GPL-2.0

//! Copy counters, per vGPU and for the whole pool.

use super::ENTRIES_PER_SLOT;

/// Copy counters. All counters saturate instead of wrapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyStats {
    /// Switch-ins accounted.
    pub switch_ins: u64,
    /// High-GM slots copied into the hardware GTT at switch-in.
    pub high_slots: u64,
    /// Times the shared low-GM region was copied at switch-in.
    pub low_copies: u64,
    /// GTT entries copied for the low-GM region.
    pub low_entries: u64,
    /// Re-placements (one per moved vGPU).
    pub moves: u64,
    /// Slots relocated by re-placements (the private GTT copied to the new
    /// position: one slot's worth of entries per slot of the moved vGPU).
    pub move_slots: u64,
}

impl CopyStats {
    /// All counters zero (`Default` is not `const`; the pool is built at
    /// compile time).
    pub const ZERO: Self = Self {
        switch_ins: 0,
        high_slots: 0,
        low_copies: 0,
        low_entries: 0,
        moves: 0,
        move_slots: 0,
    };

    /// High-GM GTT entries copied at switch-in.
    pub const fn high_entries(&self) -> u64 {
        self.high_slots.saturating_mul(ENTRIES_PER_SLOT as u64)
    }

    /// GTT entries copied by re-placements.
    pub const fn move_entries(&self) -> u64 {
        self.move_slots.saturating_mul(ENTRIES_PER_SLOT as u64)
    }

    /// Every GTT entry copied: high GM, low GM and re-placements.
    pub const fn entries(&self) -> u64 {
        self.high_entries()
            .saturating_add(self.low_entries)
            .saturating_add(self.move_entries())
    }

    /// Slot copies of every kind (high-GM switch-in copies plus relocated
    /// slots), the unit of the paper's Fig. 4 and Fig. 10c.
    pub const fn slot_copies(&self) -> u64 {
        self.high_slots.saturating_add(self.move_slots)
    }

    pub(crate) fn add(&mut self, o: &CopyStats) {
        self.switch_ins = self.switch_ins.saturating_add(o.switch_ins);
        self.high_slots = self.high_slots.saturating_add(o.high_slots);
        self.low_copies = self.low_copies.saturating_add(o.low_copies);
        self.low_entries = self.low_entries.saturating_add(o.low_entries);
        self.moves = self.moves.saturating_add(o.moves);
        self.move_slots = self.move_slots.saturating_add(o.move_slots);
    }
}
