// SPDX-License-Identifier: GPL-2.0

//! Live migration of a simulated vGPU: VFIO migration v2 with the STOP_COPY
//! states ([`vfio::Migration`]), and the vGPU's state as a versioned stream.
//!
//! STOP stops the device: the engine forgets the vGPU's queued work, the
//! work executing completes without a trace (its ring generation changes)
//! and every ring is rewound to HEAD, so that what was fetched and not
//! completed is fetched again when the device runs, here (a cancelled
//! migration) or on the destination. No interrupt, no DMA until then.
//! STOP_COPY reads out the stream, built when the state is entered;
//! RESUMING takes one, checked and loaded when it is left for STOP. A stream
//! that is refused leaves the vGPU as after a reset, in the ERROR state:
//! `VFIO_DEVICE_RESET` returns it to RUNNING.
//!
//! PRE_COPY is not offered: the stream is a few KB plus the GTT chunks the
//! guest wrote (at most the type's high GM, 4 MB for the largest), read
//! out in milliseconds; pre-copying would need the dirty tracking of GTT
//! writes made during the copy for a saving of that order.
//!
//! Stream format and version rules: `Documentation/gvt-rs/simulated-gpu.rst`.

use super::{
    dirty_bit,
    dirty_range,
    regs::{
        self,
        Saved,
        CFG_SIZE, //
    },
    ring::GuestRing,
    vdev::Vgpu,
    SimVgpu,
    ENGINES,
    SCRUB_CHUNK,
    TYPES, //
};
use crate::gvt_core::sched::WEIGHT_RANGE;
use crate::protocol::RING_MAX;
use core::sync::atomic::{
    AtomicBool,
    Ordering, //
};
use kernel::{
    fmt,
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        Mutex, //
    },
    uaccess::{
        UserSliceReader,
        UserSliceWriter, //
    },
    vfio::{
        self,
        DataFile,
        MigState,
        MigrationData,
        MigrationFlags, //
    }, //
};

/// `"GVTM"`, the first bytes of a stream.
const MAGIC: u32 = u32::from_le_bytes(*b"GVTM");
/// The stream version this driver writes and reads.
pub(super) const VERSION: u16 = 1;
/// Bytes of the header.
const HEADER: usize = 48;
/// Bytes of a type's name in the header.
const TYPE_NAME: usize = 16;
/// Bytes of a section's header: tag, reserved, length.
const SECTION: usize = 8;

const SEC_CONFIG: u16 = 1;
const SEC_REGS: u16 = 2;
const SEC_RING: u16 = 3;
const SEC_SCHED: u16 = 4;
const SEC_GTT: u16 = 5;

const REGS_LEN: usize = 40;
const RING_LEN: usize = 48;
const SCHED_LEN: usize = 16;
/// A GTT section without its entries: the first entry and the count.
const GTT_LEN: usize = 8;

/// Why a stream was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not a gvt-rs vGPU stream.
    Magic,
    /// A stream of another version.
    Version(u16),
    /// A stream of another vGPU type (its index).
    Type(u32),
    /// Longer than a stream of this vGPU's type can be.
    Length,
    /// Fewer bytes than the header announced: (have, want).
    Truncated(usize, usize),
    /// The checksum does not match: corrupted.
    Checksum,
    /// Well formed on the outside, wrong inside.
    Malformed(&'static str),
}

impl Refusal {
    /// The errno user space gets.
    pub(super) fn errno(self) -> Error {
        match self {
            Refusal::Magic | Refusal::Version(_) => EPROTONOSUPPORT,
            Refusal::Type(_) => EINVAL,
            Refusal::Length => EFBIG,
            Refusal::Truncated(..) => ENODATA,
            Refusal::Checksum | Refusal::Malformed(_) => EBADMSG,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::Magic => f.write_str("not a gvt-rs vGPU stream (bad magic)"),
            Refusal::Version(v) => write!(f, "stream version {v}, this driver reads {VERSION}"),
            Refusal::Type(t) => {
                let name = TYPES.get(t as usize).map_or(c"unknown", |t| t.name);
                write!(f, "stream of another vGPU type ({t}: {name:?})")
            }
            Refusal::Length => f.write_str("stream longer than one of this vGPU type"),
            Refusal::Truncated(have, want) => {
                write!(f, "stream truncated: {have} of {want} bytes")
            }
            Refusal::Checksum => f.write_str("checksum mismatch: the stream is corrupted"),
            Refusal::Malformed(what) => write!(f, "malformed stream: {what}"),
        }
    }
}

