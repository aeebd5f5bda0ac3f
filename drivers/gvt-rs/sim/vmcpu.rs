// SPDX-License-Identifier: GPL-2.0

//! The CPU time of the VMs on a simulated GPU's vGPUs, for `vmcg`.
//!
//! A VM's CPU time is that of the thread group that opened its vGPU
//! ([`Task::group_cputime_ns`]), and reading it walks every thread of the
//! group, as many as its VMM chose to make. The engine asks for it while it
//! decides who runs next, with the GPU's locks held
//! ([`Provider::vm_cpu_ns`](crate::engine::Provider::vm_cpu_ns)), so it gets
//! the value a work item last read, outside every lock of the GPU
//! ([`VmCpuTimes::cpu_ns`]). The work item reads each VM every
//! [`CPU_SAMPLE_NS`], as often as the engine asks, and waits longer after
//! a reading that took long: at least [`COST_FACTOR`] times as long as the
//! reading, so that reading a VM with many threads takes at most about
//! 1/[`COST_FACTOR`] of a host CPU.

use crate::engine::{
    VgpuId,
    MAX_VGPUS, //
};
use crate::gvt_core::engine::CPU_SAMPLE_NS;
use crate::timer::{
    Timer,
    TimerTarget, //
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

/// A VM that uses a vGPU, and its CPU time as last read.
struct Vm {
    /// The thread group leader of the process that opened the vGPU.
    task: ARef<Task>,
    cpu_ns: u64,
    /// When to read it next, ns of [`VmCpuTimes::now_ns`].
    due_ns: u64,
}

/// The CPU time of the VM on each vGPU of one GPU, read by a work item.
#[pin_data]
pub(crate) struct VmCpuTimes {
    base: Instant<Monotonic>,
    /// Per vGPU id. A spinlock, taken under the GPU's locks: it is held
    /// only to copy a value, never while a VM's threads are walked.
    #[pin]
    vms: SpinLock<[Option<Vm>; MAX_VGPUS]>,
    timer: Arc<Timer<VmCpuTimes>>,
}

/// The time to wait after a reading that took `cost_ns`.
fn pause_after(cost_ns: u64) -> u64 {
    cost_ns.saturating_mul(COST_FACTOR).max(CPU_SAMPLE_NS)
}

impl VmCpuTimes {
    /// No VM yet; the work item runs once [`VmCpuTimes::bind`] gave it
    /// `self`.
    pub(crate) fn new() -> Result<Arc<Self>> {
        let timer = Timer::new(0)?;
        Arc::pin_init(
            try_pin_init!(Self {
                base: Instant::now(),
                vms <- new_spinlock!([const { None }; MAX_VGPUS], "gvt_rs_sim_vms"),
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

    /// `vm` opened vGPU `id` (`None`: it closed it). The first reading is
    /// made here, in the opener's context.
    pub(crate) fn set(&self, id: VgpuId, vm: Option<ARef<Task>>) {
        let vm = vm.map(|task| {
            let start = self.now_ns();
            let cpu_ns = task.group_cputime_ns();
            let now = self.now_ns();
            Vm {
                task,
                cpu_ns,
                due_ns: now.saturating_add(pause_after(now.saturating_sub(start))),
            }
        });
        let old = self
            .vms
            .lock()
            .get_mut(usize::from(id))
            .map(|s| core::mem::replace(s, vm));
        // The task reference goes outside the lock.
        drop(old);
        self.rearm();
    }

    /// The CPU time of the VM on vGPU `id` as last read, ns; `None` if no
    /// VM has it open. Constant time: the engine calls this with the GPU's
    /// locks held.
    pub(crate) fn cpu_ns(&self, id: VgpuId) -> Option<u64> {
        self.vms
            .lock()
            .get(usize::from(id))?
            .as_ref()
            .map(|vm| vm.cpu_ns)
    }

    /// Reads the CPU time of every VM that is due, outside the lock.
    fn read_due(&self) {
        let now = self.now_ns();
        let mut due: [Option<ARef<Task>>; MAX_VGPUS] = [const { None }; MAX_VGPUS];
        {
            let vms = self.vms.lock();
            for (d, vm) in due.iter_mut().zip(vms.iter()) {
                if let Some(vm) = vm.as_ref().filter(|vm| vm.due_ns <= now) {
                    *d = Some(vm.task.clone());
                }
            }
        }
        for (i, task) in due.iter().enumerate() {
            let Some(task) = task else { continue };
            let start = self.now_ns();
            let cpu_ns = task.group_cputime_ns();
            let end = self.now_ns();
            let mut vms = self.vms.lock();
            // The vGPU may have been closed, and opened by another VM,
            // meanwhile: that VM's reading is not this one.
            if let Some(Some(vm)) = vms.get_mut(i) {
                if core::ptr::eq::<Task>(&*vm.task, &**task) {
                    vm.cpu_ns = vm.cpu_ns.max(cpu_ns);
                    vm.due_ns = end.saturating_add(pause_after(end.saturating_sub(start)));
                }
            }
        }
        // The task references go outside the lock.
        drop(due);
    }

    /// Arms the timer for the next VM that is due, if there is one.
    fn rearm(&self) {
        let next = self.vms.lock().iter().flatten().map(|vm| vm.due_ns).min();
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
        VmCpuTimes,
        COST_FACTOR, //
    };
    use crate::gvt_core::engine::CPU_SAMPLE_NS;
    use kernel::{
        prelude::*,
        sync::aref::ARef,
        task::Task,
        time::{
            delay::fsleep,
            Delta,
            Instant,
            Monotonic, //
        }, //
    };

    /// Runs until the CPU time of `task`'s thread group grew.
    fn burn(task: &Task) {
        let before = task.group_cputime_ns();
        let start = Instant::<Monotonic>::now();
        while task.group_cputime_ns() == before && start.elapsed() < Delta::from_secs(10) {
            core::hint::spin_loop();
        }
    }

    #[test]
    fn the_engine_gets_the_last_reading_and_the_work_item_makes_the_next() -> Result {
        // Not bound: only this test reads.
        let vms = VmCpuTimes::new()?;
        let me: ARef<Task> = current!().group_leader().into();
        assert_eq!(vms.cpu_ns(3), None);
        vms.set(3, Some(me.clone()));
        let first = vms.cpu_ns(3).ok_or(EINVAL)?;
        burn(&me);
        // What the engine asks, with the GPU's locks held, walks no thread.
        assert_eq!(vms.cpu_ns(3), Some(first));
        // Due again after at least CPU_SAMPLE_NS, or longer if the first
        // reading was slow: the work item then reads it anew.
        let start = Instant::<Monotonic>::now();
        fsleep(Delta::from_nanos(i64::try_from(CPU_SAMPLE_NS)?));
        vms.read_due();
        while vms.cpu_ns(3) == Some(first) && start.elapsed() < Delta::from_secs(30) {
            fsleep(Delta::from_millis(1));
            vms.read_due();
        }
        assert!(vms.cpu_ns(3).is_some_and(|ns| ns > first));
        vms.set(3, None);
        assert_eq!(vms.cpu_ns(3), None);
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
