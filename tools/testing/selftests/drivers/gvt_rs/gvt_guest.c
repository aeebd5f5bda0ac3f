// SPDX-License-Identifier: GPL-2.0
/*
 * gvt_guest: a guest emulator for gvt-rs's simulated GPU (protocol 2; -p
 * copy needs 3).
 *
 * Opens a vGPU through the kernel's VFIO selftest library
 * (tools/testing/selftests/vfio/lib), with the calls QEMU makes (container,
 * group, VFIO_SET_IOMMU(TYPE1v2), VFIO_GROUP_GET_DEVICE_FD, GET_INFO,
 * REGION_INFO, IRQ_INFO; then VFIO_DEVICE_RESET and SET_IRQS with an
 * eventfd), maps its "guest memory" (an anonymous mapping) into the
 * container with VFIO_IOMMU_MAP_DMA as QEMU maps guest RAM (with -I, as
 * QEMU 8.2 and later do with -object iommufd: the device's
 * /dev/vfio/devices/vfioN bound to /dev/iommu, an IOAS attached, guest RAM
 * mapped with IOMMU_IOAS_MAP), and drives the device as a guest driver
 * does: one ring of descriptors per engine and a status page in guest
 * memory, the TAIL register as doorbell, completions read from the status
 * page after an interrupt (MSI, or INTx unmasked with
 * VFIO_IRQ_SET_ACTION_UNMASK once IRQ_STATUS is cleared, as QEMU does).
 * It follows a workload profile and reports its own throughput.
 *
 *   gvt_guest [options] UUID
 *     -p compute|frames|long|idle|reset|doorbell|ignored|stall|copy   profile (default
 *                  compute; reset is compute with a VFIO_DEVICE_RESET after
 *                  every round of submissions, as a guest trying to buy
 *                  priority; doorbell completes -q workloads, then rings
 *                  the doorbell with nothing new in a tight loop; ignored
 *                  loops over accesses the device ignores: unknown
 *                  offsets, writes to read-only registers; stall puts
 *                  the status page in memory a userfaultfd never serves,
 *                  completes one -d workload on -e, prints "stalled" when
 *                  the device's write faulted, and lets go at the end;
 *                  copy keeps -q copies of -b bytes in flight, each of a
 *                  buffer filled with its own pattern, and checks every
 *                  completed one against the pattern's checksum; see
 *                  -x and -j, and the report's copy line)
 *     -t SECONDS   run time (default 5)
 *     -n N         doorbell and ignored: make N accesses, then end the run
 *                  (default: until the run time is up)
 *     -d US        workload duration (compute 2000, frames 1000, long 20000)
 *     -q N         workloads kept queued (compute 4, long 2)
 *     -f N         workloads per frame (frames, default 4)
 *     -z US        CPU think time between frames (default 4000)
 *     -e ENGINE    engine (default 0; -1 alternates between engines)
 *     -b BYTES     bytes moved per workload (default 65536); copy: the
 *                  length of each copy (default 16384)
 *     -x N         copy: a reset after every N rounds of submissions,
 *                  alternately VFIO_DEVICE_RESET and the RESET register
 *                  (default 0: none); the copies in flight are failed
 *     -j N         copy: every Nth copy reads from guest memory that is
 *                  not mapped: a fault the device reports, after which
 *                  the guest resets the device and goes on (default 0)
 *     -i msi|intx  interrupt (default msi)
 *     -I           open the device through iommufd instead of the legacy
 *                  VFIO container (both give the device the same memory)
 *     -c           protocol self-check (config space, registers, ignored
 *                  and malformed accesses, VFIO interrupt ioctls, rings,
 *                  every scanner fault, reset, a new session's INTx)
 *     -g           check the vGPU's GTT entries while running
 *     -r FILE      create FILE once the device is open and ready
 *     -w FILE      then wait until FILE exists before the run starts, so
 *                  that guests started one after the other run together
 *     -k IN,OUT    frames: take a token (a byte) from the FIFO IN before
 *                  each frame and pass it to the FIFO OUT once the frame
 *                  completed, ending the run when none comes in time: two
 *                  guests on each other's FIFOs run their frames in turn,
 *                  each waiting for the other's previous one (the
 *                  ping-pong chain of the DRM scheduler's tests_scheduler.c)
 *     -v N         N more threads that read a register and then keep a
 *                  CPU busy for the run, as the vCPU threads of a busy VM
 *                  do (default 0)
 *     -T N         N more threads that sleep until the process exits, as
 *                  the many threads a VMM may have (they never access the
 *                  vGPU, so the host does not count them among the VM's
 *                  vCPUs; default 0, at most 10000)
 *     -F           run at real-time priority (SCHED_FIFO 1), so that the
 *                  refill after a completion does not wait for a CPU that
 *                  other clients or the host's kworkers hold: a test of the
 *                  GPU scheduler then measures the GPU scheduler. The
 *                  client sleeps between completions, so it takes little.
 *
 * A device request (the REQ eventfd: the host removes the vGPU) ends the
 * run early, as QEMU unplugs the device from its guest; what is queued
 * still completes. A run makes at least one round of submissions, however
 * late its process gets a CPU. The report ends with the CPU time of the
 * process (cpu_ns, every thread) and of its submitting thread
 * (submit_cpu_ns), as the kernel accounted them.
 *
 * Exit status: 0 if every workload completed (and -g found no mismatch,
 * or -c no failure), 1 otherwise, 2 on an error (a failed vGPU included;
 * 1 when the VFIO selftest library found it while opening the device).
 * copy: 0 if no completed copy was wrong, every submitted copy completed
 * or was failed by a fault or a reset, and every fault was one -j asked
 * for; 1 otherwise.
 *
 * Protocol: <linux/gvt_rs_sim.h>; prose: Documentation/gvt-rs/simulated-gpu.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/pci_regs.h>
#include <linux/userfaultfd.h>
#include <linux/vfio.h>

#include <linux/gvt_rs_sim.h>

#include <libvfio.h>

#include "gvt_copy_check.h"

#define MAX_ENGINES	8

/*
 * Guest memory: GUEST_PAGES pages mapped at GUEST_IOVA. Page 0 is the
 * status page, page 1 + e the ring of engine e; the self-check uses the
 * pages from SCRATCH_PAGE. Nothing is mapped at UNMAPPED_IOVA.
 */
#define GUEST_IOVA	0x40000000ull
#define GUEST_PAGES	16
#define GUEST_SIZE	(GUEST_PAGES * GVT_SIM_PAGE_SIZE)
#define SCRATCH_PAGE	(1 + MAX_ENGINES)
#define UNMAPPED_IOVA	0x80000000ull
/* A second mapping, which the self-check unmaps under a ring. */
#define EXTRA_IOVA	0x50000000ull
/* -p stall: a status page whose memory a userfaultfd never serves. */
#define STALL_IOVA	0x60000000ull

/*
 * How long to wait for something the device must do (a completion, a
 * fault, an interrupt) or for a run's queued work to complete. A wait
 * that is answered returns at once: the limit only ends one whose answer
 * never comes, so it is far longer than any stall of a loaded machine
 * (a descheduled vCPU, a late timer or work item).
 */
#define ANSWER_MS	30000
#define DRAIN_S		60
/*
 * How long -w waits for the test to start the run (or remove the vGPU,
 * which ends the wait at once): setting up 64 guests one after the other
 * took over 120 s in the TCG VM, and the first ones gave up.
 */
#define START_S		900

#define IRQ_SET_HDR	offsetof(struct vfio_irq_set, data)
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct ring {
	uint32_t size, tail;
	uint64_t iova;
	struct gvt_sim_desc *desc;
};

struct dev {
	struct iommu *iommu;		/* the container, or with -I the IOAS */
	struct vfio_pci_device *vdev;	/* the library's device; vdev->fd its file */
	char name[PATH_MAX];		/* its sysfs directory, as the library names it */
	int efd;
	int req;			/* REQ eventfd: the host wants the device */
	uint64_t bar0, cfg;
	uint32_t engines, ring_max, max_duration;
	unsigned int irq;		/* VFIO_PCI_{MSI,INTX}_IRQ_INDEX */
	uint8_t *mem;			/* guest memory at GUEST_IOVA */
	struct ring rings[MAX_ENGINES];
};

static const char *uuid;
/* -I: iommufd and the VFIO device file instead of the container. */
static int use_iommufd;

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

/* CPU time of a clock: the process (every thread) or the calling thread. */
static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- BAR0 and configuration space ---------------------------------------- */

/* BAR0 accesses made, as a VMM counts the MMIO exits of a guest. */
static uint64_t bar_accesses;

/* One access of len bytes: 0 or -errno. */
static int bar_rd(struct dev *d, uint64_t off, void *v, size_t len)
{
	ssize_t n = pread(d->vdev->fd, v, len, d->bar0 + off);

	bar_accesses++;

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int bar_wr(struct dev *d, uint64_t off, const void *v, size_t len)
{
	ssize_t n = pwrite(d->vdev->fd, v, len, d->bar0 + off);

	bar_accesses++;

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int cfg_rd(struct dev *d, uint64_t off, void *v, size_t len)
{
	ssize_t n = pread(d->vdev->fd, v, len, d->cfg + off);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int cfg_wr(struct dev *d, uint64_t off, const void *v, size_t len)
{
	ssize_t n = pwrite(d->vdev->fd, v, len, d->cfg + off);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

/*
 * The vGPU's count of BAR0 accesses its device ignored (sysfs
 * ignored_accesses), or -1 if it cannot be read.
 */
static int64_t ignored_count(void)
{
	char path[PATH_MAX];
	long long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/gvt_rs/ignored_accesses",
		 uuid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* Register accessors that must not fail. */
static uint32_t reg(struct dev *d, uint64_t off)
{
	uint32_t v;

	if (bar_rd(d, off, &v, 4))
		die("BAR0 read");
	return v;
}

static uint64_t reg64(struct dev *d, uint64_t off)
{
	uint64_t v;

	if (bar_rd(d, off, &v, 8))
		die("BAR0 read");
	return v;
}

static void setreg(struct dev *d, uint64_t off, uint32_t v)
{
	if (bar_wr(d, off, &v, 4))
		die("BAR0 write");
}

static void setreg64(struct dev *d, uint64_t off, uint64_t v)
{
	if (bar_wr(d, off, &v, 8))
		die("BAR0 write");
}

static uint32_t rreg(struct dev *d, unsigned int e, uint64_t field)
{
	return reg(d, GVT_SIM_REG_RING(e) + field);
}

static void set_rreg(struct dev *d, unsigned int e, uint64_t field, uint32_t v)
{
	setreg(d, GVT_SIM_REG_RING(e) + field, v);
}

/* ---- VFIO ---------------------------------------------------------------- */

/* VFIO_DEVICE_SET_IRQS with len bytes of data and the given argsz. */
static int set_irqs_argsz(struct dev *d, uint32_t argsz, uint32_t flags,
			  uint32_t index, uint32_t start, uint32_t count,
			  const void *data, size_t len)
{
	char buf[IRQ_SET_HDR + 16] = { 0 };
	struct vfio_irq_set *set = (struct vfio_irq_set *)buf;

	if (len > 16)
		len = 16;
	set->argsz = argsz;
	set->flags = flags;
	set->index = index;
	set->start = start;
	set->count = count;
	if (len)
		memcpy(buf + IRQ_SET_HDR, data, len);
	return ioctl(d->vdev->fd, VFIO_DEVICE_SET_IRQS, set) ? -errno : 0;
}

static int set_irqs(struct dev *d, uint32_t flags, uint32_t index,
		    uint32_t start, uint32_t count, const void *data, size_t len)
{
	return set_irqs_argsz(d, IRQ_SET_HDR + len, flags, index, start, count,
			      data, len);
}

/* DATA_NONE, DATA_BOOL and DATA_EVENTFD forms of one action. */
static int irq_none(struct dev *d, uint32_t action, uint32_t index,
		    uint32_t start, uint32_t count)
{
	return set_irqs(d, VFIO_IRQ_SET_DATA_NONE | action, index, start, count,
			NULL, 0);
}

static int irq_bool(struct dev *d, uint32_t action, uint32_t index,
		    uint32_t start, uint32_t count, uint8_t val)
{
	return set_irqs(d, VFIO_IRQ_SET_DATA_BOOL | action, index, start, count,
			&val, count ? 1 : 0);
}

static int irq_fd(struct dev *d, uint32_t action, uint32_t index,
		  uint32_t start, uint32_t count, int32_t fd)
{
	return set_irqs(d, VFIO_IRQ_SET_DATA_EVENTFD | action, index, start,
			count, &fd, count ? 4 : 0);
}

static int set_trigger(struct dev *d, unsigned int index, int fd)
{
	return irq_fd(d, VFIO_IRQ_SET_ACTION_TRIGGER, index, 0, 1, fd);
}

static int unmask_intx(struct dev *d)
{
	return irq_none(d, VFIO_IRQ_SET_ACTION_UNMASK, VFIO_PCI_INTX_IRQ_INDEX,
			0, 1);
}

/*
 * Maps guest memory for the device's DMA (VFIO_IOMMU_MAP_DMA, or
 * IOMMU_IOAS_MAP with -I); the library keeps the region until
 * dma_unmap().
 */
static int dma_map(struct dev *d, void *vaddr, uint64_t iova, uint64_t size)
{
	struct dma_region *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	r->vaddr = vaddr;
	r->iova = iova;
	r->size = size;
	ret = __iommu_map(d->iommu, r);
	if (ret)
		free(r);
	return ret;
}

static int dma_unmap(struct dev *d, uint64_t iova, uint64_t size)
{
	struct dma_region *r;
	int ret;

	list_for_each_entry(r, &d->iommu->dma_regions, link) {
		if (r->iova != iova || r->size != size)
			continue;
		ret = __iommu_unmap(d->iommu, r, NULL);
		if (!ret)
			free(r);
		return ret;
	}
	return -ENOENT;
}

/*
 * The device's file again, after the last was closed: from its group, or
 * with -I its /dev/vfio/devices/vfioN bound to the iommufd and attached to
 * the IOAS. -1 if the device cannot be had (errno says why).
 */
static int reopen_device(struct dev *d)
{
	struct vfio_device_attach_iommufd_pt attach = {
		.argsz = sizeof(attach),
		.pt_id = d->iommu->ioas_id,
	};
	const char *cdev;
	int fd, err;

	if (!d->iommu->iommufd) {
		__vfio_pci_group_get_device_fd(d->vdev, d->name, NULL);
		return d->vdev->fd;
	}
	cdev = vfio_pci_get_cdev_path(d->name);
	fd = open(cdev, O_RDWR | O_CLOEXEC);
	free((void *)cdev);
	d->vdev->fd = fd;
	if (fd < 0)
		return -1;
	err = -__vfio_device_bind_iommufd(fd, d->iommu->iommufd, NULL);
	if (!err && ioctl(fd, VFIO_DEVICE_ATTACH_IOMMUFD_PT, &attach))
		err = errno;
	if (err) {
		close(fd);
		d->vdev->fd = -1;
		errno = err;
		return -1;
	}
	return fd;
}

static void open_dev(struct dev *d, unsigned int irq_index)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii) };

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "/sys/bus/mdev/devices/%s", uuid);
	/*
	 * The library's calls are QEMU's; it reports what fails and exits
	 * (KSFT_FAIL).
	 */
	d->iommu = iommu_init(use_iommufd ? MODE_IOMMUFD : MODE_VFIO_TYPE1V2_IOMMU);
	d->vdev = vfio_pci_device_init(d->name, d->iommu);
	if (!(d->vdev->info.flags & VFIO_DEVICE_FLAGS_PCI) ||
	    d->vdev->info.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
		die("VFIO_DEVICE_GET_INFO: not a PCI device");
	if (d->vdev->bars[0].info.size < GVT_SIM_BAR0_SIZE)
		die("GET_REGION_INFO(BAR0): too small");
	d->bar0 = d->vdev->bars[0].info.offset;
	d->cfg = d->vdev->config_space.offset;
	/* Guest RAM, mapped for the device's DMA as QEMU maps it. */
	d->mem = mmap(NULL, GUEST_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->mem == MAP_FAILED)
		die("mmap guest memory");
	errno = -dma_map(d, d->mem, GUEST_IOVA, GUEST_SIZE);
	if (errno)
		die(use_iommufd ? "IOMMU_IOAS_MAP" : "VFIO_IOMMU_MAP_DMA");
	/* INTx is not among the library's interrupts (MSI, MSI-X). */
	ii.index = irq_index;
	if (ioctl(d->vdev->fd, VFIO_DEVICE_GET_IRQ_INFO, &ii) || ii.count < 1 ||
	    !(ii.flags & VFIO_IRQ_INFO_EVENTFD))
		die("GET_IRQ_INFO");
	/* QEMU resets every device when the machine starts. */
	if (__vfio_pci_device_reset(d->vdev))
		die("VFIO_DEVICE_RESET");
	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->efd < 0)
		die("eventfd");
	d->irq = irq_index;
	errno = -set_trigger(d, irq_index, d->efd);
	if (errno)
		die("VFIO_DEVICE_SET_IRQS");
	/* As QEMU: a device request is answered by unplugging the device. */
	d->req = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->req < 0)
		die("eventfd");
	errno = -set_trigger(d, VFIO_PCI_REQ_IRQ_INDEX, d->req);
	if (errno)
		die("VFIO_DEVICE_SET_IRQS(REQ)");
	if (reg(d, GVT_SIM_REG_ID) != GVT_SIM_MAGIC ||
	    reg(d, GVT_SIM_REG_VERSION) < 2) {
		errno = ENODEV;
		die("not a protocol 2 or later simulated vGPU");
	}
	d->engines = reg(d, GVT_SIM_REG_ENGINES);
	if (d->engines > MAX_ENGINES)
		d->engines = MAX_ENGINES;
	d->ring_max = reg(d, GVT_SIM_REG_RING_MAX);
	d->max_duration = reg(d, GVT_SIM_REG_MAX_DURATION);
}

