// SPDX-License-Identifier: GPL-2.0
/*
 * gvt-rs simulated GPU: interrupts with vfio-pci's semantics.
 *
 * QEMU drives a vGPU's interrupts exactly as it drives a vfio-pci device,
 * so every VFIO_DEVICE_SET_IRQS call is validated and acted on as
 * drivers/vfio/pci/vfio_pci_intrs.c does: one interrupt type at a time;
 * INTx is level triggered, masked automatically when it fires and unmasked
 * by user space (it fires again at unmask while the device still asserts
 * it); MSI has one vector; REQ carries device-removal requests. The device
 * model (Rust) only reports its INTx level and MSI events through
 * gvt_sim_vdev_irq().
 */

#include <linux/eventfd.h>
#include <linux/slab.h>
#include <linux/vfio.h>

#include "gvt_sim.h"
#include "vdev.h"

/* Vectors per index, as vfio_pci_get_irq_count() gives for our device. */
int gvt_sim_irq_count(u32 index)
{
	switch (index) {
	case VFIO_PCI_INTX_IRQ_INDEX:	/* interrupt pin INTA */
	case VFIO_PCI_MSI_IRQ_INDEX:	/* MSI capability, one vector */
	case VFIO_PCI_ERR_IRQ_INDEX:	/* never signalled: no AER here */
	case VFIO_PCI_REQ_IRQ_INDEX:
		return 1;
	default:			/* no MSI-X */
		return 0;
	}
}

static void gvt_sim_put(struct eventfd_ctx *ctx)
{
	if (ctx)
		eventfd_ctx_put(ctx);
}

/* Fire INTx if the device asserts it and it is not masked; mask it. */
static void gvt_sim_intx_fire_locked(struct gvt_sim_vdev *v)
{
	lockdep_assert_held(&v->irq_lock);
	if (v->irq_type != GVT_SIM_IRQ_INTX || !v->intx_level ||
	    v->intx_masked)
		return;
	v->intx_masked = true;
	if (v->intx_trigger)
		eventfd_signal(v->intx_trigger);
}

void gvt_sim_vdev_irq(struct gvt_sim_vdev *v, bool level, bool edge)
{
	unsigned long flags;

	spin_lock_irqsave(&v->irq_lock, flags);
	v->intx_level = level;
	if (v->irq_type == GVT_SIM_IRQ_MSI) {
		if (edge && v->msi_trigger)
			eventfd_signal(v->msi_trigger);
	} else {
		gvt_sim_intx_fire_locked(v);
	}
	spin_unlock_irqrestore(&v->irq_lock, flags);
}

/* Replace *slot by ctx (NULL clears it); the old context is returned. */
static struct eventfd_ctx *gvt_sim_swap(struct gvt_sim_vdev *v,
					struct eventfd_ctx **slot,
					struct eventfd_ctx *ctx)
{
	struct eventfd_ctx *old;
	unsigned long flags;

	spin_lock_irqsave(&v->irq_lock, flags);
	old = *slot;
	*slot = ctx;
	spin_unlock_irqrestore(&v->irq_lock, flags);
	return old;
}

static void gvt_sim_signal(struct gvt_sim_vdev *v, struct eventfd_ctx **slot)
{
	unsigned long flags;

	spin_lock_irqsave(&v->irq_lock, flags);
	if (*slot)
		eventfd_signal(*slot);
	spin_unlock_irqrestore(&v->irq_lock, flags);
}

/* An eventfd context from a user fd: NULL for fd < 0. */
static struct eventfd_ctx *gvt_sim_fdget(s32 fd)
{
	return fd >= 0 ? eventfd_ctx_fdget(fd) : NULL;
}

static void gvt_sim_set_type(struct gvt_sim_vdev *v, enum gvt_sim_irq_type t,
			     struct eventfd_ctx *trigger)
{
	struct eventfd_ctx *old_intx, *old_msi;
	unsigned long flags;

