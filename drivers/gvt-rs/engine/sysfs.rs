// SPDX-License-Identifier: GPL-2.0

//! The sysfs ABI of the engine, the same for every provider:
//!
//! * per GPU, `/sys/kernel/gvt_rs/<gpu>/`: policy, scheduler tunables, slot
//!   allocator and its tunables, fairness figures and event counters;
//! * per vGPU, `<mdev device>/gvt_rs/`: weight, PCI-E bandwidth and
//!   statistics.
//!
//! Documented in `Documentation/ABI/testing/sysfs-kernel-gvt_rs` and
//! `sysfs-bus-mdev-devices-gvt_rs`. A GPU's directory is one table,
//! [`GPU_FILES`]: a line per file with its name, its mode and the knob it
//! shows; one `show` and one `store` dispatch on the knob. A vGPU's files
//! are one table too, [`vgpu_files!`], from which a provider whose mdev
//! driver owns its vGPUs' devices (the simulated GPU) declares the `gvt_rs`
//! attribute group of its driver's `dev_groups` ([`vgpu_group!`]: each file
//! a device attribute whose ID is its [`VgpuKnob`]), and the i915 provider,
//! whose vGPUs' devices are KVMGT's, a kobject directory ([`vgpu_dir`]).
//! Stores parse strictly and change nothing on error; ranges are checked
//! where the values live, in the core.
//!
//! Who may read what: the figures that move with what tenants do, per vGPU
//! and GPU-wide (with two tenants, a GPU's count minus one's own is the
//! other's), are root's only ([`tenant_figure`], mode 0400); what the
//! administrator set and what a vGPU's creation fixed is everyone's. See
//! "Who can read what" in `Documentation/gvt-rs/admin-guide.rst`.

use super::{
    Engine,
    Pool,
    VgpuId, //
};
use crate::gvt_core::{
    sched::{
        Policy,
        Tunable, //
    },
    slots::{
        AllocatorKind,
        Tunables, //
    },
    Error as CoreError, //
};
use core::sync::atomic::Ordering;
use kernel::{
    fmt::{
        self,
        Display, //
    },
    prelude::*,
    sync::Arc,
    sysfs::{
        self,
        kobject::{
            Attribute,
            AttributeGroup,
            AttributeOperations,
            Buffer,
            Dir,
            Parent, //
        },
        Input, //
    }, //
};

/// The data behind a GPU's directory.
pub struct GpuDir {
    /// The engine shown.
    pub engine: Arc<Engine>,
}

/// What a file of a GPU's directory is.
#[derive(Clone, Copy)]
pub enum GpuKnob {
    /// The scheduling policy, a choice list.
    Policy,
    /// A scheduler tunable (unit in the file name, range in the core).
    Sched(Tunable),
    /// The slot allocator, a choice list.
    Allocator,
    /// A tunable of the slot allocator.
    Slots(SlotTunable),
    /// Whether allocators may move placed vGPUs.
    Relocation,
    /// A read-only figure.
    Stat(GpuStat),
}

/// A tunable of the slot allocator (`u32`, range checked by the pool).
#[derive(Clone, Copy)]
pub enum SlotTunable {
    /// Utilization sample period, ms.
    SamplePeriodMs,
    /// Utilization window, ms.
    UtilWindowMs,
    /// Idle time after which a vGPU's slots may be shared, ms.
    IdleThresholdMs,
    /// Period of `cost`'s re-placement, ms.
    ReplacePeriodMs,
    /// `cost`'s penalty for moving a vGPU, percent of its slots.
    MovePenaltyPct,
}

impl SlotTunable {
    fn get(self, t: &Tunables) -> u32 {
        match self {
            Self::SamplePeriodMs => t.sample_period_ms(),
            Self::UtilWindowMs => t.util_window_ms(),
            Self::IdleThresholdMs => t.idle_threshold_ms(),
            Self::ReplacePeriodMs => t.replace_period_ms(),
            Self::MovePenaltyPct => t.move_penalty_pct(),
        }
    }

    fn set(self, p: &mut Pool, v: u32) -> Result<(), CoreError> {
        match self {
            Self::SamplePeriodMs => p.set_sample_period_ms(v),
            Self::UtilWindowMs => p.set_util_window_ms(v),
            Self::IdleThresholdMs => p.set_idle_threshold_ms(v),
            Self::ReplacePeriodMs => p.set_replace_period_ms(v),
            Self::MovePenaltyPct => p.set_move_penalty_pct(v),
        }
    }
}

