// SPDX-License-Identifier: GPL-2.0

//! The simulated GPU provider.
//!
//! An mdev parent (`/sys/class/mdev_bus/gvtsim0`) offers vGPU types shaped
//! like GVT-g's. Each vGPU is a VFIO PCI device (configuration space with an
//! MSI capability, a 4 KB BAR0 of registers, INTx and MSI with vfio-pci's
//! semantics, reset, device requests) that QEMU attaches to a guest. The
//! guest submits work as on GVT-g: descriptors in a ring in guest memory and
//! a doorbell register; the device fetches and scans them ([`ring`]) and
//! queues workloads on one of the GPU's engines, and reports completions in
//! a status page in guest memory. Engines execute one workload at a
//! time for its stated duration on an hrtimer, non-preemptively, and a vGPU
//! switch waits until every engine drained, as GVT-g's scheduler does. The
//! policy decisions come from the provider-agnostic [`Engine`]. The GPU has
//! a physical GTT and every vGPU a private GTT in kernel memory; on a switch
//! the engine asks for the non-resident slots only, which are really copied.
//!
//! Register map and semantics: `Documentation/gvt-rs/simulated-gpu.rst`.

mod copy;
mod delivery;
mod irq;
mod migration;
#[cfg(CONFIG_PCI)]
pub mod pci;
mod regs;
mod ring;
mod vchannel;
mod vdev;
mod vmcpu;

use crate::engine::{
    per_vgpu,
    sysfs::{
        self as esysfs,
        vgpu_group,
        GpuClass,
        GpuDevice,
        VgpuData, //
    },
    Engine,
    GpuConfig,
    Provider,
    VgpuId,
    VgpuType, //
};
use crate::gvt_core::slots::{
    mb_to_slots,
    Move,
    ENTRIES_PER_SLOT, //
};
use crate::timer::{
    Timer,
    TimerTarget, //
};
use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use delivery::Delivery;
use kernel::{
    class,
    device::Device,
    mdev,
    new_condvar,
    new_mutex,
    page::PAGE_SIZE,
    prelude::*,
    sync::{
        aref::ARef,
        Arc,
        CondVar,
        Mutex, //
    },
    sysfs::{
        self,
        AttributeGroup, //
    },
    vfio,
    warn_on, //
};
use vchannel::{
    VChannel,
    Workload, //
};
use vdev::Vgpu;
use vmcpu::VmCpuTimes;

/// Number of engines of the simulated GPU (render and blitter).
pub const ENGINES: usize = 2;
/// Workloads a vGPU may queue per engine: a whole guest ring.
pub const QDEPTH: usize = crate::protocol::RING_MAX as usize;
/// Longest workload accepted, us (GVT-g's watchdog would fire long before).
pub const MAX_DURATION_US: u32 = 100_000;
/// Guest-usable low GM (aperture) of the simulated GPU: 1 GB minus the
/// host's 128 MB.
const LOW_MB: u32 = 896;
/// Guest-usable high GM slots: 3456 MB, as the DymGPU paper's GPU.
const SLOTS: u16 = 54;
/// The most vGPUs the simulated GPU takes at once: the kernel's capacity
/// ([`crate::engine::MAX_VGPUS`]). The `static` allocator fits at most 54
/// (one slot each); the sharing allocators place all 64.
const MAX_VGPUS: usize = crate::engine::MAX_VGPUS;
/// Entries of the shared low-GM region (64 MB) under sharing allocators.
const LOW_SHARED_ENTRIES: u32 = ENTRIES_PER_SLOT;
const ENTRIES: usize = ENTRIES_PER_SLOT as usize;
const MIN_TIMER_NS: u64 = 50_000;

/// GVT-g's vGPU types (`intel_vgpu_configs[]`, gen9 names), and a small
/// one, `GVTg_V5_64`, for 64 vGPUs on the GPU: one high-GM slot and 16 MB
/// of aperture (last, so that the others keep their indices).
pub static TYPES: [VgpuType; 5] = [
    VgpuType {
        name: c"GVTg_V5_8",
        low_mb: 64,
        high_mb: 384,
        fences: 4,
        weight: 2,
        resolution: "1024x768",
    },
    VgpuType {
        name: c"GVTg_V5_4",
        low_mb: 128,
        high_mb: 512,
        fences: 4,
        weight: 4,
        resolution: "1920x1200",
    },
    VgpuType {
        name: c"GVTg_V5_2",
        low_mb: 256,
        high_mb: 1024,
        fences: 4,
        weight: 8,
        resolution: "1920x1200",
    },
    VgpuType {
        name: c"GVTg_V5_1",
        low_mb: 512,
        high_mb: 2048,
        fences: 4,
        weight: 16,
        resolution: "1920x1200",
    },
    VgpuType {
        name: c"GVTg_V5_64",
        low_mb: 16,
        high_mb: 64,
        fences: 1,
        weight: 1,
        resolution: "1024x768",
    },
];

