// SPDX-License-Identifier: GPL-2.0
/*
 * gvt-rs simulated GPU: C glue between the mdev/VFIO cores and Rust.
 *
 * Why C here: VFIO_MDEV is a hidden tristate that a module's "select" makes
 * =m, and the layout of struct vfio_device depends on CONFIG_VFIO_GROUP,
 * CONFIG_VFIO_DEVICE_CDEV and CONFIG_IOMMUFD. Rust helpers under rust/helpers
 * are linked into vmlinux and must not reference symbols of modules, and the
 * prebuilt `kernel` crate cannot be extended from a module. So, as binder
 * does with rust_binderfs.c, this file is linked into gvt_rs.ko and owns every
 * config-dependent structure (the mdev parent, types and driver, the
 * vfio_device container, DMA to guest memory; the eventfd triggers and
 * vfio-pci's interrupt semantics are in irq.c; its timers are Rust). It
 * exposes a layout-free ABI to Rust (gvt_sim.h): opaque pointers, integers
 * and kernel buffers. All policy and device emulation is in Rust.
 */

#include <linux/device.h>
#include <linux/eventfd.h>
#include <linux/mdev.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched/cputime.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vfio.h>
#include <linux/workqueue.h>

#include "gvt_sim.h"
#include "vdev.h"

#define GVT_SIM_OFFSET_SHIFT	40
#define GVT_SIM_OFFSET_MASK	((1ULL << GVT_SIM_OFFSET_SHIFT) - 1)

struct gvt_sim_type {
	struct mdev_type type;
	unsigned int index;
};

struct gvt_sim_parent {
	struct mdev_parent parent;
	/* The class device made for a GPU without a PCI function, or NULL. */
	struct device *class_dev;
	struct gvt_sim_type types[GVT_SIM_MAX_TYPES];
	struct mdev_type *type_ptrs[GVT_SIM_MAX_TYPES];
	unsigned int nr_types;
	void *gpu;
};

static const struct class gvt_sim_class = {
	.name = "gvtsim",
};

/* ---- interrupts and VM CPU time ---------------------------------------- */

int gvt_sim_vdev_dma_rw(struct gvt_sim_vdev *v, u64 iova, void *buf,
			size_t len, bool write)
{
	return vfio_dma_rw(&v->vdev, iova, buf, len, write);
}

/*
 * CPU time of the process that opened the device: the sum over its live
 * threads (a VM's vCPU threads, as KVM's are summed for GVT-g). Threads
 * that exited no longer count, which thread_group_cputime() would avoid,
 * but it is not exported; vmcg uses the increase between two samples.
 */
u64 gvt_sim_vdev_cpu_ns(struct gvt_sim_vdev *v)
{
	struct task_struct *task, *t;
	unsigned long flags;
	struct pid *pid;
	u64 ut, st, sum = 0;

	spin_lock_irqsave(&v->irq_lock, flags);
	pid = get_pid(v->opener);
	spin_unlock_irqrestore(&v->irq_lock, flags);
	if (!pid)
		return 0;
	task = get_pid_task(pid, PIDTYPE_PID);
	if (task) {
		rcu_read_lock();
		for_each_thread(task, t) {
			task_cputime_adjusted(t, &ut, &st);
			sum += ut + st;
		}
		rcu_read_unlock();
		put_task_struct(task);
	}
	put_pid(pid);
	return sum;
}

/* ---- vfio_device_ops ----------------------------------------------------- */

static struct gvt_sim_vdev *to_sim(struct vfio_device *vdev)
{
	return container_of(vdev, struct gvt_sim_vdev, vdev);
}

