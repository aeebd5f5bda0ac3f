// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C glue (`glue.c`, `gvt_sim.h`) and thin safe wrappers.

use kernel::ffi::{c_char, c_uint, c_void};

/// `struct gvt_sim_parent`: the mdev parent device, owned by the glue.
#[repr(C)]
pub struct GvtSimParent {
    _opaque: [u8; 0],
}

/// `struct gvt_sim_vdev`: the VFIO device of one vGPU, owned by the VFIO core.
#[repr(C)]
pub struct GvtSimVdev {
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
    /// Reports the vGPU's INTx level and, with `edge`, an MSI to send; the
    /// glue applies vfio-pci's interrupt semantics (`irq.c`).
    pub fn gvt_sim_vdev_irq(v: *mut GvtSimVdev, level: bool, edge: bool);
    /// `vfio_dma_rw()`: reads or writes guest memory at `iova`.
    pub fn gvt_sim_vdev_dma_rw(
        v: *mut GvtSimVdev,
        iova: u64,
        buf: *mut c_void,
        len: usize,
        write: bool,
    ) -> i32;
    /// CPU time (user + system) of the process that opened the vGPU (its
    /// live threads), ns.
    pub fn gvt_sim_vdev_cpu_ns(v: *mut GvtSimVdev) -> u64;
}