struct Running {
    vgpu: VgpuId,
    w: Workload,
}

/// State under the simulated GPU's `sched_lock`.
struct SimState {
    running: [Option<Running>; ENGINES],
    /// Per vGPU id ([`MAX_VGPUS`], allocated with the GPU), its queues.
    queues: KVVec<Option<KBox<[VChannel; ENGINES]>>>,
    /// Each vGPU's completion delivery, which holds its VFIO device.
    vgpus: KVVec<Option<Arc<Delivery>>>,
}

/// GTT memory: the hardware GTT and the vGPUs' private copies.
struct Gtt {
    phys: KVVec<u64>,
    phys_low: KVVec<u64>,
    /// Per vGPU, the chunks of [`SCRUB_CHUNK`] private high-GM entries its
    /// guest wrote since the last scrub (bit 63: chunk 63 and after).
    dirty: KVVec<u64>,
    private: KVVec<Option<KVVec<u64>>>,
    private_low: KVVec<Option<KVVec<u64>>>,
}

/// A simulated GPU.
///
/// Lock order: a vGPU's `regs` -> `state` (GVT-g's `sched_lock`) -> the
/// engine's `policy` -> the engine's `slots` -> `gtt`.
#[pin_data]
pub struct SimGpu {
    engine: Arc<Engine>,
    #[pin]
    state: Mutex<SimState>,
    /// Notified under `state` when an engine's workload completes:
    /// [`SimGpu::remove`] waits on it for a vGPU's work in flight.
    #[pin]
    drained: CondVar,
    #[pin]
    gtt: Mutex<Gtt>,
    /// The CPU time of the VM (its vCPU threads) on each vGPU.
    vms: Arc<VmCpuTimes>,
    engine_timers: [Arc<Timer<SimGpu>>; ENGINES],
    sched_timer: Arc<Timer<SimGpu>>,
}

/// Timer `index < ENGINES` is an engine completing its workload, `ENGINES`
/// the policy timer.
impl TimerTarget for SimGpu {
    fn timer_expired(&self, index: usize) {
        if index < ENGINES {
            self.engine_done(index);
        } else {
            self.policy_timer();
        }
    }
}

/// Writes the power-on GTT entries of vGPU `id` into `entries`, entries
/// `first..` of its high GM (or with `low` its low GM): valid bit, owner,
/// index (bit 39 in the low GM). Recognisable, and nothing any tenant
/// wrote.
fn power_on(id: VgpuId, entries: &mut [u64], first: usize, low: bool) {
    let low_bit = if low { 1u64 << 39 } else { 0 };
    for (i, x) in entries.iter_mut().enumerate() {
        *x = (1u64 << 63) | (u64::from(id) << 40) | (first.wrapping_add(i) as u64) | low_bit;
    }
}

/// GTT entries per dirty bit and per hold of the GTT lock when scrubbing:
/// a reset rewrites only what its guest wrote, and a reset loop does not
/// hold the GPU's switches for long.
const SCRUB_CHUNK: usize = 8192;

/// The dirty bit of high-GM entry `i`.
fn dirty_bit(i: usize) -> u64 {
    1u64 << (i / SCRUB_CHUNK).min(63)
}

/// The entries of dirty bit `bit` in a high GM of `len` entries.
fn dirty_range(bit: u32, len: usize) -> core::ops::Range<usize> {
    let first = (bit as usize).saturating_mul(SCRUB_CHUNK).min(len);
    let end = if bit >= 63 {
        len
    } else {
        first.saturating_add(SCRUB_CHUNK).min(len)
    };
    first..end
}

fn alloc_gtt(n: usize) -> Result<KVVec<u64>> {
    let mut v = KVVec::with_capacity(n, GFP_KERNEL)?;
    v.resize(n, 0, GFP_KERNEL)?;
    Ok(v)
}

