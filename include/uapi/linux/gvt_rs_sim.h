/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The gvt-rs simulated vGPU's device protocol (version 3): the one
 * definition of its PCI identity, BAR0 registers, ring descriptors, copy
 * blocks and status page. The device model (drivers/gvt-rs/sim/) and the
 * guest driver (drivers/gvt-rs/guest/) use it through bindgen
 * (kernel::uapi), with their typed registers checked against it at build
 * time; guest software in user space (a VMM's device model, the selftests'
 * VFIO clients) includes it as <linux/gvt_rs_sim.h>.
 * Documentation/gvt-rs/simulated-gpu.rst has the prose.
 *
 * Work is submitted as on GVT-g: the guest writes 32-byte descriptors into
 * a ring buffer in its own memory and moves the ring's TAIL register (the
 * doorbell). The device fetches and scans the new descriptors (DMA reads of
 * guest memory), queues them on the vGPU's V-Channel for that engine, and on
 * each completion writes the fence seqno, count and GPU time to a status
 * page in guest memory, advances HEAD, then raises MSI or INTx.
 *
 * Version 3 adds copies of guest memory (GVT_SIM_OP_COPY, GVT_SIM_REG_COPY_MAX);
 * everything of version 2 is unchanged. A guest that copies checks
 * GVT_SIM_REG_VERSION >= 3.
 */
#ifndef _UAPI_LINUX_GVT_RS_SIM_H
#define _UAPI_LINUX_GVT_RS_SIM_H

#include <linux/types.h>

/*
 * PCI identity. The simulated vGPU is a test device, not Intel hardware:
 * it takes its ID from the range that Red Hat set aside in its QEMU vendor
 * ID for experimental devices (1af4:10f0-10ff, QEMU's
 * docs/specs/pci-ids.rst), which no shipped device uses, so no real
 * device's driver (i915, virtio-pci) claims it in a guest and no real
 * device's quirks apply to it. An ID from that range is for the test lab:
 * a simulated vGPU offered to production guests would need an ID of its
 * own. Subsystem: the same vendor, and the vGPU type's index + 1.
 * Software confirms the device by GVT_SIM_REG_ID reading GVT_SIM_MAGIC.
 */
#define GVT_SIM_PCI_VENDOR		0x1af4
#define GVT_SIM_PCI_DEVICE		0x10f0
#define GVT_SIM_PCI_SUBSYSTEM_VENDOR	0x1af4
#define GVT_SIM_PCI_CLASS		0x038000	/* display, other */

#define GVT_SIM_BAR0_SIZE		4096
#define GVT_SIM_MAGIC			0x53545647	/* REG_ID: "GVTS" */
#define GVT_SIM_VERSION			3	/* REG_VERSION, PCI revision */

/*
 * BAR0 registers, little endian. RO: read only, RW1C: write 1 to clear.
 * An access is naturally aligned, of 1, 2, 4 or 8 bytes (anything else
 * fails with EINVAL). One inside a register reads or writes it; the device
 * ignores the others, as hardware does: an unknown offset, an access across
 * two registers, a write to a read-only register or a GTT index past the
 * vGPU's high GM change nothing and read 0. The host counts them per vGPU
 * (sysfs ignored_accesses) and logs none.
 */
