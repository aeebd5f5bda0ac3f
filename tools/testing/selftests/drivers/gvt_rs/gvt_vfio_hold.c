// SPDX-License-Identifier: GPL-2.0
/*
 * gvt_vfio_hold: holds a vGPU's VFIO device open, as a VMM does that does
 * not let go when the host asks for the device back (a guest that ignores
 * the ACPI eject, a hung VMM, any process that opened the device).
 *
 *   gvt_vfio_hold [-m group|iommufd|unbound] [-r FILE] [-q FILE] UUID
 *     -m group    the device through its VFIO group and a container
 *                 (VFIO_GROUP_GET_DEVICE_FD), as QEMU with the legacy
 *                 container; the default
 *     -m iommufd  /dev/vfio/devices/vfioN bound to an iommufd
 *                 (VFIO_DEVICE_BIND_IOMMUFD) and attached to an IOAS, as
 *                 QEMU with iommufd
 *     -m unbound  /dev/vfio/devices/vfioN opened and nothing else: the
 *                 device is not open for VFIO (no open_device), and the
 *                 file holds no reference on the driver's module
 *     -r FILE     create FILE once the device is held
 *     -q FILE     (group, iommufd) register a REQ eventfd and write the
 *                 number of device requests received to FILE after each;
 *                 they are not answered
 *
 * Holds the device until SIGTERM or SIGINT, then closes every file and
 * exits 0; 2 on an error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <libgen.h>
#include <limits.h>
#include <linux/iommufd.h>
#include <linux/vfio.h>

static const char *uuid;

static void die(const char *what)
{
	fprintf(stderr, "gvt_vfio_hold %s: %s: %s\n", uuid, what, strerror(errno));
	exit(2);
}

/* The device's group and container, as QEMU opens them. */
static int open_group(int *container, int *group)
{
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/iommu_group", uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		die("readlink iommu_group");
	link[n] = 0;
	*container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (*container < 0)
		die("open /dev/vfio/vfio");
	snprintf(path, sizeof(path), "/dev/vfio/%s", basename(link));
	*group = open(path, O_RDWR | O_CLOEXEC);
	if (*group < 0)
		die("open the group");
	if (ioctl(*group, VFIO_GROUP_GET_STATUS, &gs) ||
	    !(gs.flags & VFIO_GROUP_FLAGS_VIABLE))
		die("VFIO_GROUP_GET_STATUS");
	if (ioctl(*group, VFIO_GROUP_SET_CONTAINER, container))
		die("VFIO_GROUP_SET_CONTAINER");
	if (ioctl(*container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		die("VFIO_SET_IOMMU");
	fd = ioctl(*group, VFIO_GROUP_GET_DEVICE_FD, uuid);
	if (fd < 0)
		die("VFIO_GROUP_GET_DEVICE_FD");
	return fd;
}

/* /dev/vfio/devices/vfioN of the device (its vfio-dev/ entry in sysfs). */
static int open_cdev(void)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/vfio-dev", uuid);
	dir = opendir(path);
	if (!dir)
		die("no vfio-dev/ (CONFIG_VFIO_DEVICE_CDEV)");
	while ((e = readdir(dir)) && strncmp(e->d_name, "vfio", 4))
		;
	if (!e) {
		errno = ENOENT;
		die("no vfio-dev/vfioN");
	}
	snprintf(path, sizeof(path), "/dev/vfio/devices/%s", e->d_name);
	closedir(dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/vfio/devices/vfioN");
	return fd;
}

/* Binds the device file to a new iommufd and attaches it to an IOAS. */
static int bind_iommufd(int fd)
{
	struct vfio_device_bind_iommufd bind = { .argsz = sizeof(bind) };
	struct vfio_device_attach_iommufd_pt attach = { .argsz = sizeof(attach) };
	struct iommu_ioas_alloc alloc = { .size = sizeof(alloc) };
	int iommufd = open("/dev/iommu", O_RDWR | O_CLOEXEC);

	if (iommufd < 0)
		die("open /dev/iommu");
	bind.iommufd = iommufd;
	if (ioctl(fd, VFIO_DEVICE_BIND_IOMMUFD, &bind))
		die("VFIO_DEVICE_BIND_IOMMUFD");
	if (ioctl(iommufd, IOMMU_IOAS_ALLOC, &alloc))
		die("IOMMU_IOAS_ALLOC");
	attach.pt_id = alloc.out_ioas_id;
	if (ioctl(fd, VFIO_DEVICE_ATTACH_IOMMUFD_PT, &attach))
		die("VFIO_DEVICE_ATTACH_IOMMUFD_PT");
	return iommufd;
}

/* Registers @efd as the device's REQ trigger. */
static void set_req(int fd, int efd)
{
	char buf[offsetof(struct vfio_irq_set, data) + sizeof(int32_t)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;

	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_REQ_IRQ_INDEX;
	set->start = 0;
	set->count = 1;
	memcpy(set->data, &efd, sizeof(int32_t));
	if (ioctl(fd, VFIO_DEVICE_SET_IRQS, set))
		die("VFIO_DEVICE_SET_IRQS(REQ)");
}

static void write_file(const char *path, unsigned long long n)
{
	char tmp[PATH_MAX];
	FILE *f;

	/* Replaced at once: a reader never sees half a number. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die("fopen");
	fprintf(f, "%llu\n", n);
	if (fclose(f) || rename(tmp, path))
		die("write the count");
}

int main(int argc, char **argv)
{
	const char *mode = "group", *ready = NULL, *reqs = NULL;
	int container = -1, group = -1, iommufd = -1, fd, efd = -1, sfd, c;
	unsigned long long requests = 0;
	sigset_t stop;

	while ((c = getopt(argc, argv, "m:r:q:")) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'q':
			reqs = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || (strcmp(mode, "group") && strcmp(mode, "iommufd") &&
				   strcmp(mode, "unbound")) ||
	    (reqs && !strcmp(mode, "unbound")))
		goto usage;
	uuid = argv[optind];
	/* SIGTERM and SIGINT are read from a signalfd: none is lost. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	if (sigprocmask(SIG_BLOCK, &stop, NULL))
		die("sigprocmask");
	sfd = signalfd(-1, &stop, SFD_CLOEXEC);
	if (sfd < 0)
		die("signalfd");

	if (!strcmp(mode, "group")) {
		fd = open_group(&container, &group);
	} else {
		fd = open_cdev();
		if (!strcmp(mode, "iommufd"))
			iommufd = bind_iommufd(fd);
	}
	if (reqs) {
		efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd < 0)
			die("eventfd");
		set_req(fd, efd);
		write_file(reqs, 0);
	}
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f || fclose(f))
			die("create the ready file");
	}
	for (;;) {
		/* Without an eventfd, the second entry (fd -1) is ignored. */
		struct pollfd p[2] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = efd, .events = POLLIN },
		};
		uint64_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p[0].revents)
			break;
		if (p[1].revents && read(efd, &n, sizeof(n)) == sizeof(n)) {
			requests += n;
			write_file(reqs, requests);
		}
	}
	close(sfd);
	if (efd >= 0)
		close(efd);
	close(fd);
	if (iommufd >= 0)
		close(iommufd);
	if (group >= 0)
		close(group);
	if (container >= 0)
		close(container);
	return 0;

usage:
	fprintf(stderr, "usage: gvt_vfio_hold [-m group|iommufd|unbound] [-r file] [-q file] UUID\n"
			"       (-q not with -m unbound)\n");
	return 2;
}
