// SPDX-License-Identifier: GPL-2.0
/*
 * gvt-rs simulated GPU: C glue between the mdev core and Rust.
 *
 * Why C here: the kernel crate has no mdev abstraction yet, and VFIO_MDEV is
 * a hidden tristate that a module's "select" makes =m, so Rust helpers
 * (linked into vmlinux) cannot call it. So this file, linked into gvt_rs.ko,
 * owns the mdev parent, types and driver and the "gvtsim" device class, and
 * calls Rust through a layout-free ABI (gvt_sim.h): opaque pointers, integers
 * and kernel buffers. The VFIO device of a vGPU is Rust (kernel::vfio).
 */

#include <linux/device.h>
#include <linux/mdev.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vfio.h>

#include "gvt_sim.h"

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
	void *vgpu;
	int ret;

	ret = gvt_rs_sim_probe(p->gpu, to_type_index(mdev->type), &mdev->dev,
			       &vgpu);
	if (ret)
		return ret;
	dev_set_drvdata(&mdev->dev, vgpu);
	return 0;
}

static void gvt_sim_remove(struct mdev_device *mdev)
{
	gvt_rs_sim_remove(dev_get_drvdata(&mdev->dev));
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
