// SPDX-License-Identifier: GPL-2.0
/*
 * gvt-rs timers: an hrtimer whose expiry (hard irq) queues a work item that
 * runs a Rust callback in process context, where the engine's mutexes can
 * be taken. Used by the simulated GPU (engines, scheduling) and by the i915
 * provider (scheduling requests). Rust side: timer.rs.
 */

#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "timer.h"

struct gvt_rs_timer {
	struct hrtimer timer;
	struct work_struct work;
	spinlock_t lock;	/* orders start against shutdown */
	bool disabled;		/* shut down: never armed again */
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
	spin_lock_init(&t->lock);
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
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	if (!t->disabled)
		hrtimer_start(&t->timer, ns_to_ktime(delay_ns),
			      HRTIMER_MODE_REL);
	spin_unlock_irqrestore(&t->lock, flags);
}

/*
 * Disable first, then cancel: the callback may be running and re-arm the
 * timer (the simulated GPU's policy work always does). Once disabled, a
 * start is ignored and the work item can no longer be queued, so after the
 * cancels nothing is pending or running, whatever the callback did.
 */
void gvt_rs_timer_shutdown(struct gvt_rs_timer *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->lock, flags);
	t->disabled = true;
	spin_unlock_irqrestore(&t->lock, flags);
	hrtimer_cancel(&t->timer);
	disable_work_sync(&t->work);
	hrtimer_cancel(&t->timer);
}

void gvt_rs_timer_free(struct gvt_rs_timer *t)
{
	if (!t)
		return;
	gvt_rs_timer_shutdown(t);
	kfree(t);
}
