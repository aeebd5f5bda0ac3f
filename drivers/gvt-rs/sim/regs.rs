// SPDX-License-Identifier: GPL-2.0

//! PCI configuration space and BAR0 registers of a simulated vGPU.
//!
//! Configuration space can be read and written in any size, as QEMU's
//! vfio-pci does (it reads all 256 bytes at once). A BAR0 access is one
//! naturally aligned access of 1, 2, 4 or 8 bytes, as a guest's MMIO reaches
//! the device through QEMU; anything else fails with `EINVAL` and changes
//! nothing. Such an access inside one register reads or writes it; the
//! others (an unknown offset, across two registers, a write to a read-only
//! register) are ignored, read 0 and are counted ([`Taken::Ignored`]), as
//! by hardware: QEMU logs every failed access. What a guest programs
//! wrongly (a bad ring, a malformed descriptor) is not an access error: it
//! puts the vGPU into the failed state ([`super::ring::Fault`]).
//!
//! Protocol: `include/uapi/linux/gvt_rs_sim.h`.

use super::{
    copy::{
        Copies,
        CopyBlock, //
    },
    delivery::Batch,
    ring::{
        status_record,
        Desc,
        Fault,
        GuestRing,
        GUEST_PAGE, //
    },
    vdev::Vgpu,
    SimVgpu,
    Workload,
    ENGINES,
    MAX_DURATION_US,
    TYPES, //
};
// The device protocol, shared with the guest driver, names every register.
use crate::protocol::*;
use kernel::{
    bindings,
    prelude::*,
    vfio::pci::RegionIndex, //
};

/// Size of the configuration space.
pub(super) const CFG_SIZE: usize = 256;

/// `IRQ_STATUS` bits that exist: the fault and one completion per engine.
const IRQ_VALID: u32 = IRQ_FAULT | ((1 << ENGINES) - 1);

// Configuration space layout (`include/uapi/linux/pci_regs.h`).
const CFG_VENDOR_ID: usize = bindings::PCI_VENDOR_ID as usize;
const CFG_DEVICE_ID: usize = bindings::PCI_DEVICE_ID as usize;
const CFG_COMMAND: usize = bindings::PCI_COMMAND as usize;
const CFG_STATUS: usize = bindings::PCI_STATUS as usize;
const CFG_CLASS_REVISION: usize = bindings::PCI_CLASS_REVISION as usize;
const CFG_BAR0: usize = bindings::PCI_BASE_ADDRESS_0 as usize;
const CFG_SUBSYSTEM_VENDOR_ID: usize = bindings::PCI_SUBSYSTEM_VENDOR_ID as usize;
const CFG_SUBSYSTEM_ID: usize = bindings::PCI_SUBSYSTEM_ID as usize;
const CFG_CAP_PTR: usize = bindings::PCI_CAPABILITY_LIST as usize;
const CFG_INT_LINE: usize = bindings::PCI_INTERRUPT_LINE as usize;
const CFG_INT_PIN: usize = bindings::PCI_INTERRUPT_PIN as usize;
/// The MSI capability, the only one.
const CFG_MSI: usize = 0x40;
const CFG_MSI_FLAGS: usize = CFG_MSI + bindings::PCI_MSI_FLAGS as usize;
const CFG_MSI_ADDRESS_LO: usize = CFG_MSI + bindings::PCI_MSI_ADDRESS_LO as usize;
const CFG_MSI_ADDRESS_HI: usize = CFG_MSI + bindings::PCI_MSI_ADDRESS_HI as usize;
const CFG_MSI_DATA: usize = CFG_MSI + bindings::PCI_MSI_DATA_64 as usize;
const CMD_MEMORY: u16 = bindings::PCI_COMMAND_MEMORY as u16;
const CMD_MASTER: u16 = bindings::PCI_COMMAND_MASTER as u16;
const CMD_INTX_DISABLE: u16 = bindings::PCI_COMMAND_INTX_DISABLE as u16;
/// The command bits software may change.
const CMD_WRITABLE: u16 = CMD_MEMORY | CMD_MASTER | CMD_INTX_DISABLE;
const STATUS_INTX: u8 = bindings::PCI_STATUS_INTERRUPT as u8;
const STATUS_CAP_LIST: u8 = bindings::PCI_STATUS_CAP_LIST as u8;
const MSI_CAP_ID: u8 = bindings::PCI_CAP_ID_MSI as u8;
/// MSI message control: 64-bit addresses, one vector.
const MSI_FLAGS_64BIT: u16 = bindings::PCI_MSI_FLAGS_64BIT as u16;
const MSI_FLAGS_ENABLE: u16 = bindings::PCI_MSI_FLAGS_ENABLE as u16;
/// BAR0: a 32-bit memory BAR of [`BAR0_SIZE`] bytes; the address bits.
const BAR0_ADDRESS_MASK: u32 = !(BAR0_SIZE as u32 - 1);

