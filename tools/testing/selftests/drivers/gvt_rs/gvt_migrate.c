// SPDX-License-Identifier: GPL-2.0
/*
 * gvt_migrate: VFIO migration v2 of a running vGPU to another, without
 * QEMU: what a VMM does, from one process holding both devices.
 *
 *   gvt_migrate [-I] [-x OTHER_UUID] SRC_UUID DST_UUID
 *     -I  iommufd and the VFIO device files, instead of the container
 *     -x  a vGPU of another type, which must refuse SRC's stream
 *
 * The devices are opened through the kernel's VFIO selftest library
 * (tools/testing/selftests/vfio/lib), as QEMU opens them. Each gets its
 * own VFIO container (or IOAS) and its own "guest memory" (the source
 * VM's and the destination VM's), mapped at the same IOVA. The
 * source runs a stream of workloads on both engines, whose fences (seqno)
 * must complete in order. Then:
 *  1. a cancelled migration: RUNNING -> STOP_COPY, part of the stream read,
 *     back to RUNNING: the source goes on, fences in order;
 *  2. the migration: STOP_COPY, the stream read to its end (its size and
 *     the stop-copy time are printed), the guest memory copied as a VMM
 *     copies RAM;
 *  3. streams the destination must refuse, each leaving it clean (as after
 *     a reset, in the ERROR state, which only VFIO_DEVICE_RESET leaves): a corrupted
 *     byte (refused by the write that completes the stream), a truncated
 *     stream, another version, and (-x) another type;
 *  4. RESUMING on the destination, the stream written in pieces, RUNNING;
 *     the source back to STOP and closed; the workload continues on the
 *     destination with the next fences, in order, and every workload
 *     submitted completes exactly once (the status page's count), with the
 *     GTT entries the guest wrote on the source.
 *
 * Prints "# ok: NAME" or "# FAILED: NAME" per check, a "migration:"
 * line of figures, and exits 0 if every check passed, 1 otherwise (also
 * when the library fails to open a device: it says what failed), 2 on
 * another setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/vfio.h>

#include <linux/gvt_rs_sim.h>

#include <libvfio.h>

#define IOVA		0x100000ull
#define MEM_SIZE	(64 * 4096)
#define RING_SIZE	32
#define ENGINES		2
#define RING_OFF(e)	((e) * 4096ull)
#define STATUS_OFF	(4 * 4096ull)
#define DURATION_US	300
/* GTT entries the guest writes: three chunks of 8192 entries. */
#define NGTT		3
static const uint32_t gtt_index[NGTT] = { 5, 9000, 20000 };

struct dev {
	const char *uuid;
	char name[PATH_MAX];		/* its sysfs directory, as the library names it */
	struct iommu *iommu;		/* the container, or with -I the IOAS */
	struct vfio_pci_device *vdev;	/* the library's device; vdev->fd its file */
	struct dma_region mem_region;	/* mem at IOVA */
	uint64_t bar0;
	uint8_t *mem;
	uint32_t id;
};

static int failures;
/* -I: iommufd and the VFIO device files instead of the container. */
static int use_iommufd;

static void die(const char *uuid, const char *what)
{
	fprintf(stderr, "gvt_migrate %s: %s: %s\n", uuid, what, strerror(errno));
	exit(2);
}

