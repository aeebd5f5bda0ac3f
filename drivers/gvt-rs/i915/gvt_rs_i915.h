/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ABI between the i915 provider's C glue (glue.c) and its Rust side
 * (i915/mod.rs). Functions named gvt_rs_i915_* other than the three
 * below are implemented in Rust and are the policy's ops.
 */
#ifndef GVT_RS_I915_H
#define GVT_RS_I915_H

#include <linux/types.h>

struct intel_gvt;
struct intel_vgpu;

/* Implemented in C, called from Rust. */
int gvt_rs_i915_register(void);
void gvt_rs_i915_unregister(void);
const char *gvt_rs_i915_gpu_name(struct intel_gvt *gvt);

/* Implemented in Rust: the ops of struct intel_gvt_sched_policy_ops. */
int gvt_rs_i915_init(struct intel_gvt *gvt);
void gvt_rs_i915_clean(struct intel_gvt *gvt);
int gvt_rs_i915_init_vgpu(struct intel_vgpu *vgpu);
void gvt_rs_i915_clean_vgpu(struct intel_vgpu *vgpu);
void gvt_rs_i915_start_schedule(struct intel_vgpu *vgpu);
void gvt_rs_i915_stop_schedule(struct intel_vgpu *vgpu);
struct intel_vgpu *gvt_rs_i915_pick_next(struct intel_gvt *gvt, ktime_t now,
					 bool timer);
void gvt_rs_i915_switched(struct intel_gvt *gvt, struct intel_vgpu *prev,
			  struct intel_vgpu *next, ktime_t now);
void gvt_rs_i915_queued(struct intel_vgpu *vgpu, unsigned int engine);
void gvt_rs_i915_dispatched(struct intel_vgpu *vgpu, unsigned int engine);
bool gvt_rs_i915_may_dispatch(struct intel_vgpu *vgpu, unsigned int engine);
void gvt_rs_i915_completed(struct intel_vgpu *vgpu, unsigned int engine,
			   u64 gpu_ns, int status);
int gvt_rs_i915_alloc_high(struct intel_vgpu *vgpu, u64 size, u64 *start);
void gvt_rs_i915_free_high(struct intel_vgpu *vgpu);
unsigned int gvt_rs_i915_high_avail(struct intel_gvt *gvt, u64 size);

#endif /* GVT_RS_I915_H */