/// What the guest programmed into the device and the device's progress;
/// a device reset returns all of it to power-on values.
#[derive(Default)]
pub(super) struct DeviceState {
    pub(super) rings: [GuestRing; ENGINES],
    status_page: u64,
    irq_status: u32,
    irq_enable: u32,
    /// The `FAULT` word; non-zero while the vGPU is failed.
    fault: u32,
    submitted: u32,
    completed: u32,
    busy_ns: u64,
}

/// Per-vGPU register state, under the vGPU's lock (GVT-g's `vgpu_lock`).
pub(super) struct Regs {
    cfg: [u8; CFG_SIZE],
    init_cfg: [u8; CFG_SIZE],
    pub(super) open: bool,
    gtt_index: u32,
    pub(super) dev: DeviceState,
    /// Generation of each ring's work: bumped by a reset or a fault, so
    /// that work already executing then completes without a trace.
    pub(super) epochs: [u32; ENGINES],
    /// The copies fetched and not completed.
    copies: Copies,
}

impl Regs {
    pub(super) fn new(cfg: [u8; CFG_SIZE], copies: Copies) -> Self {
        Self {
            cfg,
            init_cfg: cfg,
            open: false,
            gtt_index: 0,
            dev: DeviceState::default(),
            epochs: [0; ENGINES],
            copies,
        }
    }

    /// Device reset: rings, interrupts, fault and counters back to
    /// power-on values; work in flight is forgotten. `config` also resets
    /// the configuration space (a VFIO reset; not the guest's own RESET
    /// register, which would unmap its BAR).
    pub(super) fn reset(&mut self, config: bool) {
        if config {
            self.cfg = self.init_cfg;
        }
        self.gtt_index = 0;
        self.dev = DeviceState::default();
        self.copies.clear();
        for e in self.epochs.iter_mut() {
            *e = e.wrapping_add(1);
        }
    }

    fn command(&self) -> u16 {
        u16::from_le_bytes([
            self.cfg.get(CFG_COMMAND).copied().unwrap_or(0),
            self.cfg.get(CFG_COMMAND + 1).copied().unwrap_or(0),
        ])
    }

    /// The interrupt the device asserts (before INTx disable).
    fn irq_pending(&self) -> bool {
        self.dev.irq_status & self.dev.irq_enable != 0
    }

    pub(super) fn failed(&self) -> bool {
        self.dev.fault != 0
    }
}

fn put(cfg: &mut [u8], off: usize, bytes: &[u8]) {
    if let Some(d) = cfg.get_mut(off..off + bytes.len()) {
        d.copy_from_slice(bytes);
    }
}

/// Power-on configuration space of a vGPU of type `ty`.
pub(super) fn init_config(cfg: &mut [u8; CFG_SIZE], ty: usize) {
    put(cfg, CFG_VENDOR_ID, &PCI_VENDOR.to_le_bytes());
    put(cfg, CFG_DEVICE_ID, &PCI_DEVICE.to_le_bytes());
    put(cfg, CFG_STATUS, &[STATUS_CAP_LIST]);
    // The revision is the protocol's version.
    const _: () = assert!(PCI_CLASS == bindings::PCI_CLASS_DISPLAY_OTHER << 8);
    let class_revision = (PCI_CLASS << 8) | (PROTOCOL_VERSION & 0xff);
    put(cfg, CFG_CLASS_REVISION, &class_revision.to_le_bytes());
    put(
        cfg,
        CFG_SUBSYSTEM_VENDOR_ID,
        &PCI_SUBSYSTEM_VENDOR.to_le_bytes(),
    );
    let subsystem = u16::try_from(ty + 1).unwrap_or(0);
    put(cfg, CFG_SUBSYSTEM_ID, &subsystem.to_le_bytes());
    put(cfg, CFG_CAP_PTR, &[CFG_MSI as u8]);
    put(cfg, CFG_INT_PIN, &[1]);
    // MSI capability, the only one: next pointer 0.
    put(cfg, CFG_MSI, &[MSI_CAP_ID]);
    put(cfg, CFG_MSI_FLAGS, &MSI_FLAGS_64BIT.to_le_bytes());
}

