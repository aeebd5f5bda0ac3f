// SPDX-License-Identifier: GPL-2.0

//! The simulated GPU and its engines: the state under `sched_lock`, the
//! dispatch loop that feeds the engines from the vGPUs' V-Channels as the
//! policy engine decides, and the timers on which workloads execute. The
//! GTT (`gtt.rs`) and the vGPUs (`vgpu.rs`) are separate concerns that
//! take this state's lock.

use super::{
    delivery::Delivery,
    gtt::{
        alloc_gtt,
        Gtt, //
    },
    vchannel::{
        VChannel,
        Workload, //
    },
    vgpu::SimVgpu,
    vmcpu::VmCpuTimes,
    ENGINES,
    ENTRIES,
    LOW_MB,
    LOW_SHARED_ENTRIES,
    MAX_VGPUS,
    MIN_TIMER_NS,
    SLOTS, //
};
use crate::engine::{
    Engine,
    GpuConfig,
    PerVgpu,
    VgpuId, //
};
use crate::timer::{
    Timer,
    TimerTarget, //
};
use kernel::{
    new_condvar,
    new_mutex,
    prelude::*,
    sync::{
        Arc,
        CondVar,
        Mutex, //
    },
    warn_on, //
};

pub(super) struct Running {
    pub(super) vgpu: VgpuId,
    w: Workload,
}

/// State under the simulated GPU's `sched_lock`.
pub(super) struct SimState {
    pub(super) running: [Option<Running>; ENGINES],
    /// Per vGPU id, its queues while it exists.
    pub(super) queues: PerVgpu<Option<KBox<[VChannel; ENGINES]>>>,
    /// Each vGPU's completion delivery, which holds its VFIO device.
    pub(super) vgpus: PerVgpu<Option<Arc<Delivery>>>,
}

/// A simulated GPU.
///
/// Lock order: a vGPU's `regs` -> `state` (GVT-g's `sched_lock`) -> the
/// engine's `policy` -> the engine's `slots` -> `gtt`.
#[pin_data]
pub struct SimGpu {
    pub(super) engine: Arc<Engine>,
    #[pin]
    pub(super) state: Mutex<SimState>,
    /// Notified under `state` when an engine's workload completes:
    /// [`SimGpu::remove`] waits on it for a vGPU's work in flight.
    #[pin]
    pub(super) drained: CondVar,
    #[pin]
    pub(super) gtt: Mutex<Gtt>,
    /// The CPU time of the VM (its vCPU threads) on each vGPU.
    pub(super) vms: Arc<VmCpuTimes>,
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
        let queues = PerVgpu::new(|| None)?;
        let vgpus = PerVgpu::new(|| None)?;
        let dirty = PerVgpu::new(|| 0)?;
        let private = PerVgpu::new(|| None)?;
        let private_low = PerVgpu::new(|| None)?;
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
    pub(super) fn schedule_locked(&self, st: &mut SimState) {
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
                let Some(q) = &mut st.queues[id] else {
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
        if let Some(d) = &st.vgpus[r.vgpu] {
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
    pub(super) fn submit(&self, v: &SimVgpu, e: usize, mut w: Workload, bytes: u32) -> Result {
        let mut st = self.state.lock();
        let ring = st.queues[v.id]
            .as_mut()
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
    pub(super) fn stop_locked(&self, st: &mut SimState, id: VgpuId) {
        // Only live vGPUs are stopped: the engine knows `id`.
        warn_on!(self.engine.stop(id).is_err());
        if let Some(q) = &mut st.queues[id] {
            for r in q.iter_mut() {
                r.clear();
            }
        }
    }
}