/// FNV-1a, 64 bits: the stream's checksum.
fn checksum(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ u64::from(*x)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Entries of the high-GM GTT of a vGPU of type `ty` (4 KB pages per MB).
fn gtt_entries(ty: usize) -> usize {
    TYPES.get(ty).map_or(0, |t| t.high_mb as usize * 256)
}

/// The bytes of a stream whose GTT sections are the chunks of `mask` of a
/// GTT of `len` entries.
fn stream_len(mask: u64, len: usize) -> usize {
    let fixed = HEADER
        + SECTION
        + CFG_SIZE
        + SECTION
        + REGS_LEN
        + ENGINES * (SECTION + RING_LEN)
        + SECTION
        + SCHED_LEN;
    (0..64u32)
        .filter(|b| mask & (1u64 << b) != 0)
        .map(|b| SECTION + GTT_LEN + dirty_range(b, len).len() * 8)
        .fold(fixed, usize::saturating_add)
}

/// The longest stream of a vGPU of type `ty`: every GTT chunk.
fn max_len(ty: usize) -> usize {
    stream_len(u64::MAX, gtt_entries(ty))
}

fn le16(b: &[u8], at: usize) -> u16 {
    let mut w = [0u8; 2];
    if let Some(s) = b.get(at..at + 2) {
        w.copy_from_slice(s);
    }
    u16::from_le_bytes(w)
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// The name of type `ty` as the header holds it: NUL padded.
fn type_name(ty: usize) -> [u8; TYPE_NAME] {
    let mut n = [0u8; TYPE_NAME];
    if let Some(t) = TYPES.get(ty) {
        for (d, s) in n.iter_mut().zip(t.name.to_bytes()) {
            *d = *s;
        }
    }
    n
}

/// Checks the header `h` (at least [`HEADER`] bytes) for a vGPU of type
/// `ty`; returns the stream's length.
fn check_header(h: &[u8], ty: usize) -> Result<usize, Refusal> {
    if h.len() < HEADER {
        return Err(Refusal::Truncated(h.len(), HEADER));
    }
    if le32(h, 0) != MAGIC {
        return Err(Refusal::Magic);
    }
    let version = le16(h, 4);
    if version != VERSION {
        return Err(Refusal::Version(version));
    }
    if usize::from(le16(h, 6)) != HEADER || le64(h, 40) != 0 {
        return Err(Refusal::Malformed("header"));
    }
    let t = le32(h, 12);
    if t as usize != ty || h.get(16..16 + TYPE_NAME) != Some(&type_name(ty)[..]) {
        return Err(Refusal::Type(t));
    }
    let len = le32(h, 8) as usize;
    if len > max_len(ty) {
        return Err(Refusal::Length);
    }
    if len < HEADER {
        return Err(Refusal::Malformed("length"));
    }
    Ok(len)
}

/// The state a stream carries, checked.
pub(super) struct Parsed {
    pub(super) regs: Saved,
    pub(super) weight: u32,
    pub(super) lag: u64,
    /// The GTT chunks it carries, as the dirty bits of [`super::Gtt`].
    pub(super) gtt_mask: u64,
}

/// The sections of a stream's body: (tag, payload). Stops at the first
/// malformed one, which [`parse`] refuses.
fn sections(body: &[u8]) -> impl Iterator<Item = Result<(u16, &[u8]), Refusal>> {
    let mut at = 0usize;
    core::iter::from_fn(move || {
        if at >= body.len() {
            return None;
        }
        let Some(h) = body.get(at..at + SECTION) else {
            at = body.len();
            return Some(Err(Refusal::Malformed("section header")));
        };
        let (tag, rsvd, len) = (le16(h, 0), le16(h, 2), le32(h, 4) as usize);
        let start = at + SECTION;
        let Some(payload) = start.checked_add(len).and_then(|end| body.get(start..end)) else {
            at = body.len();
            return Some(Err(Refusal::Malformed("section length")));
        };
        if rsvd != 0 {
            at = body.len();
            return Some(Err(Refusal::Malformed("section reserved field")));
        }
        at = start + len;
        Some(Ok((tag, payload)))
    })
}

/// Checks a ring as the device could have it.
fn ring_valid(r: &GuestRing) -> bool {
    if !r.enabled {
        // Disabled: as left by a reset or an idle disable; its base and
        // size are anything the guest wrote, checked when it enables it.
        return r.head == r.tail && r.fetched == r.tail && (r.head == 0 || r.head < r.size);
    }
    let mut probe = *r;
    if probe.enable().is_err()
        || r.size > RING_MAX
        || r.head >= r.size
        || r.tail >= r.size
        || r.fetched >= r.size
    {
        return false;
    }
    // Fetched lies between head and tail.
    let dist = |from: u32, to: u32| to.wrapping_add(r.size).wrapping_sub(from) % r.size;
    dist(r.head, r.fetched) <= dist(r.head, r.tail)
}

/// Parses and checks the stream `b` for a vGPU of type `ty`: the header,
/// the checksum, every section once (a ring per engine, GTT chunks any
/// number), and every value as the device could hold it.
pub(super) fn parse(b: &[u8], ty: usize) -> Result<Parsed, Refusal> {
    let len = check_header(b, ty)?;
    if b.len() < len {
        return Err(Refusal::Truncated(b.len(), len));
    }
    if b.len() > len {
        return Err(Refusal::Length);
    }
    let body = b.get(HEADER..len).ok_or(Refusal::Malformed("length"))?;
    if checksum(body) != le64(b, 32) {
        return Err(Refusal::Checksum);
    }
    let entries = gtt_entries(ty);
    let mut cfg = None;
    let mut regs = None;
    let mut sched = None;
    let mut rings: [Option<GuestRing>; ENGINES] = [None; ENGINES];
    let mut gtt_mask = 0u64;
    for s in sections(body) {
        let (tag, p) = s?;
        match tag {
            SEC_CONFIG if p.len() == CFG_SIZE && cfg.is_none() => {
                let mut c = [0u8; CFG_SIZE];
                c.copy_from_slice(p);
                cfg = Some(c);
            }
            SEC_REGS if p.len() == REGS_LEN && regs.is_none() => regs = Some(p),
            SEC_SCHED if p.len() == SCHED_LEN && sched.is_none() => {
                if le32(p, 4) != 0 {
                    return Err(Refusal::Malformed("scheduling section"));
                }
                sched = Some((le32(p, 0), le64(p, 8)));
            }
            SEC_RING if p.len() == RING_LEN => {
                let e = le32(p, 0) as usize;
                let slot = rings.get_mut(e).ok_or(Refusal::Malformed("ring engine"))?;
                let enabled = match le32(p, 4) {
                    0 => false,
                    1 => true,
                    _ => return Err(Refusal::Malformed("ring enable")),
                };
                let r = GuestRing {
                    base: le64(p, 8),
                    gpu_ns: le64(p, 16),
                    size: le32(p, 24),
                    enabled,
                    head: le32(p, 28),
                    tail: le32(p, 32),
                    fetched: le32(p, 36),
                    completed: le32(p, 40),
                    seqno: le32(p, 44),
                };
                if slot.is_some() || !ring_valid(&r) {
                    return Err(Refusal::Malformed("ring"));
                }
                *slot = Some(r);
            }
            SEC_GTT if p.len() >= GTT_LEN => {
                let first = le32(p, 0) as usize;
                let count = le32(p, 4) as usize;
                let bit = first / SCRUB_CHUNK;
                let range = dirty_range(bit.min(63) as u32, entries);
                let ok = bit < 64
                    && range.start == first
                    && !range.is_empty()
                    && range.len() == count
                    && p.len() == GTT_LEN + count * 8
                    && gtt_mask & (1u64 << bit) == 0;
                if !ok {
                    return Err(Refusal::Malformed("GTT chunk"));
                }
                gtt_mask |= 1u64 << bit;
            }
            _ => return Err(Refusal::Malformed("unknown, repeated or odd-sized section")),
        }
    }
    let (Some(cfg), Some(regs), Some((weight, lag))) = (cfg, regs, sched) else {
        return Err(Refusal::Malformed("missing section"));
    };
    let mut ring_vals = [GuestRing::default(); ENGINES];
    for (d, s) in ring_vals.iter_mut().zip(rings) {
        *d = s.ok_or(Refusal::Malformed("missing ring"))?;
    }
    let saved = Saved {
        cfg,
        status_page: le64(regs, 0),
        busy_ns: le64(regs, 8),
        irq_status: le32(regs, 16),
        irq_enable: le32(regs, 20),
        fault: le32(regs, 24),
        submitted: le32(regs, 28),
        completed: le32(regs, 32),
        gtt_index: le32(regs, 36),
        rings: ring_vals,
    };
    if !saved.valid_for(ty) {
        return Err(Refusal::Malformed("register values"));
    }
    if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
        return Err(Refusal::Malformed("weight"));
    }
    Ok(Parsed {
        regs: saved,
        weight,
        lag,
        gtt_mask,
    })
}

/// The GTT chunks of a stream [`parse`] accepted: (first entry, entries as
/// little-endian bytes).
fn gtt_chunks(b: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    sections(b.get(HEADER..).unwrap_or(&[]))
        .filter_map(|s| s.ok())
        .filter(|(tag, _)| *tag == SEC_GTT)
        .filter_map(|(_, p)| Some((le32(p, 0) as usize, p.get(GTT_LEN..)?)))
}

/// Appends a section's header.
fn section(out: &mut KVVec<u8>, tag: u16, len: usize) -> Result {
    out.extend_from_slice(&tag.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&0u16.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&(len as u32).to_le_bytes(), GFP_KERNEL)?;
    Ok(())
}

/// Builds the stream of a vGPU of type `ty`: its registers `s`, its
/// scheduling identity (`weight`, `lag`) and the GTT chunks of `mask` of a
/// GTT of `len` entries, whose entries `chunk(bit, out)` appends.
fn build(
    s: &Saved,
    ty: usize,
    weight: u32,
    lag: u64,
    mask: u64,
    len: usize,
    mut chunk: impl FnMut(u32, &mut KVVec<u8>) -> Result,
) -> Result<KVVec<u8>> {
    let total = stream_len(mask, len);
    let mut out = KVVec::with_capacity(total, GFP_KERNEL)?;
    out.extend_from_slice(&MAGIC.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&VERSION.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&(HEADER as u16).to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&u32::try_from(total)?.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&(ty as u32).to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&type_name(ty), GFP_KERNEL)?;
    // The checksum, written last, and the reserved word.
    out.extend_from_slice(&[0u8; 16], GFP_KERNEL)?;
    section(&mut out, SEC_CONFIG, CFG_SIZE)?;
    out.extend_from_slice(&s.cfg, GFP_KERNEL)?;
    section(&mut out, SEC_REGS, REGS_LEN)?;
    for v in [s.status_page, s.busy_ns] {
        out.extend_from_slice(&v.to_le_bytes(), GFP_KERNEL)?;
    }
    for v in [
        s.irq_status,
        s.irq_enable,
        s.fault,
        s.submitted,
        s.completed,
        s.gtt_index,
    ] {
        out.extend_from_slice(&v.to_le_bytes(), GFP_KERNEL)?;
    }
    for (e, r) in s.rings.iter().enumerate() {
        section(&mut out, SEC_RING, RING_LEN)?;
        out.extend_from_slice(&(e as u32).to_le_bytes(), GFP_KERNEL)?;
        out.extend_from_slice(&u32::from(r.enabled).to_le_bytes(), GFP_KERNEL)?;
        for v in [r.base, r.gpu_ns] {
            out.extend_from_slice(&v.to_le_bytes(), GFP_KERNEL)?;
        }
        for v in [r.size, r.head, r.tail, r.fetched, r.completed, r.seqno] {
            out.extend_from_slice(&v.to_le_bytes(), GFP_KERNEL)?;
        }
    }
    section(&mut out, SEC_SCHED, SCHED_LEN)?;
    out.extend_from_slice(&weight.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&0u32.to_le_bytes(), GFP_KERNEL)?;
    out.extend_from_slice(&lag.to_le_bytes(), GFP_KERNEL)?;
    for bit in (0..64u32).filter(|b| mask & (1u64 << b) != 0) {
        let r = dirty_range(bit, len);
        section(&mut out, SEC_GTT, GTT_LEN + r.len() * 8)?;
        out.extend_from_slice(&(r.start as u32).to_le_bytes(), GFP_KERNEL)?;
        out.extend_from_slice(&(r.len() as u32).to_le_bytes(), GFP_KERNEL)?;
        let before = out.len();
        chunk(bit, &mut out)?;
        if out.len() != before + r.len() * 8 {
            return Err(EINVAL);
        }
    }
    if out.len() != total {
        return Err(EINVAL);
    }
    let sum = checksum(out.get(HEADER..).unwrap_or(&[]));
    if let Some(d) = out.get_mut(32..40) {
        d.copy_from_slice(&sum.to_le_bytes());
    }
    Ok(out)
}

// ---- the data files ----------------------------------------------------------

/// A saving session: the stream, read out once.
///
/// Its lock is held across the copy to user space, which may wait as long
/// as user space wants (userfaultfd): the state machine never waits for
/// it. It marks the session ended and frees the stream if the lock is
/// free, else the reader frees it.
#[pin_data]
struct Saving {
    /// The session ended: reads fail.
    ended: AtomicBool,
    #[pin]
    inner: Mutex<SavingInner>,
}

struct SavingInner {
    buf: KVVec<u8>,
    pos: usize,
}

#[vtable]
impl MigrationData for Saving {
    fn read(this: ArcBorrow<'_, Self>, mut buf: UserSliceWriter) -> Result<usize> {
        let mut s = this.inner.lock();
        if this.ended.load(Ordering::Acquire) {
            s.buf = KVVec::new();
            return Err(ENODEV);
        }
        let rest = s.buf.get(s.pos..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        let ret = buf.write_slice(rest.get(..n).unwrap_or(&[]));
        // Ended meanwhile: the state machine left the stream to us.
        if this.ended.load(Ordering::Acquire) {
            s.buf = KVVec::new();
        }
        ret?;
        s.pos += n;
        Ok(n)
    }
}

/// A resuming session: the stream as written so far.
///
/// As for [`Saving`], the state machine never waits for its lock: leaving
/// RESUMING while a write is in progress fails with `EBUSY`.
#[pin_data]
struct Resuming {
    /// The session ended: writes fail.
    ended: AtomicBool,
    #[pin]
    inner: Mutex<ResumingInner>,
}

struct ResumingInner {
    buf: KVVec<u8>,
    ty: usize,
    /// Refused already, from its header or its length.
    refused: Option<Refusal>,
}

#[vtable]
impl MigrationData for Resuming {
    fn write(this: ArcBorrow<'_, Self>, buf: UserSliceReader) -> Result<usize> {
        let mut s = this.inner.lock();
        if this.ended.load(Ordering::Acquire) {
            s.buf = KVVec::new();
            return Err(ENODEV);
        }
        if let Some(r) = s.refused {
            return Err(r.errno());
        }
        let n = buf.len();
        let had = s.buf.len();
        if had.saturating_add(n) > max_len(s.ty) {
            s.refused = Some(Refusal::Length);
            return Err(EFBIG);
        }
        buf.read_all(&mut s.buf, GFP_KERNEL)?;
        // The header is checked as soon as it is in, so that a stream of
        // another version or type is refused at its first write.
        if had < HEADER && s.buf.len() >= HEADER {
            match check_header(&s.buf, s.ty) {
                Ok(len) => {
                    let more = len.saturating_sub(s.buf.len());
                    s.buf.reserve(more, GFP_KERNEL)?;
                }
                Err(r) => {
                    s.refused = Some(r);
                    s.buf = KVVec::new();
                    return Err(r.errno());
                }
            }
        }
        // And the whole stream by the write that completes it (or passes
        // its end): QEMU learns of a refusal only from a write, since it
        // leaves RESUMING when it starts the guest, where a failed
        // transition resets the device and the guest runs on
        // (vfio_vmstate_change()). Nothing is loaded before RESUMING is
        // left, which checks it again.
        if s.buf.len() >= HEADER && s.buf.len() >= le32(&s.buf, 8) as usize {
            if let Err(r) = parse(&s.buf, s.ty) {
                s.refused = Some(r);
                s.buf = KVVec::new();
                return Err(r.errno());
            }
        }
        Ok(n)
    }
}

// ---- the state machine -------------------------------------------------------

/// A vGPU's migration state, under its own lock.
///
/// Lock order: `mig`, then the vGPU's register lock (`regs`), then the
/// GPU's `state` or `gtt` (as everywhere below `regs`). A data file's
/// session lock ([`Saving`], [`Resuming`]) is only tried under `mig`, never
/// waited for, and a read or write holding it takes no other lock, so the
/// copy to or from user space it covers holds up no state change.
pub(super) struct Mig {
    state: MigState,
    saving: Option<Arc<Saving>>,
    resuming: Option<Arc<Resuming>>,
    /// When a refusal was last logged, ns (one line a second at most).
    last_log: u64,
}

impl Mig {
    pub(super) const fn new() -> Self {
        Self {
            state: MigState::Running,
            saving: None,
            resuming: None,
            last_log: 0,
        }
    }

    /// Ends the data sessions: their files fail from now on, and their
    /// streams are freed now or by the read or write in progress.
    fn end_sessions(&mut self) {
        if let Some(s) = self.saving.take() {
            s.ended.store(true, Ordering::Release);
            if let Some(mut i) = s.inner.try_lock() {
                i.buf = KVVec::new();
            }
        }
        if let Some(r) = self.resuming.take() {
            r.ended.store(true, Ordering::Release);
            if let Some(mut i) = r.inner.try_lock() {
                i.buf = KVVec::new();
            }
        }
    }
}

/// The migration lock of a new vGPU.
pub(super) fn new_mig() -> impl PinInit<Mutex<Mig>> {
    new_mutex!(Mig::new(), "gvt_rs_vgpu_mig")
}

impl SimVgpu {
    /// RUNNING -> STOP: no DMA, no interrupt, no change of state from now.
    fn mig_stop(&self) {
        let mut r = self.regs.lock();
        let gpu = self.gpu();
        let mut st = gpu.state.lock();
        gpu.stop_locked(&mut st, self.id);
        r.rewind();
        gpu.schedule_locked(&mut st);
    }

    /// STOP -> RUNNING: schedulable again, the rings fetched.
    fn mig_run(v: &Vgpu) -> Result {
        let mut r = v.regs.lock();
        let gpu = v.gpu();
        {
            let mut st = gpu.state.lock();
            if r.open {
                gpu.engine.start(v.id)?;
            }
            gpu.schedule_locked(&mut st);
        }
        regs::update_irq(v, &r, false);
        regs::refetch(v, &mut r);
        Ok(())
    }

    /// A reset, stopped: for RESUMING and a refused stream.
    fn mig_clean(&self) {
        {
            let mut r = self.regs.lock();
            // A reset's only error is the engine's start, undone below.
            let _ = self.reset_locked(&mut r, true);
        }
        self.mig_stop();
    }

    /// STOP -> STOP_COPY: the stream of the stopped vGPU.
    fn mig_save(&self) -> Result<KVVec<u8>> {
        let r = self.regs.lock();
        let saved = r.save();
        let gpu = self.gpu();
        let id = self.id;
        let ty = TYPES.get(self.ty).ok_or(EINVAL)?;
        let weight = gpu
            .engine
            .vgpu_stats(self.id)
            .map_or(ty.weight, |s| s.weight);
        let lag = gpu.engine.fq_lag(self.id)?;
        let (mask, len) = {
            let g = gpu.gtt.lock();
            let len = g.private[id].as_ref().map_or(0, |p| p.len());
            (g.dirty[id], len)
        };
        let out = build(&saved, self.ty, weight, lag, mask, len, |bit, out| {
            // A chunk per hold of the GTT lock, as a scrub does.
            let g = gpu.gtt.lock();
            let p = g.private[id].as_ref().ok_or(EINVAL)?;
            for x in p.get(dirty_range(bit, len)).ok_or(EINVAL)? {
                out.extend_from_slice(&x.to_le_bytes(), GFP_KERNEL)?;
            }
            Ok(())
        });
        drop(r);
        out
    }

    /// RESUMING -> STOP: loads the stream `b` into the stopped, clean vGPU.
    fn mig_load(&self, b: &[u8]) -> Result<(), Refusal> {
        let p = parse(b, self.ty)?;
        let gpu = self.gpu();
        let id = self.id;
        let mut r = self.regs.lock();
        // Checked by `parse`: nothing below fails but the engine's calls.
        gpu.engine
            .set_weight(self.id, p.weight)
            .map_err(|_| Refusal::Malformed("weight"))?;
        gpu.engine
            .set_fq_lag(self.id, p.lag)
            .map_err(|_| Refusal::Malformed("scheduling position"))?;
        r.load(&p.regs);
        for (first, bytes) in gtt_chunks(b) {
            let mut g = gpu.gtt.lock();
            let n = bytes.len() / 8;
            if let Some(dst) = &mut g.private[id] {
                if let Some(d) = dst.get_mut(first..first + n) {
                    for (i, x) in d.iter_mut().enumerate() {
                        *x = le64(bytes, i * 8);
                    }
                }
            }
            g.dirty[id] |= dirty_bit(first);
        }
        let st = gpu.state.lock();
        gpu.reload_scrubbed(self.id, p.gtt_mask);
        drop(st);
        drop(r);
        Ok(())
    }

    /// Logs why a stream was refused, one line a second at most.
    fn log_refusal(&self, m: &mut Mig, why: Refusal) {
        let gpu = self.gpu();
        let now = gpu.engine.now_ns();
        if m.last_log == 0 || now.saturating_sub(m.last_log) >= 1_000_000_000 {
            m.last_log = now.max(1);
            dev_warn!(
                self.mdev,
                "{}: vGPU {}: migration stream refused: {}; the vGPU is reset\n",
                gpu.engine.name(),
                self.id.raw(),
                why
            );
        }
    }

    /// One arc of the state machine, from `m.state` to `next`.
    fn mig_step(v: &Vgpu, m: &mut Mig, next: MigState) -> Result<Option<DataFile>> {
        match (m.state, next) {
            (MigState::Running, MigState::Stop) => {
                v.mig_stop();
                Ok(None)
            }
            (MigState::Stop, MigState::Running) => {
                SimVgpu::mig_run(v)?;
                Ok(None)
            }
            (MigState::Stop, MigState::StopCopy) => {
                let buf = v.mig_save()?;
                let s = Arc::pin_init(
                    pin_init!(Saving {
                        ended: AtomicBool::new(false),
                        inner <- new_mutex!(SavingInner { buf, pos: 0 }),
                    }),
                    GFP_KERNEL,
                )?;
                let f = DataFile::new(c"gvt_rs_mig", s.clone())?;
                m.saving = Some(s);
                Ok(Some(f))
            }
            (MigState::StopCopy, MigState::Stop) => {
                m.end_sessions();
                Ok(None)
            }
            (MigState::Stop, MigState::Resuming) => {
                v.mig_clean();
                let s = Arc::pin_init(
                    pin_init!(Resuming {
                        ended: AtomicBool::new(false),
                        inner <- new_mutex!(ResumingInner {
                            buf: KVVec::new(),
                            ty: v.ty,
                            refused: None,
                        }),
                    }),
                    GFP_KERNEL,
                )?;
                let f = DataFile::new(c"gvt_rs_mig", s.clone())?;
                m.resuming = Some(s);
                Ok(Some(f))
            }
            (MigState::Resuming, MigState::Stop) => {
                let Some(s) = m.resuming.take() else {
                    return Err(EINVAL);
                };
                let Some(mut i) = s.inner.try_lock() else {
                    // A write in progress: the stream is not complete.
                    m.resuming = Some(s);
                    return Err(EBUSY);
                };
                s.ended.store(true, Ordering::Release);
                let (buf, refused) = (core::mem::take(&mut i.buf), i.refused);
                drop(i);
                drop(s);
                let res = match refused {
                    Some(r) => Err(r),
                    None => v.mig_load(&buf),
                };
                drop(buf);
                if let Err(why) = res {
                    v.mig_clean();
                    v.log_refusal(m, why);
                    m.state = MigState::Error;
                    return Err(why.errno());
                }
                Ok(None)
            }
            // The core gives no other arc for our flags.
            _ => Err(EINVAL),
        }
    }

    /// VFIO reset and close: the sessions end and the vGPU runs (the caller
    /// resets it).
    pub(super) fn mig_reset(&self) {
        let mut m = self.mig.lock();
        // A stream a write refused, whose session ends here (QEMU exits on
        // the refusal): said now, as leaving RESUMING would have.
        let refused = m
            .resuming
            .as_ref()
            .and_then(|r| r.inner.try_lock().and_then(|i| i.refused));
        if let Some(why) = refused {
            self.log_refusal(&mut m, why);
        }
        m.end_sessions();
        m.state = MigState::Running;
    }
}

impl vfio::Migration for SimVgpu {
    const FLAGS: MigrationFlags = MigrationFlags::STOP_COPY;

    fn set_state(v: &Vgpu, new: MigState) -> Result<Option<DataFile>> {
        let mut m = v.mig.lock();
        let mut file = None;
        while m.state != new {
            let next = v.mig_next_state(m.state, new)?;
            let f = SimVgpu::mig_step(v, &mut m, next)?;
            m.state = next;
            if f.is_some() && next != new {
                // A file only ends a path (the core's arcs): refuse another.
                return Err(EINVAL);
            }
            file = f;
        }
        Ok(file)
    }

    fn get_state(v: &Vgpu) -> Result<MigState> {
        Ok(v.mig.lock().state)
    }

    fn get_data_size(v: &Vgpu) -> Result<usize> {
        let g = v.gpu().gtt.lock();
        let len = g.private[v.id].as_ref().map_or(0, |p| p.len());
        Ok(stream_len(g.dirty[v.id], len))
    }
}

#[kernel::macros::kunit_tests(gvt_rs_sim_migration)]
mod tests {
    use super::*;

    /// A type-1 vGPU's registers with both rings busy.
    fn saved() -> Saved {
        let mut cfg = [0u8; CFG_SIZE];
        regs::init_config(&mut cfg, 1);
        let ring = GuestRing {
            base: 0x10_0000,
            size: 64,
            enabled: true,
            head: 60,
            tail: 5,
            fetched: 2,
            completed: 1000,
            gpu_ns: 123_456,
            seqno: 999,
        };
        Saved {
            cfg,
            status_page: 0x20_0000,
            irq_status: 1,
            irq_enable: 3,
            fault: 0,
            submitted: 1010,
            completed: 1000,
            gtt_index: 7,
            busy_ns: 5_000_000,
            rings: [ring; ENGINES],
        }
    }

    /// A stream of type 1 with the GTT chunks of `mask`, entry `i` = `i`.
    fn stream(mask: u64) -> Result<KVVec<u8>> {
        let len = gtt_entries(1);
        build(&saved(), 1, 4, 777, mask, len, |bit, out| {
            for i in dirty_range(bit, len) {
                out.extend_from_slice(&(i as u64).to_le_bytes(), GFP_KERNEL)?;
            }
            Ok(())
        })
    }

    fn dup(b: &[u8]) -> Result<KVVec<u8>> {
        let mut v = KVVec::new();
        v.extend_from_slice(b, GFP_KERNEL)?;
        Ok(v)
    }

    /// Re-signs a stream whose body was edited.
    fn resign(b: &mut [u8]) {
        let sum = checksum(&b[HEADER..]);
        b[32..40].copy_from_slice(&sum.to_le_bytes());
    }

    #[test]
    fn a_stream_round_trips() -> Result {
        let b = stream(0b101)?;
        // A refusal fails the test with its errno.
        let p = parse(&b, 1).map_err(|_| EINVAL)?;
        assert_eq!(p.weight, 4);
        assert_eq!(p.lag, 777);
        assert_eq!(p.gtt_mask, 0b101);
        assert_eq!(p.regs.rings[1].fetched, 2);
        assert_eq!(p.regs.busy_ns, 5_000_000);
        assert_eq!(p.regs.cfg, saved().cfg);
        let chunks: KVec<(usize, usize)> = {
            let mut v = KVec::new();
            for (first, bytes) in gtt_chunks(&b) {
                assert_eq!(le64(bytes, 0), first as u64);
                v.push((first, bytes.len() / 8), GFP_KERNEL)?;
            }
            v
        };
        assert_eq!(
            &chunks[..],
            &[(0, SCRUB_CHUNK), (2 * SCRUB_CHUNK, SCRUB_CHUNK)]
        );
        assert_eq!(b.len(), stream_len(0b101, gtt_entries(1)));
        Ok(())
    }

    #[test]
    fn bad_headers_are_refused() -> Result {
        let good = stream(0)?;
        let mut b = dup(&good)?;
        b[0] ^= 1;
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Magic));
        let mut b = dup(&good)?;
        b[4] = 2;
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Version(2)));
        assert_eq!(parse(&good, 0).err(), Some(Refusal::Type(1)));
        let mut b = dup(&good)?;
        b[16] = b'X';
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Type(1)));
        let mut b = dup(&good)?;
        b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Length));
        assert_eq!(
            parse(&good[..20], 1).err(),
            Some(Refusal::Truncated(20, HEADER))
        );
        let n = good.len();
        assert_eq!(
            parse(&good[..n - 1], 1).err(),
            Some(Refusal::Truncated(n - 1, n))
        );
        assert_eq!(parse(&[], 1).err(), Some(Refusal::Truncated(0, HEADER)));
        Ok(())
    }

    #[test]
    fn corrupted_bodies_are_refused() -> Result {
        let good = stream(1)?;
        for at in [HEADER, HEADER + 100, good.len() - 1] {
            let mut b = dup(&good)?;
            b[at] ^= 0x40;
            assert_eq!(parse(&b, 1).err(), Some(Refusal::Checksum));
        }
        // Re-signed, so that the checks inside are reached.
        let cfg_at = HEADER + SECTION;
        let mut b = dup(&good)?;
        // The subsystem id is the type's: read only.
        b[cfg_at + 0x2e] ^= 1;
        resign(&mut b);
        assert_eq!(
            parse(&b, 1).err(),
            Some(Refusal::Malformed("register values"))
        );
        let ring_at = HEADER + 2 * SECTION + CFG_SIZE + REGS_LEN;
        let mut b = dup(&good)?;
        // Ring 0's head past its size.
        b[ring_at + SECTION + 28..ring_at + SECTION + 32].copy_from_slice(&64u32.to_le_bytes());
        resign(&mut b);
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Malformed("ring")));
        let mut b = dup(&good)?;
        // Ring 0 claimed twice: engine 1's ring says engine 0.
        let ring1 = ring_at + SECTION + RING_LEN;
        b[ring1 + SECTION..ring1 + SECTION + 4].copy_from_slice(&0u32.to_le_bytes());
        resign(&mut b);
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Malformed("ring")));
        let mut b = dup(&good)?;
        // An unknown section tag.
        b[cfg_at - SECTION] = 99;
        resign(&mut b);
        assert_eq!(
            parse(&b, 1).err(),
            Some(Refusal::Malformed("unknown, repeated or odd-sized section"))
        );
        let mut b = dup(&good)?;
        // A GTT chunk that does not start on a chunk.
        let gtt_at = good.len() - SCRUB_CHUNK * 8 - GTT_LEN;
        b[gtt_at..gtt_at + 4].copy_from_slice(&1u32.to_le_bytes());
        resign(&mut b);
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Malformed("GTT chunk")));
        let mut b = dup(&good)?;
        // A section longer than the stream.
        b[gtt_at - 4..gtt_at].copy_from_slice(&u32::MAX.to_le_bytes());
        resign(&mut b);
        assert_eq!(
            parse(&b, 1).err(),
            Some(Refusal::Malformed("section length"))
        );
        Ok(())
    }

    #[test]
    fn weights_out_of_range_are_refused() -> Result {
        let mut b = stream(0)?;
        let sched_at = b.len() - SCHED_LEN;
        b[sched_at..sched_at + 4].copy_from_slice(&0u32.to_le_bytes());
        resign(&mut b);
        assert_eq!(parse(&b, 1).err(), Some(Refusal::Malformed("weight")));
        Ok(())
    }
}