/// Byte `at` of the little-endian register at `reg` of `N` bytes whose
/// writable bits are `mask`; 0 outside it.
fn mask_byte<const N: usize>(at: usize, reg: usize, mask: [u8; N]) -> u8 {
    at.checked_sub(reg)
        .and_then(|i| mask.get(i))
        .copied()
        .unwrap_or(0)
}

/// Write mask of configuration byte `at`: the bits software may change.
fn cfg_write_mask(at: usize) -> u8 {
    // Command: memory space, bus master, INTx disable; BAR0's address;
    // the interrupt line; MSI: enable, address (dword aligned) and data.
    mask_byte(at, CFG_COMMAND, CMD_WRITABLE.to_le_bytes())
        | mask_byte(at, CFG_BAR0, BAR0_ADDRESS_MASK.to_le_bytes())
        | mask_byte(at, CFG_INT_LINE, [0xff])
        | mask_byte(at, CFG_MSI_FLAGS, MSI_FLAGS_ENABLE.to_le_bytes())
        | mask_byte(at, CFG_MSI_ADDRESS_LO, (!3u32).to_le_bytes())
        | mask_byte(at, CFG_MSI_ADDRESS_HI, [0xff; 4])
        | mask_byte(at, CFG_MSI_DATA, [0xff; 2])
}

/// Size of VFIO region `index` (0: absent).
pub(super) fn region_size(index: RegionIndex) -> u64 {
    match index {
        RegionIndex::Bar(0) => BAR0_SIZE as u64,
        RegionIndex::Config => CFG_SIZE as u64,
        _ => 0,
    }
}

/// Handles one access of `data.len()` bytes at `off` of region `index`.
pub(super) fn access(
    v: &Vgpu,
    index: RegionIndex,
    off: u64,
    data: &mut [u8],
    write: bool,
) -> Result {
    let len = data.len();
    let end = off.checked_add(len as u64).ok_or(EINVAL)?;
    if len == 0 || end > region_size(index) {
        return Err(EINVAL);
    }
    match index {
        RegionIndex::Config => config_access(v, off, data, write),
        RegionIndex::Bar(0) => {
            // A VM's vCPU threads are those that access its registers.
            v.gpu().vms.vcpu_access(v.id);
            bar0_access(v, off, data, write)
        }
        _ => Err(EINVAL),
    }
}

fn config_access(v: &SimVgpu, off: u64, data: &mut [u8], write: bool) -> Result {
    let off = usize::try_from(off).map_err(|_| EINVAL)?;
    let mut r = v.regs.lock();
    if !write {
        data.copy_from_slice(r.cfg.get(off..off + data.len()).ok_or(EINVAL)?);
        // The interrupt status bit follows the device's INTx level.
        if let Some(s) = CFG_STATUS.checked_sub(off).and_then(|i| data.get_mut(i)) {
            if r.irq_pending() {
                *s |= STATUS_INTX;
            }
        }
        return Ok(());
    }
    let intx_was_disabled = r.command() & CMD_INTX_DISABLE != 0;
    // Read-only bits keep their value, as on a PCI device.
    for (i, b) in data.iter().enumerate() {
        let at = off + i;
        let mask = cfg_write_mask(at);
        if let Some(c) = r.cfg.get_mut(at) {
            *c = (*c & !mask) | (*b & mask);
        }
    }
    if (r.command() & CMD_INTX_DISABLE != 0) != intx_was_disabled {
        update_irq(v, &r, false);
    }
    Ok(())
}

/// BAR0's 64-bit registers; all others are 32-bit.
const REGS_64: [usize; 3] = [REG_BUSY_NS, REG_STATUS_PAGE, REG_GTT_DATA];
/// BAR0's 32-bit registers outside the rings.
const REGS_32: [usize; 17] = [
    REG_ID,
    REG_VERSION,
    REG_ENGINES,
    REG_VGPU_ID,
    REG_STATUS,
    REG_RING_MAX,
    REG_SUBMITTED,
    REG_COMPLETED,
    REG_FAULT,
    REG_MAX_DURATION,
    REG_GM_LOW,
    REG_GM_HIGH,
    REG_IRQ_STATUS,
    REG_IRQ_ENABLE,
    REG_RESET,
    REG_COPY_MAX,
    REG_GTT_INDEX,
];
/// A ring's 32-bit registers (its base is 64-bit).
const RING_REGS_32: [usize; 4] = [RING_SIZE, RING_CTL, RING_HEAD, RING_TAIL];