/* ---- the guest driver ---------------------------------------------------- */

static struct gvt_sim_engine_status *status_rec(struct dev *d, unsigned int e)
{
	return (struct gvt_sim_engine_status *)(d->mem + e * GVT_SIM_STATUS_STRIDE);
}

/* What the device last wrote to the status page for engine e. */
static uint32_t st_completed(struct dev *d, unsigned int e)
{
	return __atomic_load_n(&status_rec(d, e)->completed, __ATOMIC_ACQUIRE);
}

static uint32_t st_head(struct dev *d, unsigned int e)
{
	return __atomic_load_n(&status_rec(d, e)->head, __ATOMIC_ACQUIRE);
}

static uint32_t completed_all(struct dev *d)
{
	uint32_t n = 0;

	for (unsigned int e = 0; e < d->engines; e++)
		n += st_completed(d, e);
	return n;
}

/* Points engine e's ring at size descriptors at iova (memory at desc). */
static void ring_init(struct dev *d, unsigned int e, uint64_t iova,
		      void *desc, uint32_t size)
{
	struct ring *r = &d->rings[e];

	r->iova = iova;
	r->desc = desc;
	r->size = size;
	r->tail = 0;
	memset(desc, 0, (size_t)size * GVT_SIM_DESC_SIZE);
	/* Disable first (allowed while idle): enabling resets HEAD and TAIL. */
	set_rreg(d, e, GVT_SIM_RING_CTL, 0);
	setreg64(d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_BASE, iova);
	set_rreg(d, e, GVT_SIM_RING_SIZE, size);
	set_rreg(d, e, GVT_SIM_RING_CTL, GVT_SIM_RING_CTL_ENABLE);
}

/*
 * What a guest driver does at probe: status page, one ring per engine of
 * size descriptors, interrupts on every completion and on a fault.
 */
static void program(struct dev *d, uint32_t size)
{
	memset(d->mem, 0, GVT_SIM_PAGE_SIZE);
	setreg64(d, GVT_SIM_REG_STATUS_PAGE, GUEST_IOVA);
	for (unsigned int e = 0; e < d->engines; e++)
		ring_init(d, e, GUEST_IOVA + (1 + e) * GVT_SIM_PAGE_SIZE,
			  d->mem + (1 + e) * GVT_SIM_PAGE_SIZE, size);
	setreg(d, GVT_SIM_REG_IRQ_ENABLE,
	       ((1u << d->engines) - 1) | GVT_SIM_IRQ_FAULT);
}

/* Writes a raw descriptor at engine e's tail; -EAGAIN if the ring is full. */
static int queue_raw(struct dev *d, unsigned int e, const struct gvt_sim_desc *desc)
{
	struct ring *r = &d->rings[e];

	if ((r->tail + 1) % r->size == st_head(d, e) % r->size)
		return -EAGAIN;
	r->desc[r->tail] = *desc;
	r->tail = (r->tail + 1) % r->size;
	return 0;
}

static int queue(struct dev *d, unsigned int e, uint32_t seqno, uint32_t us,
		 uint32_t bytes, uint32_t flags)
{
	struct gvt_sim_desc desc = {
		.opcode = GVT_SIM_OP_EXEC,
		.flags = flags,
		.seqno = seqno,
		.duration_us = us,
		.bytes = bytes,
	};

	return queue_raw(d, e, &desc);
}

/* The doorbell: publishes what was queued on engine e (one 4-byte write). */
static int doorbell(struct dev *d, unsigned int e)
{
	uint32_t tail = d->rings[e].tail;

	__atomic_thread_fence(__ATOMIC_RELEASE);
	return bar_wr(d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_TAIL, &tail, 4);
}

