/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VFIO device of a simulated vGPU, shared by the glue's files (glue.c:
 * mdev and VFIO ops; irq.c: vfio-pci interrupt semantics). Not seen by Rust.
 */
#ifndef GVT_RS_SIM_VDEV_H
#define GVT_RS_SIM_VDEV_H

#include <linux/eventfd.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/spinlock.h>
#include <linux/vfio.h>

/* The interrupt type user space enabled, as vfio-pci's irq_type. */
enum gvt_sim_irq_type {
	GVT_SIM_IRQ_NONE = -1,
	GVT_SIM_IRQ_INTX = VFIO_PCI_INTX_IRQ_INDEX,
	GVT_SIM_IRQ_MSI = VFIO_PCI_MSI_IRQ_INDEX,
};

struct gvt_sim_vdev {
	struct vfio_device vdev;
	void *vgpu;			/* Rust SimVgpu, set by probe */
	struct mutex igate;		/* serialises VFIO_DEVICE_SET_IRQS */
	spinlock_t irq_lock;		/* protects the fields below */
	enum gvt_sim_irq_type irq_type;
	struct eventfd_ctx *intx_trigger;
	struct eventfd_ctx *msi_trigger;
	struct eventfd_ctx *err_trigger;
	struct eventfd_ctx *req_trigger;
	bool intx_level;		/* the device asserts INTx */
	bool intx_masked;		/* auto-masked or masked by user space */
	struct pid *opener;
};

int gvt_sim_set_irqs(struct gvt_sim_vdev *v, u32 flags, u32 index, u32 start,
		     u32 count, void *data);
int gvt_sim_irq_count(u32 index);
void gvt_sim_irqs_release(struct gvt_sim_vdev *v);
void gvt_sim_request(struct vfio_device *vdev, unsigned int count);

#endif /* GVT_RS_SIM_VDEV_H */
