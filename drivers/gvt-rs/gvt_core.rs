// SPDX-License-Identifier: GPL-2.0

//! gvt-rs policy core, built by kbuild as a crate of its own in gvt_rs.ko.
//!
//! The same crate as `core/src/lib.rs`, which cargo builds and tests on the
//! host: both roots include `core/src/gvt_core.rs`. This one leaves out what
//! only the host has (`no_std` is kbuild's, the test support is cargo's).
//! The driver crate (`gvt_rs_main.rs`) takes it with `--extern` (Makefile).

#[path = "core/src/gvt_core.rs"]
mod gvt_core;

pub use gvt_core::*;
