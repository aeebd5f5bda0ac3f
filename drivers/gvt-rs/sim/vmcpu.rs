// SPDX-License-Identifier: GPL-2.0

//! The CPU time of the VMs on a simulated GPU's vGPUs, for `vmcg`.
//!
//! A VM's CPU time is that of its vCPU threads, as GVT-g reads it from KVM
//! (`intel_vgpu_vcpu_time_ns()`). A simulated vGPU has no KVM instance, so
//! its vCPU threads are those that access its registers: a VMM's vCPU
//! thread reads and writes a vGPU's BAR when its guest touches the device,
//! as QEMU's do through VFIO. The first [`MAX_VCPUS`] threads that accessed
//! the vGPU since it was opened are its VM's vCPUs
//! ([`VmCpuTimes::vcpu_access`]); the CPU time of each is read with
//! [`Task::cputime_ns`], which modules may use, and threads the VMM made
//! for anything else (as many as it chose) are neither counted nor read.
//! A vCPU thread is held until the vGPU is closed, so that the time of one
//! that exited still counts.
//!
//! The engine asks for the time while it decides who runs next, with the
//! GPU's locks held ([`Provider::vm_cpu_ns`](crate::engine::Provider::vm_cpu_ns)),
//! so it gets the value a work item last read, outside every lock of the
//! GPU ([`VmCpuTimes::cpu_ns`]). The work item reads each VM every
//! [`CPU_SAMPLE_NS`], as often as the engine asks, and waits longer after
//! a reading that took long: at least [`COST_FACTOR`] times as long as the
//! reading.

use crate::engine::{
    PerVgpu,
    VgpuId, //
};
use crate::gvt_core::engine::CPU_SAMPLE_NS;
use crate::timer::{
    Timer,
    TimerTarget, //
};
use core::sync::atomic::{
    AtomicU64,
    Ordering, //
};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{
        aref::ARef,
        Arc,
        SpinLock, //
    },
    task::Task,
    time::{
        Instant,
        Monotonic, //
    }, //
};

/// The pause after reading a VM's CPU time is at least this many times what
/// the reading took.
pub(crate) const COST_FACTOR: u64 = 20;
/// Shortest delay of the work item's timer, ns.
const MIN_DELAY_NS: u64 = 1_000_000;
/// The most vCPU threads of one VM whose CPU time counts (QEMU's TCG and a
/// KVM guest of this many vCPUs use one thread per vCPU).
pub(crate) const MAX_VCPUS: usize = 16;

/// The vCPU threads of a VM.
type Vcpus = [Option<ARef<Task>>; MAX_VCPUS];

/// A VM that uses a vGPU, and its CPU time as last read.
struct Vm {
    /// The threads that accessed the vGPU's registers, in order.
    vcpus: Vcpus,
    cpu_ns: u64,
    /// When to read it next, ns of [`VmCpuTimes::now_ns`].
    due_ns: u64,
    /// Which opening of a vGPU this VM is, to tell it from the next VM of
    /// the same vGPU.
    session: u64,
}

/// The CPU time of the VM on each vGPU of one GPU, read by a work item.
#[pin_data]
pub(crate) struct VmCpuTimes {
    base: Instant<Monotonic>,
    /// Per vGPU id. A spinlock, taken under the GPU's locks and on each
    /// register access: it is held only to copy values and references,
    /// never while CPU times are read, and no task reference is dropped
    /// under it.
    #[pin]
    vms: SpinLock<PerVgpu<Option<Vm>>>,
    /// Openings of the vGPUs so far.
    sessions: AtomicU64,
    timer: Arc<Timer<VmCpuTimes>>,
}

/// The time to wait after a reading that took `cost_ns`.
fn pause_after(cost_ns: u64) -> u64 {
    cost_ns.saturating_mul(COST_FACTOR).max(CPU_SAMPLE_NS)
}

/// The CPU time of `vcpus`, ns.
fn cpu_time(vcpus: &Vcpus) -> u64 {
    vcpus
        .iter()
        .flatten()
        .fold(0u64, |sum, t| sum.saturating_add(t.cputime_ns()))
}