/// The register containing BAR0 offset `off`: its offset and width.
fn register_at(off: usize) -> Option<(usize, usize)> {
    if let Some(&reg) = REGS_64.iter().find(|&&r| (r..r + 8).contains(&off)) {
        return Some((reg, 8));
    }
    if REGS_32.contains(&(off & !3)) {
        return Some((off & !3, 4));
    }
    let (e, field) = ring_of(off)?;
    let ring = ring_reg(e, 0);
    if (RING_BASE..RING_BASE + 8).contains(&field) {
        Some((ring + RING_BASE, 8))
    } else if RING_REGS_32.contains(&(field & !3)) {
        Some((ring + (field & !3), 4))
    } else {
        None
    }
}

/// Engine and field of a ring register.
fn ring_of(reg: usize) -> Option<(usize, usize)> {
    let rel = reg.checked_sub(REG_RING0)?;
    let e = rel / RING_STRIDE;
    (e < ENGINES).then_some((e, rel % RING_STRIDE))
}

/// What a well-formed BAR0 access did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// It read or wrote a register.
    Done,
    /// The device has nothing there for it: an unknown offset, an access
    /// across two registers, a write to a read-only register or one that a
    /// register does not take (a GTT index past the vGPU's high GM). As on
    /// hardware it changes nothing and a read returns 0, not `!0`, which
    /// reads as a device gone from the bus (a master abort). It succeeds,
    /// since QEMU logs every failed access without a rate limit, and is
    /// counted in the vGPU's `ignored_accesses`, never logged.
    Ignored,
}

fn bar0_access(v: &Vgpu, off: u64, data: &mut [u8], write: bool) -> Result {
    let off = usize::try_from(off).map_err(|_| EINVAL)?;
    let len = data.len();
    // QEMU passes on only these: its memory core refuses misaligned guest
    // accesses and splits larger ones.
    if !matches!(len, 1 | 2 | 4 | 8) || off % len != 0 {
        return Err(EINVAL);
    }
    let taken = match register_at(off) {
        Some((reg, width)) if off + len <= reg + width => {
            register_access(v, reg, off - reg, data, write)?
        }
        _ => Taken::Ignored,
    };
    if taken == Taken::Ignored {
        if !write {
            data.fill(0);
        }
        v.gpu().engine.ignored_access(v.id);
    }
    Ok(())
}

/// An access of `data.len()` bytes at byte `at` of the register `reg`.
fn register_access(v: &Vgpu, reg: usize, at: usize, data: &mut [u8], write: bool) -> Result<Taken> {
    let len = data.len();
    let shift = at * 8;
    let mask = if len == 8 {
        u64::MAX
    } else {
        ((1u64 << (len * 8)) - 1) << shift
    };
    let mut r = v.regs.lock();
    if !write {
        let val = read_reg(v, &r, reg)? >> shift;
        data.copy_from_slice(val.to_le_bytes().get(..len).ok_or(EINVAL)?);
        return Ok(Taken::Done);
    }
    let mut raw = [0u8; 8];
    raw.get_mut(..len).ok_or(EINVAL)?.copy_from_slice(data);
    let written = u64::from_le_bytes(raw) << shift;
    write_reg(v, &mut r, reg, written, mask)
}

