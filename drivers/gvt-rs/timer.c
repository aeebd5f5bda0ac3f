// SPDX-License-Identifier: GPL-2.0
/*
 * gvt-rs timers: an hrtimer whose expiry (hard irq) queues a work item that
 * runs a Rust callback in process context, where the engine's mutexes can
 * be taken. Used by the simulated GPU (engines, scheduling) and by the i915
 * provider (scheduling requests). Rust side: timer.rs.
 */

#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "timer.h"

struct gvt_rs_timer {
	struct hrtimer timer;
	struct work_struct work;
	gvt_rs_timer_fn fn;
	void *ctx;
	unsigned long data;
};

static enum hrtimer_restart gvt_rs_timer_fire(struct hrtimer *hrt)
{
	struct gvt_rs_timer *t = container_of(hrt, struct gvt_rs_timer, timer);

	queue_work(system_highpri_wq, &t->work);
	return HRTIMER_NORESTART;
}

static void gvt_rs_timer_work(struct work_struct *work)
{
	struct gvt_rs_timer *t = container_of(work, struct gvt_rs_timer, work);

	t->fn(t->ctx, t->data);
}

struct gvt_rs_timer *gvt_rs_timer_new(gvt_rs_timer_fn fn, void *ctx,
				      unsigned long data)
{
	struct gvt_rs_timer *t = kzalloc_obj(*t);

	if (!t)
		return NULL;
	hrtimer_setup(&t->timer, gvt_rs_timer_fire, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
	INIT_WORK(&t->work, gvt_rs_timer_work);
	t->fn = fn;
	t->ctx = ctx;
	t->data = data;
	return t;
}

void gvt_rs_timer_bind(struct gvt_rs_timer *t, void *ctx)
{
	t->ctx = ctx;
}

void gvt_rs_timer_start(struct gvt_rs_timer *t, u64 delay_ns)
{
	hrtimer_start(&t->timer, ns_to_ktime(delay_ns), HRTIMER_MODE_REL);
}

void gvt_rs_timer_cancel(struct gvt_rs_timer *t)
{
	hrtimer_cancel(&t->timer);
	cancel_work_sync(&t->work);
}

void gvt_rs_timer_free(struct gvt_rs_timer *t)
{
	if (!t)
		return;
	gvt_rs_timer_cancel(t);
	kfree(t);
}