#define GVT_SIM_REG_ID			0x000	/* 4 RO "GVTS" */
#define GVT_SIM_REG_VERSION		0x004	/* 4 RO GVT_SIM_VERSION */
#define GVT_SIM_REG_ENGINES		0x008	/* 4 RO number of engines */
#define GVT_SIM_REG_VGPU_ID		0x00c	/* 4 RO */
#define GVT_SIM_REG_STATUS		0x010	/* 4 RO GVT_SIM_STATUS_* */
#define GVT_SIM_REG_RING_MAX		0x014	/* 4 RO largest ring, descriptors */
#define GVT_SIM_REG_SUBMITTED		0x018	/* 4 RO descriptors accepted */
#define GVT_SIM_REG_COMPLETED		0x01c	/* 4 RO descriptors completed */
#define GVT_SIM_REG_FAULT		0x020	/* 4 RO GVT_SIM_FAULT_* word */
#define GVT_SIM_REG_MAX_DURATION	0x024	/* 4 RO longest duration, us */
#define GVT_SIM_REG_GM_LOW		0x028	/* 4 RO low GM of the type, MB */
#define GVT_SIM_REG_GM_HIGH		0x02c	/* 4 RO high GM of the type, MB */
#define GVT_SIM_REG_BUSY_NS		0x030	/* 8 RO GPU time completed, ns */
#define GVT_SIM_REG_IRQ_STATUS		0x038	/* 4 RW1C GVT_SIM_IRQ_* */
#define GVT_SIM_REG_IRQ_ENABLE		0x03c	/* 4 RW GVT_SIM_IRQ_* */
#define GVT_SIM_REG_STATUS_PAGE		0x040	/* 8 RW guest address, 4K aligned */
#define GVT_SIM_REG_RESET		0x048	/* 4 WO write 1: device reset */
#define GVT_SIM_REG_COPY_MAX		0x054	/* 4 RO longest copy, bytes (v3) */
#define GVT_SIM_REG_GTT_INDEX		0x060	/* 4 RW entry in the high-GM range */
#define GVT_SIM_REG_GTT_DATA		0x068	/* 8 RW the entry at GTT_INDEX */

/* Ring registers of engine e at GVT_SIM_REG_RING(e) + GVT_SIM_RING_*. */
#define GVT_SIM_REG_RING0		0x100
#define GVT_SIM_RING_STRIDE		0x20
#define GVT_SIM_REG_RING(e)		(GVT_SIM_REG_RING0 + GVT_SIM_RING_STRIDE * (e))
#define GVT_SIM_RING_BASE		0x00	/* 8 RW guest address, 4K aligned */
#define GVT_SIM_RING_SIZE		0x08	/* 4 RW descriptors, 2^n, 2..RING_MAX */
#define GVT_SIM_RING_CTL		0x0c	/* 4 RW bit 0: enable */
#define GVT_SIM_RING_HEAD		0x10	/* 4 RO oldest not completed */
#define GVT_SIM_RING_TAIL		0x14	/* 4 RW doorbell: one past newest */

#define GVT_SIM_RING_CTL_ENABLE		(1u << 0)
#define GVT_SIM_RING_MAX		64	/* REG_RING_MAX: descriptors */

#define GVT_SIM_STATUS_BUSY		(1u << 0)	/* work queued or running */
#define GVT_SIM_STATUS_SCHEDULED	(1u << 1)	/* vGPU is started */
#define GVT_SIM_STATUS_FAILED		(1u << 2)	/* failsafe: reset to recover */

/* IRQ_STATUS / IRQ_ENABLE bits. */
#define GVT_SIM_IRQ_ENGINE(e)		(1u << (e))	/* a completion on engine e */
#define GVT_SIM_IRQ_FAULT		(1u << 8)	/* the vGPU failed */

/*
 * FAULT register: reason in bits 0-7, engine in bits 8-15, descriptor
 * index in the ring in bits 16-31. 0 while the vGPU has not failed.
 */
#define GVT_SIM_FAULT_ENGINE_SHIFT	8
#define GVT_SIM_FAULT_INDEX_SHIFT	16
#define GVT_SIM_FAULT_REASON(f)		((f) & 0xff)
#define GVT_SIM_FAULT_ENGINE(f)		(((f) >> GVT_SIM_FAULT_ENGINE_SHIFT) & 0xff)
#define GVT_SIM_FAULT_INDEX(f)		((f) >> GVT_SIM_FAULT_INDEX_SHIFT)

