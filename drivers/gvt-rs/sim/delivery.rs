// SPDX-License-Identifier: GPL-2.0

//! Completion delivery: each vGPU's completions reach its guest from a work
//! item of its own.
//!
//! Delivering a completion writes the guest's status page, a DMA into the
//! VM's memory that can take as long as that memory does: a page that
//! userfaultfd serves late during a postcopy migration, swap, a slow backing
//! file. An engine's work item, which serves every vGPU on the engine, only
//! hands the completion over here and goes on to the next workload; the
//! vGPU's own [`Delivery`] writes it under the vGPU's register lock. A
//! stalled guest page stalls that vGPU's completions and nothing else. The
//! data of completed copies ([`super::copy`]) moves here too, before the
//! status record that reports them: copies wait for guest memory as the
//! record does, in this vGPU's work item alone.
//!
//! Completions of an engine not yet delivered are merged into one
//! [`Batch`], as hardware coalesces its completion interrupts: the status
//! record written is the newest one, `completed` and the GPU time count
//! every workload, and the interrupt is raised once if any asked for it. So
//! the pending state of a vGPU is bounded whatever its guest or its memory
//! does.

use super::{
    regs,
    vchannel::Workload,
    vdev::Vgpu,
    ENGINES, //
};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{
        aref::ARef,
        Arc,
        SpinLock, //
    },
    time::{
        Instant,
        Monotonic, //
    },
    workqueue::{
        self,
        impl_has_work,
        new_work,
        Work,
        WorkItem, //
    }, //
};

/// Completed workloads of one engine and ring generation, not yet
/// delivered to the guest.
#[derive(Clone, Copy)]
pub(super) struct Batch {
    /// The newest: its index, sequence number and generation.
    pub(super) last: Workload,
    /// Workloads merged into the batch.
    pub(super) count: u32,
    /// Their GPU time, ns.
    pub(super) gpu_ns: u64,
    /// One of them asked for an interrupt.
    pub(super) irq: bool,
}

impl Batch {
    fn new(w: Workload, gpu_ns: u64) -> Self {
        Self {
            last: w,
            count: 1,
            gpu_ns,
            irq: w.irq,
        }
    }

    /// Merges `w`, the engine's next completion, into the batch. A newer
    /// ring generation replaces it: a reset or a fault came between, and
    /// the older completions would be dropped on delivery anyway.
    fn merge(&mut self, w: Workload, gpu_ns: u64) {
        if w.epoch != self.last.epoch {
            *self = Self::new(w, gpu_ns);
            return;
        }
        self.last = w;
        self.count = self.count.saturating_add(1);
        self.gpu_ns = self.gpu_ns.saturating_add(gpu_ns);
        self.irq |= w.irq;
    }
}

/// The completion delivery of one vGPU.
#[pin_data]
pub(super) struct Delivery {
    vgpu: ARef<Vgpu>,
    #[pin]
    pending: SpinLock<[Option<Batch>; ENGINES]>,
    #[pin]
    work: Work<Delivery>,
}

impl_has_work! {
    impl HasWork<Self> for Delivery { self.work }
}

impl Delivery {
    /// The completion delivery of `vgpu`.
    pub(super) fn new(vgpu: ARef<Vgpu>) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                vgpu,
                pending <- new_spinlock!([None; ENGINES], "gvt_rs_sim_delivery"),
                work <- new_work!("gvt_rs_sim::Delivery::work"),
            }),
            GFP_KERNEL,
        )
    }

    /// Hands `w`, completed on engine `e` after `gpu_ns`, over for delivery.
    /// Never waits for the guest: callable from the engine's work item.
    pub(super) fn push(self: &Arc<Self>, e: usize, w: Workload, gpu_ns: u64) {
        {
            let mut p = self.pending.lock();
            let Some(slot) = p.get_mut(e) else {
                return;
            };
            match slot {
                Some(b) => b.merge(w, gpu_ns),
                None => *slot = Some(Batch::new(w, gpu_ns)),
            }
        }
        // Already queued: that run delivers this one too. A run under way
        // took its batches before we added ours, so it runs again.
        let _ = workqueue::system_highpri().enqueue(self.clone());
    }

    /// Stops delivering for good, waiting for a delivery under way;
    /// completions not yet delivered are dropped (the vGPU is closed). Must
    /// not be called with the vGPU's register lock held.
    pub(super) fn shutdown(self: &Arc<Self>) {
        Work::<Self>::disable_sync(self);
    }
}

impl WorkItem for Delivery {
    type Pointer = Arc<Self>;

    /// Delivers every pending batch, and reports the host CPU it took to
    /// the engine, for this vGPU alone.
    fn run(this: Arc<Self>) {
        let start = Instant::<Monotonic>::now();
        let v = &*this.vgpu;
        {
            let mut r = v.regs.lock();
            for e in 0..ENGINES {
                let batch = this.pending.lock().get_mut(e).and_then(Option::take);
                if let Some(b) = batch {
                    regs::complete(v, &mut r, e, &b);
                }
            }
        }
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(0);
        v.gpu().engine.completions_delivered(v.id, ns);
    }
}

#[kernel::macros::kunit_tests(gvt_rs_sim_delivery)]
mod tests {
    use super::*;

    fn workload(index: u32, epoch: u32, irq: bool) -> Workload {
        Workload {
            seqno: index.wrapping_add(100),
            duration_ns: 1000,
            queued_at: 0,
            irq,
            epoch,
            index,
        }
    }

    #[test]
    fn a_batch_counts_every_completion_and_keeps_the_newest() {
        let mut b = Batch::new(workload(3, 7, false), 10);
        b.merge(workload(4, 7, true), 20);
        b.merge(workload(5, 7, false), 30);
        assert_eq!(b.count, 3);
        assert_eq!(b.gpu_ns, 60);
        assert!(b.irq);
        assert_eq!(b.last.index, 5);
        assert_eq!(b.last.seqno, 105);
    }

    #[test]
    fn a_new_ring_generation_drops_the_older_batch() {
        let mut b = Batch::new(workload(3, 7, true), 10);
        b.merge(workload(0, 8, false), 20);
        assert_eq!(b.count, 1);
        assert_eq!(b.gpu_ns, 20);
        assert!(!b.irq);
        assert_eq!(b.last.epoch, 8);
    }
}
