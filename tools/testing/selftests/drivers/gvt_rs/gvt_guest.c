// SPDX-License-Identifier: GPL-2.0
/*
 * gvt_guest: a guest emulator for gvt-rs's simulated GPU.
 *
 * Opens a vGPU through VFIO exactly as QEMU does (container, group,
 * VFIO_SET_IOMMU(TYPE1v2), VFIO_GROUP_GET_DEVICE_FD, GET_INFO, REGION_INFO,
 * IRQ_INFO, SET_IRQS with an eventfd), then submits command request blocks
 * with pwrite() to BAR0 and waits for completions with read() on the
 * eventfd, following a workload profile, and reports its own throughput.
 *
 *   gvt_guest [options] UUID
 *     -p compute|frames|long|idle   profile (default compute)
 *     -t SECONDS   run time (default 5)
 *     -d US        workload duration (compute 2000, frames 1000, long 20000)
 *     -q N         workloads kept queued (compute 4, long 2)
 *     -f N         workloads per frame (frames, default 4)
 *     -z US        CPU think time between frames (default 4000)
 *     -e ENGINE    engine (default 0; -1 alternates between engines)
 *     -b BYTES     bytes moved per workload (default 65536)
 *     -i msi|intx  interrupt (default msi)
 *     -c           protocol self-check (good and malformed accesses)
 *     -g           check the vGPU's GTT entries while running
 *     -r FILE      create FILE once the device is open and ready
 *     -v N         N more threads that keep a CPU busy for the run, as
 *                  the vCPU threads of a busy VM do (default 0)
 *
 * Register map: Documentation/gvt-rs/simulated-gpu.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/vfio.h>

#define R_ID		0x00
#define R_ENGINES	0x08
#define R_VGPU_ID	0x0c
#define R_STATUS	0x10
#define R_SUBMITTED	0x18
#define R_COMPLETED	0x1c
#define R_LAST_TAG	0x20
#define R_MAX_DURATION	0x24
#define R_GM_HIGH	0x2c
#define R_BUSY_NS	0x30
#define R_SUBMIT	0x40
#define R_GTT_INDEX	0x60
#define R_GTT_DATA	0x68
#define DEVICE_MAGIC	0x53545647u

struct dev {
	int container, group, fd, efd;
	uint64_t bar0, cfg;
	uint32_t engines;
};

static const char *uuid;

static void die(const char *what)
{
	fprintf(stderr, "gvt_guest %s: %s: %s\n", uuid ? uuid : "", what,
		strerror(errno));
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int set_irq(struct dev *d, unsigned int index, int fd)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int)];
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;

	set->argsz = sizeof(buf);
	set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = index;
	set->start = 0;
	set->count = 1;
	memcpy(set->data, &fd, sizeof(int));
	return ioctl(d->fd, VFIO_DEVICE_SET_IRQS, set);
}

static void open_dev(struct dev *d, unsigned int irq_index)
{
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	struct vfio_device_info di = { .argsz = sizeof(di) };
	struct vfio_region_info ri = { .argsz = sizeof(ri) };
	struct vfio_irq_info ii = { .argsz = sizeof(ii) };
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/iommu_group", uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		die("readlink iommu_group");
	link[n] = 0;
	d->container = open("/dev/vfio/vfio", O_RDWR);
	if (d->container < 0)
		die("open /dev/vfio/vfio");
	if (ioctl(d->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION)
		die("VFIO_GET_API_VERSION");
	if (!ioctl(d->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU))
		die("no VFIO_TYPE1v2_IOMMU");
	snprintf(path, sizeof(path), "/dev/vfio/%s", basename(link));
	d->group = open(path, O_RDWR);
	if (d->group < 0)
		die("open group");
	if (ioctl(d->group, VFIO_GROUP_GET_STATUS, &gs) ||
	    !(gs.flags & VFIO_GROUP_FLAGS_VIABLE))
		die("group not viable");
	if (ioctl(d->group, VFIO_GROUP_SET_CONTAINER, &d->container))
		die("VFIO_GROUP_SET_CONTAINER");
	if (ioctl(d->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		die("VFIO_SET_IOMMU");
	d->fd = ioctl(d->group, VFIO_GROUP_GET_DEVICE_FD, uuid);
	if (d->fd < 0)
		die("VFIO_GROUP_GET_DEVICE_FD");
	if (ioctl(d->fd, VFIO_DEVICE_GET_INFO, &di) ||
	    !(di.flags & VFIO_DEVICE_FLAGS_PCI) ||
	    di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
		die("VFIO_DEVICE_GET_INFO");
	ri.index = VFIO_PCI_BAR0_REGION_INDEX;
	if (ioctl(d->fd, VFIO_DEVICE_GET_REGION_INFO, &ri) || ri.size < 0x100)
		die("GET_REGION_INFO(BAR0)");
	d->bar0 = ri.offset;
	ri.index = VFIO_PCI_CONFIG_REGION_INDEX;
	if (ioctl(d->fd, VFIO_DEVICE_GET_REGION_INFO, &ri))
		die("GET_REGION_INFO(config)");
	d->cfg = ri.offset;
	ii.index = irq_index;
	if (ioctl(d->fd, VFIO_DEVICE_GET_IRQ_INFO, &ii) || ii.count < 1 ||
	    !(ii.flags & VFIO_IRQ_INFO_EVENTFD))
		die("GET_IRQ_INFO");
	/* QEMU resets every device when the machine starts. */
	if (ioctl(d->fd, VFIO_DEVICE_RESET))
		die("VFIO_DEVICE_RESET");
	d->efd = eventfd(0, EFD_CLOEXEC);
	if (d->efd < 0)
		die("eventfd");
	if (set_irq(d, irq_index, d->efd))
		die("VFIO_DEVICE_SET_IRQS");
}

