// SPDX-License-Identifier: GPL-2.0

//! GVT-g's ops on a GPU that uses the policy, as [`I915Policy`] forwards
//! them: high-GM placement (`alloc_high`, `free_high`, `high_avail`), a
//! vGPU entering and leaving the scheduler, and the scheduling ops, each
//! mapped onto the engine. Separate from the GPU's state (`gpu.rs`): these
//! are the provider's contract with GVT-g, op by op.

use super::gvt_policy::{
    Pick,
    SchedLocked, //
};
use super::{
    gpu::{
        Entry,
        I915Gpu, //
    },
    provider::Picking,
    queue_times::QueueTimes,
    switch::GvtgAnswer,
    Gvt,
    I915Policy,
    Vgpu,
    VgpuRef,
    SHARED_GM_ALIGN, //
};
use crate::engine::{
    sysfs as esysfs,
    VgpuId, //
};
use kernel::{
    dev_err,
    prelude::*,
    sysfs::kobject::Parent,
    warn_on, //
};

impl I915Gpu {
    /// `alloc_high`: places `vgpu`'s `size` bytes of high GM; returns their
    /// start in the GGTT.
    pub(super) fn alloc_high(&self, vgpu: &Vgpu, size: u64) -> Result<u64> {
        let high_mb = u32::try_from(size >> 20).map_err(|_| EINVAL)?;
        // Set from its type before placement.
        let weight = vgpu.weight();
        let times = KBox::new(QueueTimes::EMPTY, GFP_KERNEL)?;
        let id = self.engine.place_vgpu(self, high_mb, 0, weight)?;
        let at = self
            .engine
            .placement(id)
            .and_then(|pl| u64::from(pl.start).checked_mul(SHARED_GM_ALIGN))
            .and_then(|off| self.pool_start.checked_add(off));
        // A placed vGPU has slots inside the pool.
        let Some(at) = at else {
            warn_on!(true);
            // Placed, not attached: it can be unplaced.
            warn_on!(self.engine.unplace_vgpu(self, id).is_err());
            return Err(EINVAL);
        };
        // INVARIANT: `vgpu` exists until its `free_high`, which takes it out.
        self.vgpus.lock()[id] = Some(Entry {
            key: Some(vgpu.key()),
            vref: None,
            times,
            dir: None,
        });
        Ok(at)
    }

    /// `free_high`: GVT-g frees `vgpu`; its high GM and id go.
    pub(super) fn free_high(&self, vgpu: &Vgpu) {
        let Some(id) = self.id_of(vgpu) else {
            return;
        };
        match self.engine.unplace_vgpu(self, id) {
            Ok(()) => {
                // INVARIANT: The vGPU leaves the table with its entry.
                let gone = self.vgpus.lock()[id].take();
                // Found by `id_of` above, and only this op removes entries.
                warn_on!(gone.is_none());
                drop(gone);
            }
            Err(e) => {
                // Still in the scheduler (it had work in flight at
                // `clean_vgpu`): its id and slots stay taken until the
                // policy is switched off, but the vGPU itself is gone.
                // INVARIANT: Forget it; the entry stays for the id.
                self.with_entry(id, |entry| entry.key = None);
                dev_err!(
                    vgpu.gvt().device(),
                    "vGPU {} keeps its slots: {:?}\n",
                    id.raw(),
                    e
                );
            }
        }
    }

    /// `high_avail`: how many vGPUs with `size` bytes of high GM still fit.
    pub(super) fn high_avail(&self, size: u64) -> u32 {
        u32::try_from(size >> 20).map_or(0, |mb| self.engine.available_mb(mb, 0))
    }

    /// `init_vgpu`: the placed `vgpu` enters the scheduler, stopped, and
    /// gets its directory under its mdev device.
    pub(super) fn init_vgpu(&self, vgpu: &Vgpu) -> Result<VgpuRef> {
        // Placed by `alloc_high`, which GVT-g calls first for every vGPU.
        let id = self.id_of(vgpu).ok_or(EINVAL)?;
        let vref = VgpuRef::new(vgpu, id)?;
        self.engine.attach_vgpu(id)?;
        let dir = match vgpu.device() {
            None => None,
            Some(dev) => match esysfs::vgpu_dir(Parent::device(dev), self.engine.clone(), id) {
                Ok(d) => Some(d),
                Err(e) => {
                    // Just attached, stopped, with nothing queued.
                    warn_on!(self.engine.detach_vgpu(id).is_err());
                    return Err(e);
                }
            },
        };
        let kept = vref.clone();
        self.with_entry(id, |e| {
            e.dir = dir;
            e.vref = Some(kept);
        });
        Ok(vref)
    }

