// SPDX-License-Identifier: GPL-2.0

//! `tbs`: upstream GVT-g's time-based scheduler (`Tbs`, in `../tbs.rs`),
//! driven by a periodic tick rather than by turns.

use super::{
    super::{
        tbs::Target,
        Scheduler,
        Tunable, //
        VgpuId,
    },
    PolicyOps, //
};

/// The ops of `tbs`.
pub(super) struct TbsOps;

/// Upstream's `tbs_sched_func`: balance, then look for a vGPU to switch
/// to; `timer` when called from the tick.
fn schedule<const N: usize>(s: &mut Scheduler<N>, now: u64, timer: bool) {
    let lim = s.throttle_limit();
    let thr = &s.thr;
    let el = |id: VgpuId| thr.usage(id) <= lim;
    let cfg = (
        s.tun.ms(Tunable::TbsBalanceMs),
        s.tun.get(Tunable::TbsStages),
    );
    s.tbs.schedule(now, timer, s.current, &s.v, cfg, &el);
}

impl<const N: usize> PolicyOps<N> for TbsOps {
    fn switched_to(&self, s: &mut Scheduler<N>, now: u64) {
        let tick = s.tick_ns();
        for id in s.started.iter() {
            s.tbs.start(id, now, 0, tick, false);
        }
    }

    fn started(&self, s: &mut Scheduler<N>, id: VgpuId, restart: bool, now: u64) {
        // A restart (reset loop, reopen) gets no start boost and keeps its
        // time-slice debt: upstream's gift to a new VM must not be
        // something a guest can ask for again.
        let boost = if restart {
            0
        } else {
            s.tun.ms(Tunable::TbsStartBoostMs)
        };
        let tick = s.tick_ns();
        s.tbs.start(id, now, boost, tick, restart);
    }

    fn queued(&self, s: &mut Scheduler<N>, now: u64) {
        schedule(s, now, false);
    }

    fn tick(&self, s: &mut Scheduler<N>, now: u64) {
        if let Some(t) = s.tbs.next_tick {
            if now >= t {
                schedule(s, now, true);
                s.tbs.next_tick = Some(now.saturating_add(s.tick_ns()));
            }
        }
    }

    fn turn_over(&self, s: &Scheduler<N>, _c: VgpuId, _now: u64) -> bool {
        s.tbs.target.is_some()
    }

    fn has_candidate(&self, s: &Scheduler<N>) -> bool {
        s.tbs.target.is_some()
    }

    fn next_timer(&self, s: &Scheduler<N>, now: u64, win: u64) -> u64 {
        match s.tbs.next_tick {
            // A due tick is returned as `now`: tick() always advances it.
            Some(t) => t.max(now).min(win),
            None => win,
        }
    }

    /// A decided switch is due at once. Otherwise the GPU idles until a
    /// tick can find a vGPU with work to run: the next tick if one is on
    /// priority or has time slice left (or the throttle, which a tick
    /// re-evaluates, is on), else the tick that balances the time slices.
    /// The ticks between those would decide the same: a tick that fires
    /// late there costs no GPU time, so it is not overdue.
    fn withheld_deadline(&self, s: &Scheduler<N>, now: u64) -> u64 {
        if s.tbs.target.is_some() {
            return now;
        }
        let Some(tick) = s.tbs.next_tick else {
            return now;
        };
        if s.tun.get(Tunable::Throttle) == 1 || s.tbs.could_run(&s.backlogged, tick) {
            tick
        } else {
            s.tbs.balance_tick(tick, s.tick_ns())
        }
    }

    /// The idle vGPU runs while the vGPUs with work have used their time
    /// slices: the GPU is kept for the share of a vGPU with slice left
    /// and nothing queued.
    fn withheld_for(&self, s: &Scheduler<N>) -> Option<VgpuId> {
        s.current
            .or_else(|| s.tbs.reserved_for(&s.started, &s.backlogged))
    }

    fn pick_next(&self, s: &mut Scheduler<N>, prev: Option<VgpuId>, now: u64) -> Option<VgpuId> {
        if s.tbs.target.is_none() {
            schedule(s, now, false);
        }
        s.tbs.update_timeslice(prev, now);
        let t = s.tbs.target.take();
        s.tbs.switched(now);
        match t {
            Some(Target::Vgpu(id)) => Some(id),
            Some(Target::Idle) => None,
            None => prev.filter(|&p| s.started.contains(p)),
        }
    }

    fn begin_turn(&self, s: &mut Scheduler<N>, _id: VgpuId) -> u64 {
        s.tick_ns()
    }
}
