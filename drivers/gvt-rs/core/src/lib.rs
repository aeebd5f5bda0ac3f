// SPDX-License-Identifier: GPL-2.0

//! Host build of the gvt-rs policy core.
//!
//! The kernel module includes `gvt_core.rs` directly with `#[path]` (a kernel
//! module is a single crate), so this file only supplies the crate-level
//! attributes that a module cannot carry. Everything else lives in
//! `gvt_core.rs` and below, and compiles identically in both places.

#![no_std]

#[path = "gvt_core.rs"]
mod gvt_core;

pub use gvt_core::*;
