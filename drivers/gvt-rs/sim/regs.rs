// SPDX-License-Identifier: GPL-2.0

//! PCI configuration space and BAR0 registers of a simulated vGPU.
//!
//! Every access is one register access: a size and alignment that the
//! register supports, inside the region. Anything else fails with `EINVAL`
//! (or `ERANGE`/`EAGAIN`/`EIO` for a submission that cannot be queued) and
//! changes nothing.

use super::{SimVgpu, ENGINES, MAX_DURATION_US, QDEPTH, TYPES};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// VFIO region index of BAR0.
pub(super) const REGION_BAR0: u32 = 0;
/// VFIO region index of the PCI configuration space.
pub(super) const REGION_CONFIG: u32 = 7;
/// Size of the configuration space.
pub(super) const CFG_SIZE: usize = 256;
/// Size of BAR0.
pub(super) const BAR0_SIZE: u64 = 4096;

// BAR0 register offsets (Documentation/gvt-rs/simulated-gpu.rst).
const R_ID: u64 = 0x00;
const R_VERSION: u64 = 0x04;
const R_ENGINES: u64 = 0x08;
const R_VGPU_ID: u64 = 0x0c;
const R_STATUS: u64 = 0x10;
const R_QDEPTH: u64 = 0x14;
const R_SUBMITTED: u64 = 0x18;
const R_COMPLETED: u64 = 0x1c;
const R_LAST_TAG: u64 = 0x20;
const R_MAX_DURATION: u64 = 0x24;
const R_GM_LOW: u64 = 0x28;
const R_GM_HIGH: u64 = 0x2c;
const R_BUSY_NS: u64 = 0x30;
const R_SUBMIT: u64 = 0x40;
const R_GTT_INDEX: u64 = 0x60;
const R_GTT_DATA: u64 = 0x68;

/// `R_ID` value: "GVTS".
const DEVICE_MAGIC: u32 = 0x5354_5647;
const PCI_VENDOR: u16 = 0x8086;
const PCI_DEVICE: u16 = 0x7a5a;

/// Per-vGPU register state, under the vGPU's lock (GVT-g's `vgpu_lock`).
pub(super) struct Regs {
    cfg: [u8; CFG_SIZE],
    init_cfg: [u8; CFG_SIZE],
    pub(super) open: bool,
    gtt_index: u32,
}

impl Regs {
    pub(super) fn new(cfg: [u8; CFG_SIZE]) -> Self {
        Self {
            cfg,
            init_cfg: cfg,
            open: false,
            gtt_index: 0,
        }
    }

    /// Device reset: configuration space and index back to power-on values.
    pub(super) fn reset(&mut self) {
        self.cfg = self.init_cfg;
        self.gtt_index = 0;
    }
}

