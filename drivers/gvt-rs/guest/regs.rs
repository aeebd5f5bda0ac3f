// SPDX-License-Identifier: GPL-2.0

//! BAR0 registers, descriptors and the status page of the simulated vGPU.
//!
//! The numbers and typed registers come from `crate::protocol`
//! (`drivers/gvt-rs/protocol.rs`, from `include/uapi/linux/gvt_rs_sim.h`),
//! which the device model shares; this file adds what only the driver needs.

pub(crate) use crate::protocol::{
    irq_engine,
    ring_reg,
    BAR0_SIZE,
    COPY_MAX,
    DESC_IRQ,
    DESC_SIZE,
    DEVICE_MAGIC,
    FAULT,
    IRQ_FAULT,
    IRQ_STATUS,
    OP_COPY,
    OP_EXEC,
    PAGE_BYTES,
    PROTOCOL_VERSION,
    REG_COPY_MAX,
    REG_ENGINES,
    REG_GM_HIGH,
    REG_GM_LOW,
    REG_ID,
    REG_IRQ_ENABLE,
    REG_IRQ_STATUS,
    REG_MAX_DURATION,
    REG_RING_MAX,
    REG_STATUS_PAGE,
    REG_VERSION,
    REG_VGPU_ID,
    RESET,
    RING_BASE,
    RING_CTL,
    RING_CTL_ENABLE,
    RING_SIZE,
    RING_TAIL,
    STATUS, //
};

/// Engines this driver drives at most (`ENGINES` may report more).
pub(crate) const MAX_ENGINES: usize = 2;

/// `u64` words per descriptor.
pub(crate) const DESC_WORDS: usize = DESC_SIZE / 8;
/// `u64` words in the status page.
pub(crate) const PAGE_WORDS: usize = PAGE_BYTES / 8;
/// `u64` words between two engines' records in the status page.
pub(crate) const STATUS_STRIDE_WORDS: usize = crate::protocol::STATUS_STRIDE / 8;
/// The largest ring this driver uses: one page of descriptors.
pub(crate) const RING_LIMIT: u32 = (PAGE_BYTES / DESC_SIZE) as u32;
/// The longest copy this driver offers (`GVT_GPU_COPY_MAX`), bytes: its
/// source and destination buffers in DMA memory.
pub(crate) const GUEST_COPY_MAX: usize = 64 * 1024;
const _: () = assert!(GUEST_COPY_MAX <= COPY_MAX as usize);

/// A descriptor as the four little-endian `u64` words it occupies in the ring.
pub(crate) struct Desc(pub(crate) [u64; DESC_WORDS]);

impl Desc {
    /// A well-formed workload descriptor.
    pub(crate) fn exec(flags: u32, seqno: u32, duration_us: u32, bytes: u32) -> Self {
        Self([
            u64::from(OP_EXEC) | u64::from(flags) << 32,
            u64::from(seqno) | u64::from(duration_us) << 32,
            u64::from(bytes),
            0,
        ])
    }

    /// A copy descriptor: a workload that copies what the copy block at
    /// guest address `block` says.
    pub(crate) fn copy(flags: u32, seqno: u32, duration_us: u32, block: u64) -> Self {
        Self([
            u64::from(OP_COPY) | u64::from(flags) << 32,
            u64::from(seqno) | u64::from(duration_us) << 32,
            0,
            block,
        ])
    }

    /// A descriptor from its raw words (as read from memory, little
    /// endian), with `seqno` put in its seqno field.
    pub(crate) fn raw(le_words: &[u64; DESC_WORDS], seqno: u32) -> Self {
        let [w0, w1, w2, w3] = le_words.map(u64::from_le);
        // The seqno is bytes 8-11: the low half of word 1.
        Self([w0, (w1 & !0xffff_ffff) | u64::from(seqno), w2, w3])
    }
}

/// One engine's record in the status page, as the device wrote it.
#[derive(Clone, Copy, Default)]
pub(crate) struct EngineStatus {
    /// Seqno of the last completed descriptor.
    pub(crate) seqno: u32,
    /// Descriptors completed since the ring was enabled.
    pub(crate) completed: u32,
    /// GPU time of those, ns.
    pub(crate) gpu_ns: u64,
    /// `HEAD` after that completion.
    pub(crate) head: u32,
}

/// Whether fence `seqno` has been reached by `current`, with wraparound.
pub(crate) fn seqno_reached(current: u32, seqno: u32) -> bool {
    // CAST: the difference of two seqnos read as signed is their distance.
    current.wrapping_sub(seqno) as i32 >= 0
}
