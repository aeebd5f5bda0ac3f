// SPDX-License-Identifier: GPL-2.0

//! One vGPU: its registers, command rings, status page and waiters.
//!
//! [`Gpu`] is shared (reference counted) by the PCI driver data, the
//! interrupt handler and every open file of `/dev/gvtgpuN`, so open files
//! may outlive the device: BAR0 and the DMA memory are device-managed and
//! revoked when the device goes away, after which every operation fails
//! with `ENODEV`.
//!
//! Submissions, waits, resets and the interrupt handler serialise on one
//! interrupt-safe spinlock ([`State`]); waiters sleep on one condition
//! variable that the interrupt handler, a reset and removal notify. As the
//! handler takes the lock before it notifies, a waiter that checked its
//! condition under the lock cannot miss the wake-up.
//!
//! Copies ([`Gpu::copy`], protocol 3) go through one copy block and one source and
//! destination buffer in DMA memory, one copy at a time (a mutex held from
//! the buffers' filling to the destination's reading back).

use crate::regs::{
    self,
    Desc,
    EngineStatus,
    BAR0_SIZE,
    DESC_IRQ,
    DESC_WORDS,
    GUEST_COPY_MAX,
    MAX_ENGINES,
    PAGE_WORDS,
    STATUS_STRIDE_WORDS, //
};
use kernel::{
    device::{
        Bound,
        Device, //
    },
    devres::Devres,
    dma::Coherent,
    io::{
        io_read,
        io_write,
        Io, //
    },
    new_condvar,
    new_mutex,
    new_spinlock_irq,
    pci::{
        self,
        DevresBar,
        IrqType, //
    },
    prelude::*,
    sync::{
        CondVar,
        CondVarTimeoutResult,
        Mutex,
        SpinLockIrq,
        SpinLockIrqGuard, //
    },
    time::{
        msecs_to_jiffies,
        Jiffies, //
    }, //
};

/// BAR0 of the vGPU.
pub(crate) type Bar0<'a> = pci::Bar<'a, BAR0_SIZE>;

/// How long a waiter sleeps between two looks at the status page when no
/// interrupt is due (no outstanding descriptor asked for one).
const POLL_MS: u32 = 2;

/// What the device reports about itself at probe time.
#[derive(Clone, Copy)]
pub(crate) struct Info {
    /// Engines (rings) driven, at most [`MAX_ENGINES`].
    pub(crate) engines: usize,
    /// The vGPU id (`VGPU_ID`).
    pub(crate) vgpu_id: u32,
    /// Descriptors per ring.
    pub(crate) ring_size: u32,
    /// Longest accepted workload duration, us.
    pub(crate) max_duration_us: u32,
    /// Low graphics memory of the vGPU type, MB.
    pub(crate) gm_low_mb: u32,
    /// High graphics memory of the vGPU type, MB.
    pub(crate) gm_high_mb: u32,
    /// The longest copy offered, bytes (0: the device has no copies).
    pub(crate) copy_max: u32,
}

impl Info {
    /// Reads and checks the identification registers.
    pub(crate) fn read(dev: &Device<Bound>, bar: &Bar0<'_>) -> Result<Self> {
        let id = bar.read32(regs::REG_ID);
        let version = bar.read32(regs::REG_VERSION);
        if id != regs::DEVICE_MAGIC || version != regs::PROTOCOL_VERSION {
            dev_err!(
                dev,
                "not a gvt-rs vGPU of protocol {} (id {:#x}, version {})\n",
                regs::PROTOCOL_VERSION,
                id,
                version
            );
            return Err(ENODEV);
        }
        let engines = bar.read32(regs::REG_ENGINES);
        let ring_max = bar.read32(regs::REG_RING_MAX).min(regs::RING_LIMIT);
        if engines == 0 || ring_max < 2 {
            dev_err!(dev, "vGPU without usable rings ({} engines)\n", engines);
            return Err(ENODEV);
        }
        // The largest power of two the device and one page both allow.
        let ring_size = 1u32 << ring_max.ilog2();
        Ok(Self {
            engines: (engines as usize).min(MAX_ENGINES),
            vgpu_id: bar.read32(regs::REG_VGPU_ID),
            ring_size,
            max_duration_us: bar.read32(regs::REG_MAX_DURATION),
            gm_low_mb: bar.read32(regs::REG_GM_LOW),
            gm_high_mb: bar.read32(regs::REG_GM_HIGH),
            // CAST: `GUEST_COPY_MAX` fits a `u32` (it is at most `COPY_MAX`).
            copy_max: bar.read32(regs::REG_COPY_MAX).min(GUEST_COPY_MAX as u32),
        })
    }
}