static int gvt_sim_open(struct vfio_device *vdev)
{
	struct gvt_sim_vdev *v = to_sim(vdev);
	struct pid *pid = get_task_pid(current, PIDTYPE_PID);
	struct pid *old;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&v->irq_lock, flags);
	old = v->opener;
	v->opener = pid;
	spin_unlock_irqrestore(&v->irq_lock, flags);
	put_pid(old);
	ret = gvt_rs_sim_open(v->vgpu);
	if (ret) {
		spin_lock_irqsave(&v->irq_lock, flags);
		v->opener = NULL;
		spin_unlock_irqrestore(&v->irq_lock, flags);
		put_pid(pid);
	}
	return ret;
}

static void gvt_sim_close(struct vfio_device *vdev)
{
	struct gvt_sim_vdev *v = to_sim(vdev);
	unsigned long flags;
	struct pid *old;

	gvt_rs_sim_close(v->vgpu);
	gvt_sim_irqs_release(v);
	spin_lock_irqsave(&v->irq_lock, flags);
	old = v->opener;
	v->opener = NULL;
	spin_unlock_irqrestore(&v->irq_lock, flags);
	put_pid(old);
}

static ssize_t gvt_sim_rw(struct vfio_device *vdev, char __user *ubuf,
			  size_t count, loff_t *ppos, bool write)
{
	struct gvt_sim_vdev *v = to_sim(vdev);
	u64 pos = *ppos;
	u32 index = pos >> GVT_SIM_OFFSET_SHIFT;
	u64 off = pos & GVT_SIM_OFFSET_MASK;
	u8 buf[GVT_SIM_MAX_ACCESS];
	ssize_t ret;

	/*
	 * One register access per read/write, as an MMIO cycle; config space
	 * may be read whole (QEMU reads it in one access).
	 */
	if (count == 0 || count > sizeof(buf))
		return -EINVAL;
	if (write && copy_from_user(buf, ubuf, count))
		return -EFAULT;
	ret = gvt_rs_sim_access(v->vgpu, index, off, buf, count, write);
	if (ret < 0)
		return ret;
	if (!write && copy_to_user(ubuf, buf, count))
		return -EFAULT;
	*ppos += count;
	return count;
}

static ssize_t gvt_sim_read(struct vfio_device *vdev, char __user *buf,
			    size_t count, loff_t *ppos)
{
	return gvt_sim_rw(vdev, buf, count, ppos, false);
}

static ssize_t gvt_sim_write(struct vfio_device *vdev, const char __user *buf,
			     size_t count, loff_t *ppos)
{
	return gvt_sim_rw(vdev, (char __user *)buf, count, ppos, true);
}

