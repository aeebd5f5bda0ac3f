// SPDX-License-Identifier: GPL-2.0

//! A vGPU's command rings in guest memory and the command scanner.
//!
//! As a GVT-g guest does, a guest writes descriptors into a ring buffer in
//! its own memory and moves the ring's TAIL register. The device fetches the
//! new descriptors with DMA reads and scans every one before it reaches a
//! V-Channel; anything malformed is a [`Fault`] that puts the vGPU into the
//! failed state (GVT-g's failsafe mode) until a reset.
//!
//! Protocol: `include/uapi/linux/gvt_rs_sim.h`.

use super::MAX_DURATION_US;

use crate::protocol::{
    fault,
    DESC_IRQ,
    DESC_SIZE,
    OP_COPY,
    OP_EXEC,
    PAGE_BYTES,
    RING_MAX,
    STATUS_RECORD, //
};

/// Smallest useful ring: a ring of one descriptor can never hold one. At
/// most `RING_MAX - 1` descriptors are outstanding, so a V-Channel of
/// `RING_MAX` entries never overflows.
const RING_MIN: u32 = 2;
/// Guest addresses of rings and of the status page are page aligned.
pub(super) const GUEST_PAGE: u64 = PAGE_BYTES as u64;

/// Why a vGPU failed: the `FAULT` register's reason byte, the header's
/// `GVT_SIM_FAULT_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Fault {
    /// A ring was enabled with a misaligned base or a bad size.
    RingConfig = fault::RING_CONFIG,
    /// The doorbell of a disabled ring was rung.
    RingDisabled = fault::RING_DISABLED,
    /// TAIL was set outside the ring.
    TailRange = fault::TAIL_RANGE,
    /// A descriptor's guest address is not mapped.
    Fetch = fault::FETCH,
    /// Unknown opcode.
    Opcode = fault::OPCODE,
    /// Unknown flag or reserved field set.
    Reserved = fault::RESERVED,
    /// Duration 0 or longer than `MAX_DURATION_US`.
    Duration = fault::DURATION,
    /// The status page's guest address is not mapped.
    StatusWrite = fault::STATUS_WRITE,
    /// A copy's block is misaligned or not mapped.
    CopyBlock = fault::COPY_BLOCK,
    /// A copy block with a bad length, ranges or a reserved field set.
    CopyBad = fault::COPY_BAD,
    /// A copy's source or destination was not mapped when it ran.
    CopyDma = fault::COPY_DMA,
}

impl Fault {
    /// What the admin reads in the log.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Fault::RingConfig => "ring enabled with a bad base or size",
            Fault::RingDisabled => "doorbell on a disabled ring",
            Fault::TailRange => "tail outside the ring",
            Fault::Fetch => "descriptor address not mapped",
            Fault::Opcode => "unknown opcode",
            Fault::Reserved => "reserved bits set",
            Fault::Duration => "duration out of range",
            Fault::StatusWrite => "status page not mapped",
            Fault::CopyBlock => "copy block misaligned or not mapped",
            Fault::CopyBad => "bad copy block",
            Fault::CopyDma => "copy source or destination not mapped",
        }
    }
}

/// A descriptor as read from guest memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Desc {
    pub(super) opcode: u32,
    pub(super) flags: u32,
    pub(super) seqno: u32,
    pub(super) duration_us: u32,
    pub(super) bytes: u32,
    pub(super) reserved0: u32,
    /// [`OP_COPY`]: the guest address of its copy block; 0 otherwise.
    pub(super) arg: u64,
}

