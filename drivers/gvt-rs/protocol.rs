// SPDX-License-Identifier: GPL-2.0

//! The simulated vGPU's device protocol, version 3, as the device model
//! (`sim/`, in `gvt_rs.ko`) and the guest driver (`guest/`, in
//! `gvt_rs_guest.ko`) use it. Both crates include this one file.
//!
//! The numbers are defined once, in `include/uapi/linux/gvt_rs_sim.h`, which
//! user space includes as `<linux/gvt_rs_sim.h>` and bindgen brings in as
//! [`kernel::uapi`]. This file gives them Rust types; the registers with
//! fields are typed with [`kernel::io::register!`] and their offsets checked
//! against the header at build time, so neither side can drift from it.
//! `Documentation/gvt-rs/simulated-gpu.rst` has the prose.

use kernel::uapi;

/// A protocol number as a `u16`; a build error if it does not fit.
const fn to_u16(v: u32) -> u16 {
    if v > u16::MAX as u32 {
        kernel::build_error!("a protocol number does not fit 16 bits");
    }
    // CAST: checked above.
    v as u16
}

/// A protocol number as a `usize` (offsets and sizes).
const fn to_usize(v: u32) -> usize {
    // CAST: `usize` holds every `u32` on the architectures with GVT-g.
    v as usize
}

/// PCI vendor id of a vGPU: Red Hat's QEMU vendor id, whose device ids
/// 10f0-10ff are set aside for experimental devices (the header explains
/// the choice).
pub const PCI_VENDOR: u16 = to_u16(uapi::GVT_SIM_PCI_VENDOR);
/// PCI device id of a vGPU.
pub const PCI_DEVICE: u16 = to_u16(uapi::GVT_SIM_PCI_DEVICE);
/// PCI subsystem vendor id; the subsystem id is the vGPU type's index + 1.
pub const PCI_SUBSYSTEM_VENDOR: u16 = to_u16(uapi::GVT_SIM_PCI_SUBSYSTEM_VENDOR);
/// PCI class code (base, sub-class, programming interface).
pub const PCI_CLASS: u32 = uapi::GVT_SIM_PCI_CLASS;

/// Size of BAR0 in bytes.
pub const BAR0_SIZE: usize = to_usize(uapi::GVT_SIM_BAR0_SIZE);
/// `ID` register value: "GVTS".
pub const DEVICE_MAGIC: u32 = uapi::GVT_SIM_MAGIC;
/// The protocol version: rings in guest memory (2), and copies of guest
/// memory, [`OP_COPY`] (3).
pub const PROTOCOL_VERSION: u32 = uapi::GVT_SIM_VERSION;