/* Waits up to ms for an eventfd signal; returns the count read (0: none). */
static uint64_t wait_efd(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t n = 0;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (read(efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

/*
 * Waits until the file START exists, the vGPU's request eventfd REQ fires
 * (its removal: returns 1) or now_s() passes END. The file's directory is
 * watched with inotify, so that a waiting guest takes no CPU: 64 guests
 * polling every 10 ms at real-time priority slowed the opening of the
 * next ones, most on the KASAN kernel.
 */
static int wait_start(const char *start, int req, double end)
{
	char dir[PATH_MAX];
	int in, unplug = 0;

	snprintf(dir, sizeof(dir), "%s", start);
	in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (in < 0 || inotify_add_watch(in, dirname(dir), IN_CREATE | IN_MOVED_TO) < 0)
		die("inotify on the start file's directory");
	while (access(start, F_OK) && !unplug && now_s() < end) {
		struct pollfd p[2] = {
			{ .fd = in, .events = POLLIN },
			{ .fd = req, .events = POLLIN },
		};
		char ev[4096];
		double left_ms = (end - now_s()) * 1000;

		/* A second at most: the deadline is checked between. */
		if (poll(p, 2, left_ms < 1000 ? (int)left_ms + 1 : 1000) < 0 && errno != EINTR)
			die("poll");
		if (p[1].revents & POLLIN)
			unplug = wait_efd(req, 0) > 0;
		while (read(in, ev, sizeof(ev)) > 0)
			;
	}
	close(in);
	return unplug;
}

static void report_failed(struct dev *d)
{
	uint32_t f = reg(d, GVT_SIM_REG_FAULT);

	fprintf(stderr,
		"gvt_guest %s: the vGPU failed: fault 0x%08x (reason %u, engine %u, descriptor %u)\n",
		uuid, f, GVT_SIM_FAULT_REASON(f), GVT_SIM_FAULT_ENGINE(f),
		GVT_SIM_FAULT_INDEX(f));
	exit(2);
}

/*
 * The interrupt handler: acknowledges IRQ_STATUS (RW1C), and with INTx
 * unmasks the line afterwards as QEMU does at the guest's EOI. A fault
 * ends the run. Waits up to ms; returns the interrupts taken.
 */
static uint64_t service_irq(struct dev *d, int ms)
{
	uint64_t n = wait_efd(d->efd, ms);
	uint32_t s;

	if (!n) {
		if (reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_FAILED)
			report_failed(d);
		return 0;
	}
	s = reg(d, GVT_SIM_REG_IRQ_STATUS);
	if (s)
		setreg(d, GVT_SIM_REG_IRQ_STATUS, s);
	if (d->irq == VFIO_PCI_INTX_IRQ_INDEX && unmask_intx(d))
		die("VFIO_IRQ_SET_ACTION_UNMASK");
	if (s & GVT_SIM_IRQ_FAULT)
		report_failed(d);
	return n;
}

/* ---- the protocol self-check --------------------------------------------- */

static int failures, checks;

static void expect(int cond, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!cond)
		failures++;
	printf("# %s ", cond ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static const char *errname(int ret)
{
	static const struct { int err; const char *name; } names[] = {
		{ 0, "0" }, { EINVAL, "EINVAL" }, { ENOTTY, "ENOTTY" },
		{ ERANGE, "ERANGE" }, { EBADF, "EBADF" }, { EFAULT, "EFAULT" },
		{ ENODEV, "ENODEV" }, { EIO, "EIO" }, { ENOMEM, "ENOMEM" },
		{ EAGAIN, "EAGAIN" }, { ETIMEDOUT, "ETIMEDOUT" },
	};
	static char buf[16];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (-ret == names[i].err)
			return names[i].name;
	snprintf(buf, sizeof(buf), "%d", ret);
	return buf;
}

/* A call's result must be want (0 or -errno). */
#define expect_ret(ret, want, ...) do {					\
	int _r = (ret), _w = (want);					\
	char _what[200];						\
	snprintf(_what, sizeof(_what), __VA_ARGS__);			\
	if (_r == _w)							\
		expect(1, "%s: %s", _what, errname(_w));		\
	else								\
		expect(0, "%s: %s (got %s)", _what, errname(_w),	\
		       errname(_r));					\
} while (0)

/* A value must be want. */
#define expect_val(val, want, ...) do {					\
	uint64_t _v = (val), _w = (want);				\
	char _what[200];						\
	snprintf(_what, sizeof(_what), __VA_ARGS__);			\
	if (_v == _w)							\
		expect(1, "%s: 0x%" PRIx64, _what, _w);			\
	else								\
		expect(0, "%s: 0x%" PRIx64 " (got 0x%" PRIx64 ")",	\
		       _what, _w, _v);					\
} while (0)

/* Drains an eventfd; returns what was pending. */
static uint64_t drain(int efd)
{
	return wait_efd(efd, 0);
}

/*
 * Waits until engine e's status record counts n completions (up to
 * ANSWER_MS), then reads a register: the device writes the record and
 * raises the interrupt under one lock, so after that read the interrupt
 * was sent.
 */
static int wait_done(struct dev *d, unsigned int e, uint32_t n)
{
	double end = now_s() + ANSWER_MS / 1000.0;

	while (st_completed(d, e) < n && now_s() < end)
		usleep(200);
	reg(d, GVT_SIM_REG_STATUS);
	return st_completed(d, e) >= n;
}

/* Waits until the vGPU failed (up to ANSWER_MS). */
static int wait_failed(struct dev *d)
{
	double end = now_s() + ANSWER_MS / 1000.0;

	while (!(reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_FAILED) &&
	       now_s() < end)
		usleep(200);
	return !!(reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_FAILED);
}

static uint32_t fault_word(uint32_t reason, uint32_t e, uint32_t index)
{
	return reason | e << 8 | index << 16;
}

/* The guest's RESET register, or VFIO_DEVICE_RESET. */
static int do_reset(struct dev *d, int vfio)
{
	uint32_t one = 1;

	if (vfio)
		return __vfio_pci_device_reset(d->vdev);
	return bar_wr(d, GVT_SIM_REG_RESET, &one, 4);
}

/*
 * Whether the vGPU's GTT reads its power-on entries (valid bit, vGPU id,
 * index) at the first, middle and last index of its high GM: nothing a
 * previous tenant, or this one before a reset, wrote. Leaves GTT_INDEX 0.
 */
static int gtt_power_on(struct dev *d)
{
	uint32_t hi = reg(d, GVT_SIM_REG_GM_HIGH) * 256, id = reg(d, GVT_SIM_REG_VGPU_ID);
	uint32_t idx[3] = { 0, hi / 2, hi - 1 }, zero = 0;
	int ok = hi > 0;

	for (int k = 0; k < 3 && ok; k++) {
		uint64_t val = 0, want = 1ull << 63 | (uint64_t)id << 40 | idx[k];

		if (bar_wr(d, GVT_SIM_REG_GTT_INDEX, &idx[k], 4) ||
		    bar_rd(d, GVT_SIM_REG_GTT_DATA, &val, 8) || val != want) {
			printf("# GTT[%u] = 0x%" PRIx64 ", power-on 0x%" PRIx64 "\n",
			       idx[k], val, want);
			ok = 0;
		}
	}
	bar_wr(d, GVT_SIM_REG_GTT_INDEX, &zero, 4);
	return ok;
}

/* Every register a reset returns to its power-on value, and the GTT. */
static void expect_power_on(struct dev *d, const char *what)
{
	char bad[256] = "";
	size_t n = 0;

#define PO(cond, name) do {						\
		if (!(cond) && n < sizeof(bad))				\
			n += snprintf(bad + n, sizeof(bad) - n, " %s", name); \
	} while (0)
	PO(!(reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_FAILED), "failed");
	PO(reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_SCHEDULED, "scheduled");
	PO(reg(d, GVT_SIM_REG_FAULT) == 0, "FAULT");
	PO(reg(d, GVT_SIM_REG_IRQ_STATUS) == 0, "IRQ_STATUS");
	PO(reg(d, GVT_SIM_REG_IRQ_ENABLE) == 0, "IRQ_ENABLE");
	PO(reg64(d, GVT_SIM_REG_STATUS_PAGE) == 0, "STATUS_PAGE");
	PO(reg(d, GVT_SIM_REG_SUBMITTED) == 0, "SUBMITTED");
	PO(reg(d, GVT_SIM_REG_COMPLETED) == 0, "COMPLETED");
	PO(reg64(d, GVT_SIM_REG_BUSY_NS) == 0, "BUSY_NS");
	for (unsigned int e = 0; e < d->engines; e++) {
		PO(rreg(d, e, GVT_SIM_RING_CTL) == 0, "CTL");
		PO(rreg(d, e, GVT_SIM_RING_HEAD) == 0, "HEAD");
		PO(rreg(d, e, GVT_SIM_RING_TAIL) == 0, "TAIL");
	}
	PO(gtt_power_on(d), "GTT");
#undef PO
	expect(!bad[0], "%s: power-on state (rings off, status page 0, IRQ registers 0, fault 0, counters 0, GTT entries)%s%s",
	       what, bad[0] ? "; wrong:" : "", bad);
}

static void cfg_checks(struct dev *d)
{
	static const uint8_t zero[24];
	uint8_t cfg[256], cfg2[256], b[8];
	uint32_t v, bar;
	uint16_t w;
	uint64_t q;
	int ret, caps = 0, msi = 0;

	ret = cfg_rd(d, 0, cfg, 256);
	expect_ret(ret, 0, "config space read whole (one 256-byte pread)");
	expect_val(cfg[0] | cfg[1] << 8, GVT_SIM_PCI_VENDOR, "config vendor id");
	expect_val(cfg[2] | cfg[3] << 8, GVT_SIM_PCI_DEVICE, "config device id");
	expect_val(cfg[8], GVT_SIM_VERSION, "config revision (protocol %d)", GVT_SIM_VERSION);
	expect_val(cfg[9] | cfg[10] << 8 | cfg[11] << 16, 0x038000,
		   "config class code");
	expect_val(cfg[0x0e], 0, "config header type 0");
	expect_val(cfg[0x2c] | cfg[0x2d] << 8, GVT_SIM_PCI_VENDOR,
		   "config subsystem vendor");
	expect(cfg[0x2e] >= 1 && cfg[0x2e] <= 4 && cfg[0x2f] == 0,
	       "config subsystem id is the type + 1: 0x%02x%02x",
	       cfg[0x2f], cfg[0x2e]);
	expect_val(cfg[PCI_INTERRUPT_PIN], 1, "config interrupt pin INTA");
	expect_val(cfg[PCI_STATUS] & PCI_STATUS_CAP_LIST, PCI_STATUS_CAP_LIST,
		   "config status: capability list");
	expect_val(cfg[PCI_CAPABILITY_LIST], 0x40, "config capability pointer");
	for (unsigned int p = cfg[PCI_CAPABILITY_LIST] & ~3u; p && caps < 48;
	     p = cfg[p + 1] & ~3u) {
		caps++;
		if (cfg[p] == PCI_CAP_ID_MSI)
			msi = p;
	}
	expect(caps == 1 && msi == 0x40,
	       "capability list: one capability, MSI (ID 5) at 0x40 (%d, MSI at 0x%x)",
	       caps, msi);
	w = cfg[0x42] | cfg[0x43] << 8;
	expect_val(w, PCI_MSI_FLAGS_64BIT,
		   "MSI control: 64-bit, one vector (QMASK 0), disabled");
	bar = cfg[0x10] | cfg[0x11] << 8 | cfg[0x12] << 16 | (uint32_t)cfg[0x13] << 24;
	expect_val(bar & 0xf, 0, "BAR0: 32-bit memory, not prefetchable");
	expect(!memcmp(cfg + 0x14, zero, 24),
	       "BARs 1-5 and the cardbus pointer are 0");

	/* Reads of every size and alignment see the same bytes. */
	{
		static const struct { unsigned int off, len; } rd[] = {
			{ 0, 1 }, { 1, 1 }, { 0x3d, 1 }, { 0, 2 }, { 1, 2 },
			{ 0x42, 2 }, { 1, 3 }, { 0x2d, 3 }, { 0, 4 }, { 2, 4 },
			{ 0x41, 4 }, { 8, 8 }, { 0x3b, 7 }, { 0x40, 16 },
			{ 0xff, 1 }, { 0xfe, 2 }, { 0xfc, 4 }, { 0x80, 128 },
		};
		int ok = 1;

		for (size_t i = 0; i < ARRAY_SIZE(rd); i++) {
			ret = cfg_rd(d, rd[i].off, cfg2, rd[i].len);
			if (ret || memcmp(cfg2, cfg + rd[i].off, rd[i].len)) {
				ok = 0;
				printf("# config read of %u at 0x%x: %s\n",
				       rd[i].len, rd[i].off, errname(ret));
			}
		}
		expect(ok, "config reads of 1, 2, 3, 4, 7, 8, 16 and 128 bytes at any alignment match the whole read");
	}
	expect_ret(cfg_rd(d, 0x100, &v, 4), -EINVAL, "config read at 0x100");
	expect_ret(cfg_rd(d, 0xfe, &v, 4), -EINVAL, "config read across the end");
	expect_ret(cfg_rd(d, 0, cfg2, 257), -EINVAL, "config read of 257 bytes");

	/* Writes of every size: writable bits change, the others do not. */
	v = 0xffffffff;
	ret = cfg_wr(d, PCI_BASE_ADDRESS_0, &v, 4);
	ret = ret ?: cfg_rd(d, PCI_BASE_ADDRESS_0, &v, 4);
	expect(!ret && v == 0xfffff000,
	       "BAR0 sizing (4-byte write of ~0) reads back 0xfffff000: 0x%08x", v);
	v = 0xfebf1000;
	ret = cfg_wr(d, PCI_BASE_ADDRESS_0, &v, 4);
	ret = ret ?: cfg_rd(d, PCI_BASE_ADDRESS_0, &v, 4);
	expect(!ret && v == 0xfebf1000,
	       "BAR0 programmed 0xfebf1000 (4-byte write): 0x%08x", v);
	b[0] = 0xff;
	ret = cfg_wr(d, PCI_BASE_ADDRESS_0 + 3, b, 1);
	ret = ret ?: cfg_rd(d, PCI_BASE_ADDRESS_0, &v, 4);
	expect(!ret && v == 0xffbf1000,
	       "BAR0 1-byte write of its top byte: 0x%08x", v);
	w = 0xffff;
	ret = cfg_wr(d, PCI_COMMAND, &w, 2);
	ret = ret ?: cfg_rd(d, PCI_COMMAND, &w, 2);
	expect(!ret &&
	       w == (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE),
	       "command (2-byte write of 0xffff): only memory, master, INTx disable stick: 0x%04x",
	       w);
	b[0] = 0;
	ret = cfg_wr(d, PCI_COMMAND + 1, b, 1);
	ret = ret ?: cfg_rd(d, PCI_COMMAND, &w, 2);
	expect(!ret && w == (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER),
	       "command 1-byte write of its high byte clears INTx disable: 0x%04x", w);
	b[0] = 0x0b;
	ret = cfg_wr(d, PCI_INTERRUPT_LINE, b, 1);
	ret = ret ?: cfg_rd(d, PCI_INTERRUPT_LINE, b, 1);
	expect(!ret && b[0] == 0x0b, "interrupt line 1-byte write: 0x%02x", b[0]);
	memcpy(b, "\x05\x07\x08", 3);
	ret = cfg_wr(d, PCI_INTERRUPT_LINE, b, 3);
	ret = ret ?: cfg_rd(d, PCI_INTERRUPT_LINE, b, 3);
	expect(!ret && b[0] == 5 && b[1] == 1 && b[2] == 0,
	       "3-byte write over line, pin, min_gnt: only the line changes (%02x %02x %02x)",
	       b[0], b[1], b[2]);
	w = 0x1234;
	ret = cfg_wr(d, PCI_VENDOR_ID, &w, 2);
	ret = ret ?: cfg_rd(d, PCI_VENDOR_ID, &w, 2);
	expect(!ret && w == GVT_SIM_PCI_VENDOR,
	       "write to the read-only vendor id succeeds and changes nothing: 0x%04x", w);
	w = 0xffff;
	ret = cfg_wr(d, 0x42, &w, 2);
	ret = ret ?: cfg_rd(d, 0x42, &w, 2);
	expect(!ret && w == (PCI_MSI_FLAGS_64BIT | PCI_MSI_FLAGS_ENABLE),
	       "MSI control 2-byte write of 0xffff: only enable sticks: 0x%04x", w);
	q = 0x00000001fee01003ull;
	ret = cfg_wr(d, 0x44, &q, 8);
	ret = ret ?: cfg_rd(d, 0x44, &q, 8);
	expect(!ret && q == 0x00000001fee01000ull,
	       "MSI address 8-byte write (bits 1:0 read 0): 0x%" PRIx64, q);
	w = 0x4021;
	ret = cfg_wr(d, 0x4c, &w, 2);
	ret = ret ?: cfg_rd(d, 0x4c, &w, 2);
	expect(!ret && w == 0x4021, "MSI data 2-byte write: 0x%04x", w);
	v = 0xfee00000;
	ret = cfg_wr(d, 0x44, &v, 4);
	ret = ret ?: cfg_rd(d, 0x44, &q, 8);
	expect(!ret && q == 0x00000001fee00000ull,
	       "MSI address low 4-byte write keeps the high half: 0x%" PRIx64, q);
	v = 0xdeadbeef;
	expect_ret(cfg_wr(d, 0x100, &v, 4), -EINVAL, "config write at 0x100");
	expect_ret(cfg_wr(d, 0xfe, &v, 4), -EINVAL, "config write across the end");
	/* Back to what it was, in one 256-byte write. */
	ret = cfg_wr(d, 0, cfg, 256);
	ret = ret ?: cfg_rd(d, 0, cfg2, 256);
	expect(!ret && !memcmp(cfg, cfg2, 256),
	       "config space written whole (256 bytes) restores it: %s", errname(ret));
}

/* A register must read want in every size and alignment it takes. */
static void expect_sizes(struct dev *d, uint64_t off, unsigned int width,
			 uint64_t want, const char *name)
{
	int ok = 1;

	for (unsigned int len = 1; len <= width; len *= 2) {
		for (unsigned int at = 0; at < width; at += len) {
			uint64_t v = 0, w;
			int ret = bar_rd(d, off + at, &v, len);

			w = want >> (at * 8);
			if (len < 8)
				w &= (1ull << (len * 8)) - 1;
			if (ret || v != w) {
				ok = 0;
				printf("# %s: %u-byte read at +%u: %s 0x%" PRIx64 "\n",
				       name, len, at, errname(ret), v);
			}
		}
	}
	expect(ok, "%s (%u bytes) reads 0x%" PRIx64 " in %s", name, width, want,
	       width == 8 ? "1-, 2-, 4- and 8-byte reads" : "1-, 2- and 4-byte reads");
}

static void bar_checks(struct dev *d)
{
	/*
	 * Malformed: misaligned, 3 or 16 bytes, past the end. QEMU never
	 * passes these on (its memory core refuses misaligned guest accesses
	 * and splits larger ones): EINVAL.
	 */
	static const struct { uint64_t off; unsigned int len; } bad[] = {
		{ 0x002, 4 }, { 0x001, 2 }, { 0x003, 2 }, { 0x004, 8 },
		{ 0x044, 8 }, { 0x034, 8 }, { 0x104, 8 }, { 0x000, 3 },
		{ 0x030, 16 }, { 0x1000, 4 }, { 0x1000, 1 }, { 0xffc, 8 },
		{ 0xffe, 4 },
	};
	/*
	 * Well-formed, to no register: unknown offsets in every size and
	 * accesses across two registers (ID and VERSION, RESET and a hole,
	 * a ring's HEAD and TAIL, ...). A guest's MMIO reaches the device so:
	 * ignored, reads 0, counted.
	 */
	static const struct { uint64_t off; unsigned int len; } unknown[] = {
		{ 0x000, 8 }, { 0x018, 8 }, { 0x048, 8 }, { 0x060, 8 },
		{ 0x108, 8 }, { 0x110, 8 }, { 0x04c, 4 }, { 0x050, 4 },
		{ 0x05c, 4 }, { 0x064, 4 }, { 0x070, 4 }, { 0x0fc, 4 },
		{ 0x118, 4 }, { 0x11c, 4 }, { 0x140, 4 }, { 0xf00, 4 },
		{ 0xffc, 4 }, { 0x050, 1 }, { 0x0ff, 1 }, { 0x052, 2 },
		{ 0x058, 8 }, { 0xff8, 8 },
	};
	static const struct { uint64_t off; unsigned int len; } ro[] = {
		{ GVT_SIM_REG_ID, 4 }, { GVT_SIM_REG_VERSION, 4 },
		{ GVT_SIM_REG_ENGINES, 4 }, { GVT_SIM_REG_VGPU_ID, 4 },
		{ GVT_SIM_REG_STATUS, 4 }, { GVT_SIM_REG_RING_MAX, 4 },
		{ GVT_SIM_REG_SUBMITTED, 4 }, { GVT_SIM_REG_COMPLETED, 4 },
		{ GVT_SIM_REG_FAULT, 4 }, { GVT_SIM_REG_MAX_DURATION, 4 },
		{ GVT_SIM_REG_GM_LOW, 4 }, { GVT_SIM_REG_GM_HIGH, 4 },
		{ GVT_SIM_REG_BUSY_NS, 8 }, { GVT_SIM_REG_BUSY_NS + 4, 4 },
		{ GVT_SIM_REG_ID + 1, 1 },
		{ GVT_SIM_REG_RING(0) + GVT_SIM_RING_HEAD, 4 },
		{ GVT_SIM_REG_RING(1) + GVT_SIM_RING_HEAD + 2, 2 },
	};
	uint64_t q, sp = 0x123456789000ull;
	uint32_t v, hi;
	uint8_t zero[8] = { 0 };
	int64_t n0, n1;
	int ok, ret;

	expect_sizes(d, GVT_SIM_REG_ID, 4, GVT_SIM_MAGIC, "ID");
	expect_sizes(d, GVT_SIM_REG_VERSION, 4, GVT_SIM_VERSION, "VERSION");
	expect_sizes(d, GVT_SIM_REG_COPY_MAX, 4, GVT_SIM_COPY_MAX, "COPY_MAX");
	expect_val(reg(d, GVT_SIM_REG_ENGINES), 2, "ENGINES");
	expect_val(reg(d, GVT_SIM_REG_RING_MAX), 64, "RING_MAX");
	expect_val(reg(d, GVT_SIM_REG_MAX_DURATION), 100000, "MAX_DURATION (us)");
	expect_val(reg(d, GVT_SIM_REG_STATUS), GVT_SIM_STATUS_SCHEDULED,
		   "STATUS after reset: scheduled, idle, not failed");
	expect_val(reg(d, GVT_SIM_REG_RESET), 0, "RESET reads 0");
	expect_sizes(d, GVT_SIM_REG_BUSY_NS, 8, 0, "BUSY_NS");

	/* An 8-byte read-write register in every size. */
	setreg64(d, GVT_SIM_REG_STATUS_PAGE, sp | 0xabc);
	expect_sizes(d, GVT_SIM_REG_STATUS_PAGE, 8, sp,
		     "STATUS_PAGE after an 8-byte write (page offset reads 0)");
	v = 0xcafe;
	ret = bar_wr(d, GVT_SIM_REG_STATUS_PAGE + 4, &v, 4);
	expect(!ret && reg64(d, GVT_SIM_REG_STATUS_PAGE) == 0x0000cafe56789000ull,
	       "STATUS_PAGE 4-byte write of the high half changes only it: 0x%" PRIx64,
	       reg64(d, GVT_SIM_REG_STATUS_PAGE));
	v = 0xa5;
	ret = bar_wr(d, GVT_SIM_REG_STATUS_PAGE + 2, &v, 1);
	expect(!ret && reg64(d, GVT_SIM_REG_STATUS_PAGE) == 0x0000cafe56a59000ull,
	       "STATUS_PAGE 1-byte write changes only that byte: 0x%" PRIx64,
	       reg64(d, GVT_SIM_REG_STATUS_PAGE));
	v = 0xffff;
	ret = bar_wr(d, GVT_SIM_REG_STATUS_PAGE, &v, 2);
	expect(!ret && reg64(d, GVT_SIM_REG_STATUS_PAGE) == 0x0000cafe56a5f000ull,
	       "STATUS_PAGE 2-byte write (bits 11:0 stay 0): 0x%" PRIx64,
	       reg64(d, GVT_SIM_REG_STATUS_PAGE));
	setreg64(d, GVT_SIM_REG_STATUS_PAGE, sp);
	/* A 4-byte read-write register in every size. */
	setreg(d, GVT_SIM_REG_IRQ_ENABLE, 0x103);
	expect_sizes(d, GVT_SIM_REG_IRQ_ENABLE, 4, 0x103, "IRQ_ENABLE after a 4-byte write");
	v = 0;
	ret = bar_wr(d, GVT_SIM_REG_IRQ_ENABLE + 1, &v, 1);
	expect(!ret && reg(d, GVT_SIM_REG_IRQ_ENABLE) == 0x3,
	       "IRQ_ENABLE 1-byte write of byte 1 clears the fault bit only: 0x%x",
	       reg(d, GVT_SIM_REG_IRQ_ENABLE));
	v = 0xffff;
	ret = bar_wr(d, GVT_SIM_REG_IRQ_ENABLE, &v, 2);
	expect(!ret && reg(d, GVT_SIM_REG_IRQ_ENABLE) == 0x103,
	       "IRQ_ENABLE keeps only defined bits (engines, fault): 0x%x",
	       reg(d, GVT_SIM_REG_IRQ_ENABLE));
	setreg(d, GVT_SIM_REG_IRQ_ENABLE, 0);
	/* Ring registers: base (8), size (4) in every size while disabled. */
	q = GUEST_IOVA + 0x7000;
	ret = bar_wr(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_BASE, &q, 8);
	expect(!ret, "ring 1 BASE 8-byte write: %s", errname(ret));
	expect_sizes(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_BASE, 8, q, "ring 1 BASE");
	v = 0x8;
	ret = bar_wr(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_SIZE, &v, 1);
	expect_sizes(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_SIZE, 4, 8,
		     "ring 1 SIZE after a 1-byte write");
	/* GTT_DATA (8) and GTT_INDEX (4). */
	hi = reg(d, GVT_SIM_REG_GM_HIGH) * 256;
	v = hi;
	n0 = ignored_count();
	expect_ret(bar_wr(d, GVT_SIM_REG_GTT_INDEX, &v, 4), 0,
		   "GTT index past the vGPU's high GM: ignored");
	n1 = ignored_count();
	expect(n0 >= 0 && n1 == n0 + 1 && reg(d, GVT_SIM_REG_GTT_INDEX) == 0,
	       "... GTT index unchanged (0x%x), counted in ignored_accesses (%lld -> %lld)",
	       reg(d, GVT_SIM_REG_GTT_INDEX), (long long)n0, (long long)n1);
	v = hi - 1;
	q = 0x8000123456789000ull;
	ret = bar_wr(d, GVT_SIM_REG_GTT_INDEX, &v, 4) ||
	      bar_wr(d, GVT_SIM_REG_GTT_DATA, &q, 8);
	expect(!ret, "GTT index %u and 8-byte data write", hi - 1);
	expect_sizes(d, GVT_SIM_REG_GTT_DATA, 8, q, "GTT_DATA");
	v = 0xabcd;
	ret = bar_wr(d, GVT_SIM_REG_GTT_DATA + 4, &v, 2);
	expect(!ret && reg64(d, GVT_SIM_REG_GTT_DATA) == 0x8000abcd56789000ull,
	       "GTT_DATA 2-byte write merges into the entry: 0x%" PRIx64,
	       reg64(d, GVT_SIM_REG_GTT_DATA));

	/* Malformed accesses: EINVAL, not counted. */
	ok = 1;
	n0 = ignored_count();
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint8_t buf[16];

		memset(buf, 0xff, sizeof(buf));
		ret = bar_rd(d, bad[i].off, buf, bad[i].len);
		if (ret != -EINVAL) {
			ok = 0;
			printf("# read of %u at 0x%" PRIx64 ": %s\n",
			       bad[i].len, bad[i].off, errname(ret));
		}
		ret = bar_wr(d, bad[i].off, buf, bad[i].len);
		if (ret != -EINVAL) {
			ok = 0;
			printf("# write of %u at 0x%" PRIx64 ": %s\n",
			       bad[i].len, bad[i].off, errname(ret));
		}
	}
	n1 = ignored_count();
	expect(ok, "misaligned, 3/16-byte and past-the-end reads and writes: EINVAL");
	expect(n0 >= 0 && n1 == n0, "... not counted as ignored (%lld -> %lld)",
	       (long long)n0, (long long)n1);
	/* Well-formed accesses to no register: succeed, read 0, counted. */
	ok = 1;
	n0 = ignored_count();
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++) {
		static const uint8_t zeros[8];
		uint8_t buf[8];

		memset(buf, 0xa5, sizeof(buf));
		ret = bar_rd(d, unknown[i].off, buf, unknown[i].len);
		if (ret || memcmp(buf, zeros, unknown[i].len)) {
			ok = 0;
			printf("# read of %u at 0x%" PRIx64 ": %s, byte 0 0x%02x\n",
			       unknown[i].len, unknown[i].off, errname(ret), buf[0]);
		}
	}
	n1 = ignored_count();
	expect(ok, "reads of unknown offsets and across two registers: succeed, read 0");
	expect(n0 >= 0 && n1 == n0 + (int64_t)ARRAY_SIZE(unknown),
	       "... each counted in ignored_accesses (%lld -> %lld, %zu reads)",
	       (long long)n0, (long long)n1, ARRAY_SIZE(unknown));
	ok = 1;
	n0 = n1;
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++) {
		uint8_t buf[8];

		memset(buf, 0xff, sizeof(buf));
		ret = bar_wr(d, unknown[i].off, buf, unknown[i].len);
		if (ret) {
			ok = 0;
			printf("# write of %u at 0x%" PRIx64 ": %s\n",
			       unknown[i].len, unknown[i].off, errname(ret));
		}
	}
	n1 = ignored_count();
	expect(ok, "the same as writes of all ones: succeed");
	expect(n0 >= 0 && n1 == n0 + (int64_t)ARRAY_SIZE(unknown),
	       "... each counted in ignored_accesses (%lld -> %lld, %zu writes)",
	       (long long)n0, (long long)n1, ARRAY_SIZE(unknown));
	expect(reg64(d, GVT_SIM_REG_STATUS_PAGE) == sp &&
	       reg(d, GVT_SIM_REG_IRQ_ENABLE) == 0 &&
	       reg(d, GVT_SIM_REG_IRQ_STATUS) == 0 &&
	       reg(d, GVT_SIM_REG_STATUS) == GVT_SIM_STATUS_SCHEDULED &&
	       reg(d, GVT_SIM_REG_SUBMITTED) == 0 &&
	       reg64(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_BASE) == GUEST_IOVA + 0x7000 &&
	       rreg(d, 1, GVT_SIM_RING_SIZE) == 8 &&
	       rreg(d, 0, GVT_SIM_RING_CTL) == 0 && rreg(d, 1, GVT_SIM_RING_CTL) == 0 &&
	       rreg(d, 0, GVT_SIM_RING_TAIL) == 0 && rreg(d, 0, GVT_SIM_RING_HEAD) == 0 &&
	       reg(d, GVT_SIM_REG_GTT_INDEX) == hi - 1,
	       "the writes changed nothing: status page, IRQ registers, rings, GTT index, status");
	/* Writes to read-only registers: succeed, change nothing, counted. */
	ok = 1;
	n0 = ignored_count();
	for (size_t i = 0; i < ARRAY_SIZE(ro); i++) {
		uint64_t before = 0, after = 0;

		bar_rd(d, ro[i].off, &before, ro[i].len);
		ret = bar_wr(d, ro[i].off, zero, ro[i].len);
		bar_rd(d, ro[i].off, &after, ro[i].len);
		if (ret || before != after) {
			ok = 0;
			printf("# write to read-only 0x%" PRIx64 ": %s, 0x%" PRIx64
			       " -> 0x%" PRIx64 "\n", ro[i].off, errname(ret),
			       before, after);
		}
	}
	n1 = ignored_count();
	expect(ok, "writes to read-only registers (ID ... BUSY_NS, ring HEAD): succeed, value unchanged");
	expect(n0 >= 0 && n1 == n0 + (int64_t)ARRAY_SIZE(ro),
	       "... each counted in ignored_accesses (%lld -> %lld, %zu writes)",
	       (long long)n0, (long long)n1, ARRAY_SIZE(ro));
	/* Ring registers latch only while disabled and idle. */
	program(d, 8);
	v = 16;
	ret = bar_wr(d, GVT_SIM_REG_RING(0) + GVT_SIM_RING_SIZE, &v, 4);
	q = GUEST_IOVA + 0x8000;
	ret |= bar_wr(d, GVT_SIM_REG_RING(0) + GVT_SIM_RING_BASE, &q, 8);
	expect(!ret && rreg(d, 0, GVT_SIM_RING_SIZE) == 8 &&
	       reg64(d, GVT_SIM_REG_RING(0) + GVT_SIM_RING_BASE) == GUEST_IOVA + 0x1000,
	       "BASE and SIZE writes to an enabled ring are ignored");
	expect(rreg(d, 0, GVT_SIM_RING_CTL) == 1 && rreg(d, 0, GVT_SIM_RING_HEAD) == 0 &&
	       rreg(d, 0, GVT_SIM_RING_TAIL) == 0,
	       "an enabled ring reads CTL 1, HEAD 0, TAIL 0");
	set_rreg(d, 0, GVT_SIM_RING_CTL, 0);
	expect_val(rreg(d, 0, GVT_SIM_RING_CTL), 0, "an idle ring can be disabled");
	expect_ret(do_reset(d, 0), 0, "RESET register write");
	expect_power_on(d, "after the register checks and RESET");
}

