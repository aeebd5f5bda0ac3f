// SPDX-License-Identifier: GPL-2.0
/*
 * gvt_gpu_client: a workload client for gvt_rs_guest.ko, run in a guest.
 *
 * Opens /dev/gvtgpuN (the guest driver of a gvt-rs simulated vGPU attached
 * with QEMU's vfio-pci) and runs the same workload profiles as gvt_guest,
 * through the driver's ioctls (gvt_rs_guest.h): SUBMIT queues a workload
 * and returns its fence, WAIT sleeps until a fence is reached.
 *
 *   gvt_gpu_client [options] DEVICE
 *     -p compute|frames|long|idle|copy   profile (default compute); copy:
 *                  one copy of -b bytes (default 16384) at a time through
 *                  GVT_GPU_IOC_COPY, each of a buffer with a pattern of its
 *                  own, checked against its checksum when it completed;
 *                  a copy failed by a fault or a reset is counted as
 *                  failed (the vGPU is then reset), the run ends when the
 *                  vGPU goes
 *     -t SECONDS   run time (default 5)
 *     -d US        workload duration (compute 2000, frames 1000, long 20000)
 *     -q N         workloads kept queued (compute 4, long 2)
 *     -f N         workloads per frame (frames, default 4)
 *     -z US        CPU think time between frames (default 4000)
 *     -e ENGINE    engine (default 0; -1 alternates between engines)
 *     -b BYTES     bytes moved per workload (default 65536)
 *     -m OPCODE    submit one raw descriptor with this opcode (needs
 *                  gvt_rs_guest.unchecked_submit=1) and check that the vGPU
 *                  fails with an opcode fault
 *     -x           reset the vGPU and check that it works again (after -m,
 *                  or alone)
 *
 * At exit it prints one line:
 *
 *   gvt_gpu_client: profile=compute seconds=5.00 submitted=N completed=N
 *   fences_ok=N fences_bad=0 wl_per_s=X.X fps=Y.Y gpu_ms=Z
 *
 * (seconds: the run's wall time; gpu_ms: GPU time of the vGPU's engines
 * during the run, from the status page) and exits 0 if every submitted
 * workload completed with its fence, 1 if not, 2 on a usage or setup
 * error. With -m, it prints "gvt_gpu_client: fault=0x..." instead. The
 * copy profile prints
 *
 *   gvt_gpu_client: profile=copy seconds=S submitted=N completed=N
 *   verified=N failed=N wrong=0 resets=N removed=0|1
 *
 * and exits 0 if no completed copy was wrong and every submitted one
 * completed or failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "gvt_copy_check.h"
#include "gvt_rs_guest.h"
#include <linux/gvt_rs_sim.h>

#define MAX_QUEUE	256
/*
 * How long to wait for what the vGPU must do: the fences still queued when
 * a run ends, a fault. A wait that is answered returns at once; the limit
 * only ends one whose answer never comes. Under nested TCG a guest keeping
 * 32 workloads of 50 ms queued at a third of the GPU needs about 5 s to
 * drain them when nothing is slow (4.86 s measured), more on a loaded host.
 */
#define ANSWER_S	120

static const char *dev_path;
static int fd;
static struct gvt_gpu_info info;

/* Fences in flight, oldest first. */
static struct fence {
	uint32_t engine, seqno;
} queue[MAX_QUEUE];
static unsigned int q_head, q_len;

static uint64_t submitted, completed, fences_ok, fences_bad, frames;
/* Per engine: the last fence seen completed, to check the order. */
static uint32_t last_done[GVT_GPU_MAX_ENGINES];
static int have_done[GVT_GPU_MAX_ENGINES];

static void die(const char *what)
{
	fprintf(stderr, "gvt_gpu_client %s: %s: %s\n", dev_path ? dev_path : "",
		what, strerror(errno));
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int seqno_reached(uint32_t current, uint32_t seqno)
{
	return (int32_t)(current - seqno) >= 0;
}

static int get_stats(struct gvt_gpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, GVT_GPU_IOC_STATS, st);
}

