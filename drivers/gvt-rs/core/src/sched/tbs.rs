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

use super::bitmap::Bitmap;
use super::vchannel::Vgpu;

const NIL: u16 = u16::MAX;

/// What the next switch should run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Vgpu(usize),
    Idle,
}

/// TBS state for up to `N` vGPUs.
#[derive(Clone, Copy)]
pub(crate) struct Tbs<const N: usize> {
    prev: [u16; N],
    next: [u16; N],
    head: u16,
    tail: u16,
    on_list: Bitmap,
    pub(crate) left_ts: [i64; N],
    allocated_ts: [i64; N],
    pri_sched: Bitmap,
    pri_time: [u64; N],
    sched_in_time: u64,
    expire_time: u64,
    stage_check: u64,
    pub(crate) next_tick: Option<u64>,
    /// Pending decision (`scheduler->next_vgpu`).
    pub(crate) target: Option<Target>,
}

impl<const N: usize> Tbs<N> {
    pub(crate) const fn new() -> Self {
        Self {
            prev: [NIL; N],
            next: [NIL; N],
            head: NIL,
            tail: NIL,
            on_list: Bitmap::EMPTY,
            left_ts: [0; N],
            allocated_ts: [0; N],
            pri_sched: Bitmap::EMPTY,
            pri_time: [0; N],
            sched_in_time: 0,
            expire_time: 0,
            stage_check: 0,
            next_tick: None,
            target: None,
        }
    }

    fn link_of(arr: &[u16; N], i: u16) -> u16 {
        arr.get(i as usize).copied().unwrap_or(NIL)
    }

    fn set_link(arr: &mut [u16; N], i: u16, v: u16) {
        // Only ids on the list (below N) are linked: never NIL.
        if let Some(x) = arr.get_mut(i as usize) {
            *x = v;
        }
    }

    fn list_del(&mut self, id: usize) {
        if !self.on_list.get(id) {
            return;
        }
        let i = id as u16;
        let p = Self::link_of(&self.prev, i);
        let n = Self::link_of(&self.next, i);
        if p == NIL {
            self.head = n;
        } else {
            Self::set_link(&mut self.next, p, n);
        }
        if n == NIL {
            self.tail = p;
        } else {
            Self::set_link(&mut self.prev, n, p);
        }
        Self::set_link(&mut self.prev, i, NIL);
        Self::set_link(&mut self.next, i, NIL);
        self.on_list.set(id, false);
    }

    fn list_add_head(&mut self, id: usize) {
        if id >= N || self.on_list.get(id) {
            return;
        }
        let i = id as u16;
        Self::set_link(&mut self.prev, i, NIL);
        Self::set_link(&mut self.next, i, self.head);
        if self.head == NIL {
            self.tail = i;
        } else {
            Self::set_link(&mut self.prev, self.head, i);
        }
        self.head = i;
        self.on_list.set(id, true);
    }

    fn list_add_tail(&mut self, id: usize) {
        if id >= N || self.on_list.get(id) {
            return;
        }
        let i = id as u16;
        Self::set_link(&mut self.next, i, NIL);
        Self::set_link(&mut self.prev, i, self.tail);
        if self.tail == NIL {
            self.head = i;
        } else {
            Self::set_link(&mut self.next, self.tail, i);
        }
        self.tail = i;
        self.on_list.set(id, true);
    }

    /// `tbs_sched_start_schedule`. A `restart` of a vGPU that ran before
    /// keeps its time-slice balance (debt included) and queues at the LRU
    /// tail, so that stopping and starting again is never a way to the
    /// front; upstream treats every start as new.
    pub(crate) fn start(
        &mut self,
        id: usize,
        now: u64,
        boost_ns: u64,
        tick_ns: u64,
        restart: bool,
    ) {
        if self.on_list.get(id) {
            return;
        }
        // The scheduler starts only ids it validated (below N).
        if let Some(t) = self.pri_time.get_mut(id) {
            *t = now.saturating_add(boost_ns);
        }
        self.pri_sched.set(id, boost_ns > 0);
        if restart {
            self.list_add_tail(id);
        } else {
            if let Some(l) = self.left_ts.get_mut(id) {
                *l = 0;
            }
            if let Some(a) = self.allocated_ts.get_mut(id) {
                *a = 0;
            }
            self.list_add_head(id);
        }
        if self.next_tick.is_none() {
            self.next_tick = Some(now.saturating_add(tick_ns));
        }
    }

