// SPDX-License-Identifier: GPL-2.0

//! The VFIO device of a simulated vGPU: a vfio-pci device behind an emulated
//! IOMMU, whose regions are the configuration space and BAR0 ([`regs`]) and
//! whose interrupts have vfio-pci's semantics ([`irq`]), and which migrates
//! ([`super::migration`]).

use super::{
    irq,
    regs,
    SimVgpu, //
};
use kernel::{
    fs::file::Offset,
    prelude::*,
    uaccess::{
        UserSliceReader,
        UserSliceWriter, //
    },
    vfio::{
        self,
        pci::RegionIndex,
        DeviceInfo,
        IrqInfo,
        IrqSet,
        RegionInfo, //
    }, //
};

/// A region's offset in the device file: its index above this bit.
const OFFSET_SHIFT: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_SHIFT) - 1;
/// Largest access: the whole configuration space.
const MAX_ACCESS: usize = 256;

/// The VFIO device of a vGPU.
pub(crate) type Vgpu = vfio::Device<SimVgpu>;

/// One register access per read or write, as an MMIO cycle; configuration
/// space may be read whole (QEMU reads it in one access).
fn split(offset: Offset, count: usize) -> Result<(RegionIndex, u64)> {
    if count == 0 || count > MAX_ACCESS {
        return Err(EINVAL);
    }
    let pos = offset as u64;
    let index = u32::try_from(pos >> OFFSET_SHIFT).map_err(|_| EINVAL)?;
    let index = RegionIndex::from_raw(index).ok_or(EINVAL)?;
    Ok((index, pos & OFFSET_MASK))
}

#[vtable]
impl vfio::Operations for SimVgpu {
    const NAME: &'static CStr = c"vfio-gvtsim";

    fn open_device(v: &Vgpu) -> Result {
        v.vfio_open()
    }

    fn close_device(v: &Vgpu) {
        // A data file still open fails from now on; the next open runs.
        v.mig_reset();
        v.vfio_close();
        v.irqs.release();
    }

    fn read(v: &Vgpu, mut buf: UserSliceWriter, offset: &mut Offset) -> Result<usize> {
        let count = buf.len();
        let (index, off) = split(*offset, count)?;
        let mut data = [0u8; MAX_ACCESS];
        let data = data.get_mut(..count).ok_or(EINVAL)?;
        regs::access(v, index, off, data, false)?;
        buf.write_slice(data)?;
        *offset += count as Offset;
        Ok(count)
    }

    fn write(v: &Vgpu, mut buf: UserSliceReader, offset: &mut Offset) -> Result<usize> {
        let count = buf.len();
        let (index, off) = split(*offset, count)?;
        let mut data = [0u8; MAX_ACCESS];
        let data = data.get_mut(..count).ok_or(EINVAL)?;
        buf.read_slice(data)?;
        regs::access(v, index, off, data, true)?;
        *offset += count as Offset;
        Ok(count)
    }

    fn info(_v: &Vgpu) -> DeviceInfo {
        DeviceInfo::pci(true)
    }

    fn region_info(_v: &Vgpu, index: u32) -> Result<RegionInfo> {
        let size = regs::region_size(RegionIndex::from_raw(index).ok_or(EINVAL)?);
        Ok(RegionInfo {
            readable: size != 0,
            writable: size != 0,
            size,
            offset: u64::from(index) << OFFSET_SHIFT,
        })
    }

    fn irq_info(_v: &Vgpu, index: u32) -> Result<IrqInfo> {
        irq::info(index)
    }

    fn set_irqs(v: &Vgpu, set: &IrqSet) -> Result {
        v.irqs.set_irqs(set)
    }

    fn reset(v: &Vgpu) -> Result {
        // A reset ends a migration, whatever its state (ERROR included).
        v.mig_reset();
        let mut r = v.regs.lock();
        v.reset_locked(&mut r, true)
    }

    fn request(v: &Vgpu, count: u32) {
        // The VFIO core asks while the device is registered, so it has its
        // parent (the mdev device).
        if let Some(parent) = v.parent() {
            v.irqs.request(&parent, count);
        }
    }
}
