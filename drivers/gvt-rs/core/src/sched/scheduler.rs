// SPDX-License-Identifier: GPL-2.0

//! The scheduler of one GPU: vGPU lifecycle, workload events, turns and
//! decisions.

use super::{
    bitmap::Bitmap,
    fixed::vdiff,
    metrics::Fairness,
    sfq::Sfq,
    tbs::{
        Target,
        Tbs, //
    },
    throttle::Throttle,
    tunables::Tunables,
    vchannel::{
        Life,
        Vgpu, //
    },
    vmcg::{
        Vmcg,
        VmcgCfg, //
    },
    withheld::Withheld,
    Error,
    Pick,
    Policy,
    SwitchStep,
    Tunable,
    WakeRule,
    MAX_ENGINES,
    MAX_VGPUS,
    WEIGHT_RANGE, //
};

/// The scheduler of one GPU with room for `N` vGPUs.
pub struct Scheduler<const N: usize> {
    pub(super) policy: Policy,
    pub(super) tun: Tunables,
    pub(super) v: [Vgpu; N],
    pub(super) started: Bitmap,
    pub(super) backlogged: Bitmap,
    pub(super) current: Option<usize>,
    pub(super) turn_start: u64,
    pub(super) turn_slice: u64,
    pub(super) turn_gpu_ns: u64,
    pub(super) turn_dispatched: u32,
    pub(super) turn_idle_ns: u64,
    pub(super) idle_since: Option<u64>,
    pub(super) force: bool,
    pub(super) inflight: u32,
    pub(super) tbs: Tbs<N>,
    pub(super) sfq: Sfq<N>,
    pub(super) vmcg: Vmcg<N>,
    pub(super) thr: Throttle<N>,
    pub(super) win_start: u64,
    pub(super) fair: Fairness,
    pub(super) picks: u64,
    pub(super) switches: u64,
    pub(super) withheld: Withheld,
    /// The latest `now` of a call that updated `withheld`.
    pub(super) last_now: u64,
}

impl<const N: usize> Default for Scheduler<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Scheduler<N> {
    /// An empty scheduler running `tbs` with default tunables.
    ///
    /// `N` above [`MAX_VGPUS`] is clamped: ids `>= MAX_VGPUS` are rejected.
    ///
    /// `const` so that the kernel can build it straight into its heap
    /// allocation (`const { Scheduler::new() }`): at several KB it must not
    /// be built on a 16 KB kernel stack.
    pub const fn new() -> Self {
        Self {
            policy: Policy::Tbs,
            tun: Tunables::new(),
            v: [Vgpu::FREE; N],
            started: Bitmap::EMPTY,
            backlogged: Bitmap::EMPTY,
            current: None,
            turn_start: 0,
            turn_slice: 0,
            turn_gpu_ns: 0,
            turn_dispatched: 0,
            turn_idle_ns: 0,
            idle_since: None,
            force: false,
            inflight: 0,
            tbs: Tbs::new(),
            sfq: Sfq::new(),
            vmcg: Vmcg::new(),
            thr: Throttle::new(),
            win_start: 0,
            fair: Fairness::PERFECT,
            picks: 0,
            switches: 0,
            withheld: Withheld::new(),
            last_now: 0,
        }
    }

    // ---- tunables and policy -------------------------------------------

