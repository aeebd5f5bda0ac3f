// SPDX-License-Identifier: GPL-2.0

//! gvt-rs policy core: pure logic shared by the kernel module and host tools.
//!
//! Rules for everything below this file (it is compiled into the kernel):
//! no `unsafe`, no allocation, no floating point, no 128-bit integers (the
//! kernel has no `__udivti3`), no panics (no `unwrap`, `expect`, unchecked
//! indexing or overflowing arithmetic: use `get`, `checked_*`, `saturating_*`).

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::float_arithmetic,
    )
)]

/// Crate version, shown by the module in sysfs.
pub const VERSION: &str = "0.1.0";

pub mod engine;
mod error;
pub mod sched;
pub mod slots;
mod vgpu_array;
mod vgpu_id;
mod vgpu_set;

pub use error::Error;
pub(crate) use vgpu_array::VgpuArray;
pub(crate) use vgpu_set::VgpuSet;

pub use vgpu_id::{
    VgpuId,
    VgpuIds,
    MAX_VGPUS, //
};