/// A read-only figure of a GPU.
#[derive(Clone, Copy)]
pub enum GpuStat {
    /// VMCG's fairness lambda, ppm.
    LambdaPpm,
    /// Min/max share ratio, ppm.
    MinMaxPpm,
    /// Jain's fairness index, ppm.
    JainPpm,
    /// Active vGPUs in the fairness window.
    Active,
    /// Scheduling decisions.
    Picks,
    /// Time spent deciding, with the GPU's scheduling locks held, ns.
    PickNs,
    /// Switches to another vGPU.
    Switches,
    /// GPU time the policy left idle while work waited, ns.
    WithheldNs,
    /// GPU time left idle while work waited past a decision's deadline, ns.
    OverdueNs,
    /// `vmcg` credit rounds.
    Rounds,
    /// Workloads on the engines.
    Inflight,
    /// Engines of the GPU.
    Engines,
    /// vGPUs of the GPU.
    Vgpus,
    /// Graphics memory slots.
    Slots,
    /// Slots shared by more than one vGPU.
    SharedSlots,
    /// GTT entries copied.
    GttEntriesCopied,
    /// Event counters.
    Event(Event),
    /// The running vGPU, or `idle`.
    CurrentVgpu,
    /// The vGPU co-scheduled with it, or `none`.
    CoscheduleVgpu,
}

/// An event counter of a GPU.
#[derive(Clone, Copy)]
pub enum Event {
    /// Workloads queued.
    Queued,
    /// Workloads dispatched.
    Dispatched,
    /// Workloads completed.
    Completed,
    /// Switches.
    Switches,
    /// Relocations.
    Relocations,
    /// GTT reloads.
    GttReloads,
}

/// A scheduler tunable: read-write.
const fn sched(name: &'static CStr, t: Tunable) -> Attribute<GpuDir> {
    Attribute::read_write(name, GpuKnob::Sched(t))
}

/// A slot allocator tunable: read-write.
const fn slots(name: &'static CStr, t: SlotTunable) -> Attribute<GpuDir> {
    Attribute::read_write(name, GpuKnob::Slots(t))
}

/// A file that shows what tenants do, which other host users must not watch:
/// root only (mode 0400).
const fn tenant_figure<T: AttributeOperations>(name: &'static CStr, knob: T::Knob) -> Attribute<T> {
    Attribute::admin_read_only(name, knob)
}

/// A figure of the GPU that moves with what its tenants do: root only.
const fn gpu_stat(name: &'static CStr, s: GpuStat) -> Attribute<GpuDir> {
    tenant_figure(name, GpuKnob::Stat(s))
}

/// A figure of the GPU fixed when it was set up: everyone's.
const fn gpu_fact(name: &'static CStr, s: GpuStat) -> Attribute<GpuDir> {
    Attribute::read_only(name, GpuKnob::Stat(s))
}

