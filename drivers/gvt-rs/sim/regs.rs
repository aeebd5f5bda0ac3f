// SPDX-License-Identifier: GPL-2.0

//! PCI configuration space and BAR0 registers of a simulated vGPU.
//!
//! Configuration space can be read and written in any size, as QEMU's
//! vfio-pci does (it reads all 256 bytes at once). A BAR0 access is one
//! naturally aligned access of 1, 2, 4 or 8 bytes inside one register, as a
//! guest's MMIO reaches the device through QEMU; anything else, an unknown
//! offset or a write to a read-only register fails with `EINVAL` and
//! changes nothing. What a guest programs wrongly (a bad ring, a malformed
//! descriptor) is not an access error: it puts the vGPU into the failed
//! state ([`super::ring::Fault`]).
//!
//! Protocol: `tools/testing/selftests/drivers/gvt_rs/gvt_sim_dev.h`.

use super::{
    ring::{status_record, Desc, Fault, GuestRing, DESC_SIZE, GUEST_PAGE, RING_MAX, STATUS_STRIDE},
    SimVgpu, Workload, ENGINES, MAX_DURATION_US, TYPES,
};
use kernel::prelude::*;

/// VFIO region index of BAR0.
pub(super) const REGION_BAR0: u32 = 0;
/// VFIO region index of the PCI configuration space.
pub(super) const REGION_CONFIG: u32 = 7;
/// Size of the configuration space.
pub(super) const CFG_SIZE: usize = 256;
/// Size of BAR0.
pub(super) const BAR0_SIZE: u64 = 4096;

// BAR0 registers.
const R_ID: u64 = 0x000;
const R_VERSION: u64 = 0x004;
const R_ENGINES: u64 = 0x008;
const R_VGPU_ID: u64 = 0x00c;
const R_STATUS: u64 = 0x010;
const R_RING_MAX: u64 = 0x014;
const R_SUBMITTED: u64 = 0x018;
const R_COMPLETED: u64 = 0x01c;
const R_FAULT: u64 = 0x020;
const R_MAX_DURATION: u64 = 0x024;
const R_GM_LOW: u64 = 0x028;
const R_GM_HIGH: u64 = 0x02c;
const R_BUSY_NS: u64 = 0x030;
const R_IRQ_STATUS: u64 = 0x038;
const R_IRQ_ENABLE: u64 = 0x03c;
const R_STATUS_PAGE: u64 = 0x040;
const R_RESET: u64 = 0x048;
const R_GTT_INDEX: u64 = 0x060;
const R_GTT_DATA: u64 = 0x068;
const R_RING0: u64 = 0x100;
const RING_STRIDE: u64 = 0x20;
const RING_BASE: u64 = 0x00;
const RING_SIZE: u64 = 0x08;
const RING_CTL: u64 = 0x0c;
const RING_HEAD: u64 = 0x10;
const RING_TAIL: u64 = 0x14;

const RING_CTL_ENABLE: u32 = 1 << 0;
const STATUS_BUSY: u32 = 1 << 0;
const STATUS_SCHEDULED: u32 = 1 << 1;
const STATUS_FAILED: u32 = 1 << 2;
/// `IRQ_STATUS` bit of a fault; bit `e` is a completion on engine `e`.
const IRQ_FAULT: u32 = 1 << 8;
const IRQ_VALID: u32 = IRQ_FAULT | ((1 << ENGINES) - 1);

/// `R_ID` value: "GVTS".
const DEVICE_MAGIC: u32 = 0x5354_5647;
/// Protocol version: rings in guest memory.
const VERSION: u32 = 2;
const PCI_VENDOR: u16 = 0x8086;
const PCI_DEVICE: u16 = 0x7a5a;

// Configuration space layout.
const CFG_COMMAND: usize = 0x04;
const CFG_STATUS: usize = 0x06;
const CFG_CAP_PTR: usize = 0x34;
const CFG_INT_LINE: usize = 0x3c;
const CFG_INT_PIN: usize = 0x3d;
const CFG_MSI: usize = 0x40;
const CMD_MEMORY: u16 = 1 << 1;
const CMD_MASTER: u16 = 1 << 2;
const CMD_INTX_DISABLE: u16 = 1 << 10;
const STATUS_INTX: u8 = 1 << 3;
const STATUS_CAP_LIST: u8 = 1 << 4;
const MSI_CAP_ID: u8 = 0x05;
/// MSI message control: 64-bit addresses, one vector.
const MSI_CTRL_64BIT: u8 = 1 << 7;

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
}

