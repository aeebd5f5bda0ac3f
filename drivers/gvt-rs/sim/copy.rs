// SPDX-License-Identifier: GPL-2.0

//! Copies of guest memory: work that moves data (protocol version 3).
//!
//! A copy descriptor ([`OP_COPY`]) is a workload like any other (its
//! duration on the engine, its bytes counted as PCI-E traffic) that also
//! copies guest memory. It points at a copy block in guest memory (source,
//! destination, length: `struct gvt_sim_copy`), which is read and scanned
//! with the descriptor, when the guest rings the doorbell: a bad block fails
//! the vGPU before anything is queued or written. The copy itself runs when
//! the workload completes, in the vGPU's own completion delivery
//! ([`super::delivery`]) and before the status record that reports it, so
//! the guest finds the data in place when it sees the completion. Its DMA
//! reads and writes go through the vGPU's VFIO device (`vfio_dma_rw`), a
//! bounce buffer at a time; a slow guest page stalls that vGPU alone, and
//! a source or destination not mapped is a fault of that vGPU.
//!
//! Protocol: `include/uapi/linux/gvt_rs_sim.h`.

use super::{
    ring::Fault,
    vdev::Vgpu,
    ENGINES, //
};
use crate::protocol::{
    COPY_BLOCK,
    COPY_MAX,
    RING_MAX, //
};
use kernel::prelude::*;

/// Bytes per DMA read and write of a copy.
const CHUNK: usize = 4096;
/// Descriptors of one engine's ring.
const PER_ENGINE: usize = RING_MAX as usize;

/// A scanned copy block: `len` bytes from `src` to `dst`, guest addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CopyBlock {
    pub(super) src: u64,
    pub(super) dst: u64,
    pub(super) len: u32,
}

