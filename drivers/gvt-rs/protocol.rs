// SPDX-License-Identifier: GPL-2.0

//! The simulated vGPU's device protocol, version 3: the numbers that the
//! device model (`sim/`, in `gvt_rs.ko`) and the guest driver (`guest/`, in
//! `gvt_rs_guest.ko`) share. Both crates include this one file, so the two
//! sides cannot drift apart; user space has the same numbers in
//! `tools/testing/selftests/drivers/gvt_rs/gvt_sim_dev.h`, and
//! `Documentation/gvt-rs/simulated-gpu.rst` has the prose.

/// PCI vendor id of a vGPU.
pub const PCI_VENDOR: u16 = 0x8086;
/// PCI device id of a vGPU.
pub const PCI_DEVICE: u16 = 0x7a5a;

/// Size of BAR0 in bytes.
pub const BAR0_SIZE: usize = 4096;
/// `ID` register value: "GVTS".
pub const DEVICE_MAGIC: u32 = 0x5354_5647;
/// The protocol version: rings in guest memory (2), and copies of guest
/// memory, [`OP_COPY`] (3).
pub const PROTOCOL_VERSION: u32 = 3;

// BAR0 register offsets; registers are 4 bytes wide unless said otherwise.
/// RO: [`DEVICE_MAGIC`].
pub const REG_ID: usize = 0x000;
/// RO: [`PROTOCOL_VERSION`].
pub const REG_VERSION: usize = 0x004;
/// RO: number of engines.
pub const REG_ENGINES: usize = 0x008;
/// RO: the vGPU's id on its GPU.
pub const REG_VGPU_ID: usize = 0x00c;
/// RO: `STATUS_*` bits.
pub const REG_STATUS: usize = 0x010;
/// RO: [`RING_MAX`].
pub const REG_RING_MAX: usize = 0x014;
/// RO: descriptors accepted since open or reset.
pub const REG_SUBMITTED: usize = 0x018;
/// RO: descriptors completed since open or reset.
pub const REG_COMPLETED: usize = 0x01c;
/// RO: reason (bits 0-7), engine (8-15) and descriptor index (16-31) of
/// the fault; 0 while not failed.
pub const REG_FAULT: usize = 0x020;
/// RO: longest accepted workload, us.
pub const REG_MAX_DURATION: usize = 0x024;
/// RO: low graphics memory of the vGPU type, MB.
pub const REG_GM_LOW: usize = 0x028;
/// RO: high graphics memory of the vGPU type, MB.
pub const REG_GM_HIGH: usize = 0x02c;
/// RO, 8 bytes: GPU time of completed workloads, ns.
pub const REG_BUSY_NS: usize = 0x030;
/// RW1C: interrupt causes, [`irq_engine`] bits and [`IRQ_FAULT`].
pub const REG_IRQ_STATUS: usize = 0x038;
/// RW: enabled interrupt causes.
pub const REG_IRQ_ENABLE: usize = 0x03c;
/// RW, 8 bytes: guest address of the status page (bits 11:0 read as 0).
pub const REG_STATUS_PAGE: usize = 0x040;
/// WO: writing bit 0 resets the device.
pub const REG_RESET: usize = 0x048;
/// RO: [`COPY_MAX`], the longest copy.
pub const REG_COPY_MAX: usize = 0x054;
/// RW: entry within the vGPU's high-GM range.
pub const REG_GTT_INDEX: usize = 0x060;
/// RW, 8 bytes: the GTT entry at `GTT_INDEX`.
pub const REG_GTT_DATA: usize = 0x068;

/// Ring registers of engine 0; engine `e`'s are `RING_STRIDE * e` further.
pub const REG_RING0: usize = 0x100;
/// Bytes between two engines' ring registers.
pub const RING_STRIDE: usize = 0x20;
/// RW, 8 bytes: guest address of descriptor 0, page aligned.
pub const RING_BASE: usize = 0x00;
/// RW: descriptors in the ring, a power of two from 2 to [`RING_MAX`].
pub const RING_SIZE: usize = 0x08;
/// RW: [`RING_CTL_ENABLE`].
pub const RING_CTL: usize = 0x0c;
/// RO: the oldest descriptor not completed.
pub const RING_HEAD: usize = 0x10;
/// RW, the doorbell: one past the newest descriptor.
pub const RING_TAIL: usize = 0x14;

/// Offset of ring register `reg` (one of the `RING_*` offsets) of `engine`.
pub const fn ring_reg(engine: usize, reg: usize) -> usize {
    REG_RING0 + RING_STRIDE * engine + reg
}

/// `RING_CTL` bit: the ring is enabled.
pub const RING_CTL_ENABLE: u32 = 1 << 0;
/// Largest ring, in descriptors.
pub const RING_MAX: u32 = 64;

/// `STATUS` bit: work outstanding.
pub const STATUS_BUSY: u32 = 1 << 0;
/// `STATUS` bit: the vGPU is started.
pub const STATUS_SCHEDULED: u32 = 1 << 1;
/// `STATUS` bit: failed until a reset.
pub const STATUS_FAILED: u32 = 1 << 2;

/// `IRQ_STATUS`/`IRQ_ENABLE` bit of a completion on `engine`.
pub const fn irq_engine(engine: usize) -> u32 {
    1 << engine
}

/// `IRQ_STATUS`/`IRQ_ENABLE` bit of a fault.
pub const IRQ_FAULT: u32 = 1 << 8;

/// Size of a descriptor in guest memory, bytes.
pub const DESC_SIZE: usize = 32;
/// Opcode "run a workload".
pub const OP_EXEC: u32 = 1;
/// Opcode "copy guest memory": a workload that also copies what the copy
/// block at the descriptor's last 8 bytes says.
pub const OP_COPY: u32 = 2;
/// Descriptor flag: interrupt on completion.
pub const DESC_IRQ: u32 = 1 << 0;

/// Guest pages (ring and status page alignment, status page size), bytes.
pub const PAGE_BYTES: usize = 4096;
/// Bytes between two engines' records in the status page.
pub const STATUS_STRIDE: usize = 64;
/// Bytes of one record: seqno, completed, GPU ns, head.
pub const STATUS_RECORD: usize = 24;

/// Size of a copy block (`struct gvt_sim_copy`) in guest memory, bytes; its
/// guest address is aligned to it, so a block never crosses a page.
pub const COPY_BLOCK: usize = 32;
/// Longest copy, bytes.
pub const COPY_MAX: u32 = 1 << 20;