static int rd32(struct dev *d, uint64_t off, uint32_t *v)
{
	return pread(d->fd, v, 4, d->bar0 + off) == 4 ? 0 : -errno;
}

static uint32_t reg(struct dev *d, uint64_t off)
{
	uint32_t v;

	if (rd32(d, off, &v))
		die("BAR0 read");
	return v;
}

static int submit(struct dev *d, uint32_t engine, uint32_t us, uint32_t bytes,
		  uint32_t tag)
{
	uint32_t desc[4] = { engine, us, bytes, tag };

	return pwrite(d->fd, desc, sizeof(desc), d->bar0 + R_SUBMIT) ==
		sizeof(desc) ? 0 : -errno;
}

/* Waits up to ms for an interrupt; returns the number of interrupts. */
static uint64_t wait_irq(struct dev *d, int ms)
{
	struct pollfd p = { .fd = d->efd, .events = POLLIN };
	uint64_t n = 0;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (read(d->efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

static int failures, checks;

static void expect(int cond, const char *what)
{
	checks++;
	if (!cond)
		failures++;
	printf("# %s %s\n", cond ? "PASS" : "FAIL", what);
}

static int self_check(struct dev *d)
{
	uint32_t v, sub0, hi;
	uint16_t vendor;
	uint8_t b3[3];
	uint64_t q;
	int ret;

	expect(pread(d->fd, &vendor, 2, d->cfg) == 2 && vendor == 0x8086,
	       "config space vendor id 0x8086");
	v = 0xffffffff;
	expect(pwrite(d->fd, &v, 4, d->cfg + 0x10) == 4 &&
	       pread(d->fd, &v, 4, d->cfg + 0x10) == 4 && v == 0xfffff000,
	       "BAR0 sizing reads back 0xfffff000");
	expect(pread(d->fd, &v, 4, d->cfg + 0x100) < 0 && errno == EINVAL,
	       "config read past 256 bytes: EINVAL");
	expect(reg(d, R_ID) == DEVICE_MAGIC, "BAR0 ID register");
	expect(reg(d, R_ENGINES) >= 2, "at least two engines");
	expect(rd32(d, 0x1000, &v) == -EINVAL, "read past BAR0: EINVAL");
	expect(rd32(d, 0x2, &v) == -EINVAL, "misaligned read: EINVAL");
	expect(pread(d->fd, b3, 3, d->bar0) < 0 && errno == EINVAL,
	       "3-byte read: EINVAL");
	expect(rd32(d, 0x44, &v) == -EINVAL, "read of write-only SUBMIT: EINVAL");
	expect(rd32(d, 0xf00, &v) == -EINVAL, "read of unknown register: EINVAL");
	v = 1;
	expect(pwrite(d->fd, &v, 4, d->bar0 + R_ID) < 0 && errno == EINVAL,
	       "write to read-only ID: EINVAL");
	sub0 = reg(d, R_SUBMITTED);
	q = 0;
	expect(pwrite(d->fd, &q, 8, d->bar0 + R_SUBMIT) < 0 && errno == EINVAL,
	       "8-byte SUBMIT: EINVAL");
	expect(submit(d, 7, 1000, 0, 1) == -EINVAL, "unknown engine: EINVAL");
	expect(submit(d, 0, 0, 0, 1) == -ERANGE, "zero duration: ERANGE");
	expect(submit(d, 0, reg(d, R_MAX_DURATION) + 1, 0, 1) == -ERANGE,
	       "absurd duration: ERANGE");
	expect(reg(d, R_SUBMITTED) == sub0 && reg(d, R_COMPLETED) == 0,
	       "rejected submissions changed nothing");
	wait_irq(d, 0);
	expect(submit(d, 1, 2000, 4096, 0xabc) == 0, "submission on engine 1");
	expect(wait_irq(d, 2000) >= 1, "completion interrupt (MSI eventfd)");
	expect(reg(d, R_COMPLETED) == 1 && reg(d, R_LAST_TAG) == 0xabc,
	       "completion counter and tag");
	expect(rd32(d, R_BUSY_NS, &v) == 0 && v == 2000000,
	       "busy time 2 ms");
	hi = reg(d, R_GM_HIGH) * 256;
	v = hi;
	expect(pwrite(d->fd, &v, 4, d->bar0 + R_GTT_INDEX) < 0 && errno == ERANGE,
	       "GTT index past the vGPU's range: ERANGE");
	v = hi - 1;
	q = 0x8000123456789000ull;
	expect(pwrite(d->fd, &v, 4, d->bar0 + R_GTT_INDEX) == 4 &&
	       pwrite(d->fd, &q, 8, d->bar0 + R_GTT_DATA) == 8 &&
	       pread(d->fd, &q, 8, d->bar0 + R_GTT_DATA) == 8 &&
	       q == 0x8000123456789000ull, "GTT entry write and read back");
	expect(set_irq(d, VFIO_PCI_INTX_IRQ_INDEX, d->efd) == 0,
	       "switch to INTx eventfd");
	expect(submit(d, 0, 1000, 0, 2) == 0 && wait_irq(d, 2000) >= 1,
	       "completion interrupt (INTx eventfd)");
	ret = ioctl(d->fd, VFIO_DEVICE_RESET);
	expect(ret == 0 && reg(d, R_COMPLETED) == 0 && reg(d, R_SUBMITTED) == 0,
	       "device reset clears the counters");
	printf("# self-check: %d of %d passed\n", checks - failures, checks);
	return failures ? 1 : 0;
}

static volatile int spin_stop;

/* A busy vCPU: burns CPU until the run ends. */
static void *spin(void *arg)
{
	volatile uint64_t n = 0;

	(void)arg;
	while (!spin_stop)
		n++;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *profile = "compute", *ready = NULL;
	int q = -1, frame = 4, engine = 0, check = 0, gtt = 0, vcpus = 0, c;
	pthread_t spinners[16];
	long dur = -1, think = 4000, bytes = 65536;
	unsigned int irq = VFIO_PCI_MSI_IRQ_INDEX;
	uint64_t frames = 0, gtt_checked = 0, gtt_bad = 0;
	uint32_t sub = 0, done = 0, tag = 0, hi = 0;
	double secs = 5, t0, t_end;
	struct dev d;

	while ((c = getopt(argc, argv, "p:t:d:q:f:z:e:b:i:cgr:v:")) != -1) {
		switch (c) {
		case 'p': profile = optarg; break;
		case 't': secs = atof(optarg); break;
		case 'd': dur = atol(optarg); break;
		case 'q': q = atoi(optarg); break;
		case 'f': frame = atoi(optarg); break;
		case 'z': think = atol(optarg); break;
		case 'e': engine = atoi(optarg); break;
		case 'b': bytes = atol(optarg); break;
		case 'i': irq = strcmp(optarg, "intx") ? VFIO_PCI_MSI_IRQ_INDEX :
				VFIO_PCI_INTX_IRQ_INDEX; break;
		case 'c': check = 1; break;
		case 'g': gtt = 1; break;
		case 'r': ready = optarg; break;
		case 'v': vcpus = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment in gvt_guest.c\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: gvt_guest [options] UUID\n");
		return 2;
	}
	if (vcpus < 0 || vcpus > 16) {
		fprintf(stderr, "gvt_guest: -v takes 0 to 16\n");
		return 2;
	}
	uuid = argv[optind];
	open_dev(&d, irq);
	for (int i = 0; i < vcpus; i++)
		if (pthread_create(&spinners[i], NULL, spin, NULL))
			die("pthread_create");
	d.engines = reg(&d, R_ENGINES);
	if (check)
		return self_check(&d);
	if (dur < 0)
		dur = !strcmp(profile, "long") ? 20000 :
		      !strcmp(profile, "frames") ? 1000 : 2000;
	if (q < 0)
		q = !strcmp(profile, "long") ? 2 : 4;
	if (gtt) {
		/* Stamp the first and last entry of every slot with our id. */
		hi = reg(&d, R_GM_HIGH) * 256;
		for (uint32_t i = 0; i < hi; i += 16384) {
			uint32_t idx[2] = { i, i + 16383 };

			for (int k = 0; k < 2; k++) {
				uint64_t val = 0x4000000000000000ull |
					((uint64_t)reg(&d, R_VGPU_ID) << 32) | idx[k];

				if (pwrite(d.fd, &idx[k], 4, d.bar0 + R_GTT_INDEX) != 4 ||
				    pwrite(d.fd, &val, 8, d.bar0 + R_GTT_DATA) != 8)
					die("GTT write");
			}
		}
	}
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	t0 = now_s();
	t_end = t0 + secs;
	if (!strcmp(profile, "idle")) {
		while (now_s() < t_end)
			usleep(50000);
	}
	while (strcmp(profile, "idle") && now_s() < t_end) {
		int burst = !strcmp(profile, "frames") ? frame : q;
		int want = !strcmp(profile, "frames") ? frame : q - (int)(sub - done);

		for (int i = 0; i < want; i++) {
			uint32_t e = engine < 0 ? (tag % d.engines) : (uint32_t)engine;
			int r = submit(&d, e, dur, bytes, ++tag);

			if (r == -EAGAIN)
				break;
			if (r)
				die("submit");
			sub++;
		}
		(void)burst;
		/* Frames wait for the whole frame; the others for any completion. */
		do {
			wait_irq(&d, 200);
			done = reg(&d, R_COMPLETED);
		} while (!strcmp(profile, "frames") && done != sub && now_s() < t_end + 2);
		if (gtt) {
			for (uint32_t i = 0; i < hi; i += 16384 * 7) {
				uint64_t val, want_v = 0x4000000000000000ull |
					((uint64_t)reg(&d, R_VGPU_ID) << 32) | i;

				if (pwrite(d.fd, &i, 4, d.bar0 + R_GTT_INDEX) != 4 ||
				    pread(d.fd, &val, 8, d.bar0 + R_GTT_DATA) != 8)
					die("GTT read");
				gtt_checked++;
				gtt_bad += val != want_v;
			}
		}
		if (!strcmp(profile, "frames")) {
			frames++;
			if (think > 0)
				usleep(think);
		}
	}
	/* Drain what is still queued. */
	while (done != sub && now_s() < t_end + 5) {
		wait_irq(&d, 200);
		done = reg(&d, R_COMPLETED);
	}
	spin_stop = 1;
	for (int i = 0; i < vcpus; i++)
		pthread_join(spinners[i], NULL);
	{
		double wall = now_s() - t0;
		uint64_t busy;

		if (pread(d.fd, &busy, 8, d.bar0 + R_BUSY_NS) != 8)
			die("BUSY_NS");
		printf("gvt_guest uuid=%s profile=%s submitted=%u completed=%u "
		       "frames=%" PRIu64 " gpu_ms=%.1f wall_ms=%.1f rate_per_s=%.1f "
		       "fps=%.1f gtt_checked=%" PRIu64 " gtt_mismatch=%" PRIu64 "\n",
		       uuid, profile, sub, done, frames, busy / 1e6, wall * 1e3,
		       done / wall, frames / wall, gtt_checked, gtt_bad);
	}
	return (done == sub && gtt_bad == 0) ? 0 : 1;
}
