// SPDX-License-Identifier: GPL-2.0

//! The sysfs ABI of the engine, the same for every provider:
//!
//! * per GPU, the device `/sys/class/gvt_rs/<gpu>/` (a device of the class
//!   `gvt_rs` under the GPU's own device): policy, scheduler tunables, slot
//!   allocator and its tunables, and the GPU's fixed properties (its
//!   statistics, fairness figures and event counters are debugging figures
//!   in debugfs, [`debugfs`], not ABI);
//! * per vGPU, `<mdev device>/gvt_rs/`: weight, PCI-E bandwidth and the
//!   tenant's accounting (GPU time, occupancy, shares, latencies, graphics
//!   memory), which billing and placement tools read.
//!
//! Documented in `Documentation/ABI/testing/sysfs-class-gvt_rs` and
//! `sysfs-bus-mdev-devices-gvt_rs`. Each kind of directory is one table, a
//! line per file with its name, what it shows and its mode: [`gpu_files!`]
//! declares [`GPU_FILES`] and the class's attribute group [`GPU_GROUP`], each
//! file a device attribute whose ID is its index; [`vgpu_files!`] is the
//! table from which a provider whose mdev driver owns its vGPUs' devices (the
//! simulated GPU) declares the `gvt_rs` group of its driver's `dev_groups`
//! ([`vgpu_group!`]: each file's ID is its [`VgpuKnob`]), and the i915
//! provider, whose vGPUs' devices are KVMGT's, a kobject directory
//! ([`vgpu_dir`]). Stores parse strictly and change nothing on error; ranges
//! are checked where the values live, in the core.
//!
//! Who may read what: the figures that move with what tenants do, per vGPU
//! (and GPU-wide in debugfs, which is root's: with two tenants, a GPU's
//! count minus one's own is the other's), are root's only ([`TENANT`], mode
//! 0400); what the
//! administrator set and what a vGPU's creation fixed is everyone's. See
//! "Who can read what" in `Documentation/gvt-rs/admin-guide.rst`.

