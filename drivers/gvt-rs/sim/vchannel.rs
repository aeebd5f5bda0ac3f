// SPDX-License-Identifier: GPL-2.0

//! V-Channels: each vGPU's FIFO of scanned workloads per engine, between
//! the ring scan and the simulated engine.

use super::{
    ring::Desc,
    QDEPTH, //
};
use crate::protocol::DESC_IRQ;
use kernel::prelude::*;

/// A scanned descriptor on its way through a V-Channel and an engine.
#[derive(Clone, Copy)]
pub(super) struct Workload {
    pub(super) seqno: u32,
    pub(super) duration_ns: u64,
    pub(super) queued_at: u64,
    /// Interrupt on completion.
    pub(super) irq: bool,
    /// The ring's generation when it was fetched ([`super::regs::Regs::epochs`]).
    pub(super) epoch: u32,
    /// Its index in the guest ring.
    pub(super) index: u32,
}

const NO_WORK: Workload = Workload {
    seqno: 0,
    duration_ns: 0,
    queued_at: 0,
    irq: false,
    epoch: 0,
    index: 0,
};

impl Workload {
    pub(super) fn new(d: &Desc, epoch: u32, index: u32) -> Self {
        Self {
            seqno: d.seqno,
            duration_ns: u64::from(d.duration_us) * 1000,
            queued_at: 0,
            irq: d.flags & DESC_IRQ != 0,
            epoch,
            index,
        }
    }
}

/// One V-Channel: a vGPU's FIFO of workloads for one engine.
pub(super) struct VChannel {
    items: [Workload; QDEPTH],
    head: usize,
    len: usize,
}

impl VChannel {
    pub(super) const EMPTY: VChannel = VChannel {
        items: [NO_WORK; QDEPTH],
        head: 0,
        len: 0,
    };

    pub(super) fn is_full(&self) -> bool {
        self.len >= QDEPTH
    }

    pub(super) fn push(&mut self, w: Workload) -> Result {
        if self.is_full() {
            return Err(EAGAIN);
        }
        let idx = (self.head + self.len) % QDEPTH;
        *self.items.get_mut(idx).ok_or(EINVAL)? = w;
        self.len += 1;
        Ok(())
    }

    pub(super) fn pop(&mut self) -> Option<Workload> {
        if self.len == 0 {
            return None;
        }
        let w = *self.items.get(self.head)?;
        self.head = (self.head + 1) % QDEPTH;
        self.len -= 1;
        Some(w)
    }

    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}
