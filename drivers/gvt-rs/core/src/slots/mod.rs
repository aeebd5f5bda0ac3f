// SPDX-License-Identifier: GPL-2.0

//! Graphics-memory slots: sharing high GM among vGPUs (gScale, DymGPU and
//! gvt-rs's cost-aware allocator), GTT residency and copy accounting.
//!
//! High graphics memory is a pool of 64 MB slots ([`SLOT_MB`]), each mapped
//! by 16,384 GTT entries of 8 bytes ([`ENTRIES_PER_SLOT`], [`ENTRY_BYTES`]).
//! A vGPU needs a contiguous range of slots; sharing allocators let ranges
//! overlap, and every vGPU keeps a private copy of its GTT entries. When a
//! vGPU is switched in, only the slots whose hardware entries belong to
//! somebody else are copied. Which allocator keeps those copies lowest is
//! the subject of this module; `Documentation/gvt-rs/gm-slots.rst` has the
//! design and every rule, `Documentation/gvt-rs/results-slots.rst` the
//! measurements.
//!
//! # Driving it from the kernel
//!
//! One [`SlotPool`] per physical GPU, behind a lock (innermost, never held
//! across `dma_map`). All calls are bounded, allocate nothing and cannot
//! panic; time (`now`) is `u64` ns of a monotonic clock, as for the
//! scheduler (the pool keeps ms, the unit of its tunables):
//!
//! * mdev create: [`SlotPool::create_mb`] (or [`SlotPool::create`]); on
//!   error the engine returns the errno of the [`Error`](super::Error)
//!   (`NoSpace`: `-ENOSPC`). Apply the returned moves.
//! * mdev remove: [`SlotPool::destroy`]; apply the returned moves.
//! * at the switch point, before dispatching the next vGPU:
//!   [`SlotPool::switch_in`]; apply its moves, then copy its private entries
//!   for every run of [`SwitchPlan::copy_runs`] (and the low-GM region if
//!   [`SwitchPlan::copy_low`]) into the hardware GTT and invalidate once.
//! * every sample period (1 s): [`SlotPool::sample`] per vGPU with its busy
//!   fraction in ppm, then [`SlotPool::tick`] at a switch point; apply moves.
//!   To keep the `cost` search (0.9-1.9 ms for 16 vGPUs, 10-15 ms for 64,
//!   `gvt-slots bench`) out of the lock, as the kernel engine does (see
//!   `gm-slots.rst`), set [`SlotPool::set_deferred_replace`]: when
//!   [`SlotPool::replace_pending`], clone the pool under the lock, call
//!   [`SlotPool::plan_replace`] on the clone unlocked, then
//!   [`SlotPool::apply_replace`] under the lock (`Busy`: retry next tick).
//! * sysfs: the `set_*` tunables (`Invalid`, `OutOfRange` or `Busy`;
//!   nothing changes on error), [`SlotPool::available_instances_mb`]
//!   for `available_instances`, [`SlotPool::stats`] and
//!   [`SlotPool::placement`] for the per-vGPU view.
//!
//! Applying a move means relocating the vGPU's private high-GM GTT from the
//! old to the new range (and telling the guest, which upstream i915 guests
//! cannot follow: the i915 provider sets relocation off).

#![deny(missing_docs)]
// The crate denies panicking operations (see gvt_core.rs); slot arithmetic
// also mixes u16/u32/u64 widths, so truncating casts are refused here too.
#![deny(clippy::cast_possible_truncation)]

use super::{
    Error,
    VgpuArray,
    VgpuId, //
};

mod alloc_cost;
mod alloc_dymsize;
mod alloc_dymutil;
mod alloc_gscale;
mod alloc_static;
mod config;
mod monitor;
mod moves;
mod plan;
mod pool;
mod replace;
mod residency;
mod stats;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_64;
#[cfg(test)]
mod tests_prop;

pub use alloc_cost::{
    MAX_SWEEPS,
    MIN_HISTORY, //
};
pub use alloc_gscale::GSCALE_WEIGHT;
pub use config::{
    AllocatorKind,
    Tunables,
    UTIL_WINDOW_MAX, //
};
pub use monitor::UTIL_FULL_PPM;
pub use moves::{
    Move,
    Moves, //
};
pub use pool::{
    mb_to_slots,
    Created,
    Placement,
    PoolConfig,
    SlotPool,
    HISTORY,
    MAX_VGPUS, //
};
pub use replace::ReplacePlan;
pub use residency::{
    CopyRuns,
    SwitchPlan, //
};
pub use stats::CopyStats;