/* GET_IRQ_INFO for one index: count and flags, or an errno. */
static void irq_info_check(struct dev *d, uint32_t index, int want_ret,
			   uint32_t count, uint32_t flags, const char *name)
{
	struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = index };
	int ret = ioctl(d->vdev->fd, VFIO_DEVICE_GET_IRQ_INFO, &ii) ? -errno : 0;

	if (want_ret) {
		expect_ret(ret, want_ret, "GET_IRQ_INFO(%s)", name);
		return;
	}
	expect(!ret && ii.count == count && ii.flags == flags,
	       "GET_IRQ_INFO(%s): count %u flags 0x%x (got %s, %u, 0x%x)",
	       name, count, flags, errname(ret), ii.count, ii.flags);
}

static void info_checks(struct dev *d)
{
	struct vfio_device_info di = { .argsz = sizeof(di) };
	struct vfio_irq_info ii = { .argsz = 8 };
	int ok = 1, ret;
	const uint32_t ev = VFIO_IRQ_INFO_EVENTFD, nr = VFIO_IRQ_INFO_NORESIZE;

	ret = ioctl(d->vdev->fd, VFIO_DEVICE_GET_INFO, &di) ? -errno : 0;
	expect(!ret && di.flags == (VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET) &&
	       di.num_regions == VFIO_PCI_NUM_REGIONS && di.num_irqs == VFIO_PCI_NUM_IRQS,
	       "GET_INFO: PCI|RESET, %u regions, %u IRQ indexes (got 0x%x, %u, %u)",
	       VFIO_PCI_NUM_REGIONS, VFIO_PCI_NUM_IRQS, di.flags, di.num_regions,
	       di.num_irqs);
	for (uint32_t i = 0; i < VFIO_PCI_NUM_REGIONS; i++) {
		struct vfio_region_info ri = { .argsz = sizeof(ri), .index = i };
		uint64_t size = i == VFIO_PCI_BAR0_REGION_INDEX ? GVT_SIM_BAR0_SIZE :
				i == VFIO_PCI_CONFIG_REGION_INDEX ? 256 : 0;
		uint32_t flags = size ? VFIO_REGION_INFO_FLAG_READ |
					VFIO_REGION_INFO_FLAG_WRITE : 0;

		if (ioctl(d->vdev->fd, VFIO_DEVICE_GET_REGION_INFO, &ri) ||
		    ri.size != size || ri.flags != flags) {
			ok = 0;
			printf("# region %u: size 0x%llx flags 0x%x\n", i,
			       (unsigned long long)ri.size, ri.flags);
		}
	}
	expect(ok, "GET_REGION_INFO: BAR0 4 KB and config 256 bytes read/write, no other region");
	irq_info_check(d, VFIO_PCI_INTX_IRQ_INDEX, 0, 1,
		       ev | VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED, "INTx");
	irq_info_check(d, VFIO_PCI_MSI_IRQ_INDEX, 0, 1, ev | nr, "MSI");
	irq_info_check(d, VFIO_PCI_MSIX_IRQ_INDEX, 0, 0, ev | nr, "MSI-X");
	/* vfio_pci_get_irq_count() gives ERR 1 whether or not PCIe. */
	irq_info_check(d, VFIO_PCI_ERR_IRQ_INDEX, 0, 1, ev | nr, "ERR");
	irq_info_check(d, VFIO_PCI_REQ_IRQ_INDEX, 0, 1, ev | nr, "REQ");
	irq_info_check(d, VFIO_PCI_NUM_IRQS, -EINVAL, 0, 0, "index 5");
	irq_info_check(d, 0xffffffff, -EINVAL, 0, 0, "index ~0");
	ii.index = VFIO_PCI_MSI_IRQ_INDEX;
	ret = ioctl(d->vdev->fd, VFIO_DEVICE_GET_IRQ_INFO, &ii) ? -errno : 0;
	expect_ret(ret, -EINVAL, "GET_IRQ_INFO with argsz 8");
}

/*
 * The VFIO_DEVICE_SET_IRQS matrix, as vfio_pci_set_irqs_ioctl() and
 * vfio_set_irqs_validate_and_prepare() answer. Starts and ends with no
 * interrupt type enabled.
 */
static void set_irqs_checks(struct dev *d)
{
	const uint32_t T = VFIO_IRQ_SET_ACTION_TRIGGER, M = VFIO_IRQ_SET_ACTION_MASK,
		       U = VFIO_IRQ_SET_ACTION_UNMASK;
	const uint32_t INTX = VFIO_PCI_INTX_IRQ_INDEX, MSI = VFIO_PCI_MSI_IRQ_INDEX,
		       MSIX = VFIO_PCI_MSIX_IRQ_INDEX, ERR = VFIO_PCI_ERR_IRQ_INDEX,
		       REQ = VFIO_PCI_REQ_IRQ_INDEX;
	int e2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), efd = d->efd;
	int pfd[2];
	int32_t fds[2];

	if (e2 < 0 || pipe(pfd))
		die("eventfd/pipe");
	drain(efd);

	/* Validation, whatever the state. */
	expect_ret(irq_none(d, T, VFIO_PCI_NUM_IRQS, 0, 0), -EINVAL, "SET_IRQS index 5");
	expect_ret(irq_none(d, T, 0xffffffff, 0, 0), -EINVAL, "SET_IRQS index ~0");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE | T | (1u << 6), INTX, 0, 1, NULL, 0),
		   -EINVAL, "SET_IRQS unknown flag bit 6");
	expect_ret(set_irqs(d, T, INTX, 0, 1, NULL, 0), -EINVAL, "SET_IRQS no data type");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_DATA_BOOL | T,
			    INTX, 0, 1, "\1", 1), -EINVAL, "SET_IRQS two data types");
	expect_ret(set_irqs_argsz(d, 16, VFIO_IRQ_SET_DATA_NONE | T, INTX, 0, 1, NULL, 0),
		   -EINVAL, "SET_IRQS argsz below the header");
	expect_ret(set_irqs_argsz(d, IRQ_SET_HDR, VFIO_IRQ_SET_DATA_EVENTFD | T, INTX, 0, 1,
				  &efd, 4), -EINVAL, "SET_IRQS eventfd without room for the fd");
	expect_ret(set_irqs_argsz(d, IRQ_SET_HDR + 1, VFIO_IRQ_SET_DATA_BOOL | T, ERR, 0, 1,
				  "\1", 1), 0, "SET_IRQS ERR bool with argsz for one bool");
	expect_ret(irq_none(d, T, INTX, 0, 0xffffffff), -EINVAL, "SET_IRQS count ~0");
	expect_ret(irq_none(d, T, INTX, 1, 0), -EINVAL, "INTx start 1");
	expect_ret(irq_none(d, T, INTX, 0, 2), -EINVAL, "INTx start 0 count 2");
	expect_ret(irq_none(d, T, MSI, 1, 0), -EINVAL, "MSI start 1 count 0");
	expect_ret(irq_fd(d, T, MSI, 0, 2, efd), -EINVAL, "MSI count 2");
	expect_ret(irq_none(d, T, MSIX, 0, 0), -EINVAL, "MSI-X (no vectors) count 0");
	expect_ret(irq_fd(d, T, MSIX, 0, 1, efd), -EINVAL, "MSI-X eventfd");
	expect_ret(irq_none(d, T, ERR, 1, 0), -EINVAL, "ERR start 1");
	expect_ret(irq_fd(d, T, REQ, 0, 2, efd), -EINVAL, "REQ count 2");
	/* Actions an index does not have. */
	expect_ret(irq_none(d, M, MSI, 0, 1), -ENOTTY, "MSI mask");
	expect_ret(irq_none(d, U, MSI, 0, 1), -ENOTTY, "MSI unmask");
	expect_ret(irq_fd(d, U, MSI, 0, 1, efd), -ENOTTY, "MSI unmask eventfd");
	expect_ret(irq_none(d, M, ERR, 0, 1), -ENOTTY, "ERR mask");
	expect_ret(irq_none(d, U, REQ, 0, 1), -ENOTTY, "REQ unmask");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE, INTX, 0, 1, NULL, 0), -ENOTTY,
		   "INTx with no action (none enabled)");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE | M | U, INTX, 0, 1, NULL, 0),
		   -ENOTTY, "INTx mask|unmask (none enabled)");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE | T | M, MSI, 0, 1, NULL, 0),
		   -ENOTTY, "MSI trigger|mask");

	/* No type enabled. */
	expect_ret(irq_none(d, M, INTX, 0, 1), -EINVAL, "INTx mask, INTx off");
	expect_ret(irq_none(d, U, INTX, 0, 1), -EINVAL, "INTx unmask, INTx off");
	expect_ret(irq_none(d, T, INTX, 0, 0), -EINVAL, "INTx none count 0, INTx off");
	expect_ret(irq_none(d, T, INTX, 0, 1), -EINVAL, "INTx loopback (none), INTx off");
	expect_ret(irq_bool(d, T, INTX, 0, 1, 1), -EINVAL, "INTx loopback (bool), INTx off");
	expect_ret(irq_none(d, T, MSI, 0, 0), -EINVAL, "MSI none count 0, MSI off");
	expect_ret(irq_none(d, T, MSI, 0, 1), -EINVAL, "MSI loopback (none), MSI off");
	expect_ret(irq_bool(d, T, MSI, 0, 1, 1), -EINVAL, "MSI loopback (bool), MSI off");
	expect_ret(irq_fd(d, T, MSI, 0, 0, efd), -ERANGE,
		   "MSI enable with no vector (pci_alloc_irq_vectors(1, 0))");
	expect_ret(irq_fd(d, T, INTX, 0, 1, pfd[0]), -EINVAL, "INTx trigger: a pipe, not an eventfd");
	expect_ret(irq_fd(d, T, INTX, 0, 1, 1000), -EBADF, "INTx trigger: a closed fd");
	expect_ret(irq_fd(d, T, MSI, 0, 1, pfd[0]), -EINVAL, "MSI trigger: a pipe");
	expect_ret(irq_fd(d, T, MSI, 0, 1, 1000), -EBADF, "MSI trigger: a closed fd");
	expect_ret(irq_none(d, M, INTX, 0, 1), -EINVAL, "INTx still off after the failed enables");

	/* INTx enabled. */
	expect_ret(set_trigger(d, INTX, efd), 0, "INTx enable");
	expect_ret(irq_fd(d, T, INTX, 0, 1, e2), 0, "INTx trigger replaced by another eventfd");
	expect_ret(irq_none(d, T, INTX, 0, 1), 0, "INTx loopback (none)");
	expect(drain(e2) == 1 && drain(efd) == 0, "INTx loopback signals the new eventfd only");
	expect_ret(irq_fd(d, T, INTX, 0, 1, pfd[0]), -EINVAL, "INTx trigger replaced by a pipe");
	expect_ret(irq_bool(d, T, INTX, 0, 1, 1), 0, "INTx loopback (bool 1)");
	expect(drain(e2) == 1, "INTx: a failed replace keeps the eventfd");
	expect_ret(irq_bool(d, T, INTX, 0, 1, 0), 0, "INTx loopback (bool 0)");
	expect(drain(e2) == 0, "INTx: bool 0 signals nothing");
	expect_ret(irq_fd(d, T, INTX, 0, 1, -1), 0, "INTx trigger fd -1 (INTx stays on)");
	expect_ret(irq_none(d, T, INTX, 0, 1), 0, "INTx loopback without an eventfd");
	expect(drain(e2) == 0 && drain(efd) == 0, "INTx without an eventfd signals nothing");
	expect_ret(set_trigger(d, INTX, efd), 0, "INTx trigger set again");
	expect_ret(irq_fd(d, T, INTX, 0, 0, efd), -EINVAL, "INTx eventfd count 0");
	expect_ret(irq_bool(d, T, INTX, 0, 0, 1), -EINVAL, "INTx bool count 0");
	expect_ret(irq_none(d, M, INTX, 0, 1), 0, "INTx mask (none)");
	expect_ret(irq_bool(d, M, INTX, 0, 1, 1), 0, "INTx mask (bool 1)");
	expect_ret(irq_bool(d, M, INTX, 0, 1, 0), 0, "INTx mask (bool 0)");
	expect_ret(irq_none(d, M, INTX, 0, 0), -EINVAL, "INTx mask count 0");
	expect_ret(irq_fd(d, M, INTX, 0, 1, e2), -ENOTTY, "INTx mask by eventfd");
	expect_ret(irq_none(d, U, INTX, 0, 1), 0, "INTx unmask (none)");
	expect_ret(irq_bool(d, U, INTX, 0, 1, 1), 0, "INTx unmask (bool 1)");
	expect_ret(irq_bool(d, U, INTX, 0, 1, 0), 0, "INTx unmask (bool 0)");
	expect_ret(irq_none(d, U, INTX, 1, 1), -EINVAL, "INTx unmask start 1");
	/* vfio-pci accepts an irqfd here; the vGPU documents it has none. */
	expect_ret(irq_fd(d, U, INTX, 0, 1, e2), -ENOTTY,
		   "INTx unmask by eventfd (not offered, see simulated-gpu.rst)");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE, INTX, 0, 1, NULL, 0), -ENOTTY,
		   "INTx with no action (INTx on)");
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_NONE | M | U, INTX, 0, 1, NULL, 0),
		   -ENOTTY, "INTx mask|unmask (INTx on)");
	expect_ret(set_trigger(d, MSI, e2), -EINVAL, "MSI enable while INTx is on");
	expect_ret(irq_none(d, T, MSI, 0, 0), -EINVAL, "MSI disable while INTx is on");
	expect_ret(irq_none(d, T, MSI, 0, 1), -EINVAL, "MSI loopback while INTx is on");
	expect_ret(irq_none(d, T, INTX, 0, 1), 0, "INTx loopback after the MSI attempts");
	expect(drain(efd) == 1 && drain(e2) == 0, "INTx still on, with its eventfd");
	expect_ret(irq_none(d, T, INTX, 0, 0), 0, "INTx disable (none, count 0)");
	expect_ret(irq_none(d, U, INTX, 0, 1), -EINVAL, "INTx off after disable (unmask fails)");
	expect_ret(irq_none(d, T, INTX, 0, 0), -EINVAL, "INTx disable again");

	/* INTx enabled without an eventfd (fd -1), as vfio_intx_enable(NULL). */
	expect_ret(irq_fd(d, T, INTX, 0, 1, -1), 0, "INTx enable with fd -1");
	expect_ret(irq_none(d, U, INTX, 0, 1), 0, "INTx is on (unmask works)");
	expect_ret(irq_none(d, T, INTX, 0, 0), 0, "INTx disable");

	/* MSI enabled. */
	expect_ret(set_trigger(d, MSI, efd), 0, "MSI enable");
	expect_ret(irq_none(d, T, MSI, 0, 1), 0, "MSI loopback (none)");
	expect(drain(efd) == 1, "MSI loopback signals the eventfd");
	expect_ret(irq_fd(d, T, MSI, 0, 1, e2), 0, "MSI trigger replaced by another eventfd");
	expect_ret(irq_bool(d, T, MSI, 0, 1, 1), 0, "MSI loopback (bool 1)");
	expect(drain(e2) == 1 && drain(efd) == 0, "MSI loopback signals the new eventfd only");
	expect_ret(irq_bool(d, T, MSI, 0, 1, 0), 0, "MSI loopback (bool 0)");
	expect(drain(e2) == 0, "MSI bool 0 signals nothing");
	expect_ret(irq_fd(d, T, MSI, 0, 0, efd), 0, "MSI eventfd count 0 while on (no-op)");
	expect_ret(irq_bool(d, T, MSI, 0, 0, 1), 0, "MSI bool count 0 while on (no-op)");
	expect_ret(irq_fd(d, T, MSI, 0, 1, -1), 0, "MSI vector fd -1 (MSI stays on)");
	expect_ret(irq_none(d, T, MSI, 0, 1), 0, "MSI loopback without an eventfd");
	expect(drain(e2) == 0 && drain(efd) == 0, "MSI without an eventfd signals nothing");
	expect_ret(set_trigger(d, INTX, efd), -EINVAL, "INTx enable while MSI is on");
	expect_ret(irq_none(d, T, INTX, 0, 0), -EINVAL, "INTx disable while MSI is on");
	expect_ret(irq_none(d, U, INTX, 0, 1), -EINVAL, "INTx unmask while MSI is on");
	expect_ret(irq_none(d, M, INTX, 0, 1), -EINVAL, "INTx mask while MSI is on");
	expect_ret(set_trigger(d, MSI, efd), 0, "MSI vector set again");
	expect_ret(irq_none(d, T, MSI, 0, 1), 0, "MSI loopback after the INTx attempts");
	expect(drain(efd) == 1, "MSI still on, with its eventfd");
	expect_ret(irq_none(d, T, MSI, 0, 0), 0, "MSI disable (none, count 0)");
	expect_ret(irq_none(d, T, MSI, 0, 1), -EINVAL, "MSI off after disable (loopback fails)");
	expect_ret(irq_none(d, T, MSI, 0, 0), -EINVAL, "MSI disable again");
	expect_ret(irq_fd(d, T, MSI, 0, 1, -1), 0, "MSI enable with fd -1");
	expect_ret(set_trigger(d, INTX, efd), -EINVAL, "INTx enable while MSI (no eventfd) is on");
	expect_ret(irq_none(d, T, MSI, 0, 0), 0, "MSI disable");

	/* ERR and REQ: vfio_pci_set_ctx_trigger_single(). */
	for (int k = 0; k < 2; k++) {
		uint32_t i = k ? REQ : ERR;
		const char *n = k ? "REQ" : "ERR";

		expect_ret(irq_none(d, T, i, 0, 1), -EINVAL, "%s loopback without an eventfd", n);
		expect_ret(irq_none(d, T, i, 0, 0), -EINVAL,
			   "%s none count 0 without an eventfd", n);
		expect_ret(irq_bool(d, T, i, 0, 1, 1), 0, "%s bool 1 without an eventfd", n);
		expect_ret(irq_bool(d, T, i, 0, 0, 1), -EINVAL, "%s bool count 0", n);
		expect_ret(irq_fd(d, T, i, 0, 0, e2), -EINVAL, "%s eventfd count 0", n);
		expect_ret(irq_fd(d, T, i, 0, 1, -2), -EINVAL, "%s fd -2", n);
		expect_ret(irq_fd(d, T, i, 0, 1, -1), 0, "%s fd -1 (none)", n);
		expect_ret(irq_fd(d, T, i, 0, 1, pfd[0]), -EINVAL, "%s trigger: a pipe", n);
		expect_ret(irq_fd(d, T, i, 0, 1, 1000), -EBADF, "%s trigger: a closed fd", n);
		expect_ret(irq_fd(d, T, i, 0, 1, e2), 0, "%s trigger", n);
		expect_ret(irq_none(d, T, i, 0, 1), 0, "%s loopback (none)", n);
		expect_ret(irq_bool(d, T, i, 0, 1, 1), 0, "%s loopback (bool 1)", n);
		expect_ret(irq_bool(d, T, i, 0, 1, 0), 0, "%s loopback (bool 0)", n);
		expect(drain(e2) == 2, "%s loopbacks signalled twice", n);
		expect_ret(irq_none(d, T, i, 0, 0), 0, "%s cleared (none, count 0)", n);
		expect_ret(irq_none(d, T, i, 0, 1), -EINVAL, "%s loopback after clearing", n);
		expect_ret(irq_fd(d, T, i, 0, 1, e2), 0, "%s trigger again", n);
		expect_ret(irq_fd(d, T, i, 0, 1, -1), 0, "%s cleared (fd -1)", n);
		expect_ret(irq_none(d, T, i, 0, 1), -EINVAL, "%s loopback after fd -1", n);
	}
	/* Both types can be enabled after all that. */
	fds[0] = efd;
	expect_ret(set_irqs(d, VFIO_IRQ_SET_DATA_EVENTFD | T, MSI, 0, 1, fds, 4), 0,
		   "MSI enable at the end");
	expect_ret(irq_none(d, T, MSI, 0, 0), 0, "MSI disable at the end");
	drain(efd);
	close(e2);
	close(pfd[0]);
	close(pfd[1]);
}

