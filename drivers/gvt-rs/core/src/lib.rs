// SPDX-License-Identifier: GPL-2.0

//! Host build of the gvt-rs policy core.
//!
//! The kernel module includes `gvt_core.rs` directly with `#[path]` (a kernel
//! module is a single crate), so this file only supplies the crate-level
//! attributes that a module cannot carry. Everything else lives in
//! `gvt_core.rs` and below, and compiles identically in both places, except
//! the host-only test support of `testing.rs` (the core's own tests and the
//! `testing` feature), which the kernel never compiles.

#![no_std]

#[path = "gvt_core.rs"]
mod gvt_core;

pub use gvt_core::*;

#[cfg(any(test, feature = "testing"))]
pub mod testing;