    /// The active policy.
    pub fn policy(&self) -> Policy {
        self.policy
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
        match self.policy {
            Policy::Tbs => {
                let tick = self.tick_ns();
                for id in self.started.iter() {
                    self.tbs.start(id, now, 0, tick, false);
                }
            }
            Policy::Sfq | Policy::Eevdf => {
                let rule = self.wake_rule();
                for id in self.backlogged.iter() {
                    self.sfq.activate(id, rule);
                }
                if let Some(c) = self.current {
                    self.sfq.activate(c, rule);
                }
            }
            Policy::Vmcg => {}
        }
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

    fn tick_ns(&self) -> u64 {
        self.tun.us(Tunable::TbsTickUs)
    }

    fn wake_rule(&self) -> WakeRule {
        if self.tun.get(Tunable::SfqWakeMaxVf) == 1 {
            WakeRule::MaxVF
        } else {
            WakeRule::PaperV
        }
    }

    fn vmcg_cfg(&self) -> VmcgCfg {
        VmcgCfg {
            ceiling_ns: self.tun.us(Tunable::VmcgSliceCeilingUs),
            min_slice_ns: self.tun.us(Tunable::VmcgMinSliceUs),
            pool: self
                .tun
                .get(Tunable::VmcgCreditPool)
                .min(u64::from(u32::MAX)) as u32,
            batch: self.tun.get(Tunable::VmcgBatch).min(u64::from(u32::MAX)) as u32,
            link_mbps: self.tun.get(Tunable::VmcgLinkMbps),
            gm_total_mb: self.tun.get(Tunable::VmcgGmTotalMb),
        }
    }

    // ---- lifecycle -----------------------------------------------------

    pub(super) fn vg(&self, id: usize) -> Result<&Vgpu, Error> {
        match self.v.get(id) {
            Some(g) if g.life != Life::Free => Ok(g),
            _ => Err(Error::Invalid),
        }
    }

    fn vg_mut(&mut self, id: usize) -> Result<&mut Vgpu, Error> {
        match self.v.get_mut(id) {
            Some(g) if g.life != Life::Free => Ok(g),
            _ => Err(Error::Invalid),
        }
    }

    /// Creates vGPU `id` (stopped) with a weight and a graphics-memory size.
    pub fn create(&mut self, id: usize, weight: u32, gm_mb: u32) -> Result<(), Error> {
        if id >= N || id >= MAX_VGPUS {
            return Err(Error::OutOfRange);
        }
        if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
            return Err(Error::OutOfRange);
        }
        let g = self.v.get_mut(id).ok_or(Error::OutOfRange)?;
        if g.life != Life::Free {
            return Err(Error::Busy);
        }
        *g = Vgpu::FREE;
        g.life = Life::Created;
        g.weight = weight;
        g.gm_mb = gm_mb;
        self.sfq.forget(id);
        Ok(())
    }

    /// Destroys a stopped vGPU with no work in flight.
    pub fn destroy(&mut self, id: usize) -> Result<(), Error> {
        let g = self.vg(id)?;
        if g.life == Life::Started || g.inflight > 0 {
            return Err(Error::Busy);
        }
        if let Some(s) = self.v.get_mut(id) {
            *s = Vgpu::FREE;
        }
        if self.current == Some(id) {
            self.current = None;
        }
        Ok(())
    }

    /// Starts scheduling `id` (idempotent).
    pub fn start(&mut self, id: usize, now: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        if g.life == Life::Started {
            return Ok(());
        }
        g.life = Life::Started;
        let restart = core::mem::replace(&mut g.ever_started, true);
        self.started.set(id, true);
        match self.policy {
            Policy::Tbs => {
                // A restart (reset loop, reopen) gets no start boost and
                // keeps its time-slice debt: upstream's gift to a new VM
                // must not be something a guest can ask for again.
                let boost = if restart {
                    0
                } else {
                    self.tun.ms(Tunable::TbsStartBoostMs)
                };
                let tick = self.tick_ns();
                self.tbs.start(id, now, boost, tick, restart);
            }
            Policy::Vmcg => {
                if let Some(g) = self.v.get(id) {
                    self.vmcg.start(id, g, now);
                }
            }
            Policy::Sfq | Policy::Eevdf => {}
        }
        // Work kept through a stop (`stop_keeping_queued`) is backlogged
        // again, as if it had just been queued.
        if self.vg(id)?.backlogged() {
            self.activate(id, false);
            if let Some(g) = self.v.get(id) {
                self.vmcg.refresh(id, g);
            }
        }
        self.note_withheld(now);
        Ok(())
    }

    /// Stops scheduling `id` (idempotent): its queued work is forgotten (the
    /// kernel discards it); completions of in-flight work are still accepted.
    pub fn stop(&mut self, id: usize, now: u64) -> Result<(), Error> {
        self.stop_with(id, now, false)
    }