/* Completions, interrupts and the status page, with MSI. */
static void ring_checks(struct dev *d)
{
	struct gvt_sim_engine_status *s1 = status_rec(d, 1), *s0 = status_rec(d, 0);
	int efd = d->efd, ret;
	uint32_t v;

	expect_ret(set_trigger(d, VFIO_PCI_MSI_IRQ_INDEX, efd), 0, "MSI enable for the ring checks");
	d->irq = VFIO_PCI_MSI_IRQ_INDEX;
	program(d, 8);
	drain(efd);
	ret = queue(d, 1, 0xabc, 2000, 4096, GVT_SIM_DESC_IRQ) ?: doorbell(d, 1);
	expect_ret(ret, 0, "a descriptor on engine 1 and its doorbell");
	expect(wait_efd(efd, ANSWER_MS) >= 1, "completion interrupt (MSI)");
	expect_val(reg(d, GVT_SIM_REG_IRQ_STATUS), GVT_SIM_IRQ_ENGINE(1),
		   "IRQ_STATUS: engine 1");
	expect(s1->seqno == 0xabc && s1->completed == 1 && s1->gpu_ns == 2000000 &&
	       s1->head == 1 && s1->pad == 0,
	       "status page record of engine 1: seqno 0xabc, 1 completed, 2 ms, head 1 (got 0x%x %u %llu %u)",
	       s1->seqno, s1->completed, (unsigned long long)s1->gpu_ns, s1->head);
	expect(s0->seqno == 0 && s0->completed == 0 && s0->head == 0,
	       "status page record of engine 0 untouched");
	expect(rreg(d, 1, GVT_SIM_RING_HEAD) == 1 && rreg(d, 1, GVT_SIM_RING_TAIL) == 1,
	       "ring 1 HEAD 1, TAIL 1");
	expect(reg(d, GVT_SIM_REG_SUBMITTED) == 1 && reg(d, GVT_SIM_REG_COMPLETED) == 1 &&
	       reg64(d, GVT_SIM_REG_BUSY_NS) == 2000000,
	       "SUBMITTED 1, COMPLETED 1, BUSY_NS 2 ms");
	v = GVT_SIM_IRQ_ENGINE(0) | GVT_SIM_IRQ_FAULT;
	setreg(d, GVT_SIM_REG_IRQ_STATUS, v);
	expect_val(reg(d, GVT_SIM_REG_IRQ_STATUS), GVT_SIM_IRQ_ENGINE(1),
		   "IRQ_STATUS: writing other bits clears nothing");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, GVT_SIM_IRQ_ENGINE(1));
	expect_val(reg(d, GVT_SIM_REG_IRQ_STATUS), 0, "IRQ_STATUS: write 1 clears");

	/* No IRQ flag: the status page moves, no interrupt. */
	ret = queue(d, 1, 0xabd, 500, 0, 0) ?: doorbell(d, 1);
	expect(!ret && wait_done(d, 1, 2) && s1->seqno == 0xabd,
	       "descriptor without the IRQ flag completes (status page)");
	expect(reg(d, GVT_SIM_REG_IRQ_STATUS) == 0 && drain(efd) == 0,
	       "... without interrupt status or interrupt");
	/* A disabled cause: status set, no MSI until it is enabled. */
	setreg(d, GVT_SIM_REG_IRQ_ENABLE, GVT_SIM_IRQ_ENGINE(1) | GVT_SIM_IRQ_FAULT);
	ret = queue(d, 0, 0x10, 500, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 1) &&
	       reg(d, GVT_SIM_REG_IRQ_STATUS) == GVT_SIM_IRQ_ENGINE(0) && drain(efd) == 0,
	       "completion on engine 0 with its interrupt disabled: status bit, no MSI");
	setreg(d, GVT_SIM_REG_IRQ_ENABLE, 0x3 | GVT_SIM_IRQ_FAULT);
	expect(drain(efd) == 1, "enabling the pending cause sends the MSI");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 0x3);
	/* Several descriptors in one doorbell, around the ring (size 8). */
	for (uint32_t i = 0; i < 7; i++)
		ret |= queue(d, 0, 0x100 + i, 300, 0, GVT_SIM_DESC_IRQ);
	expect(!ret && queue(d, 0, 0, 300, 0, 0) == -EAGAIN,
	       "7 descriptors fill a ring of 8 ((tail + 1) %% size == head)");
	ret = doorbell(d, 0);
	ret = ret ?: (wait_done(d, 0, 8) ? 0 : -ETIMEDOUT);
	expect(!ret && status_rec(d, 0)->seqno == 0x106 &&
	       status_rec(d, 0)->head == 0 && rreg(d, 0, GVT_SIM_RING_HEAD) == 0,
	       "one doorbell for 7: all complete in order, HEAD wraps to 0 (seqno 0x%x head %u)",
	       status_rec(d, 0)->seqno, status_rec(d, 0)->head);
	for (uint32_t i = 0; i < 5; i++)
		ret |= queue(d, 0, 0x200 + i, 300, 0, GVT_SIM_DESC_IRQ);
	ret |= doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 13) && status_rec(d, 0)->seqno == 0x204 &&
	       rreg(d, 0, GVT_SIM_RING_HEAD) == 5 && status_rec(d, 0)->completed == 13,
	       "5 more across the wrap: HEAD 5, 13 completed on engine 0");
	expect(wait_efd(efd, ANSWER_MS) >= 1, "MSIs for them");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 0x3);
	expect(reg(d, GVT_SIM_REG_SUBMITTED) == 15 && reg(d, GVT_SIM_REG_COMPLETED) == 15,
	       "SUBMITTED and COMPLETED count both engines: 15");
	/*
	 * A busy ring cannot be disabled. Judged only when the 50 ms workload
	 * has still not completed after the write and the reads: the device
	 * writes the status page and moves HEAD under the lock that the write
	 * takes, so the ring was busy at the write. A guest stalled for the
	 * whole workload (a descheduled vCPU) cannot tell: it lets the
	 * workload complete, enables the ring again if the write (rightly)
	 * disabled the idle ring, and tries again.
	 */
	{
		uint32_t n0 = 0, ctl = 0, st = 0;
		int judged = 0, attempts = 0;

		while (!judged && attempts < 10) {
			n0 = st_completed(d, 0);
			ret = queue(d, 0, 0x300 + attempts, 50000, 0, GVT_SIM_DESC_IRQ) ?:
			      doorbell(d, 0);
			attempts++;
			if (ret)
				break;
			set_rreg(d, 0, GVT_SIM_RING_CTL, 0);
			ctl = rreg(d, 0, GVT_SIM_RING_CTL);
			st = reg(d, GVT_SIM_REG_STATUS);
			judged = st_completed(d, 0) == n0;
			if (judged)
				break;
			if (ctl == 0) {
				set_rreg(d, 0, GVT_SIM_RING_CTL, GVT_SIM_RING_CTL_ENABLE);
				d->rings[0].tail = 0;
				memset(status_rec(d, 0), 0, GVT_SIM_STATUS_STRIDE);
			}
			setreg(d, GVT_SIM_REG_IRQ_STATUS, 0x3);
		}
		expect(!ret && judged && ctl == 1 && (st & GVT_SIM_STATUS_BUSY),
		       "disabling a busy ring is ignored; STATUS busy (judged in attempt %d: %s)",
		       attempts, judged ? "still running" : "never caught running");
		expect(wait_done(d, 0, n0 + 1) &&
		       !(reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_BUSY),
		       "... it completes; STATUS idle");
	}
	set_rreg(d, 0, GVT_SIM_RING_CTL, 0);
	set_rreg(d, 0, GVT_SIM_RING_CTL, GVT_SIM_RING_CTL_ENABLE);
	expect(rreg(d, 0, GVT_SIM_RING_HEAD) == 0 && rreg(d, 0, GVT_SIM_RING_TAIL) == 0,
	       "re-enabling an idle ring resets HEAD and TAIL to 0");
	d->rings[0].tail = 0;
	memset(status_rec(d, 0), 0, GVT_SIM_STATUS_STRIDE);
	/* No status page: completions still count. */
	setreg64(d, GVT_SIM_REG_STATUS_PAGE, 0);
	setreg(d, GVT_SIM_REG_IRQ_STATUS, ~0u);
	drain(efd);
	ret = queue(d, 0, 0x400, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_efd(efd, ANSWER_MS) >= 1 && rreg(d, 0, GVT_SIM_RING_HEAD) == 1 &&
	       status_rec(d, 0)->completed == 0,
	       "status page address 0: completion interrupt, HEAD moves, nothing written");
	expect_ret(do_reset(d, 1), 0, "VFIO_DEVICE_RESET");
	expect_power_on(d, "after VFIO_DEVICE_RESET");
	drain(efd);
}

/* Puts the vGPU in the failed state one way; checks how, and recovery. */
static void fault_case(struct dev *d, const char *name, uint32_t word, int vfio_reset,
		       int (*cause)(struct dev *d))
{
	int ret;

	d->irq = VFIO_PCI_MSI_IRQ_INDEX;
	program(d, 8);
	drain(d->efd);
	ret = cause(d);
	expect(!ret && wait_failed(d), "%s: the vGPU fails (%s)", name, errname(ret));
	expect_val(reg(d, GVT_SIM_REG_FAULT), word, "%s: FAULT (reason %u, engine %u, index %u)",
		   name, GVT_SIM_FAULT_REASON(word), GVT_SIM_FAULT_ENGINE(word),
		   GVT_SIM_FAULT_INDEX(word));
	expect(reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_FAILED &&
	       reg(d, GVT_SIM_REG_IRQ_STATUS) & GVT_SIM_IRQ_FAULT &&
	       wait_efd(d->efd, ANSWER_MS) >= 1,
	       "%s: STATUS failed, IRQ_STATUS fault, fault interrupt (MSI)", name);
	expect_ret(do_reset(d, vfio_reset), 0, "%s: %s", name,
		   vfio_reset ? "VFIO_DEVICE_RESET" : "RESET register");
	expect_power_on(d, name);
	/* And it works again. */
	program(d, 8);
	drain(d->efd);
	ret = queue(d, 0, 77, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_efd(d->efd, ANSWER_MS) >= 1 && wait_done(d, 0, 1) &&
	       status_rec(d, 0)->seqno == 77,
	       "%s: a workload completes after the reset", name);
	setreg(d, GVT_SIM_REG_IRQ_STATUS, ~0u);
}

static int enable_with(struct dev *d, uint64_t base, uint32_t size)
{
	uint32_t one = GVT_SIM_RING_CTL_ENABLE;

	set_rreg(d, 1, GVT_SIM_RING_CTL, 0);
	setreg64(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_BASE, base);
	set_rreg(d, 1, GVT_SIM_RING_SIZE, size);
	return bar_wr(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_CTL, &one, 4);
}

static int f_misaligned(struct dev *d)
{
	return enable_with(d, GUEST_IOVA + SCRATCH_PAGE * GVT_SIM_PAGE_SIZE + 0x800, 8);
}

static int f_size3(struct dev *d)
{
	return enable_with(d, GUEST_IOVA + SCRATCH_PAGE * GVT_SIM_PAGE_SIZE, 3);
}

static int f_size0(struct dev *d)
{
	return enable_with(d, GUEST_IOVA + SCRATCH_PAGE * GVT_SIM_PAGE_SIZE, 0);
}

