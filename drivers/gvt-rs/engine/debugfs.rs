// SPDX-License-Identifier: GPL-2.0

//! The engine's figures for whoever tunes or debugs it, in debugfs:
//! `/sys/kernel/debug/gvt_rs/<gpu>/`, a directory per GPU named as its
//! device in `/sys/class/gvt_rs/`. Unlike sysfs, not an ABI: the files and
//! their columns may change with the engine, and debugfs is root's only.
//!
//! * `lock_holds`: the holds of the engine's two locks since the GPU was
//!   registered (`crate::gvt_core::engine::HoldStats`): how many, how many
//!   during which the holder was switched out, the 50th, 99th and 99.9th
//!   percentile, the longest, and the longest through which the holder ran.
//!   `Documentation/gvt-rs/scheduling.rst` ("Lock holds") says how to read it.
//! * `stats`: the GPU's statistics, a `name value` line each, read at one
//!   moment ([`Engine::snapshot`]): the scheduler's and the fairness
//!   window's figures, the event counters, the running vGPU.
//! * `pick_holds`: in the same columns, the slot lock's holds by the
//!   decisions (`Engine::pick_holds`): `decide`, held with both locks, and
//!   `load_step`, each step of a switch-in's GTT load (a slot, or the
//!   shared low GM), held with the slot lock alone.

use super::{
    Engine,
    GpuSnapshot, //
};
use crate::gvt_core::{
    engine::HoldSummary,
    VgpuId, //
};
use core::fmt;
use kernel::{
    debugfs::{
        Dir,
        File, //
    },
    prelude::*,
    sync::Arc, //
};

/// The directory `gvt_rs` at the root of debugfs, the parent of every
/// GPU's; removed when dropped (after the GPUs' own).
pub struct Root(Dir);

impl Root {
    /// Creates the directory. Without debugfs, or if it cannot be created,
    /// the GPUs have no files there and work as before.
    pub fn create() -> Self {
        Self(Dir::new(c"gvt_rs"))
    }
}

/// A GPU's directory and its files, removed when dropped.
pub struct GpuFiles {
    _stats: Pin<KBox<File<Arc<Engine>>>>,
    _lock_holds: Pin<KBox<File<Arc<Engine>>>>,
    _pick_holds: Pin<KBox<File<Arc<Engine>>>>,
    _dir: Dir,
}

/// Creates the directory of the GPU that `engine` schedules, under `root`.
pub fn gpu_files(root: &Root, engine: &Arc<Engine>) -> Result<GpuFiles> {
    let dir = root.0.subdir(engine.name());
    let stats = KBox::pin_init(
        dir.read_callback_file(c"stats", engine.clone(), &write_stats),
        GFP_KERNEL,
    )?;
    let lock_holds = KBox::pin_init(
        dir.read_callback_file(c"lock_holds", engine.clone(), &write_lock_holds),
        GFP_KERNEL,
    )?;
    let pick_holds = KBox::pin_init(
        dir.read_callback_file(c"pick_holds", engine.clone(), &write_pick_holds),
        GFP_KERNEL,
    )?;
    Ok(GpuFiles {
        _stats: stats,
        _lock_holds: lock_holds,
        _pick_holds: pick_holds,
        _dir: dir,
    })
}

/// `stats`: a `name value` line per figure, from one snapshot. The names
/// are those of the sysfs files they were in drafts of 0.1.0.
fn write_stats(engine: &Arc<Engine>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let GpuSnapshot {
        sched,
        fairness,
        current,
        coschedule,
        shared_slots,
        gtt_entries_copied,
        pick_ns,
        queued,
        dispatched,
        completed,
        switch_events,
        relocations,
        reloads,
        policy_lock_max_ns,
        slots_lock_max_ns,
        replans,
    } = engine.snapshot();
    let numbers: [(&str, u64); 22] = [
        ("fairness_lambda_ppm", fairness.lambda_ppm.into()),
        ("fairness_min_max_ppm", fairness.min_max_ppm.into()),
        ("fairness_jain_ppm", fairness.jain_ppm.into()),
        ("fairness_active", fairness.active.into()),
        ("picks", sched.picks),
        ("pick_ns", pick_ns),
        ("switches", sched.switches),
        ("withheld_ns", sched.withheld_ns),
        ("overdue_ns", sched.overdue_ns),
        ("vmcg_rounds", sched.rounds),
        ("inflight", sched.inflight.into()),
        ("gm_shared_slots", shared_slots.into()),
        ("gtt_entries_copied", gtt_entries_copied),
        ("events_queued", queued),
        ("events_dispatched", dispatched),
        ("events_completed", completed),
        ("events_switches", switch_events),
        ("events_relocations", relocations),
        ("events_gtt_reloads", reloads),
        ("policy_lock_max_ns", policy_lock_max_ns),
        ("slots_lock_max_ns", slots_lock_max_ns),
        ("gm_replans", replans),
    ];
    for (name, v) in numbers {
        writeln!(f, "{name} {v}")?;
    }
    write_vgpu(f, "current_vgpu", current, "idle")?;
    write_vgpu(f, "coschedule_vgpu", coschedule, "none")
}

/// A `name value` line whose value is a vGPU's id, or `none`'s word.
fn write_vgpu(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    id: Option<VgpuId>,
    none: &str,
) -> fmt::Result {
    match id {
        Some(id) => writeln!(f, "{name} {id}"),
        None => writeln!(f, "{name} {none}"),
    }
}

/// `lock_holds`: a header line, then a line per lock, in ns.
fn write_lock_holds(engine: &Arc<Engine>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (policy, slots) = engine.lock_holds();
    write_table(f, "lock", [("policy", policy), ("slots", slots)])
}

/// `pick_holds`: a header line (`lock_holds`'s columns), then a line per
/// part, in ns.
fn write_pick_holds(engine: &Arc<Engine>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let (decide, load_step) = engine.pick_holds();
    write_table(f, "part", [("decide", decide), ("load_step", load_step)])
}

/// A header line whose first column is `key`, then a line per row.
fn write_table(
    f: &mut fmt::Formatter<'_>,
    key: &str,
    rows: [(&str, HoldSummary); 2],
) -> fmt::Result {
    writeln!(
        f,
        "{key} holds switched_out p50_ns p99_ns p999_ns max_ns max_running_ns"
    )?;
    for (name, h) in rows {
        write_holds(f, name, &h)?;
    }
    Ok(())
}

fn write_holds(f: &mut fmt::Formatter<'_>, name: &str, h: &HoldSummary) -> fmt::Result {
    writeln!(
        f,
        "{name} {} {} {} {} {} {} {}",
        h.holds, h.switched_out, h.p50_ns, h.p99_ns, h.p999_ns, h.max_ns, h.max_running_ns
    )
}