// BAR0 register offsets; registers are 4 bytes wide unless said otherwise.
/// RO: [`DEVICE_MAGIC`].
pub const REG_ID: usize = to_usize(uapi::GVT_SIM_REG_ID);
/// RO: [`PROTOCOL_VERSION`].
pub const REG_VERSION: usize = to_usize(uapi::GVT_SIM_REG_VERSION);
/// RO: number of engines.
pub const REG_ENGINES: usize = to_usize(uapi::GVT_SIM_REG_ENGINES);
/// RO: the vGPU's id on its GPU.
pub const REG_VGPU_ID: usize = to_usize(uapi::GVT_SIM_REG_VGPU_ID);
/// RO: [`STATUS`] bits.
pub const REG_STATUS: usize = to_usize(uapi::GVT_SIM_REG_STATUS);
/// RO: [`RING_MAX`].
pub const REG_RING_MAX: usize = to_usize(uapi::GVT_SIM_REG_RING_MAX);
/// RO: descriptors accepted since open or reset.
pub const REG_SUBMITTED: usize = to_usize(uapi::GVT_SIM_REG_SUBMITTED);
/// RO: descriptors completed since open or reset.
pub const REG_COMPLETED: usize = to_usize(uapi::GVT_SIM_REG_COMPLETED);
/// RO: the [`FAULT`] word; 0 while not failed.
pub const REG_FAULT: usize = to_usize(uapi::GVT_SIM_REG_FAULT);
/// RO: longest accepted workload, us.
pub const REG_MAX_DURATION: usize = to_usize(uapi::GVT_SIM_REG_MAX_DURATION);
/// RO: low graphics memory of the vGPU type, MB.
pub const REG_GM_LOW: usize = to_usize(uapi::GVT_SIM_REG_GM_LOW);
/// RO: high graphics memory of the vGPU type, MB.
pub const REG_GM_HIGH: usize = to_usize(uapi::GVT_SIM_REG_GM_HIGH);
/// RO, 8 bytes: GPU time of completed workloads, ns.
pub const REG_BUSY_NS: usize = to_usize(uapi::GVT_SIM_REG_BUSY_NS);
/// RW1C: interrupt causes, [`IRQ`] bits.
pub const REG_IRQ_STATUS: usize = to_usize(uapi::GVT_SIM_REG_IRQ_STATUS);
/// RW: enabled interrupt causes, [`IRQ`] bits.
pub const REG_IRQ_ENABLE: usize = to_usize(uapi::GVT_SIM_REG_IRQ_ENABLE);
/// RW, 8 bytes: guest address of the status page (bits 11:0 read as 0).
pub const REG_STATUS_PAGE: usize = to_usize(uapi::GVT_SIM_REG_STATUS_PAGE);
/// WO: writing bit 0 resets the device.
pub const REG_RESET: usize = to_usize(uapi::GVT_SIM_REG_RESET);
/// RO: [`COPY_MAX`], the longest copy.
pub const REG_COPY_MAX: usize = to_usize(uapi::GVT_SIM_REG_COPY_MAX);
/// RW: entry within the vGPU's high-GM range.
pub const REG_GTT_INDEX: usize = to_usize(uapi::GVT_SIM_REG_GTT_INDEX);
/// RW, 8 bytes: the GTT entry at `GTT_INDEX`.
pub const REG_GTT_DATA: usize = to_usize(uapi::GVT_SIM_REG_GTT_DATA);

/// Ring registers of engine 0; engine `e`'s are `RING_STRIDE * e` further.
pub const REG_RING0: usize = to_usize(uapi::GVT_SIM_REG_RING0);
/// Bytes between two engines' ring registers.
pub const RING_STRIDE: usize = to_usize(uapi::GVT_SIM_RING_STRIDE);
/// RW, 8 bytes: guest address of descriptor 0, page aligned.
pub const RING_BASE: usize = to_usize(uapi::GVT_SIM_RING_BASE);
/// RW: descriptors in the ring, a power of two from 2 to [`RING_MAX`].
pub const RING_SIZE: usize = to_usize(uapi::GVT_SIM_RING_SIZE);
/// RW: [`RING_CTL_ENABLE`].
pub const RING_CTL: usize = to_usize(uapi::GVT_SIM_RING_CTL);
/// RO: the oldest descriptor not completed.
pub const RING_HEAD: usize = to_usize(uapi::GVT_SIM_RING_HEAD);
/// RW, the doorbell: one past the newest descriptor.
pub const RING_TAIL: usize = to_usize(uapi::GVT_SIM_RING_TAIL);

/// Offset of ring register `reg` (one of the `RING_*` offsets) of `engine`
/// (`GVT_SIM_REG_RING(e)` of the header).
pub const fn ring_reg(engine: usize, reg: usize) -> usize {
    REG_RING0 + RING_STRIDE * engine + reg
}

/// `RING_CTL` bit: the ring is enabled.
pub const RING_CTL_ENABLE: u32 = uapi::GVT_SIM_RING_CTL_ENABLE;
/// Largest ring, in descriptors.
pub const RING_MAX: u32 = uapi::GVT_SIM_RING_MAX;

