// SPDX-License-Identifier: GPL-2.0

//! `tbs`: a faithful model of upstream i915 GVT-g's time-based scheduler.
//!
//! Mirrors `drivers/gpu/drm/i915/gvt/sched_policy.c` (Linux 7.3):
//!
//! * an hrtimer tick every `GVT_DEFAULT_TIME_SLICE` (1 ms) runs the
//!   scheduler; so does every workload submission (`intel_gvt_kick_schedule`);
//! * every `GVT_TS_BALANCE_PERIOD_MS` (100 ms) `gvt_balance_timeslice` runs
//!   one of `GVT_TS_BALANCE_STAGE_NUM` (10) stages: stage 0 sets
//!   `left_ts = allocated_ts = (100 ms / total_weight) * weight` (debt
//!   forgiven), the others add `allocated_ts` to `left_ts` (debt carried);
//!   `total_weight` sums *every started* vGPU, idle or not;
//! * the current vGPU is charged wall-clock ownership (`vgpu_update_timeslice`);
//! * `find_busy_vgpu` walks the LRU run queue and takes the first vGPU with a
//!   pending workload that is in its 2 s start-up priority window or has
//!   `left_ts > 0`; it moves to the LRU tail unless it ran on priority;
//!   nobody qualifying means the idle vGPU runs (not work-conserving);
//! * a started vGPU is added at the LRU head with `left_ts = 0`.
//!
//! Deviation: upstream's `stage_check` is a function-local `static` shared by
//! every GPU; here it is per scheduler instance.

use super::vchannel::Vgpu;
use super::{
    VgpuArray,
    VgpuId,
    VgpuSet, //
};

/// What the next switch should run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Vgpu(VgpuId),
    Idle,
}

/// TBS state for the started vGPUs of a GPU.
#[derive(Clone, Copy)]
pub(crate) struct Tbs {
    /// The LRU run queue: a doubly linked list through `prev` and `next`.
    prev: VgpuArray<Option<VgpuId>>,
    next: VgpuArray<Option<VgpuId>>,
    head: Option<VgpuId>,
    tail: Option<VgpuId>,
    on_list: VgpuSet,
    pub(crate) left_ts: VgpuArray<i64>,
    allocated_ts: VgpuArray<i64>,
    pri_sched: VgpuSet,
    pri_time: VgpuArray<u64>,
    sched_in_time: u64,
    expire_time: u64,
    stage_check: u64,
    pub(crate) next_tick: Option<u64>,
    /// Pending decision (`scheduler->next_vgpu`).
    pub(crate) target: Option<Target>,
}

impl Tbs {
    pub(crate) const fn new() -> Self {
        Self {
            prev: VgpuArray::filled(None),
            next: VgpuArray::filled(None),
            head: None,
            tail: None,
            on_list: VgpuSet::EMPTY,
            left_ts: VgpuArray::filled(0),
            allocated_ts: VgpuArray::filled(0),
            pri_sched: VgpuSet::EMPTY,
            pri_time: VgpuArray::filled(0),
            sched_in_time: 0,
            expire_time: 0,
            stage_check: 0,
            next_tick: None,
            target: None,
        }
    }

    fn list_del(&mut self, id: VgpuId) {
        if !self.on_list.contains(id) {
            return;
        }
        let p = self.prev[id].take();
        let n = self.next[id].take();
        match p {
            Some(p) => self.next[p] = n,
            None => self.head = n,
        }
        match n {
            Some(n) => self.prev[n] = p,
            None => self.tail = p,
        }
        self.on_list.set(id, false);
    }

    fn list_add_head(&mut self, id: VgpuId) {
        if self.on_list.contains(id) {
            return;
        }
        self.prev[id] = None;
        self.next[id] = self.head;
        match self.head {
            Some(h) => self.prev[h] = Some(id),
            None => self.tail = Some(id),
        }
        self.head = Some(id);
        self.on_list.set(id, true);
    }

    fn list_add_tail(&mut self, id: VgpuId) {
        if self.on_list.contains(id) {
            return;
        }
        self.next[id] = None;
        self.prev[id] = self.tail;
        match self.tail {
            Some(t) => self.next[t] = Some(id),
            None => self.head = Some(id),
        }
        self.tail = Some(id);
        self.on_list.set(id, true);
    }

    /// `tbs_sched_start_schedule`. A `restart` of a vGPU that ran before
    /// keeps its time-slice balance (debt included) and queues at the LRU
    /// tail, so that stopping and starting again is never a way to the
    /// front; upstream treats every start as new.
    pub(crate) fn start(
        &mut self,
        id: VgpuId,
        now: u64,
        boost_ns: u64,
        tick_ns: u64,
        restart: bool,
    ) {
        if self.on_list.contains(id) {
            return;
        }
        self.pri_time[id] = now.saturating_add(boost_ns);
        self.pri_sched.set(id, boost_ns > 0);
        if restart {
            self.list_add_tail(id);
        } else {
            self.left_ts[id] = 0;
            self.allocated_ts[id] = 0;
            self.list_add_head(id);
        }
        if self.next_tick.is_none() {
            self.next_tick = Some(now.saturating_add(tick_ns));
        }
    }

    /// `tbs_sched_stop_schedule`.
    pub(crate) fn stop(&mut self, id: VgpuId) {
        self.list_del(id);
        self.pri_sched.set(id, false);
        if self.target == Some(Target::Vgpu(id)) {
            self.target = None;
        }
        if self.head.is_none() {
            self.next_tick = None;
        }
    }