    /// Stops scheduling `id` (idempotent) but keeps the counts of its queued
    /// work, for providers whose queues outlive a stop: GVT-g stops a vGPU
    /// for a reset of some of its engines and keeps the other engines'
    /// queues, reporting each workload it discards with
    /// [`Scheduler::cancelled`]. What is still queued is scheduled again
    /// after [`Scheduler::start`], and charged when it runs.
    pub fn stop_keeping_queued(&mut self, id: usize, now: u64) -> Result<(), Error> {
        self.stop_with(id, now, true)
    }

    fn stop_with(&mut self, id: usize, now: u64, keep_queued: bool) -> Result<(), Error> {
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
        self.backlogged.set(id, false);
        self.tbs.stop(id);
        self.sfq.deactivate(id);
        if let Some(g) = self.v.get(id) {
            self.vmcg.stop(id, g);
        }
        if self.current == Some(id) {
            self.force = true;
        }
        self.note_withheld(now);
        Ok(())
    }

    /// Changes the weight of `id` (takes effect at the next charge, round or
    /// `tbs` balance).
    pub fn set_weight(&mut self, id: usize, weight: u32) -> Result<(), Error> {
        if weight < WEIGHT_RANGE.0 || weight > WEIGHT_RANGE.1 {
            self.vg(id)?;
            return Err(Error::OutOfRange);
        }
        self.vg_mut(id)?.weight = weight;
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        Ok(())
    }