impl SimGpu {
    /// Makes a simulated GPU named `name` and its engine. Its timers hold
    /// it until [`SimGpu::shutdown`].
    pub fn new(name: &CStr) -> Result<Arc<Self>> {
        let engine = Arc::pin_init(
            Engine::new(
                name,
                GpuConfig {
                    engines: ENGINES,
                    low_mb: LOW_MB,
                    slots: SLOTS,
                    low_shared_entries: LOW_SHARED_ENTRIES,
                    relocate: true,
                    max_vgpus: MAX_VGPUS,
                },
            )?,
            GFP_KERNEL,
        )?;
        let phys = alloc_gtt(usize::from(SLOTS).checked_mul(ENTRIES).ok_or(EINVAL)?)?;
        let phys_low = alloc_gtt(ENTRIES)?;
        let queues = per_vgpu(MAX_VGPUS, || None)?;
        let vgpus = per_vgpu(MAX_VGPUS, || None)?;
        let dirty = per_vgpu(MAX_VGPUS, || 0)?;
        let private = per_vgpu(MAX_VGPUS, || None)?;
        let private_low = per_vgpu(MAX_VGPUS, || None)?;
        let engine_timers = [Timer::new(0)?, Timer::new(1)?];
        let sched_timer = Timer::new(ENGINES)?;
        let gpu = Arc::pin_init(
            try_pin_init!(Self {
                engine,
                state <- new_mutex!(SimState {
                    running: [const { None }; ENGINES],
                    queues,
                    vgpus,
                }, "gvt_rs_sim_sched"),
                drained <- new_condvar!("gvt_rs_sim_drained"),
                gtt <- new_mutex!(Gtt {
                    phys,
                    phys_low,
                    dirty,
                    private,
                    private_low,
                }, "gvt_rs_sim_gtt"),
                vms: VmCpuTimes::new()?,
                engine_timers,
                sched_timer,
            }),
            GFP_KERNEL,
        )?;
        for t in Iterator::chain(gpu.engine_timers.iter(), core::iter::once(&gpu.sched_timer)) {
            t.bind(gpu.clone())?;
        }
        gpu.vms.bind()?;
        Ok(gpu)
    }

    /// Stops the GPU's timers for good and lets them release it. Every vGPU
    /// is gone (a completion still running may start a timer: shutdown
    /// ignores it).
    pub fn shutdown(&self) {
        self.sched_timer.shutdown();
        for t in &self.engine_timers {
            t.shutdown();
        }
        self.vms.shutdown();
    }

    /// The engine of this GPU.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Runs the dispatch loop with `sched_lock` held: switch when the turn
    /// is over and every engine drained, then feed idle engines from the
    /// current vGPU's V-Channels, then re-arm the policy timer.
    fn schedule_locked(&self, st: &mut SimState) {
        let eng = &*self.engine;
        for _ in 0..4 {
            let drained = st.running.iter().all(Option::is_none);
            let mut picked = false;
            if drained && eng.need_resched() {
                // The engine refuses a decision only with work in flight,
                // and ours drained: `running` mirrors its in-flight count.
                warn_on!(eng.pick(self).is_err());
                picked = true;
            }
            let mut dispatched = false;
            for e in 0..ENGINES {
                if st.running.get(e).is_none_or(Option::is_some) {
                    continue;
                }
                let Some(id) = eng.next_vgpu(e) else { continue };
                // Isolation: a workload runs only on its vGPU's own GTT
                // entries; a range moved under the running vGPU is
                // reloaded once the engines drained.
                let drained = st.running.iter().all(Option::is_none);
                if !eng.ensure_resident(self, id, drained) {
                    continue;
                }
                let Some(Some(q)) = st.queues.get_mut(usize::from(id)) else {
                    continue;
                };
                let Some(w) = q.get_mut(e).and_then(VChannel::pop) else {
                    continue;
                };
                if eng.dispatched(id, e, w.queued_at).is_err() {
                    continue;
                }
                if let (Some(slot), Some(t)) = (st.running.get_mut(e), self.engine_timers.get(e)) {
                    *slot = Some(Running { vgpu: id, w });
                    t.start(w.duration_ns);
                    dispatched = true;
                }
            }
            if dispatched || !picked {
                break;
            }
        }
        let now = eng.now_ns();
        let at = eng.next_timer();
        self.sched_timer
            .start(at.saturating_sub(now).max(MIN_TIMER_NS));
    }

