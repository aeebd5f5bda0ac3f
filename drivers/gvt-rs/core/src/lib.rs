// SPDX-License-Identifier: GPL-2.0

//! Host build of the gvt-rs policy core.
//!
//! kbuild builds the same crate from `drivers/gvt-rs/gvt_core.rs` into
//! gvt_rs.ko; both roots include `gvt_core.rs`, so this file only supplies
//! what the host build adds (`no_std`, which kbuild passes itself, and the
//! test support). Everything else lives in `gvt_core.rs` and below, and
//! compiles identically in both places, except
//! the host-only test support of `testing.rs` (the core's own tests and the
//! `testing` feature), which the kernel never compiles.

#![no_std]

#[path = "gvt_core.rs"]
mod gvt_core;

pub use gvt_core::*;

#[cfg(any(test, feature = "testing"))]
pub mod testing;