    /// Admin-set PCI-E bandwidth of `id` in MB/s for Eq. 2 (0: measure from
    /// [`Scheduler::transferred`]).
    pub fn set_bandwidth_mbps(&mut self, id: usize, mbps: u32) -> Result<(), Error> {
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
    pub fn queued(&mut self, id: usize, engine: usize, now: u64) -> Result<(), Error> {
        Self::check_engine(engine)?;
        if self.vg(id)?.life != Life::Started {
            return Err(Error::Invalid);
        }
        self.roll(now);
        let gap = self.tun.us(Tunable::InteractiveGapUs);
        let g = self.vg_mut(id)?;
        let was = g.backlogged();
        let trip = !was && g.inflight == 0 && g.ia.woke(now, gap);
        if let Some(c) = g.ch.get_mut(engine) {
            c.pending = c.pending.saturating_add(1);
        }
        g.pending = g.pending.saturating_add(1);
        g.submitted = g.submitted.saturating_add(1);
        g.win_active = true;
        if self.current == Some(id) {
            if let Some(t) = self.idle_since.take() {
                self.turn_idle_ns = self.turn_idle_ns.saturating_add(now.saturating_sub(t));
            }
        }
        if !was {
            self.activate(id, trip);
        }
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        if self.policy == Policy::Tbs {
            self.tbs_schedule(now, false);
        }
        self.note_withheld(now);
        Ok(())
    }

    /// `id` became backlogged: its throttle window, the backlogged set and
    /// its `sfq` tag (with wake-up preemption) follow. `trip`: it is a
    /// synchronous round trip (see `interact.rs`).
    ///
    /// Under `eevdf` a round trip keeps the vGPU's tag (`S <- F` even when
    /// `F < V`): it was away for at most `interactive_gap_us`, waiting for
    /// its own result, and is treated as if it had stayed backlogged, as
    /// EEVDF keeps the lag of a short sleeper. Without this, every round
    /// trip would forfeit whatever service it is owed, and a synchronous
    /// client beside a saturating neighbour would get one workload per
    /// neighbour turn.
    fn activate(&mut self, id: usize, trip: bool) {
        self.thr.activate(id, &self.backlogged);
        self.backlogged.set(id, true);
        if self.policy.fair_queueing() {
            if trip && self.policy == Policy::Eevdf {
                self.sfq.resume(id);
            } else {
                let rule = self.wake_rule();
                self.sfq.activate(id, rule);
            }
            self.sfq_wake_preempt(id);
        }
    }

    /// `sfq` wake-up preemption (`sfq_wake_preempt`): `id` just became
    /// backlogged. If it is owed service, its start tag no later than that
    /// of the running vGPU, which has already had service in this turn,
    /// the turn ends at the next workload boundary instead of running out
    /// its slice: a light vGPU then waits for at most the workloads in
    /// flight, not for a whole slice of every neighbour. A vGPU waking with
    /// debt (its tag past the running one's) waits for its turn as before.
    ///
    /// Under `eevdf` the test is EEVDF's: the waking vGPU is eligible (its
    /// tag no later than the weighted average) and its virtual deadline is
    /// no later than the running vGPU's ("no later" as in `sfq`'s test, so
    /// that vGPUs with equal requests are treated exactly as by `sfq`).
    /// O(N) for the average.
    fn sfq_wake_preempt(&mut self, id: usize) {
        if self.tun.get(Tunable::SfqWakePreempt) != 1 || self.turn_dispatched == 0 {
            return;
        }
        let Some(c) = self.current.filter(|&c| c != id) else {
            return;
        };
        let owed = if self.policy == Policy::Eevdf {
            let v = &self.v;
            let weight = |i: usize| v.get(i).map_or(1, |g| g.weight);
            let slice = self.tun.us(Tunable::SfqSliceUs);
            let avg = self.sfq.average(&weight);
            self.sfq.eligible(id, avg)
                && vdiff(self.sfq.deadline(id, slice), self.sfq.deadline(c, slice)) <= 0
        } else {
            vdiff(self.sfq.tag(id), self.sfq.tag(c)) <= 0
        };
        if owed {
            self.force = true;
        }
    }

    fn interactive_calls(&self) -> u32 {
        self.tun
            .get(Tunable::InteractiveCalls)
            .min(u64::from(u32::MAX)) as u32
    }

    /// Whether `id` is interactive (see `interact.rs`).
    pub(super) fn is_interactive(&self, id: usize) -> bool {
        let calls = self.interactive_calls();
        self.v.get(id).is_some_and(|g| g.ia.interactive(calls))
    }

    /// How long the GPU is held for the current vGPU `c` once its queue is
    /// empty: `idle_threshold_us`, except under `eevdf` for a vGPU that is
    /// not interactive (its next submission is not expected soon: holding
    /// would only waste GPU time and charge it for it).
    fn hold_ns(&self, c: usize) -> u64 {
        if self.policy == Policy::Eevdf && !self.is_interactive(c) {
            0
        } else {
            self.tun.us(Tunable::IdleThresholdUs)
        }
    }

    /// GPU-centric coscheduling (FairGV's Algorithm 3): the running vGPU if
    /// it is interactive. While it holds the GPU the provider
    /// should favour its VM's vCPU threads (wake them, or let them run
    /// ahead of other threads), so that its synchronous round trips
    /// complete within the turn. A hint: the core's decisions do not
    /// depend on whether the provider acts on it.
    pub fn coschedule(&self) -> Option<usize> {
        self.current.filter(|&c| self.is_interactive(c))
    }

    fn tbs_schedule(&mut self, now: u64, timer: bool) {
        let lim = self.throttle_limit();
        let thr = &self.thr;
        let el = |id: usize| thr.usage(id) <= lim;
        let cfg = (
            self.tun.ms(Tunable::TbsBalanceMs),
            self.tun.get(Tunable::TbsStages),
        );
        self.tbs
            .schedule(now, timer, self.current, &self.v, cfg, &el);
    }

    /// Usage above which a backlogged vGPU waits (`u64::MAX`: throttle off).
    /// O(N) when the throttle is on, O(1) otherwise.
    fn throttle_limit(&self) -> u64 {
        if self.tun.get(Tunable::Throttle) != 1 {
            return u64::MAX;
        }
        self.thr.limit(
            &self.backlogged,
            self.tun.get(Tunable::ThrottleFactorPct) as u32,
        )
    }

    fn turn_over(&self, c: usize, now: u64) -> bool {
        if self.force {
            return true;
        }
        match self.policy {
            Policy::Tbs => self.tbs.target.is_some(),
            Policy::Sfq | Policy::Eevdf | Policy::Vmcg => {
                let idle_over = !self.backlogged.get(c)
                    && match self.idle_since {
                        Some(t) => now >= t.saturating_add(self.hold_ns(c)),
                        // Nothing queued, work in flight: wait for it.
                        None => self.v.get(c).is_none_or(|g| g.inflight == 0),
                    };
                idle_over
                    || now.saturating_sub(self.turn_start) >= self.turn_slice
                    || (self.policy == Policy::Vmcg && self.vmcg.denied)
            }
        }
    }

    /// Whether the current turn is over (or the idle GPU has a candidate):
    /// stop dispatching, and call [`Scheduler::pick`] once nothing is in flight.
    pub fn need_resched(&self, now: u64) -> bool {
        match self.current {
            Some(c) => self.turn_over(c, now),
            None => match self.policy {
                Policy::Tbs => self.force || self.tbs.target.is_some(),
                _ => self.force || !self.backlogged.is_empty(),
            },
        }
    }

    /// Engine `engine` is free: the vGPU whose head workload on that engine
    /// it should take, or `None` (nothing to do, or the turn is over).
    pub fn next_vgpu(&mut self, engine: usize, now: u64) -> Option<usize> {
        let c = self.current?;
        if self.turn_over(c, now) {
            return None;
        }
        let g = self.v.get(c)?;
        if g.ch.get(engine)?.pending == 0 {
            return None;
        }
        if self.policy == Policy::Vmcg && !self.vmcg.can_dispatch(c, &self.backlogged) {
            return None;
        }
        Some(c)
    }

    /// The head workload of `id` on `engine`, queued at `queued_at`, was
    /// dispatched to the hardware at `now`.
    pub fn dispatched(
        &mut self,
        id: usize,
        engine: usize,
        queued_at: u64,
        now: u64,
    ) -> Result<(), Error> {
        self.take_pending(id, engine)?;
        let g = self.vg_mut(id)?;
        if let Some(c) = g.ch.get_mut(engine) {
            c.inflight = c.inflight.saturating_add(1);
        }
        g.inflight = g.inflight.saturating_add(1);
        g.dispatched = g.dispatched.saturating_add(1);
        g.record_latency(now.saturating_sub(queued_at));
        self.inflight = self.inflight.saturating_add(1);
        if self.current == Some(id) {
            self.turn_dispatched = self.turn_dispatched.saturating_add(1);
            if self.policy == Policy::Vmcg {
                let cfg = self.vmcg_cfg();
                self.vmcg.dispatched(id, &cfg);
            }
        }
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        self.note_withheld(now);
        Ok(())
    }

    /// A workload of `id` on `engine` completed, having used `gpu_ns` of GPU time.
    pub fn completed(
        &mut self,
        id: usize,
        engine: usize,
        gpu_ns: u64,
        now: u64,
    ) -> Result<(), Error> {
        Self::check_engine(engine)?;
        self.vg(id)?;
        self.roll(now);
        let calls = self.interactive_calls();
        let g = self.vg_mut(id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        if c.inflight == 0 {
            return Err(Error::Invalid);
        }
        c.inflight = c.inflight.saturating_sub(1);
        g.inflight = g.inflight.saturating_sub(1);
        g.completed = g.completed.saturating_add(1);
        g.busy_ns = g.busy_ns.saturating_add(gpu_ns);
        g.win_busy_ns = g.win_busy_ns.saturating_add(gpu_ns);
        g.ia.served(gpu_ns, calls);
        let w = g.weight;
        let idle = g.pending == 0 && g.inflight == 0;
        if idle {
            g.ia.idle(now);
        }
        self.inflight = self.inflight.saturating_sub(1);
        if self.current == Some(id) {
            self.turn_gpu_ns = self.turn_gpu_ns.saturating_add(gpu_ns);
            if idle {
                self.idle_since = Some(now);
            }
        }
        self.thr.charge(id, gpu_ns, w);
        self.note_withheld(now);
        Ok(())
    }

    /// A workload of `id` queued on `engine` was discarded before it was
    /// dispatched (a vGPU or engine reset). `Invalid` if none is queued,
    /// which is the case after [`Scheduler::stop`] already forgot them.
    pub fn cancelled(&mut self, id: usize, engine: usize) -> Result<(), Error> {
        self.take_pending(id, engine)?;
        if let Some(g) = self.v.get(id) {
            self.vmcg.refresh(id, g);
        }
        self.note_withheld(self.last_now);
        Ok(())
    }

    /// One queued workload of `id` on `engine` leaves the queue (dispatched
    /// or discarded); `Invalid` if none is queued. A vGPU left with nothing
    /// queued stops being backlogged.
    fn take_pending(&mut self, id: usize, engine: usize) -> Result<(), Error> {
        Self::check_engine(engine)?;
        let g = self.vg_mut(id)?;
        let c = g.ch.get_mut(engine).ok_or(Error::Invalid)?;
        if c.pending == 0 {
            return Err(Error::Invalid);
        }
        c.pending = c.pending.saturating_sub(1);
        g.pending = g.pending.saturating_sub(1);
        if g.pending == 0 {
            self.backlogged.set(id, false);
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
    pub fn may_dispatch(&mut self, id: usize, engine: usize, now: u64) -> bool {
        self.next_vgpu(engine, now) == Some(id) || !self.need_resched(now)
    }

    /// Cumulative CPU time of `id`'s VM (all vCPUs), sampled at `now`.
    pub fn cpu_time(&mut self, id: usize, total_ns: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        g.cpu_ns = g.cpu_ns.max(total_ns);
        Ok(())
    }

    /// `bytes` more were transferred for `id` (DMA or shadowed command bytes).
    pub fn transferred(&mut self, id: usize, bytes: u64) -> Result<(), Error> {
        let g = self.vg_mut(id)?;
        g.bytes = g.bytes.saturating_add(bytes);
        Ok(())
    }

    /// Timer event at `now`.
    pub fn tick(&mut self, now: u64) {
        self.roll(now);
        if self.policy == Policy::Tbs {
            if let Some(t) = self.tbs.next_tick {
                if now >= t {
                    self.tbs_schedule(now, true);
                    self.tbs.next_tick = Some(now.saturating_add(self.tick_ns()));
                }
            }
        }
        self.note_withheld(now);
    }

    /// When [`Scheduler::tick`] should next be called (absolute ns, `>= now`;
    /// `now` only for a `tbs` tick that is already due).
    pub fn next_timer(&self, now: u64) -> u64 {
        let win = self
            .win_start
            .saturating_add(self.tun.ms(Tunable::WindowMs));
        let t = match self.policy {
            Policy::Tbs => self.tbs.next_tick,
            _ => self.current.map(|c| {
                let end = self.turn_start.saturating_add(self.turn_slice);
                match self.idle_since {
                    Some(i) => end.min(i.saturating_add(self.hold_ns(c))),
                    None => end,
                }
            }),
        };
        let win = if win > now {
            win
        } else {
            now.saturating_add(self.tun.ms(Tunable::WindowMs))
        };
        match t {
            // A due tbs tick is returned as `now`: tick() always advances it.
            Some(t) if self.policy == Policy::Tbs => t.max(now).min(win),
            Some(t) if t > now => t.min(win),
            _ => win,
        }
    }

    /// The deadline of the decision that leaves the GPU idle while a
    /// started vGPU has work queued, or `None` if the GPU is not withheld
    /// (see `withheld.rs`).
    fn withheld_until(&self, now: u64) -> Option<u64> {
        if self.inflight > 0 {
            return None;
        }
        let waiting = match self.current {
            // The current vGPU dispatches its own work (or its turn is over
            // and the next decision is due): nothing is held back.
            Some(c) if self.backlogged.get(c) => false,
            Some(c) => self.backlogged.any_except(c),
            None => !self.backlogged.is_empty(),
        };
        if !waiting {
            return None;
        }
        let deadline = match (self.policy, self.current) {
            // A switch is decided: the engine asks for it at once.
            (Policy::Tbs, _) if self.tbs.target.is_some() => now,
            (Policy::Tbs, _) => self.tbs.next_tick.unwrap_or(now),
            (_, Some(c)) => {
                let end = self.turn_start.saturating_add(self.turn_slice);
                match self.idle_since {
                    Some(i) => end.min(i.saturating_add(self.hold_ns(c))),
                    None => end,
                }
            }
            (_, None) if self.force => now,
            (_, None) => self.next_timer(now),
        };
        Some(deadline)
    }

    fn note_withheld(&mut self, now: u64) {
        let now = now.max(self.last_now);
        let until = self.withheld_until(now);
        self.withheld.update(now, until);
        self.last_now = now;
    }

    fn end_turn(&mut self, c: usize, now: u64) {
        if let Some(t) = self.idle_since.take() {
            self.turn_idle_ns = self.turn_idle_ns.saturating_add(now.saturating_sub(t));
        }
        if self.policy.fair_queueing() {
            let mut l = self.turn_gpu_ns;
            if l == 0 && self.turn_dispatched > 0 {
                // No GPU time measured: charge wall-clock ownership.
                l = now.saturating_sub(self.turn_start);
            }
            // The GPU was held idle for this vGPU: charge that too.
            l = l.saturating_add(self.turn_idle_ns);
            let w = self.v.get(c).map_or(1, |g| g.weight);
            self.sfq.charge(c, l, w);
            if self.turn_dispatched > 0 {
                let slice = self.tun.us(Tunable::SfqSliceUs);
                let more = self.backlogged.get(c);
                self.sfq.note_turn(c, l, more, slice);
            }
            if !self.backlogged.get(c) {
                self.sfq.deactivate(c);
            }
        }
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
        let lim = self.throttle_limit();
        let on = lim != u64::MAX;
        let chosen = match self.policy {
            Policy::Tbs => {
                if self.tbs.target.is_none() {
                    self.tbs_schedule(now, false);
                }
                self.tbs.update_timeslice(prev, now);
                let t = self.tbs.target.take();
                self.tbs.switched(now);
                match t {
                    Some(Target::Vgpu(id)) => Some(id),
                    Some(Target::Idle) => None,
                    None => prev.filter(|&p| self.started.get(p)),
                }
            }
            Policy::Sfq => {
                let thr = &self.thr;
                let el = |id: usize| thr.usage(id) <= lim;
                self.sfq.pick(if on { Some(&el) } else { None })
            }
            Policy::Eevdf => {
                let thr = &self.thr;
                let el = |id: usize| thr.usage(id) <= lim;
                let v = &self.v;
                let weight = |i: usize| v.get(i).map_or(1, |g| g.weight);
                let slice = self.tun.us(Tunable::SfqSliceUs);
                self.sfq
                    .pick_eevdf(&weight, slice, if on { Some(&el) } else { None })
            }
            Policy::Vmcg => {
                let cfg = self.vmcg_cfg();
                let thr = &self.thr;
                let el = |id: usize| thr.usage(id) <= lim;
                self.vmcg.pick(now, &self.v, &self.backlogged, &cfg, &el)
            }
        };
        self.force = false;
        self.picks = self.picks.wrapping_add(1);
        if chosen != prev {
            self.switches = self.switches.wrapping_add(1);
        }
        self.current = chosen;
        self.turn_start = now;
        self.turn_gpu_ns = 0;
        self.turn_dispatched = 0;
        self.turn_idle_ns = 0;
        self.idle_since = None;
        let Some(id) = chosen else {
            self.turn_slice = 0;
            return Ok(Pick::Idle);
        };
        self.turn_slice = match self.policy {
            Policy::Tbs => self.tick_ns(),
            Policy::Sfq | Policy::Eevdf => self.tun.us(Tunable::SfqSliceUs),
            Policy::Vmcg => {
                self.vmcg.begin_turn();
                self.vmcg.slice_ns.get(id).copied().unwrap_or(0)
            }
        };
        Ok(Pick::Run {
            vgpu: id,
            slice_ns: self.turn_slice,
            switched: chosen != prev,
        })
    }

    /// The running vGPU, if any.
    pub fn current(&self) -> Option<usize> {
        self.current
    }
}