    /// `clean_vgpu`: vGPU `id` leaves the scheduler and its directory goes.
    pub(super) fn clean_vgpu(&self, gvt: &Gvt, id: VgpuId) {
        // GVT-g stops a vGPU before destroying it; be sure (idempotent, and
        // the vGPU is attached, so it cannot fail).
        warn_on!(self.engine.stop(id).is_err());
        if let Err(e) = self.engine.detach_vgpu(id) {
            dev_err!(
                gvt.device(),
                "vGPU {} still busy at destruction: {:?}\n",
                id.raw(),
                e
            );
        }
        let gone = self.with_entry(id, |e| (e.dir.take(), e.vref.take()));
        drop(gone);
    }

    /// `start_schedule`.
    pub(super) fn start_schedule(&self, id: VgpuId) {
        // Idempotent, and the vGPU is attached: it cannot fail.
        warn_on!(self.engine.start(id).is_err());
    }

    /// `stop_schedule`.
    pub(super) fn stop_schedule(&self, gvt: &Gvt, id: VgpuId) {
        // GVT-g keeps the queues of engines a reset does not touch, and
        // reports each workload it discards as cancelled: keep the counts
        // (and queue times), so that what still runs is charged. Idempotent,
        // and the vGPU is attached: it cannot fail.
        warn_on!(self.engine.stop_keeping_queued(id).is_err());
        gvt.request_schedule();
    }

    /// `pick_next`: GVT-g's answer, and the timer armed for the next
    /// deadline.
    pub(super) fn pick_next(
        &self,
        timer: bool,
        locked: &SchedLocked<'_, I915Policy>,
    ) -> Pick<I915Policy> {
        let answer = self
            .gvtg
            .pick_next(&self.engine, &Picking { gpu: self, locked }, timer);
        self.arm_timer();
        match answer {
            GvtgAnswer::Keep => Pick::Keep,
            GvtgAnswer::Idle => Pick::Idle,
            // Picked among the attached vGPUs, which `init_vgpu` keeps.
            GvtgAnswer::Run(id) => self
                .with_vgpu(id, VgpuRef::clone)
                .map_or(Pick::Keep, Pick::Run),
        }
    }

    /// `switched`: the engines drained and the switch happened.
    pub(super) fn switched(&self, gvt: &Gvt, to_idle: bool) {
        if self.gvtg.switched(to_idle) {
            gvt.request_schedule();
        }
    }

    /// `queued`: vGPU `id` queued a workload on i915 engine `engine`.
    pub(super) fn queued(&self, gvt: &Gvt, id: VgpuId, engine: u32) {
        let Some(e) = self.engine(engine) else {
            return;
        };
        // Refused when out of step with the engine's counts: then it is not
        // counted, and its dispatch and completion are refused as well.
        if self.engine.queued(id, e, 0).is_err() {
            return;
        }
        let now = self.engine.now_ns();
        self.with_entry(id, |ent| ent.times.push(e, now));
        if self.engine.need_resched() {
            gvt.request_schedule();
        }
    }

    /// `may_dispatch`: whether `engine` may take vGPU `id`'s next workload.
    pub(super) fn may_dispatch(&self, gvt: &Gvt, id: VgpuId, engine: u32) -> bool {
        let Some(e) = self.engine(engine) else {
            return true;
        };
        let ok = self.engine.may_dispatch(id, e);
        if !ok {
            gvt.request_schedule();
        }
        ok
    }

    /// `dispatched`: `engine` took vGPU `id`'s oldest workload.
    pub(super) fn dispatched(&self, id: VgpuId, engine: u32) {
        let Some(e) = self.engine(engine) else {
            return;
        };
        let now = self.engine.now_ns();
        let at = self
            .with_entry(id, |ent| ent.times.pop(e, now))
            .unwrap_or(now);
        // GVT-g's op cannot fail: a dispatch the engine's counts do not
        // expect (its `queued` was refused) is refused and changes nothing.
        let _ = self.engine.dispatched(id, e, at);
    }

    /// `completed`: a workload of vGPU `id` left `engine`, or was discarded
    /// (`status` `ECANCELED`).
    pub(super) fn completed(&self, id: VgpuId, engine: u32, gpu_ns: u64, status: Result) {
        let Some(e) = self.engine(engine) else {
            return;
        };
        if status == Err(ECANCELED) {
            // Discarded before dispatch: it leaves the queue, not the GPU.
            if self.engine.cancelled(id, e).is_ok() {
                let now = self.engine.now_ns();
                // Its queue time goes with it.
                self.with_entry(id, |ent| ent.times.pop(e, now));
            }
            return;
        }
        // GVT-g's op cannot fail: a completion the engine's counts do not
        // expect is refused and changes nothing.
        let _ = self.engine.completed(id, e, gpu_ns);
    }
}