    fn engine_done(&self, e: usize) {
        let mut st = self.state.lock();
        let Some(r) = st.running.get_mut(e).and_then(Option::take) else {
            return;
        };
        // `r` was dispatched and its vGPU is not destroyed before its
        // workloads complete (`remove`), so the engine expects it.
        warn_on!(self.engine.completed(r.vgpu, e, r.w.duration_ns).is_err());
        self.schedule_locked(&mut st);
        // The guest learns of it from its vGPU's own work item: this one
        // serves every vGPU on the engine and must not wait for one VM's
        // memory ([`delivery`]).
        if let Some(Some(d)) = st.vgpus.get(usize::from(r.vgpu)) {
            d.push(e, r.w, r.w.duration_ns);
        }
        self.drained.notify_all();
    }

    fn policy_timer(&self) {
        let mut st = self.state.lock();
        self.engine.tick();
        self.schedule_locked(&mut st);
    }

    /// Queues a scanned workload on `v`'s V-Channel for engine `e`.
    fn submit(&self, v: &SimVgpu, e: usize, mut w: Workload, bytes: u32) -> Result {
        let mut st = self.state.lock();
        let ring = st
            .queues
            .get_mut(usize::from(v.id))
            .and_then(Option::as_mut)
            .and_then(|q| q.get_mut(e))
            .ok_or(ENODEV)?;
        if ring.is_full() {
            return Err(EAGAIN);
        }
        self.engine
            .queued(v.id, e, u64::from(bytes))
            .map_err(|_| EIO)?;
        w.queued_at = self.engine.now_ns();
        ring.push(w)?;
        self.schedule_locked(&mut st);
        Ok(())
    }

    /// Stops `id`: the engine forgets its queued work, and so do we.
    fn stop_locked(&self, st: &mut SimState, id: VgpuId) {
        // Only live vGPUs are stopped: the engine knows `id`.
        warn_on!(self.engine.stop(id).is_err());
        if let Some(Some(q)) = st.queues.get_mut(usize::from(id)) {
            for r in q.iter_mut() {
                r.clear();
            }
        }
    }

    /// Creates a vGPU of type `ty_idx` for the mdev device `dev` and
    /// registers its VFIO device, counted in `vgpus`.
    fn probe(
        gpu: &Arc<Self>,
        vgpus: &vfio::Devices,
        ty_idx: usize,
        dev: &Device,
    ) -> Result<VgpuHandle> {
        let this = &**gpu;
        let ty = TYPES.get(ty_idx).ok_or(EINVAL)?;
        let slots = usize::from(mb_to_slots(ty.high_mb).map_err(|_| EINVAL)?);
        // Allocate everything before taking any lock.
        let queues = KBox::new([VChannel::EMPTY, VChannel::EMPTY], GFP_KERNEL)?;
        let mut high = alloc_gtt(slots.checked_mul(ENTRIES).ok_or(EINVAL)?)?;
        let mut low = alloc_gtt(ENTRIES)?;
        let id = this.engine.create_vgpu(this, ty)?;
        let v = match Self::new_vgpu(gpu, vgpus, id, ty_idx, dev) {
            Ok(v) => v,
            Err(e) => {
                // Just created, so destroying it cannot fail.
                warn_on!(this.engine.destroy_vgpu(this, id).is_err());
                return Err(e);
            }
        };
        let delivery = match Delivery::new(v.clone()) {
            Ok(d) => d,
            Err(e) => {
                drop(v);
                // Just created, so destroying it cannot fail.
                warn_on!(this.engine.destroy_vgpu(this, id).is_err());
                return Err(e);
            }
        };
        power_on(id, &mut high, 0, false);
        power_on(id, &mut low, 0, true);
        {
            let mut g = this.gtt.lock();
            if let Some(s) = g.private.get_mut(usize::from(id)) {
                *s = Some(high);
            }
            if let Some(s) = g.private_low.get_mut(usize::from(id)) {
                *s = Some(low);
            }
            if let Some(d) = g.dirty.get_mut(usize::from(id)) {
                *d = 0;
            }
        }
        {
            let mut st = this.state.lock();
            if let Some(s) = st.queues.get_mut(usize::from(id)) {
                *s = Some(queues);
            }
            if let Some(s) = st.vgpus.get_mut(usize::from(id)) {
                *s = Some(delivery);
            }
        }
        // Last: user space may open the device as soon as it is registered.
        match vfio::Registration::new_emulated_iommu_migratable(v.clone()) {
            Ok(reg) => Ok(VgpuHandle { reg }),
            Err(e) => {
                this.remove(v);
                Err(e)
            }
        }
    }