/// Every file of a GPU's directory.
pub static GPU_FILES: AttributeGroup<GpuDir, 52> = AttributeGroup::new(
    &GPU_FILES,
    [
        Attribute::read_write(c"policy", GpuKnob::Policy),
        sched(c"tbs_tick_us", Tunable::TbsTickUs),
        sched(c"tbs_balance_ms", Tunable::TbsBalanceMs),
        sched(c"tbs_stages", Tunable::TbsStages),
        sched(c"tbs_start_boost_ms", Tunable::TbsStartBoostMs),
        sched(c"slice_ceiling_us", Tunable::VmcgSliceCeilingUs),
        sched(c"slice_min_us", Tunable::VmcgMinSliceUs),
        sched(c"credit_pool", Tunable::VmcgCreditPool),
        sched(c"dispatch_batch", Tunable::VmcgBatch),
        sched(c"pcie_link_mbps", Tunable::VmcgLinkMbps),
        sched(c"gm_total_mb", Tunable::VmcgGmTotalMb),
        sched(c"sfq_slice_us", Tunable::SfqSliceUs),
        sched(c"sfq_wake_keeps_debt", Tunable::SfqWakeMaxVf),
        sched(c"sfq_wake_preempt", Tunable::SfqWakePreempt),
        sched(c"throttle", Tunable::Throttle),
        sched(c"throttle_factor_pct", Tunable::ThrottleFactorPct),
        sched(c"fairness_window_ms", Tunable::WindowMs),
        sched(c"idle_threshold_us", Tunable::IdleThresholdUs),
        sched(c"interactive_calls", Tunable::InteractiveCalls),
        sched(c"interactive_gap_us", Tunable::InteractiveGapUs),
        sched(c"anticipate_us", Tunable::AnticipateUs),
        Attribute::read_write(c"gm_allocator", GpuKnob::Allocator),
        slots(c"gm_sample_period_ms", SlotTunable::SamplePeriodMs),
        slots(c"gm_util_window_ms", SlotTunable::UtilWindowMs),
        slots(c"gm_idle_threshold_ms", SlotTunable::IdleThresholdMs),
        slots(c"gm_replace_period_ms", SlotTunable::ReplacePeriodMs),
        slots(c"gm_move_penalty_pct", SlotTunable::MovePenaltyPct),
        Attribute::read_write(c"gm_relocation", GpuKnob::Relocation),
        gpu_stat(c"fairness_lambda_ppm", GpuStat::LambdaPpm),
        gpu_stat(c"fairness_min_max_ppm", GpuStat::MinMaxPpm),
        gpu_stat(c"fairness_jain_ppm", GpuStat::JainPpm),
        gpu_stat(c"fairness_active", GpuStat::Active),
        gpu_stat(c"picks", GpuStat::Picks),
        gpu_stat(c"pick_ns", GpuStat::PickNs),
        gpu_stat(c"switches", GpuStat::Switches),
        gpu_stat(c"withheld_ns", GpuStat::WithheldNs),
        gpu_stat(c"overdue_ns", GpuStat::OverdueNs),
        gpu_stat(c"vmcg_rounds", GpuStat::Rounds),
        gpu_stat(c"inflight", GpuStat::Inflight),
        gpu_fact(c"engines", GpuStat::Engines),
        gpu_fact(c"vgpus", GpuStat::Vgpus),
        gpu_fact(c"gm_slots", GpuStat::Slots),
        gpu_stat(c"gm_shared_slots", GpuStat::SharedSlots),
        gpu_stat(c"gtt_entries_copied", GpuStat::GttEntriesCopied),
        gpu_stat(c"events_queued", GpuStat::Event(Event::Queued)),
        gpu_stat(c"events_dispatched", GpuStat::Event(Event::Dispatched)),
        gpu_stat(c"events_completed", GpuStat::Event(Event::Completed)),
        gpu_stat(c"events_switches", GpuStat::Event(Event::Switches)),
        gpu_stat(c"events_relocations", GpuStat::Event(Event::Relocations)),
        gpu_stat(c"events_gtt_reloads", GpuStat::Event(Event::GttReloads)),
        gpu_stat(c"current_vgpu", GpuStat::CurrentVgpu),
        gpu_stat(c"coschedule_vgpu", GpuStat::CoscheduleVgpu),
    ],
);

const POLICY_NAMES: [&str; 4] = [
    Policy::ALL[0].name(),
    Policy::ALL[1].name(),
    Policy::ALL[2].name(),
    Policy::ALL[3].name(),
];

const ALLOC_NAMES: [&str; 5] = [
    AllocatorKind::ALL[0].name(),
    AllocatorKind::ALL[1].name(),
    AllocatorKind::ALL[2].name(),
    AllocatorKind::ALL[3].name(),
    AllocatorKind::ALL[4].name(),
];

/// One value and a newline, the format of every numeric file.
fn line(w: &mut impl fmt::Write, v: impl Display) -> Result {
    w.write_fmt(fmt!("{v}\n")).map_err(|_| EFBIG)
}

/// A vGPU id, or the word for none.
fn vgpu_or(buf: &mut Buffer<'_>, id: Option<VgpuId>, none: &str) -> Result {
    match id {
        Some(id) => line(buf, id),
        None => line(buf, none),
    }
}

