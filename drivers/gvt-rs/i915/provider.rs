// SPDX-License-Identifier: GPL-2.0

//! What the policy engine calls back ([`Provider`]): on GVT-g, which loads
//! the GGTT itself, only the CPU time of a VM, read under `sched_lock` in
//! a decision ([`Picking`]). Kept apart as the i915 side of the engine's
//! interface, the counterpart of the simulated GPU's.

use super::gvt_policy::SchedLocked;
use super::{
    gpu::I915Gpu,
    I915Policy, //
};
use crate::engine::{
    Provider,
    VgpuId, //
};
use crate::gvt_core::slots::Move;

/// The provider for placement (`alloc_high`, `free_high`).
impl Provider for I915Gpu {
    // GVT-g loads a vGPU's shared high GM into the GGTT itself, per 64 MB
    // chunk it does not own yet, before `switched` (its GGTT residency).
    fn load_gtt(&self, _vgpu: VgpuId, _vgpu_start: u16, _first_slot: u16, _slots: u16) {}

    // The defaults for the rest: the aperture stays private to each vGPU on
    // GVT-g (`load_low_gtt`), the engine runs without relocation for this
    // provider (`relocate`), and placement never samples CPU time, whose
    // read needs `sched_lock`, which the placement ops do not hold
    // (`vm_cpu_ns`: see `Picking`).
}

/// The provider for a decision (`pick_next`, under `sched_lock`).
pub(super) struct Picking<'a> {
    pub(super) gpu: &'a I915Gpu,
    pub(super) locked: &'a SchedLocked<'a, I915Policy>,
}

impl Provider for Picking<'_> {
    fn load_gtt(&self, vgpu: VgpuId, vgpu_start: u16, first_slot: u16, slots: u16) {
        self.gpu.load_gtt(vgpu, vgpu_start, first_slot, slots);
    }

    fn load_low_gtt(&self, vgpu: VgpuId) {
        self.gpu.load_low_gtt(vgpu);
    }

    fn relocate(&self, m: &Move) {
        self.gpu.relocate(m);
    }

    // Under `sched_lock`, which `intel_vgpu_vcpu_time_ns()` needs: one
    // constant-time read per vCPU thread of the VM, at most KVM's vCPU
    // limit, whatever other threads its VMM has.
    fn vm_cpu_ns(&self, vgpu: VgpuId) -> Option<u64> {
        self.gpu
            .with_vgpu(vgpu, |r| {
                r.get(self.locked).map(|v| v.vcpu_time_ns(self.locked))
            })
            .flatten()
    }
}