impl Regs {
    pub(super) fn new(cfg: [u8; CFG_SIZE]) -> Self {
        Self {
            cfg,
            init_cfg: cfg,
            open: false,
            gtt_index: 0,
            dev: DeviceState::default(),
            epochs: [0; ENGINES],
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

fn put16(cfg: &mut [u8], off: usize, v: u16) {
    if let Some(d) = cfg.get_mut(off..off + 2) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

fn put8(cfg: &mut [u8], off: usize, v: u8) {
    if let Some(d) = cfg.get_mut(off) {
        *d = v;
    }
}

/// Power-on configuration space of a vGPU of type `ty`.
pub(super) fn init_config(cfg: &mut [u8; CFG_SIZE], ty: usize) {
    put16(cfg, 0x00, PCI_VENDOR);
    put16(cfg, 0x02, PCI_DEVICE);
    put8(cfg, CFG_STATUS, STATUS_CAP_LIST);
    // Revision 2 (the protocol), class 0x038000 (display controller, other).
    if let Some(c) = cfg.get_mut(0x08..0x0c) {
        c.copy_from_slice(&[VERSION as u8, 0x00, 0x80, 0x03]);
    }
    put16(cfg, 0x2c, PCI_VENDOR);
    put16(cfg, 0x2e, u16::try_from(ty + 1).unwrap_or(0));
    put8(cfg, CFG_CAP_PTR, CFG_MSI as u8);
    put8(cfg, CFG_INT_PIN, 1);
    // MSI capability, the only one: next pointer 0.
    put8(cfg, CFG_MSI, MSI_CAP_ID);
    put8(cfg, CFG_MSI + 2, MSI_CTRL_64BIT);
}

/// Write mask of configuration byte `at`: the bits software may change.
fn cfg_write_mask(at: usize) -> u8 {
    match at {
        // Command: memory space, bus master; INTx disable (bit 10).
        0x04 => (CMD_MEMORY | CMD_MASTER) as u8,
        0x05 => (CMD_INTX_DISABLE >> 8) as u8,
        // BAR0: a 4 KB 32-bit memory BAR (bits 31:12 are the address).
        0x11 => 0xf0,
        0x12 | 0x13 => 0xff,
        x if x == CFG_INT_LINE => 0xff,
        // MSI: enable bit; address (dword aligned) and data.
        0x42 => 0x01,
        0x44 => 0xfc,
        0x45..=0x4d => 0xff,
        _ => 0,
    }
}

/// Size of VFIO region `index` (0: absent).
pub(super) fn region_size(index: u32) -> u64 {
    match index {
        REGION_BAR0 => BAR0_SIZE,
        REGION_CONFIG => CFG_SIZE as u64,
        _ => 0,
    }
}

/// Handles one access of `data.len()` bytes at `off` of region `index`.
pub(super) fn access(v: &SimVgpu, index: u32, off: u64, data: &mut [u8], write: bool) -> Result {
    let len = data.len();
    let end = off.checked_add(len as u64).ok_or(EINVAL)?;
    if len == 0 || end > region_size(index) {
        return Err(EINVAL);
    }
    match index {
        REGION_CONFIG => config_access(v, off, data, write),
        REGION_BAR0 => bar0_access(v, off, data, write),
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

/// The register containing BAR0 offset `off`: its offset and width.
fn register_at(off: u64) -> Option<(u64, usize)> {
    let rings_end = R_RING0 + RING_STRIDE * ENGINES as u64;
    match off {
        R_BUSY_NS..=0x37 => Some((R_BUSY_NS, 8)),
        R_STATUS_PAGE..=0x47 => Some((R_STATUS_PAGE, 8)),
        R_GTT_DATA..=0x6f => Some((R_GTT_DATA, 8)),
        0x00..=0x2f | R_IRQ_STATUS..=0x3f | R_RESET..=0x4b | R_GTT_INDEX..=0x63 => {
            Some((off & !3, 4))
        }
        x if (R_RING0..rings_end).contains(&x) => {
            let rel = (x - R_RING0) % RING_STRIDE;
            let ring = x - rel;
            match rel {
                0..=7 => Some((ring + RING_BASE, 8)),
                RING_SIZE..=0x17 => Some((ring + (rel & !3), 4)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Engine and field of a ring register.
fn ring_reg(reg: u64) -> Option<(usize, u64)> {
    let rel = reg.checked_sub(R_RING0)?;
    let e = usize::try_from(rel / RING_STRIDE).ok()?;
    (e < ENGINES).then_some((e, rel % RING_STRIDE))
}

fn bar0_access(v: &SimVgpu, off: u64, data: &mut [u8], write: bool) -> Result {
    let len = data.len();
    if !matches!(len, 1 | 2 | 4 | 8) || off % (len as u64) != 0 {
        return Err(EINVAL);
    }
    let (reg, width) = register_at(off).ok_or(EINVAL)?;
    let shift = (off - reg) * 8;
    if off + len as u64 > reg + width as u64 {
        return Err(EINVAL);
    }
    let mask = if len == 8 {
        u64::MAX
    } else {
        ((1u64 << (len * 8)) - 1) << shift
    };
    let mut r = v.regs.lock();
    if !write {
        let val = read_reg(v, &r, reg)? >> shift;
        data.copy_from_slice(val.to_le_bytes().get(..len).ok_or(EINVAL)?);
        return Ok(());
    }
    let mut raw = [0u8; 8];
    raw.get_mut(..len).ok_or(EINVAL)?.copy_from_slice(data);
    let written = u64::from_le_bytes(raw) << shift;
    write_reg(v, &mut r, reg, written, mask)
}

fn read_reg(v: &SimVgpu, r: &Regs, reg: u64) -> Result<u64> {
    let ty = TYPES.get(v.ty).ok_or(EINVAL)?;
    let d = &r.dev;
    if let Some((e, field)) = ring_reg(reg) {
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
        R_ID => DEVICE_MAGIC,
        R_VERSION => VERSION,
        R_ENGINES => ENGINES as u32,
        R_VGPU_ID => u32::from(v.id),
        R_STATUS => {
            let s = v.gpu().engine.vgpu_stats(v.id);
            let busy = d.rings.iter().any(GuestRing::busy);
            let started = s.is_some_and(|s| s.started);
            (if busy { STATUS_BUSY } else { 0 })
                | (if started { STATUS_SCHEDULED } else { 0 })
                | (if r.failed() { STATUS_FAILED } else { 0 })
        }
        R_RING_MAX => RING_MAX,
        R_SUBMITTED => d.submitted,
        R_COMPLETED => d.completed,
        R_FAULT => d.fault,
        R_MAX_DURATION => MAX_DURATION_US,
        R_GM_LOW => ty.low_mb,
        R_GM_HIGH => ty.high_mb,
        R_IRQ_STATUS => d.irq_status,
        R_IRQ_ENABLE => d.irq_enable,
        R_RESET => 0,
        R_GTT_INDEX => r.gtt_index,
        R_BUSY_NS => return Ok(d.busy_ns),
        R_STATUS_PAGE => return Ok(d.status_page),
        R_GTT_DATA => return v.gpu().gtt_read(v.id, r.gtt_index),
        _ => return Err(EINVAL),
    };
    Ok(u64::from(val32))
}

/// `written` holds the written bytes in place, `mask` says which they are.
fn write_reg(v: &SimVgpu, r: &mut Regs, reg: u64, written: u64, mask: u64) -> Result {
    // The register's value after the write, for plain read-write registers.
    let merged = |cur: u64| (cur & !mask) | (written & mask);
    if let Some((e, field)) = ring_reg(reg) {
        return write_ring(v, r, e, field, written, mask);
    }
    match reg {
        R_IRQ_STATUS => {
            // Write 1 to clear.
            r.dev.irq_status &= !(written as u32);
            update_irq(v, r, false);
        }
        R_IRQ_ENABLE => {
            let old = r.dev.irq_enable;
            r.dev.irq_enable = (merged(u64::from(old)) as u32) & IRQ_VALID;
            // Enabling a pending cause sends the MSI it held back.
            let newly = r.dev.irq_enable & !old & r.dev.irq_status;
            update_irq(v, r, newly != 0);
        }
        R_STATUS_PAGE => {
            // The page offset bits are read-only zero.
            r.dev.status_page = merged(r.dev.status_page) & !(GUEST_PAGE - 1);
        }
        R_RESET => {
            if written & 1 != 0 {
                v.reset_locked(r, false)?;
            }
        }
        R_GTT_INDEX => {
            let idx = merged(u64::from(r.gtt_index));
            let ty = TYPES.get(v.ty).ok_or(EINVAL)?;
            // 4 KB pages per MB.
            if idx >= u64::from(ty.high_mb) * 256 {
                return Err(ERANGE);
            }
            r.gtt_index = idx as u32;
        }
        R_GTT_DATA => {
            let gpu = v.gpu();
            let cur = if mask == u64::MAX {
                0
            } else {
                gpu.gtt_read(v.id, r.gtt_index)?
            };
            gpu.gtt_write(v.id, r.gtt_index, merged(cur))?;
        }
        _ => return Err(EINVAL),
    }
    Ok(())
}

fn write_ring(v: &SimVgpu, r: &mut Regs, e: usize, field: u64, written: u64, mask: u64) -> Result {
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
                    return Ok(());
                }
            } else if !on && ring.enabled && idle {
                new.enabled = false;
            }
        }
        RING_TAIL => {
            let tail = merged(u64::from(ring.tail));
            if r.failed() {
                return Ok(());
            }
            if !ring.enabled {
                v.fail_locked(r, Fault::RingDisabled, e, 0);
                return Ok(());
            }
            let Some(tail) = u32::try_from(tail)
                .ok()
                .filter(|t| *t < ring.size && !ring.tail_goes_back(*t))
            else {
                v.fail_locked(r, Fault::TailRange, e, ring.fetched);
                return Ok(());
            };
            if let Some(slot) = r.dev.rings.get_mut(e) {
                slot.tail = tail;
            }
            fetch(v, r, e);
            return Ok(());
        }
        RING_BASE | RING_SIZE => {}
        _ => return Err(EINVAL),
    }
    if let Some(slot) = r.dev.rings.get_mut(e) {
        *slot = new;
    }
    Ok(())
}

/// The doorbell: fetch, scan and queue every published descriptor of
/// engine `e`'s ring, or fail the vGPU at the first bad one.
fn fetch(v: &SimVgpu, r: &mut Regs, e: usize) {
    let epoch = r.epochs.get(e).copied().unwrap_or(0);
    loop {
        let Some(ring) = r.dev.rings.get(e).copied() else {
            return;
        };
        if ring.fetched == ring.tail {
            return;
        }
        let index = ring.fetched;
        let mut raw = [0u8; DESC_SIZE as usize];
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
        let w = Workload::new(&desc, epoch, index);
        if let Err(err) = v.gpu().submit(v, e, w, desc.bytes) {
            // The V-Channel holds a whole ring, so this is the vGPU going
            // away under us; the descriptor stays unfetched.
            pr_debug!("vGPU {}: descriptor not queued: {:?}\n", v.id, err);
            return;
        }
        if let Some(slot) = r.dev.rings.get_mut(e) {
            slot.fetched = ring.next(index);
        }
        r.dev.submitted = r.dev.submitted.wrapping_add(1);
    }
}

/// A workload of `w`'s ring completed after `gpu_ns` of GPU time: advance
/// HEAD, write the status page, raise the interrupt.
pub(super) fn complete(v: &SimVgpu, r: &mut Regs, e: usize, w: &Workload, gpu_ns: u64) {
    if r.epochs.get(e).copied() != Some(w.epoch) {
        return;
    }
    let Some(mut ring) = r.dev.rings.get(e).copied() else {
        return;
    };
    ring.head = ring.next(w.index);
    ring.completed = ring.completed.wrapping_add(1);
    ring.gpu_ns = ring.gpu_ns.wrapping_add(gpu_ns);
    ring.seqno = w.seqno;
    // The guest sees the completion in the status page first; one that
    // cannot be written is a fault, not a completion.
    if r.dev.status_page != 0 {
        let at = r.dev.status_page + STATUS_STRIDE * e as u64;
        if v.dma_write(at, &status_record(&ring)).is_err() {
            v.fail_locked(r, Fault::StatusWrite, e, w.index);
            return;
        }
    }
    let d = &mut r.dev;
    if let Some(slot) = d.rings.get_mut(e) {
        *slot = ring;
    }
    d.completed = d.completed.wrapping_add(1);
    d.busy_ns = d.busy_ns.wrapping_add(gpu_ns);
    if w.irq {
        raise(v, r, 1 << e);
    }
}

/// Sets `cause` in `IRQ_STATUS` and signals the interrupt.
pub(super) fn raise(v: &SimVgpu, r: &mut Regs, cause: u32) {
    r.dev.irq_status |= cause;
    let edge = r.dev.irq_enable & cause != 0;
    update_irq(v, r, edge);
}

/// Tells the glue the INTx level and whether an MSI is due.
pub(super) fn update_irq(v: &SimVgpu, r: &Regs, edge: bool) {
    let level = r.irq_pending() && r.command() & CMD_INTX_DISABLE == 0;
    v.signal_irq(level, edge);
}

/// The `FAULT` word of `fault` at descriptor `index` of engine `e`.
pub(super) fn fault_word(fault: Fault, e: usize, index: u32) -> u32 {
    u32::from(fault as u8) | ((e as u32 & 0xff) << 8) | ((index & 0xffff) << 16)
}

/// Records a fault (the first one sticks) and raises its interrupt.
pub(super) fn set_fault(v: &SimVgpu, r: &mut Regs, word: u32) {
    r.dev.fault = word;
    for e in r.epochs.iter_mut() {
        *e = e.wrapping_add(1);
    }
    raise(v, r, IRQ_FAULT);
}