use super::{
    debugfs,
    Engine,
    Pool,
    VgpuId,
    VgpuSnapshot, //
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
#[cfg(CONFIG_GVT_RS_I915)]
use kernel::sysfs::kobject::{
    Attribute,
    AttributeGroup,
    AttributeOperations,
    Buffer,
    Dir,
    Parent, //
};
use kernel::{
    class,
    device::{
        Device,
        Normal, //
    },
    fmt::{
        self,
        Display, //
    },
    page::PAGE_SIZE,
    prelude::*,
    str::Formatter,
    sync::Arc,
    sysfs::{
        self,
        Input, //
    }, //
};

/// Mode of a file everyone reads: what the administrator set or a GPU's or a
/// vGPU's creation fixed.
pub const RO: u16 = sysfs::RO;
/// Mode of a setting: everyone reads, root writes.
pub const RW: u16 = sysfs::RW;
/// Mode of a figure that shows what tenants do, which other host users must
/// not watch: root only (C's `DEVICE_ATTR_ADMIN_RO`).
pub const TENANT: u16 = sysfs::ADMIN_RO;

/// What a file of a GPU's device is.
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

/// A read-only property of a GPU, fixed when it was set up or by what the
/// administrator created. Its statistics are in debugfs ([`debugfs`]).
#[derive(Clone, Copy)]
pub enum GpuStat {
    /// Engines of the GPU.
    Engines,
    /// vGPUs of the GPU.
    Vgpus,
    /// The most vGPUs the GPU takes at once.
    MaxVgpus,
    /// Graphics memory slots.
    Slots,
}

/// The files of a GPU's device, one line each: name, knob, mode ([`RO`],
/// [`RW`] or [`TENANT`]). Declares [`GPU_FILES`], the knobs by ID, and
/// [`GPU_GROUP`], the device attributes whose IDs they are.
macro_rules! gpu_files {
    ([$($file:ident: $knob:expr => $mode:ident),+ $(,)?]) => {
        /// Every file of a GPU's device, with what it shows: a file's ID is
        /// its index.
        pub const GPU_FILES: [(&str, GpuKnob); [$(::core::stringify!($file)),+].len()] =
            [$((::core::stringify!($file), $knob)),+];

        kernel::device_attribute_group! {
            /// The files of a GPU's device, `/sys/class/gvt_rs/<gpu>/`: the
            /// group of the class's `dev_groups`.
            pub static GPU_GROUP: AttributeGroup<Engine, Normal> = {
                operations: GpuFiles,
                attributes: [
                    $($file: { gpu_file_id(::core::stringify!($file)) } => $mode),+
                ],
            };
        }
    };
}

gpu_files!([
    policy: GpuKnob::Policy => RW,
    tbs_tick_us: GpuKnob::Sched(Tunable::TbsTickUs) => RW,
    tbs_balance_ms: GpuKnob::Sched(Tunable::TbsBalanceMs) => RW,
    tbs_stages: GpuKnob::Sched(Tunable::TbsStages) => RW,
    tbs_start_boost_ms: GpuKnob::Sched(Tunable::TbsStartBoostMs) => RW,
    slice_ceiling_us: GpuKnob::Sched(Tunable::VmcgSliceCeilingUs) => RW,
    slice_min_us: GpuKnob::Sched(Tunable::VmcgMinSliceUs) => RW,
    credit_pool: GpuKnob::Sched(Tunable::VmcgCreditPool) => RW,
    dispatch_batch: GpuKnob::Sched(Tunable::VmcgBatch) => RW,
    pcie_link_mbps: GpuKnob::Sched(Tunable::VmcgLinkMbps) => RW,
    gm_total_mb: GpuKnob::Sched(Tunable::VmcgGmTotalMb) => RW,
    sfq_slice_us: GpuKnob::Sched(Tunable::SfqSliceUs) => RW,
    sfq_wake_keeps_debt: GpuKnob::Sched(Tunable::SfqWakeMaxVf) => RW,
    sfq_wake_preempt: GpuKnob::Sched(Tunable::SfqWakePreempt) => RW,
    throttle: GpuKnob::Sched(Tunable::Throttle) => RW,
    throttle_factor_pct: GpuKnob::Sched(Tunable::ThrottleFactorPct) => RW,
    fairness_window_ms: GpuKnob::Sched(Tunable::WindowMs) => RW,
    idle_threshold_us: GpuKnob::Sched(Tunable::IdleThresholdUs) => RW,
    interactive_calls: GpuKnob::Sched(Tunable::InteractiveCalls) => RW,
    interactive_gap_us: GpuKnob::Sched(Tunable::InteractiveGapUs) => RW,
    anticipate_us: GpuKnob::Sched(Tunable::AnticipateUs) => RW,
    gm_allocator: GpuKnob::Allocator => RW,
    gm_sample_period_ms: GpuKnob::Slots(SlotTunable::SamplePeriodMs) => RW,
    gm_util_window_ms: GpuKnob::Slots(SlotTunable::UtilWindowMs) => RW,
    gm_idle_threshold_ms: GpuKnob::Slots(SlotTunable::IdleThresholdMs) => RW,
    gm_replace_period_ms: GpuKnob::Slots(SlotTunable::ReplacePeriodMs) => RW,
    gm_move_penalty_pct: GpuKnob::Slots(SlotTunable::MovePenaltyPct) => RW,
    gm_relocation: GpuKnob::Relocation => RW,
    // Fixed when the GPU was set up, or what the administrator created:
    // everyone's.
    engines: GpuKnob::Stat(GpuStat::Engines) => RO,
    vgpus: GpuKnob::Stat(GpuStat::Vgpus) => RO,
    max_vgpus: GpuKnob::Stat(GpuStat::MaxVgpus) => RO,
    gm_slots: GpuKnob::Stat(GpuStat::Slots) => RO,
]);

/// Whether two strings are equal, at compile time.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The ID of the GPU file `name`, its index in [`GPU_FILES`]; a name that is
/// not there does not build (`build_error!`: evaluated only as a const).
const fn gpu_file_id(name: &str) -> u64 {
    let mut i = 0;
    while i < GPU_FILES.len() {
        if str_eq(GPU_FILES[i].0, name) {
            return i as u64;
        }
        i += 1;
    }
    kernel::build_error!("not a GPU file")
}

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

impl GpuStat {
    fn show(self, e: &Engine, buf: &mut impl fmt::Write) -> Result {
        match self {
            Self::Engines => line(buf, e.config().engines),
            Self::Vgpus => line(buf, e.vgpus()),
            Self::MaxVgpus => line(buf, e.max_vgpus()),
            Self::Slots => line(buf, e.with_pool(|p| p.slots())),
        }
    }
}

impl GpuKnob {
    /// Writes the file's value and a newline into `buf`.
    pub fn show(self, e: &Engine, buf: &mut impl fmt::Write) -> Result {
        match self {
            Self::Policy => {
                let cur = e.policy();
                let idx = Policy::ALL.iter().position(|p| *p == cur).unwrap_or(0);
                sysfs::write_choices(buf, &POLICY_NAMES, idx)
            }
            Self::Sched(t) => line(buf, e.tunable(t)),
            Self::Allocator => {
                let cur = e.with_pool(|p| p.allocator());
                let idx = AllocatorKind::ALL
                    .iter()
                    .position(|k| *k == cur)
                    .unwrap_or(0);
                sysfs::write_choices(buf, &ALLOC_NAMES, idx)
            }
            Self::Slots(t) => line(buf, e.with_pool(|p| t.get(p.tunables()))),
            Self::Relocation => line(buf, u8::from(e.with_pool(|p| p.tunables().relocation()))),
            Self::Stat(s) => s.show(e, buf),
        }
    }

    /// Applies what was written to a writable file.
    pub fn store(self, e: &Engine, input: &Input<'_>) -> Result {
        match self {
            Self::Policy => {
                let idx = sysfs::match_choice(input, &POLICY_NAMES)?;
                e.set_policy(*Policy::ALL.get(idx).ok_or(EINVAL)?)
            }
            Self::Sched(t) => e.set_tunable(t, sysfs::parse_uint(input)?),
            Self::Allocator => {
                let idx = sysfs::match_choice(input, &ALLOC_NAMES)?;
                let k = *AllocatorKind::ALL.get(idx).ok_or(EINVAL)?;
                e.with_pool_mut(|p| p.set_allocator(k))
            }
            Self::Slots(t) => {
                let v = sysfs::parse_uint(input)?;
                e.with_pool_mut(|p| t.set(p, v))
            }
            Self::Relocation => e.set_relocation(sysfs::parse_bool(input)?),
            // Read-only: sysfs does not call `store` for these.
            Self::Stat(_) => Err(EIO),
        }
    }

    /// The knob of the GPU file whose ID is `id`.
    fn from_id(id: u64) -> Result<Self> {
        let i = usize::try_from(id).map_err(|_| EINVAL)?;
        Ok(GPU_FILES.get(i).ok_or(EINVAL)?.1)
    }
}

/// The operations of the files of a GPU's device, whose data is its engine.
pub(crate) struct GpuFiles;

#[vtable]
impl<const ID: u64> sysfs::AttributeOperations<ID, Normal> for GpuFiles {
    type Data = Engine;

    fn show(e: &Engine, _dev: &Device, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        let mut f = Formatter::new(page);
        GpuKnob::from_id(ID)?.show(e, &mut f)?;
        Ok(f.bytes_written())
    }

    fn store(e: &Engine, _dev: &Device, input: &Input<'_>) -> Result {
        GpuKnob::from_id(ID)?.store(e, input)
    }
}

/// Where the GPUs appear: the class of their devices, `/sys/class/gvt_rs/`,
/// each GPU's device with the files of [`GPU_GROUP`], and their debugging
/// figures' directory, `/sys/kernel/debug/gvt_rs/` ([`debugfs`]).
pub struct GpuClass {
    class: Arc<class::Class<Engine>>,
    debugfs: debugfs::Root,
}

/// The device of one GPU's engine, `/sys/class/gvt_rs/<gpu>/`, and its
/// debugfs directory; both go when it is dropped.
pub struct GpuDevice {
    _debugfs: debugfs::GpuFiles,
    _dev: class::Device<Engine>,
}

/// Creates the class `gvt_rs` and the debugfs directory `gvt_rs`.
pub fn gpu_class() -> Result<Arc<GpuClass>> {
    let class = class::Class::with_groups(c"gvt_rs", &[&GPU_GROUP])?;
    Ok(Arc::new(
        GpuClass {
            class,
            debugfs: debugfs::Root::create(),
        },
        GFP_KERNEL,
    )?)
}

/// Creates the device of the GPU that `engine` schedules, named after the
/// engine, under `parent`, the GPU's device (on its own without one), and
/// the GPU's debugfs directory.
pub fn gpu_device(
    class: &Arc<GpuClass>,
    parent: Option<&Device>,
    engine: Arc<Engine>,
) -> Result<GpuDevice> {
    let name: &CStr = engine.name();
    let dev = class::Device::with_data(class.class.clone(), parent, name, engine.clone())?;
    Ok(GpuDevice {
        _debugfs: debugfs::gpu_files(&class.debugfs, &engine)?,
        _dev: dev,
    })
}

// ---- per vGPU ---------------------------------------------------------------

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

    /// Writes the file's value and a newline into `w`, from one
    /// [`Engine::vgpu_snapshot`].
    pub fn show(self, e: &Engine, id: VgpuId, w: &mut impl fmt::Write) -> Result {
        let VgpuSnapshot {
            sched: s,
            type_weight,
            bandwidth,
            placement: p,
            copies: c,
            ignored_accesses,
            delivery_runs,
            delivery_cpu_ns,
        } = e.vgpu_snapshot(id).ok_or(ENODEV)?;
        match self {
            Self::VgpuId => line(w, id.raw()),
            Self::Weight => line(w, s.weight),
            Self::TypeWeight => line(w, type_weight),
            Self::Bandwidth => line(w, bandwidth),
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
            Self::SlotStart => line(w, p.start),
            Self::SlotCount => line(w, p.slots),
            Self::SlotParked => line(w, u8::from(p.parked)),
            Self::SwitchIns => line(w, c.switch_ins),
            Self::SlotsCopied => line(w, c.high_slots),
            Self::GttEntriesCopied => line(w, c.entries()),
            Self::Relocations => line(w, c.moves),
            Self::IgnoredAccesses => line(w, ignored_accesses),
            Self::DeliveryRuns => line(w, delivery_runs),
            Self::DeliveryCpuNs => line(w, delivery_cpu_ns),
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
#[macro_export]
#[doc(hidden)]
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
pub struct VgpuFiles<D>(core::marker::PhantomData<D>);

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
#[macro_export]
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
// By their paths here; `#[macro_export]` also puts them at the crate's root,
// for the providers' crates (gvt_rs_sim.ko).
#[cfg(any(CONFIG_GVT_RS_SIM, CONFIG_GVT_RS_I915))]
pub use crate::vgpu_files;
#[cfg(CONFIG_GVT_RS_SIM)]
pub use crate::vgpu_group;

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