fn read_reg(v: &SimVgpu, r: &Regs, reg: usize) -> Result<u64> {
    let ty = TYPES.get(v.ty).ok_or(EINVAL)?;
    let d = &r.dev;
    if let Some((e, field)) = ring_of(reg) {
        let ring = d.rings.get(e).ok_or(EINVAL)?;
        return Ok(match field {
            RING_BASE => ring.base,
            RING_SIZE => u64::from(ring.size),
            RING_CTL => u64::from(ring.enabled),
            RING_HEAD => u64::from(ring.head),
            RING_TAIL => u64::from(ring.tail),
            _ => return Err(EINVAL),
        });
    }
    let val32 = match reg {
        REG_ID => DEVICE_MAGIC,
        REG_VERSION => PROTOCOL_VERSION,
        REG_ENGINES => ENGINES as u32,
        REG_VGPU_ID => u32::from(v.id),
        REG_STATUS => {
            let s = v.gpu().engine.vgpu_stats(v.id);
            let busy = d.rings.iter().any(GuestRing::busy);
            let started = s.is_some_and(|s| s.started);
            STATUS::zeroed()
                .with_busy(busy)
                .with_scheduled(started)
                .with_failed(r.failed())
                .into()
        }
        REG_RING_MAX => RING_MAX,
        REG_SUBMITTED => d.submitted,
        REG_COMPLETED => d.completed,
        REG_FAULT => d.fault,
        REG_MAX_DURATION => MAX_DURATION_US,
        REG_GM_LOW => ty.low_mb,
        REG_GM_HIGH => ty.high_mb,
        REG_IRQ_STATUS => d.irq_status,
        REG_IRQ_ENABLE => d.irq_enable,
        REG_RESET => 0,
        REG_COPY_MAX => COPY_MAX,
        REG_GTT_INDEX => r.gtt_index,
        REG_BUSY_NS => return Ok(d.busy_ns),
        REG_STATUS_PAGE => return Ok(d.status_page),
        REG_GTT_DATA => return v.gpu().gtt_read(v.id, r.gtt_index),
        _ => return Err(EINVAL),
    };
    Ok(u64::from(val32))
}

/// `written` holds the written bytes in place, `mask` says which they are.
fn write_reg(v: &Vgpu, r: &mut Regs, reg: usize, written: u64, mask: u64) -> Result<Taken> {
    // The register's value after the write, for plain read-write registers.
    let merged = |cur: u64| (cur & !mask) | (written & mask);
    if let Some((e, field)) = ring_of(reg) {
        return write_ring(v, r, e, field, written, mask);
    }
    match reg {
        REG_IRQ_STATUS => {
            // Write 1 to clear.
            r.dev.irq_status &= !(written as u32);
            update_irq(v, r, false);
        }
        REG_IRQ_ENABLE => {
            let old = r.dev.irq_enable;
            r.dev.irq_enable = (merged(u64::from(old)) as u32) & IRQ_VALID;
            // Enabling a pending cause sends the MSI it held back.
            let newly = r.dev.irq_enable & !old & r.dev.irq_status;
            update_irq(v, r, newly != 0);
        }
        REG_STATUS_PAGE => {
            // The page offset bits are read-only zero.
            r.dev.status_page = merged(r.dev.status_page) & !(GUEST_PAGE - 1);
        }
        REG_RESET => {
            // CAST: the register is the low 32 bits of what was written.
            if RESET::from(written as u32).reset() {
                v.reset_locked(r, false)?;
            }
        }
        REG_GTT_INDEX => {
            let idx = merged(u64::from(r.gtt_index));
            let ty = TYPES.get(v.ty).ok_or(EINVAL)?;
            // 4 KB pages per MB. An index past the high GM is not taken.
            if idx >= u64::from(ty.high_mb) * 256 {
                return Ok(Taken::Ignored);
            }
            r.gtt_index = idx as u32;
        }
        REG_GTT_DATA => {
            let gpu = v.gpu();
            let cur = if mask == u64::MAX {
                0
            } else {
                gpu.gtt_read(v.id, r.gtt_index)?
            };
            gpu.gtt_write(v.id, r.gtt_index, merged(cur))?;
        }
        // The read-only registers.
        _ => return Ok(Taken::Ignored),
    }
    Ok(Taken::Done)
}