/// `STATUS` bit: work outstanding.
pub const STATUS_BUSY: u32 = uapi::GVT_SIM_STATUS_BUSY;
/// `STATUS` bit: the vGPU is started.
pub const STATUS_SCHEDULED: u32 = uapi::GVT_SIM_STATUS_SCHEDULED;
/// `STATUS` bit: failed until a reset.
pub const STATUS_FAILED: u32 = uapi::GVT_SIM_STATUS_FAILED;

/// `IRQ_STATUS`/`IRQ_ENABLE` bit of a completion on `engine`
/// (`GVT_SIM_IRQ_ENGINE(e)` of the header).
pub const fn irq_engine(engine: usize) -> u32 {
    1 << engine
}

/// `IRQ_STATUS`/`IRQ_ENABLE` bit of a fault.
pub const IRQ_FAULT: u32 = uapi::GVT_SIM_IRQ_FAULT;

/// Size of a descriptor in guest memory, bytes.
pub const DESC_SIZE: usize = to_usize(uapi::GVT_SIM_DESC_SIZE);
/// Opcode "run a workload".
pub const OP_EXEC: u32 = uapi::GVT_SIM_OP_EXEC;
/// Opcode "copy guest memory": a workload that also copies what the copy
/// block at the descriptor's last 8 bytes says.
pub const OP_COPY: u32 = uapi::GVT_SIM_OP_COPY;
/// Descriptor flag: interrupt on completion.
pub const DESC_IRQ: u32 = uapi::GVT_SIM_DESC_IRQ;

/// Guest pages (ring and status page alignment, status page size), bytes.
pub const PAGE_BYTES: usize = to_usize(uapi::GVT_SIM_PAGE_SIZE);
/// Bytes between two engines' records in the status page.
pub const STATUS_STRIDE: usize = to_usize(uapi::GVT_SIM_STATUS_STRIDE);
/// Bytes of one record: seqno, completed, GPU ns, head.
pub const STATUS_RECORD: usize = to_usize(uapi::GVT_SIM_STATUS_RECORD);

/// Size of a copy block (`struct gvt_sim_copy`) in guest memory, bytes; its
/// guest address is aligned to it, so a block never crosses a page.
pub const COPY_BLOCK: usize = to_usize(uapi::GVT_SIM_COPY_SIZE);
/// Longest copy, bytes.
pub const COPY_MAX: u32 = uapi::GVT_SIM_COPY_MAX;

/// Fault reasons, the low byte of the [`FAULT`] word.
pub mod fault {
    use kernel::uapi;

    /// A ring enabled with a bad base or size.
    pub const RING_CONFIG: u8 = reason(uapi::GVT_SIM_FAULT_RING_CONFIG);
    /// A doorbell on a disabled ring.
    pub const RING_DISABLED: u8 = reason(uapi::GVT_SIM_FAULT_RING_DISABLED);
    /// `TAIL` out of the ring, or behind what was fetched.
    pub const TAIL_RANGE: u8 = reason(uapi::GVT_SIM_FAULT_TAIL_RANGE);
    /// A descriptor's address not mapped.
    pub const FETCH: u8 = reason(uapi::GVT_SIM_FAULT_FETCH);
    /// An unknown opcode.
    pub const OPCODE: u8 = reason(uapi::GVT_SIM_FAULT_OPCODE);
    /// An unknown flag or a reserved field set.
    pub const RESERVED: u8 = reason(uapi::GVT_SIM_FAULT_RESERVED);
    /// A duration of 0 or over `MAX_DURATION`.
    pub const DURATION: u8 = reason(uapi::GVT_SIM_FAULT_DURATION);
    /// The status page not mapped.
    pub const STATUS_WRITE: u8 = reason(uapi::GVT_SIM_FAULT_STATUS_WRITE);
    /// A copy block misaligned or not mapped.
    pub const COPY_BLOCK: u8 = reason(uapi::GVT_SIM_FAULT_COPY_BLOCK);
    /// A copy's length, ranges or reserved fields bad.
    pub const COPY_BAD: u8 = reason(uapi::GVT_SIM_FAULT_COPY_BAD);
    /// A copy's source or destination not mapped.
    pub const COPY_DMA: u8 = reason(uapi::GVT_SIM_FAULT_COPY_DMA);