    fn new_vgpu(
        gpu: &Arc<Self>,
        vgpus: &vfio::Devices,
        id: VgpuId,
        ty: usize,
        dev: &Device,
    ) -> Result<ARef<Vgpu>> {
        let mut cfg = [0u8; regs::CFG_SIZE];
        regs::init_config(&mut cfg, ty);
        let copies = copy::Copies::new()?;
        vfio::Device::new(
            vgpus,
            dev,
            try_pin_init!(SimVgpu {
                gpu: gpu.clone(),
                id,
                ty,
                regs <- new_mutex!(regs::Regs::new(cfg, copies), "gvt_rs_vgpu_lock"),
                irqs <- irq::Irqs::new(),
                last_fault_log: AtomicU64::new(0),
                mig <- migration::new_mig(),
            }),
        )
    }

    /// Destroys the vGPU `v`, whose VFIO device is unregistered (its files
    /// went before: the driver core removes them before the mdev driver's
    /// `remove`).
    fn remove(&self, v: ARef<Vgpu>) {
        let id = v.id;
        let idx = usize::from(id);
        // The device is closed (VFIO waited for its users), so the vGPU is
        // stopped; wait for its in-flight workloads to complete. Only its
        // own: a completion another vGPU's memory holds up does not hold
        // us ([`delivery`]).
        let (queues, delivery) = {
            let mut st = self.state.lock();
            loop {
                self.stop_locked(&mut st, id);
                let running = st.running.iter().flatten().any(|r| r.vgpu == id);
                if !running {
                    let q = st.queues.get_mut(idx).and_then(Option::take);
                    let d = st.vgpus.get_mut(idx).and_then(Option::take);
                    break (q, d);
                }
                // `engine_done` notifies under the lock this wait drops.
                self.drained.wait(&mut st);
            }
        };
        drop(queues);
        if let Some(d) = delivery {
            d.shutdown();
        }
        drop(v);
        // Every per-id state goes before the id is released: a vGPU created
        // meanwhile may get the same id and must not lose its GTTs to us.
        let (high, low) = {
            let mut g = self.gtt.lock();
            (
                g.private.get_mut(idx).and_then(Option::take),
                g.private_low.get_mut(idx).and_then(Option::take),
            )
        };
        if let Err(e) = self.engine.destroy_vgpu(self, id) {
            pr_err!("vGPU {id} not destroyed: {e:?}\n");
        }
        drop((high, low));
    }

    /// Puts the private high-GM GTT entries of `id` that its guest wrote
    /// back to their power-on values, a chunk per hold of the GTT lock, and
    /// returns the chunks it rewrote (its low GM has no guest access). With
    /// [`SimGpu::reload_scrubbed`] after it, nothing a tenant wrote
    /// outlives a reset or its VM (GVT-g scrubs the GGTT on a device-model
    /// reset). Called with the vGPU's register lock held, so that its
    /// guest writes no entry meanwhile.
    fn scrub_private(&self, id: VgpuId) -> u64 {
        let idx = usize::from(id);
        let mask = {
            let mut g = self.gtt.lock();
            match g.dirty.get_mut(idx) {
                Some(d) => core::mem::take(d),
                None => 0,
            }
        };
        let mut left = mask;
        while left != 0 {
            let bit = left.trailing_zeros();
            left &= left.wrapping_sub(1);
            let mut g = self.gtt.lock();
            let Some(Some(p)) = g.private.get_mut(idx) else {
                break;
            };
            let r = dirty_range(bit, p.len());
            let first = r.start;
            if let Some(chunk) = p.get_mut(r) {
                power_on(id, chunk, first, false);
            }
        }
        mask
    }

    /// Copies the entries of `id` scrubbed in `mask` into the hardware GTT
    /// where they are loaded (its resident high-GM slots). Called with
    /// `state` held, so that no switch moves them meanwhile.
    fn reload_scrubbed(&self, id: VgpuId, mask: u64) {
        if mask == 0 {
            return;
        }
        let idx = usize::from(id);
        // Each slot of the vGPU; `with_residency` fails past its last one.
        let mut rel = 0u16;
        while let Ok(()) = self.engine.with_residency(id, rel, |slot, resident| {
            let from = usize::from(rel) * ENTRIES;
            let touched = (from..from + ENTRIES)
                .step_by(SCRUB_CHUNK)
                .any(|i| mask & dirty_bit(i) != 0);
            if !resident || !touched {
                return;
            }
            let mut g = self.gtt.lock();
            let Gtt { phys, private, .. } = &mut *g;
            let Some(Some(src)) = private.get(idx) else {
                return;
            };
            let at = usize::from(slot) * ENTRIES;
            if let (Some(s), Some(d)) = (
                src.get(from..from + ENTRIES),
                phys.get_mut(at..at + ENTRIES),
            ) {
                d.copy_from_slice(s);
            }
        }) {
            rel = match rel.checked_add(1) {
                Some(r) => r,
                None => break,
            };
        }
    }