fn write_ring(
    v: &Vgpu,
    r: &mut Regs,
    e: usize,
    field: usize,
    written: u64,
    mask: u64,
) -> Result<Taken> {
    let ring = *r.dev.rings.get(e).ok_or(EINVAL)?;
    let merged = |cur: u64| (cur & !mask) | (written & mask);
    // A ring with outstanding work cannot be reprogrammed: such writes are
    // ignored, as by hardware that latches them only when idle.
    let idle = !ring.busy();
    let mut new = ring;
    match field {
        RING_BASE if idle && !ring.enabled => new.base = merged(ring.base),
        RING_SIZE if idle && !ring.enabled => new.size = merged(u64::from(ring.size)) as u32,
        RING_CTL => {
            let on = merged(u64::from(ring.enabled)) as u32 & RING_CTL_ENABLE != 0;
            if on && !ring.enabled && !r.failed() {
                if let Err(f) = new.enable() {
                    v.fail_locked(r, f, e, 0);
                    return Ok(Taken::Done);
                }
            } else if !on && ring.enabled && idle {
                new.enabled = false;
            }
        }
        RING_TAIL => {
            let tail = merged(u64::from(ring.tail));
            if r.failed() {
                return Ok(Taken::Done);
            }
            if !ring.enabled {
                v.fail_locked(r, Fault::RingDisabled, e, 0);
                return Ok(Taken::Done);
            }
            let Some(tail) = u32::try_from(tail)
                .ok()
                .filter(|t| *t < ring.size && !ring.tail_goes_back(*t))
            else {
                v.fail_locked(r, Fault::TailRange, e, ring.fetched);
                return Ok(Taken::Done);
            };
            if let Some(slot) = r.dev.rings.get_mut(e) {
                slot.tail = tail;
            }
            fetch(v, r, e);
            return Ok(Taken::Done);
        }
        RING_BASE | RING_SIZE => {}
        // HEAD, read-only.
        _ => return Ok(Taken::Ignored),
    }
    if let Some(slot) = r.dev.rings.get_mut(e) {
        *slot = new;
    }
    Ok(Taken::Done)
}

/// The doorbell: fetch, scan and queue every published descriptor of
/// engine `e`'s ring, or fail the vGPU at the first bad one.
fn fetch(v: &Vgpu, r: &mut Regs, e: usize) {
    let epoch = r.epochs.get(e).copied().unwrap_or(0);
    loop {
        let Some(ring) = r.dev.rings.get(e).copied() else {
            return;
        };
        if ring.fetched == ring.tail {
            return;
        }
        let index = ring.fetched;
        let mut raw = [0u8; DESC_SIZE];
        let read = ring
            .desc_addr(index)
            .ok_or(EINVAL)
            .and_then(|at| v.dma_read(at, &mut raw));
        if read.is_err() {
            v.fail_locked(r, Fault::Fetch, e, index);
            return;
        }
        let desc = Desc::from_bytes(&raw);
        if let Err(f) = desc.scan() {
            v.fail_locked(r, f, e, index);
            return;
        }
        let copy = if desc.opcode == OP_COPY {
            match read_copy_block(v, desc.arg) {
                Ok(c) => Some(c),
                Err(f) => {
                    v.fail_locked(r, f, e, index);
                    return;
                }
            }
        } else {
            None
        };
        r.copies.set(e, index, copy);
        let w = Workload::new(&desc, epoch, index);
        let bytes = copy.map_or(desc.bytes, |c| c.traffic());
        if let Err(err) = v.gpu().submit(v, e, w, bytes) {
            // The V-Channel holds a whole ring, so this is the vGPU going
            // away under us; the descriptor stays unfetched.
            dev_dbg!(
                v.mdev,
                "vGPU {}: descriptor not queued: {:?}\n",
                v.id.raw(),
                err
            );
            return;
        }
        if let Some(slot) = r.dev.rings.get_mut(e) {
            slot.fetched = ring.next(index);
        }
        r.dev.submitted = r.dev.submitted.wrapping_add(1);
    }
}

/// Reads and scans the copy block at guest address `at`.
fn read_copy_block(v: &Vgpu, at: u64) -> Result<CopyBlock, Fault> {
    let mut raw = [0u8; COPY_BLOCK];
    if at % COPY_BLOCK as u64 != 0 || v.dma_read(at, &mut raw).is_err() {
        return Err(Fault::CopyBlock);
    }
    CopyBlock::from_bytes(&raw)
}