	spin_lock_irqsave(&v->irq_lock, flags);
	old_intx = v->intx_trigger;
	old_msi = v->msi_trigger;
	v->intx_trigger = t == GVT_SIM_IRQ_INTX ? trigger : NULL;
	v->msi_trigger = t == GVT_SIM_IRQ_MSI ? trigger : NULL;
	v->irq_type = t;
	v->intx_masked = false;
	/* A level already asserted fires as soon as INTx is enabled. */
	gvt_sim_intx_fire_locked(v);
	spin_unlock_irqrestore(&v->irq_lock, flags);
	gvt_sim_put(old_intx);
	gvt_sim_put(old_msi);
}

static int gvt_sim_intx_mask(struct gvt_sim_vdev *v, u32 start, u32 count,
			     u32 flags, void *data, bool mask)
{
	unsigned long irqflags;

	if (v->irq_type != GVT_SIM_IRQ_INTX || start != 0 || count != 1)
		return -EINVAL;
	if (flags & VFIO_IRQ_SET_DATA_EVENTFD)
		return -ENOTTY;	/* as vfio-pci: no irqfd (un)masking here */
	if ((flags & VFIO_IRQ_SET_DATA_BOOL) && !*(u8 *)data)
		return 0;
	spin_lock_irqsave(&v->irq_lock, irqflags);
	if (mask) {
		v->intx_masked = true;
	} else if (v->intx_masked) {
		v->intx_masked = false;
		/* Still asserted: it fires again (and masks) at once. */
		gvt_sim_intx_fire_locked(v);
	}
	spin_unlock_irqrestore(&v->irq_lock, irqflags);
	return 0;
}

static int gvt_sim_intx_trigger(struct gvt_sim_vdev *v, u32 start, u32 count,
				u32 flags, void *data)
{
	struct eventfd_ctx *ctx;
	bool intx = v->irq_type == GVT_SIM_IRQ_INTX;

	if (intx && !count && (flags & VFIO_IRQ_SET_DATA_NONE)) {
		gvt_sim_set_type(v, GVT_SIM_IRQ_NONE, NULL);
		return 0;
	}
	if (!(intx || v->irq_type == GVT_SIM_IRQ_NONE) || start != 0 ||
	    count != 1)
		return -EINVAL;
	if (flags & VFIO_IRQ_SET_DATA_EVENTFD) {
		ctx = gvt_sim_fdget(*(s32 *)data);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
		if (intx)
			gvt_sim_put(gvt_sim_swap(v, &v->intx_trigger, ctx));
		else
			gvt_sim_set_type(v, GVT_SIM_IRQ_INTX, ctx);
		return 0;
	}
	if (!intx)
		return -EINVAL;
	/* DATA_NONE and DATA_BOOL: loopback test, no masking. */
	if ((flags & VFIO_IRQ_SET_DATA_NONE) || *(u8 *)data)
		gvt_sim_signal(v, &v->intx_trigger);
	return 0;
}

static int gvt_sim_msi_trigger(struct gvt_sim_vdev *v, u32 start, u32 count,
			       u32 flags, void *data)
{
	struct eventfd_ctx *ctx;
	bool msi = v->irq_type == GVT_SIM_IRQ_MSI;

	if (msi && !count && (flags & VFIO_IRQ_SET_DATA_NONE)) {
		gvt_sim_set_type(v, GVT_SIM_IRQ_NONE, NULL);
		return 0;
	}
	if (!(msi || v->irq_type == GVT_SIM_IRQ_NONE))
		return -EINVAL;
	if (flags & VFIO_IRQ_SET_DATA_EVENTFD) {
		/* Enabling no vector fails as pci_alloc_irq_vectors() does. */
		if (!msi && start + count == 0)
			return -ERANGE;
		if (!count)
			return 0;
		ctx = gvt_sim_fdget(*(s32 *)data);
		if (IS_ERR(ctx)) {
			/*
			 * vfio-pci frees the vector before it looks the fd up,
			 * and leaves a type it just enabled disabled.
			 */
			if (msi)
				gvt_sim_put(gvt_sim_swap(v, &v->msi_trigger,
							 NULL));
			return PTR_ERR(ctx);
		}
		if (msi)
			gvt_sim_put(gvt_sim_swap(v, &v->msi_trigger, ctx));
		else
			gvt_sim_set_type(v, GVT_SIM_IRQ_MSI, ctx);
		return 0;
	}
	if (!msi)
		return -EINVAL;
	if (count && ((flags & VFIO_IRQ_SET_DATA_NONE) || *(u8 *)data))
		gvt_sim_signal(v, &v->msi_trigger);
	return 0;
}

