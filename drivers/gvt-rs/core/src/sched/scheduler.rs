// SPDX-License-Identifier: GPL-2.0

//! The scheduler of one GPU: vGPU lifecycle, workload events, turns and
//! decisions.

use super::{
    anticipate::Hold,
    metrics::Fairness,
    policy::PolicyOps,
    sfq::Sfq,
    tbs::Tbs,
    throttle::Throttle,
    tunables::Tunables,
    vchannel::{
        Life,
        Vgpu, //
    },
    vmcg::Vmcg,
    withheld::Withheld,
    Error,
    Pick,
    Policy,
    SwitchStep,
    Tunable,
    TurnState,
    VgpuArray,
    VgpuId,
    VgpuSet,
    MAX_ENGINES,
    WEIGHT_RANGE, //
};

/// The scheduler of one GPU with room for `N` vGPUs.
#[derive(Clone, Copy)]
pub struct Scheduler<const N: usize> {
    pub(super) policy: Policy,
    pub(super) tun: Tunables,
    pub(super) v: VgpuArray<Vgpu>,
    pub(super) started: VgpuSet,
    pub(super) backlogged: VgpuSet,
    /// The vGPUs with work queued or in flight (see [`Scheduler::sync`]),
    /// so that a completion finds whether it was contended in O(1).
    pub(super) busy: VgpuSet,
    /// The vGPUs whose next submission `eevdf`'s anticipation can predict
    /// (idle, with a stable think time, see `anticipate.rs`): the only
    /// candidates for a hold.
    pub(super) predicted: VgpuSet,
    pub(super) current: Option<VgpuId>,
    pub(super) turn_start: u64,
    pub(super) turn_slice: u64,
    pub(super) turn_gpu_ns: u64,
    pub(super) turn_dispatched: u32,
    pub(super) turn_idle_ns: u64,
    pub(super) idle_since: Option<u64>,
    pub(super) force: bool,
    pub(super) inflight: u32,
    /// Workloads in flight per engine, all vGPUs.
    pub(super) engine_inflight: [u32; MAX_ENGINES],
    /// Per engine with work in flight: since when the workload that
    /// completes next has held it (its dispatch, or the previous
    /// completion on that engine), for occupancy charging.
    pub(super) engine_since: [u64; MAX_ENGINES],
    pub(super) tbs: Tbs,
    pub(super) sfq: Sfq,
    pub(super) vmcg: Vmcg,
    pub(super) thr: Throttle<N>,
    pub(super) win_start: u64,
    pub(super) fair: Fairness,
    pub(super) picks: u64,
    pub(super) switches: u64,
    pub(super) withheld: Withheld,
    /// The vGPUs with work queued when the policy last chose the idle
    /// vGPU: work from any other arrived after that decision, which is then
    /// due again at once (see `withheld.rs`).
    pub(super) idled_over: VgpuSet,
    /// The latest `now` of a call that updated `withheld`.
    pub(super) last_now: u64,
    /// `eevdf` anticipation hold in force, if any (`anticipate.rs`).
    pub(super) ant: Option<Hold>,
}

impl<const N: usize> Default for Scheduler<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Scheduler<N> {
    /// An empty scheduler running `tbs` with default tunables.
    ///
    /// Its tables have an entry for every [`VgpuId`]; `N` limits the ids
    /// it admits ([`Scheduler::create`] refuses `N` and above), so `N`
    /// above [`MAX_VGPUS`](super::MAX_VGPUS) admits every id.
    ///
    /// `const` so that the kernel can build it straight into its heap
    /// allocation (`const { Scheduler::new() }`): at 78 KB, whatever `N`
    /// (its tables have an entry for every id), it must not be built on a
    /// 16 KB kernel stack.
    pub const fn new() -> Self {
        Self {
            policy: Policy::Tbs,
            tun: Tunables::new(),
            v: VgpuArray::filled(Vgpu::FREE),
            started: VgpuSet::EMPTY,
            backlogged: VgpuSet::EMPTY,
            busy: VgpuSet::EMPTY,
            predicted: VgpuSet::EMPTY,
            current: None,
            turn_start: 0,
            turn_slice: 0,
            turn_gpu_ns: 0,
            turn_dispatched: 0,
            turn_idle_ns: 0,
            idle_since: None,
            force: false,
            inflight: 0,
            engine_inflight: [0; MAX_ENGINES],
            engine_since: [0; MAX_ENGINES],
            tbs: Tbs::new(),
            sfq: Sfq::new(),
            vmcg: Vmcg::new(),
            thr: Throttle::new(),
            win_start: 0,
            fair: Fairness::PERFECT,
            picks: 0,
            switches: 0,
            withheld: Withheld::new(),
            idled_over: VgpuSet::EMPTY,
            last_now: 0,
            ant: None,
        }
    }