/// The kind of interrupt the vGPU delivers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum IrqKind {
    /// Level-triggered, possibly shared, legacy interrupt.
    Intx,
    /// Message signalled interrupt.
    Msi,
    /// MSI-X (not offered by the device, listed for completeness).
    MsiX,
}

impl IrqKind {
    /// The name used in logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Intx => "intx",
            Self::Msi => "msi",
            Self::MsiX => "msix",
        }
    }

    /// The value reported by the `INFO` ioctl.
    pub(crate) fn uapi(self) -> u32 {
        match self {
            Self::Intx => 0,
            Self::Msi => 1,
            Self::MsiX => 2,
        }
    }
}

impl From<IrqType> for IrqKind {
    fn from(ty: IrqType) -> Self {
        match ty {
            IrqType::Intx => Self::Intx,
            IrqType::Msi => Self::Msi,
            IrqType::MsiX => Self::MsiX,
        }
    }
}

/// Words of the copy area before the source: the copy block's page.
const COPY_SRC_WORD: usize = PAGE_WORDS;
/// Words of the copy area before the destination.
const COPY_DST_WORD: usize = COPY_SRC_WORD + GUEST_COPY_MAX / 8;
/// Words of the copy area: the copy block's page, source, destination.
const COPY_WORDS: usize = COPY_DST_WORD + GUEST_COPY_MAX / 8;

/// The DMA memory the device reads and writes.
struct DmaMem {
    /// One ring of descriptors per engine, a page each.
    rings: KVec<Coherent<[u64]>>,
    /// The status page.
    status: Coherent<[u64]>,
    /// Copies: the copy block at word 0, the source from
    /// [`COPY_SRC_WORD`], the destination from [`COPY_DST_WORD`].
    copy: Coherent<[u64]>,
}