/// The workloads of batch `b` of engine `e`'s ring completed: run their
/// copies, advance HEAD past the newest, write the status page, raise the
/// interrupt. Called from the vGPU's own delivery, never from an engine's
/// work item: a copy waits for guest memory as long as it takes.
pub(super) fn complete(v: &Vgpu, r: &mut Regs, e: usize, b: &Batch) {
    let w = &b.last;
    if r.epochs.get(e).copied() != Some(w.epoch) {
        return;
    }
    let Some(mut ring) = r.dev.rings.get(e).copied() else {
        return;
    };
    // The oldest completion the batch holds: HEAD stops at it until its
    // record is written, however many completed behind it meanwhile.
    let oldest = ring.head;
    // The batch is the descriptors from HEAD to the newest, in ring order:
    // their data reaches guest memory before the record that reports them.
    let mut index = ring.head;
    for _ in 0..ring.size {
        if let Some(c) = r.copies.take(e, index) {
            if r.copies.run(v, &c).is_err() {
                v.fail_locked(r, Fault::CopyDma, e, index);
                return;
            }
        }
        if index == w.index {
            break;
        }
        index = ring.next(index);
    }
    ring.head = ring.next(w.index);
    ring.completed = ring.completed.wrapping_add(b.count);
    ring.gpu_ns = ring.gpu_ns.wrapping_add(b.gpu_ns);
    ring.seqno = w.seqno;
    // The guest sees the completion in the status page first; one that
    // cannot be written is a fault, not a completion.
    if r.dev.status_page != 0 {
        let at = r.dev.status_page + (STATUS_STRIDE * e) as u64;
        if v.dma_write(at, &status_record(&ring)).is_err() {
            v.fail_locked(r, Fault::StatusWrite, e, oldest);
            return;
        }
    }
    let d = &mut r.dev;
    if let Some(slot) = d.rings.get_mut(e) {
        *slot = ring;
    }
    d.completed = d.completed.wrapping_add(b.count);
    d.busy_ns = d.busy_ns.wrapping_add(b.gpu_ns);
    if b.irq {
        raise(v, r, 1 << e);
    }
}

/// Sets `cause` in `IRQ_STATUS` and signals the interrupt.
pub(super) fn raise(v: &SimVgpu, r: &mut Regs, cause: u32) {
    r.dev.irq_status |= cause;
    let edge = r.dev.irq_enable & cause != 0;
    update_irq(v, r, edge);
}

/// Reports the INTx level and whether an MSI is due ([`super::irq`]).
pub(super) fn update_irq(v: &SimVgpu, r: &Regs, edge: bool) {
    let level = r.irq_pending() && r.command() & CMD_INTX_DISABLE == 0;
    v.signal_irq(level, edge);
}

/// The `FAULT` word of `fault` at descriptor `index` of engine `e`.
pub(super) fn fault_word(fault: Fault, e: usize, index: u32) -> u32 {
    // CAST: the word holds the low 8 bits of the engine and the low 16 of
    // the index.
    FAULT::zeroed()
        .with_reason(fault as u8)
        .with_engine(e as u8)
        .with_index(index as u16)
        .into()
}

/// Records a fault (the first one sticks) and raises its interrupt.
pub(super) fn set_fault(v: &SimVgpu, r: &mut Regs, word: u32) {
    r.dev.fault = word;
    for e in r.epochs.iter_mut() {
        *e = e.wrapping_add(1);
    }
    raise(v, r, IRQ_FAULT);
}

/// The registers as a migration carries them ([`super::migration`]): what
/// the guest programmed and the device's progress.
#[derive(Clone, Copy)]
pub(super) struct Saved {
    pub(super) cfg: [u8; CFG_SIZE],
    pub(super) status_page: u64,
    pub(super) irq_status: u32,
    pub(super) irq_enable: u32,
    pub(super) fault: u32,
    pub(super) submitted: u32,
    pub(super) completed: u32,
    pub(super) gtt_index: u32,
    pub(super) busy_ns: u64,
    pub(super) rings: [GuestRing; ENGINES],
}

impl Saved {
    /// Whether a vGPU of type `ty` can hold these values (the rings aside):
    /// the configuration space is a type-`ty` vGPU's in its read-only bits,
    /// the status page is page aligned, only existing interrupt causes are
    /// set and the GTT index is inside the high GM.
    pub(super) fn valid_for(&self, ty: usize) -> bool {
        let Some(t) = TYPES.get(ty) else {
            return false;
        };
        let mut init = [0u8; CFG_SIZE];
        init_config(&mut init, ty);
        let cfg_ok = self
            .cfg
            .iter()
            .zip(init.iter())
            .enumerate()
            .all(|(at, (b, i))| (b ^ i) & !cfg_write_mask(at) == 0);
        cfg_ok
            && self.status_page % GUEST_PAGE == 0
            && (self.irq_status | self.irq_enable) & !IRQ_VALID == 0
            && u64::from(self.gtt_index) < u64::from(t.high_mb) * 256
    }
}