impl VmCpuTimes {
    /// No VM yet; the work item runs once [`VmCpuTimes::bind`] gave it
    /// `self`.
    pub(crate) fn new() -> Result<Arc<Self>> {
        let timer = Timer::new(0)?;
        // Per vGPU id (too large for the stack).
        let vms = PerVgpu::new(|| None)?;
        Arc::pin_init(
            try_pin_init!(Self {
                base: Instant::now(),
                vms <- new_spinlock!(vms, "gvt_rs_sim_vms"),
                sessions: AtomicU64::new(0),
                timer,
            }),
            GFP_KERNEL,
        )
    }

    /// Lets the work item run: it holds `self` until
    /// [`VmCpuTimes::shutdown`].
    pub(crate) fn bind(self: &Arc<Self>) -> Result {
        self.timer.bind(self.clone())
    }

    /// Stops the work item for good and lets it release `self`. Every vGPU
    /// is gone.
    pub(crate) fn shutdown(&self) {
        self.timer.shutdown();
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(0)
    }

    /// A VM opened vGPU `id` (`open`), or closed it: its vCPUs are the
    /// threads that access the vGPU from now on, and it used no CPU time
    /// until then.
    pub(crate) fn set(&self, id: VgpuId, open: bool) {
        let vm = open.then(|| Vm {
            vcpus: [const { None }; MAX_VCPUS],
            cpu_ns: 0,
            due_ns: self.now_ns().saturating_add(CPU_SAMPLE_NS),
            session: self.sessions.fetch_add(1, Ordering::Relaxed),
        });
        let old = core::mem::replace(&mut self.vms.lock()[id], vm);
        // The task references go outside the lock.
        drop(old);
        self.rearm();
    }

    /// The current thread accesses vGPU `id`'s registers: it is one of the
    /// VM's vCPUs, counted if it is one of the first [`MAX_VCPUS`].
    pub(crate) fn vcpu_access(&self, id: VgpuId) {
        let me: &Task = current!();
        let mut vms = self.vms.lock();
        let Some(vm) = &mut vms[id] else {
            return;
        };
        if vm
            .vcpus
            .iter()
            .flatten()
            .any(|t| core::ptr::eq::<Task>(&**t, me))
        {
            return;
        }
        if let Some(free) = vm.vcpus.iter_mut().find(|t| t.is_none()) {
            *free = Some(ARef::from(me));
        }
    }

    /// The CPU time of the VM on vGPU `id` as last read, ns; `None` if no
    /// VM has it open. Constant time: the engine calls this with the GPU's
    /// locks held.
    pub(crate) fn cpu_ns(&self, id: VgpuId) -> Option<u64> {
        self.vms.lock()[id].as_ref().map(|vm| vm.cpu_ns)
    }

    /// Reads the CPU time of every VM that is due, outside the lock.
    fn read_due(&self) {
        let now = self.now_ns();
        for id in VgpuId::ALL {
            let vcpus;
            let session;
            {
                let vms = self.vms.lock();
                let Some(vm) = &vms[id] else {
                    continue;
                };
                if vm.due_ns > now {
                    continue;
                }
                vcpus = vm.vcpus.clone();
                session = vm.session;
            }
            let start = self.now_ns();
            let cpu_ns = cpu_time(&vcpus);
            let end = self.now_ns();
            {
                let mut vms = self.vms.lock();
                // The vGPU may have been closed, and opened by another VM,
                // meanwhile: that VM's reading is not this one.
                if let Some(vm) = &mut vms[id] {
                    if vm.session == session {
                        vm.cpu_ns = vm.cpu_ns.max(cpu_ns);
                        vm.due_ns = end.saturating_add(pause_after(end.saturating_sub(start)));
                    }
                }
            }
            // The task references go outside the lock.
            drop(vcpus);
        }
    }

