/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layout-free ABI of the gvt-rs timers (timer.c) for Rust (timer.rs).
 */
#ifndef GVT_RS_TIMER_H
#define GVT_RS_TIMER_H

#include <linux/types.h>

struct gvt_rs_timer;

typedef void (*gvt_rs_timer_fn)(void *ctx, unsigned long data);

struct gvt_rs_timer *gvt_rs_timer_new(gvt_rs_timer_fn fn, void *ctx,
				      unsigned long data);
void gvt_rs_timer_bind(struct gvt_rs_timer *t, void *ctx);
void gvt_rs_timer_start(struct gvt_rs_timer *t, u64 delay_ns);
void gvt_rs_timer_shutdown(struct gvt_rs_timer *t);
void gvt_rs_timer_free(struct gvt_rs_timer *t);

#endif /* GVT_RS_TIMER_H */