static int f_size1(struct dev *d)
{
	return enable_with(d, GUEST_IOVA + SCRATCH_PAGE * GVT_SIM_PAGE_SIZE, 1);
}

static int f_size128(struct dev *d)
{
	return enable_with(d, GUEST_IOVA + SCRATCH_PAGE * GVT_SIM_PAGE_SIZE, 128);
}

static int f_disabled(struct dev *d)
{
	uint32_t t = 1;

	set_rreg(d, 1, GVT_SIM_RING_CTL, 0);
	return bar_wr(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_TAIL, &t, 4);
}

static int f_tail(struct dev *d)
{
	uint32_t t = 8;
	int ret = queue(d, 0, 1, 300, 0, 0) ?: doorbell(d, 0);

	/* After one good descriptor: the fetch pointer is 1. */
	return ret ?: bar_wr(d, GVT_SIM_REG_RING(0) + GVT_SIM_RING_TAIL, &t, 4);
}

static int f_unmapped_ring(struct dev *d)
{
	uint32_t t = 1;
	int ret = enable_with(d, UNMAPPED_IOVA, 8);

	return ret ?: bar_wr(d, GVT_SIM_REG_RING(1) + GVT_SIM_RING_TAIL, &t, 4);
}

/* A ring in its own mapping: one good descriptor, unmap, then the next. */
static int f_unmapped_later(struct dev *d)
{
	void *p = mmap(NULL, GVT_SIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return -ENOMEM;
	ret = dma_map(d, p, EXTRA_IOVA, GVT_SIM_PAGE_SIZE);
	if (ret)
		goto out;
	set_rreg(d, 1, GVT_SIM_RING_CTL, 0);
	ring_init(d, 1, EXTRA_IOVA, p, 8);
	ret = queue(d, 1, 1, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 1);
	if (ret || !wait_done(d, 1, 1) || wait_efd(d->efd, ANSWER_MS) < 1) {
		ret = ret ?: -EIO;
		goto out;
	}
	setreg(d, GVT_SIM_REG_IRQ_STATUS, ~0u);
	ret = dma_unmap(d, EXTRA_IOVA, GVT_SIM_PAGE_SIZE) ?:
	      queue(d, 1, 2, 300, 0, 0) ?: doorbell(d, 1);
out:
	munmap(p, GVT_SIM_PAGE_SIZE);
	return ret;
}

static struct gvt_sim_desc bad_desc;

/* Descriptor 0 good, descriptor 1 bad_desc, one doorbell. */
static int f_bad_desc(struct dev *d)
{
	return queue(d, 1, 1, 300, 0, 0) ?: queue_raw(d, 1, &bad_desc) ?:
	       doorbell(d, 1);
}

static int f_status_page(struct dev *d)
{
	setreg64(d, GVT_SIM_REG_STATUS_PAGE, UNMAPPED_IOVA);
	return queue(d, 0, 1, 300, 0, 0) ?: queue(d, 0, 2, 300, 0, 0) ?:
	       doorbell(d, 0);
}

/* While failed: doorbells and ring enables are ignored, registers work. */
static int f_then_ignored(struct dev *d)
{
	uint32_t sub;
	int ret = f_disabled(d);

	if (ret || !wait_failed(d))
		return ret ?: -EIO;
	sub = reg(d, GVT_SIM_REG_SUBMITTED);
	ret = queue(d, 0, 1, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	set_rreg(d, 1, GVT_SIM_RING_SIZE, 8);
	set_rreg(d, 1, GVT_SIM_RING_CTL, 1);
	usleep(20000);
	expect(!ret && reg(d, GVT_SIM_REG_SUBMITTED) == sub &&
	       rreg(d, 0, GVT_SIM_RING_TAIL) == 0 && rreg(d, 1, GVT_SIM_RING_CTL) == 0 &&
	       reg(d, GVT_SIM_REG_FAULT) == fault_word(GVT_SIM_FAULT_RING_DISABLED, 1, 0),
	       "failed vGPU: doorbells and ring enables ignored, the first fault sticks");
	return 0;
}

static void fault_checks(struct dev *d)
{
	const uint32_t max = d->max_duration;
	struct { const char *name; struct gvt_sim_desc desc; uint32_t reason; } bad[] = {
		{ "opcode 0", { .opcode = 0, .seqno = 2, .duration_us = 300 },
		  GVT_SIM_FAULT_OPCODE },
		{ "opcode 7", { .opcode = 7, .seqno = 2, .duration_us = 300 },
		  GVT_SIM_FAULT_OPCODE },
		{ "unknown flag bit 1", { .opcode = 1, .flags = 2, .duration_us = 300 },
		  GVT_SIM_FAULT_RESERVED },
		{ "flag bit 31", { .opcode = 1, .flags = 1u << 31, .duration_us = 300 },
		  GVT_SIM_FAULT_RESERVED },
		{ "reserved0 set", { .opcode = 1, .duration_us = 300, .reserved0 = 1 },
		  GVT_SIM_FAULT_RESERVED },
		{ "reserved1 bit 63", { .opcode = 1, .duration_us = 300,
					.reserved1 = 1ull << 63 }, GVT_SIM_FAULT_RESERVED },
		{ "duration 0", { .opcode = 1, .duration_us = 0 }, GVT_SIM_FAULT_DURATION },
		{ "duration MAX + 1", { .opcode = 1, .duration_us = max + 1 },
		  GVT_SIM_FAULT_DURATION },
		{ "duration ~0", { .opcode = 1, .duration_us = ~0u }, GVT_SIM_FAULT_DURATION },
	};
	char name[64];

	fault_case(d, "ring base not 4K aligned", fault_word(GVT_SIM_FAULT_RING_CONFIG, 1, 0),
		   0, f_misaligned);
	fault_case(d, "ring size 3", fault_word(GVT_SIM_FAULT_RING_CONFIG, 1, 0), 0, f_size3);
	fault_case(d, "ring size 0", fault_word(GVT_SIM_FAULT_RING_CONFIG, 1, 0), 0, f_size0);
	fault_case(d, "ring size 1", fault_word(GVT_SIM_FAULT_RING_CONFIG, 1, 0), 0, f_size1);
	fault_case(d, "ring size 128 > RING_MAX", fault_word(GVT_SIM_FAULT_RING_CONFIG, 1, 0),
		   1, f_size128);
	fault_case(d, "doorbell on a disabled ring",
		   fault_word(GVT_SIM_FAULT_RING_DISABLED, 1, 0), 0, f_disabled);
	fault_case(d, "TAIL = ring size", fault_word(GVT_SIM_FAULT_TAIL_RANGE, 0, 1), 0, f_tail);
	fault_case(d, "ring base not mapped", fault_word(GVT_SIM_FAULT_FETCH, 1, 0), 1,
		   f_unmapped_ring);
	fault_case(d, "ring unmapped after a descriptor", fault_word(GVT_SIM_FAULT_FETCH, 1, 1),
		   0, f_unmapped_later);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		bad_desc = bad[i].desc;
		snprintf(name, sizeof(name), "descriptor 1 %s", bad[i].name);
		fault_case(d, name, fault_word(bad[i].reason, 1, 1), i == 0, f_bad_desc);
	}
	fault_case(d, "status page not mapped", fault_word(GVT_SIM_FAULT_STATUS_WRITE, 0, 0), 0,
		   f_status_page);
	fault_case(d, "doorbells after a fault", fault_word(GVT_SIM_FAULT_RING_DISABLED, 1, 0),
		   0, f_then_ignored);
}

/*
 * Copies (protocol 3). In the scratch pages: the copy block in the first,
 * the source from the second, the destination from the fourth.
 */
#define CB_PAGE		SCRATCH_PAGE
#define SRC_PAGE	(SCRATCH_PAGE + 1)
#define DST_PAGE	(SCRATCH_PAGE + 3)
#define CB_IOVA		(GUEST_IOVA + CB_PAGE * GVT_SIM_PAGE_SIZE)
#define SRC_IOVA	(GUEST_IOVA + SRC_PAGE * GVT_SIM_PAGE_SIZE)
#define DST_IOVA	(GUEST_IOVA + DST_PAGE * GVT_SIM_PAGE_SIZE)
#define DST_FILL	0x5a

static struct gvt_sim_copy *copy_block(struct dev *d)
{
	return (struct gvt_sim_copy *)(d->mem + CB_PAGE * GVT_SIM_PAGE_SIZE);
}

/* Fills the source with a pattern and the destination (2 pages) with DST_FILL. */
static void copy_buffers(struct dev *d)
{
	uint8_t *src = d->mem + SRC_PAGE * GVT_SIM_PAGE_SIZE;

	for (int i = 0; i < 2 * GVT_SIM_PAGE_SIZE; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	memset(d->mem + DST_PAGE * GVT_SIM_PAGE_SIZE, DST_FILL, 2 * GVT_SIM_PAGE_SIZE);
}

/* Whether the destination pages hold only DST_FILL: no copy wrote them. */
static int dst_untouched(struct dev *d)
{
	const uint8_t *dst = d->mem + DST_PAGE * GVT_SIM_PAGE_SIZE;

	for (int i = 0; i < 2 * GVT_SIM_PAGE_SIZE; i++)
		if (dst[i] != DST_FILL)
			return 0;
	return 1;
}

static struct gvt_sim_desc copy_desc(uint32_t seqno, uint64_t block)
{
	return (struct gvt_sim_desc) {
		.opcode = GVT_SIM_OP_COPY, .flags = GVT_SIM_DESC_IRQ, .seqno = seqno,
		.duration_us = 300, .copy = block,
	};
}

static void copy_checks(struct dev *d)
{
	const uint8_t *src = d->mem + SRC_PAGE * GVT_SIM_PAGE_SIZE + 5;
	const uint8_t *dst = d->mem + DST_PAGE * GVT_SIM_PAGE_SIZE + 9;
	const uint32_t len = GVT_SIM_PAGE_SIZE + 1000;
	struct gvt_sim_desc desc = copy_desc(0xc0, CB_IOVA);
	const uint64_t max = GVT_SIM_COPY_MAX;
	struct {
		const char *name;
		struct gvt_sim_desc desc;
		struct gvt_sim_copy blk;
		uint32_t reason;
	} bad[] = {
		{ "copy with bytes set",
		  { .opcode = 2, .duration_us = 300, .bytes = 64, .copy = CB_IOVA },
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_RESERVED },
		{ "copy with reserved0 set",
		  { .opcode = 2, .duration_us = 300, .reserved0 = 1, .copy = CB_IOVA },
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_RESERVED },
		{ "copy of duration 0", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_DURATION },
		{ "copy block misaligned", copy_desc(2, CB_IOVA + 8),
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_COPY_BLOCK },
		{ "copy block not mapped", copy_desc(2, UNMAPPED_IOVA),
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_COPY_BLOCK },
		{ "copy of length 0", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 0 }, GVT_SIM_FAULT_COPY_BAD },
		{ "copy of COPY_MAX + 1", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = SRC_IOVA + 2 * max, .length = max + 1 },
		  GVT_SIM_FAULT_COPY_BAD },
		{ "copy with overlapping ranges", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = SRC_IOVA + 100, .length = 200 },
		  GVT_SIM_FAULT_COPY_BAD },
		{ "copy block reserved0 set", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64, .reserved0 = 1 },
		  GVT_SIM_FAULT_COPY_BAD },
		{ "copy block reserved1 set", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = DST_IOVA, .length = 64, .reserved1 = 1ull << 40 },
		  GVT_SIM_FAULT_COPY_BAD },
		{ "copy wrapping past 2^64", copy_desc(2, CB_IOVA),
		  { .src = ~0ull - 16, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_COPY_BAD },
		{ "copy from unmapped memory", copy_desc(2, CB_IOVA),
		  { .src = UNMAPPED_IOVA, .dst = DST_IOVA, .length = 64 }, GVT_SIM_FAULT_COPY_DMA },
		{ "copy to unmapped memory", copy_desc(2, CB_IOVA),
		  { .src = SRC_IOVA, .dst = UNMAPPED_IOVA, .length = 64 }, GVT_SIM_FAULT_COPY_DMA },
	};
	char name[80];
	int ret, same;

	bad[2].desc.duration_us = 0;
	/* A copy of an odd length between unaligned addresses, over a page. */
	d->irq = VFIO_PCI_MSI_IRQ_INDEX;
	expect_ret(do_reset(d, 0), 0, "RESET register before the copies");
	program(d, 8);
	drain(d->efd);
	copy_buffers(d);
	*copy_block(d) = (struct gvt_sim_copy) {
		.src = SRC_IOVA + 5, .dst = DST_IOVA + 9, .length = len,
	};
	ret = queue_raw(d, 1, &desc) ?: doorbell(d, 1);
	/* The device read the block at the doorbell: changing it now changes nothing. */
	copy_block(d)->dst = DST_IOVA + 4096;
	expect(!ret && wait_efd(d->efd, ANSWER_MS) >= 1 && wait_done(d, 1, 1) &&
	       status_rec(d, 1)->seqno == 0xc0, "a copy completes (%s)", errname(ret));
	same = !memcmp(src, dst, len);
	expect(same && dst[-1] == DST_FILL && dst[len] == DST_FILL,
	       "the copy's %u bytes are in the destination before its completion, and no more",
	       len);
	expect_val(reg(d, GVT_SIM_REG_SUBMITTED), 1, "SUBMITTED after a copy");
	expect_val(reg(d, GVT_SIM_REG_COMPLETED), 1, "COMPLETED after a copy");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, ~0u);
	/* A copy of COPY_MAX bytes, inside the extra mapping. */
	{
		uint8_t *big = mmap(NULL, 2 * max, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ret = big == MAP_FAILED ? -ENOMEM : dma_map(d, big, EXTRA_IOVA, 2 * max);
		if (!ret) {
			for (uint64_t i = 0; i < max; i += 512)
				big[i] = (uint8_t)(i >> 9);
			memset(big + max, 0, max);
			*copy_block(d) = (struct gvt_sim_copy) {
				.src = EXTRA_IOVA, .dst = EXTRA_IOVA + max, .length = max,
			};
			desc.seqno = 0xc1;
			ret = queue_raw(d, 0, &desc) ?: doorbell(d, 0);
		}
		expect(!ret && wait_done(d, 0, 1) && !memcmp(big, big + max, max),
		       "a copy of COPY_MAX (%" PRIu64 ") bytes (%s)", max, errname(ret));
		if (big != MAP_FAILED) {
			dma_unmap(d, EXTRA_IOVA, 2 * max);
			munmap(big, 2 * max);
		}
	}
	expect_ret(do_reset(d, 0), 0, "RESET register after the copies");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		copy_buffers(d);
		*copy_block(d) = bad[i].blk;
		bad_desc = bad[i].desc;
		snprintf(name, sizeof(name), "descriptor 1 %s", bad[i].name);
		fault_case(d, name, fault_word(bad[i].reason, 1, 1), i & 1, f_bad_desc);
		expect(dst_untouched(d), "%s: nothing written to the destination", name);
	}
}

/* Reads the INTx status bit (3) of the config status register. */
static int cfg_intx(struct dev *d)
{
	uint8_t s = 0;

	cfg_rd(d, PCI_STATUS, &s, 1);
	return !!(s & PCI_STATUS_INTERRUPT);
}

