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
 * The group and iommufd modes open the device through the kernel's VFIO
 * selftest library (tools/testing/selftests/vfio/lib), as QEMU does; the
 * unbound mode takes only the library's path of the device file.
 *
 * Holds the device until SIGTERM or SIGINT, then closes every file and
 * exits 0; 1 when the library fails to open the device (it says what
 * failed), 2 on another error.
 */
#define _GNU_SOURCE
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
#include <limits.h>
#include <linux/vfio.h>

#include <libvfio.h>

static const char *uuid;

static void die(const char *what)
{
	fprintf(stderr, "gvt_vfio_hold %s: %s: %s\n", uuid, what, strerror(errno));
	exit(2);
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
	struct vfio_pci_device *vdev = NULL;
	struct iommu *iommu = NULL;
	char name[PATH_MAX];
	int fd, efd = -1, sfd, c;
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

	snprintf(name, sizeof(name), "/sys/bus/mdev/devices/%s", uuid);
	if (strcmp(mode, "unbound")) {
		/* The group and a container, or the device file on an IOAS. */
		iommu = iommu_init(strcmp(mode, "group") ? MODE_IOMMUFD :
				   MODE_VFIO_TYPE1V2_IOMMU);
		vdev = vfio_pci_device_init(name, iommu);
		fd = vdev->fd;
	} else {
		const char *cdev = vfio_pci_get_cdev_path(name);

		fd = open(cdev, O_RDWR | O_CLOEXEC);
		free((void *)cdev);
		if (fd < 0)
			die("open /dev/vfio/devices/vfioN");
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
	if (vdev) {
		vfio_pci_device_cleanup(vdev);
		iommu_cleanup(iommu);
	} else {
		close(fd);
	}
	return 0;

usage:
	fprintf(stderr, "usage: gvt_vfio_hold [-m group|iommufd|unbound] [-r file] [-q file] UUID\n"
			"       (-q not with -m unbound)\n");
	return 2;
}