/* vfio_pci_set_ctx_trigger_single(): the ERR and REQ indexes. */
static int gvt_sim_single_trigger(struct gvt_sim_vdev *v,
				  struct eventfd_ctx **slot, u32 start,
				  u32 count, u32 flags, void *data)
{
	struct eventfd_ctx *ctx;
	unsigned long irqflags;
	bool set;

	if (start != 0 || count > 1)
		return -EINVAL;
	if (flags & VFIO_IRQ_SET_DATA_NONE) {
		spin_lock_irqsave(&v->irq_lock, irqflags);
		set = *slot;
		if (set && count)
			eventfd_signal(*slot);
		spin_unlock_irqrestore(&v->irq_lock, irqflags);
		if (!set)
			return -EINVAL;
		if (!count)
			gvt_sim_put(gvt_sim_swap(v, slot, NULL));
		return 0;
	}
	if (!count)
		return -EINVAL;
	if (flags & VFIO_IRQ_SET_DATA_BOOL) {
		if (*(u8 *)data)
			gvt_sim_signal(v, slot);
		return 0;
	}
	if (*(s32 *)data < -1)
		return -EINVAL;
	ctx = gvt_sim_fdget(*(s32 *)data);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	gvt_sim_put(gvt_sim_swap(v, slot, ctx));
	return 0;
}

/* VFIO_DEVICE_SET_IRQS after vfio_set_irqs_validate_and_prepare(). */
int gvt_sim_set_irqs(struct gvt_sim_vdev *v, u32 flags, u32 index, u32 start,
		     u32 count, void *data)
{
	u32 action = flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
	int ret = -ENOTTY;

	mutex_lock(&v->igate);
	switch (index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			ret = gvt_sim_intx_trigger(v, start, count, flags, data);
		else if (action == VFIO_IRQ_SET_ACTION_MASK ||
			 action == VFIO_IRQ_SET_ACTION_UNMASK)
			ret = gvt_sim_intx_mask(v, start, count, flags, data,
						action == VFIO_IRQ_SET_ACTION_MASK);
		break;
	case VFIO_PCI_MSI_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			ret = gvt_sim_msi_trigger(v, start, count, flags, data);
		break;
	case VFIO_PCI_ERR_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			ret = gvt_sim_single_trigger(v, &v->err_trigger, start,
						     count, flags, data);
		break;
	case VFIO_PCI_REQ_IRQ_INDEX:
		if (action == VFIO_IRQ_SET_ACTION_TRIGGER)
			ret = gvt_sim_single_trigger(v, &v->req_trigger, start,
						     count, flags, data);
		break;
	}
	mutex_unlock(&v->igate);
	return ret;
}

/* Close: every trigger released and interrupts off, as vfio-pci does. */
void gvt_sim_irqs_release(struct gvt_sim_vdev *v)
{
	mutex_lock(&v->igate);
	gvt_sim_set_type(v, GVT_SIM_IRQ_NONE, NULL);
	gvt_sim_put(gvt_sim_swap(v, &v->err_trigger, NULL));
	gvt_sim_put(gvt_sim_swap(v, &v->req_trigger, NULL));
	mutex_unlock(&v->igate);
}

/* The mdev is being removed while open: ask user space to release it. */
void gvt_sim_request(struct vfio_device *vdev, unsigned int count)
{
	struct gvt_sim_vdev *v = container_of(vdev, struct gvt_sim_vdev, vdev);
	unsigned long flags;
	bool sent = false;

	spin_lock_irqsave(&v->irq_lock, flags);
	if (v->req_trigger) {
		eventfd_signal(v->req_trigger);
		sent = true;
	}
	spin_unlock_irqrestore(&v->irq_lock, flags);
	if (sent && !(count % 10))
		dev_notice_ratelimited(vdev->dev,
				       "Relaying device request to user (#%u)\n",
				       count);
	else if (!sent && count == 0)
		dev_warn(vdev->dev,
			 "No device request channel registered, blocked until released by user\n");
}
