// SPDX-License-Identifier: GPL-2.0

//! GTT emulation: the hardware GTT and the vGPUs' private copies, the
//! guest's accesses to its entries, and the scrub that puts what a tenant
//! wrote back to power-on values at a reset or when its VM goes. Separate
//! from the dispatch loop (`gpu.rs`): it has its own lock, innermost.

use super::{
    gpu::SimGpu,
    ENTRIES, //
};
use crate::engine::{
    PerVgpu,
    VgpuId, //
};
use kernel::prelude::*;

/// GTT memory: the hardware GTT and the vGPUs' private copies.
pub(super) struct Gtt {
    pub(super) phys: KVVec<u64>,
    pub(super) phys_low: KVVec<u64>,
    /// Per vGPU, the chunks of [`SCRUB_CHUNK`] private high-GM entries its
    /// guest wrote since the last scrub (bit 63: chunk 63 and after).
    pub(super) dirty: PerVgpu<u64>,
    /// Per vGPU, while it exists, its private GTT entries.
    pub(super) private: PerVgpu<Option<KVVec<u64>>>,
    pub(super) private_low: PerVgpu<Option<KVVec<u64>>>,
}

/// Writes the power-on GTT entries of vGPU `id` into `entries`, entries
/// `first..` of its high GM (or with `low` its low GM): valid bit, owner,
/// index (bit 39 in the low GM). Recognisable, and nothing any tenant
/// wrote.
pub(super) fn power_on(id: VgpuId, entries: &mut [u64], first: usize, low: bool) {
    let low_bit = if low { 1u64 << 39 } else { 0 };
    for (i, x) in entries.iter_mut().enumerate() {
        *x = (1u64 << 63) | (u64::from(id) << 40) | (first.wrapping_add(i) as u64) | low_bit;
    }
}

/// GTT entries per dirty bit and per hold of the GTT lock when scrubbing:
/// a reset rewrites only what its guest wrote, and a reset loop does not
/// hold the GPU's switches for long.
pub(super) const SCRUB_CHUNK: usize = 8192;

/// The dirty bit of high-GM entry `i`.
pub(super) fn dirty_bit(i: usize) -> u64 {
    1u64 << (i / SCRUB_CHUNK).min(63)
}

/// The entries of dirty bit `bit` in a high GM of `len` entries.
pub(super) fn dirty_range(bit: u32, len: usize) -> core::ops::Range<usize> {
    let first = (bit as usize).saturating_mul(SCRUB_CHUNK).min(len);
    let end = if bit >= 63 {
        len
    } else {
        first.saturating_add(SCRUB_CHUNK).min(len)
    };
    first..end
}

pub(super) fn alloc_gtt(n: usize) -> Result<KVVec<u64>> {
    let mut v = KVVec::with_capacity(n, GFP_KERNEL)?;
    v.resize(n, 0, GFP_KERNEL)?;
    Ok(v)
}

impl SimGpu {
    /// Puts the private high-GM GTT entries of `id` that its guest wrote
    /// back to their power-on values, a chunk per hold of the GTT lock, and
    /// returns the chunks it rewrote (its low GM has no guest access). With
    /// [`SimGpu::reload_scrubbed`] after it, nothing a tenant wrote
    /// outlives a reset or its VM (GVT-g scrubs the GGTT on a device-model
    /// reset). Called with the vGPU's register lock held, so that its
    /// guest writes no entry meanwhile.
    pub(super) fn scrub_private(&self, id: VgpuId) -> u64 {
        let mask = core::mem::take(&mut self.gtt.lock().dirty[id]);
        let mut left = mask;
        while left != 0 {
            let bit = left.trailing_zeros();
            left &= left.wrapping_sub(1);
            let mut g = self.gtt.lock();
            let Some(p) = &mut g.private[id] else {
                break;
            };
            let r = dirty_range(bit, p.len());
            let first = r.start;
            if let Some(chunk) = p.get_mut(r) {
                power_on(id, chunk, first, false);
            }
        }
        mask
    }

    /// Copies the entries of `id` scrubbed in `mask` into the hardware GTT
    /// where they are loaded (its resident high-GM slots). Called with
    /// `state` held, so that no switch moves them meanwhile.
    pub(super) fn reload_scrubbed(&self, id: VgpuId, mask: u64) {
        if mask == 0 {
            return;
        }
        // Each slot of the vGPU; `with_residency` fails past its last one.
        let mut rel = 0u16;
        while let Ok(()) = self.engine.with_residency(id, rel, |slot, resident| {
            let from = usize::from(rel) * ENTRIES;
            let touched = (from..from + ENTRIES)
                .step_by(SCRUB_CHUNK)
                .any(|i| mask & dirty_bit(i) != 0);
            if !resident || !touched {
                return;
            }
            let mut g = self.gtt.lock();
            let Gtt { phys, private, .. } = &mut *g;
            let Some(src) = &private[id] else {
                return;
            };
            let at = usize::from(slot) * ENTRIES;
            if let (Some(s), Some(d)) = (
                src.get(from..from + ENTRIES),
                phys.get_mut(at..at + ENTRIES),
            ) {
                d.copy_from_slice(s);
            }
        }) {
            rel = match rel.checked_add(1) {
                Some(r) => r,
                None => break,
            };
        }
    }

    pub(super) fn gtt_read(&self, id: VgpuId, index: u32) -> Result<u64> {
        let i = usize::try_from(index).map_err(|_| ERANGE)?;
        let rel = u16::try_from(i / ENTRIES).map_err(|_| ERANGE)?;
        self.engine.with_residency(id, rel, |slot, resident| {
            let g = self.gtt.lock();
            let off = i % ENTRIES;
            if resident {
                let at = usize::from(slot) * ENTRIES + off;
                g.phys.get(at).copied().ok_or(ERANGE)
            } else {
                g.private[id]
                    .as_ref()
                    .and_then(|p| p.get(i).copied())
                    .ok_or(ERANGE)
            }
        })?
    }

    pub(super) fn gtt_write(&self, id: VgpuId, index: u32, val: u64) -> Result {
        let i = usize::try_from(index).map_err(|_| ERANGE)?;
        let rel = u16::try_from(i / ENTRIES).map_err(|_| ERANGE)?;
        self.engine.with_residency(id, rel, |slot, resident| {
            let mut g = self.gtt.lock();
            let e = g.private[id]
                .as_mut()
                .and_then(|p| p.get_mut(i))
                .ok_or(ERANGE)?;
            *e = val;
            g.dirty[id] |= dirty_bit(i);
            // Only a resident vGPU's write reaches the hardware GTT: a
            // non-resident one must not touch the slot's current owner.
            if resident {
                let at = usize::from(slot) * ENTRIES + i % ENTRIES;
                *g.phys.get_mut(at).ok_or(ERANGE)? = val;
            }
            Ok(())
        })?
    }
}