static void result(int ok, const char *name)
{
	printf("# %s: %s\n", ok ? "ok" : "FAILED", name);
	fflush(stdout);
	if (!ok)
		failures++;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

static uint64_t rd(struct dev *d, unsigned int off, unsigned int n)
{
	uint64_t v = 0;

	if (pread(d->vdev->fd, &v, n, d->bar0 + off) != n)
		die(d->uuid, "BAR0 read");
	return v;
}

static void wr(struct dev *d, unsigned int off, uint64_t v, unsigned int n)
{
	if (pwrite(d->vdev->fd, &v, n, d->bar0 + off) != n)
		die(d->uuid, "BAR0 write");
}

static void dev_open(struct dev *d, const char *uuid)
{
	int ret;

	d->uuid = uuid;
	snprintf(d->name, sizeof(d->name), "/sys/bus/mdev/devices/%s", uuid);
	/* The library's calls are QEMU's; it reports what fails and exits. */
	d->iommu = iommu_init(use_iommufd ? MODE_IOMMUFD : MODE_VFIO_TYPE1V2_IOMMU);
	d->vdev = vfio_pci_device_init(d->name, d->iommu);
	if (d->vdev->bars[0].info.size < GVT_SIM_BAR0_SIZE) {
		errno = EINVAL;
		die(uuid, "BAR0 region too small");
	}
	d->bar0 = d->vdev->bars[0].info.offset;
	d->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (d->mem == MAP_FAILED)
		die(uuid, "guest memory");
	d->mem_region = (struct dma_region){
		.vaddr = d->mem,
		.iova = IOVA,
		.size = MEM_SIZE,
	};
	ret = __iommu_map(d->iommu, &d->mem_region);
	if (ret) {
		errno = -ret;
		die(uuid, "map the guest memory for DMA");
	}
	d->id = rd(d, GVT_SIM_REG_VGPU_ID, 4);
}

/* Closing the container (or the iommufd) unmaps the guest memory. */
static void dev_close(struct dev *d)
{
	vfio_pci_device_cleanup(d->vdev);
	iommu_cleanup(d->iommu);
	munmap(d->mem, MEM_SIZE);
}

/* VFIO_DEVICE_FEATURE with a payload of @len bytes; -errno on failure. */
static int feature(struct dev *d, uint32_t flags, void *payload, size_t len)
{
	uint64_t buf[8] = { 0 };
	struct vfio_device_feature *f = (void *)buf;
	int ret;

	f->argsz = sizeof(*f) + len;
	f->flags = flags;
	memcpy(f->data, payload, len);
	ret = ioctl(d->vdev->fd, VFIO_DEVICE_FEATURE, f);
	memcpy(payload, f->data, len);
	return ret ? -errno : 0;
}

/* Sets the migration state; returns the data fd (or -1), -errno on error. */
static int set_state(struct dev *d, uint32_t state)
{
	struct vfio_device_feature_mig_state s = { .device_state = state };
	int ret = feature(d, VFIO_DEVICE_FEATURE_SET | VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE,
			  &s, sizeof(s));

	return ret ? ret : s.data_fd;
}

static int get_state(struct dev *d)
{
	struct vfio_device_feature_mig_state s = { 0 };
	int ret = feature(d, VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE,
			  &s, sizeof(s));

	return ret ? ret : (int)s.device_state;
}

/* The guest's side of the device: two rings, a status page, fences. */
struct guest {
	struct dev *d;
	uint32_t tail[ENGINES];
	uint32_t next_seqno[ENGINES];	/* the next fence to submit */
	uint32_t last_seen[ENGINES];	/* the newest fence completed */
	uint32_t submitted;
	int out_of_order;
};

static struct gvt_sim_engine_status *status(struct guest *g, int e)
{
	return (void *)(g->d->mem + STATUS_OFF + e * GVT_SIM_STATUS_STRIDE);
}

static void guest_start(struct guest *g, struct dev *d)
{
	int e;

	memset(g, 0, sizeof(*g));
	g->d = d;
	wr(d, GVT_SIM_REG_STATUS_PAGE, IOVA + STATUS_OFF, 8);
	for (e = 0; e < ENGINES; e++) {
		wr(d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_BASE, IOVA + RING_OFF(e), 8);
		wr(d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_SIZE, RING_SIZE, 4);
		wr(d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_CTL, GVT_SIM_RING_CTL_ENABLE, 4);
		g->next_seqno[e] = 1;
	}
}

/* Checks the fences seen so far: never back, never past what was sent. */
static void guest_observe(struct guest *g)
{
	int e;

	for (e = 0; e < ENGINES; e++) {
		uint32_t s = __atomic_load_n(&status(g, e)->seqno, __ATOMIC_ACQUIRE);

		if (s < g->last_seen[e] || s >= g->next_seqno[e])
			g->out_of_order++;
		g->last_seen[e] = s;
	}
}

/* Fills every ring up to one free descriptor and rings the doorbells. */
static void guest_submit(struct guest *g)
{
	int e;

	guest_observe(g);
	for (e = 0; e < ENGINES; e++) {
		uint32_t head = __atomic_load_n(&status(g, e)->head, __ATOMIC_ACQUIRE);
		uint32_t t = g->tail[e];
		int n = 0;

		while ((t + 1) % RING_SIZE != head) {
			struct gvt_sim_desc *desc = (void *)(g->d->mem + RING_OFF(e) +
							     t * GVT_SIM_DESC_SIZE);

			memset(desc, 0, sizeof(*desc));
			desc->opcode = GVT_SIM_OP_EXEC;
			desc->seqno = g->next_seqno[e]++;
			desc->duration_us = DURATION_US;
			t = (t + 1) % RING_SIZE;
			g->submitted++;
			n++;
		}
		if (n) {
			__atomic_thread_fence(__ATOMIC_RELEASE);
			g->tail[e] = t;
			wr(g->d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_TAIL, t, 4);
		}
	}
}

/* Runs the workload for @ms, submitting as the rings drain. */
static void guest_run(struct guest *g, int ms)
{
	uint64_t end = now_us() + ms * 1000ull;

	while (now_us() < end) {
		guest_submit(g);
		usleep(1000);
	}
}

/* Waits until every fence submitted completed (at most 5 s). */
static int guest_drain(struct guest *g)
{
	uint64_t end = now_us() + 5000000;
	int e, done;

	do {
		guest_observe(g);
		done = 1;
		for (e = 0; e < ENGINES; e++)
			done &= g->last_seen[e] == g->next_seqno[e] - 1;
		if (done)
			return 1;
		usleep(1000);
	} while (now_us() < end);
	return 0;
}

static uint32_t completed(struct guest *g)
{
	uint32_t n = 0;
	int e;

	for (e = 0; e < ENGINES; e++)
		n += __atomic_load_n(&status(g, e)->completed, __ATOMIC_ACQUIRE);
	return n;
}

static uint64_t gtt_value(uint32_t i)
{
	return 0x1234000000000000ull | (uint64_t)i << 12 | 3;
}

static uint64_t gtt_read(struct dev *d, uint32_t i)
{
	wr(d, GVT_SIM_REG_GTT_INDEX, i, 4);
	return rd(d, GVT_SIM_REG_GTT_DATA, 8);
}

/* The vGPU is as after a reset: rings off, no work, its own GTT. */
static int is_clean(struct dev *d)
{
	unsigned int i;
	int e;

	if (rd(d, GVT_SIM_REG_SUBMITTED, 4) || rd(d, GVT_SIM_REG_COMPLETED, 4) ||
	    rd(d, GVT_SIM_REG_STATUS_PAGE, 8) || rd(d, GVT_SIM_REG_IRQ_ENABLE, 4) ||
	    rd(d, GVT_SIM_REG_FAULT, 4))
		return 0;
	for (e = 0; e < ENGINES; e++)
		if (rd(d, GVT_SIM_REG_RING(e) + GVT_SIM_RING_CTL, 4))
			return 0;
	for (i = 0; i < NGTT; i++)
		if (gtt_read(d, gtt_index[i]) !=
		    ((1ull << 63) | (uint64_t)d->id << 40 | gtt_index[i]))
			return 0;
	return 1;
}

/* Reads a data fd to its end; returns the bytes, -errno on error. */
static ssize_t read_all(int fd, uint8_t *buf, size_t max)
{
	size_t have = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, max - have > 65536 ? 65536 : max - have);

		if (n < 0)
			return -errno;
		if (n == 0)
			return have;
		have += n;
		if (have == max)
			return -EFBIG;
	}
}

