// SPDX-License-Identifier: GPL-2.0

//! Where the switch order comes from: the scheduling policies of the core
//! (`tbs`, `vmcg`, `sfq` from `gvt_core::sched`) plus two quantum-based
//! orders modelled here: plain round robin (the paper's gVirt scheduler, a
//! 16 ms quantum) and a slot-aware order after gScale.
//!
//! Slot-aware (our reading of gScale's slot-aware scheduling; the gScale
//! paper is not in `shared/`): vGPUs are served one turn per round in the
//! order of their first slot, and the direction reverses every round, so
//! the vGPU that ended a round starts the next one without a switch (if it
//! is still runnable), and the sequence restricted to any slot's sharers is
//! a palindrome: a slot shared by `k` busy vGPUs costs `k - 1` copies a
//! round instead of `k`.

use gvt_core::sched::{
    Pick,
    Policy,
    Scheduler, //
};
use gvt_core::slots::SlotPool;
use gvt_core::testing::vid;

/// The pool type of the simulator: 16 vGPUs, 64 slots.
pub type Pool = SlotPool<16, 64>;

/// A switch-order policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// Round robin, 16 ms quantum, by id.
    Rr,
    /// Round robin in slot order, reversing direction every round.
    SlotAware,
    /// A policy of the scheduling core.
    Core(Policy),
}

impl PolicyKind {
    /// Every policy the experiments report.
    pub const ALL: [PolicyKind; 5] = [
        PolicyKind::Rr,
        PolicyKind::SlotAware,
        PolicyKind::Core(Policy::Tbs),
        PolicyKind::Core(Policy::Sfq),
        PolicyKind::Core(Policy::Vmcg),
    ];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Rr => "rr",
            PolicyKind::SlotAware => "slot-aware",
            PolicyKind::Core(p) => p.name(),
        }
    }

    /// Parses a name.
    pub fn from_name(s: &str) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// The scheduler interface the simulator drives (single render engine).
pub trait Sched {
    /// A vGPU was created (weight from its type).
    fn add(&mut self, id: usize, weight: u32, gm_mb: u32, now: u64);
    /// A workload of `id` was queued.
    fn queued(&mut self, id: usize, now: u64);
    /// The head workload of `id` was dispatched.
    fn dispatched(&mut self, id: usize, queued_at: u64, now: u64);
    /// A workload of `id` completed after `gpu_ns`.
    fn completed(&mut self, id: usize, gpu_ns: u64, now: u64);
    /// Cumulative CPU time of `id`'s VM.
    fn cpu_time(&mut self, id: usize, ns: u64);
    /// The current vGPU.
    fn current(&self) -> Option<usize>;
    /// Whether the current turn is over.
    fn need_resched(&self, now: u64) -> bool;
    /// Chooses the next vGPU (`None`: idle). Only with nothing in flight.
    fn pick(&mut self, now: u64, pool: &Pool) -> Option<usize>;
    /// Whether the current vGPU may dispatch now.
    fn next_vgpu(&mut self, now: u64) -> Option<usize>;
    /// Timer.
    fn tick(&mut self, now: u64);
    /// Next timer deadline (absolute ns).
    fn next_timer(&self, now: u64) -> u64;
    /// The switch to the current vGPU occupies the engine for `ns` before
    /// its first dispatch. The core's policies see it as engine time that
    /// nobody is charged for; round robin starts the quantum after it.
    fn switch_time(&mut self, _ns: u64) {}
}

/// Adapter over `gvt_core::sched::Scheduler`.
pub struct CoreSched(Scheduler<16>);

impl CoreSched {
    /// A scheduler running `p`.
    pub fn new(p: Policy) -> Self {
        let mut s = Scheduler::new();
        s.set_policy(p, 0)
            .expect("empty scheduler accepts any policy");
        CoreSched(s)
    }
}

impl Sched for CoreSched {
    fn add(&mut self, id: usize, weight: u32, gm_mb: u32, now: u64) {
        self.0.create(vid(id), weight, gm_mb).expect("create");
        self.0.start(vid(id), now).expect("start");
    }
    fn queued(&mut self, id: usize, now: u64) {
        self.0.queued(vid(id), 0, now).expect("queued");
    }
    fn dispatched(&mut self, id: usize, queued_at: u64, now: u64) {
        self.0
            .dispatched(vid(id), 0, queued_at, now)
            .expect("dispatched");
    }
    fn completed(&mut self, id: usize, gpu_ns: u64, now: u64) {
        self.0
            .completed(vid(id), 0, gpu_ns, now)
            .expect("completed");
    }
    fn cpu_time(&mut self, id: usize, ns: u64) {
        let _ = self.0.cpu_time(vid(id), ns);
    }
    fn current(&self) -> Option<usize> {
        self.0.current().map(usize::from)
    }
    fn need_resched(&self, now: u64) -> bool {
        self.0.need_resched(now)
    }
    fn pick(&mut self, now: u64, _pool: &Pool) -> Option<usize> {
        match self.0.pick(now).expect("pick with nothing in flight") {
            Pick::Run { vgpu, .. } => Some(usize::from(vgpu)),
            Pick::Idle => None,
        }
    }
    fn next_vgpu(&mut self, now: u64) -> Option<usize> {
        self.0.next_vgpu(0, now).map(usize::from)
    }
    fn tick(&mut self, now: u64) {
        self.0.tick(now);
    }
    fn next_timer(&self, now: u64) -> u64 {
        self.0.next_timer(now)
    }
}