    fn gtt_read(&self, id: VgpuId, index: u32) -> Result<u64> {
        let i = usize::try_from(index).map_err(|_| ERANGE)?;
        let rel = u16::try_from(i / ENTRIES).map_err(|_| ERANGE)?;
        self.engine.with_residency(id, rel, |slot, resident| {
            let g = self.gtt.lock();
            let off = i % ENTRIES;
            if resident {
                let at = usize::from(slot) * ENTRIES + off;
                g.phys.get(at).copied().ok_or(ERANGE)
            } else {
                g.private
                    .get(usize::from(id))
                    .and_then(Option::as_ref)
                    .and_then(|p| p.get(i).copied())
                    .ok_or(ERANGE)
            }
        })?
    }

    fn gtt_write(&self, id: VgpuId, index: u32, val: u64) -> Result {
        let i = usize::try_from(index).map_err(|_| ERANGE)?;
        let rel = u16::try_from(i / ENTRIES).map_err(|_| ERANGE)?;
        self.engine.with_residency(id, rel, |slot, resident| {
            let mut g = self.gtt.lock();
            let e = g
                .private
                .get_mut(usize::from(id))
                .and_then(Option::as_mut)
                .and_then(|p| p.get_mut(i))
                .ok_or(ERANGE)?;
            *e = val;
            if let Some(d) = g.dirty.get_mut(usize::from(id)) {
                *d |= dirty_bit(i);
            }
            // Only a resident vGPU's write reaches the hardware GTT: a
            // non-resident one must not touch the slot's current owner.
            if resident {
                let at = usize::from(slot) * ENTRIES + i % ENTRIES;
                *g.phys.get_mut(at).ok_or(ERANGE)? = val;
            }
            Ok(())
        })?
    }
}

impl Provider for SimGpu {
    fn load_gtt(&self, vgpu: VgpuId, vgpu_start: u16, first_slot: u16, slots: u16) {
        let mut g = self.gtt.lock();
        let Gtt { phys, private, .. } = &mut *g;
        let Some(Some(src)) = private.get(usize::from(vgpu)) else {
            return;
        };
        let rel = usize::from(first_slot.saturating_sub(vgpu_start)) * ENTRIES;
        let n = usize::from(slots) * ENTRIES;
        let at = usize::from(first_slot) * ENTRIES;
        if let (Some(s), Some(d)) = (src.get(rel..rel + n), phys.get_mut(at..at + n)) {
            d.copy_from_slice(s);
        }
    }

    fn load_low_gtt(&self, vgpu: VgpuId) {
        let mut g = self.gtt.lock();
        let Gtt {
            phys_low,
            private_low,
            ..
        } = &mut *g;
        if let Some(Some(src)) = private_low.get(usize::from(vgpu)) {
            if src.len() == phys_low.len() {
                phys_low.copy_from_slice(src);
            }
        }
    }

    fn relocate(&self, _m: &Move) {
        // Private GTTs are indexed relative to the vGPU's range, and the
        // next switch-in copies the new range: nothing to do here.
    }

    // The value a work item read outside the GPU's locks: reading it here
    // would read each of the VM's vCPU threads with them held.
    fn vm_cpu_ns(&self, vgpu: VgpuId) -> Option<u64> {
        self.vms.cpu_ns(vgpu)
    }
}

/// One simulated vGPU: the driver data of its VFIO device ([`Vgpu`]).
#[pin_data]
pub(crate) struct SimVgpu {
    gpu: Arc<SimGpu>,
    id: VgpuId,
    ty: usize,
    #[pin]
    regs: Mutex<regs::Regs>,
    #[pin]
    irqs: irq::Irqs,
    /// When the last fault was logged (rate limit), ns.
    last_fault_log: AtomicU64,
    /// Its migration, under a lock taken before `regs`.
    #[pin]
    mig: Mutex<migration::Mig>,
}

/// A vGPU as its mdev device holds it, the driver data of the device: the
/// registered VFIO device. Its files are the mdev driver's [`VGPU_GROUP`].
pub struct VgpuHandle {
    reg: vfio::Registration<SimVgpu>,
}