fn le32(b: &[u8; DESC_SIZE], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

impl Desc {
    /// Decodes the little-endian layout of `struct gvt_sim_desc`.
    pub(super) fn from_bytes(b: &[u8; DESC_SIZE]) -> Self {
        Self {
            opcode: le32(b, 0),
            flags: le32(b, 4),
            seqno: le32(b, 8),
            duration_us: le32(b, 12),
            bytes: le32(b, 16),
            reserved0: le32(b, 20),
            arg: u64::from(le32(b, 24)) | (u64::from(le32(b, 28)) << 32),
        }
    }

    /// The command scanner: every descriptor passes here before it is
    /// queued, as GVT-g scans every guest command buffer.
    /// A copy's block is read and scanned after this ([`super::copy`]).
    pub(super) fn scan(&self) -> Result<(), Fault> {
        // A copy's traffic is what it copies: its `bytes` are the device's.
        let reserved_set = match self.opcode {
            OP_EXEC => self.arg != 0,
            OP_COPY => self.bytes != 0,
            _ => return Err(Fault::Opcode),
        };
        if self.flags & !DESC_IRQ != 0 || self.reserved0 != 0 || reserved_set {
            return Err(Fault::Reserved);
        }
        if self.duration_us == 0 || self.duration_us > MAX_DURATION_US {
            return Err(Fault::Duration);
        }
        Ok(())
    }
}

/// One engine's ring as the guest programmed it, and the device's progress.
#[derive(Clone, Copy, Default)]
pub(super) struct GuestRing {
    /// Guest address of descriptor 0.
    pub(super) base: u64,
    /// Descriptors in the ring.
    pub(super) size: u32,
    pub(super) enabled: bool,
    /// Oldest descriptor not completed.
    pub(super) head: u32,
    /// One past the newest descriptor the guest published.
    pub(super) tail: u32,
    /// Next descriptor to fetch.
    pub(super) fetched: u32,
    /// Completions since the ring was enabled, and their GPU time.
    pub(super) completed: u32,
    pub(super) gpu_ns: u64,
    /// Seqno of the last completed descriptor.
    pub(super) seqno: u32,
}

impl GuestRing {
    /// True while fetched descriptors have not all completed, or published
    /// ones are not fetched yet.
    pub(super) fn busy(&self) -> bool {
        self.head != self.fetched || self.fetched != self.tail
    }

    /// Enables the ring after checking how the guest programmed it.
    pub(super) fn enable(&mut self) -> Result<(), Fault> {
        let pow2 = self.size.is_power_of_two();
        if !pow2 || !(RING_MIN..=RING_MAX).contains(&self.size) || self.base % GUEST_PAGE != 0 {
            return Err(Fault::RingConfig);
        }
        *self = GuestRing {
            base: self.base,
            size: self.size,
            enabled: true,
            ..GuestRing::default()
        };
        Ok(())
    }

    /// Guest address of descriptor `index`.
    pub(super) fn desc_addr(&self, index: u32) -> Option<u64> {
        self.base
            .checked_add(u64::from(index).checked_mul(DESC_SIZE as u64)?)
    }

    /// Descriptors from `from` up to `to`, going round the ring.
    fn distance(&self, from: u32, to: u32) -> u32 {
        to.wrapping_add(self.size)
            .wrapping_sub(from)
            .checked_rem(self.size)
            .unwrap_or(0)
    }

    /// Whether a new `tail` would take back descriptors already fetched:
    /// the device would run them again and overflow its V-Channel.
    pub(super) fn tail_goes_back(&self, tail: u32) -> bool {
        self.distance(self.head, tail) < self.distance(self.head, self.fetched)
    }

    /// The index after `index`.
    pub(super) fn next(&self, index: u32) -> u32 {
        match index.checked_add(1) {
            Some(n) if n < self.size => n,
            _ => 0,
        }
    }
}

/// The status page record of `ring` (`struct gvt_sim_engine_status`).
pub(super) fn status_record(ring: &GuestRing) -> [u8; STATUS_RECORD] {
    let mut r = [0u8; STATUS_RECORD];
    let fields: [(usize, &[u8]); 4] = [
        (0, &ring.seqno.to_le_bytes()),
        (4, &ring.completed.to_le_bytes()),
        (8, &ring.gpu_ns.to_le_bytes()),
        (16, &ring.head.to_le_bytes()),
    ];
    for (at, bytes) in fields {
        if let Some(d) = r.get_mut(at..at + bytes.len()) {
            d.copy_from_slice(bytes);
        }
    }
    r
}

#[kernel::macros::kunit_tests(gvt_rs_sim_scanner)]
mod tests {
    use super::{
        Desc,
        Fault,
        GuestRing, //
    };
    use crate::protocol::{
        DESC_SIZE,
        RING_MAX, //
    };

    fn raw(words: [u32; 8]) -> [u8; DESC_SIZE] {
        let mut b = [0u8; DESC_SIZE];
        for (chunk, w) in b.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    fn scan(words: [u32; 8]) -> Result<(), Fault> {
        Desc::from_bytes(&raw(words)).scan()
    }

    #[test]
    fn decodes_the_layout() {
        let d = Desc::from_bytes(&raw([1, 1, 7, 2000, 4096, 0, 5, 6]));
        assert_eq!(d.opcode, 1);
        assert_eq!(d.flags, 1);
        assert_eq!(d.seqno, 7);
        assert_eq!(d.duration_us, 2000);
        assert_eq!(d.bytes, 4096);
        assert_eq!(d.arg, (6 << 32) | 5);
    }

    #[test]
    fn scanner_accepts_only_well_formed_descriptors() {
        assert_eq!(scan([1, 0, 1, 1, 0, 0, 0, 0]), Ok(()));
        assert_eq!(scan([1, 1, 1, 100_000, u32::MAX, 0, 0, 0]), Ok(()));
        assert_eq!(scan([0, 0, 1, 1, 0, 0, 0, 0]), Err(Fault::Opcode));
        assert_eq!(scan([7, 0, 1, 1, 0, 0, 0, 0]), Err(Fault::Opcode));
        assert_eq!(scan([1, 2, 1, 1, 0, 0, 0, 0]), Err(Fault::Reserved));
        assert_eq!(scan([1, 0, 1, 1, 0, 1, 0, 0]), Err(Fault::Reserved));
        assert_eq!(scan([1, 0, 1, 1, 0, 0, 0, 1 << 31]), Err(Fault::Reserved));
        assert_eq!(scan([1, 0, 1, 0, 0, 0, 0, 0]), Err(Fault::Duration));
        assert_eq!(scan([1, 0, 1, 100_001, 0, 0, 0, 0]), Err(Fault::Duration));
    }

    #[test]
    fn scanner_checks_copy_descriptors() {
        // The block's address is any: its alignment is checked when read.
        assert_eq!(scan([2, 1, 1, 1, 0, 0, 0x1000, 0]), Ok(()));
        assert_eq!(scan([2, 0, 1, 100_000, 0, 0, 0x1008, 7]), Ok(()));
        // A copy's bytes are the device's to count.
        assert_eq!(scan([2, 0, 1, 1, 4096, 0, 0x1000, 0]), Err(Fault::Reserved));
        assert_eq!(scan([2, 0, 1, 1, 0, 1, 0x1000, 0]), Err(Fault::Reserved));
        assert_eq!(scan([2, 4, 1, 1, 0, 0, 0x1000, 0]), Err(Fault::Reserved));
        assert_eq!(scan([2, 0, 1, 0, 0, 0, 0x1000, 0]), Err(Fault::Duration));
        assert_eq!(scan([3, 0, 1, 1, 0, 0, 0x1000, 0]), Err(Fault::Opcode));
    }

    #[test]
    fn ring_configuration_is_checked_at_enable() {
        let ring = |base, size| GuestRing {
            base,
            size,
            ..GuestRing::default()
        };
        for size in [2, 4, 32, RING_MAX] {
            assert_eq!(ring(0x1000, size).enable(), Ok(()));
        }
        for size in [0, 1, 3, 48, RING_MAX * 2] {
            assert_eq!(ring(0x1000, size).enable(), Err(Fault::RingConfig));
        }
        assert_eq!(ring(0x1008, 8).enable(), Err(Fault::RingConfig));
        let mut r = ring(0x2000, 4);
        r.head = 3;
        r.tail = 2;
        assert_eq!(r.enable(), Ok(()));
        assert!(r.enabled && r.head == 0 && r.tail == 0 && r.fetched == 0);
        assert_eq!((r.next(0), r.next(3)), (1, 0));
        assert_eq!(r.desc_addr(3), Some(0x2000 + 3 * DESC_SIZE as u64));
    }

    #[test]
    fn tail_may_not_take_back_fetched_descriptors() {
        let mut r = GuestRing {
            base: 0x1000,
            size: 8,
            ..GuestRing::default()
        };
        assert_eq!(r.enable(), Ok(()));
        // Head 6, fetched up to 2 (wrapped): 6, 7, 0, 1 are outstanding.
        r.head = 6;
        r.fetched = 2;
        r.tail = 2;
        assert!(!r.tail_goes_back(2) && !r.tail_goes_back(5));
        assert!(r.tail_goes_back(1) && r.tail_goes_back(7));
        // A tail at head publishes nothing: allowed only while idle.
        assert!(r.tail_goes_back(6));
        r.head = 2;
        assert!(!r.tail_goes_back(2) && !r.tail_goes_back(1));
    }
}