fn put16(cfg: &mut [u8], off: usize, v: u16) {
    if let Some(d) = cfg.get_mut(off..off + 2) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// Power-on configuration space of a vGPU of type `ty`.
pub(super) fn init_config(cfg: &mut [u8; CFG_SIZE], ty: usize) {
    put16(cfg, 0x00, PCI_VENDOR);
    put16(cfg, 0x02, PCI_DEVICE);
    // Revision 1, class 0x038000 (display controller, other).
    if let Some(c) = cfg.get_mut(0x08..0x0c) {
        c.copy_from_slice(&[1, 0x00, 0x80, 0x03]);
    }
    put16(cfg, 0x2c, PCI_VENDOR);
    put16(cfg, 0x2e, u16::try_from(ty + 1).unwrap_or(0));
    // Interrupt pin INTA.
    if let Some(p) = cfg.get_mut(0x3d) {
        *p = 1;
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

fn aligned(off: u64, len: usize) -> bool {
    matches!(len, 1 | 2 | 4 | 8 | 16) && off % (len as u64) == 0
}

/// Handles one access of `data.len()` bytes at `off` of region `index`.
pub(super) fn access(v: &SimVgpu, index: u32, off: u64, data: &mut [u8], write: bool) -> Result {
    let len = data.len();
    let end = off.checked_add(len as u64).ok_or(EINVAL)?;
    if !aligned(off, len) || end > region_size(index) {
        return Err(EINVAL);
    }
    match index {
        REGION_CONFIG => config_access(v, off, data, write),
        REGION_BAR0 => bar0_access(v, off, data, write),
        _ => Err(EINVAL),
    }
}

fn config_access(v: &SimVgpu, off: u64, data: &mut [u8], write: bool) -> Result {
    if data.len() > 4 {
        return Err(EINVAL);
    }
    let off = usize::try_from(off).map_err(|_| EINVAL)?;
    let mut r = v.regs.lock();
    let len = data.len();
    if !write {
        data.copy_from_slice(r.cfg.get(off..off + len).ok_or(EINVAL)?);
        return Ok(());
    }
    // Writable: command (0x04-0x05), BAR0 (0x10-0x13, size-masked) and the
    // interrupt line (0x3c). Other bytes are read-only and ignored, as on a
    // PCI device.
    for (i, b) in data.iter().enumerate() {
        let at = off + i;
        let val = match at {
            0x04 => *b & 0x06,
            0x05 => 0,
            0x10 => 0,
            0x11 => *b & 0xf0,
            0x12 | 0x13 | 0x3c => *b,
            _ => continue,
        };
        if let Some(c) = r.cfg.get_mut(at) {
            *c = val;
        }
    }
    Ok(())
}

fn u32_at(data: &[u8], i: usize) -> Result<u32> {
    let b: [u8; 4] = data
        .get(i..i + 4)
        .ok_or(EINVAL)?
        .try_into()
        .map_err(|_| EINVAL)?;
    Ok(u32::from_le_bytes(b))
}

fn bar0_read64(v: &SimVgpu, off: u64) -> Result<u64> {
    match off {
        R_BUSY_NS => Ok(v.busy_ns.load(Ordering::Relaxed)),
        R_GTT_DATA => {
            let idx = v.regs.lock().gtt_index;
            v.gpu().gtt_read(v.id, idx)
        }
        _ => Err(EINVAL),
    }
}

fn bar0_read32(v: &SimVgpu, off: u64) -> Result<u32> {
    let ty = TYPES.get(v.ty).ok_or(EINVAL)?;
    let gpu = v.gpu();
    Ok(match off {
        R_ID => DEVICE_MAGIC,
        R_VERSION => 1,
        R_ENGINES => ENGINES as u32,
        R_VGPU_ID => u32::from(v.id),
        R_STATUS => {
            let s = gpu.engine.vgpu_stats(v.id);
            let busy = s.is_some_and(|s| s.queue_depth > 0 || s.inflight > 0);
            let started = s.is_some_and(|s| s.started);
            u32::from(busy) | (u32::from(started) << 1)
        }
        R_QDEPTH => QDEPTH as u32,
        R_SUBMITTED => v.submitted.load(Ordering::Relaxed),
        R_COMPLETED => v.completed.load(Ordering::Acquire),
        R_LAST_TAG => v.last_tag.load(Ordering::Relaxed),
        R_MAX_DURATION => MAX_DURATION_US,
        R_GM_LOW => ty.low_mb,
        R_GM_HIGH => ty.high_mb,
        R_BUSY_NS => v.busy_ns.load(Ordering::Relaxed) as u32,
        0x34 => (v.busy_ns.load(Ordering::Relaxed) >> 32) as u32,
        R_GTT_INDEX => v.regs.lock().gtt_index,
        _ => return Err(EINVAL),
    })
}

fn bar0_access(v: &SimVgpu, off: u64, data: &mut [u8], write: bool) -> Result {
    let len = data.len();
    if !write {
        return match len {
            4 => {
                data.copy_from_slice(&bar0_read32(v, off)?.to_le_bytes());
                Ok(())
            }
            8 => {
                data.copy_from_slice(&bar0_read64(v, off)?.to_le_bytes());
                Ok(())
            }
            _ => Err(EINVAL),
        };
    }
    match (off, len) {
        (R_SUBMIT, 16) => {
            let engine = u32_at(data, 0)?;
            let duration_us = u32_at(data, 4)?;
            let bytes = u32_at(data, 8)?;
            let tag = u32_at(data, 12)?;
            let r = v.regs.lock();
            if !r.open {
                return Err(EIO);
            }
            v.gpu().submit(v, engine, duration_us, bytes, tag)
        }
        (R_GTT_INDEX, 4) => {
            let idx = u32_at(data, 0)?;
            let ty = TYPES.get(v.ty).ok_or(EINVAL)?;
            let max = u64::from(ty.high_mb) * 256; // 4 KB pages per MB
            if u64::from(idx) >= max {
                return Err(ERANGE);
            }
            v.regs.lock().gtt_index = idx;
            Ok(())
        }
        (R_GTT_DATA, 8) => {
            let b: [u8; 8] = data.try_into().map_err(|_| EINVAL)?;
            let _r = v.regs.lock();
            let idx = _r.gtt_index;
            v.gpu().gtt_write(v.id, idx, u64::from_le_bytes(b))
        }
        _ => Err(EINVAL),
    }
}
