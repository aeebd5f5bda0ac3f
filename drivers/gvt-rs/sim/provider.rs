// SPDX-License-Identifier: GPL-2.0

//! What the policy engine calls back ([`Provider`]): copying a vGPU's
//! private GTT entries into the hardware GTT at a switch, and the CPU time
//! of its VM. Kept apart as the simulated GPU's side of the engine's
//! interface, the counterpart of the i915 provider's.

use super::{
    gpu::SimGpu,
    gtt::Gtt,
    ENTRIES, //
};
use crate::engine::{
    Provider,
    VgpuId, //
};

impl Provider for SimGpu {
    fn load_gtt(&self, vgpu: VgpuId, vgpu_start: u16, first_slot: u16, slots: u16) {
        let mut g = self.gtt.lock();
        let Gtt { phys, private, .. } = &mut *g;
        let Some(src) = &private[vgpu] else {
            return;
        };
        let rel = usize::from(first_slot.saturating_sub(vgpu_start)) * ENTRIES;
        let n = usize::from(slots) * ENTRIES;
        let at = usize::from(first_slot) * ENTRIES;
        if let (Some(s), Some(d)) = (src.get(rel..rel + n), phys.get_mut(at..at + n)) {
            d.copy_from_slice(s);
        }
    }

    fn load_low_gtt(&self, vgpu: VgpuId) {
        let mut g = self.gtt.lock();
        let Gtt {
            phys_low,
            private_low,
            ..
        } = &mut *g;
        if let Some(src) = &private_low[vgpu] {
            if src.len() == phys_low.len() {
                phys_low.copy_from_slice(src);
            }
        }
    }

    // `relocate`: the default (nothing). Private GTTs are indexed relative
    // to the vGPU's range, and the next switch-in copies the new range.

    // The value a work item read outside the GPU's locks: reading it here
    // would read each of the VM's vCPU threads with them held.
    fn vm_cpu_ns(&self, vgpu: VgpuId) -> Option<u64> {
        self.vms.cpu_ns(vgpu)
    }
}
