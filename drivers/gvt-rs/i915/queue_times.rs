// SPDX-License-Identifier: GPL-2.0

//! When each vGPU queued its workloads, per engine: a fixed FIFO ring, so
//! that a dispatch reports its queueing latency to the engine. GVT-g tells
//! the provider of a queued workload and later of its dispatch, not when it
//! was queued; the provider keeps that itself.

use crate::gvt_core::sched::MAX_ENGINES;

/// Queue timestamps kept per vGPU and engine, for dispatch latency.
const QUEUE_TIMES: usize = 32;

/// Queue times of one vGPU's workloads, per engine (FIFO rings).
pub(super) struct QueueTimes {
    t: [[u64; QUEUE_TIMES]; MAX_ENGINES],
    head: [usize; MAX_ENGINES],
    len: [usize; MAX_ENGINES],
}

impl QueueTimes {
    pub(super) const EMPTY: Self = Self {
        t: [[0; QUEUE_TIMES]; MAX_ENGINES],
        head: [0; MAX_ENGINES],
        len: [0; MAX_ENGINES],
    };

    /// Records a queue time; a full ring drops it (its dispatch then
    /// reports no latency).
    pub(super) fn push(&mut self, e: usize, now: u64) {
        let (Some(head), Some(len), Some(ring)) =
            (self.head.get(e), self.len.get_mut(e), self.t.get_mut(e))
        else {
            return;
        };
        let Some(at) = head.checked_add(*len).filter(|_| *len < QUEUE_TIMES) else {
            return;
        };
        if let Some(slot) = ring.get_mut(at % QUEUE_TIMES) {
            *slot = now;
            *len = len.saturating_add(1);
        }
    }

    /// The oldest queue time of engine `e`, or `now` if none is known.
    pub(super) fn pop(&mut self, e: usize, now: u64) -> u64 {
        let (Some(head), Some(len), Some(ring)) =
            (self.head.get_mut(e), self.len.get_mut(e), self.t.get(e))
        else {
            return now;
        };
        if *len == 0 {
            return now;
        }
        let t = ring.get(*head).copied().unwrap_or(now);
        *head = head.saturating_add(1) % QUEUE_TIMES;
        *len = len.saturating_sub(1);
        t
    }
}
