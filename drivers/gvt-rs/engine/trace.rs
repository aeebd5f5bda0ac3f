// SPDX-License-Identifier: GPL-2.0

//! The engine's tracepoints (`gvt_rs_events.h`, `events/gvt_rs/` in
//! tracefs): one safe wrapper per event. With `CONFIG_TRACEPOINTS` off
//! they compile to nothing; with it on, a disabled event costs a static
//! branch.

use super::VgpuId;
use kernel::{
    ffi::{
        c_char,
        c_int,
        c_uint, //
    },
    prelude::*,
    tracepoint::declare_trace, //
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

/// Longest GPU name kept (sysfs directory and trace events), bytes.
const NAME_MAX: usize = 31;

/// A GPU's name, kept as the C string the events take, so that emitting an
/// event costs no scan of it.
///
/// # Invariants
///
/// The buffer holds a NUL byte (it is a C string of at most `NAME_MAX` bytes).
pub(crate) struct GpuName([u8; NAME_MAX + 1]);

impl GpuName {
    /// Copies `name`; `EINVAL` if it is longer than `NAME_MAX` bytes.
    pub(crate) fn new(name: &CStr) -> Result<Self> {
        let bytes = name.to_bytes_with_nul();
        let mut buf = [0u8; NAME_MAX + 1];
        buf.get_mut(..bytes.len())
            .ok_or(EINVAL)?
            .copy_from_slice(bytes);
        // INVARIANT: `bytes` ends with NUL and fits in `buf`.
        Ok(Self(buf))
    }

    /// The name.
    pub(crate) fn as_cstr(&self) -> &CStr {
        CStr::from_bytes_until_nul(&self.0).unwrap_or(c"?")
    }

    fn as_char_ptr(&self) -> *const c_char {
        self.0.as_ptr().cast()
    }
}

/// A vGPU as the events name it: its id, or -1 for the idle vGPU.
fn vgpu_arg(id: Option<VgpuId>) -> c_int {
    id.map_or(-1, |id| c_int::from(id.raw()))
}

fn engine_arg(engine: usize) -> c_uint {
    c_uint::try_from(engine).unwrap_or(c_uint::MAX)
}

/// The running vGPU changed from `prev` to `next` for a turn of `slice_ns`.
pub(super) fn switch(gpu: &GpuName, prev: Option<VgpuId>, next: Option<VgpuId>, slice_ns: u64) {
    // SAFETY: `gpu` is a C string (`GpuName`'s invariant).
    unsafe { gvt_rs_switch(gpu.as_char_ptr(), vgpu_arg(prev), vgpu_arg(next), slice_ns) }
}

/// A workload of `vgpu` went to `engine` after waiting `queued_ns`.
pub(super) fn dispatch(gpu: &GpuName, vgpu: VgpuId, engine: usize, queued_ns: u64) {
    // SAFETY: `gpu` is a C string (`GpuName`'s invariant).
    unsafe {
        gvt_rs_dispatch(
            gpu.as_char_ptr(),
            c_int::from(vgpu.raw()),
            engine_arg(engine),
            queued_ns,
        )
    }
}

/// A workload of `vgpu` on `engine` completed after `gpu_ns` of GPU time.
pub(super) fn complete(gpu: &GpuName, vgpu: VgpuId, engine: usize, gpu_ns: u64) {
    // SAFETY: `gpu` is a C string (`GpuName`'s invariant).
    unsafe {
        gvt_rs_complete(
            gpu.as_char_ptr(),
            c_int::from(vgpu.raw()),
            engine_arg(engine),
            gpu_ns,
        )
    }
}

/// Switching `vgpu` in copied `entries` GTT entries of `slots` slots.
pub(super) fn gtt_load(gpu: &GpuName, vgpu: VgpuId, slots: u16, entries: u64) {
    // SAFETY: `gpu` is a C string (`GpuName`'s invariant).
    unsafe {
        gvt_rs_gtt_load(
            gpu.as_char_ptr(),
            c_int::from(vgpu.raw()),
            c_uint::from(slots),
            entries,
        )
    }
}

/// An allocator moved `vgpu`'s range of `slots` slots from `from` to `to`.
pub(super) fn relocate(gpu: &GpuName, vgpu: VgpuId, from: u16, to: u16, slots: u16) {
    // SAFETY: `gpu` is a C string (`GpuName`'s invariant).
    unsafe {
        gvt_rs_relocate(
            gpu.as_char_ptr(),
            c_int::from(vgpu.raw()),
            c_uint::from(from),
            c_uint::from(to),
            c_uint::from(slots),
        )
    }
}