impl Regs {
    /// The registers, for a migration's stream.
    pub(super) fn save(&self) -> Saved {
        let d = &self.dev;
        Saved {
            cfg: self.cfg,
            status_page: d.status_page,
            irq_status: d.irq_status,
            irq_enable: d.irq_enable,
            fault: d.fault,
            submitted: d.submitted,
            completed: d.completed,
            gtt_index: self.gtt_index,
            busy_ns: d.busy_ns,
            rings: d.rings,
        }
    }

    /// Loads registers a migration's stream carried, checked by
    /// [`Saved::valid_for`] and the rings by the stream's parser.
    pub(super) fn load(&mut self, s: &Saved) {
        self.cfg = s.cfg;
        self.gtt_index = s.gtt_index;
        self.dev = DeviceState::default();
        let d = &mut self.dev;
        d.rings = s.rings;
        d.status_page = s.status_page;
        d.irq_status = s.irq_status;
        d.irq_enable = s.irq_enable;
        d.fault = s.fault;
        d.submitted = s.submitted;
        d.completed = s.completed;
        d.busy_ns = s.busy_ns;
    }

    /// A migration stops the device: the work fetched and not completed
    /// (queued or executing) completes without a trace and is fetched again
    /// from HEAD when the device runs, here or on the destination.
    pub(super) fn rewind(&mut self) {
        for e in self.epochs.iter_mut() {
            *e = e.wrapping_add(1);
        }
        for ring in self.dev.rings.iter_mut() {
            let fetched = ring
                .fetched
                .wrapping_add(ring.size)
                .wrapping_sub(ring.head)
                .checked_rem(ring.size)
                .unwrap_or(0);
            self.dev.submitted = self.dev.submitted.wrapping_sub(fetched);
            ring.fetched = ring.head;
        }
    }
}

/// The device runs again after a migration's stop: fetch what the guest
/// published on every enabled ring, as its doorbell would.
pub(super) fn refetch(v: &Vgpu, r: &mut Regs) {
    for e in 0..ENGINES {
        if !r.failed() && r.dev.rings.get(e).is_some_and(|g| g.enabled) {
            fetch(v, r, e);
        }
    }
}

#[kernel::macros::kunit_tests(gvt_rs_sim_regs)]
mod tests {
    use super::*;

    /// The write mask of the `n`-byte configuration register at `reg`.
    fn cfg_mask(reg: usize, n: usize) -> u32 {
        (0..n).fold(0, |m, i| m | u32::from(cfg_write_mask(reg + i)) << (8 * i))
    }

    #[test]
    fn every_register_has_its_width() {
        for reg in REGS_32 {
            assert_eq!(register_at(reg), Some((reg, 4)));
            assert_eq!(register_at(reg + 3), Some((reg, 4)));
        }
        for reg in REGS_64 {
            assert_eq!(register_at(reg + 7), Some((reg, 8)));
        }
        for e in 0..ENGINES {
            let base = ring_reg(e, RING_BASE);
            assert_eq!(register_at(base + 4), Some((base, 8)));
            let tail = ring_reg(e, RING_TAIL);
            assert_eq!(register_at(tail + 2), Some((tail, 4)));
        }
    }

    #[test]
    fn offsets_between_registers_are_refused() {
        assert_eq!(register_at(REG_RESET + 4), None);
        assert_eq!(register_at(REG_GTT_INDEX + 4), None);
        assert_eq!(register_at(REG_GTT_DATA + 8), None);
        assert_eq!(register_at(ring_reg(0, RING_TAIL) + 4), None);
        assert_eq!(register_at(ring_reg(ENGINES, RING_BASE)), None);
    }

    #[test]
    fn config_write_masks_are_those_of_pci_regs() {
        assert_eq!(cfg_mask(CFG_VENDOR_ID, 4), 0);
        assert_eq!(cfg_mask(CFG_COMMAND, 2), 0x0406);
        assert_eq!(cfg_mask(CFG_STATUS, 2), 0);
        assert_eq!(cfg_mask(CFG_BAR0, 4), 0xffff_f000);
        assert_eq!(cfg_mask(CFG_INT_LINE, 2), 0x00ff);
        assert_eq!(cfg_mask(CFG_MSI, 4), 0x0001_0000);
        assert_eq!(cfg_mask(CFG_MSI_ADDRESS_LO, 4), 0xffff_fffc);
        assert_eq!(cfg_mask(CFG_MSI_ADDRESS_HI, 4), 0xffff_ffff);
        assert_eq!(cfg_mask(CFG_MSI_DATA, 4), 0x0000_ffff);
    }
}