/* Writes @len bytes in pieces of @piece; -errno of the first failure. */
static int write_all(int fd, const uint8_t *buf, size_t len, size_t piece)
{
	size_t at = 0;

	while (at < len) {
		size_t n = len - at < piece ? len - at : piece;
		ssize_t w = write(fd, buf + at, n);

		if (w < 0)
			return -errno;
		at += w;
	}
	return 0;
}

/*
 * Feeds @len bytes of @stream to @d in RESUMING and leaves it: the errno
 * of the write (@werr) and of the transition to STOP (returned).
 */
static int resume(struct dev *d, const uint8_t *stream, size_t len, int *werr)
{
	int fd = set_state(d, VFIO_DEVICE_STATE_RESUMING);
	int ret;

	if (fd < 0)
		return fd;
	*werr = write_all(fd, stream, len, 4096);
	close(fd);
	ret = set_state(d, VFIO_DEVICE_STATE_STOP);
	return ret < 0 ? ret : 0;
}

/* A stream @d must refuse with @want (at the write with @want_write). */
static void refuse_check(struct dev *d, const uint8_t *stream, size_t len, int want_write,
			 int want, const char *what)
{
	char name[160];
	int werr = 0, ret = resume(d, stream, len, &werr);

	snprintf(name, sizeof(name), "%s: refused (write %s, STOP %s)", what,
		 strerror(-werr), strerror(-ret));
	result(werr == want_write && ret == want, name);
	snprintf(name, sizeof(name), "%s: the destination is in ERROR and clean", what);
	result(get_state(d) == VFIO_DEVICE_STATE_ERROR && is_clean(d), name);
	snprintf(name, sizeof(name), "%s: ERROR is left only by a reset (EINVAL)", what);
	result(set_state(d, VFIO_DEVICE_STATE_RUNNING) == -EINVAL &&
	       get_state(d) == VFIO_DEVICE_STATE_ERROR, name);
	snprintf(name, sizeof(name), "%s: a reset returns the destination to RUNNING", what);
	result(!__vfio_pci_device_reset(d->vdev) && get_state(d) == VFIO_DEVICE_STATE_RUNNING &&
	       is_clean(d), name);
}