impl GpuStat {
    fn show(self, e: &Engine, buf: &mut Buffer<'_>) -> Result {
        match self {
            Self::LambdaPpm => line(buf, e.fairness().lambda_ppm),
            Self::MinMaxPpm => line(buf, e.fairness().min_max_ppm),
            Self::JainPpm => line(buf, e.fairness().jain_ppm),
            Self::Active => line(buf, e.fairness().active),
            Self::Picks => line(buf, e.gpu_stats().picks),
            Self::PickNs => line(buf, e.counters.pick_ns.load(Ordering::Relaxed)),
            Self::Switches => line(buf, e.gpu_stats().switches),
            Self::WithheldNs => line(buf, e.gpu_stats().withheld_ns),
            Self::OverdueNs => line(buf, e.gpu_stats().overdue_ns),
            Self::Rounds => line(buf, e.gpu_stats().rounds),
            Self::Inflight => line(buf, e.gpu_stats().inflight),
            Self::Engines => line(buf, e.config().engines),
            Self::Vgpus => line(buf, e.vgpus()),
            Self::Slots => line(buf, e.with_pool(|p| p.slots())),
            Self::SharedSlots => line(buf, e.with_pool(|p| p.shared_slots())),
            Self::GttEntriesCopied => line(buf, e.with_pool(|p| p.totals().entries())),
            Self::Event(ev) => {
                let c = &e.counters;
                let counter = match ev {
                    Event::Queued => &c.queued,
                    Event::Dispatched => &c.dispatched,
                    Event::Completed => &c.completed,
                    Event::Switches => &c.switches,
                    Event::Relocations => &c.relocations,
                    Event::GttReloads => &c.reloads,
                };
                line(buf, counter.load(Ordering::Relaxed))
            }
            Self::CurrentVgpu => vgpu_or(buf, e.current(), "idle"),
            Self::CoscheduleVgpu => vgpu_or(buf, e.coschedule(), "none"),
        }
    }
}

impl AttributeOperations for GpuDir {
    type Knob = GpuKnob;

    fn show(&self, knob: &GpuKnob, buf: &mut Buffer<'_>) -> Result {
        let e = &self.engine;
        match *knob {
            GpuKnob::Policy => {
                let cur = e.policy();
                let idx = Policy::ALL.iter().position(|p| *p == cur).unwrap_or(0);
                buf.emit_choices(&POLICY_NAMES, idx)
            }
            GpuKnob::Sched(t) => line(buf, e.tunable(t)),
            GpuKnob::Allocator => {
                let cur = e.with_pool(|p| p.allocator());
                let idx = AllocatorKind::ALL
                    .iter()
                    .position(|k| *k == cur)
                    .unwrap_or(0);
                buf.emit_choices(&ALLOC_NAMES, idx)
            }
            GpuKnob::Slots(t) => line(buf, e.with_pool(|p| t.get(p.tunables()))),
            GpuKnob::Relocation => line(buf, u8::from(e.with_pool(|p| p.tunables().relocation()))),
            GpuKnob::Stat(s) => s.show(e, buf),
        }
    }

    fn store(&self, knob: &GpuKnob, input: &Input<'_>) -> Result {
        let e = &self.engine;
        match *knob {
            GpuKnob::Policy => {
                let idx = sysfs::match_choice(input, &POLICY_NAMES)?;
                e.set_policy(*Policy::ALL.get(idx).ok_or(EINVAL)?)
            }
            GpuKnob::Sched(t) => e.set_tunable(t, sysfs::parse_uint(input)?),
            GpuKnob::Allocator => {
                let idx = sysfs::match_choice(input, &ALLOC_NAMES)?;
                let k = *AllocatorKind::ALL.get(idx).ok_or(EINVAL)?;
                e.with_pool_mut(|p| p.set_allocator(k))
            }
            GpuKnob::Slots(t) => {
                let v = sysfs::parse_uint(input)?;
                e.with_pool_mut(|p| t.set(p, v))
            }
            GpuKnob::Relocation => e.set_relocation(sysfs::parse_bool(input)?),
            // Read-only: `sysfs` does not call `store` for these.
            GpuKnob::Stat(_) => Err(EIO),
        }
    }
}

/// Creates `<parent>/<engine name>/` for a GPU.
pub fn gpu_dir(parent: Parent<'_>, engine: Arc<Engine>) -> Result<Dir<GpuDir>> {
    let name: &CStr = engine.name();
    Dir::new(
        name,
        parent,
        GpuDir {
            engine: engine.clone(),
        },
        &GPU_FILES,
    )
}