    /// `tbs_sched_stop_schedule`.
    pub(crate) fn stop(&mut self, id: usize) {
        self.list_del(id);
        self.pri_sched.set(id, false);
        if self.target == Some(Target::Vgpu(id)) {
            self.target = None;
        }
        if self.head == NIL {
            self.next_tick = None;
        }
    }

    /// `gvt_balance_timeslice`.
    fn balance(&mut self, v: &[Vgpu; N], period_ns: u64, stages: u64) {
        let stage = self.stage_check.checked_rem(stages).unwrap_or(0);
        self.stage_check = self.stage_check.wrapping_add(1);
        if stage == 0 {
            let total: u64 = self
                .on_list
                .iter()
                .filter_map(|i| v.get(i))
                .map(|g| u64::from(g.weight))
                .fold(0, u64::saturating_add);
            if total == 0 {
                return;
            }
            // Same rounding as upstream: ktime_divns(100ms, total) * weight.
            let unit = period_ns.checked_div(total).unwrap_or(0);
            // Ids on the list are below N (`list_add_*` check).
            for i in self.on_list.iter() {
                let w = v.get(i).map_or(0, |g| u64::from(g.weight));
                let ts = unit.saturating_mul(w).min(i64::MAX as u64) as i64;
                if let Some(a) = self.allocated_ts.get_mut(i) {
                    *a = ts;
                }
                if let Some(l) = self.left_ts.get_mut(i) {
                    *l = ts;
                }
            }
        } else {
            // Ids on the list are below N (`list_add_*` check).
            for i in self.on_list.iter() {
                let a = self.allocated_ts.get(i).copied().unwrap_or(0);
                if let Some(l) = self.left_ts.get_mut(i) {
                    *l = l.saturating_add(a);
                }
            }
        }
    }

    /// `vgpu_update_timeslice`: charges the current vGPU its wall-clock time.
    pub(crate) fn update_timeslice(&mut self, current: Option<usize>, now: u64) {
        let Some(c) = current else {
            return;
        };
        let delta = now.saturating_sub(self.sched_in_time);
        // The current vGPU is a validated id (below N).
        if let Some(l) = self.left_ts.get_mut(c) {
            *l = l.saturating_sub(delta.min(i64::MAX as u64) as i64);
        }
        self.sched_in_time = now;
    }

    /// `find_busy_vgpu`; `eligible` is the optional usage throttle.
    fn find_busy(
        &mut self,
        now: u64,
        v: &[Vgpu; N],
        eligible: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut i = self.head;
        let mut guard = 0usize;
        while i != NIL && guard <= N {
            guard = guard.saturating_add(1);
            let id = i as usize;
            i = Self::link_of(&self.next, i);
            let busy = v.get(id).is_some_and(|g| g.backlogged());
            if !busy || !eligible(id) {
                continue;
            }
            if self.pri_sched.get(id) {
                if now < self.pri_time.get(id).copied().unwrap_or(0) {
                    return Some(id);
                }
                self.pri_sched.set(id, false);
            }
            if self.left_ts.get(id).copied().unwrap_or(0) > 0 {
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
        current: Option<usize>,
        v: &[Vgpu; N],
        (period_ns, stages): (u64, u64),
        eligible: &dyn Fn(usize) -> bool,
    ) -> bool {
        if timer && now >= self.expire_time {
            self.balance(v, period_ns, stages);
            self.expire_time = now.saturating_add(period_ns);
        }
        self.update_timeslice(current, now);
        if self.head == NIL || self.target.is_some() {
            return self.target.is_some();
        }
        let t = match self.find_busy(now, v, eligible) {
            Some(id) => {
                if !self.pri_sched.get(id) {
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
    pub(crate) fn reserved_for(&self, started: &Bitmap, backlogged: &Bitmap) -> Option<usize> {
        let mut best: Option<(usize, i64)> = None;
        for id in started.iter().filter(|&id| !backlogged.get(id)) {
            let left = self.left_ts.get(id).copied().unwrap_or(0);
            if left > 0 && best.is_none_or(|(_, b)| left > b) {
                best = Some((id, left));
            }
        }
        best.map(|(id, _)| id)
    }

    /// Whether a tick at `now` could find a vGPU of `backlogged` to run:
    /// one on priority or with time slice left.
    pub(crate) fn could_run(&self, backlogged: &Bitmap, now: u64) -> bool {
        backlogged.iter().any(|id| {
            (self.pri_sched.get(id) && now < self.pri_time.get(id).copied().unwrap_or(0))
                || self.left_ts.get(id).copied().unwrap_or(0) > 0
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