static int gvt_sim_region_info(struct vfio_device *vdev,
			       struct vfio_region_info *info,
			       struct vfio_info_cap *caps)
{
	if (info->index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;
	info->offset = (u64)info->index << GVT_SIM_OFFSET_SHIFT;
	info->size = gvt_rs_sim_region_size(info->index);
	info->flags = info->size ? (VFIO_REGION_INFO_FLAG_READ |
				    VFIO_REGION_INFO_FLAG_WRITE) : 0;
	return 0;
}

static long gvt_sim_ioctl(struct vfio_device *vdev, unsigned int cmd,
			  unsigned long arg)
{
	struct gvt_sim_vdev *v = to_sim(vdev);
	unsigned long minsz;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info info;

		minsz = offsetofend(struct vfio_device_info, num_irqs);
		if (copy_from_user(&info, (void __user *)arg, minsz))
			return -EFAULT;
		if (info.argsz < minsz)
			return -EINVAL;
		info.flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
		info.num_regions = VFIO_PCI_NUM_REGIONS;
		info.num_irqs = VFIO_PCI_NUM_IRQS;
		return copy_to_user((void __user *)arg, &info, minsz) ?
			-EFAULT : 0;
	}
	case VFIO_DEVICE_GET_IRQ_INFO: {
		struct vfio_irq_info info;

		minsz = offsetofend(struct vfio_irq_info, count);
		if (copy_from_user(&info, (void __user *)arg, minsz))
			return -EFAULT;
		if (info.argsz < minsz || info.index >= VFIO_PCI_NUM_IRQS)
			return -EINVAL;
		info.flags = VFIO_IRQ_INFO_EVENTFD;
		info.count = gvt_sim_irq_count(info.index);
		if (info.index == VFIO_PCI_INTX_IRQ_INDEX)
			info.flags |= VFIO_IRQ_INFO_MASKABLE |
				      VFIO_IRQ_INFO_AUTOMASKED;
		else
			info.flags |= VFIO_IRQ_INFO_NORESIZE;
		return copy_to_user((void __user *)arg, &info, minsz) ?
			-EFAULT : 0;
	}
	case VFIO_DEVICE_SET_IRQS: {
		struct vfio_irq_set hdr;
		size_t data_size = 0;
		u8 *data = NULL;
		int ret;

		minsz = offsetofend(struct vfio_irq_set, count);
		if (copy_from_user(&hdr, (void __user *)arg, minsz))
			return -EFAULT;
		ret = vfio_set_irqs_validate_and_prepare(&hdr,
							 gvt_sim_irq_count(hdr.index),
							 VFIO_PCI_NUM_IRQS,
							 &data_size);
		if (ret)
			return ret;
		if (data_size) {
			data = memdup_user((void __user *)(arg + minsz),
					   data_size);
			if (IS_ERR(data))
				return PTR_ERR(data);
		}
		ret = gvt_sim_set_irqs(v, hdr.flags, hdr.index, hdr.start,
				       hdr.count, data);
		kfree(data);
		return ret;
	}
	case VFIO_DEVICE_RESET:
		return gvt_rs_sim_reset(v->vgpu);
	}
	return -ENOTTY;
}

static int gvt_sim_init(struct vfio_device *vdev)
{
	struct gvt_sim_vdev *v = to_sim(vdev);

	mutex_init(&v->igate);
	spin_lock_init(&v->irq_lock);
	v->irq_type = GVT_SIM_IRQ_NONE;
	return 0;
}

static void gvt_sim_release(struct vfio_device *vdev)
{
	mutex_destroy(&to_sim(vdev)->igate);
}

static const struct vfio_device_ops gvt_sim_dev_ops = {
	.name = "vfio-gvtsim",
	.init = gvt_sim_init,
	.release = gvt_sim_release,
	.open_device = gvt_sim_open,
	.close_device = gvt_sim_close,
	.read = gvt_sim_read,
	.write = gvt_sim_write,
	.ioctl = gvt_sim_ioctl,
	.request = gvt_sim_request,
	.get_region_info_caps = gvt_sim_region_info,
	.bind_iommufd = vfio_iommufd_emulated_bind,
	.unbind_iommufd = vfio_iommufd_emulated_unbind,
	.attach_ioas = vfio_iommufd_emulated_attach_ioas,
	.detach_ioas = vfio_iommufd_emulated_detach_ioas,
};

/* ---- mdev driver ------------------------------------------------------- */

static struct gvt_sim_parent *to_parent(struct mdev_type *mtype)
{
	return container_of(mtype->parent, struct gvt_sim_parent, parent);
}

static unsigned int to_type_index(struct mdev_type *mtype)
{
	return container_of(mtype, struct gvt_sim_type, type)->index;
}

static int gvt_sim_probe(struct mdev_device *mdev)
{
	struct gvt_sim_parent *p = to_parent(mdev->type);
	struct gvt_sim_vdev *v;
	int ret;

	v = vfio_alloc_device(gvt_sim_vdev, vdev, &mdev->dev, &gvt_sim_dev_ops);
	if (IS_ERR(v))
		return PTR_ERR(v);
	ret = gvt_rs_sim_probe(p->gpu, to_type_index(mdev->type), v,
			       &mdev->dev, &v->vgpu);
	if (ret)
		goto err_put;
	ret = vfio_register_emulated_iommu_dev(&v->vdev);
	if (ret)
		goto err_remove;
	dev_set_drvdata(&mdev->dev, v);
	return 0;

err_remove:
	gvt_rs_sim_remove(v->vgpu);
	v->vgpu = NULL;
err_put:
	vfio_put_device(&v->vdev);
	return ret;
}

