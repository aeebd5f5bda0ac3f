// SPDX-License-Identifier: GPL-2.0

//! The sysfs ABI of the engine, the same for every provider:
//!
//! * per GPU, `/sys/kernel/gvt_rs/<gpu>/`: policy, scheduler tunables, slot
//!   allocator and its tunables, fairness figures and event counters;
//! * per vGPU, `<mdev device>/gvt_rs/`: weight, PCI-E bandwidth and
//!   statistics.
//!
//! Documented in `Documentation/ABI/testing/sysfs-kernel-gvt_rs` and
//! `sysfs-bus-mdev-devices-gvt_rs`. Each directory is one table,
//! [`GPU_FILES`] and [`VGPU_FILES`]: a line per file with its name, its mode
//! and the knob it shows; one `show` and one `store` per directory dispatch on
//! the knob. Stores parse strictly and change nothing on error; ranges are
//! checked where the values live, in the core.
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
        Tunable,
        VgpuStats, //
    },
    slots::{
        AllocatorKind,
        Tunables, //
    },
    Error as CoreError, //
};
use core::sync::atomic::Ordering;
use kernel::{
    fmt::Display,
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

/// The data behind a vGPU's directory.
pub struct VgpuDir {
    /// The engine the vGPU belongs to.
    pub engine: Arc<Engine>,
    /// Its id in that engine.
    pub id: VgpuId,
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
fn line(buf: &mut Buffer<'_>, v: impl Display) -> Result {
    buf.emit(fmt!("{v}\n"))
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

/// What a file of a vGPU's directory is.
#[derive(Clone, Copy)]
pub enum VgpuKnob {
    /// The vGPU's id in its engine.
    Id,
    /// Its scheduling weight.
    Weight,
    /// The weight of its type.
    TypeWeight,
    /// Its PCI-E bandwidth, MB/s.
    Bandwidth,
    /// A scheduler statistic.
    Stat(VgpuStat),
    /// A figure of its graphics memory slots.
    Slot(SlotStat),
    /// Well-formed register accesses its device ignored.
    IgnoredAccesses,
    /// Runs of its completions' delivery.
    DeliveryRuns,
    /// Host CPU its completions' delivery took, ns.
    DeliveryCpuNs,
}

/// A scheduler statistic of a vGPU (a field of [`VgpuStats`]).
#[derive(Clone, Copy)]
pub enum VgpuStat {
    /// `busy_ns`.
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
    /// `sfq_charged_ns`: GPU time plus idle time held for the vGPU.
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
}

/// A figure of a vGPU's graphics memory slots.
#[derive(Clone, Copy)]
pub enum SlotStat {
    /// First slot.
    Start,
    /// Number of slots.
    Count,
    /// Whether the range is parked, 0 or 1.
    Parked,
    /// Switch-ins.
    SwitchIns,
    /// High GM slots copied.
    SlotsCopied,
    /// GTT entries copied.
    GttEntriesCopied,
    /// Relocations.
    Relocations,
}

/// A scheduler statistic of the vGPU, which shows what its tenant does:
/// root only.
const fn vgpu_stat(name: &'static CStr, s: VgpuStat) -> Attribute<VgpuDir> {
    tenant_figure(name, VgpuKnob::Stat(s))
}

/// A figure of the vGPU's slots, which moves with what the tenants do (the
/// switch-ins of the vGPU, the allocators' moves): root only.
const fn slot_stat(name: &'static CStr, s: SlotStat) -> Attribute<VgpuDir> {
    tenant_figure(name, VgpuKnob::Slot(s))
}

/// Every file of a vGPU's directory.
pub static VGPU_FILES: AttributeGroup<VgpuDir, 43> = AttributeGroup::new(
    &VGPU_FILES,
    [
        Attribute::read_only(c"vgpu_id", VgpuKnob::Id),
        Attribute::read_write(c"weight", VgpuKnob::Weight),
        Attribute::read_only(c"type_weight", VgpuKnob::TypeWeight),
        Attribute::read_write(c"pcie_bw_mbps", VgpuKnob::Bandwidth),
        vgpu_stat(c"busy_ns", VgpuStat::BusyNs),
        vgpu_stat(c"occupied_ns", VgpuStat::OccupiedNs),
        vgpu_stat(c"contended_ns", VgpuStat::ContendedNs),
        vgpu_stat(c"share_ppm", VgpuStat::SharePpm),
        vgpu_stat(c"credits", VgpuStat::Credits),
        vgpu_stat(c"slice_ns", VgpuStat::SliceNs),
        vgpu_stat(c"queue_depth", VgpuStat::QueueDepth),
        vgpu_stat(c"inflight", VgpuStat::Inflight),
        vgpu_stat(c"submitted", VgpuStat::Submitted),
        vgpu_stat(c"dispatched", VgpuStat::Dispatched),
        vgpu_stat(c"completed", VgpuStat::Completed),
        vgpu_stat(c"latency_avg_ns", VgpuStat::LatencyAvgNs),
        vgpu_stat(c"latency_max_ns", VgpuStat::LatencyMaxNs),
        vgpu_stat(c"latency_p50_ns", VgpuStat::LatencyP50Ns),
        vgpu_stat(c"latency_p99_ns", VgpuStat::LatencyP99Ns),
        vgpu_stat(c"cpu_ns", VgpuStat::CpuNs),
        vgpu_stat(c"bytes", VgpuStat::Bytes),
        vgpu_stat(c"tbs_left_ns", VgpuStat::TbsLeftNs),
        vgpu_stat(c"sfq_tag_ns", VgpuStat::SfqTagNs),
        vgpu_stat(c"sfq_request_ns", VgpuStat::SfqRequestNs),
        vgpu_stat(c"interactive", VgpuStat::Interactive),
        vgpu_stat(c"round_trips", VgpuStat::RoundTrips),
        vgpu_stat(c"sfq_charged_ns", VgpuStat::SfqChargedNs),
        vgpu_stat(c"withheld_ns", VgpuStat::WithheldNs),
        vgpu_stat(c"anticipate_hits", VgpuStat::AnticipateHits),
        vgpu_stat(c"anticipate_misses", VgpuStat::AnticipateMisses),
        vgpu_stat(c"anticipate_held_ns", VgpuStat::AnticipateHeldNs),
        vgpu_stat(c"started", VgpuStat::Started),
        // Fixed by the vGPU's type: everyone's.
        Attribute::read_only(c"gm_mb", VgpuKnob::Stat(VgpuStat::GmMb)),
        slot_stat(c"slot_start", SlotStat::Start),
        Attribute::read_only(c"slot_count", VgpuKnob::Slot(SlotStat::Count)),
        slot_stat(c"slot_parked", SlotStat::Parked),
        slot_stat(c"switch_ins", SlotStat::SwitchIns),
        slot_stat(c"slots_copied", SlotStat::SlotsCopied),
        slot_stat(c"gtt_entries_copied", SlotStat::GttEntriesCopied),
        slot_stat(c"relocations", SlotStat::Relocations),
        tenant_figure(c"ignored_accesses", VgpuKnob::IgnoredAccesses),
        tenant_figure(c"delivery_runs", VgpuKnob::DeliveryRuns),
        tenant_figure(c"delivery_cpu_ns", VgpuKnob::DeliveryCpuNs),
    ],
);

impl VgpuStat {
    fn show(self, s: &VgpuStats, buf: &mut Buffer<'_>) -> Result {
        match self {
            Self::BusyNs => line(buf, s.busy_ns),
            Self::OccupiedNs => line(buf, s.occupied_ns),
            Self::ContendedNs => line(buf, s.contended_ns),
            Self::SharePpm => line(buf, s.share_ppm),
            Self::Credits => line(buf, s.credits),
            Self::SliceNs => line(buf, s.slice_ns),
            Self::QueueDepth => line(buf, s.queue_depth),
            Self::Inflight => line(buf, s.inflight),
            Self::Submitted => line(buf, s.submitted),
            Self::Dispatched => line(buf, s.dispatched),
            Self::Completed => line(buf, s.completed),
            Self::LatencyAvgNs => line(buf, s.latency_avg_ns),
            Self::LatencyMaxNs => line(buf, s.latency_max_ns),
            Self::LatencyP50Ns => line(buf, s.latency_p50_ns),
            Self::LatencyP99Ns => line(buf, s.latency_p99_ns),
            Self::CpuNs => line(buf, s.cpu_ns),
            Self::Bytes => line(buf, s.bytes),
            Self::TbsLeftNs => line(buf, s.left_ts_ns),
            Self::SfqTagNs => line(buf, s.vtag_ns),
            Self::SfqRequestNs => line(buf, s.request_ns),
            Self::Interactive => line(buf, u8::from(s.interactive)),
            Self::RoundTrips => line(buf, s.round_trips),
            Self::SfqChargedNs => line(buf, s.charged_ns),
            Self::WithheldNs => line(buf, s.withheld_ns),
            Self::AnticipateHits => line(buf, s.anticipate_hits),
            Self::AnticipateMisses => line(buf, s.anticipate_misses),
            Self::AnticipateHeldNs => line(buf, s.anticipate_held_ns),
            Self::Started => line(buf, u8::from(s.started)),
            Self::GmMb => line(buf, s.gm_mb),
        }
    }
}

impl AttributeOperations for VgpuDir {
    type Knob = VgpuKnob;

    fn show(&self, knob: &VgpuKnob, buf: &mut Buffer<'_>) -> Result {
        let (e, id) = (&self.engine, self.id);
        match *knob {
            VgpuKnob::Id => line(buf, id),
            VgpuKnob::Weight => line(buf, e.vgpu_stats(id).ok_or(ENODEV)?.weight),
            VgpuKnob::TypeWeight => line(buf, e.type_weight(id).ok_or(ENODEV)?),
            VgpuKnob::Bandwidth => line(buf, e.bandwidth(id).ok_or(ENODEV)?),
            VgpuKnob::Stat(s) => s.show(&e.vgpu_stats(id).ok_or(ENODEV)?, buf),
            VgpuKnob::Slot(s) => {
                let (p, c) = e.vgpu_slots(id).ok_or(ENODEV)?;
                match s {
                    SlotStat::Start => line(buf, p.start),
                    SlotStat::Count => line(buf, p.slots),
                    SlotStat::Parked => line(buf, u8::from(p.parked)),
                    SlotStat::SwitchIns => line(buf, c.switch_ins),
                    SlotStat::SlotsCopied => line(buf, c.high_slots),
                    SlotStat::GttEntriesCopied => line(buf, c.entries()),
                    SlotStat::Relocations => line(buf, c.moves),
                }
            }
            VgpuKnob::IgnoredAccesses => line(buf, e.ignored_accesses(id)),
            VgpuKnob::DeliveryRuns => line(buf, e.delivery_cost(id).0),
            VgpuKnob::DeliveryCpuNs => line(buf, e.delivery_cost(id).1),
        }
    }

    fn store(&self, knob: &VgpuKnob, input: &Input<'_>) -> Result {
        match *knob {
            VgpuKnob::Weight => self.engine.set_weight(self.id, sysfs::parse_uint(input)?),
            VgpuKnob::Bandwidth => self
                .engine
                .set_bandwidth(self.id, sysfs::parse_uint(input)?),
            // Read-only: `sysfs` does not call `store` for these.
            _ => Err(EIO),
        }
    }
}

/// Creates `<parent>/gvt_rs/` for a vGPU.
pub fn vgpu_dir(parent: Parent<'_>, engine: Arc<Engine>, id: VgpuId) -> Result<Dir<VgpuDir>> {
    Dir::new(c"gvt_rs", parent, VgpuDir { engine, id }, &VGPU_FILES)
}