/* INTx: level triggered, automasked, re-fired at unmask while asserted. */
static void intx_checks(struct dev *d)
{
	int efd = d->efd, ret;
	uint16_t cmd;

	expect_ret(irq_none(d, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_PCI_MSI_IRQ_INDEX, 0, 0), 0,
		   "MSI disable for the INTx checks");
	program(d, 8);
	expect_ret(set_trigger(d, VFIO_PCI_INTX_IRQ_INDEX, efd), 0, "INTx enable for the INTx checks");
	d->irq = VFIO_PCI_INTX_IRQ_INDEX;
	drain(efd);
	expect(!cfg_intx(d), "config status INTx bit clear while nothing is pending");
	ret = queue(d, 0, 1, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_efd(efd, ANSWER_MS) == 1, "INTx fires on completion");
	expect(reg(d, GVT_SIM_REG_IRQ_STATUS) == 1 && cfg_intx(d),
	       "IRQ_STATUS engine 0; config status INTx bit set");
	ret = queue(d, 0, 2, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 2) && drain(efd) == 0,
	       "a second completion while automasked: no signal");
	ret = queue(d, 1, 3, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 1);
	expect(!ret && wait_done(d, 1, 1) && drain(efd) == 0 &&
	       reg(d, GVT_SIM_REG_IRQ_STATUS) == 3,
	       "a completion on engine 1 while automasked: no signal, IRQ_STATUS 3");
	expect_ret(unmask_intx(d), 0, "unmask while still asserted");
	expect(drain(efd) == 1, "... fires again at once (and masks)");
	expect(drain(efd) == 0, "... once");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 3);
	expect(!cfg_intx(d), "IRQ_STATUS cleared: config status INTx bit clear");
	expect_ret(unmask_intx(d), 0, "unmask after clearing IRQ_STATUS");
	expect(drain(efd) == 0, "... no signal");
	ret = queue(d, 0, 4, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_efd(efd, ANSWER_MS) == 1, "the next completion fires INTx");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 3);
	expect_ret(unmask_intx(d), 0, "acknowledged and unmasked, as QEMU does");
	/* Masked by user space. */
	expect_ret(irq_none(d, VFIO_IRQ_SET_ACTION_MASK, VFIO_PCI_INTX_IRQ_INDEX, 0, 1), 0,
		   "ACTION_MASK");
	ret = queue(d, 0, 5, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 4) && drain(efd) == 0, "masked: a completion does not fire");
	expect_ret(unmask_intx(d), 0, "ACTION_UNMASK");
	expect(drain(efd) == 1, "... fires the pending level");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 3);
	unmask_intx(d);
	/* The command register's INTx disable holds the line low. */
	cmd = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE;
	ret = cfg_wr(d, PCI_COMMAND, &cmd, 2);
	ret = ret ?: queue(d, 0, 6, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 5) && drain(efd) == 0 && cfg_intx(d),
	       "INTx disabled in the command register: no signal, status bit still set");
	cmd &= ~PCI_COMMAND_INTX_DISABLE;
	ret = cfg_wr(d, PCI_COMMAND, &cmd, 2);
	expect(!ret && drain(efd) == 1, "clearing INTx disable fires the pending interrupt");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 3);
	unmask_intx(d);
	/* IRQ_ENABLE gates the level. */
	setreg(d, GVT_SIM_REG_IRQ_ENABLE, GVT_SIM_IRQ_FAULT);
	ret = queue(d, 0, 7, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 6) && drain(efd) == 0 && !cfg_intx(d),
	       "cause disabled in IRQ_ENABLE: no level, no signal");
	setreg(d, GVT_SIM_REG_IRQ_ENABLE, 3 | GVT_SIM_IRQ_FAULT);
	expect(drain(efd) == 1 && cfg_intx(d), "enabling the pending cause raises INTx");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, 3);
	unmask_intx(d);
	/* A fault raises INTx too; a reset lowers it. */
	ret = f_disabled(d);
	expect(!ret && drain(efd) == 1 && reg(d, GVT_SIM_REG_IRQ_STATUS) == GVT_SIM_IRQ_FAULT,
	       "a fault fires INTx");
	expect_ret(do_reset(d, 0), 0, "RESET");
	expect(!cfg_intx(d), "after RESET the line is low");
	expect_ret(unmask_intx(d), 0, "unmask after RESET");
	expect(drain(efd) == 0, "... no signal");
	/* A level already asserted fires when INTx gets enabled. */
	expect_ret(irq_none(d, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_PCI_INTX_IRQ_INDEX, 0, 0), 0,
		   "INTx disable");
	program(d, 8);
	ret = queue(d, 0, 8, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_done(d, 0, 1) && drain(efd) == 0,
	       "completion with no interrupt type enabled: no signal");
	expect_ret(set_trigger(d, VFIO_PCI_INTX_IRQ_INDEX, efd), 0, "INTx enable with IRQ_STATUS set");
	expect(drain(efd) == 1, "... fires at once");
	expect_ret(irq_none(d, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_PCI_INTX_IRQ_INDEX, 0, 0), 0,
		   "INTx disable");
	expect_ret(do_reset(d, 1), 0, "VFIO_DEVICE_RESET");
}

/*
 * A new session finds the INTx line low (the reliability audit's F5).
 * Session 1 enables a completion interrupt, takes one and closes the
 * device with IRQ_STATUS still set; session 2 opens it and enables INTx
 * without VFIO_DEVICE_RESET (QEMU resets first, another VMM need not):
 * neither the enable nor an unmask may signal what session 1 left.
 */
static void new_session_checks(struct dev *d)
{
	int ret;

	expect_ret(set_trigger(d, VFIO_PCI_INTX_IRQ_INDEX, d->efd), 0, "session 1: INTx enable");
	d->irq = VFIO_PCI_INTX_IRQ_INDEX;
	program(d, 8);
	drain(d->efd);
	ret = queue(d, 0, 1, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_efd(d->efd, ANSWER_MS) == 1 &&
	       reg(d, GVT_SIM_REG_IRQ_STATUS) == GVT_SIM_IRQ_ENGINE(0) && cfg_intx(d),
	       "session 1: a completion asserts INTx; it closes the device with IRQ_STATUS set");
	close(d->vdev->fd);
	if (reopen_device(d) < 0)
		die("the device again (session 2)");
	drain(d->efd);
	expect_ret(set_trigger(d, VFIO_PCI_INTX_IRQ_INDEX, d->efd), 0,
		   "session 2: INTx enable without VFIO_DEVICE_RESET");
	expect(wait_efd(d->efd, 100) == 0 && !cfg_intx(d) &&
	       reg(d, GVT_SIM_REG_IRQ_STATUS) == 0,
	       "session 2: no interrupt at enable; IRQ_STATUS 0, config status INTx bit clear");
	expect_ret(unmask_intx(d), 0, "session 2: unmask");
	expect(wait_efd(d->efd, 100) == 0, "session 2: ... no interrupt at unmask");
	/* The eventfd works: session 2's own completion fires it. */
	program(d, 8);
	ret = queue(d, 0, 2, 300, 0, GVT_SIM_DESC_IRQ) ?: doorbell(d, 0);
	expect(!ret && wait_efd(d->efd, ANSWER_MS) == 1,
	       "session 2: its own completion fires INTx");
	setreg(d, GVT_SIM_REG_IRQ_STATUS, ~0u);
	expect_ret(unmask_intx(d), 0, "session 2: acknowledged and unmasked");
	expect(drain(d->efd) == 0, "session 2: ... no interrupt once acknowledged");
	expect_ret(irq_none(d, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_PCI_INTX_IRQ_INDEX, 0, 0), 0,
		   "session 2: INTx disable");
	expect_ret(do_reset(d, 1), 0, "session 2: VFIO_DEVICE_RESET");
}

static int self_check(struct dev *d)
{
	/* Start from no interrupt type and no REQ: drop what open_dev() set. */
	irq_none(d, VFIO_IRQ_SET_ACTION_TRIGGER, d->irq, 0, 0);
	irq_fd(d, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_PCI_REQ_IRQ_INDEX, 0, 1, -1);
	/* A run before this one wrote GTT entries and closed the device. */
	expect(gtt_power_on(d), "at open: power-on GTT entries, none of a previous tenant");
	cfg_checks(d);
	bar_checks(d);
	info_checks(d);
	set_irqs_checks(d);
	ring_checks(d);
	fault_checks(d);
	copy_checks(d);
	intx_checks(d);
	new_session_checks(d);
	expect_val(reg(d, GVT_SIM_REG_COMPLETED), 0, "COMPLETED 0 after the last reset");
	printf("# self-check: %d of %d passed\n", checks - failures, checks);
	return failures ? 1 : 0;
}

/* ---- attacks: register accesses that make the device do nothing ---------- */

/* An offset of BAR0 with no register. */
#define UNKNOWN_REG	0x050

/*
 * Whether an attack loop goes on after made accesses: n of them if n > 0,
 * else until the run time is up; a device request ends it (*unplug).
 */
static int attack_goes_on(struct dev *d, uint64_t made, uint64_t n, double t_end,
			  int *unplug)
{
	if (made % 4096 == 0 && wait_efd(d->req, 0) > 0)
		*unplug = 1;
	if (*unplug)
		return 0;
	return n ? made < n : now_s() < t_end;
}

/* Doorbells on engine e with the TAIL it has: nothing new to fetch. */
static uint64_t doorbell_storm(struct dev *d, unsigned int e, uint64_t n, double t_end,
			       int *unplug)
{
	uint64_t made = 0;

	while (attack_goes_on(d, made, n, t_end, unplug)) {
		if (doorbell(d, e))
			die("doorbell");
		made++;
	}
	return made;
}

/*
 * Accesses the device ignores: an unknown offset read and written, writes
 * to read-only registers (ID, a ring's HEAD), a read across two registers
 * (ID and VERSION), a GTT index past the vGPU's high GM. Each must succeed.
 */
static uint64_t ignored_loop(struct dev *d, uint64_t n, double t_end, int *unplug)
{
	uint32_t past = reg(d, GVT_SIM_REG_GM_HIGH) * 256, ones = ~0u;
	uint64_t made = 0, q;
	int ret = 0;

	while (attack_goes_on(d, made, n, t_end, unplug)) {
		switch (made % 6) {
		case 0:
			ret = bar_rd(d, UNKNOWN_REG, &q, 4);
			break;
		case 1:
			ret = bar_wr(d, UNKNOWN_REG, &ones, 4);
			break;
		case 2:
			ret = bar_wr(d, GVT_SIM_REG_ID, &ones, 4);
			break;
		case 3:
			ret = bar_wr(d, GVT_SIM_REG_RING(0) + GVT_SIM_RING_HEAD, &ones, 4);
			break;
		case 4:
			ret = bar_rd(d, GVT_SIM_REG_ID, &q, 8);
			break;
		default:
			ret = bar_wr(d, GVT_SIM_REG_GTT_INDEX, &past, 4);
			break;
		}
		if (ret) {
			errno = -ret;
			die("an access the device ignores");
		}
		made++;
	}
	return made;
}

/*
 * -p stall: points the status page at memory registered with a
 * userfaultfd whose faults are never served, as guest RAM is during a
 * postcopy migration, and completes one workload on engine e. The
 * device's write of the completion record faults and waits; reports
 * "stalled" on stdout once the fault arrived. Then waits for the end of
 * the run (or a device request), and lets go: closing the userfaultfd
 * before the device wakes the fault (the write then lands in a fresh
 * page), so the device can close. Returns the fault's address, 0 if the
 * device never wrote.
 */
static uint64_t stall_status_page(struct dev *d, unsigned int e, uint32_t us,
				  double t_end, int *unplug)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg_ = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffd_msg msg;
	struct pollfd pfd;
	uint64_t fault = 0;
	void *page;
	int uffd;

	page = mmap(NULL, GVT_SIM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap the stalled page");
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd (CONFIG_USERFAULTFD, root)");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	reg_.range.start = (uintptr_t)page;
	reg_.range.len = GVT_SIM_PAGE_SIZE;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg_))
		die("UFFDIO_REGISTER");
	errno = -dma_map(d, page, STALL_IOVA, GVT_SIM_PAGE_SIZE);
	if (errno)
		die("map the stalled page");
	setreg64(d, GVT_SIM_REG_STATUS_PAGE, STALL_IOVA);
	if (queue(d, e, 1, us, 4096, GVT_SIM_DESC_IRQ) || doorbell(d, e))
		die("queue the stalled workload");
	pfd.fd = uffd;
	pfd.events = POLLIN;
	while (!fault && !*unplug && now_s() < t_end) {
		if (poll(&pfd, 1, 50) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_PAGEFAULT) {
			fault = msg.arg.pagefault.address;
			printf("gvt_guest uuid=%s stalled address=0x%" PRIx64 "\n", uuid, fault);
			fflush(stdout);
		}
		*unplug = wait_efd(d->req, 0) > 0;
	}
	while (!*unplug && now_s() < t_end)
		*unplug = wait_efd(d->req, 50) > 0;
	close(uffd);
	return fault;
}

/* ---- -p copy: work that moves data --------------------------------------- */

/*
 * Copy buffers: COPY_IOVA maps an arena of one page of copy blocks, then one
 * source and one destination buffer per copy in flight. A copy takes a free
 * slot at submission and gives it back when it completed or failed.
 */
#define COPY_IOVA	0x100000000ull
#define COPY_SLOTS	(2 * 64)

struct copy_slot {
	uint32_t seqno, engine, index;
	int busy, poison;	/* poison: -j, reads memory that is not mapped */
	uint64_t sum;		/* checksum of the pattern */
};

struct copier {
	struct dev *d;
	uint8_t *arena;
	uint64_t len, stride;
	uint32_t nslots, nonce;
	struct copy_slot slots[COPY_SLOTS];
	int of[MAX_ENGINES][64];	/* slot of each ring index in flight, or -1 */
	uint32_t seen[MAX_ENGINES];	/* HEAD the guest has processed */
	uint32_t submitted, completed, verified, failed, wrong;
	uint32_t faults, bad_faults, resets, poisoned;
	uint64_t bytes;
};

/* The pattern of copy seqno: len bytes of a stream of its own. */
static void copy_pattern(struct copier *c, uint32_t seqno, uint8_t *buf)
{
	gvt_copy_fill(buf, c->len, c->nonce, seqno);
}

static uint8_t *copy_src(struct copier *c, int s)
{
	return c->arena + GVT_SIM_PAGE_SIZE + (uint64_t)s * 2 * c->stride;
}

static uint64_t copy_iova(struct copier *c, uint8_t *p)
{
	return COPY_IOVA + (uint64_t)(p - c->arena);
}

static void copier_init(struct copier *c, struct dev *d, uint64_t len, uint32_t nslots)
{
	uint64_t size;

	memset(c, 0, sizeof(*c));
	c->d = d;
	c->len = len;
	c->stride = (len + GVT_SIM_PAGE_SIZE - 1) & ~(uint64_t)(GVT_SIM_PAGE_SIZE - 1);
	c->nslots = nslots;
	c->nonce = (uint32_t)getpid() ^ (uint32_t)(now_s() * 1e6);
	memset(c->of, 0xff, sizeof(c->of));
	size = GVT_SIM_PAGE_SIZE + (uint64_t)nslots * 2 * c->stride;
	c->arena = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (c->arena == MAP_FAILED)
		die("mmap copy buffers");
	errno = -dma_map(d, c->arena, COPY_IOVA, size);
	if (errno)
		die("map copy buffers");
}

/* Submits a copy on engine e; -EAGAIN if its ring or the slots are full. */
static int copy_submit(struct copier *c, unsigned int e, uint32_t seqno, uint32_t us,
		       int poison)
{
	struct gvt_sim_copy *blk;
	struct gvt_sim_desc desc = {
		.opcode = GVT_SIM_OP_COPY,
		.flags = GVT_SIM_DESC_IRQ,
		.seqno = seqno,
		.duration_us = us,
	};
	struct ring *r = &c->d->rings[e];
	uint8_t *src, *dst;
	uint32_t idx = r->tail;
	int s;

	for (s = 0; s < (int)c->nslots && c->slots[s].busy; s++)
		;
	if (s == (int)c->nslots)
		return -EAGAIN;
	src = copy_src(c, s);
	dst = src + c->stride;
	copy_pattern(c, seqno, src);
	/* What the destination holds until the copy lands: not the pattern. */
	memset(dst, 0xdb ^ (seqno & 0xff), c->len);
	blk = (struct gvt_sim_copy *)c->arena + s;
	*blk = (struct gvt_sim_copy) {
		.src = poison ? UNMAPPED_IOVA : copy_iova(c, src),
		.dst = copy_iova(c, dst),
		.length = (uint32_t)c->len,
	};
	desc.copy = copy_iova(c, (uint8_t *)blk);
	if (queue_raw(c->d, e, &desc))
		return -EAGAIN;
	c->slots[s] = (struct copy_slot) {
		.seqno = seqno, .engine = e, .index = idx, .busy = 1, .poison = poison,
		.sum = gvt_copy_checksum(src, c->len),
	};
	c->of[e][idx] = s;
	c->submitted++;
	c->poisoned += poison;
	return 0;
}

/* Copy slot s completed: its destination must hold the pattern. */
static void copy_verify(struct copier *c, int s)
{
	struct copy_slot *k = &c->slots[s];
	uint8_t *src = copy_src(c, s), *dst = src + c->stride;
	uint64_t sum = gvt_copy_checksum(dst, c->len);

	c->completed++;
	if (!k->poison && sum == k->sum && !memcmp(src, dst, c->len)) {
		c->verified++;
		c->bytes += c->len;
	} else {
		c->wrong++;
		if (c->wrong <= 5) {
			fprintf(stderr, "gvt_guest %s: copy %u (engine %u, descriptor %u%s) completed wrong:",
				uuid, k->seqno, k->engine, k->index,
				k->poison ? ", from unmapped memory" : "");
			fprintf(stderr, " checksum 0x%016" PRIx64 ", pattern's 0x%016" PRIx64 "\n",
				sum, k->sum);
		}
	}
	k->busy = 0;
}

/* Verifies every copy the status page reports completed since the last call. */
static void copy_reap(struct copier *c)
{
	for (unsigned int e = 0; e < c->d->engines; e++) {
		struct ring *r = &c->d->rings[e];
		uint32_t head = st_head(c->d, e) % r->size;

		while (c->seen[e] != head) {
			int s = c->of[e][c->seen[e]];

			if (s >= 0)
				copy_verify(c, s);
			c->of[e][c->seen[e]] = -1;
			c->seen[e] = (c->seen[e] + 1) % r->size;
		}
	}
}

static uint32_t copy_in_flight(struct copier *c)
{
	return c->submitted - c->completed - c->failed;
}

/*
 * A fault or a reset: what completed is verified, what is still in flight
 * failed; the device is reset (vfio: VFIO_DEVICE_RESET, else the RESET
 * register) and programmed again.
 */
static void copy_recover(struct copier *c, int vfio)
{
	copy_reap(c);
	for (int s = 0; s < (int)c->nslots; s++) {
		if (!c->slots[s].busy)
			continue;
		c->slots[s].busy = 0;
		c->failed++;
	}
	if (do_reset(c->d, vfio))
		die("reset");
	program(c->d, c->d->ring_max);
	memset(c->of, 0xff, sizeof(c->of));
	memset(c->seen, 0, sizeof(c->seen));
	c->resets++;
}