impl VgpuHandle {
    /// Unregisters the VFIO device (waiting until user space closed it) and
    /// destroys the vGPU.
    fn remove(self) {
        let v = self.reg.device().clone();
        drop(self.reg);
        let gpu = v.gpu.clone();
        gpu.remove(v);
    }
}

impl VgpuData for VgpuHandle {
    fn engine(&self) -> &Engine {
        &self.reg.device().gpu.engine
    }

    fn vgpu_id(&self) -> VgpuId {
        self.reg.device().id
    }
}

vgpu_group!(pub(crate) static VGPU_GROUP: VgpuHandle);

impl SimVgpu {
    fn gpu(&self) -> &SimGpu {
        &self.gpu
    }

    /// Reports the INTx level and, for MSI, an interrupt to send.
    fn signal_irq(&self, level: bool, edge: bool) {
        self.irqs.signal(level, edge);
    }

    fn set_vm(&self, open: bool) {
        self.gpu.vms.set(self.id, open);
    }

    /// VFIO `open_device`: the VM starts using the vGPU.
    fn vfio_open(&self) -> Result {
        // `vmcg` samples the CPU time of the threads that access the vGPU.
        self.set_vm(true);
        let mut r = self.regs.lock();
        r.reset(true);
        // A new tenant starts from power-on: no GTT entry and no INTx
        // level of the previous one.
        regs::update_irq(self, &r, false);
        let gpu = self.gpu();
        let scrubbed = gpu.scrub_private(self.id);
        {
            let _st = gpu.state.lock();
            gpu.reload_scrubbed(self.id, scrubbed);
        }
        r.open = true;
        let ret = self.gpu().engine.start(self.id);
        if ret.is_err() {
            r.open = false;
            drop(r);
            self.set_vm(false);
        }
        ret
    }

    /// VFIO `close_device`: stop scheduling the vGPU; queued work is
    /// dropped.
    fn vfio_close(&self) {
        {
            let mut r = self.regs.lock();
            r.open = false;
            // Work still executing completes into nothing: the guest is gone.
            r.reset(true);
            let gpu = self.gpu();
            // Nothing of the tenant stays for the next one.
            let scrubbed = gpu.scrub_private(self.id);
            let mut st = gpu.state.lock();
            gpu.stop_locked(&mut st, self.id);
            gpu.reload_scrubbed(self.id, scrubbed);
            gpu.schedule_locked(&mut st);
        }
        self.set_vm(false);
    }

    /// Puts the vGPU into the failed state (GVT-g's failsafe mode): its
    /// queued work is dropped, the work executing completes silently, its
    /// doorbells are ignored until a reset. Other vGPUs are unaffected.
    fn fail_locked(&self, r: &mut regs::Regs, fault: ring::Fault, e: usize, index: u32) {
        if r.failed() {
            return;
        }
        let gpu = self.gpu();
        {
            let mut st = gpu.state.lock();
            gpu.stop_locked(&mut st, self.id);
            gpu.schedule_locked(&mut st);
        }
        regs::set_fault(self, r, regs::fault_word(fault, e, index));
        // One line per vGPU and second at most: a guest cannot flood the
        // log with fault and reset loops.
        let now = gpu.engine.now_ns();
        let last = self.last_fault_log.load(Ordering::Relaxed);
        if last == 0 || now.saturating_sub(last) >= 1_000_000_000 {
            self.last_fault_log.store(now.max(1), Ordering::Relaxed);
            pr_warn!(
                "{}: vGPU {} failed: {} (engine {}, descriptor {}); a device reset recovers it\n",
                gpu.engine.name(),
                self.id,
                fault.describe(),
                e,
                index
            );
        }
    }

    /// Device reset (VFIO_DEVICE_RESET with `config`, the guest's RESET
    /// register without): queued work is dropped, the executing workload
    /// completes without a trace, rings and interrupts are off, counters 0.
    fn reset_locked(&self, r: &mut regs::Regs, config: bool) -> Result {
        let gpu = self.gpu();
        let scrubbed = gpu.scrub_private(self.id);
        let mut st = gpu.state.lock();
        gpu.stop_locked(&mut st, self.id);
        r.reset(config);
        gpu.reload_scrubbed(self.id, scrubbed);
        regs::update_irq(self, r, false);
        let ret = if r.open {
            gpu.engine.start(self.id)
        } else {
            Ok(())
        };
        gpu.schedule_locked(&mut st);
        ret
    }
}

// ---- the mdev driver ---------------------------------------------------------

/// The simulated GPU's mdev driver, `gvtsim`: a vGPU of a type is a VFIO
/// PCI device.
pub(crate) struct SimMdev;