/* Queues one workload; 0, or -errno (-EAGAIN: ring full). */
static int submit(uint32_t engine, uint32_t us, uint32_t bytes)
{
	struct gvt_gpu_submit s = {
		.engine = engine,
		.duration_us = us,
		.bytes = bytes,
		.flags = GVT_GPU_SUBMIT_IRQ,
	};
	struct fence *f;

	if (q_len == MAX_QUEUE)
		return -EAGAIN;
	if (ioctl(fd, GVT_GPU_IOC_SUBMIT, &s))
		return -errno;
	f = &queue[(q_head + q_len++) % MAX_QUEUE];
	f->engine = engine;
	f->seqno = s.seqno;
	submitted++;
	return 0;
}

/*
 * Waits for the oldest fence in flight; 0 when it is reached, -errno if
 * not. A fence that comes back reached, but with a completed seqno that
 * does not cover it or went backwards, counts as bad.
 */
static int wait_oldest(uint32_t timeout_ms)
{
	struct fence *f = &queue[q_head];
	struct gvt_gpu_wait w = {
		.engine = f->engine,
		.seqno = f->seqno,
		.timeout_ms = timeout_ms,
	};
	uint32_t e = f->engine;

	if (!q_len)
		return 0;
	if (ioctl(fd, GVT_GPU_IOC_WAIT, &w))
		return -errno;
	if (!seqno_reached(w.completed_seqno, f->seqno) ||
	    (have_done[e] && !seqno_reached(w.completed_seqno, last_done[e])))
		fences_bad++;
	else
		fences_ok++;
	last_done[e] = w.completed_seqno;
	have_done[e] = 1;
	completed++;
	q_head = (q_head + 1) % MAX_QUEUE;
	q_len--;
	return 0;
}

/* Waits for every fence in flight until the deadline; 0 if all came back. */
static int drain(double deadline)
{
	while (q_len) {
		double left = deadline - now_s();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = wait_oldest((uint32_t)(left * 1000) + 1);
		if (r == -EINTR)
			continue;
		if (r)
			return r;
	}
	return 0;
}

/* Submits one raw descriptor with opcode opc; checks the opcode fault. */
static int malformed(uint32_t opc)
{
	struct gvt_gpu_submit_raw raw = { .engine = 0 };
	struct gvt_sim_desc desc = {
		.opcode = opc,
		.flags = GVT_SIM_DESC_IRQ,
		.duration_us = 1000,
	};
	struct gvt_gpu_stats st;
	uint32_t fault;
	double end;

	memcpy(raw.desc, &desc, sizeof(desc));
	if (ioctl(fd, GVT_GPU_IOC_SUBMIT_RAW, &raw)) {
		if (errno == EPERM)
			fprintf(stderr, "gvt_gpu_client: SUBMIT_RAW needs gvt_rs_guest.unchecked_submit=1\n");
		die("GVT_GPU_IOC_SUBMIT_RAW");
	}
	submitted++;
	/*
	 * The fence of a rejected descriptor never comes: WAIT says EIO. Only
	 * printed if not (the fault is judged from STATS below), so a short
	 * timeout: a lost fault interrupt must not hold up the run.
	 */
	{
		struct gvt_gpu_wait w = {
			.engine = 0, .seqno = raw.seqno, .timeout_ms = 2000,
		};
		int r = ioctl(fd, GVT_GPU_IOC_WAIT, &w) ? errno : 0;

		if (r != EIO)
			fprintf(stderr, "gvt_gpu_client: WAIT on the bad descriptor: %s\n",
				r ? strerror(r) : "reached");
	}
	end = now_s() + ANSWER_S;
	do {
		if (get_stats(&st))
			die("GVT_GPU_IOC_STATS");
		if (st.failed)
			break;
		usleep(10000);
	} while (now_s() < end);
	fault = (uint32_t)st.fault;
	printf("gvt_gpu_client: fault=0x%08x failed=%" PRIu64 " reason=%u engine=%u index=%u\n",
	       fault, (uint64_t)st.failed, GVT_SIM_FAULT_REASON(fault),
	       GVT_SIM_FAULT_ENGINE(fault), GVT_SIM_FAULT_INDEX(fault));
	return st.failed && GVT_SIM_FAULT_REASON(fault) == GVT_SIM_FAULT_OPCODE ? 0 : 1;
}

/*
 * -p copy: copies until t_end or until the vGPU goes, one at a time, each
 * checked against its pattern's checksum. 0: none wrong, none lost.
 */