// ---- per vGPU ---------------------------------------------------------------

/// Mode of a file everyone reads: what the administrator set or the vGPU's
/// creation fixed.
pub const RO: u16 = sysfs::RO;
/// Mode of a setting: everyone reads, root writes.
pub const RW: u16 = sysfs::RW;
/// Mode of a figure that shows what a tenant does, which other host users
/// must not watch: root only ([`tenant_figure`]).
pub const TENANT: u16 = sysfs::ADMIN_RO;

/// A file of a vGPU's `gvt_rs/` directory. Its value is the file's `ID` in
/// the attribute group ([`vgpu_files!`]).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum VgpuKnob {
    /// The vGPU's id in its engine.
    VgpuId,
    /// Its scheduling weight.
    Weight,
    /// The weight of its type.
    TypeWeight,
    /// Its PCI-E bandwidth, MB/s.
    Bandwidth,
    /// `busy_ns` of its [`VgpuStats`](crate::gvt_core::sched::VgpuStats).
    BusyNs,
    /// `occupied_ns`.
    OccupiedNs,
    /// `contended_ns`.
    ContendedNs,
    /// `share_ppm`.
    SharePpm,
    /// `credits`.
    Credits,
    /// `slice_ns`.
    SliceNs,
    /// `queue_depth`.
    QueueDepth,
    /// `inflight`.
    Inflight,
    /// `submitted`.
    Submitted,
    /// `dispatched`.
    Dispatched,
    /// `completed`.
    Completed,
    /// `latency_avg_ns`.
    LatencyAvgNs,
    /// `latency_max_ns`.
    LatencyMaxNs,
    /// `latency_p50_ns`.
    LatencyP50Ns,
    /// `latency_p99_ns`.
    LatencyP99Ns,
    /// `cpu_ns`.
    CpuNs,
    /// `bytes`.
    Bytes,
    /// `left_ts_ns`, signed.
    TbsLeftNs,
    /// `vtag_ns`.
    SfqTagNs,
    /// `request_ns`.
    SfqRequestNs,
    /// `interactive`, 0 or 1.
    Interactive,
    /// `round_trips`.
    RoundTrips,
    /// `charged_ns`: GPU time plus idle time held for the vGPU.
    SfqChargedNs,
    /// `withheld_ns`: GPU time held idle for its turns while others waited.
    WithheldNs,
    /// `anticipate_hits`.
    AnticipateHits,
    /// `anticipate_misses`.
    AnticipateMisses,
    /// `anticipate_held_ns`.
    AnticipateHeldNs,
    /// `started`, 0 or 1.
    Started,
    /// `gm_mb`.
    GmMb,
    /// First graphics memory slot.
    SlotStart,
    /// Number of slots.
    SlotCount,
    /// Whether the range is parked, 0 or 1.
    SlotParked,
    /// Switch-ins.
    SwitchIns,
    /// High GM slots copied.
    SlotsCopied,
    /// GTT entries copied.
    GttEntriesCopied,
    /// Relocations.
    Relocations,
    /// Well-formed register accesses its device ignored.
    IgnoredAccesses,
    /// Runs of its completions' delivery.
    DeliveryRuns,
    /// Host CPU its completions' delivery took, ns.
    DeliveryCpuNs,
}

impl VgpuKnob {
    /// Every knob, in the order of their values.
    pub const ALL: [Self; 43] = [
        Self::VgpuId,
        Self::Weight,
        Self::TypeWeight,
        Self::Bandwidth,
        Self::BusyNs,
        Self::OccupiedNs,
        Self::ContendedNs,
        Self::SharePpm,
        Self::Credits,
        Self::SliceNs,
        Self::QueueDepth,
        Self::Inflight,
        Self::Submitted,
        Self::Dispatched,
        Self::Completed,
        Self::LatencyAvgNs,
        Self::LatencyMaxNs,
        Self::LatencyP50Ns,
        Self::LatencyP99Ns,
        Self::CpuNs,
        Self::Bytes,
        Self::TbsLeftNs,
        Self::SfqTagNs,
        Self::SfqRequestNs,
        Self::Interactive,
        Self::RoundTrips,
        Self::SfqChargedNs,
        Self::WithheldNs,
        Self::AnticipateHits,
        Self::AnticipateMisses,
        Self::AnticipateHeldNs,
        Self::Started,
        Self::GmMb,
        Self::SlotStart,
        Self::SlotCount,
        Self::SlotParked,
        Self::SwitchIns,
        Self::SlotsCopied,
        Self::GttEntriesCopied,
        Self::Relocations,
        Self::IgnoredAccesses,
        Self::DeliveryRuns,
        Self::DeliveryCpuNs,
    ];

