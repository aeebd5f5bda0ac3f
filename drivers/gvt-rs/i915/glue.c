// SPDX-License-Identifier: GPL-2.0
/*
 * gvt-rs on Intel GVT-g: the policy's ops table.
 *
 * kvmgt.ko (with the gvt-rs series' drm/i915/gvt patches) calls external
 * scheduling policies through struct intel_gvt_sched_policy_ops. The table
 * needs THIS_MODULE and a list head that kvmgt links, so it lives here; the
 * ops themselves are implemented in Rust (i915/mod.rs) on top of the same
 * policy engine as the simulated GPU.
 */

#include <linux/device.h>
#include <linux/module.h>
#include <drm/intel/gvt_policy.h>

#include "gvt_rs_i915.h"

MODULE_IMPORT_NS("INTEL_GVT_POLICY");

static struct intel_gvt_sched_policy_ops gvt_rs_i915_ops = {
	.name = "gvt-rs",
	.owner = THIS_MODULE,
	.init = gvt_rs_i915_init,
	.clean = gvt_rs_i915_clean,
	.init_vgpu = gvt_rs_i915_init_vgpu,
	.clean_vgpu = gvt_rs_i915_clean_vgpu,
	.start_schedule = gvt_rs_i915_start_schedule,
	.stop_schedule = gvt_rs_i915_stop_schedule,
	.pick_next = gvt_rs_i915_pick_next,
	.switched = gvt_rs_i915_switched,
	.queued = gvt_rs_i915_queued,
	.dispatched = gvt_rs_i915_dispatched,
	.may_dispatch = gvt_rs_i915_may_dispatch,
	.completed = gvt_rs_i915_completed,
	.alloc_high = gvt_rs_i915_alloc_high,
	.free_high = gvt_rs_i915_free_high,
	.high_avail = gvt_rs_i915_high_avail,
};

int gvt_rs_i915_register(void)
{
	return intel_gvt_register_sched_policy(&gvt_rs_i915_ops);
}

void gvt_rs_i915_unregister(void)
{
	intel_gvt_unregister_sched_policy(&gvt_rs_i915_ops);
}

const char *gvt_rs_i915_gpu_name(struct intel_gvt *gvt)
{
	return dev_name(intel_gvt_device(gvt));
}