static void gvt_sim_remove(struct mdev_device *mdev)
{
	struct gvt_sim_vdev *v = dev_get_drvdata(&mdev->dev);

	vfio_unregister_group_dev(&v->vdev);
	gvt_rs_sim_remove(v->vgpu);
	v->vgpu = NULL;
	vfio_put_device(&v->vdev);
}

static unsigned int gvt_sim_get_available(struct mdev_type *mtype)
{
	return gvt_rs_sim_available(to_parent(mtype)->gpu,
				    to_type_index(mtype));
}

static ssize_t gvt_sim_show_description(struct mdev_type *mtype, char *buf)
{
	return gvt_rs_sim_describe(to_parent(mtype)->gpu, to_type_index(mtype),
				   buf);
}

static struct mdev_driver gvt_sim_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = "gvtsim",
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
	},
	.probe = gvt_sim_probe,
	.remove = gvt_sim_remove,
	.get_available = gvt_sim_get_available,
	.show_description = gvt_sim_show_description,
};

int gvt_sim_driver_register(void)
{
	int ret;

	ret = mdev_register_driver(&gvt_sim_driver);
	if (ret)
		return ret;
	ret = class_register(&gvt_sim_class);
	if (ret)
		mdev_unregister_driver(&gvt_sim_driver);
	return ret;
}

void gvt_sim_driver_unregister(void)
{
	class_unregister(&gvt_sim_class);
	mdev_unregister_driver(&gvt_sim_driver);
}

static void gvt_sim_class_dev_release(struct device *dev)
{
	kfree(dev);
}

static struct device *gvt_sim_class_dev_add(const char *name)
{
	struct device *dev;
	int ret;

	dev = kzalloc_obj(*dev);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	device_initialize(dev);
	dev->class = &gvt_sim_class;
	dev->release = gvt_sim_class_dev_release;
	ret = dev_set_name(dev, "%s", name);
	if (!ret)
		ret = device_add(dev);
	if (ret) {
		put_device(dev);
		return ERR_PTR(ret);
	}
	return dev;
}

int gvt_sim_parent_register(void *gpu, struct device *dev, const char *name,
			    const char *const *type_names,
			    const char *const *pretty_names,
			    unsigned int nr_types, struct gvt_sim_parent **out)
{
	struct gvt_sim_parent *p;
	unsigned int i;
	int ret;

	if (nr_types == 0 || nr_types > GVT_SIM_MAX_TYPES)
		return -EINVAL;
	p = kzalloc_obj(*p);
	if (!p)
		return -ENOMEM;
	p->gpu = gpu;
	p->nr_types = nr_types;
	for (i = 0; i < nr_types; i++) {
		p->types[i].index = i;
		p->types[i].type.sysfs_name = type_names[i];
		p->types[i].type.pretty_name = pretty_names[i];
		p->type_ptrs[i] = &p->types[i].type;
	}
	if (!dev) {
		p->class_dev = gvt_sim_class_dev_add(name);
		if (IS_ERR(p->class_dev)) {
			ret = PTR_ERR(p->class_dev);
			goto err_free;
		}
		dev = p->class_dev;
	}
	ret = mdev_register_parent(&p->parent, dev, &gvt_sim_driver,
				   p->type_ptrs, nr_types);
	if (ret)
		goto err_class_dev;
	*out = p;
	return 0;

err_class_dev:
	if (p->class_dev)
		device_unregister(p->class_dev);
err_free:
	kfree(p);
	return ret;
}

void gvt_sim_parent_unregister(struct gvt_sim_parent *p)
{
	mdev_unregister_parent(&p->parent);
	if (p->class_dev)
		device_unregister(p->class_dev);
	kfree(p);
}
