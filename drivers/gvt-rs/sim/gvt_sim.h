/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layout-free ABI between the simulated GPU's mdev glue (glue.c) and its Rust
 * side (sim/ffi.rs). Only opaque pointers, integers and kernel buffers cross
 * it. Functions named gvt_rs_sim_* are implemented in Rust.
 */
#ifndef GVT_RS_SIM_H
#define GVT_RS_SIM_H

#include <linux/types.h>

#define GVT_SIM_MAX_TYPES	8

struct device;
struct gvt_sim_parent;

/* Implemented in C, called from Rust. */
int gvt_sim_driver_register(void);
void gvt_sim_driver_unregister(void);
int gvt_sim_parent_register(void *gpu, struct device *dev, const char *name,
			    const char *const *type_names,
			    const char *const *pretty_names,
			    unsigned int nr_types, struct gvt_sim_parent **out);
void gvt_sim_parent_unregister(struct gvt_sim_parent *p);

/* Implemented in Rust, called from C (process context, may sleep). */
int gvt_rs_sim_probe(void *gpu, unsigned int type, struct device *dev,
		     void **out_vgpu);
void gvt_rs_sim_remove(void *vgpu);
unsigned int gvt_rs_sim_available(void *gpu, unsigned int type);
ssize_t gvt_rs_sim_describe(void *gpu, unsigned int type, char *buf);

#endif /* GVT_RS_SIM_H */