    /// A reason as its byte; a build error if it does not fit.
    const fn reason(v: u32) -> u8 {
        if v == 0 || v > u8::MAX as u32 {
            kernel::build_error!("a fault reason is 1 to 255");
        }
        // CAST: checked above.
        v as u8
    }
}

/// The registers with fields, typed with [`kernel::io::register!`]: read
/// and written whole through an [`kernel::io::Io`] (the guest driver's
/// BAR0), or built from and turned into their `u32` (the device model).
pub mod reg {
    // The macro's constants of each field (its range, mask and shift) carry
    // no documentation; the registers and their fields do.
    #![allow(missing_docs)]

    use kernel::io::register;

    register! {
        /// `STATUS`: the vGPU's state.
        pub STATUS(u32) @ 0x010 {
            /// Failed until a reset.
            2:2 failed => bool;
            /// The vGPU is started.
            1:1 scheduled => bool;
            /// Work outstanding.
            0:0 busy => bool;
        }

        /// `FAULT`: why, where and at which descriptor the vGPU failed; 0 while
        /// it has not.
        pub FAULT(u32) @ 0x020 {
            /// The descriptor's index in its ring.
            31:16 index;
            /// The engine.
            15:8 engine;
            /// The reason, one of [`super::fault`].
            7:0 reason;
        }

        /// `IRQ_STATUS`: interrupt causes, write 1 to clear.
        pub IRQ_STATUS(u32) @ 0x038 {
            /// The vGPU failed.
            8:8 fault => bool;
            /// A completion on engine 1 (blitter).
            1:1 engine1 => bool;
            /// A completion on engine 0 (render).
            0:0 engine0 => bool;
        }

        /// `IRQ_ENABLE`: the interrupt causes that are raised.
        pub IRQ_ENABLE(u32) @ 0x03c {
            /// On a fault.
            8:8 fault => bool;
            /// On a completion on engine 1.
            1:1 engine1 => bool;
            /// On a completion on engine 0.
            0:0 engine0 => bool;
        }

        /// `RESET`: writing bit 0 resets the device.
        pub RESET(u32) @ 0x048 {
            /// Reset.
            0:0 reset => bool;
        }
    }
}

pub use reg::{
    FAULT,
    IRQ_ENABLE,
    IRQ_STATUS,
    RESET,
    STATUS, //
};

// The typed registers are the header's: their offsets and bits, checked.
const _: () = {
    use kernel::io::register::Register;

    assert!(STATUS::OFFSET == REG_STATUS);
    assert!(FAULT::OFFSET == REG_FAULT);
    assert!(IRQ_STATUS::OFFSET == REG_IRQ_STATUS);
    assert!(IRQ_ENABLE::OFFSET == REG_IRQ_ENABLE);
    assert!(RESET::OFFSET == REG_RESET);
    assert!(STATUS_FAILED == 1 << 2 && STATUS_SCHEDULED == 1 << 1 && STATUS_BUSY == 1);
    assert!(uapi::GVT_SIM_FAULT_ENGINE_SHIFT == 8 && uapi::GVT_SIM_FAULT_INDEX_SHIFT == 16);
    assert!(IRQ_FAULT == 1 << 8);
    assert!(REG_RING0 + RING_STRIDE == ring_reg(1, 0));
    assert!(core::mem::size_of::<uapi::gvt_sim_desc>() == DESC_SIZE);
    assert!(core::mem::size_of::<uapi::gvt_sim_copy>() == COPY_BLOCK);
    assert!(core::mem::size_of::<uapi::gvt_sim_engine_status>() == STATUS_RECORD);
};