    /// The knob whose value is `id`.
    pub const fn from_id(id: u64) -> Option<Self> {
        if id < Self::ALL.len() as u64 {
            Some(Self::ALL[id as usize])
        } else {
            None
        }
    }

    /// Writes the file's value and a newline into `w`.
    pub fn show(self, e: &Engine, id: VgpuId, w: &mut impl fmt::Write) -> Result {
        match self {
            Self::VgpuId => return line(w, id),
            Self::TypeWeight => return line(w, e.type_weight(id).ok_or(ENODEV)?),
            Self::Bandwidth => return line(w, e.bandwidth(id).ok_or(ENODEV)?),
            Self::IgnoredAccesses => return line(w, e.ignored_accesses(id)),
            Self::DeliveryRuns => return line(w, e.delivery_cost(id).0),
            Self::DeliveryCpuNs => return line(w, e.delivery_cost(id).1),
            Self::SlotStart
            | Self::SlotCount
            | Self::SlotParked
            | Self::SwitchIns
            | Self::SlotsCopied
            | Self::GttEntriesCopied
            | Self::Relocations => {
                let (p, c) = e.vgpu_slots(id).ok_or(ENODEV)?;
                return match self {
                    Self::SlotStart => line(w, p.start),
                    Self::SlotCount => line(w, p.slots),
                    Self::SlotParked => line(w, u8::from(p.parked)),
                    Self::SwitchIns => line(w, c.switch_ins),
                    Self::SlotsCopied => line(w, c.high_slots),
                    Self::GttEntriesCopied => line(w, c.entries()),
                    _ => line(w, c.moves),
                };
            }
            _ => {}
        }
        let s = e.vgpu_stats(id).ok_or(ENODEV)?;
        match self {
            Self::Weight => line(w, s.weight),
            Self::BusyNs => line(w, s.busy_ns),
            Self::OccupiedNs => line(w, s.occupied_ns),
            Self::ContendedNs => line(w, s.contended_ns),
            Self::SharePpm => line(w, s.share_ppm),
            Self::Credits => line(w, s.credits),
            Self::SliceNs => line(w, s.slice_ns),
            Self::QueueDepth => line(w, s.queue_depth),
            Self::Inflight => line(w, s.inflight),
            Self::Submitted => line(w, s.submitted),
            Self::Dispatched => line(w, s.dispatched),
            Self::Completed => line(w, s.completed),
            Self::LatencyAvgNs => line(w, s.latency_avg_ns),
            Self::LatencyMaxNs => line(w, s.latency_max_ns),
            Self::LatencyP50Ns => line(w, s.latency_p50_ns),
            Self::LatencyP99Ns => line(w, s.latency_p99_ns),
            Self::CpuNs => line(w, s.cpu_ns),
            Self::Bytes => line(w, s.bytes),
            Self::TbsLeftNs => line(w, s.left_ts_ns),
            Self::SfqTagNs => line(w, s.vtag_ns),
            Self::SfqRequestNs => line(w, s.request_ns),
            Self::Interactive => line(w, u8::from(s.interactive)),
            Self::RoundTrips => line(w, s.round_trips),
            Self::SfqChargedNs => line(w, s.charged_ns),
            Self::WithheldNs => line(w, s.withheld_ns),
            Self::AnticipateHits => line(w, s.anticipate_hits),
            Self::AnticipateMisses => line(w, s.anticipate_misses),
            Self::AnticipateHeldNs => line(w, s.anticipate_held_ns),
            Self::Started => line(w, u8::from(s.started)),
            Self::GmMb => line(w, s.gm_mb),
            // Shown above.
            _ => Err(EINVAL),
        }
    }

