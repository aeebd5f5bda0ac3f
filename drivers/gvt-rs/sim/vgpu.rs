// SPDX-License-Identifier: GPL-2.0

//! One simulated vGPU: its creation for an mdev device and its removal,
//! the handle its mdev device holds, and the VFIO state transitions (open,
//! close, device reset, failure) that start, stop and scrub it. Separate
//! from the GPU (`gpu.rs`), which serves every vGPU.

use super::{
    copy,
    delivery::Delivery,
    gpu::SimGpu,
    gtt::{
        alloc_gtt,
        power_on, //
    },
    irq,
    migration,
    regs,
    ring,
    vchannel::VChannel,
    vdev::Vgpu,
    ENTRIES,
    TYPES, //
};
use crate::engine::{
    sysfs::{
        vgpu_group,
        VgpuData, //
    },
    Engine,
    VgpuId, //
};
use crate::gvt_core::slots::mb_to_slots;
use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use kernel::{
    device::{
        Bound,
        Device, //
    },
    new_mutex,
    prelude::*,
    sync::{
        aref::ARef,
        Arc,
        Mutex, //
    },
    vfio,
    warn_on, //
};

impl SimGpu {
    /// Creates a vGPU of type `ty_idx` for the mdev device `dev` and
    /// registers its VFIO device, counted in `vgpus`.
    pub(super) fn probe(
        gpu: &Arc<Self>,
        vgpus: &vfio::Devices,
        ty_idx: usize,
        dev: &Device<Bound>,
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
            g.private[id] = Some(high);
            g.private_low[id] = Some(low);
            g.dirty[id] = 0;
        }
        {
            let mut st = this.state.lock();
            st.queues[id] = Some(queues);
            st.vgpus[id] = Some(delivery);
        }
        // Last: user space may open the device as soon as it is registered.
        match vfio::Registration::new_emulated_iommu_migratable(v.clone()) {
            Ok(reg) => Ok(VgpuHandle {
                reg,
                _destroy: DestroyOnDrop(v),
            }),
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
        dev: &Device<Bound>,
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
                mdev: dev.into(),
                last_fault_log: AtomicU64::new(0),
                mig <- migration::new_mig(),
            }),
        )
    }

    /// Destroys the vGPU `v`, whose VFIO device is unregistered (its files
    /// went before: the driver core removes them before it unbinds the mdev
    /// device and drops its [`VgpuHandle`]).
    fn remove(&self, v: ARef<Vgpu>) {
        let id = v.id;
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
                    let q = st.queues[id].take();
                    let d = st.vgpus[id].take();
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
        let mdev = v.mdev.clone();
        drop(v);
        // Every per-id state goes before the id is released: a vGPU created
        // meanwhile may get the same id and must not lose its GTTs to us.
        let (high, low) = {
            let mut g = self.gtt.lock();
            (g.private[id].take(), g.private_low[id].take())
        };
        if let Err(e) = self.engine.destroy_vgpu(self, id) {
            dev_err!(mdev, "vGPU {} not destroyed: {e:?}\n", id.raw());
        }
        drop((high, low));
    }
}

/// One simulated vGPU: the driver data of its VFIO device ([`Vgpu`]).
#[pin_data]
pub(crate) struct SimVgpu {
    pub(super) gpu: Arc<SimGpu>,
    pub(super) id: VgpuId,
    pub(super) ty: usize,
    #[pin]
    pub(super) regs: Mutex<regs::Regs>,
    #[pin]
    pub(super) irqs: irq::Irqs,
    /// Its mdev device, which the log names. A reference only: the mdev
    /// device may be removed while a file still holds the VFIO device.
    pub(super) mdev: ARef<Device>,
    /// When the last fault was logged (rate limit), ns.
    pub(super) last_fault_log: AtomicU64,
    /// Its migration, under a lock taken before `regs`.
    #[pin]
    pub(super) mig: Mutex<migration::Mig>,
}

/// A vGPU as its mdev device holds it, the driver data of the device: the
/// registered VFIO device. Its files are the mdev driver's [`VGPU_GROUP`].
///
/// Dropped when the mdev device is unbound (removed); its fields drop in
/// order: the VFIO device is unregistered, which waits until user space
/// closed it, and then the vGPU is destroyed.
pub struct VgpuHandle {
    reg: vfio::Registration<SimVgpu>,
    _destroy: DestroyOnDrop,
}

/// Destroys its vGPU when dropped, after the [`VgpuHandle`]'s VFIO device
/// was unregistered.
struct DestroyOnDrop(ARef<Vgpu>);

impl Drop for DestroyOnDrop {
    fn drop(&mut self) {
        let gpu = self.0.gpu.clone();
        gpu.remove(self.0.clone());
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
    pub(super) fn gpu(&self) -> &SimGpu {
        &self.gpu
    }

    /// Reports the INTx level and, for MSI, an interrupt to send.
    pub(super) fn signal_irq(&self, level: bool, edge: bool) {
        self.irqs.signal(level, edge);
    }

    fn set_vm(&self, open: bool) {
        self.gpu.vms.set(self.id, open);
    }

    /// VFIO `open_device`: the VM starts using the vGPU.
    pub(super) fn vfio_open(&self) -> Result {
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
    pub(super) fn vfio_close(&self) {
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
    pub(super) fn fail_locked(&self, r: &mut regs::Regs, fault: ring::Fault, e: usize, index: u32) {
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
            dev_warn!(
                self.mdev,
                "{}: vGPU {} failed: {} (engine {}, descriptor {}); a device reset recovers it\n",
                gpu.engine.name(),
                self.id.raw(),
                fault.describe(),
                e,
                index
            );
        }
    }

    /// Device reset (VFIO_DEVICE_RESET with `config`, the guest's RESET
    /// register without): queued work is dropped, the executing workload
    /// completes without a trace, rings and interrupts are off, counters 0.
    pub(super) fn reset_locked(&self, r: &mut regs::Regs, config: bool) -> Result {
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
