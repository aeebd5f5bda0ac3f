// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C glue (`glue.c`, `gvt_sim.h`) and thin safe wrappers.

use kernel::ffi::{c_char, c_uint, c_void};

/// `struct gvt_sim_parent`: the mdev parent device, owned by the glue.
#[repr(C)]
pub struct GvtSimParent {
    _opaque: [u8; 0],
}

extern "C" {
    /// Registers the mdev driver and the `gvtsim` device class.
    pub fn gvt_sim_driver_register() -> i32;
    /// Unregisters what `gvt_sim_driver_register` registered; every parent
    /// is gone.
    pub fn gvt_sim_driver_unregister();
    /// Registers the `struct device` `dev` (or, if null, a new `gvtsim` class device `name`) as
    /// an mdev parent with the simulated GPU's types.
    pub fn gvt_sim_parent_register(
        gpu: *mut c_void,
        dev: *mut c_void,
        name: *const c_char,
        type_names: *const *const c_char,
        pretty_names: *const *const c_char,
        nr_types: c_uint,
        out: *mut *mut GvtSimParent,
    ) -> i32;
    /// Unregisters the parent (and its class device); removes every vGPU
    /// first.
    pub fn gvt_sim_parent_unregister(p: *mut GvtSimParent);
}
