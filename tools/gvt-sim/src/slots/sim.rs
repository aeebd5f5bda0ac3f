// SPDX-License-Identifier: GPL-2.0

//! Discrete-event simulation of one GPU render engine shared by VMs, with a
//! scheduling policy choosing the switch order and a slot pool accounting
//! the GTT copies of every switch.

use super::policy::{
    make,
    PolicyKind,
    Pool, //
};
use super::workload::{
    jitter,
    VmSpec, //
};
use gvt_core::slots::{
    AllocatorKind,
    CopyStats,
    PoolConfig,
    ENTRIES_PER_SLOT, //
};
use gvt_core::testing::{
    vid,
    Rng, //
};

/// Simulation parameters.
#[derive(Clone, Copy, Debug)]
pub struct SimCfg {
    /// Simulated time, in seconds.
    pub secs: u64,
    /// Seed of the workload jitter.
    pub seed: u64,
    /// High-GM slots in the pool.
    pub slots: u16,
    /// Time per copied GTT entry, in picoseconds, during which the switch
    /// occupies the engine (0, with `switch_fixed_ns` 0, keeps the switch
    /// order independent of the allocator). See [`COPY_PS_PER_ENTRY`].
    pub copy_ps_per_entry: u64,
    /// Time of every switch besides the copies, in ns.
    pub switch_fixed_ns: u64,
    /// Allow relocation (moves).
    pub relocation: bool,
}

impl Default for SimCfg {
    fn default() -> Self {
        SimCfg {
            secs: 120,
            seed: 1,
            slots: 54,
            copy_ps_per_entry: 0,
            switch_fixed_ns: 0,
            relocation: true,
        }
    }
}

/// The simulated GPU's GTT load per entry, in picoseconds, as measured on
/// the project's host by `gvt-slots copybench` (the same `copy_from_slice`
/// of private `u64` PTEs into the physical GTT that `SimGpu::load_gtt`
/// runs; 499-557 ps over runs of 1-16 slots rotating over 15 vGPUs' GTTs).
pub const COPY_PS_PER_ENTRY: u64 = 520;

/// The rest of a simulated switch, in ns: the slot pool's `switch_in`
/// decision (46-55 ns in `gvt-slots copybench`) plus a scheduler pick (about
/// 40-50 ns at 16 vGPUs in `gvt-bench`).
pub const SWITCH_FIXED_NS: u64 = 100;

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct SimResult {
    /// Pool totals (switch-in copies, low GM, moves).
    pub totals: CopyStats,
    /// Per-VM copy counters.
    pub per_vm: Vec<CopyStats>,
    /// GPU busy time per VM, ns.
    pub busy_ns: Vec<u64>,
    /// Frames completed per VM.
    pub frames: Vec<u64>,
    /// Context switches (changes of the loaded vGPU).
    pub switches: u64,
    /// Sequence of vGPUs switched in (for the optimal search).
    pub trace: Vec<u8>,
    /// Final placement (start) of every VM.
    pub starts: Vec<u16>,
    /// Engine time spent in switches: low-GM copies, high-GM copies and the
    /// fixed part, ns.
    pub switch_low_ns: u64,
    /// See `switch_low_ns`.
    pub switch_high_ns: u64,
    /// See `switch_low_ns`.
    pub switch_fixed_ns: u64,
    /// GPU time of completed frames per second of the run, ns (all VMs).
    pub busy_per_sec: Vec<u64>,
}

impl SimResult {
    /// High-GM slot copies including re-placement copies.
    pub fn slot_copies(&self) -> u64 {
        self.totals.slot_copies()
    }

    /// Frames completed by all VMs.
    pub fn total_frames(&self) -> u64 {
        self.frames.iter().sum()
    }
}

struct Vm {
    spec: VmSpec,
    queue: std::collections::VecDeque<(u64, u64)>,
    next_frame: Option<u64>,
    busy_window: u64,
    cpu_ns: u64,
}