static int copy_profile(int engine, long dur, long len, double t_end)
{
	static uint8_t src[GVT_GPU_COPY_MAX], dst[GVT_GPU_COPY_MAX];
	uint64_t n = 0, done = 0, verified = 0, failed = 0, wrong = 0, resets = 0;
	uint32_t nonce = (uint32_t)getpid() ^ (uint32_t)(now_s() * 1e6);
	double t0 = now_s();
	int removed = 0, err = 0;

	if (len < 1 || len > GVT_GPU_COPY_MAX) {
		fprintf(stderr, "gvt_gpu_client: copy: -b takes 1 to %d\n", GVT_GPU_COPY_MAX);
		return 2;
	}
	while (!removed && !err && now_s() < t_end) {
		struct gvt_gpu_copy c = {
			.src = (uintptr_t)src,
			.dst = (uintptr_t)dst,
			.length = (uint64_t)len,
			.engine = engine < 0 ? n % info.engines : (uint32_t)engine,
			.duration_us = (uint64_t)dur,
			.timeout_ms = ANSWER_S * 1000,
		};
		uint64_t sum;

		/* CAST: copy numbers past 2^32 repeat patterns, of other copies. */
		gvt_copy_fill(src, (uint64_t)len, nonce, (uint32_t)(n + 1));
		sum = gvt_copy_checksum(src, (uint64_t)len);
		memset(dst, 0xdb ^ (int)(n & 0xff), len);
		if (ioctl(fd, GVT_GPU_IOC_COPY, &c)) {
			/* Not submitted: the vGPU is gone, or failed. */
			if (errno == ENODEV) {
				removed = 1;
			} else if (errno == EIO) {
				if (ioctl(fd, GVT_GPU_IOC_RESET))
					removed = 1;
				resets++;
			} else if (errno != EINTR) {
				perror("gvt_gpu_client: GVT_GPU_IOC_COPY");
				err = 1;
			}
			continue;
		}
		n++;
		if (c.result) {
			failed++;
			if ((int64_t)c.result == -ENODEV)
				removed = 1;
			else if ((int64_t)c.result == -EIO && !ioctl(fd, GVT_GPU_IOC_RESET))
				resets++;
			continue;
		}
		done++;
		if (gvt_copy_checksum(dst, (uint64_t)len) == sum && !memcmp(src, dst, len)) {
			verified++;
		} else {
			wrong++;
			fprintf(stderr, "gvt_gpu_client: copy %" PRIu64 " (seqno %" PRIu64 ") completed wrong\n",
				n, (uint64_t)c.seqno);
		}
	}
	printf("gvt_gpu_client: profile=copy seconds=%.2f submitted=%" PRIu64 " completed=%" PRIu64
	       " verified=%" PRIu64 " failed=%" PRIu64 " wrong=%" PRIu64 " resets=%" PRIu64
	       " removed=%d length=%ld\n",
	       now_s() - t0, n, done, verified, failed, wrong, resets, removed, len);
	return !err && !wrong && done > 0 && n == done + failed && verified == done ? 0 : 1;
}