/* A fault: one that -j asked for (a copy from unmapped memory), or not. */
static void copy_fault(struct copier *c)
{
	uint32_t f = reg(c->d, GVT_SIM_REG_FAULT);
	uint32_t e = GVT_SIM_FAULT_ENGINE(f), idx = GVT_SIM_FAULT_INDEX(f);
	int s = e < MAX_ENGINES && idx < 64 ? c->of[e][idx] : -1;

	c->faults++;
	if (GVT_SIM_FAULT_REASON(f) != GVT_SIM_FAULT_COPY_DMA || s < 0 ||
	    !c->slots[s].poison) {
		c->bad_faults++;
		fprintf(stderr,
			"gvt_guest %s: unexpected fault 0x%08x (reason %u, engine %u, descriptor %u)\n",
			uuid, f, GVT_SIM_FAULT_REASON(f), e, idx);
	}
	copy_recover(c, c->faults & 1);
}

/* Waits up to ms for an interrupt and handles it: completions, a fault. */
static void copy_service(struct copier *c, int ms)
{
	struct dev *d = c->d;
	uint32_t s = 0;

	if (wait_efd(d->efd, ms)) {
		s = reg(d, GVT_SIM_REG_IRQ_STATUS);
		if (s)
			setreg(d, GVT_SIM_REG_IRQ_STATUS, s);
		if (d->irq == VFIO_PCI_INTX_IRQ_INDEX && unmask_intx(d))
			die("VFIO_IRQ_SET_ACTION_UNMASK");
	}
	if ((s & GVT_SIM_IRQ_FAULT) ||
	    (!s && (reg(d, GVT_SIM_REG_STATUS) & GVT_SIM_STATUS_FAILED)))
		copy_fault(c);
	else
		copy_reap(c);
}

/*
 * -p copy: keeps q copies in flight until t_end (or a device request),
 * then lets them complete; prints the counts. 0: every completed copy
 * right, every submitted one completed or failed, no unexpected fault.
 */
static int copy_run(struct dev *d, int engine, int q, long dur, long len,
		    int reset_every, int poison_every, double t_end, int *unplug)
{
	static struct copier c;
	uint32_t seq = 0;
	double t0 = now_s(), wall;
	int ok;

	if (reg(d, GVT_SIM_REG_VERSION) < 3) {
		fprintf(stderr, "gvt_guest %s: -p copy needs protocol 3\n", uuid);
		return 2;
	}
	if (len < 1 || len > reg(d, GVT_SIM_REG_COPY_MAX) || q < 1 ||
	    q > (int)(d->engines * (d->ring_max - 1)) || q > COPY_SLOTS) {
		fprintf(stderr, "gvt_guest: copy: -b takes 1 to %u, -q 1 to %u\n",
			reg(d, GVT_SIM_REG_COPY_MAX), d->engines * (d->ring_max - 1));
		return 2;
	}
	copier_init(&c, d, len, q);
	for (int round = 0; !*unplug && (!round || now_s() < t_end); round++) {
		unsigned int rung = 0;

		while ((int)copy_in_flight(&c) < q) {
			uint32_t e = engine < 0 ? seq % d->engines : (uint32_t)engine;
			int poison = poison_every > 0 && (seq + 1) % poison_every == 0;

			if (copy_submit(&c, e, seq + 1, dur, poison))
				break;
			seq++;
			rung |= 1u << e;
		}
		for (unsigned int e = 0; e < d->engines; e++)
			if ((rung & (1u << e)) && doorbell(d, e))
				die("doorbell");
		copy_service(&c, 200);
		if (reset_every > 0 && (round + 1) % reset_every == 0)
			copy_recover(&c, c.resets & 1);
		*unplug = wait_efd(d->req, 0) > 0;
	}
	if (*unplug)
		fprintf(stderr, "gvt_guest %s: device request: the host removes the vGPU, unplugging it\n",
			uuid);
	/* Let what is in flight complete (or fail). */
	while (copy_in_flight(&c) && now_s() < t_end + DRAIN_S)
		copy_service(&c, 200);
	wall = now_s() - t0;
	ok = !c.wrong && !c.bad_faults && c.submitted == c.completed + c.failed;
	printf("gvt_guest uuid=%s profile=copy submitted=%u completed=%u verified=%u failed=%u wrong=%u faults=%u unexpected_faults=%u poisoned=%u resets=%u length=%ld bytes_verified=%" PRIu64 " wall_ms=%.1f rate_per_s=%.1f MBps=%.2f cpu_ns=%" PRIu64 "\n",
	       uuid, c.submitted, c.completed, c.verified, c.failed, c.wrong, c.faults,
	       c.bad_faults, c.poisoned, c.resets, len, c.bytes, wall * 1e3,
	       c.completed / wall, c.bytes / wall / 1e6, cpu_ns(CLOCK_PROCESS_CPUTIME_ID));
	if (c.submitted != c.completed + c.failed)
		fprintf(stderr, "gvt_guest %s: %u copies neither completed nor failed %d s after the run\n",
			uuid, copy_in_flight(&c), DRAIN_S);
	return ok ? 0 : 1;
}

/* ---- workload profiles --------------------------------------------------- */

static int spin_stop;

/*
 * A busy vCPU: reads a register once, as a vCPU thread of a VM touches
 * its devices (the host counts the threads that access a vGPU as its VM's
 * vCPUs), then burns CPU until the run ends. Not counted in bar_accesses.
 */
static void *spin(void *arg)
{
	struct dev *d = arg;
	uint32_t v;

	if (pread(d->vdev->fd, &v, sizeof(v), d->bar0 + GVT_SIM_REG_VGPU_ID) != sizeof(v))
		die("BAR0 read of a busy vCPU");
	while (!__atomic_load_n(&spin_stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* Starts n threads that sleep until the process exits. */
static void start_sleepers(int n)
{
	pthread_attr_t a;
	pthread_t t;

	if (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 64 * 1024))
		die("pthread_attr");
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &a, sleeper, NULL))
			die("pthread_create");
	pthread_attr_destroy(&a);
}

/* -k: waits for the token until t_end; 1 if one came. */
static int take_token(int fd, double t_end)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char t;

	for (;;) {
		int ms = (int)((t_end - now_s()) * 1000);

		if (ms <= 0)
			return 0;
		if (poll(&p, 1, ms) > 0)
			return read(fd, &t, 1) == 1;
	}
}

static void bad_usage(void)
{
	fprintf(stderr,
		"usage: gvt_guest [-p compute|frames|long|idle|reset|doorbell|ignored|stall|copy]\n"
		"                 [-t s] [-n n] [-d us] [-q n] [-f n] [-x n] [-j n]\n"
		"                 [-z us] [-e engine|-1] [-b bytes] [-i msi|intx] [-I] [-F] [-c] [-g]\n"
		"                 [-r file] [-w file] [-k in,out] [-v n] [-T n] UUID\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *profile = "compute", *ready = NULL, *start = NULL, *token = NULL;
	int tok_in = -1, tok_out = -1;
	int q = -1, frame = 4, engine = 0, check = 0, gtt = 0, vcpus = 0, c;
	int sleepers = 0;
	int unplug = 0;
	pthread_t spinners[16];
	long dur = -1, think = 4000, bytes = -1;
	int reset_every = 0, poison_every = 0;
	unsigned int irq = VFIO_PCI_MSI_IRQ_INDEX;
	uint64_t frames = 0, gtt_checked = 0, gtt_bad = 0;
	uint32_t sub = 0, done = 0, seq = 0, hi = 0, vgpu_id = 0, resets = 0;
	uint64_t done_before_resets = 0;
	double secs = 5, t0, t_end;
	uint64_t stalled = 0;
	uint64_t acc0, attack_n = 0, attacks = 0;
	int attack;
	struct dev d;

	while ((c = getopt(argc, argv, "p:t:d:q:f:z:e:b:i:IFcgr:w:k:v:T:n:x:j:")) != -1) {
		switch (c) {
		case 'p':
			profile = optarg;
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'd':
			dur = atol(optarg);
			break;
		case 'q':
			q = atoi(optarg);
			break;
		case 'f':
			frame = atoi(optarg);
			break;
		case 'z':
			think = atol(optarg);
			break;
		case 'e':
			engine = atoi(optarg);
			break;
		case 'b':
			bytes = atol(optarg);
			break;
		case 'i':
			irq = strcmp(optarg, "intx") ? VFIO_PCI_MSI_IRQ_INDEX :
			      VFIO_PCI_INTX_IRQ_INDEX;
			break;
		case 'I':
			use_iommufd = 1;
			break;
		case 'F': {
			struct sched_param sp = { .sched_priority = 1 };

			if (sched_setscheduler(0, SCHED_FIFO, &sp))
				die("sched_setscheduler(SCHED_FIFO)");
			break;
		}
		case 'c':
			check = 1;
			break;
		case 'g':
			gtt = 1;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'w':
			start = optarg;
			break;
		case 'k':
			token = optarg;
			break;
		case 'v':
			vcpus = atoi(optarg);
			break;
		case 'n':
			attack_n = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			sleepers = atoi(optarg);
			break;
		case 'x':
			reset_every = atoi(optarg);
			break;
		case 'j':
			poison_every = atoi(optarg);
			break;
		default:
			bad_usage();
		}
	}
	if (optind != argc - 1)
		bad_usage();
	attack = !strcmp(profile, "doorbell") || !strcmp(profile, "ignored") ||
		 !strcmp(profile, "stall");
	if (strcmp(profile, "compute") && strcmp(profile, "frames") &&
	    strcmp(profile, "long") && strcmp(profile, "idle") &&
	    strcmp(profile, "reset") && strcmp(profile, "copy") && !attack)
		bad_usage();
	if (bytes < 0)
		bytes = !strcmp(profile, "copy") ? 16384 : 65536;
	if (vcpus < 0 || vcpus > 16) {
		fprintf(stderr, "gvt_guest: -v takes 0 to 16\n");
		return 2;
	}
	if (sleepers < 0 || sleepers > 10000) {
		fprintf(stderr, "gvt_guest: -T takes 0 to 10000\n");
		return 2;
	}
	if (token) {
		/* Read-write: opening a FIFO so never waits for the other end. */
		char in[PATH_MAX], *out;

		snprintf(in, sizeof(in), "%s", token);
		out = strchr(in, ',');
		if (!out || strcmp(profile, "frames"))
			bad_usage();
		*out++ = 0;
		tok_in = open(in, O_RDWR | O_CLOEXEC);
		tok_out = open(out, O_RDWR | O_CLOEXEC);
		if (tok_in < 0 || tok_out < 0)
			die("open -k FIFO");
	}
	uuid = argv[optind];
	open_dev(&d, irq);
	if (check)
		return self_check(&d);
	if (engine >= (int)d.engines) {
		fprintf(stderr, "gvt_guest: -e takes -1 to %u\n", d.engines - 1);
		return 2;
	}
	for (int i = 0; i < vcpus; i++)
		if (pthread_create(&spinners[i], NULL, spin, &d))
			die("pthread_create");
	start_sleepers(sleepers);
	if (dur < 0)
		dur = !strcmp(profile, "long") ? 20000 :
		      !strcmp(profile, "frames") ? 1000 : 2000;
	if (q < 0)
		q = !strcmp(profile, "long") ? 2 : 4;
	program(&d, d.ring_max);
	vgpu_id = reg(&d, GVT_SIM_REG_VGPU_ID);
	if (gtt) {
		/* Stamp the first and last entry of every slot with our id. */
		hi = reg(&d, GVT_SIM_REG_GM_HIGH) * 256;
		for (uint32_t i = 0; i < hi; i += 16384) {
			uint32_t idx[2] = { i, i + 16383 };

			for (int k = 0; k < 2; k++) {
				uint64_t val = 0x4000000000000000ull |
					((uint64_t)vgpu_id << 32) | idx[k];

				if (bar_wr(&d, GVT_SIM_REG_GTT_INDEX, &idx[k], 4) ||
				    bar_wr(&d, GVT_SIM_REG_GTT_DATA, &val, 8))
					die("GTT write");
			}
		}
	}
	if (!strcmp(profile, "doorbell")) {
		/*
		 * Valid descriptors behind HEAD, completed: a device that
		 * fetched them again would run them.
		 */
		uint32_t e = engine < 0 ? 0 : (uint32_t)engine;
		double end = now_s() + DRAIN_S;

		while ((int)sub < q && !queue(&d, e, seq + 1, dur, bytes, GVT_SIM_DESC_IRQ)) {
			seq++;
			sub++;
		}
		if (doorbell(&d, e))
			die("doorbell");
		while (done != sub && now_s() < end) {
			service_irq(&d, 200);
			done = completed_all(&d);
		}
	}
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	if (start) {
		double end = now_s() + START_S;

		unplug = wait_start(start, d.req, end);
		if (!unplug && access(start, F_OK)) {
			fprintf(stderr, "gvt_guest %s: no start file %s after %d s\n",
				uuid, start, START_S);
			return 2;
		}
	}
	t0 = now_s();
	acc0 = bar_accesses;
	t_end = t0 + secs;
	if (!strcmp(profile, "idle")) {
		/* Woken by a removal at once; otherwise once a second. */
		while (!unplug && now_s() < t_end)
			unplug = wait_efd(d.req, 1000) > 0;
	}
	if (!strcmp(profile, "doorbell"))
		attacks = doorbell_storm(&d, engine < 0 ? 0 : engine, attack_n, t_end, &unplug);
	if (!strcmp(profile, "ignored"))
		attacks = ignored_loop(&d, attack_n, t_end, &unplug);
	if (!strcmp(profile, "stall"))
		stalled = stall_status_page(&d, engine < 0 ? 0 : engine, dur, t_end, &unplug);
	if (!strcmp(profile, "copy"))
		return copy_run(&d, engine, q, dur, bytes, reset_every, poison_every, t_end,
				&unplug);
	/* At least one round: a process that got no CPU until its time was up still runs. */
	for (int round = 0; strcmp(profile, "idle") && !attack && !unplug &&
	     (!round || now_s() < t_end); round++) {
		int want = !strcmp(profile, "frames") ? frame : q - (int)(sub - done);
		unsigned int rung = 0;

		if (tok_in >= 0 && !take_token(tok_in, t_end))
			break;

		for (int i = 0; i < want; i++) {
			uint32_t e = engine < 0 ? (seq % d.engines) : (uint32_t)engine;
			int r = queue(&d, e, seq + 1, dur, bytes, GVT_SIM_DESC_IRQ);

			if (r == -EAGAIN)
				break;
			seq++;
			sub++;
			rung |= 1u << e;
		}
		for (unsigned int e = 0; e < d.engines; e++)
			if ((rung & (1u << e)) && doorbell(&d, e))
				die("doorbell");
		/* Frames wait for the whole frame; the others for any completion. */
		do {
			service_irq(&d, 200);
			done = completed_all(&d);
		} while (!strcmp(profile, "frames") && done != sub && now_s() < t_end + DRAIN_S);
		if (tok_out >= 0 && write(tok_out, "t", 1) != 1)
			die("write -k FIFO");
		if (gtt) {
			for (uint32_t i = 0; i < hi; i += 16384 * 7) {
				uint64_t val, want_v = 0x4000000000000000ull |
					((uint64_t)vgpu_id << 32) | i;

				if (bar_wr(&d, GVT_SIM_REG_GTT_INDEX, &i, 4) ||
				    bar_rd(&d, GVT_SIM_REG_GTT_DATA, &val, 8))
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
		if (!strcmp(profile, "reset")) {
			/* Drops what is queued; the device starts afresh. */
			if (do_reset(&d, 1))
				die("VFIO_DEVICE_RESET");
			program(&d, d.ring_max);
			done_before_resets += done;
			resets++;
			sub = 0;
			done = 0;
			seq = 0;
		}
		unplug = wait_efd(d.req, 0) > 0;
	}
	if (unplug)
		fprintf(stderr, "gvt_guest %s: device request: the host removes the vGPU, unplugging it\n",
			uuid);
	/* Drain what is still queued. */
	while (done != sub && now_s() < t_end + DRAIN_S) {
		service_irq(&d, 200);
		done = completed_all(&d);
	}
	if (done != sub)
		fprintf(stderr, "gvt_guest %s: %u workloads not completed %d s after the run\n",
			uuid, sub - done, DRAIN_S);
	__atomic_store_n(&spin_stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < vcpus; i++)
		pthread_join(spinners[i], NULL);
	{
		double wall = now_s() - t0;
		uint64_t acc = bar_accesses - acc0;
		uint64_t busy = reg64(&d, GVT_SIM_REG_BUSY_NS);

		printf("gvt_guest uuid=%s profile=%s submitted=%u completed=%u frames=%" PRIu64 " gpu_ms=%.1f wall_ms=%.1f rate_per_s=%.1f fps=%.1f gtt_checked=%" PRIu64 " gtt_mismatch=%" PRIu64 " bar_accesses=%" PRIu64 " attack_accesses=%" PRIu64 " resets=%u completed_before_resets=%" PRIu64 " cpu_ns=%" PRIu64 " submit_cpu_ns=%" PRIu64 "\n",
		       uuid, profile, sub, done, frames, busy / 1e6, wall * 1e3,
		       done / wall, frames / wall, gtt_checked, gtt_bad, acc, attacks, resets,
		       done_before_resets, cpu_ns(CLOCK_PROCESS_CPUTIME_ID),
		       cpu_ns(CLOCK_THREAD_CPUTIME_ID));
	}
	if (!strcmp(profile, "stall") && !stalled) {
		fprintf(stderr, "gvt_guest %s: the device never wrote the stalled status page\n",
			uuid);
		return 1;
	}
	return (done == sub && gtt_bad == 0) ? 0 : 1;
}