/// Runs `vms` under `policy` with allocator `alloc`.
pub fn simulate(
    vms: &[VmSpec],
    policy: PolicyKind,
    alloc: AllocatorKind,
    cfg: &SimCfg,
) -> SimResult {
    const SEC: u64 = 1_000_000_000;
    let mut rng = Rng::new(cfg.seed);
    let mut pool = Pool::new(PoolConfig {
        slots: cfg.slots,
        low_entries: ENTRIES_PER_SLOT,
        allocator: alloc,
    })
    .expect("pool");
    pool.set_relocation(cfg.relocation);
    let mut sched = make(policy);
    let mut st: Vec<Vm> = Vec::new();
    for (i, v) in vms.iter().enumerate() {
        pool.create(vid(i), v.slots, 0).expect("create");
        sched.add(i, v.weight(), u32::from(v.slots) * 64, 0);
        let (_, think) = v.class.frame_ns();
        st.push(Vm {
            spec: *v,
            queue: Default::default(),
            next_frame: Some(rng.below(think.max(1))),
            busy_window: 0,
            cpu_ns: 0,
        });
    }
    pool.tick(0);
    let end = cfg.secs * SEC;
    let mut now: u64 = 0;
    let mut running: Option<(usize, u64, u64)> = None;
    let mut ctx: Option<usize> = None;
    let mut next_sample = SEC;
    let mut res = SimResult {
        busy_ns: vec![0; vms.len()],
        frames: vec![0; vms.len()],
        busy_per_sec: vec![0; cfg.secs as usize + 1],
        ..Default::default()
    };
    loop {
        // Drive the engine.
        if running.is_none() {
            if sched.current().is_none() || sched.need_resched(now) {
                let pick = sched.pick(now, &pool);
                if let Some(v) = pick {
                    if ctx != Some(v) {
                        let plan = pool.switch_in(vid(v), now).expect("switch_in");
                        res.switches += 1;
                        res.trace.push(v as u8);
                        ctx = Some(v);
                        let high = u64::from(plan.high_slots()) * u64::from(ENTRIES_PER_SLOT);
                        let low = plan.entries() - high;
                        let (low_ns, high_ns) = (
                            low * cfg.copy_ps_per_entry / 1000,
                            high * cfg.copy_ps_per_entry / 1000,
                        );
                        res.switch_low_ns += low_ns;
                        res.switch_high_ns += high_ns;
                        res.switch_fixed_ns += cfg.switch_fixed_ns;
                        let stall = low_ns + high_ns + cfg.switch_fixed_ns;
                        if stall > 0 {
                            // The switch itself occupies the engine; the
                            // turn is counted from its end (DymGPU 4.5:
                            // actual execution time excludes switches).
                            running = Some((usize::MAX, now + stall, 0));
                            sched.switch_time(stall);
                        }
                    }
                }
            }
            if running.is_none() {
                if let Some(id) = sched.next_vgpu(now) {
                    let (qa, svc) = st[id].queue.pop_front().expect("queued work");
                    sched.dispatched(id, qa, now);
                    running = Some((id, now + svc, svc));
                }
            }
        }
        // Next event.
        let mut t = sched.next_timer(now).min(next_sample);
        if let Some((_, done, _)) = running {
            t = t.min(done);
        }
        for v in &st {
            if let Some(a) = v.next_frame {
                t = t.min(a);
            }
        }
        if t > end {
            break;
        }
        now = t.max(now);
        if let Some((id, done, svc)) = running {
            if done <= now {
                running = None;
                if id != usize::MAX {
                    sched.completed(id, svc, now);
                    res.busy_ns[id] += svc;
                    res.frames[id] += 1;
                    if let Some(b) = res.busy_per_sec.get_mut((now / SEC) as usize) {
                        *b += svc;
                    }
                    let vm = &mut st[id];
                    vm.busy_window += svc;
                    let (_, think) = vm.spec.class.frame_ns();
                    let th = jitter(&mut rng, think);
                    vm.cpu_ns += th;
                    vm.next_frame = Some(now + th);
                }
            }
        }
        for (id, vm) in st.iter_mut().enumerate() {
            if vm.next_frame.is_some_and(|a| a <= now) {
                vm.next_frame = None;
                let (work, _) = vm.spec.class.frame_ns();
                vm.queue.push_back((now, jitter(&mut rng, work)));
                sched.queued(id, now);
            }
        }
        sched.tick(now);
        if now >= next_sample {
            for (id, vm) in st.iter_mut().enumerate() {
                let ppm = (vm.busy_window.min(SEC) * 1_000_000 / SEC) as u32;
                pool.sample(vid(id), ppm, now).expect("sample");
                vm.busy_window = 0;
                sched.cpu_time(id, vm.cpu_ns);
            }
            pool.tick(now);
            next_sample += SEC;
        }
    }
    res.totals = pool.totals();
    res.per_vm = (0..vms.len())
        .map(|i| pool.stats(vid(i)).unwrap_or_default())
        .collect();
    res.starts = (0..vms.len())
        .map(|i| pool.placement(vid(i)).map(|p| p.start).unwrap_or(0))
        .collect();
    res
}
