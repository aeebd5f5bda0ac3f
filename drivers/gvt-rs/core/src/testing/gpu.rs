// SPDX-License-Identifier: GPL-2.0

//! The host model of a GPU provider: the engine's state as the kernel's
//! policy engine holds it, driven through the same engine logic
//! ([`crate::engine`]), with a provider that records what it was asked.
//!
//! The core's engine tests and `gvt-sim`'s scheduling simulator drive it;
//! each adds its own model of the hardware's timing (engines, queues,
//! completions) around it.

extern crate std;

use std::boxed::Box;
use std::cell::{
    Cell,
    RefCell, //
};
use std::vec::Vec;

use crate::engine::{
    ensure_resident,
    GpuConfig,
    Observer,
    Provider,
    VgpuTable, //
};
use crate::sched::Scheduler;
use crate::slots::{
    AllocatorKind,
    Move,
    PoolConfig,
    SlotPool, //
};
use crate::{
    Error,
    VgpuId, //
};

/// What the engine asked of the provider and told its observer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// [`Provider::load_gtt`].
    LoadGtt {
        /// The vGPU.
        id: VgpuId,
        /// The first slot of its range.
        start: u16,
        /// The first slot loaded.
        first: u16,
        /// Slots loaded.
        slots: u16,
    },
    /// [`Provider::load_low_gtt`].
    LoadLowGtt(VgpuId),
    /// [`Provider::relocate`].
    Relocate(Move),
    /// [`Observer::relocated`].
    Relocated(Move),
    /// [`Observer::switched`]: from, to.
    Switched(Option<VgpuId>, Option<VgpuId>),
    /// [`Observer::gtt_loaded`].
    GttLoaded {
        /// The vGPU.
        id: VgpuId,
        /// GTT entries loaded.
        entries: u64,
        /// A reload of the running vGPU, not a switch-in.
        reload: bool,
    },
    /// [`Observer::inconsistent`]: what the core refused.
    Inconsistent(&'static str),
}

/// A provider and observer that counts what it is asked and, when made
/// with [`Recorder::logging`], keeps every [`Event`] in order. The VM CPU
/// time it reports is set per vGPU in [`Recorder::cpu_ns`].
#[derive(Debug, Default)]
pub struct Recorder {
    log: Option<RefCell<Vec<Event>>>,
    /// VM CPU time of each vGPU, by id (none: not reported).
    pub cpu_ns: RefCell<Vec<Option<u64>>>,
    switches: Cell<u64>,
    last_switch: Cell<Option<(Option<VgpuId>, Option<VgpuId>)>>,
    gtt_entries: Cell<u64>,
    relocations: Cell<u64>,
    inconsistent: Cell<u64>,
}

impl Recorder {
    /// A recorder that counts only (for long simulations).
    pub fn counting() -> Self {
        Self::default()
    }

    /// A recorder that also keeps every event.
    pub fn logging() -> Self {
        Self {
            log: Some(RefCell::new(Vec::new())),
            ..Self::default()
        }
    }

    fn push(&self, e: Event) {
        if let Some(log) = &self.log {
            log.borrow_mut().push(e);
        }
    }

    /// The events since the last call (none unless logging).
    pub fn take(&self) -> Vec<Event> {
        self.log.as_ref().map(RefCell::take).unwrap_or_default()
    }

    /// Switches to a vGPU (not to the idle vGPU).
    pub fn switches(&self) -> u64 {
        self.switches.get()
    }

    /// GTT entries loaded, at switch-ins and reloads.
    pub fn gtt_entries(&self) -> u64 {
        self.gtt_entries.get()
    }

    /// Ranges moved.
    pub fn relocations(&self) -> u64 {
        self.relocations.get()
    }

    /// Calls of the core the engine expected to succeed that did not: a
    /// bug in the engine logic, always 0 in a correct run.
    pub fn inconsistencies(&self) -> u64 {
        self.inconsistent.get()
    }
}

impl Provider for Recorder {
    fn load_gtt(&self, id: VgpuId, start: u16, first: u16, slots: u16) {
        self.push(Event::LoadGtt {
            id,
            start,
            first,
            slots,
        });
    }

    fn load_low_gtt(&self, id: VgpuId) {
        self.push(Event::LoadLowGtt(id));
    }

    fn relocate(&self, m: &Move) {
        self.push(Event::Relocate(*m));
    }

    fn vm_cpu_ns(&self, id: VgpuId) -> Option<u64> {
        self.cpu_ns.borrow().get(usize::from(id)).copied().flatten()
    }
}

impl Observer for Recorder {
    fn relocated(&self, m: &Move) {
        self.relocations
            .set(self.relocations.get().saturating_add(1));
        self.push(Event::Relocated(*m));
    }