/// A simulated GPU as its mdev parent holds it.
pub(crate) struct SimParent {
    gpu: Arc<SimGpu>,
    /// The VFIO devices of its vGPUs. It drops after the parent removed
    /// them and waits until they are released: a file of
    /// `/dev/vfio/devices/` can hold one past its removal, and its release
    /// runs this module's code.
    vgpus: vfio::Devices,
}

#[vtable]
impl mdev::Driver for SimMdev {
    type ParentData = SimParent;
    type Data = VgpuHandle;

    const NAME: &'static CStr = c"gvtsim";
    const DEVICE_API: &'static CStr = c"vfio-pci";
    const DEVICE_GROUPS: &'static [&'static AttributeGroup<VgpuHandle>] = &[&VGPU_GROUP];

    fn probe(dev: &mdev::Device, parent: &SimParent, ty: usize) -> Result<VgpuHandle> {
        SimGpu::probe(&parent.gpu, &parent.vgpus, ty, dev.as_ref())
    }

    fn remove(_dev: &mdev::Device, vgpu: VgpuHandle) {
        vgpu.remove();
    }

    fn available(parent: &SimParent, ty: usize) -> u32 {
        TYPES.get(ty).map_or(0, |t| parent.gpu.engine.available(t))
    }

    /// GVT-g's format.
    fn description(_parent: &SimParent, ty: usize, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        let t = TYPES.get(ty).ok_or(EINVAL)?;
        sysfs::emit(
            page,
            fmt!(
                "low_gm_size: {}MB\nhigh_gm_size: {}MB\nfence: {}\nresolution: {}\nweight: {}\n",
                t.low_mb,
                t.high_mb,
                t.fences,
                t.resolution,
                t.weight
            ),
        )
    }
}

/// The mdev driver and the `gvtsim` device class, which every simulated
/// GPU uses (each holds a reference to both).
pub struct DriverRegistration {
    mdev: Arc<mdev::DriverRegistration<SimMdev>>,
    class: Arc<class::Class>,
}

impl DriverRegistration {
    /// Registers the mdev driver `gvtsim` and the `gvtsim` device class.
    pub fn new() -> Result<Self> {
        Ok(Self {
            mdev: Arc::pin_init(mdev::DriverRegistration::new(), GFP_KERNEL)?,
            class: class::Class::new(c"gvtsim")?,
        })
    }
}

/// One simulated GPU: its engine, its device in the class `gvt_rs` and its
/// mdev parent, on a PCI function or on a class device of its own.
pub struct Instance {
    parent: Option<Pin<KBox<mdev::Parent<SimMdev>>>>,
    gpu_dev: Option<GpuDevice>,
    class_dev: Option<class::Device>,
    gpu: Arc<SimGpu>,
}

impl Instance {
    /// Makes the simulated GPU `name`, with its device in `class` under
    /// `dev`, and registers `dev` as its mdev parent; without `dev`, a class
    /// device `name` of `gvtsim` stands for the GPU.
    pub fn new(
        name: &CStr,
        dev: Option<&Device>,
        class: &Arc<GpuClass>,
        driver: &DriverRegistration,
    ) -> Result<Self> {
        let gpu = SimGpu::new(name)?;
        let mut this = Self {
            parent: None,
            gpu_dev: None,
            class_dev: None,
            gpu,
        };
        // From here on `drop` undoes what was done.
        let dev = match dev {
            Some(dev) => dev,
            None => {
                let class_dev: &class::Device = this
                    .class_dev
                    .insert(class::Device::new(driver.class.clone(), name)?);
                class_dev.as_ref()
            }
        };
        this.gpu_dev = Some(esysfs::gpu_device(
            class,
            Some(dev),
            this.gpu.engine().clone(),
        )?);
        let types = TYPES.each_ref().map(|t| mdev::Type {
            sysfs_name: t.name,
            pretty_name: t.name,
        });
        let data = SimParent {
            gpu: this.gpu.clone(),
            vgpus: vfio::Devices::new()?,
        };
        this.parent = Some(mdev::Parent::new(driver.mdev.clone(), dev, &types, data)?);
        Ok(this)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // The parent goes first, removing every vGPU and waiting until
        // their VFIO devices are released; then the GPU's device, a child of
        // the parent's device, and that device; then the timers stop.
        drop(self.parent.take());
        drop(self.gpu_dev.take());
        drop(self.class_dev.take());
        self.gpu.shutdown();
    }
}