fn le64(b: &[u8; COPY_BLOCK], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

impl CopyBlock {
    /// Decodes `struct gvt_sim_copy` and scans it: a length from 1 to
    /// [`COPY_MAX`], reserved fields 0, ranges that neither wrap nor
    /// overlap.
    pub(super) fn from_bytes(b: &[u8; COPY_BLOCK]) -> Result<Self, Fault> {
        let len_word = le64(b, 16);
        let len = (len_word & u64::from(u32::MAX)) as u32;
        if len_word >> 32 != 0 || le64(b, 24) != 0 || len == 0 || len > COPY_MAX {
            return Err(Fault::CopyBad);
        }
        let (src, dst) = (le64(b, 0), le64(b, 8));
        let src_end = src.checked_add(u64::from(len)).ok_or(Fault::CopyBad)?;
        let dst_end = dst.checked_add(u64::from(len)).ok_or(Fault::CopyBad)?;
        if src < dst_end && dst < src_end {
            return Err(Fault::CopyBad);
        }
        Ok(Self { src, dst, len })
    }

    /// Its PCI-E traffic: the bytes read and the bytes written.
    pub(super) fn traffic(&self) -> u32 {
        self.len.saturating_mul(2)
    }
}

/// Guest memory as the device reaches it.
pub(super) trait Dma {
    /// Reads `buf.len()` bytes at guest address `at`.
    fn read(&self, at: u64, buf: &mut [u8]) -> Result;
    /// Writes `buf` at guest address `at`.
    fn write(&self, at: u64, buf: &[u8]) -> Result;
}

impl Dma for Vgpu {
    fn read(&self, at: u64, buf: &mut [u8]) -> Result {
        self.dma_read(at, buf)
    }

    fn write(&self, at: u64, buf: &[u8]) -> Result {
        self.dma_write(at, buf)
    }
}

/// A vGPU's copies, under its register lock: the block of every copy
/// fetched and not completed, by engine and ring index, and the bounce
/// buffer. Allocated with the vGPU.
pub(super) struct Copies {
    blocks: KVec<Option<CopyBlock>>,
    bounce: KVec<u8>,
}

impl Copies {
    pub(super) fn new() -> Result<Self> {
        let n = ENGINES * PER_ENGINE;
        let mut blocks = KVec::with_capacity(n, GFP_KERNEL)?;
        blocks.resize(n, None, GFP_KERNEL)?;
        let mut bounce = KVec::with_capacity(CHUNK, GFP_KERNEL)?;
        bounce.resize(CHUNK, 0, GFP_KERNEL)?;
        Ok(Self { blocks, bounce })
    }

    fn slot(&mut self, e: usize, index: u32) -> Option<&mut Option<CopyBlock>> {
        let i = usize::try_from(index).ok().filter(|i| *i < PER_ENGINE)?;
        self.blocks
            .get_mut(e.checked_mul(PER_ENGINE)?.checked_add(i)?)
    }

    /// Records what descriptor `index` of engine `e`'s ring copies (`None`:
    /// nothing).
    pub(super) fn set(&mut self, e: usize, index: u32, c: Option<CopyBlock>) {
        if let Some(s) = self.slot(e, index) {
            *s = c;
        }
    }

    /// Takes the copy of descriptor `index` of engine `e`'s ring.
    pub(super) fn take(&mut self, e: usize, index: u32) -> Option<CopyBlock> {
        self.slot(e, index).and_then(Option::take)
    }

    /// Forgets every copy (a reset, a new tenant), and the last data.
    pub(super) fn clear(&mut self) {
        self.blocks.fill(None);
        self.bounce.fill(0);
    }

    /// Copies `c` through `dma`: its data is in the destination when this
    /// returns. Fails at the first chunk that cannot be read or written
    /// (the destination may then be partly written).
    pub(super) fn run(&mut self, dma: &impl Dma, c: &CopyBlock) -> Result {
        let len = usize::try_from(c.len).map_err(|_| EINVAL)?;
        let mut done = 0usize;
        while done < len {
            let n = (len - done).min(CHUNK);
            let buf = self.bounce.get_mut(..n).ok_or(EINVAL)?;
            let off = done as u64;
            dma.read(c.src.checked_add(off).ok_or(EINVAL)?, buf)?;
            dma.write(c.dst.checked_add(off).ok_or(EINVAL)?, buf)?;
            done += n;
        }
        Ok(())
    }
}

#[kernel::macros::kunit_tests(gvt_rs_sim_copy)]
mod tests {
    use super::*;
    use core::cell::Cell;

    /// Guest memory of `data.len()` bytes at `base`; nothing else mapped.
    /// `Cell`s, not a `RefCell`: nothing here can panic.
    struct Mem {
        base: u64,
        data: KVec<Cell<u8>>,
        writes: Cell<u32>,
    }

    impl Mem {
        fn new(base: u64, len: usize) -> Result<Self> {
            let mut data = KVec::with_capacity(len, GFP_KERNEL)?;
            for i in 0..len {
                data.push(Cell::new((i % 251) as u8), GFP_KERNEL)?;
            }
            Ok(Self {
                base,
                data,
                writes: Cell::new(0),
            })
        }

        fn range(&self, at: u64, len: usize) -> Result<&[Cell<u8>]> {
            let from = usize::try_from(at.checked_sub(self.base).ok_or(EFAULT)?)?;
            let to = from.checked_add(len).ok_or(EFAULT)?;
            self.data.get(from..to).ok_or(EFAULT)
        }

        fn byte(&self, at: u64) -> u8 {
            let i = usize::try_from(at - self.base).unwrap_or(usize::MAX);
            self.data.get(i).map_or(0, Cell::get)
        }
    }

    impl Dma for Mem {
        fn read(&self, at: u64, buf: &mut [u8]) -> Result {
            let mem = self.range(at, buf.len())?;
            for (b, m) in buf.iter_mut().zip(mem) {
                *b = m.get();
            }
            Ok(())
        }

        fn write(&self, at: u64, buf: &[u8]) -> Result {
            let mem = self.range(at, buf.len())?;
            for (b, m) in buf.iter().zip(mem) {
                m.set(*b);
            }
            self.writes.set(self.writes.get() + 1);
            Ok(())
        }
    }

    fn block(src: u64, dst: u64, len: u64, reserved: u64) -> [u8; COPY_BLOCK] {
        let mut b = [0u8; COPY_BLOCK];
        for (chunk, w) in b.chunks_exact_mut(8).zip([src, dst, len, reserved]) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    fn scan(src: u64, dst: u64, len: u64, reserved: u64) -> Result<CopyBlock, Fault> {
        CopyBlock::from_bytes(&block(src, dst, len, reserved))
    }

    #[test]
    fn copy_blocks_are_scanned() {
        let ok = scan(0x1000, 0x9000, 4096, 0);
        assert_eq!(
            ok,
            Ok(CopyBlock {
                src: 0x1000,
                dst: 0x9000,
                len: 4096
            })
        );
        assert_eq!(ok.map(|c| c.traffic()), Ok(8192));
        let max = u64::from(COPY_MAX);
        assert!(scan(0, max, max, 0).is_ok());
        // Adjacent ranges do not overlap.
        assert!(scan(0x2000, 0x1000, 0x1000, 0).is_ok());
        assert_eq!(scan(0x1000, 0x9000, 0, 0), Err(Fault::CopyBad));
        assert_eq!(scan(0, max + 1, max + 1, 0), Err(Fault::CopyBad));
        assert_eq!(scan(0x1000, 0x9000, 16 | (1 << 32), 0), Err(Fault::CopyBad));
        assert_eq!(scan(0x1000, 0x9000, 16, 1 << 63), Err(Fault::CopyBad));
        assert_eq!(scan(0x1000, 0x1800, 0x1000, 0), Err(Fault::CopyBad));
        assert_eq!(scan(0x1800, 0x1000, 0x1000, 0), Err(Fault::CopyBad));
        assert_eq!(scan(0x1000, 0x1000, 1, 0), Err(Fault::CopyBad));
        assert_eq!(scan(u64::MAX - 8, 0x1000, 16, 0), Err(Fault::CopyBad));
        assert_eq!(scan(0x1000, u64::MAX - 8, 16, 0), Err(Fault::CopyBad));
    }

    #[test]
    fn a_copy_moves_exactly_its_bytes_in_chunks() -> Result {
        let mem = Mem::new(0x10000, 0x8000)?;
        let mut copies = Copies::new()?;
        // Three chunks, the last one short; source and destination unaligned.
        let c = CopyBlock {
            src: 0x10003,
            dst: 0x14001,
            len: 2 * CHUNK as u32 + 5,
        };
        let before = mem.byte(0x14000);
        let after = mem.byte(0x14001 + u64::from(c.len));
        let expect = |i: u64| ((0x3 + i) % 251) as u8;
        copies.run(&mem, &c)?;
        assert_eq!(mem.writes.get(), 3);
        for i in 0..u64::from(c.len) {
            assert_eq!(mem.byte(c.dst + i), expect(i));
        }
        assert_eq!(mem.byte(0x14000), before);
        assert_eq!(mem.byte(0x14001 + u64::from(c.len)), after);
        Ok(())
    }

    #[test]
    fn a_copy_from_or_to_unmapped_memory_fails() -> Result {
        let mem = Mem::new(0x10000, 0x4000)?;
        let mut copies = Copies::new()?;
        let dst_byte = mem.byte(0x12000);
        let from_unmapped = CopyBlock {
            src: 0x80000,
            dst: 0x12000,
            len: 64,
        };
        assert!(copies.run(&mem, &from_unmapped).is_err());
        assert_eq!(mem.writes.get(), 0);
        assert_eq!(mem.byte(0x12000), dst_byte);
        // The first chunk lands, the second is past the end of memory.
        let to_the_end = CopyBlock {
            src: 0x10000,
            dst: 0x13000,
            len: 2 * CHUNK as u32,
        };
        assert!(copies.run(&mem, &to_the_end).is_err());
        assert_eq!(mem.writes.get(), 1);
        Ok(())
    }

    #[test]
    fn blocks_are_kept_per_engine_and_index() -> Result {
        let mut copies = Copies::new()?;
        let c = CopyBlock {
            src: 0,
            dst: 0x1000,
            len: 1,
        };
        copies.set(1, 63, Some(c));
        copies.set(0, 63, None);
        // Out of range: ignored.
        copies.set(ENGINES, 0, Some(c));
        copies.set(0, RING_MAX, Some(c));
        assert_eq!(copies.take(0, 63), None);
        assert_eq!(copies.take(1, 63), Some(c));
        assert_eq!(copies.take(1, 63), None);
        copies.set(0, 5, Some(c));
        copies.clear();
        assert_eq!(copies.take(0, 5), None);
        assert_eq!(copies.take(ENGINES, 0), None);
        Ok(())
    }
}