/// Round robin with a fixed quantum; optionally slot-aware.
pub struct RoundRobin {
    quantum_ns: u64,
    slot_aware: bool,
    pending: Vec<u32>,
    present: Vec<bool>,
    served: Vec<bool>,
    current: Option<usize>,
    last: Option<usize>,
    forward: bool,
    turn_start: u64,
}

impl RoundRobin {
    /// A round robin with the given quantum.
    pub fn new(quantum_ns: u64, slot_aware: bool) -> Self {
        RoundRobin {
            quantum_ns,
            slot_aware,
            pending: vec![0; 16],
            present: vec![false; 16],
            served: vec![false; 16],
            current: None,
            last: None,
            forward: true,
            turn_start: 0,
        }
    }

    /// Service order of this round: by id, or by (first slot, id).
    fn order(&self, pool: &Pool) -> Vec<usize> {
        let mut o: Vec<usize> = (0..16).filter(|&i| self.present[i]).collect();
        if self.slot_aware {
            o.sort_by_key(|&i| (pool.placement(vid(i)).map(|p| p.start).unwrap_or(0), i));
        }
        if !self.forward {
            o.reverse();
        }
        o
    }

    fn choose(&mut self, pool: &Pool) -> Option<usize> {
        let o = self.order(pool);
        let pos = self.last.and_then(|l| o.iter().position(|&x| x == l));
        // Next unserved runnable vGPU after the last one, in this direction.
        let after = pos.map(|p| p + 1).unwrap_or(0);
        let cand = o
            .iter()
            .skip(after)
            .chain(o.iter().take(after))
            .copied()
            .find(|&i| self.pending[i] > 0 && !self.served[i]);
        if cand.is_some() {
            return cand;
        }
        // Round over: everybody runnable again.
        self.served.iter_mut().for_each(|s| *s = false);
        if self.slot_aware {
            // Reverse, starting from the vGPU that ended the round.
            self.forward = !self.forward;
            let o = self.order(pool);
            let start = self
                .last
                .and_then(|l| o.iter().position(|&x| x == l))
                .unwrap_or(0);
            return o
                .iter()
                .skip(start)
                .chain(o.iter().take(start))
                .copied()
                .find(|&i| self.pending[i] > 0);
        }
        o.iter()
            .skip(after)
            .chain(o.iter().take(after))
            .copied()
            .find(|&i| self.pending[i] > 0)
    }
}

impl Sched for RoundRobin {
    fn add(&mut self, id: usize, _weight: u32, _gm_mb: u32, _now: u64) {
        self.present[id] = true;
    }
    fn queued(&mut self, id: usize, _now: u64) {
        self.pending[id] += 1;
    }
    fn dispatched(&mut self, id: usize, _queued_at: u64, _now: u64) {
        self.pending[id] -= 1;
    }
    fn completed(&mut self, _id: usize, _gpu_ns: u64, _now: u64) {}
    fn cpu_time(&mut self, _id: usize, _ns: u64) {}
    fn current(&self) -> Option<usize> {
        self.current
    }
    fn need_resched(&self, now: u64) -> bool {
        match self.current {
            Some(c) => {
                self.pending[c] == 0 || now.saturating_sub(self.turn_start) >= self.quantum_ns
            }
            None => self.pending.iter().any(|&p| p > 0),
        }
    }
    fn pick(&mut self, now: u64, pool: &Pool) -> Option<usize> {
        let c = self.choose(pool);
        if let Some(v) = c {
            self.served[v] = true;
            self.last = Some(v);
            self.turn_start = now;
        }
        self.current = c;
        c
    }
    fn next_vgpu(&mut self, now: u64) -> Option<usize> {
        let c = self.current?;
        (self.pending[c] > 0 && now.saturating_sub(self.turn_start) < self.quantum_ns).then_some(c)
    }
    fn switch_time(&mut self, ns: u64) {
        self.turn_start += ns;
    }
    fn tick(&mut self, _now: u64) {}
    fn next_timer(&self, now: u64) -> u64 {
        match self.current {
            Some(_) => (self.turn_start + self.quantum_ns).max(now + 1),
            None => u64::MAX,
        }
    }
}

/// Makes the scheduler for a policy.
pub fn make(p: PolicyKind) -> Box<dyn Sched> {
    const QUANTUM: u64 = 16_000_000;
    match p {
        PolicyKind::Rr => Box::new(RoundRobin::new(QUANTUM, false)),
        PolicyKind::SlotAware => Box::new(RoundRobin::new(QUANTUM, true)),
        PolicyKind::Core(x) => Box::new(CoreSched::new(x)),
    }
}
