// SPDX-License-Identifier: GPL-2.0

//! BAR0 registers, descriptors and the status page of the simulated vGPU.
//!
//! The numbers mirror `tools/testing/selftests/drivers/gvt_rs/gvt_sim_dev.h`
//! (protocol version 2), which is the reference;
//! `Documentation/gvt-rs/simulated-gpu.rst` has the prose.

/// Size of BAR0 in bytes.
pub(crate) const BAR0_SIZE: usize = 4096;

/// `ID` register value: "GVTS".
pub(crate) const DEVICE_MAGIC: u32 = 0x5354_5647;
/// The protocol version this driver speaks.
pub(crate) const PROTOCOL_VERSION: u32 = 2;

pub(crate) const REG_ID: usize = 0x000;
pub(crate) const REG_VERSION: usize = 0x004;
pub(crate) const REG_ENGINES: usize = 0x008;
pub(crate) const REG_VGPU_ID: usize = 0x00c;
pub(crate) const REG_STATUS: usize = 0x010;
pub(crate) const REG_RING_MAX: usize = 0x014;
pub(crate) const REG_FAULT: usize = 0x020;
pub(crate) const REG_MAX_DURATION: usize = 0x024;
pub(crate) const REG_GM_LOW: usize = 0x028;
pub(crate) const REG_GM_HIGH: usize = 0x02c;
pub(crate) const REG_IRQ_STATUS: usize = 0x038;
pub(crate) const REG_IRQ_ENABLE: usize = 0x03c;
/// Status page address, low half; the high half follows at `+ 4`.
pub(crate) const REG_STATUS_PAGE: usize = 0x040;
pub(crate) const REG_RESET: usize = 0x048;

/// Offset of ring register `reg` (one of the `RING_*` offsets) of `engine`.
pub(crate) const fn ring_reg(engine: usize, reg: usize) -> usize {
    0x100 + 0x20 * engine + reg
}

/// Ring base address, low half; the high half follows at `+ 4`.
pub(crate) const RING_BASE: usize = 0x00;
pub(crate) const RING_SIZE: usize = 0x08;
pub(crate) const RING_CTL: usize = 0x0c;
pub(crate) const RING_TAIL: usize = 0x14;

pub(crate) const RING_CTL_ENABLE: u32 = 1 << 0;

pub(crate) const STATUS_FAILED: u32 = 1 << 2;

/// `IRQ_STATUS`/`IRQ_ENABLE` bit of a completion on `engine`.
pub(crate) const fn irq_engine(engine: usize) -> u32 {
    1 << engine
}

/// `IRQ_STATUS`/`IRQ_ENABLE` bit of a fault.
pub(crate) const IRQ_FAULT: u32 = 1 << 8;

/// Engines this driver drives at most (`ENGINES` may report more).
pub(crate) const MAX_ENGINES: usize = 2;

/// Size of a descriptor in bytes.
pub(crate) const DESC_SIZE: usize = 32;
/// `u64` words per descriptor.
pub(crate) const DESC_WORDS: usize = DESC_SIZE / 8;
/// Opcode "run a workload".
pub(crate) const OP_EXEC: u32 = 1;
/// Descriptor flag: interrupt on completion.
pub(crate) const DESC_IRQ: u32 = 1 << 0;

/// Size of the status page and of a ring allocation, bytes.
pub(crate) const PAGE_BYTES: usize = 4096;
/// `u64` words in the status page.
pub(crate) const PAGE_WORDS: usize = PAGE_BYTES / 8;
/// `u64` words between two engines' records in the status page.
pub(crate) const STATUS_STRIDE_WORDS: usize = 64 / 8;
/// The largest ring this driver uses: one page of descriptors.
pub(crate) const RING_LIMIT: u32 = (PAGE_BYTES / DESC_SIZE) as u32;

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