int main(int argc, char **argv)
{
	struct vfio_device_feature_migration mig = { 0 };
	struct vfio_device_feature_mig_data_size size = { 0 };
	struct dev src, dst, other;
	const char *other_uuid = NULL;
	uint64_t t0, t1, t2, t3;
	uint32_t before, seen;
	struct guest g;
	uint8_t *stream, *bad;
	size_t max = 64 << 20;
	ssize_t len;
	unsigned int i;
	int opt, fd, src_fd, ok;

	while ((opt = getopt(argc, argv, "Ix:")) != -1) {
		if (opt == 'I')
			use_iommufd = 1;
		else if (opt == 'x')
			other_uuid = optarg;
		else
			goto usage;
	}
	if (argc - optind != 2)
		goto usage;
	stream = malloc(max);
	bad = malloc(max);
	if (!stream || !bad)
		die("-", "malloc");
	dev_open(&src, argv[optind]);
	dev_open(&dst, argv[optind + 1]);

	result(!feature(&src, VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_MIGRATION,
			&mig, sizeof(mig)) && mig.flags == VFIO_MIGRATION_STOP_COPY,
	       "the vGPU offers migration: STOP_COPY, no PRE_COPY");
	result(get_state(&src) == VFIO_DEVICE_STATE_RUNNING, "a vGPU opened is RUNNING");
	result(set_state(&src, VFIO_DEVICE_STATE_PRE_COPY) == -EINVAL &&
	       get_state(&src) == VFIO_DEVICE_STATE_RUNNING,
	       "PRE_COPY is refused with EINVAL, the state unchanged");

	/* The guest on the source: GTT entries, then the workload. */
	for (i = 0; i < NGTT; i++) {
		wr(&src, GVT_SIM_REG_GTT_INDEX, gtt_index[i], 4);
		wr(&src, GVT_SIM_REG_GTT_DATA, gtt_value(gtt_index[i]), 8);
	}
	guest_start(&g, &src);
	guest_run(&g, 300);
	result(completed(&g) > 0 && !g.out_of_order, "the source runs, fences in order");

	/* 1. A cancelled migration. */
	fd = set_state(&src, VFIO_DEVICE_STATE_STOP_COPY);
	ok = fd >= 0 && read(fd, stream, 100) == 100;
	result(ok && set_state(&src, VFIO_DEVICE_STATE_RUNNING) == -1 &&
	       get_state(&src) == VFIO_DEVICE_STATE_RUNNING,
	       "cancel: STOP_COPY, part of the stream read, back to RUNNING");
	errno = 0;
	result(fd >= 0 && read(fd, stream, 100) < 0 && errno == ENODEV,
	       "cancel: the data fd fails once the session ended (ENODEV)");
	if (fd >= 0)
		close(fd);
	before = completed(&g);
	guest_run(&g, 300);
	result(completed(&g) > before && !g.out_of_order,
	       "cancel: the source goes on running, fences in order");

	/* 2. The migration: the source stops and its state is read out. */
	if (feature(&src, VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_MIG_DATA_SIZE,
		    &size, sizeof(size)))
		size.stop_copy_length = 0;
	t0 = now_us();
	src_fd = set_state(&src, VFIO_DEVICE_STATE_STOP_COPY);
	t1 = now_us();
	len = src_fd >= 0 ? read_all(src_fd, stream, max) : src_fd;
	t2 = now_us();
	result(len > 0 && (uint64_t)len == size.stop_copy_length,
	       "STOP_COPY: the stream read to its end, of the size announced");
	if (len <= 0) {
		printf("# no stream (%s): the rest cannot run\n", strerror((int)-len));
		return 1;
	}
	guest_observe(&g);
	seen = completed(&g);
	usleep(50000);
	guest_observe(&g);
	result(completed(&g) == seen && !g.out_of_order,
	       "STOP_COPY: the source completes nothing more");
	/* The VMM copies the guest's RAM. */
	memcpy(dst.mem, src.mem, MEM_SIZE);

	/* 3. Streams the destination refuses. */
	memcpy(bad, stream, len);
	bad[len / 2] ^= 0x10;
	/* Refused by the write that completes it, as QEMU needs. */
	refuse_check(&dst, bad, len, -EBADMSG, -EBADMSG, "a corrupted stream");
	refuse_check(&dst, stream, len / 2, 0, -ENODATA, "a truncated stream");
	memcpy(bad, stream, len);
	bad[4] = 2;
	refuse_check(&dst, bad, len, -EPROTONOSUPPORT, -EPROTONOSUPPORT,
		     "a stream of another version");
	if (other_uuid) {
		dev_open(&other, other_uuid);
		refuse_check(&other, stream, len, -EINVAL, -EINVAL,
			     "a stream of another vGPU type");
		dev_close(&other);
	}

	/* 4. The destination resumes, the source stops for good. */
	t3 = now_us();
	fd = set_state(&dst, VFIO_DEVICE_STATE_RESUMING);
	ok = fd >= 0 && !write_all(fd, stream, len, 1000);
	if (fd >= 0)
		close(fd);
	ok = ok && set_state(&dst, VFIO_DEVICE_STATE_RUNNING) == -1;
	t3 = now_us() - t3;
	result(ok && get_state(&dst) == VFIO_DEVICE_STATE_RUNNING,
	       "RESUMING: the stream written in pieces, the destination RUNNING");
	result(set_state(&src, VFIO_DEVICE_STATE_STOP) == -1, "the source back to STOP");
	close(src_fd);
	dev_close(&src);

	ok = 1;
	for (i = 0; i < NGTT; i++)
		ok &= gtt_read(&dst, gtt_index[i]) == gtt_value(gtt_index[i]);
	result(ok, "the destination has the GTT entries the guest wrote");
	result(rd(&dst, GVT_SIM_REG_RING(0) + GVT_SIM_RING_SIZE, 4) == RING_SIZE &&
	       rd(&dst, GVT_SIM_REG_RING(1) + GVT_SIM_RING_CTL, 4) == GVT_SIM_RING_CTL_ENABLE &&
	       rd(&dst, GVT_SIM_REG_STATUS_PAGE, 8) == IOVA + STATUS_OFF,
	       "the destination has the rings and the status page");
	g.d = &dst;
	before = completed(&g);
	guest_run(&g, 300);
	result(completed(&g) > before && !g.out_of_order,
	       "the workload continues on the destination, fences in order");
	result(guest_drain(&g) && !g.out_of_order && completed(&g) == g.submitted &&
	       rd(&dst, GVT_SIM_REG_COMPLETED, 4) == g.submitted,
	       "every workload submitted completed once, in order, across the migration");
	printf("migration: stream_bytes=%zd data_size=%llu", len,
	       (unsigned long long)size.stop_copy_length);
	printf(" stop_copy_us=%llu stop_copy_state_us=%llu resume_us=%llu",
	       (unsigned long long)(t2 - t0), (unsigned long long)(t1 - t0),
	       (unsigned long long)t3);
	printf(" submitted=%u completed=%u seqno=%u,%u\n", g.submitted, completed(&g),
	       g.last_seen[0], g.last_seen[1]);
	dev_close(&dst);
	return failures ? 1 : 0;

usage:
	fprintf(stderr, "usage: gvt_migrate [-I] [-x OTHER_UUID] SRC_UUID DST_UUID\n");
	return 2;
}