/// Size of one high-GM slot in MB.
pub const SLOT_MB: u32 = 64;
/// GTT entries per slot: one 4 KiB page each.
pub const ENTRIES_PER_SLOT: u32 = 16_384;
/// Bytes per GTT entry (gen8+ 64-bit PTE).
pub const ENTRY_BYTES: u32 = 8;

/// Pure placement functions, exposed for the simulator, benchmarks and the
/// optimal search: they compute layouts without touching a pool.
pub mod layout {
    use super::plan::{
        Item,
        Items, //
    };
    use super::VgpuId;

    /// One vGPU to lay out: `(id, size in slots, tie-break sequence,
    /// utilization ppm, switch-in rate)`.
    pub type Spec = (VgpuId, u16, u32, u32, u32);

    fn items<const V: usize>(specs: &[Spec]) -> Items<V> {
        let mut it = Items::new();
        for &(id, size, seq, util, freq) in specs {
            it.push(Item {
                id,
                size,
                start: 0,
                seq,
                util,
                freq,
            });
        }
        it
    }

    fn starts<const V: usize>(it: &Items<V>, specs: &[Spec], out: &mut [u16]) {
        for (o, s) in out.iter_mut().zip(specs.iter()) {
            *o = it.get_by_id(s.0).map(|i| i.start).unwrap_or(0);
        }
    }

    /// Algorithm 1 over `specs` (all sizes must be 1..=`m`): writes each
    /// vGPU's start into `out` (same order as `specs`) and returns `P_K`.
    pub fn algorithm1<const V: usize>(specs: &[Spec], m: u16, out: &mut [u16]) -> Option<u16> {
        let mut it = items::<V>(specs);
        let k = super::alloc_dymsize::algorithm1(&mut it, m);
        starts(&it, specs, out);
        k
    }

    /// Algorithm 2 over `specs`: writes each vGPU's start into `out`.
    pub fn algorithm2<const V: usize>(specs: &[Spec], m: u16, out: &mut [u16]) {
        let mut it = items::<V>(specs);
        super::alloc_dymutil::algorithm2(&mut it, m);
        starts(&it, specs, out);
    }

    /// gScale's choice for a vGPU of `size` slots given per-slot occupancy
    /// `occ`; `per_occupant` false scores occupied slots yes/no instead.
    pub fn gscale(occ: &[u8], size: u16, m: u16, per_occupant: bool) -> Option<u16> {
        super::alloc_gscale::place(occ, size, m, per_occupant)
    }

    /// The `cost` allocator's predicted copies per period of a layout
    /// (`starts` in the order of `specs`), in 1/16 copies; `hist` is a
    /// switch-in history (oldest first) used when it has at least
    /// [`MIN_HISTORY`](super::MIN_HISTORY) entries.
    /// `H` bounds the distinct switch-in classes kept from `hist`.
    pub fn predicted_cost<const V: usize, const M: usize, const H: usize>(
        specs: &[Spec],
        starts: &[u16],
        m: u16,
        hist: &[u8],
    ) -> u64 {
        let mut it = items::<V>(specs);
        for (i, &s) in it.as_mut_slice().iter_mut().zip(starts.iter()) {
            i.start = s;
        }
        let mut g = super::alloc_cost::Gaps::<H>::new();
        g.build(super::alloc_cost::Hist {
            older: hist,
            newer: &[],
        });
        let est = super::alloc_cost::Est::new(&it, Some(g.view()));
        let mk = super::alloc_cost::masks::<V, M>(&it, m);
        super::alloc_cost::total_cost(&mk, &est)
    }

    /// The `cost` allocator's full re-placement from Algorithm 1's layout
    /// (no move penalty): writes each vGPU's start into `out`.
    /// `H` bounds the distinct switch-in classes kept from `hist`.
    pub fn cost_layout<const V: usize, const M: usize, const H: usize>(
        specs: &[Spec],
        m: u16,
        hist: &[u8],
        out: &mut [u16],
    ) {
        let mut a = items::<V>(specs);
        let _ = super::alloc_dymsize::algorithm1(&mut a, m);
        let mut g = super::alloc_cost::Gaps::<H>::new();
        g.build(super::alloc_cost::Hist {
            older: hist,
            newer: &[],
        });
        let it = super::alloc_cost::replace::<V, M>(&a, m, 0, Some(g.view()));
        starts(&it, specs, out);
    }
}