/* Fault reasons. */
#define GVT_SIM_FAULT_NONE		0
#define GVT_SIM_FAULT_RING_CONFIG	1	/* enable with bad base or size */
#define GVT_SIM_FAULT_RING_DISABLED	2	/* doorbell on a disabled ring */
#define GVT_SIM_FAULT_TAIL_RANGE	3	/* TAIL >= size, or behind fetched */
#define GVT_SIM_FAULT_FETCH		4	/* descriptor address not mapped */
#define GVT_SIM_FAULT_OPCODE		5	/* unknown opcode */
#define GVT_SIM_FAULT_RESERVED		6	/* unknown flag or reserved field set */
#define GVT_SIM_FAULT_DURATION		7	/* duration 0 or > MAX_DURATION */
#define GVT_SIM_FAULT_STATUS_WRITE	8	/* status page not mapped */
#define GVT_SIM_FAULT_COPY_BLOCK	9	/* copy block misaligned or not mapped */
#define GVT_SIM_FAULT_COPY_BAD		10	/* copy length, ranges or reserved bad */
#define GVT_SIM_FAULT_COPY_DMA		11	/* copy source/destination not mapped */

/* A descriptor in the ring: 32 bytes, little endian. */
struct gvt_sim_desc {
	__u32 opcode;		/* GVT_SIM_OP_* */
	__u32 flags;		/* GVT_SIM_DESC_* */
	__u32 seqno;		/* fence written to the status page */
	__u32 duration_us;	/* 1 .. MAX_DURATION */
	/* EXEC: bytes the workload moves (PCI-E traffic); COPY: 0 */
	__u32 bytes;
	__u32 reserved0;	/* must be 0 */
	/* COPY: address of its struct gvt_sim_copy, GVT_SIM_COPY_SIZE aligned */
	union {
		__u64 reserved1;	/* EXEC: must be 0 */
		__u64 copy;
	};
};

#define GVT_SIM_DESC_SIZE		32
#define GVT_SIM_OP_EXEC			1	/* run a workload */
#define GVT_SIM_OP_COPY			2	/* run a workload that copies (v3) */
#define GVT_SIM_DESC_IRQ		(1u << 0)	/* interrupt on completion */

/*
 * A copy block (version 3), in guest memory at a descriptor's copy address:
 * length bytes from src to dst, guest addresses. The device reads and scans
 * it when it fetches the descriptor: a block that is misaligned or not
 * mapped (GVT_SIM_FAULT_COPY_BLOCK), a length of 0 or over
 * GVT_SIM_REG_COPY_MAX, a reserved field set, or ranges that wrap past 2^64
 * or overlap (GVT_SIM_FAULT_COPY_BAD) fail the vGPU before anything is
 * queued or written. The copy runs when the workload completes, after its
 * duration, and its data is in dst before the status record that reports
 * the completion is written. A source or destination not mapped then is
 * GVT_SIM_FAULT_COPY_DMA (dst may be partly written; neither that copy nor
 * any later one is reported completed). The device reads the block only at
 * fetch: the guest may reuse it once the doorbell write returned.
 */
struct gvt_sim_copy {
	__u64 src;		/* guest address of the source */
	__u64 dst;		/* guest address of the destination */
	__u32 length;		/* bytes, 1 .. COPY_MAX */
	__u32 reserved0;	/* must be 0 */
	__u64 reserved1;	/* must be 0 */
};

#define GVT_SIM_COPY_SIZE		32
#define GVT_SIM_COPY_MAX		0x100000	/* REG_COPY_MAX today: 1 MB */

/*
 * The status page (4 KB of guest memory), written by the device. Engine e's
 * record is at e * GVT_SIM_STATUS_STRIDE; the device writes it whole before
 * it advances HEAD and raises the interrupt.
 */
struct gvt_sim_engine_status {
	__u32 seqno;		/* seqno of the last completed descriptor */
	__u32 completed;	/* descriptors completed since enable/reset */
	__u64 gpu_ns;		/* GPU time of those, ns */
	__u32 head;		/* HEAD after that completion */
	__u32 pad;
};

#define GVT_SIM_STATUS_STRIDE		64
#define GVT_SIM_STATUS_RECORD		24	/* bytes the device writes */
#define GVT_SIM_PAGE_SIZE		4096

#endif /* _UAPI_LINUX_GVT_RS_SIM_H */