    /// `gvt_balance_timeslice`.
    fn balance(&mut self, v: &VgpuArray<Vgpu>, period_ns: u64, stages: u64) {
        let stage = self.stage_check.checked_rem(stages).unwrap_or(0);
        self.stage_check = self.stage_check.wrapping_add(1);
        if stage == 0 {
            let total: u64 = self
                .on_list
                .iter()
                .map(|i| u64::from(v[i].weight))
                .fold(0, u64::saturating_add);
            if total == 0 {
                return;
            }
            // Same rounding as upstream: ktime_divns(100ms, total) * weight.
            let unit = period_ns.checked_div(total).unwrap_or(0);
            for i in self.on_list.iter() {
                let w = u64::from(v[i].weight);
                let ts = unit.saturating_mul(w).min(i64::MAX as u64) as i64;
                self.allocated_ts[i] = ts;
                self.left_ts[i] = ts;
            }
        } else {
            for i in self.on_list.iter() {
                self.left_ts[i] = self.left_ts[i].saturating_add(self.allocated_ts[i]);
            }
        }
    }

    /// `vgpu_update_timeslice`: charges the current vGPU its wall-clock time.
    pub(crate) fn update_timeslice(&mut self, current: Option<VgpuId>, now: u64) {
        let Some(c) = current else {
            return;
        };
        let delta = now.saturating_sub(self.sched_in_time);
        self.left_ts[c] = self.left_ts[c].saturating_sub(delta.min(i64::MAX as u64) as i64);
        self.sched_in_time = now;
    }

    /// `find_busy_vgpu`; `eligible` is the optional usage throttle.
    fn find_busy(
        &mut self,
        now: u64,
        v: &VgpuArray<Vgpu>,
        eligible: &dyn Fn(VgpuId) -> bool,
    ) -> Option<VgpuId> {
        let mut i = self.head;
        while let Some(id) = i {
            i = self.next[id];
            if !v[id].backlogged() || !eligible(id) {
                continue;
            }
            if self.pri_sched.contains(id) {
                if now < self.pri_time[id] {
                    return Some(id);
                }
                self.pri_sched.set(id, false);
            }
            if self.left_ts[id] > 0 {
                return Some(id);
            }
        }
        None
    }

    /// `intel_gvt_schedule` + `tbs_sched_func`, minus the switch itself.
    ///
    /// Returns whether a switch is now requested.
    pub(crate) fn schedule(
        &mut self,
        now: u64,
        timer: bool,
        current: Option<VgpuId>,
        v: &VgpuArray<Vgpu>,
        (period_ns, stages): (u64, u64),
        eligible: &dyn Fn(VgpuId) -> bool,
    ) -> bool {
        if timer && now >= self.expire_time {
            self.balance(v, period_ns, stages);
            self.expire_time = now.saturating_add(period_ns);
        }
        self.update_timeslice(current, now);
        if self.head.is_none() || self.target.is_some() {
            return self.target.is_some();
        }
        let t = match self.find_busy(now, v, eligible) {
            Some(id) => {
                if !self.pri_sched.contains(id) {
                    self.list_del(id);
                    self.list_add_tail(id);
                }
                Target::Vgpu(id)
            }
            None => Target::Idle,
        };
        let cur = match current {
            Some(c) => Target::Vgpu(c),
            None => Target::Idle,
        };
        // try_to_schedule_next_vgpu: same as current means no switch.
        self.target = if t == cur { None } else { Some(t) };
        self.target.is_some()
    }

    /// The started vGPU with nothing queued and the most time slice left
    /// (the lowest id of equals), if any has some: whose share keeps the
    /// GPU idle while the vGPUs with work wait for the next balance.
    pub(crate) fn reserved_for(&self, started: &VgpuSet, backlogged: &VgpuSet) -> Option<VgpuId> {
        let mut best: Option<(VgpuId, i64)> = None;
        for id in started.and_not(backlogged).iter() {
            let left = self.left_ts[id];
            if left > 0 && best.is_none_or(|(_, b)| left > b) {
                best = Some((id, left));
            }
        }
        best.map(|(id, _)| id)
    }

    /// Whether a tick at `now` could find a vGPU of `backlogged` to run:
    /// one on priority or with time slice left.
    pub(crate) fn could_run(&self, backlogged: &VgpuSet, now: u64) -> bool {
        backlogged.iter().any(|id| {
            (self.pri_sched.contains(id) && now < self.pri_time[id]) || self.left_ts[id] > 0
        })
    }

    /// The first tick, of those every `tick_ns` from `tick`, at which the
    /// time slices are balanced again.
    pub(crate) fn balance_tick(&self, tick: u64, tick_ns: u64) -> u64 {
        if tick >= self.expire_time || tick_ns == 0 {
            return tick.max(self.expire_time);
        }
        let ticks = self.expire_time.saturating_sub(tick).div_ceil(tick_ns);
        tick.saturating_add(ticks.saturating_mul(tick_ns))
    }

    /// The switch happened at `now` (`sched_in_time` of the new vGPU).
    pub(crate) fn switched(&mut self, now: u64) {
        self.sched_in_time = now;
        self.target = None;
    }

    /// Forgets every vGPU (policy change).
    pub(crate) fn reset(&mut self) {
        *self = Self::new();
    }
}