/* Resets the vGPU and runs a few workloads on every engine. */
static int reset_check(void)
{
	struct gvt_gpu_stats st;
	int ok;

	if (ioctl(fd, GVT_GPU_IOC_RESET))
		die("GVT_GPU_IOC_RESET");
	/* Fences lost in the reset are not ours to count any more. */
	q_head = 0;
	q_len = 0;
	memset(have_done, 0, sizeof(have_done));
	if (get_stats(&st))
		die("GVT_GPU_IOC_STATS");
	ok = !st.failed && st.fault == 0;
	for (uint32_t e = 0; e < info.engines; e++)
		for (int i = 0; i < 2; i++)
			if (submit(e, 1000, 4096))
				ok = 0;
	if (drain(now_s() + ANSWER_S))
		ok = 0;
	if (get_stats(&st))
		die("GVT_GPU_IOC_STATS");
	ok = ok && !st.failed;
	printf("gvt_gpu_client: reset %s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *profile = "compute";
	int q = -1, frame = 4, engine = 0, opcode = -1, reset = 0, c, ret;
	long dur = -1, think = 4000, bytes = -1;
	double secs = 5, t0, t_end, wall;
	struct gvt_gpu_stats st0, st;
	uint64_t gpu_ns = 0;
	uint32_t rr = 0;
	int idle, frames_p, err = 0;

	while ((c = getopt(argc, argv, "p:t:d:q:f:z:e:b:m:x")) != -1) {
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
		case 'm':
			opcode = (int)strtol(optarg, NULL, 0);
			break;
		case 'x':
			reset = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-p compute|frames|long|idle|copy] [-t s] [-d us] [-q n] [-f n]\n"
				"\t[-z us] [-e engine] [-b bytes] [-m opcode] [-x] DEVICE\n",
				argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: gvt_gpu_client [options] DEVICE\n");
		return 2;
	}
	if (strcmp(profile, "compute") && strcmp(profile, "frames") &&
	    strcmp(profile, "long") && strcmp(profile, "idle") && strcmp(profile, "copy")) {
		fprintf(stderr, "gvt_gpu_client: unknown profile %s\n", profile);
		return 2;
	}
	dev_path = argv[optind];
	fd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open");
	if (ioctl(fd, GVT_GPU_IOC_INFO, &info))
		die("GVT_GPU_IOC_INFO");
	if (engine >= (int)info.engines || engine < -1) {
		fprintf(stderr, "gvt_gpu_client: engine %d of %u\n", engine, info.engines);
		return 2;
	}
	if (opcode >= 0) {
		ret = malformed((uint32_t)opcode);
		if (reset)
			ret |= reset_check();
		return ret;
	}
	if (reset)
		return reset_check();

	if (bytes < 0)
		bytes = !strcmp(profile, "copy") ? 16384 : 65536;
	if (!strcmp(profile, "copy"))
		return copy_profile(engine, dur < 0 ? 500 : dur, bytes, now_s() + secs);
	idle = !strcmp(profile, "idle");
	frames_p = !strcmp(profile, "frames");
	if (dur < 0)
		dur = !strcmp(profile, "long") ? 20000 : frames_p ? 1000 : 2000;
	if (q < 0)
		q = !strcmp(profile, "long") ? 2 : 4;
	if (q < 1 || q > MAX_QUEUE || frame < 1 || frame > MAX_QUEUE) {
		fprintf(stderr, "gvt_gpu_client: -q and -f take 1 to %d\n", MAX_QUEUE);
		return 2;
	}
	if (get_stats(&st0))
		die("GVT_GPU_IOC_STATS");
	t0 = now_s();
	t_end = t0 + secs;
	while (idle && now_s() < t_end)
		usleep(50000);
	while (!idle && !err && now_s() < t_end) {
		int want = frames_p ? frame : q - (int)q_len;

		for (int i = 0; i < want; i++) {
			uint32_t e = engine < 0 ? rr++ % info.engines : (uint32_t)engine;
			int r = submit(e, (uint32_t)dur, (uint32_t)bytes);

			if (r == -EAGAIN)
				break;
			if (r == -EINTR)
				continue;
			if (r) {
				errno = -r;
				perror("gvt_gpu_client: GVT_GPU_IOC_SUBMIT");
				err = 1;
				break;
			}
		}
		if (frames_p) {
			/* A frame: wait for all of its workloads, then think. */
			if (drain(t_end + ANSWER_S)) {
				err = 1;
				break;
			}
			frames++;
			if (think > 0)
				usleep(think);
		} else if (q_len) {
			/* Keep the queue full: wait for the oldest. */
			int r = wait_oldest(1000);

			if (r && r != -ETIMEDOUT && r != -EINTR) {
				errno = -r;
				perror("gvt_gpu_client: GVT_GPU_IOC_WAIT");
				err = 1;
			}
		}
	}
	/* Drain what is still queued. */
	if (drain(t_end + ANSWER_S)) {
		fprintf(stderr, "gvt_gpu_client: %u fences not back %d s after the run\n",
			q_len, ANSWER_S);
		err = 1;
	}
	wall = now_s() - t0;
	if (!get_stats(&st))
		for (uint32_t e = 0; e < info.engines && e < GVT_GPU_MAX_ENGINES; e++)
			gpu_ns += st.engine[e].gpu_ns - st0.engine[e].gpu_ns;
	printf("gvt_gpu_client: profile=%s seconds=%.2f submitted=%" PRIu64
	       " completed=%" PRIu64 " fences_ok=%" PRIu64 " fences_bad=%" PRIu64
	       " wl_per_s=%.1f fps=%.1f gpu_ms=%" PRIu64 "\n",
	       profile, wall, submitted, completed, fences_ok, fences_bad,
	       completed / wall, frames / wall, gpu_ns / 1000000);
	return (!err && completed == submitted && fences_ok == submitted &&
		fences_bad == 0) ? 0 : 1;
}
