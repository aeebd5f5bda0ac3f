// SPDX-License-Identifier: GPL-2.0

//! The sysfs ABI of the engine, the same for every provider:
//!
//! * per GPU, `/sys/kernel/gvt_rs/<gpu>/`: policy, scheduler tunables, slot
//!   allocator and its tunables, fairness figures and event counters;
//! * per vGPU, `<mdev device>/gvt_rs/`: weight, PCI-E bandwidth and
//!   statistics.
//!
//! Documented in `Documentation/ABI/testing/sysfs-kernel-gvt_rs` and
//! `sysfs-bus-mdev-devices-gvt_rs`. Stores parse strictly and change nothing
//! on error.

use super::{
    Engine,
    VgpuId, //
};
use crate::gvt_core::{
    sched::{
        Policy,
        Tunable,
        VgpuStats, //
    },
    slots::AllocatorKind, //
};
use core::sync::atomic::Ordering;
use kernel::{
    prelude::*,
    sync::Arc,
    sysfs::{
        self,
        Attribute,
        Buffer,
        Dir,
        Parent, //
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

const POLICY_NAMES: [&str; 4] = [
    Policy::ALL[0].name(),
    Policy::ALL[1].name(),
    Policy::ALL[2].name(),
    Policy::ALL[3].name(),
];

fn show_policy(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
    let cur = g.engine.policy();
    let idx = Policy::ALL.iter().position(|p| *p == cur).unwrap_or(0);
    buf.emit_choices(&POLICY_NAMES, idx)
}

fn store_policy(g: &GpuDir, input: &[u8]) -> Result {
    let idx = sysfs::match_choice(input, &POLICY_NAMES)?;
    let p = *Policy::ALL.get(idx).ok_or(EINVAL)?;
    g.engine.set_policy(p)
}

const ALLOC_NAMES: [&str; 5] = [
    AllocatorKind::ALL[0].name(),
    AllocatorKind::ALL[1].name(),
    AllocatorKind::ALL[2].name(),
    AllocatorKind::ALL[3].name(),
    AllocatorKind::ALL[4].name(),
];

fn show_allocator(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
    let cur = g.engine.with_pool(|p| p.allocator());
    let idx = AllocatorKind::ALL
        .iter()
        .position(|k| *k == cur)
        .unwrap_or(0);
    buf.emit_choices(&ALLOC_NAMES, idx)
}

fn store_allocator(g: &GpuDir, input: &[u8]) -> Result {
    let idx = sysfs::match_choice(input, &ALLOC_NAMES)?;
    let k = *AllocatorKind::ALL.get(idx).ok_or(EINVAL)?;
    g.engine.with_pool_mut(|p| p.set_allocator(k))
}

macro_rules! tunable_attr {
    ($attr:ident, $show:ident, $store:ident, $name:literal, $t:expr) => {
        fn $show(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
            buf.emit(fmt!("{}\n", g.engine.tunable($t)))
        }
        fn $store(g: &GpuDir, input: &[u8]) -> Result {
            let v = sysfs::parse_uint::<u64>(input)?;
            g.engine.set_tunable($t, v)
        }
        static $attr: Attribute<GpuDir> = Attribute::read_write($name, $show, $store);
    };
}

tunable_attr!(
    T_TBS_TICK,
    s_tbs_tick,
    w_tbs_tick,
    c"tbs_tick_us",
    Tunable::TbsTickUs
);
tunable_attr!(
    T_TBS_BAL,
    s_tbs_bal,
    w_tbs_bal,
    c"tbs_balance_ms",
    Tunable::TbsBalanceMs
);
tunable_attr!(
    T_TBS_STG,
    s_tbs_stg,
    w_tbs_stg,
    c"tbs_stages",
    Tunable::TbsStages
);
tunable_attr!(
    T_TBS_BOOST,
    s_tbs_boost,
    w_tbs_boost,
    c"tbs_start_boost_ms",
    Tunable::TbsStartBoostMs
);
tunable_attr!(
    T_CEIL,
    s_ceil,
    w_ceil,
    c"slice_ceiling_us",
    Tunable::VmcgSliceCeilingUs
);
tunable_attr!(
    T_MINS,
    s_mins,
    w_mins,
    c"slice_min_us",
    Tunable::VmcgMinSliceUs
);
tunable_attr!(
    T_POOL,
    s_pool,
    w_pool,
    c"credit_pool",
    Tunable::VmcgCreditPool
);
tunable_attr!(
    T_BATCH,
    s_batch,
    w_batch,
    c"dispatch_batch",
    Tunable::VmcgBatch
);
tunable_attr!(
    T_LINK,
    s_link,
    w_link,
    c"pcie_link_mbps",
    Tunable::VmcgLinkMbps
);
tunable_attr!(T_GMT, s_gmt, w_gmt, c"gm_total_mb", Tunable::VmcgGmTotalMb);
tunable_attr!(T_SFQS, s_sfqs, w_sfqs, c"sfq_slice_us", Tunable::SfqSliceUs);
tunable_attr!(
    T_WAKE,
    s_wake,
    w_wake,
    c"sfq_wake_keeps_debt",
    Tunable::SfqWakeMaxVf
);
tunable_attr!(
    T_PREEMPT,
    s_preempt,
    w_preempt,
    c"sfq_wake_preempt",
    Tunable::SfqWakePreempt
);
tunable_attr!(T_THR, s_thr, w_thr, c"throttle", Tunable::Throttle);
tunable_attr!(
    T_THRF,
    s_thrf,
    w_thrf,
    c"throttle_factor_pct",
    Tunable::ThrottleFactorPct
);
tunable_attr!(
    T_WIN,
    s_win,
    w_win,
    c"fairness_window_ms",
    Tunable::WindowMs
);
tunable_attr!(
    T_IDLE,
    s_idle,
    w_idle,
    c"idle_threshold_us",
    Tunable::IdleThresholdUs
);
tunable_attr!(
    T_ICALLS,
    s_icalls,
    w_icalls,
    c"interactive_calls",
    Tunable::InteractiveCalls
);
tunable_attr!(
    T_IGAP,
    s_igap,
    w_igap,
    c"interactive_gap_us",
    Tunable::InteractiveGapUs
);
tunable_attr!(T_ANT, s_ant, w_ant, c"anticipate_us", Tunable::AnticipateUs);

macro_rules! pool_attr {
    ($attr:ident, $show:ident, $store:ident, $name:literal, $get:expr, $set:expr) => {
        fn $show(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
            let v: u32 = g.engine.with_pool(|p| $get(p.tunables()));
            buf.emit(fmt!("{}\n", v))
        }
        fn $store(g: &GpuDir, input: &[u8]) -> Result {
            let v = sysfs::parse_uint::<u32>(input)?;
            g.engine.with_pool_mut(|p| $set(p, v))
        }
        static $attr: Attribute<GpuDir> = Attribute::read_write($name, $show, $store);
    };
}

use crate::gvt_core::slots::Tunables;
type PoolT = super::Pool;

pool_attr!(
    P_SAMPLE,
    s_psample,
    w_psample,
    c"gm_sample_period_ms",
    |t: &Tunables| t.sample_period_ms(),
    |p: &mut PoolT, v| p.set_sample_period_ms(v)
);
pool_attr!(
    P_WINDOW,
    s_pwin,
    w_pwin,
    c"gm_util_window_ms",
    |t: &Tunables| t.util_window_ms(),
    |p: &mut PoolT, v| p.set_util_window_ms(v)
);
pool_attr!(
    P_IDLE,
    s_pidle,
    w_pidle,
    c"gm_idle_threshold_ms",
    |t: &Tunables| t.idle_threshold_ms(),
    |p: &mut PoolT, v| p.set_idle_threshold_ms(v)
);
pool_attr!(
    P_REPLACE,
    s_prep,
    w_prep,
    c"gm_replace_period_ms",
    |t: &Tunables| t.replace_period_ms(),
    |p: &mut PoolT, v| p.set_replace_period_ms(v)
);
pool_attr!(
    P_PENALTY,
    s_ppen,
    w_ppen,
    c"gm_move_penalty_pct",
    |t: &Tunables| t.move_penalty_pct(),
    |p: &mut PoolT, v| p.set_move_penalty_pct(v)
);

fn show_reloc(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
    let on = g.engine.with_pool(|p| p.tunables().relocation());
    buf.emit(fmt!("{}\n", u8::from(on)))
}

fn store_reloc(g: &GpuDir, input: &[u8]) -> Result {
    g.engine.set_relocation(sysfs::parse_bool(input)?)
}

static P_RELOC: Attribute<GpuDir> =
    Attribute::read_write(c"gm_relocation", show_reloc, store_reloc);

macro_rules! gpu_ro {
    ($attr:ident, $show:ident, $name:literal, |$g:ident| $val:expr) => {
        fn $show($g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
            buf.emit(fmt!("{}\n", $val))
        }
        static $attr: Attribute<GpuDir> = Attribute::read_only($name, $show);
    };
}

gpu_ro!(R_LAMBDA, s_lambda, c"fairness_lambda_ppm", |g| g
    .engine
    .fairness()
    .lambda_ppm);
gpu_ro!(R_MINMAX, s_minmax, c"fairness_min_max_ppm", |g| g
    .engine
    .fairness()
    .min_max_ppm);
gpu_ro!(R_JAIN, s_jain, c"fairness_jain_ppm", |g| g
    .engine
    .fairness()
    .jain_ppm);
gpu_ro!(R_ACTIVE, s_active, c"fairness_active", |g| g
    .engine
    .fairness()
    .active);
gpu_ro!(R_PICKS, s_picks, c"picks", |g| g.engine.gpu_stats().picks);
gpu_ro!(R_SWITCHES, s_switches, c"switches", |g| g
    .engine
    .gpu_stats()
    .switches);
gpu_ro!(R_WITHHELD, s_withheld, c"withheld_ns", |g| g
    .engine
    .gpu_stats()
    .withheld_ns);
gpu_ro!(R_ROUNDS, s_rounds, c"vmcg_rounds", |g| g
    .engine
    .gpu_stats()
    .rounds);
gpu_ro!(R_INFLIGHT, s_inflight, c"inflight", |g| g
    .engine
    .gpu_stats()
    .inflight);
gpu_ro!(R_ENGINES, s_engines, c"engines", |g| g
    .engine
    .config()
    .engines);
gpu_ro!(R_VGPUS, s_vgpus, c"vgpus", |g| g.engine.vgpus());
gpu_ro!(R_SLOTS, s_slots, c"gm_slots", |g| g
    .engine
    .with_pool(|p| p.slots()));
gpu_ro!(R_SHARED, s_shared, c"gm_shared_slots", |g| g
    .engine
    .with_pool(|p| p.shared_slots()));
gpu_ro!(R_COPIED, s_copied, c"gtt_entries_copied", |g| g
    .engine
    .with_pool(|p| p.totals().entries()));
gpu_ro!(R_EVQ, s_evq, c"events_queued", |g| g
    .engine
    .counters
    .queued
    .load(Ordering::Relaxed));
gpu_ro!(R_EVD, s_evd, c"events_dispatched", |g| g
    .engine
    .counters
    .dispatched
    .load(Ordering::Relaxed));
gpu_ro!(R_EVC, s_evc, c"events_completed", |g| g
    .engine
    .counters
    .completed
    .load(Ordering::Relaxed));
gpu_ro!(R_EVS, s_evs, c"events_switches", |g| g
    .engine
    .counters
    .switches
    .load(Ordering::Relaxed));
gpu_ro!(R_EVR, s_evr, c"events_relocations", |g| g
    .engine
    .counters
    .relocations
    .load(Ordering::Relaxed));
gpu_ro!(R_EVL, s_evl, c"events_gtt_reloads", |g| g
    .engine
    .counters
    .reloads
    .load(Ordering::Relaxed));

fn show_current(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
    match g.engine.current() {
        Some(id) => buf.emit(fmt!("{id}\n")),
        None => buf.emit(fmt!("idle\n")),
    }
}

static R_CURRENT: Attribute<GpuDir> = Attribute::read_only(c"current_vgpu", show_current);

fn show_cosched(g: &GpuDir, buf: &mut Buffer<'_>) -> Result {
    match g.engine.coschedule() {
        Some(id) => buf.emit(fmt!("{id}\n")),
        None => buf.emit(fmt!("none\n")),
    }
}

static R_COSCHED: Attribute<GpuDir> = Attribute::read_only(c"coschedule_vgpu", show_cosched);
static A_POLICY: Attribute<GpuDir> = Attribute::read_write(c"policy", show_policy, store_policy);
static A_ALLOC: Attribute<GpuDir> =
    Attribute::read_write(c"gm_allocator", show_allocator, store_allocator);

static GPU_ATTRS: [&Attribute<GpuDir>; 50] = [
    &A_POLICY,
    &T_TBS_TICK,
    &T_TBS_BAL,
    &T_TBS_STG,
    &T_TBS_BOOST,
    &T_CEIL,
    &T_MINS,
    &T_POOL,
    &T_BATCH,
    &T_LINK,
    &T_GMT,
    &T_SFQS,
    &T_WAKE,
    &T_PREEMPT,
    &T_THR,
    &T_THRF,
    &T_WIN,
    &T_IDLE,
    &T_ICALLS,
    &T_IGAP,
    &T_ANT,
    &A_ALLOC,
    &P_SAMPLE,
    &P_WINDOW,
    &P_IDLE,
    &P_REPLACE,
    &P_PENALTY,
    &P_RELOC,
    &R_LAMBDA,
    &R_MINMAX,
    &R_JAIN,
    &R_ACTIVE,
    &R_PICKS,
    &R_SWITCHES,
    &R_WITHHELD,
    &R_ROUNDS,
    &R_INFLIGHT,
    &R_ENGINES,
    &R_VGPUS,
    &R_SLOTS,
    &R_SHARED,
    &R_COPIED,
    &R_EVQ,
    &R_EVD,
    &R_EVC,
    &R_EVS,
    &R_EVR,
    &R_EVL,
    &R_CURRENT,
    &R_COSCHED,
];

/// Creates `<parent>/<engine name>/` for a GPU.
pub fn gpu_dir(parent: Parent<'_>, engine: Arc<Engine>) -> Result<Dir<GpuDir>> {
    let name: &CStr = engine.name();
    Dir::new(
        name,
        parent,
        GpuDir {
            engine: engine.clone(),
        },
        &GPU_ATTRS,
    )
}

// ---- per vGPU ---------------------------------------------------------------

fn stats(v: &VgpuDir) -> Result<VgpuStats> {
    v.engine.vgpu_stats(v.id).ok_or(ENODEV)
}

macro_rules! vgpu_stat {
    ($attr:ident, $show:ident, $name:literal, |$s:ident| $val:expr) => {
        fn $show(v: &VgpuDir, buf: &mut Buffer<'_>) -> Result {
            let $s = stats(v)?;
            buf.emit(fmt!("{}\n", $val))
        }
        static $attr: Attribute<VgpuDir> = Attribute::read_only($name, $show);
    };
}

vgpu_stat!(V_BUSY, sv_busy, c"busy_ns", |s| s.busy_ns);
vgpu_stat!(V_SHARE, sv_share, c"share_ppm", |s| s.share_ppm);
vgpu_stat!(V_CREDITS, sv_credits, c"credits", |s| s.credits);
vgpu_stat!(V_SLICE, sv_slice, c"slice_ns", |s| s.slice_ns);
vgpu_stat!(V_QUEUE, sv_queue, c"queue_depth", |s| s.queue_depth);
vgpu_stat!(V_INFL, sv_infl, c"inflight", |s| s.inflight);
vgpu_stat!(V_SUB, sv_sub, c"submitted", |s| s.submitted);
vgpu_stat!(V_DISP, sv_disp, c"dispatched", |s| s.dispatched);
vgpu_stat!(V_COMP, sv_comp, c"completed", |s| s.completed);
vgpu_stat!(V_LAVG, sv_lavg, c"latency_avg_ns", |s| s.latency_avg_ns);
vgpu_stat!(V_LMAX, sv_lmax, c"latency_max_ns", |s| s.latency_max_ns);
vgpu_stat!(V_LP50, sv_lp50, c"latency_p50_ns", |s| s.latency_p50_ns);
vgpu_stat!(V_LP99, sv_lp99, c"latency_p99_ns", |s| s.latency_p99_ns);
vgpu_stat!(V_CPU, sv_cpu, c"cpu_ns", |s| s.cpu_ns);
vgpu_stat!(V_BYTES, sv_bytes, c"bytes", |s| s.bytes);
vgpu_stat!(V_LEFT, sv_left, c"tbs_left_ns", |s| s.left_ts_ns);
vgpu_stat!(V_VTAG, sv_vtag, c"sfq_tag_ns", |s| s.vtag_ns);
vgpu_stat!(V_REQ, sv_req, c"sfq_request_ns", |s| s.request_ns);
vgpu_stat!(V_IA, sv_ia, c"interactive", |s| u8::from(s.interactive));
vgpu_stat!(V_TRIPS, sv_trips, c"round_trips", |s| s.round_trips);
vgpu_stat!(V_CHARGED, sv_charged, c"sfq_charged_ns", |s| s.charged_ns);
vgpu_stat!(V_AHITS, sv_ahits, c"anticipate_hits", |s| s.anticipate_hits);
vgpu_stat!(V_AMISS, sv_amiss, c"anticipate_misses", |s| s
    .anticipate_misses);
vgpu_stat!(V_AHELD, sv_aheld, c"anticipate_held_ns", |s| s
    .anticipate_held_ns);
vgpu_stat!(V_STARTED, sv_started, c"started", |s| u8::from(s.started));
vgpu_stat!(V_GM, sv_gm, c"gm_mb", |s| s.gm_mb);

fn show_id(v: &VgpuDir, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", v.id))
}

fn show_weight(v: &VgpuDir, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", stats(v)?.weight))
}

fn store_weight(v: &VgpuDir, input: &[u8]) -> Result {
    let w = sysfs::parse_uint::<u32>(input)?;
    v.engine.set_weight(v.id, w)
}

fn show_type_weight(v: &VgpuDir, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", v.engine.type_weight(v.id).ok_or(ENODEV)?))
}

fn show_bw(v: &VgpuDir, buf: &mut Buffer<'_>) -> Result {
    buf.emit(fmt!("{}\n", v.engine.bandwidth(v.id).ok_or(ENODEV)?))
}

fn store_bw(v: &VgpuDir, input: &[u8]) -> Result {
    let mbps = sysfs::parse_uint::<u32>(input)?;
    v.engine.set_bandwidth(v.id, mbps)
}

macro_rules! vgpu_slot {
    ($attr:ident, $show:ident, $name:literal, |$p:ident, $c:ident| $val:expr) => {
        fn $show(v: &VgpuDir, buf: &mut Buffer<'_>) -> Result {
            let ($p, $c) = v.engine.vgpu_slots(v.id).ok_or(ENODEV)?;
            let _ = (&$p, &$c);
            buf.emit(fmt!("{}\n", $val))
        }
        static $attr: Attribute<VgpuDir> = Attribute::read_only($name, $show);
    };
}

vgpu_slot!(V_SSTART, sv_sstart, c"slot_start", |p, c| p.start);
vgpu_slot!(V_SCOUNT, sv_scount, c"slot_count", |p, c| p.slots);
vgpu_slot!(V_SPARK, sv_spark, c"slot_parked", |p, c| u8::from(p.parked));
vgpu_slot!(V_SWIN, sv_swin, c"switch_ins", |p, c| c.switch_ins);
vgpu_slot!(V_SCOPY, sv_scopy, c"slots_copied", |p, c| c.high_slots);
vgpu_slot!(V_ECOPY, sv_ecopy, c"gtt_entries_copied", |p, c| c.entries());
vgpu_slot!(V_MOVES, sv_moves, c"relocations", |p, c| c.moves);

static V_ID: Attribute<VgpuDir> = Attribute::read_only(c"vgpu_id", show_id);
static V_WEIGHT: Attribute<VgpuDir> = Attribute::read_write(c"weight", show_weight, store_weight);
static V_TW: Attribute<VgpuDir> = Attribute::read_only(c"type_weight", show_type_weight);
static V_BW: Attribute<VgpuDir> = Attribute::read_write(c"pcie_bw_mbps", show_bw, store_bw);

static VGPU_ATTRS: [&Attribute<VgpuDir>; 37] = [
    &V_ID, &V_WEIGHT, &V_TW, &V_BW, &V_BUSY, &V_SHARE, &V_CREDITS, &V_SLICE, &V_QUEUE, &V_INFL,
    &V_SUB, &V_DISP, &V_COMP, &V_LAVG, &V_LMAX, &V_LP50, &V_LP99, &V_CPU, &V_BYTES, &V_LEFT,
    &V_VTAG, &V_REQ, &V_IA, &V_TRIPS, &V_CHARGED, &V_AHITS, &V_AMISS, &V_AHELD, &V_STARTED, &V_GM,
    &V_SSTART, &V_SCOUNT, &V_SPARK, &V_SWIN, &V_SCOPY, &V_ECOPY, &V_MOVES,
];

/// Creates `<parent>/gvt_rs/` for a vGPU.
pub fn vgpu_dir(parent: Parent<'_>, engine: Arc<Engine>, id: VgpuId) -> Result<Dir<VgpuDir>> {
    Dir::new(c"gvt_rs", parent, VgpuDir { engine, id }, &VGPU_ATTRS)
}
