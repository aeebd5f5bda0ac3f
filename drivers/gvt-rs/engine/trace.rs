// SPDX-License-Identifier: GPL-2.0

//! The engine's tracepoints (`gvt_rs_events.h`, `events/gvt_rs/` in
//! tracefs): one safe wrapper per event. With `CONFIG_TRACEPOINTS` off
//! they compile to nothing; with it on, a disabled event costs a static
//! branch.

use super::VgpuId;
use kernel::{
    ffi::{c_char, c_int, c_uint},
    prelude::*,
    tracepoint::declare_trace,
};

declare_trace! {
    /// # Safety
    ///
    /// `gpu` must point to a NUL-terminated string.
    unsafe fn gvt_rs_switch(gpu: *const c_char, prev: c_int, next: c_int, slice_ns: u64);
    /// # Safety
    ///
    /// As for `gvt_rs_switch`.
    unsafe fn gvt_rs_dispatch(gpu: *const c_char, vgpu: c_int, engine: c_uint, ns: u64);
    /// # Safety
    ///
    /// As for `gvt_rs_switch`.
    unsafe fn gvt_rs_complete(gpu: *const c_char, vgpu: c_int, engine: c_uint, ns: u64);
    /// # Safety
    ///
    /// As for `gvt_rs_switch`.
    unsafe fn gvt_rs_gtt_load(gpu: *const c_char, vgpu: c_int, slots: c_uint, entries: u64);
    /// # Safety
    ///
    /// As for `gvt_rs_switch`.
    unsafe fn gvt_rs_relocate(gpu: *const c_char, vgpu: c_int, from: c_uint, to: c_uint, slots: c_uint);
}

/// A vGPU as the events name it: its id, or -1 for the idle vGPU.
fn vgpu_arg(id: Option<VgpuId>) -> c_int {
    id.map_or(-1, c_int::from)
}

fn engine_arg(engine: usize) -> c_uint {
    c_uint::try_from(engine).unwrap_or(c_uint::MAX)
}

/// The running vGPU changed from `prev` to `next` for a turn of `slice_ns`.
pub(super) fn switch(gpu: &CStr, prev: Option<VgpuId>, next: Option<VgpuId>, slice_ns: u64) {
    // SAFETY: `gpu` is a C string.
    unsafe { gvt_rs_switch(gpu.as_char_ptr(), vgpu_arg(prev), vgpu_arg(next), slice_ns) }
}

/// A workload of `vgpu` went to `engine` after waiting `queued_ns`.
pub(super) fn dispatch(gpu: &CStr, vgpu: VgpuId, engine: usize, queued_ns: u64) {
    // SAFETY: `gpu` is a C string.
    unsafe {
        gvt_rs_dispatch(
            gpu.as_char_ptr(),
            c_int::from(vgpu),
            engine_arg(engine),
            queued_ns,
        )
    }
}

/// A workload of `vgpu` on `engine` completed after `gpu_ns` of GPU time.
pub(super) fn complete(gpu: &CStr, vgpu: VgpuId, engine: usize, gpu_ns: u64) {
    // SAFETY: `gpu` is a C string.
    unsafe {
        gvt_rs_complete(
            gpu.as_char_ptr(),
            c_int::from(vgpu),
            engine_arg(engine),
            gpu_ns,
        )
    }
}

/// Switching `vgpu` in copied `entries` GTT entries of `slots` slots.
pub(super) fn gtt_load(gpu: &CStr, vgpu: VgpuId, slots: u16, entries: u64) {
    // SAFETY: `gpu` is a C string.
    unsafe {
        gvt_rs_gtt_load(
            gpu.as_char_ptr(),
            c_int::from(vgpu),
            c_uint::from(slots),
            entries,
        )
    }
}

/// An allocator moved `vgpu`'s range of `slots` slots from `from` to `to`.
pub(super) fn relocate(gpu: &CStr, vgpu: VgpuId, from: u16, to: u16, slots: u16) {
    // SAFETY: `gpu` is a C string.
    unsafe {
        gvt_rs_relocate(
            gpu.as_char_ptr(),
            c_int::from(vgpu),
            c_uint::from(from),
            c_uint::from(to),
            c_uint::from(slots),
        )
    }
}