    /// Applies what was written to a writable file.
    pub fn store(self, e: &Engine, id: VgpuId, input: &Input<'_>) -> Result {
        match self {
            Self::Weight => e.set_weight(id, sysfs::parse_uint(input)?),
            Self::Bandwidth => e.set_bandwidth(id, sysfs::parse_uint(input)?),
            // Read-only: sysfs does not call `store` for these.
            _ => Err(EIO),
        }
    }
}

// Every knob is at the index of its value.
const _: () = {
    let mut i = 0;
    while i < VgpuKnob::ALL.len() {
        assert!(VgpuKnob::ALL[i] as u64 == i as u64);
        i += 1;
    }
};

/// The files of a vGPU's `gvt_rs/` directory, one line each: name, knob,
/// mode ([`RO`], [`RW`] or [`TENANT`]). Expands to `$cb! { $($args)* [...] }`
/// so that every kind of directory is built from this one table.
#[cfg(any(CONFIG_GVT_RS_SIM, CONFIG_GVT_RS_I915))]
macro_rules! vgpu_files {
    ($cb:ident! { $($args:tt)* }) => {
        $cb! { $($args)* [
            vgpu_id: VgpuId => RO,
            weight: Weight => RW,
            type_weight: TypeWeight => RO,
            pcie_bw_mbps: Bandwidth => RW,
            busy_ns: BusyNs => TENANT,
            occupied_ns: OccupiedNs => TENANT,
            contended_ns: ContendedNs => TENANT,
            share_ppm: SharePpm => TENANT,
            credits: Credits => TENANT,
            slice_ns: SliceNs => TENANT,
            queue_depth: QueueDepth => TENANT,
            inflight: Inflight => TENANT,
            submitted: Submitted => TENANT,
            dispatched: Dispatched => TENANT,
            completed: Completed => TENANT,
            latency_avg_ns: LatencyAvgNs => TENANT,
            latency_max_ns: LatencyMaxNs => TENANT,
            latency_p50_ns: LatencyP50Ns => TENANT,
            latency_p99_ns: LatencyP99Ns => TENANT,
            cpu_ns: CpuNs => TENANT,
            bytes: Bytes => TENANT,
            tbs_left_ns: TbsLeftNs => TENANT,
            sfq_tag_ns: SfqTagNs => TENANT,
            sfq_request_ns: SfqRequestNs => TENANT,
            interactive: Interactive => TENANT,
            round_trips: RoundTrips => TENANT,
            sfq_charged_ns: SfqChargedNs => TENANT,
            withheld_ns: WithheldNs => TENANT,
            anticipate_hits: AnticipateHits => TENANT,
            anticipate_misses: AnticipateMisses => TENANT,
            anticipate_held_ns: AnticipateHeldNs => TENANT,
            started: Started => TENANT,
            // Fixed by the vGPU's type: everyone's.
            gm_mb: GmMb => RO,
            // The slots move with what the tenants do (the switch-ins of the
            // vGPU, the allocators' moves): root's, but their number.
            slot_start: SlotStart => TENANT,
            slot_count: SlotCount => RO,
            slot_parked: SlotParked => TENANT,
            switch_ins: SwitchIns => TENANT,
            slots_copied: SlotsCopied => TENANT,
            gtt_entries_copied: GttEntriesCopied => TENANT,
            relocations: Relocations => TENANT,
            ignored_accesses: IgnoredAccesses => TENANT,
            delivery_runs: DeliveryRuns => TENANT,
            delivery_cpu_ns: DeliveryCpuNs => TENANT,
        ] }
    };
}

/// What a provider's driver data of a vGPU's device is: the vGPU it stands
/// for. The data of the devices whose files [`vgpu_group!`] declares.
#[cfg(CONFIG_GVT_RS_SIM)]
pub trait VgpuData: Sync {
    /// The engine of the vGPU.
    fn engine(&self) -> &Engine;
    /// Its id in that engine.
    fn vgpu_id(&self) -> VgpuId;
}

/// The operations of the files of a vGPU whose device's driver data is a `D`.
#[cfg(CONFIG_GVT_RS_SIM)]
pub(crate) struct VgpuFiles<D>(core::marker::PhantomData<D>);

#[cfg(CONFIG_GVT_RS_SIM)]
#[vtable]
impl<const ID: u64, D: VgpuData> sysfs::AttributeOperations<ID> for VgpuFiles<D> {
    type Data = D;

