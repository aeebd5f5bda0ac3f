// SPDX-License-Identifier: GPL-2.0

//! Fixed-capacity list of vGPU moves (re-placements) for the kernel to apply.

use super::VgpuId;

/// One vGPU moved from one start slot to another.
///
/// The kernel relocates the vGPU's private high-GM GTT (its shadow entries)
/// from `[from, from + slots)` to `[to, to + slots)`, and tells the guest its
/// new range if the provider supports that. Nothing is written to the
/// hardware GTT: the vGPU's next switch-in copies the new range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The vGPU that moved.
    pub id: VgpuId,
    /// Its old first slot.
    pub from: u16,
    /// Its new first slot.
    pub to: u16,
    /// Its size in slots (unchanged by a move).
    pub slots: u16,
}

const NO_MOVE: Move = Move {
    id: VgpuId::FIRST,
    from: 0,
    to: 0,
    slots: 0,
};

/// The moves made by one operation, at most one per vGPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moves<const V: usize> {
    list: [Move; V],
    len: usize,
}

impl<const V: usize> Default for Moves<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const V: usize> Moves<V> {
    /// An empty list.
    pub const fn new() -> Self {
        Moves {
            list: [NO_MOVE; V],
            len: 0,
        }
    }

    /// Number of moves.
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing moved.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves, in the order they were made.
    pub fn as_slice(&self) -> &[Move] {
        self.list.get(..self.len).unwrap_or(&[])
    }

    /// Iterates over the moves.
    pub fn iter(&self) -> core::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }

    /// Total slots relocated (each moved vGPU's size).
    pub fn slots(&self) -> u32 {
        self.iter()
            .fold(0u32, |a, m| a.saturating_add(u32::from(m.slots)))
    }

    /// Appends a move. A second move of a vGPU already listed updates its
    /// target, and a vGPU moved back to where it started is dropped.
    pub(crate) fn push(&mut self, m: Move) {
        if m.from == m.to {
            return;
        }
        let len = self.len;
        let list = self.list.get_mut(..len).unwrap_or(&mut []);
        if let Some((pos, o)) = list.iter_mut().enumerate().find(|(_, o)| o.id == m.id) {
            if o.from != m.to {
                o.to = m.to;
                return;
            }
            // Back where it started: remove by shifting the tail left (keeps
            // the order). `pos` was found in `list`.
            if let Some(tail) = list.get_mut(pos..) {
                tail.rotate_left(1);
            }
            self.len = len.saturating_sub(1);
            return;
        }
        // At most one move per vGPU id (below `V`): never full here.
        if let Some(slot) = self.list.get_mut(len) {
            *slot = m;
            self.len = len.saturating_add(1);
        }
    }
}