impl DmaMem {
    fn new(dev: &Device<Bound>, engines: usize) -> Result<Self> {
        let mut rings = KVec::with_capacity(engines, GFP_KERNEL)?;
        for _ in 0..engines {
            rings.push(
                Coherent::<u64>::zeroed_slice(dev, PAGE_WORDS, GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        let status = Coherent::<u64>::zeroed_slice(dev, PAGE_WORDS, GFP_KERNEL)?;
        let copy = Coherent::<u64>::zeroed_slice(dev, COPY_WORDS, GFP_KERNEL)?;
        // The device wants page-aligned guest addresses, which a coherent
        // allocation of a page always is (and a copy block aligned to its
        // size, which the start of one is).
        if status.dma_address() % regs::PAGE_BYTES as u64 != 0
            || copy.dma_address() % regs::PAGE_BYTES as u64 != 0
            || rings
                .iter()
                .any(|r| r.dma_address() % regs::PAGE_BYTES as u64 != 0)
        {
            return Err(EINVAL);
        }
        Ok(Self {
            rings,
            status,
            copy,
        })
    }

    /// Writes `bytes` into the copy area from word `at`.
    fn write_copy_bytes(&self, at: usize, bytes: &[u8]) -> Result {
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            io_write!(self.copy, [try: at + i], u64::from_le_bytes(w).to_le());
        }
        Ok(())
    }

    /// Reads the copy area from word `at` into `bytes`.
    fn read_copy_bytes(&self, at: usize, bytes: &mut [u8]) -> Result {
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let w = u64::from_le(io_read!(self.copy, [try: at + i])).to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }

    /// Fills the copy area for a copy of `src`, into a destination that
    /// holds `dst` until the device copied; returns the copy block's
    /// guest address.
    fn prepare_copy(&self, src: &[u8], dst: &[u8]) -> Result<u64> {
        self.write_copy_bytes(COPY_SRC_WORD, src)?;
        self.write_copy_bytes(COPY_DST_WORD, dst)?;
        let base = self.copy.dma_address();
        // `struct gvt_sim_copy`: source, destination, length, reserved.
        // CAST: offsets and a length within the copy area.
        let block = [
            base + (COPY_SRC_WORD * 8) as u64,
            base + (COPY_DST_WORD * 8) as u64,
            src.len() as u64,
            0,
        ];
        for (i, word) in block.iter().enumerate() {
            io_write!(self.copy, [try: i], word.to_le());
        }
        Ok(base)
    }

    /// The status record of `engine`.
    fn status(&self, engine: usize) -> Result<EngineStatus> {
        let base = engine * STATUS_STRIDE_WORDS;
        let w0 = u64::from_le(io_read!(self.status, [try: base]));
        let gpu_ns = u64::from_le(io_read!(self.status, [try: base + 1]));
        let w2 = u64::from_le(io_read!(self.status, [try: base + 2]));
        Ok(EngineStatus {
            // CAST: the low and high halves of the first word.
            seqno: w0 as u32,
            completed: (w0 >> 32) as u32,
            gpu_ns,
            // CAST: the low half of the third word.
            head: w2 as u32,
        })
    }

    /// Sets the status record of `engine` to "nothing completed after `seqno`".
    fn reset_status(&self, engine: usize, seqno: u32) -> Result {
        let base = engine * STATUS_STRIDE_WORDS;
        io_write!(self.status, [try: base], u64::from(seqno).to_le());
        for word in 1..STATUS_STRIDE_WORDS {
            io_write!(self.status, [try: base + word], 0);
        }
        Ok(())
    }

    /// Writes `desc` at `index` of `engine`'s ring.
    fn write_desc(&self, engine: usize, index: u32, desc: &Desc) -> Result {
        let ring = self.rings.get(engine).ok_or(EINVAL)?;
        let base = index as usize * DESC_WORDS;
        for (i, word) in desc.0.iter().enumerate() {
            io_write!(ring, [try: base + i], word.to_le());
        }
        Ok(())
    }
}

/// Driver-side state of one engine's ring.
#[derive(Clone, Copy, Default)]
struct EngineState {
    /// The tail last written to the device.
    tail: u32,
    /// The last seqno handed out (0: none yet).
    last_seqno: u32,
    /// The last seqno of a descriptor that asked for an interrupt.
    last_irq_seqno: u32,
    /// Fences lost in the last reset: after `lost_after`, up to `lost_upto`.
    lost_after: u32,
    lost_upto: u32,
}

impl EngineState {
    /// Whether `seqno` was submitted before the last reset but not completed.
    fn lost(&self, seqno: u32) -> bool {
        !regs::seqno_reached(self.lost_after, seqno) && regs::seqno_reached(self.lost_upto, seqno)
    }
}

/// State shared with the interrupt handler.
struct State {
    /// The device has gone: everything fails with `ENODEV`.
    removed: bool,
    /// The device reported a fault and needs a reset.
    failed: bool,
    /// The `FAULT` word of the last fault.
    fault: u32,
    /// The interrupt in use.
    irq: IrqKind,
    engines: [EngineState; MAX_ENGINES],
}

/// Per-engine numbers of the `STATS` ioctl.
#[derive(Clone, Copy, Default)]
pub(crate) struct EngineStats {
    pub(crate) status: EngineStatus,
    /// The last seqno submitted.
    pub(crate) last_seqno: u32,
}

/// Numbers of the `STATS` ioctl.
pub(crate) struct Stats {
    pub(crate) failed: bool,
    pub(crate) fault: u32,
    pub(crate) engines: [EngineStats; MAX_ENGINES],
}

/// A workload to submit.
pub(crate) enum Work<'a> {
    /// A checked workload: duration, bytes, descriptor flags.
    Exec {
        duration_us: u32,
        bytes: u32,
        flags: u32,
    },
    /// A checked copy workload: duration, descriptor flags, the guest
    /// address of its copy block.
    Copy {
        duration_us: u32,
        flags: u32,
        block: u64,
    },
    /// A raw descriptor (its words as in memory), unchecked but for its
    /// seqno, which the driver sets.
    Raw(&'a [u64; DESC_WORDS]),
}

/// One vGPU.
///
/// # Invariants
///
/// `mem.rings` has `info.engines` entries while `mem` is accessible.
#[pin_data(PinnedDrop)]
pub(crate) struct Gpu {
    pub(crate) info: Info,
    bar: DevresBar<BAR0_SIZE>,
    mem: Devres<DmaMem>,
    #[pin]
    state: SpinLockIrq<State>,
    #[pin]
    event: CondVar,
    /// Held by the copy that uses the copy area.
    #[pin]
    copying: Mutex<()>,
}

impl Gpu {
    /// Creates the vGPU's state and DMA memory; the device is not programmed.
    pub(crate) fn new(
        dev: &Device<Bound>,
        info: Info,
        bar: DevresBar<BAR0_SIZE>,
    ) -> Result<impl PinInit<Self, Error>> {
        let mem = Devres::new(dev, DmaMem::new(dev, info.engines)?)?;
        Ok(try_pin_init!(Self {
            info,
            bar,
            mem,
            state <- new_spinlock_irq!(State {
                removed: false,
                failed: false,
                fault: 0,
                irq: IrqKind::Intx,
                engines: [EngineState::default(); MAX_ENGINES],
            }),
            event <- new_condvar!("gvt_rs_guest::event"),
            copying <- new_mutex!((), "gvt_rs_guest::copying"),
        }? Error))
    }

    /// Records the interrupt type in use.
    pub(crate) fn set_irq_kind(&self, kind: IrqKind) {
        self.state.lock().irq = kind;
    }

    /// The interrupt type in use.
    pub(crate) fn irq_kind(&self) -> IrqKind {
        self.state.lock().irq
    }

    /// Resets the device and programs its status page, rings and interrupts.
    ///
    /// Fences outstanding at the reset are lost: the status records are set
    /// to the last submitted seqno and a wait for a lost fence fails with
    /// `EIO`.
    fn program(&self, st: &mut State) -> Result {
        let bar = self.bar.try_access().ok_or(ENODEV)?;
        let mem = self.mem.try_access().ok_or(ENODEV)?;
        bar.write_reg(regs::RESET::zeroed().with_reset(true));
        for (e, eng) in st.engines.iter_mut().enumerate().take(self.info.engines) {
            let done = mem.status(e)?.seqno;
            eng.lost_after = done;
            eng.lost_upto = eng.last_seqno;
            eng.tail = 0;
            mem.reset_status(e, eng.last_seqno)?;
        }
        let (lo, hi) = split(mem.status.dma_address());
        bar.write32(lo, regs::REG_STATUS_PAGE);
        bar.write32(hi, regs::REG_STATUS_PAGE + 4);
        let mut enable = regs::IRQ_FAULT;
        for (e, ring) in mem.rings.iter().enumerate() {
            let (lo, hi) = split(ring.dma_address());
            bar.try_write32(lo, regs::ring_reg(e, regs::RING_BASE))?;
            bar.try_write32(hi, regs::ring_reg(e, regs::RING_BASE + 4))?;
            bar.try_write32(self.info.ring_size, regs::ring_reg(e, regs::RING_SIZE))?;
            bar.try_write32(regs::RING_CTL_ENABLE, regs::ring_reg(e, regs::RING_CTL))?;
            enable |= regs::irq_engine(e);
        }
        bar.write32(enable, regs::REG_IRQ_ENABLE);
        let fault = u32::from(bar.read(regs::FAULT));
        if bar.read(regs::STATUS).failed() {
            st.failed = true;
            st.fault = fault;
            return Err(EIO);
        }
        st.failed = false;
        st.fault = 0;
        Ok(())
    }

    /// Brings the device up at probe time.
    pub(crate) fn start(&self) -> Result {
        let mut st = self.state.lock();
        self.program(&mut st)
    }

    /// The `RESET` ioctl: resets the device and re-programs it.
    pub(crate) fn reset(&self) -> Result {
        let mut st = self.state.lock();
        if st.removed {
            return Err(ENODEV);
        }
        let ret = self.program(&mut st);
        drop(st);
        // Waiters for lost fences fail, the others go on waiting.
        self.event.notify_all();
        ret
    }

    /// Called when the device goes away: stops it and fails every waiter.
    pub(crate) fn remove(&self) {
        let mut st = self.state.lock();
        st.removed = true;
        if let Some(bar) = self.bar.try_access() {
            // Stop interrupts and DMA before the memory is freed.
            bar.write32(0, regs::REG_IRQ_ENABLE);
            bar.write_reg(regs::RESET::zeroed().with_reset(true));
        }
        drop(st);
        self.event.notify_all();
    }

    /// The interrupt handler: acknowledges the interrupt and wakes waiters.
    ///
    /// Returns whether the interrupt was the vGPU's.
    pub(crate) fn handle_irq(&self) -> bool {
        let Some(bar) = self.bar.try_access() else {
            return false;
        };
        let status = bar.read32(regs::REG_IRQ_STATUS);
        // All ones: the device is gone (surprise removal).
        if status == u32::MAX {
            return false;
        }
        if status == 0 {
            // A shared INTx line raised by another device; with MSI, the
            // handler of an earlier message already acknowledged this one.
            return self.state.lock().irq != IrqKind::Intx;
        }
        bar.write32(status, regs::REG_IRQ_STATUS);
        let fault = if regs::IRQ_STATUS::from(status).fault() {
            Some(u32::from(bar.read(regs::FAULT)))
        } else {
            None
        };
        drop(bar);
        let mut st = self.state.lock();
        if let Some(fault) = fault {
            st.failed = true;
            st.fault = fault;
        }
        drop(st);
        self.event.notify_all();
        true
    }

    /// Checks the `STATUS` register for a fault whose interrupt was missed.
    fn check_failed(&self, st: &mut State) {
        if st.failed {
            return;
        }
        if let Some(bar) = self.bar.try_access() {
            if bar.read(regs::STATUS).failed() {
                st.failed = true;
                st.fault = u32::from(bar.read(regs::FAULT));
            }
        }
    }

    /// Sleeps on the condition variable for at most `jiffies`.
    ///
    /// Returns the jiffies left, or `ERESTARTSYS` if a signal is pending.
    fn sleep(&self, st: &mut SpinLockIrqGuard<'_, State>, jiffies: Jiffies) -> Result<Jiffies> {
        match self.event.wait_interruptible_timeout(st, jiffies) {
            CondVarTimeoutResult::Signal { .. } => Err(ERESTARTSYS),
            CondVarTimeoutResult::Timeout => Ok(0),
            CondVarTimeoutResult::Woken { jiffies } => Ok(jiffies),
        }
    }

    fn check_engine(&self, engine: u32) -> Result<usize> {
        let engine = engine as usize;
        if engine >= self.info.engines {
            return Err(EINVAL);
        }
        Ok(engine)
    }

    /// Submits `work` on `engine`; returns its seqno.
    ///
    /// Sleeps while the ring is full, unless `nonblock` (then `EAGAIN`).
    pub(crate) fn submit(&self, engine: u32, work: Work<'_>, nonblock: bool) -> Result<u32> {
        let e = self.check_engine(engine)?;
        let irq = match work {
            Work::Exec {
                duration_us, flags, ..
            }
            | Work::Copy {
                duration_us, flags, ..
            } => {
                if flags & !DESC_IRQ != 0 {
                    return Err(EINVAL);
                }
                if duration_us == 0 || duration_us > self.info.max_duration_us {
                    return Err(ERANGE);
                }
                flags & DESC_IRQ != 0
            }
            Work::Raw(words) => u64::from_le(words[0]) >> 32 & u64::from(DESC_IRQ) != 0,
        };
        let size = self.info.ring_size;
        let mut st = self.state.lock();
        loop {
            if st.removed {
                return Err(ENODEV);
            }
            if st.failed {
                return Err(EIO);
            }
            let eng = st.engines[e];
            let status = self.mem.try_access().ok_or(ENODEV)?.status(e)?;
            if (eng.tail + 1) % size != status.head % size {
                break;
            }
            if nonblock {
                return Err(EAGAIN);
            }
            // Completions only interrupt if a descriptor asked for it.
            let irq_due = !regs::seqno_reached(status.seqno, eng.last_irq_seqno);
            let slice = msecs_to_jiffies(if irq_due { 1000 } else { POLL_MS });
            self.sleep(&mut st, slice)?;
            self.check_failed(&mut st);
        }
        let eng = &mut st.engines[e];
        let seqno = eng.last_seqno.wrapping_add(1);
        let desc = match work {
            Work::Exec {
                duration_us,
                bytes,
                flags,
            } => Desc::exec(flags, seqno, duration_us, bytes),
            Work::Copy {
                duration_us,
                flags,
                block,
            } => Desc::copy(flags, seqno, duration_us, block),
            Work::Raw(words) => Desc::raw(words, seqno),
        };
        let tail = eng.tail;
        self.mem
            .try_access()
            .ok_or(ENODEV)?
            .write_desc(e, tail, &desc)?;
        let next = (tail + 1) % size;
        let bar = self.bar.try_access().ok_or(ENODEV)?;
        // The MMIO write is ordered after the descriptor's memory writes.
        bar.try_write32(next, regs::ring_reg(e, regs::RING_TAIL))?;
        eng.tail = next;
        eng.last_seqno = seqno;
        if irq {
            eng.last_irq_seqno = seqno;
        }
        Ok(seqno)
    }

    /// Waits until fence `seqno` of `engine` is reached or `timeout_ms`
    /// passed; returns the engine's completed seqno.
    pub(crate) fn wait(&self, engine: u32, seqno: u32, timeout_ms: u32) -> Result<u32> {
        let e = self.check_engine(engine)?;
        let mut left = msecs_to_jiffies(timeout_ms);
        let mut st = self.state.lock();
        loop {
            if st.removed {
                return Err(ENODEV);
            }
            let eng = st.engines[e];
            if eng.lost(seqno) {
                return Err(EIO);
            }
            // A fence never handed out.
            if !regs::seqno_reached(eng.last_seqno, seqno) {
                return Err(EINVAL);
            }
            let status = self.mem.try_access().ok_or(ENODEV)?.status(e)?;
            if regs::seqno_reached(status.seqno, seqno) {
                return Ok(status.seqno);
            }
            if st.failed {
                return Err(EIO);
            }
            if left == 0 {
                return Err(ETIMEDOUT);
            }
            let irq_due = regs::seqno_reached(eng.last_irq_seqno, seqno);
            let slice = if irq_due {
                left
            } else {
                left.min(msecs_to_jiffies(POLL_MS))
            };
            let rest = self.sleep(&mut st, slice)?;
            left -= slice - rest.min(slice);
            if rest == 0 {
                self.check_failed(&mut st);
            }
        }
    }

    /// Copies `src` on `engine` with a workload of `duration_us`, into a
    /// destination that holds `dst` until then, and waits up to
    /// `timeout_ms` for it; `dst` then holds what the device wrote.
    ///
    /// Fails if the copy could not be submitted. Otherwise returns its
    /// seqno and how it ended: `Ok` once it completed (the device writes
    /// the data before the completion), `EIO` if a fault or a reset failed
    /// it, `ENODEV` if the device went, `ETIMEDOUT`.
    pub(crate) fn copy(
        &self,
        engine: u32,
        duration_us: u32,
        src: &[u8],
        dst: &mut [u8],
        timeout_ms: u32,
    ) -> Result<(u32, Result)> {
        let len = src.len();
        if len == 0 || len > self.info.copy_max as usize || dst.len() != len {
            return Err(EINVAL);
        }
        let _copying = self.copying.lock();
        let block = self
            .mem
            .try_access()
            .ok_or(ENODEV)?
            .prepare_copy(src, dst)?;
        let work = Work::Copy {
            duration_us,
            flags: DESC_IRQ,
            block,
        };
        let seqno = self.submit(engine, work, false)?;
        let done = self.wait(engine, seqno, timeout_ms).and_then(|_| {
            self.mem
                .try_access()
                .ok_or(ENODEV)?
                .read_copy_bytes(COPY_DST_WORD, dst)
        });
        Ok((seqno, done))
    }

    /// The `STATS` ioctl.
    pub(crate) fn stats(&self) -> Result<Stats> {
        let mut st = self.state.lock();
        if st.removed {
            return Err(ENODEV);
        }
        self.check_failed(&mut st);
        let mem = self.mem.try_access().ok_or(ENODEV)?;
        let mut engines = [EngineStats::default(); MAX_ENGINES];
        for (e, out) in engines.iter_mut().enumerate().take(self.info.engines) {
            *out = EngineStats {
                status: mem.status(e)?,
                last_seqno: st.engines[e].last_seqno,
            };
        }
        let fault = match self.bar.try_access() {
            Some(bar) => u32::from(bar.read(regs::FAULT)),
            None => st.fault,
        };
        Ok(Stats {
            failed: st.failed,
            fault: if st.failed && fault == 0 {
                st.fault
            } else {
                fault
            },
            engines,
        })
    }

    /// Fails unless the device is still there.
    pub(crate) fn check_present(&self) -> Result {
        if self.state.lock().removed {
            return Err(ENODEV);
        }
        Ok(())
    }
}

#[pinned_drop]
impl PinnedDrop for Gpu {
    fn drop(self: Pin<&mut Self>) {
        // A probe that failed after programming the device: stop its DMA
        // before the memory goes. After removal the registers are revoked.
        if let Some(bar) = self.bar.try_access() {
            bar.write32(0, regs::REG_IRQ_ENABLE);
            bar.write_reg(regs::RESET::zeroed().with_reset(true));
        }
    }
}

/// The low and high halves of a 64-bit address.
fn split(addr: u64) -> (u32, u32) {
    // CAST: taking the halves is the intent.
    (addr as u32, (addr >> 32) as u32)
}