    fn switched(&self, prev: Option<VgpuId>, next: Option<VgpuId>, _slice_ns: u64) {
        if next.is_some() {
            self.switches.set(self.switches.get().saturating_add(1));
        }
        self.last_switch.set(Some((prev, next)));
        self.push(Event::Switched(prev, next));
    }

    fn gtt_loaded(&self, id: VgpuId, _high_slots: u16, entries: u64, reload: bool) {
        self.gtt_entries
            .set(self.gtt_entries.get().saturating_add(entries));
        self.push(Event::GttLoaded {
            id,
            entries,
            reload,
        });
    }

    fn inconsistent(&self, what: &'static str, _e: Error) {
        self.inconsistent
            .set(self.inconsistent.get().saturating_add(1));
        self.push(Event::Inconsistent(what));
    }
}

/// One GPU's engine state, as the kernel engine holds it under its two
/// locks, with a [`Recorder`] as its provider. The methods are the kernel
/// engine's calls of the same names, minus the locks and the clock.
pub struct Gpu<const V: usize, const S: usize> {
    /// The GPU's fixed properties.
    pub cfg: GpuConfig,
    /// The vGPUs.
    pub table: VgpuTable<V>,
    /// The scheduler.
    pub sched: Box<Scheduler<V>>,
    /// The slot pool.
    pub pool: Box<SlotPool<V, S>>,
    /// The provider.
    pub rec: Recorder,
}

impl<const V: usize, const S: usize> Gpu<V, S> {
    /// A GPU of `cfg` with `allocator`, and relocation as `cfg` allows.
    pub fn new(cfg: GpuConfig, allocator: AllocatorKind, rec: Recorder) -> Result<Self, Error> {
        let mut pool = Box::new(SlotPool::new(PoolConfig {
            slots: cfg.slots,
            low_entries: cfg.low_shared_entries,
            allocator,
        })?);
        pool.set_relocation(cfg.relocate);
        Ok(Self {
            cfg,
            table: VgpuTable::new(),
            sched: Box::new(Scheduler::new()),
            pool,
            rec,
        })
    }

    /// [`VgpuTable::place`].
    pub fn place(
        &mut self,
        high_mb: u32,
        low_mb: u32,
        weight: u32,
        now: u64,
    ) -> Result<VgpuId, Error> {
        self.table.place(
            &self.cfg,
            &mut self.pool,
            &self.rec,
            &self.rec,
            (high_mb, low_mb, weight),
            now,
        )
    }

    /// [`VgpuTable::attach`].
    pub fn attach(&mut self, id: VgpuId) -> Result<(), Error> {
        self.table.attach(&mut self.sched, id)
    }

    /// [`VgpuTable::detach`].
    pub fn detach(&mut self, id: VgpuId) -> Result<(), Error> {
        self.table.detach(&mut self.sched, id)
    }

    /// [`VgpuTable::unplace`].
    pub fn unplace(&mut self, id: VgpuId, now: u64) -> Result<(), Error> {
        self.table
            .unplace(&mut self.pool, &self.rec, &self.rec, id, now)
    }

    /// A vGPU with `high_mb` of high GM and no low GM is placed and
    /// attached, as the simulated GPU creates one.
    pub fn create(&mut self, high_mb: u32, weight: u32, now: u64) -> Result<VgpuId, Error> {
        let id = self.place(high_mb, 0, weight, now)?;
        if let Err(e) = self.attach(id) {
            self.unplace(id, now)?;
            return Err(e);
        }
        Ok(id)
    }

    /// [`VgpuTable::decide`], then the decision's load, as the kernel's
    /// `Engine::pick`.
    pub fn pick(&mut self, now: u64) -> Result<Option<VgpuId>, Error> {
        self.rec.last_switch.set(None);
        let d = self
            .table
            .decide(&mut self.sched, &mut self.pool, &self.rec, &self.rec, now)?;
        Ok(d.load(&mut self.pool, &self.rec, &self.rec))
    }

    /// The switch of the last [`Gpu::pick`], if it switched: from, to.
    pub fn last_switch(&self) -> Option<(Option<VgpuId>, Option<VgpuId>)> {
        self.rec.last_switch.get()
    }

    /// [`ensure_resident`].
    pub fn ensure_resident(&mut self, id: VgpuId, drained: bool) -> bool {
        ensure_resident(&mut self.pool, &self.rec, &self.rec, id, drained)
    }

    /// [`VgpuTable::available_mb`].
    pub fn available_mb(&self, high_mb: u32, low_mb: u32) -> u32 {
        self.table
            .available_mb(&self.cfg, &self.pool, high_mb, low_mb)
    }
}