    fn show(
        data: &D,
        _dev: &kernel::device::Device<kernel::device::Bound>,
        page: &mut [u8; kernel::page::PAGE_SIZE],
    ) -> Result<usize> {
        let knob = VgpuKnob::from_id(ID).ok_or(EINVAL)?;
        let mut f = kernel::str::Formatter::new(page);
        knob.show(data.engine(), data.vgpu_id(), &mut f)?;
        Ok(f.bytes_written())
    }

    fn store(
        data: &D,
        _dev: &kernel::device::Device<kernel::device::Bound>,
        input: &Input<'_>,
    ) -> Result {
        let knob = VgpuKnob::from_id(ID).ok_or(EINVAL)?;
        knob.store(data.engine(), data.vgpu_id(), input)
    }
}

/// Declares `$vis static $name: AttributeGroup<$data>`, the `gvt_rs` group
/// of the files of a vGPU's device whose driver data is a `$data`
/// ([`VgpuData`]), for the provider's mdev driver's `dev_groups`.
#[cfg(CONFIG_GVT_RS_SIM)]
macro_rules! vgpu_group {
    ($vis:vis static $name:ident: $data:ty) => {
        $crate::engine::sysfs::vgpu_files!(vgpu_group! { @group $vis $name $data });
    };
    (@group $vis:vis $name:ident $data:ty [$($file:ident: $knob:ident => $mode:ident),+ $(,)?]) => {
        kernel::device_attribute_group! {
            /// A vGPU's files, `<mdev device>/gvt_rs/`.
            $vis static $name: AttributeGroup<$data> = {
                name: c"gvt_rs",
                operations: $crate::engine::sysfs::VgpuFiles<$data>,
                attributes: [
                    $($file: {
                        $crate::engine::sysfs::VgpuKnob::$knob as u64
                    } => $crate::engine::sysfs::$mode),+
                ],
            };
        }
    };
}
#[cfg(CONFIG_GVT_RS_SIM)]
pub(crate) use vgpu_files;
#[cfg(CONFIG_GVT_RS_SIM)]
pub(crate) use vgpu_group;

/// The data behind a vGPU's kobject directory, for providers whose vGPU
/// devices belong to another driver (i915: KVMGT's mdev driver), which
/// cannot give them its groups.
#[cfg(CONFIG_GVT_RS_I915)]
pub struct VgpuDir {
    /// The engine the vGPU belongs to.
    pub engine: Arc<Engine>,
    /// Its id in that engine.
    pub id: VgpuId,
}

#[cfg(CONFIG_GVT_RS_I915)]
impl AttributeOperations for VgpuDir {
    type Knob = VgpuKnob;

    fn show(&self, knob: &VgpuKnob, buf: &mut Buffer<'_>) -> Result {
        knob.show(&self.engine, self.id, buf)
    }

    fn store(&self, knob: &VgpuKnob, input: &Input<'_>) -> Result {
        knob.store(&self.engine, self.id, input)
    }
}

/// Builds [`VGPU_FILES`] from the table of [`vgpu_files!`].
#[cfg(CONFIG_GVT_RS_I915)]
macro_rules! vgpu_dir_files {
    ([$($file:ident: $knob:ident => $mode:ident),+ $(,)?]) => {
        /// Every file of a vGPU's kobject directory.
        pub static VGPU_FILES: AttributeGroup<VgpuDir, { VgpuKnob::ALL.len() }> =
            AttributeGroup::new(
                &VGPU_FILES,
                [$(Attribute::new(
                    kernel::c_str!(::core::stringify!($file)),
                    $mode,
                    VgpuKnob::$knob,
                )),+],
            );
    };
}
#[cfg(CONFIG_GVT_RS_I915)]
vgpu_files!(vgpu_dir_files! {});

/// Creates `<parent>/gvt_rs/` for a vGPU, as a kobject directory.
#[cfg(CONFIG_GVT_RS_I915)]
pub fn vgpu_dir(parent: Parent<'_>, engine: Arc<Engine>, id: VgpuId) -> Result<Dir<VgpuDir>> {
    Dir::new(c"gvt_rs", parent, VgpuDir { engine, id }, &VGPU_FILES)
}
