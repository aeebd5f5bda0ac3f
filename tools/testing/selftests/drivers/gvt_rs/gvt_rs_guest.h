/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The ioctl ABI of /dev/gvtgpuN, the guest driver (gvt_rs_guest.ko) of the
 * gvt-rs simulated vGPU. Mirrored by drivers/gvt-rs/guest/file.rs;
 * Documentation/gvt-rs/guest-driver.rst describes it.
 *
 * Every structure is made of one type of field, so that it has the same
 * layout for 32-bit and 64-bit user space. Fields marked "out" are filled in
 * by the driver when the ioctl succeeds; "reserved" fields must be 0.
 */
#ifndef GVT_RS_GUEST_H
#define GVT_RS_GUEST_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GVT_GPU_MAX_ENGINES		2

/* GVT_GPU_IOC_INFO: what the vGPU is. */
struct gvt_gpu_info {
	__u32 engines;		/* out: engines (rings), at most 2 */
	__u32 vgpu_id;		/* out: the vGPU id on the host */
	__u32 ring_size;	/* out: descriptors per ring (size - 1 in flight) */
	__u32 max_duration_us;	/* out: longest workload */
	__u32 gm_low_mb;	/* out: low graphics memory of the vGPU type */
	__u32 gm_high_mb;	/* out: high graphics memory of the vGPU type */
	__u32 irq_type;		/* out: GVT_GPU_IRQ_* */
	__u32 flags;		/* out: GVT_GPU_INFO_* */
};

#define GVT_GPU_IRQ_INTX		0
#define GVT_GPU_IRQ_MSI			1
#define GVT_GPU_IRQ_MSIX		2

/* gvt_rs_guest.unchecked_submit=1: GVT_GPU_IOC_SUBMIT_RAW is available. */
#define GVT_GPU_INFO_UNCHECKED		(1u << 0)

/*
 * GVT_GPU_IOC_SUBMIT: queue one workload. Blocks while the engine's ring
 * is full (EAGAIN with O_NONBLOCK). EINVAL: bad engine, unknown flag or a
 * reserved field set; ERANGE: duration 0 or over max_duration_us; EIO: the
 * vGPU failed (GVT_GPU_IOC_RESET recovers it); ENODEV: the vGPU was removed.
 */
struct gvt_gpu_submit {
	__u32 engine;
	__u32 duration_us;	/* 1 .. max_duration_us */
	__u32 bytes;		/* bytes the workload moves */
	__u32 flags;		/* GVT_GPU_SUBMIT_* */
	__u32 seqno;		/* out: the workload's fence on its engine */
	__u32 reserved;
};

/* Interrupt on completion; without it WAIT polls the status page. */
#define GVT_GPU_SUBMIT_IRQ		(1u << 0)

/*
 * GVT_GPU_IOC_WAIT: wait until fence seqno of engine is reached (the
 * engine's completed seqno is at or after it, with wraparound). 0 once it
 * is; ETIMEDOUT after timeout_ms (0: do not sleep); EIO if the vGPU failed
 * or the fence was lost in a reset; EINVAL for a fence never handed out;
 * ENODEV after removal; interrupted by signals (ERESTARTSYS/EINTR).
 */
struct gvt_gpu_wait {
	__u32 engine;
	__u32 seqno;
	__u32 timeout_ms;
	__u32 completed_seqno;	/* out: the engine's last completed seqno */
};

struct gvt_gpu_engine_stats {
	__u64 completed;	/* descriptors completed since enable/reset */
	__u64 gpu_ns;		/* their GPU time, ns */
	__u64 seqno;		/* last completed seqno */
	__u64 submitted_seqno;	/* last submitted seqno */
};

/* GVT_GPU_IOC_STATS: counters from the status page and the device state. */
struct gvt_gpu_stats {
	__u64 engines;
	__u64 failed;		/* 1 while the vGPU is failed */
	__u64 fault;		/* FAULT word (<linux/gvt_rs_sim.h>), 0 if not failed */
	__u64 reserved;
	struct gvt_gpu_engine_stats engine[GVT_GPU_MAX_ENGINES];
};

/*
 * GVT_GPU_IOC_SUBMIT_RAW: queue a raw 32-byte descriptor (struct
 * gvt_sim_desc in <linux/gvt_rs_sim.h>, little endian) as given, but for its
 * seqno, which the driver sets and returns. Only with the module parameter
 * unchecked_submit=1 (EPERM otherwise): it tests the host's command scanner.
 */
struct gvt_gpu_submit_raw {
	__u32 engine;
	__u32 seqno;		/* out */
	__u8 desc[32];
};

/*
 * GVT_GPU_IOC_COPY: copy length bytes from the buffer at src to the buffer at
 * dst (user pointers) through the vGPU, and wait for it: the driver puts
 * both buffers in DMA memory, the device copies the source into the
 * destination by DMA (a copy descriptor, <linux/gvt_rs_sim.h>), and once the copy
 * completed the driver writes the destination back to dst. One copy at a
 * time per vGPU. The ioctl fails if the copy was not submitted (EINVAL: a
 * length of 0 or over GVT_GPU_COPY_MAX, a bad engine or duration, an out
 * field set; EIO: the vGPU is failed; ENODEV: removed); otherwise it returns
 * 0 with the copy's seqno and result: 0 if it completed (dst holds what the
 * device wrote), else -errno: -EIO if a fault or a reset failed it,
 * -ENODEV if the vGPU went, -ETIMEDOUT after timeout_ms.
 */
struct gvt_gpu_copy {
	__u64 src;
	__u64 dst;
	__u64 length;		/* 1 .. GVT_GPU_COPY_MAX */
	__u64 engine;
	__u64 duration_us;	/* the copy's workload, 1 .. max_duration_us */
	__u64 timeout_ms;
	__u64 seqno;		/* out: its fence; in: 0 */
	__u64 result;		/* out: 0 or -errno; in: 0 */
};

#define GVT_GPU_COPY_MAX		65536

#define GVT_GPU_IOC_MAGIC		'G'
#define GVT_GPU_IOC_INFO	_IOR(GVT_GPU_IOC_MAGIC, 0xa0, struct gvt_gpu_info)
#define GVT_GPU_IOC_SUBMIT	_IOWR(GVT_GPU_IOC_MAGIC, 0xa1, struct gvt_gpu_submit)
#define GVT_GPU_IOC_WAIT	_IOWR(GVT_GPU_IOC_MAGIC, 0xa2, struct gvt_gpu_wait)
#define GVT_GPU_IOC_STATS	_IOR(GVT_GPU_IOC_MAGIC, 0xa3, struct gvt_gpu_stats)
/* Reset the vGPU (recovers a failed one); outstanding fences are lost. */
#define GVT_GPU_IOC_RESET	_IO(GVT_GPU_IOC_MAGIC, 0xa4)
#define GVT_GPU_IOC_SUBMIT_RAW	_IOWR(GVT_GPU_IOC_MAGIC, 0xa5, struct gvt_gpu_submit_raw)
#define GVT_GPU_IOC_COPY	_IOWR(GVT_GPU_IOC_MAGIC, 0xa6, struct gvt_gpu_copy)

#endif /* GVT_RS_GUEST_H */