    /// Arms the timer for the next VM that is due, if there is one.
    fn rearm(&self) {
        let next = self
            .vms
            .lock()
            .iter()
            .filter_map(|(_, vm)| vm.as_ref())
            .map(|vm| vm.due_ns)
            .min();
        if let Some(due) = next {
            let delay = due.saturating_sub(self.now_ns()).max(MIN_DELAY_NS);
            self.timer.start(delay);
        }
    }
}

/// The work item: reads the VMs that are due and re-arms.
impl TimerTarget for VmCpuTimes {
    fn timer_expired(&self, _index: usize) {
        self.read_due();
        self.rearm();
    }
}

#[kernel::macros::kunit_tests(gvt_rs_sim_vmcpu)]
mod tests {
    use super::{
        pause_after,
        VgpuId,
        VmCpuTimes,
        COST_FACTOR, //
    };
    use crate::gvt_core::engine::CPU_SAMPLE_NS;
    use kernel::{
        prelude::*,
        task::Task,
        time::{
            delay::fsleep,
            Delta,
            Instant,
            Monotonic, //
        }, //
    };

    /// The vGPU the tests' VM opens.
    const V3: VgpuId = match VgpuId::new(3) {
        Some(id) => id,
        None => VgpuId::FIRST,
    };

    /// Runs until the CPU time of `task` grew.
    fn burn(task: &Task) {
        let before = task.cputime_ns();
        let start = Instant::<Monotonic>::now();
        while task.cputime_ns() == before && start.elapsed() < Delta::from_secs(10) {
            core::hint::spin_loop();
        }
    }

    /// Reads until the VM on vGPU 3 shows more than `than` ns, at most 30 s.
    fn read_until_more(vms: &VmCpuTimes, than: u64) -> Result {
        let start = Instant::<Monotonic>::now();
        fsleep(Delta::from_nanos(i64::try_from(CPU_SAMPLE_NS)?));
        vms.read_due();
        while vms.cpu_ns(V3) == Some(than) && start.elapsed() < Delta::from_secs(30) {
            fsleep(Delta::from_millis(1));
            vms.read_due();
        }
        Ok(())
    }

    #[test]
    fn the_vcpus_are_the_threads_that_access_the_vgpu() -> Result {
        // Not bound: only this test reads.
        let vms = VmCpuTimes::new()?;
        assert_eq!(vms.cpu_ns(V3), None);
        vms.set(V3, true);
        // A thread that did not access the vGPU is not counted.
        burn(current!());
        fsleep(Delta::from_nanos(i64::try_from(CPU_SAMPLE_NS)?));
        vms.read_due();
        assert_eq!(vms.cpu_ns(V3), Some(0));
        // Once it accessed it (twice: it counts once), it is.
        vms.vcpu_access(V3);
        vms.vcpu_access(V3);
        burn(current!());
        read_until_more(&vms, 0)?;
        let first = vms.cpu_ns(V3).ok_or(EINVAL)?;
        assert!(first > 0);
        assert!(first <= current!().cputime_ns());
        // What the engine asks, with the GPU's locks held, reads no thread.
        burn(current!());
        assert_eq!(vms.cpu_ns(V3), Some(first));
        // Due again after at least CPU_SAMPLE_NS: the work item reads anew.
        read_until_more(&vms, first)?;
        assert!(vms.cpu_ns(V3).is_some_and(|ns| ns > first));
        // Another VM on the vGPU starts from nothing, with no vCPU.
        vms.set(V3, false);
        assert_eq!(vms.cpu_ns(V3), None);
        vms.set(V3, true);
        assert_eq!(vms.cpu_ns(V3), Some(0));
        vms.set(V3, false);
        vms.shutdown();
        Ok(())
    }

    #[test]
    fn a_long_reading_spaces_the_next() {
        assert_eq!(pause_after(0), CPU_SAMPLE_NS);
        assert_eq!(
            pause_after(1_000_000),
            COST_FACTOR.saturating_mul(1_000_000)
        );
        assert_eq!(pause_after(u64::MAX), u64::MAX);
    }
}
