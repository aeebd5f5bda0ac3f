// SPDX-License-Identifier: GPL-2.0

//! Declarations of GVT-g's policy interface (`include/drm/intel/gvt_policy.h`,
//! exported by `kvmgt.ko` in the `INTEL_GVT_POLICY` namespace) and of the C
//! glue (`glue.c`, `gvt_rs_i915.h`).
//!
//! Only opaque handles and integers cross: GVT-g's structures stay private
//! to `kvmgt.ko`, as the header intends.

use kernel::ffi::{c_char, c_int, c_uint, c_void};

/// `struct intel_gvt`: one GPU's GVT-g instance, owned by `kvmgt.ko`.
#[repr(C)]
pub struct IntelGvt {
    _opaque: [u8; 0],
}

/// `struct intel_vgpu`: one vGPU (or the GPU's idle vGPU), owned by `kvmgt.ko`.
#[repr(C)]
pub struct IntelVgpu {
    _opaque: [u8; 0],
}

/// The size of one shared high-GM chunk (`INTEL_GVT_SHARED_GM_ALIGN`):
/// GVT-g tracks GGTT residency per 64 MB, the engine's slot size.
pub const SHARED_GM_ALIGN: u64 = 64 << 20;

extern "C" {
    /// Registers the gvt-rs ops table with GVT-g (`glue.c`).
    pub fn gvt_rs_i915_register() -> c_int;
    /// Unregisters it (`glue.c`).
    pub fn gvt_rs_i915_unregister();
    /// The GPU's device name, e.g. `0000:00:02.0` (`glue.c`).
    pub fn gvt_rs_i915_gpu_name(gvt: *mut IntelGvt) -> *const c_char;

    /// Asks GVT-g's service thread to call `pick_next(timer = true)`.
    pub fn intel_gvt_request_schedule(gvt: *mut IntelGvt);
    /// The policy's per-GPU data pointer.
    pub fn intel_gvt_policy_priv(gvt: *mut IntelGvt) -> *mut *mut c_void;
    /// The policy's per-vGPU data pointer.
    pub fn intel_vgpu_policy_priv(vgpu: *mut IntelVgpu) -> *mut *mut c_void;
    /// The GPU's idle vGPU.
    pub fn intel_gvt_idle_vgpu(gvt: *mut IntelGvt) -> *mut IntelVgpu;
    /// Bit `i` set: i915 engine `i` (`enum intel_engine_id`) exists.
    pub fn intel_gvt_engine_mask(gvt: *mut IntelGvt) -> u32;
    /// The GPU a vGPU belongs to.
    pub fn intel_vgpu_gvt(vgpu: *mut IntelVgpu) -> *mut IntelGvt;
    /// The vGPU's id (0: the idle vGPU).
    pub fn intel_vgpu_id(vgpu: *const IntelVgpu) -> c_int;
    /// The vGPU's mdev device, a `struct device` (`NULL` for the idle
    /// vGPU). Declared as `void *`: `bindings::device` is not FFI-safe here.
    pub fn intel_vgpu_device(vgpu: *mut IntelVgpu) -> *mut c_void;
    /// The weight of the vGPU's type.
    pub fn intel_vgpu_weight(vgpu: *const IntelVgpu) -> c_uint;
    /// CPU time of the VM's vCPU threads, ns (only from ops).
    pub fn intel_vgpu_vcpu_time_ns(vgpu: *mut IntelVgpu) -> u64;
    /// Graphics memory of the GPU that vGPUs may use, bytes.
    pub fn intel_gvt_gm_avail(gvt: *mut IntelGvt, low: *mut u64, high: *mut u64);
    /// Reserves `size` bytes of high GM for the slot pool (init op only).
    pub fn intel_gvt_gm_reserve(gvt: *mut IntelGvt, size: u64, start: *mut u64) -> c_int;
    /// Releases a reservation (clean op only).
    pub fn intel_gvt_gm_release(gvt: *mut IntelGvt, start: u64);
}