    // ---- tunables and policy -------------------------------------------

    /// The active policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The active policy's operations.
    fn ops(&self) -> &'static dyn PolicyOps<N> {
        self.policy.ops()
    }

    /// Switches policy at `now`. The new policy starts from the current
    /// queues with fresh state (`tbs` budgets 0 until its first balance,
    /// `sfq` tags at virtual time, `vmcg` credits empty); the running turn
    /// ends at the next dispatch boundary.
    pub fn set_policy(&mut self, p: Policy, now: u64) -> Result<(), Error> {
        if p == self.policy {
            return Ok(());
        }
        self.policy = p;
        self.rebuild(now);
        Ok(())
    }

    fn rebuild(&mut self, now: u64) {
        self.tbs.reset();
        self.sfq.reset();
        self.vmcg.reset(&self.v, now);
        // A hold is the old policy's decision.
        self.ant = None;
        self.ops().switched_to(self, now);
        // The running turn's time belongs to the old policy.
        self.turn_start = now;
        self.turn_gpu_ns = 0;
        self.turn_dispatched = 0;
        self.turn_idle_ns = 0;
        self.idle_since = None;
        self.force = true;
    }

    /// Current value of a tunable.
    pub fn tunable(&self, t: Tunable) -> u64 {
        self.tun.get(t)
    }

    /// Sets a tunable; [`Error::OutOfRange`] outside [`Tunable::range`] or
    /// when `slice_min_us` would exceed `slice_ceiling_us`.
    pub fn set_tunable(&mut self, t: Tunable, val: u64, now: u64) -> Result<(), Error> {
        self.tun.set(t, val)?;
        if t == Tunable::TbsTickUs && self.tbs.next_tick.is_some() {
            self.tbs.next_tick = Some(now.saturating_add(self.tick_ns()));
        }
        Ok(())
    }

    pub(super) fn tick_ns(&self) -> u64 {
        self.tun.us(Tunable::TbsTickUs)
    }

    // ---- lifecycle -----------------------------------------------------

    pub(super) fn vg(&self, id: VgpuId) -> Result<&Vgpu, Error> {
        live(&self.v, id)
    }

    fn vg_mut(&mut self, id: VgpuId) -> Result<&mut Vgpu, Error> {
        live_mut(&mut self.v, id)
    }

    /// Recomputes the `vmcg` term of `id` after its pending count, weight or
    /// lifecycle changed.
    fn refresh_vmcg(&mut self, id: VgpuId) -> Result<(), Error> {
        self.vmcg.refresh(id, live(&self.v, id)?);
        Ok(())
    }

    /// Creates vGPU `id` (stopped) with a weight and a graphics-memory size.
    pub fn create(&mut self, id: VgpuId, weight: u32, gm_mb: u32) -> Result<(), Error> {
        // The tables have room for every id; `N` is this scheduler's
        // limit.
        if id.index() >= N {
            return Err(Error::OutOfRange);
        }
        if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
            return Err(Error::OutOfRange);
        }
        let g = &mut self.v[id];
        if g.life != Life::Free {
            return Err(Error::Busy);
        }
        *g = Vgpu::FREE;
        g.life = Life::Created;
        g.weight = weight;
        g.gm_mb = gm_mb;
        self.sfq.forget(id);
        self.sync(id);
        Ok(())
    }

    /// Destroys a stopped vGPU with no work in flight.
    pub fn destroy(&mut self, id: VgpuId) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        if g.life == Life::Started || g.inflight > 0 {
            return Err(Error::Busy);
        }
        *g = Vgpu::FREE;
        self.sync(id);
        if self.current == Some(id) {
            self.current = None;
        }
        // A stretch held for `id` ends with it.
        self.note_withheld(self.last_now);
        Ok(())
    }

    /// Starts scheduling `id` (idempotent).
    pub fn start(&mut self, id: VgpuId, now: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        if g.life == Life::Started {
            return Ok(());
        }
        g.life = Life::Started;
        let restart = core::mem::replace(&mut g.ever_started, true);
        self.started.set(id, true);
        self.ops().started(self, id, restart, now);
        // Work kept through a stop (`stop_keeping_queued`) is backlogged
        // again, as if it had just been queued.
        if self.vg(id)?.backlogged() {
            self.activate(id, false);
            self.refresh_vmcg(id)?;
        }
        self.note_withheld(now);
        Ok(())
    }

    /// Stops scheduling `id` (idempotent): its queued work is forgotten (the
    /// kernel discards it); completions of in-flight work are still accepted.
    pub fn stop(&mut self, id: VgpuId, now: u64) -> Result<(), Error> {
        self.stop_with(id, now, false)
    }

    /// Stops scheduling `id` (idempotent) but keeps the counts of its queued
    /// work, for providers whose queues outlive a stop: GVT-g stops a vGPU
    /// for a reset of some of its engines and keeps the other engines'
    /// queues, reporting each workload it discards with
    /// [`Scheduler::cancelled`]. What is still queued is scheduled again
    /// after [`Scheduler::start`], and charged when it runs.
    pub fn stop_keeping_queued(&mut self, id: VgpuId, now: u64) -> Result<(), Error> {
        self.stop_with(id, now, true)
    }

    fn stop_with(&mut self, id: VgpuId, now: u64, keep_queued: bool) -> Result<(), Error> {
        self.roll(now);
        let g = self.vg_mut(id)?;
        if g.life != Life::Started {
            return Ok(());
        }
        g.life = Life::Created;
        if !keep_queued {
            for c in g.ch.iter_mut() {
                c.pending = 0;
            }
            g.pending = 0;
        }
        self.started.set(id, false);
        self.unbacklog(id);
        self.tbs.stop(id);
        self.sfq.deactivate(id);
        self.vmcg.stop(id, live(&self.v, id)?);
        self.sync(id);
        if self.current == Some(id) {
            self.force = true;
        }
        self.note_withheld(now);
        Ok(())
    }

    /// The fair-queueing position of `id` relative to this GPU: how far its
    /// `sfq`/`eevdf` start tag is ahead of virtual time, in virtual-time
    /// units (0: no debt). A vGPU that moves to another GPU takes it along
    /// ([`Scheduler::set_fq_lag`] there), so that it neither gains nor
    /// loses service by moving.
    pub fn fq_lag(&self, id: VgpuId) -> Result<u64, Error> {
        self.vg(id)?;
        Ok(self.sfq.lag(id))
    }

    /// Places stopped vGPU `id` `lag` virtual-time units ahead of this
    /// GPU's virtual time (see [`Scheduler::fq_lag`]); `Busy` while it is
    /// started.
    pub fn set_fq_lag(&mut self, id: VgpuId, lag: u64) -> Result<(), Error> {
        if self.vg(id)?.life == Life::Started {
            return Err(Error::Busy);
        }
        self.sfq.set_lag(id, lag);
        Ok(())
    }

    /// Changes the weight of `id` (takes effect at the next charge, round or
    /// `tbs` balance).
    pub fn set_weight(&mut self, id: VgpuId, weight: u32) -> Result<(), Error> {
        if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
            self.vg(id)?;
            return Err(Error::OutOfRange);
        }
        let g = live_mut(&mut self.v, id)?;
        g.weight = weight;
        self.vmcg.refresh(id, g);
        self.sfq.set_weight(id, weight);
        Ok(())
    }

    /// Admin-set PCI-E bandwidth of `id` in MB/s for Eq. 2 (0: measure from
    /// [`Scheduler::transferred`]).
    pub fn set_bandwidth_mbps(&mut self, id: VgpuId, mbps: u32) -> Result<(), Error> {
        if u64::from(mbps) > Tunable::VmcgLinkMbps.range().1 {
            self.vg(id)?;
            return Err(Error::OutOfRange);
        }
        self.vg_mut(id)?.bw_override_mbps = mbps;
        Ok(())
    }

    // ---- workload events -----------------------------------------------

    fn check_engine(engine: usize) -> Result<(), Error> {
        if engine < MAX_ENGINES {
            Ok(())
        } else {
            Err(Error::Invalid)
        }
    }

    /// A workload was queued on `engine` of started vGPU `id`.
    pub fn queued(&mut self, id: VgpuId, engine: usize, now: u64) -> Result<(), Error> {
        Self::check_engine(engine)?;
        if self.vg(id)?.life != Life::Started {
            return Err(Error::Invalid);
        }
        self.roll(now);
        let gap = self.tun.us(Tunable::InteractiveGapUs);
        let g = self.vg_mut(id)?;
        let was = g.backlogged();
        let woke = !was && g.inflight == 0;
        let trip = woke && g.ia.woke(now, gap);
        if woke {
            g.ant.woke(now);
        }
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        c.pending = c.pending.saturating_add(1);
        g.pending = g.pending.saturating_add(1);
        g.submitted = g.submitted.saturating_add(1);
        g.win_active = true;
        if self.current == Some(id) {
            if let Some(t) = self.idle_since.take() {
                self.turn_idle_ns = self.turn_idle_ns.saturating_add(now.saturating_sub(t));
            }
        }
        self.sync(id);
        if !was {
            self.activate(id, trip);
        }
        self.refresh_vmcg(id)?;
        self.ops().queued(self, now);
        self.note_withheld(now);
        Ok(())
    }

    /// `id` became backlogged: its throttle window, the backlogged set and
    /// the policy (`sfq`/`eevdf`: its tag, wake-up preemption) follow.
    /// `trip`: it is a synchronous round trip (see `interact.rs`).
    fn activate(&mut self, id: VgpuId, trip: bool) {
        self.thr.activate(id);
        self.backlogged.set(id, true);
        self.ops().activated(self, id, trip);
    }

    /// `id` leaves the backlogged set (and the throttle's).
    fn unbacklog(&mut self, id: VgpuId) {
        self.backlogged.set(id, false);
        self.thr.set_member(id, false);
    }

    /// Wake-up preemption (`sfq_wake_preempt`): the running vGPU whose turn
    /// `id`, which just became backlogged, may end if the policy finds it
    /// owed service; `None` if preemption is off, the running vGPU has not
    /// dispatched yet in this turn, or `id` is the running vGPU.
    pub(super) fn wake_preempt_candidate(&self, id: VgpuId) -> Option<VgpuId> {
        if self.tun.get(Tunable::SfqWakePreempt) != 1 || self.turn_dispatched == 0 {
            return None;
        }
        self.current.filter(|&c| c != id)
    }

    /// The weight of `id`.
    pub(super) fn weight(&self, id: VgpuId) -> u32 {
        self.v[id].weight
    }

    fn interactive_calls(&self) -> u32 {
        self.tun
            .get(Tunable::InteractiveCalls)
            .min(u64::from(u32::MAX)) as u32
    }

    /// Whether `id` is interactive (see `interact.rs`).
    pub(super) fn is_interactive(&self, id: VgpuId) -> bool {
        let calls = self.interactive_calls();
        self.v[id].ia.interactive(calls)
    }

    /// How long the GPU is held for the current vGPU `c` once its queue is
    /// empty (see [`PolicyOps::hold_ns`]).
    fn hold_ns(&self, c: VgpuId) -> u64 {
        self.ops().hold_ns(self, c)
    }

    /// GPU-centric coscheduling (FairGV's Algorithm 3): the running vGPU if
    /// it is interactive. While it holds the GPU the provider
    /// should favour its VM's vCPU threads (wake them, or let them run
    /// ahead of other threads), so that its synchronous round trips
    /// complete within the turn. A hint: the core's decisions do not
    /// depend on whether the provider acts on it.
    pub fn coschedule(&self) -> Option<VgpuId> {
        self.current.filter(|&c| self.is_interactive(c))
    }

    /// Usage above which a backlogged vGPU waits (`u64::MAX`: throttle off).
    /// O(1).
    pub(super) fn throttle_limit(&self) -> u64 {
        if self.tun.get(Tunable::Throttle) != 1 {
            return u64::MAX;
        }
        let pct = self.tun.get(Tunable::ThrottleFactorPct) as u32;
        #[cfg(test)]
        assert_eq!(
            self.thr.limit(pct),
            self.thr
                .min_of(&self.backlogged)
                .map_or(u64::MAX, |m| super::fixed::mul_div_sat(
                    m,
                    u64::from(pct),
                    100
                ))
        );
        self.thr.limit(pct)
    }

    fn turn_over(&self, c: VgpuId, now: u64) -> bool {
        self.force || self.ops().turn_over(self, c, now)
    }

    /// Whether the turn of the current vGPU `c` has run out: its slice is
    /// used, or its queue is empty and the GPU was held for it long enough.
    pub(super) fn turn_expired(&self, c: VgpuId, now: u64) -> bool {
        let idle_over = !self.backlogged.contains(c)
            && match self.idle_since {
                Some(t) => now >= t.saturating_add(self.hold_ns(c)),
                // Nothing queued, work in flight: wait for it.
                None => self.v[c].inflight == 0,
            };
        idle_over || now.saturating_sub(self.turn_start) >= self.turn_slice
    }

    /// When the current turn ends (its slice runs out, or the GPU stops
    /// being held for the idle current vGPU), `None` with nothing current.
    pub(super) fn turn_deadline(&self) -> Option<u64> {
        self.current.map(|c| {
            let end = self.turn_start.saturating_add(self.turn_slice);
            match self.idle_since {
                Some(i) => end.min(i.saturating_add(self.hold_ns(c))),
                None => end,
            }
        })
    }

    /// Whether the current turn is over (or the idle GPU has a candidate):
    /// stop dispatching, and call [`Scheduler::pick`] once nothing is in flight.
    pub fn need_resched(&self, now: u64) -> bool {
        match self.current {
            Some(c) => self.turn_over(c, now),
            None => self.force || self.ops().has_candidate(self),
        }
    }

    /// Engine `engine` is free: the vGPU whose head workload on that engine
    /// it should take, or `None` (nothing to do, or the turn is over).
    pub fn next_vgpu(&mut self, engine: usize, now: u64) -> Option<VgpuId> {
        let c = self.current?;
        if self.turn_over(c, now) {
            return None;
        }
        if self.v[c].ch.get(engine)?.pending == 0 {
            return None;
        }
        if !self.ops().may_dispatch(self, c) {
            return None;
        }
        Some(c)
    }

    /// The head workload of `id` on `engine`, queued at `queued_at`, was
    /// dispatched to the hardware at `now`.
    pub fn dispatched(
        &mut self,
        id: VgpuId,
        engine: usize,
        queued_at: u64,
        now: u64,
    ) -> Result<(), Error> {
        self.take_pending(id, engine)?;
        let g = self.vg_mut(id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        c.inflight = c.inflight.saturating_add(1);
        g.inflight = g.inflight.saturating_add(1);
        g.dispatched = g.dispatched.saturating_add(1);
        g.record_latency(now.saturating_sub(queued_at));
        self.sync(id);
        self.inflight = self.inflight.saturating_add(1);
        // `check_engine` in `take_pending` validated `engine`.
        if let (Some(n), Some(since)) = (
            self.engine_inflight.get_mut(engine),
            self.engine_since.get_mut(engine),
        ) {
            if *n == 0 {
                *since = now;
            }
            *n = n.saturating_add(1);
        }
        if self.current == Some(id) {
            self.turn_dispatched = self.turn_dispatched.saturating_add(1);
            self.ops().dispatched(self, id);
        }
        self.refresh_vmcg(id)?;
        self.note_withheld(now);
        Ok(())
    }

    /// A workload of `id` on `engine` completed at `now`, having used
    /// `gpu_ns` of GPU time by the provider's measure.
    ///
    /// The vGPU is charged what it cost the engine, not what it claims: the
    /// engine's *occupancy*, from the workload's dispatch (or the previous
    /// completion on that engine, if later) to this completion being
    /// processed, and at least `gpu_ns`. That includes the per-workload
    /// overhead no guest workload accounts for (the completion interrupt,
    /// the work item that processes it, the status-page write): a vGPU
    /// flooding the engine with tiny workloads pays for the engine time its
    /// completions take from others. The charge is the vGPU's
    /// `occupied_ns`, and what every policy and fairness figure counts;
    /// `busy_ns` keeps `gpu_ns`. The occupancy beyond `gpu_ns` is charged
    /// up to [`COMPLETION_OVERHEAD_MAX_NS`]: a longer wait for a host CPU
    /// is nobody's. It counts as contended if every other started vGPU has
    /// work queued or in flight.
    pub fn completed(
        &mut self,
        id: VgpuId,
        engine: usize,
        gpu_ns: u64,
        now: u64,
    ) -> Result<(), Error> {
        Self::check_engine(engine)?;
        self.vg(id)?;
        self.roll(now);
        let calls = self.interactive_calls();
        let contended = self.others_backlogged(id);
        #[cfg(test)]
        assert_eq!(contended, self.others_backlogged_scan(id));
        let (Some(n), Some(since)) = (
            self.engine_inflight.get(engine).copied(),
            self.engine_since.get_mut(engine),
        ) else {
            return Err(Error::Invalid);
        };
        let g = live_mut(&mut self.v, id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        if c.inflight == 0 || n == 0 {
            return Err(Error::Invalid);
        }
        let cost = occupancy(gpu_ns, now.saturating_sub(*since));
        *since = now;
        c.inflight = c.inflight.saturating_sub(1);
        g.inflight = g.inflight.saturating_sub(1);
        g.completed = g.completed.saturating_add(1);
        g.busy_ns = g.busy_ns.saturating_add(gpu_ns);
        g.occupied_ns = g.occupied_ns.saturating_add(cost);
        if contended {
            g.contended_ns = g.contended_ns.saturating_add(cost);
        }
        g.win_busy_ns = g.win_busy_ns.saturating_add(cost);
        g.ia.served(cost, calls);
        let w = g.weight;
        let idle = g.pending == 0 && g.inflight == 0;
        if idle {
            g.ia.idle(now);
        }
        g.ant.completed(cost, idle, now);
        self.sync(id);
        if let Some(n) = self.engine_inflight.get_mut(engine) {
            *n = n.saturating_sub(1);
        }
        self.inflight = self.inflight.saturating_sub(1);
        if self.current == Some(id) {
            self.turn_gpu_ns = self.turn_gpu_ns.saturating_add(cost);
            if idle {
                self.idle_since = Some(now);
            }
        }
        self.thr.charge(id, cost, w);
        self.note_withheld(now);
        Ok(())
    }

    /// Whether another vGPU is started and every other started vGPU has
    /// work queued or in flight: then the GPU time `id` gets is the
    /// policy's choice among competitors, not what the others left over.
    /// O(1) (one-word sets).
    fn others_backlogged(&self, id: VgpuId) -> bool {
        let mut idle = self.started.and_not(&self.busy);
        idle.set(id, false);
        self.started.any_except(id) && idle.is_empty()
    }

    /// Brings the bits of `id` in `busy` and `predicted` up to date, after
    /// its queue counts or its predictor changed.
    pub(super) fn sync(&mut self, id: VgpuId) {
        let g = &self.v[id];
        let (busy, predicted) = (g.pending > 0 || g.inflight > 0, g.ant.arrival().is_some());
        self.busy.set(id, busy);
        self.predicted.set(id, predicted);
    }

    /// [`Scheduler::others_backlogged`] by a scan of every vGPU (the
    /// reference of the tests).
    #[cfg(test)]
    fn others_backlogged_scan(&self, id: VgpuId) -> bool {
        let mut others = self
            .v
            .iter()
            .filter(|&(j, g)| j != id && g.life == Life::Started)
            .peekable();
        others.peek().is_some() && others.all(|(_, g)| g.pending > 0 || g.inflight > 0)
    }

    /// A workload of `id` queued on `engine` was discarded before it was
    /// dispatched (a vGPU or engine reset). `Invalid` if none is queued,
    /// which is the case after [`Scheduler::stop`] already forgot them.
    pub fn cancelled(&mut self, id: VgpuId, engine: usize) -> Result<(), Error> {
        self.take_pending(id, engine)?;
        self.refresh_vmcg(id)?;
        self.note_withheld(self.last_now);
        Ok(())
    }

    /// One queued workload of `id` on `engine` leaves the queue (dispatched
    /// or discarded); `Invalid` if none is queued. A vGPU left with nothing
    /// queued stops being backlogged.
    fn take_pending(&mut self, id: VgpuId, engine: usize) -> Result<(), Error> {
        Self::check_engine(engine)?;
        let g = self.vg_mut(id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        if c.pending == 0 {
            return Err(Error::Invalid);
        }
        c.pending = c.pending.saturating_sub(1);
        g.pending = g.pending.saturating_sub(1);
        let idle = g.pending == 0;
        self.sync(id);
        if idle {
            self.unbacklog(id);
            if self.current != Some(id) {
                self.sfq.deactivate(id);
            }
        }
        Ok(())
    }

    /// The next step of GVT-g's switch protocol at `now` (see [`SwitchStep`]).
    pub fn switch_step(&self, now: u64) -> SwitchStep {
        if !self.need_resched(now) {
            SwitchStep::Keep
        } else if self.inflight > 0 {
            SwitchStep::Drain
        } else {
            SwitchStep::Pick
        }
    }

    /// Whether the engine thread of `engine` may take `id`'s head workload
    /// now (GVT-g's `may_dispatch`). `false` only when the turn is over
    /// ([`Scheduler::need_resched`] then holds): a provider that holds work
    /// back must ask for a decision. Work the scheduler does not know of
    /// (counts out of step) is let through rather than stalled.
    pub fn may_dispatch(&mut self, id: VgpuId, engine: usize, now: u64) -> bool {
        self.next_vgpu(engine, now) == Some(id) || !self.need_resched(now)
    }

    /// Cumulative CPU time of `id`'s VM (all vCPUs), sampled at `now`.
    pub fn cpu_time(&mut self, id: VgpuId, total_ns: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        g.cpu_ns = g.cpu_ns.max(total_ns);
        Ok(())
    }

    /// `bytes` more were transferred for `id` (DMA or shadowed command bytes).
    pub fn transferred(&mut self, id: VgpuId, bytes: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        g.bytes = g.bytes.saturating_add(bytes);
        Ok(())
    }

    /// Timer event at `now`.
    pub fn tick(&mut self, now: u64) {
        self.roll(now);
        self.ops().tick(self, now);
        self.note_withheld(now);
    }

    /// When [`Scheduler::tick`] should next be called (absolute ns, `>= now`;
    /// `now` only for a `tbs` tick that is already due).
    pub fn next_timer(&self, now: u64) -> u64 {
        let win = self
            .win_start
            .saturating_add(self.tun.ms(Tunable::WindowMs));
        let win = if win > now {
            win
        } else {
            now.saturating_add(self.tun.ms(Tunable::WindowMs))
        };
        self.ops().next_timer(self, now, win)
    }

    /// Whether the policy chose the idle vGPU while every vGPU now waiting
    /// was already waiting: then that choice is the decision in force.
    /// Otherwise work arrived after it and a decision is due at once.
    pub(super) fn idle_decided_for_waiting(&self) -> bool {
        self.current.is_none() && self.backlogged.is_subset(&self.idled_over)
    }

    /// The deadline of the decision that leaves the GPU idle while a
    /// started vGPU has work queued and the vGPU it holds the GPU for
    /// (`None`: the idle vGPU), or `None` if the GPU is not withheld (see
    /// `withheld.rs`).
    fn withheld_until(&self, now: u64) -> Option<(u64, Option<VgpuId>)> {
        if self.inflight > 0 {
            return None;
        }
        let waiting = match self.current {
            // The current vGPU dispatches its own work (or its turn is over
            // and the next decision is due): nothing is held back.
            Some(c) if self.backlogged.contains(c) => false,
            Some(c) => self.backlogged.any_except(c),
            None => !self.backlogged.is_empty(),
        };
        if !waiting {
            return None;
        }
        // A forced decision (a wake-up that preempts, a policy switch, a
        // stopped current vGPU) is due now, whatever the turn's deadline.
        let until = if self.force {
            now
        } else {
            self.ops().withheld_deadline(self, now)
        };
        Some((until, self.ops().withheld_for(self)))
    }

    fn note_withheld(&mut self, now: u64) {
        let now = now.max(self.last_now);
        let next = self.withheld_until(now);
        if let Some(c) = self.withheld.update(now, next) {
            if let Some(h) = c.holder {
                self.v[h].withheld_ns = self.v[h].withheld_ns.saturating_add(c.ns);
            }
        }
        self.last_now = now;
    }

    fn end_turn(&mut self, c: VgpuId, now: u64) {
        if let Some(t) = self.idle_since.take() {
            self.turn_idle_ns = self.turn_idle_ns.saturating_add(now.saturating_sub(t));
        }
        self.ops().turn_ended(self, c, now);
    }

    /// Chooses what runs next. Call only with no workload in flight
    /// (else [`Error::Busy`]), when [`Scheduler::need_resched`] says so or
    /// when nothing is current.
    pub fn pick(&mut self, now: u64) -> Result<Pick, Error> {
        let r = self.decide(now);
        self.note_withheld(now);
        r
    }

    fn decide(&mut self, now: u64) -> Result<Pick, Error> {
        if self.inflight > 0 {
            return Err(Error::Busy);
        }
        self.roll(now);
        let prev = self.current;
        if let Some(c) = prev {
            self.end_turn(c, now);
        }
        let chosen = self.ops().pick_next(self, prev, now);
        self.force = false;
        self.picks = self.picks.wrapping_add(1);
        self.current = chosen;
        let switched = self.current != prev;
        if switched {
            self.switches = self.switches.wrapping_add(1);
        }
        self.turn_start = now;
        self.turn_gpu_ns = 0;
        self.turn_dispatched = 0;
        self.turn_idle_ns = 0;
        self.idle_since = None;
        let Some(vgpu) = chosen else {
            self.turn_slice = 0;
            self.idled_over = self.backlogged;
            return Ok(Pick::Idle);
        };
        self.turn_slice = self.ops().begin_turn(self, vgpu);
        Ok(Pick::Run {
            vgpu,
            slice_ns: self.turn_slice,
            switched,
        })
    }

    /// The running vGPU, if any.
    pub fn current(&self) -> Option<VgpuId> {
        self.current
    }

    /// Where the running vGPU's turn stands at `now`.
    pub fn turn_state(&self, now: u64) -> TurnState {
        TurnState {
            step: self.switch_step(now),
            running: self.current().is_some(),
            inflight: self.inflight,
        }
    }
}

/// The most a completion is charged beyond the workload's own GPU time,
/// ns: the per-completion overhead (the completion interrupt and the work
/// item that processes it) takes microseconds on hardware and a few hundred
/// in the TCG test VM. A completion processed later than that waited for a
/// host CPU: charging the wait to the vGPU whose workload happened to be on
/// the engine starved it for that wait times the total weight over its own
/// (a 3 s stall of one weight-1 vGPU's first completion beside 63 others
/// of weights 1-4: 480 s without a turn).
pub const COMPLETION_OVERHEAD_MAX_NS: u64 = 1_000_000;

/// The engine occupancy charged for a completion: `held` ns since the
/// workload's dispatch (or the previous completion on its engine), at
/// least the `gpu_ns` the provider measured and at most
/// [`COMPLETION_OVERHEAD_MAX_NS`] more.
pub(super) fn occupancy(gpu_ns: u64, held: u64) -> u64 {
    held.min(gpu_ns.saturating_add(COMPLETION_OVERHEAD_MAX_NS))
        .max(gpu_ns)
}

/// vGPU `id` of `v`, unless its slot is free ([`Error::Invalid`]). Free
/// functions rather than methods, so that a caller can hold the vGPU while
/// it updates the scheduler's other fields.
fn live(v: &VgpuArray<Vgpu>, id: VgpuId) -> Result<&Vgpu, Error> {
    match &v[id] {
        g if g.life != Life::Free => Ok(g),
        _ => Err(Error::Invalid),
    }
}

/// [`live`], mutable.
fn live_mut(v: &mut VgpuArray<Vgpu>, id: VgpuId) -> Result<&mut Vgpu, Error> {
    match &mut v[id] {
        g if g.life != Life::Free => Ok(g),
        _ => Err(Error::Invalid),
    }
}
