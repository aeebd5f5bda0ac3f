// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the engine as the i915 provider drives it.
//!
//! Without an Intel GPU no GVT-g instance calls the provider's ops, so these
//! tests make the engine calls those ops make, in GVT-g's order, on an
//! engine configured as the i915 provider configures it (no relocation,
//! private low GM), with a provider that records the actions asked of it.

#[kernel::macros::kunit_tests(gvt_rs_engine)]
mod tests {
    use crate::engine::{
        errno,
        sysfs::{
            GpuKnob,
            GPU_FILES, //
        },
        Engine,
        GpuConfig,
        Provider,
        VgpuId, //
    };
    use crate::gvt_core::{
        sched::Tunable,
        slots::{
            AllocatorKind,
            Move, //
        },
        Error as CoreError, //
    };
    use core::sync::atomic::{
        AtomicU32,
        Ordering, //
    };
    use kernel::{
        prelude::*,
        sync::Arc, //
    };

    /// Counts the actions; has no VM CPU time.
    struct Recorder {
        loads: AtomicU32,
        relocations: AtomicU32,
    }

    impl Provider for Recorder {
        fn load_gtt(&self, _vgpu: VgpuId, _start: u16, _first: u16, _slots: u16) {
            self.loads.fetch_add(1, Ordering::Relaxed);
        }
        fn load_low_gtt(&self, _vgpu: VgpuId) {}
        fn relocate(&self, _m: &Move) {
            self.relocations.fetch_add(1, Ordering::Relaxed);
        }
        fn vm_cpu_ns(&self, _vgpu: VgpuId) -> Option<u64> {
            None
        }
    }

    fn recorder() -> Recorder {
        Recorder {
            loads: AtomicU32::new(0),
            relocations: AtomicU32::new(0),
        }
    }

    /// An engine as the i915 provider makes it, with 8 slots (512 MB).
    fn i915_engine(relocate: bool) -> Result<Arc<Engine>> {
        Arc::pin_init(
            Engine::new(
                c"kunit",
                GpuConfig {
                    engines: 2,
                    low_mb: u32::MAX,
                    slots: 8,
                    low_shared_entries: 0,
                    relocate,
                    max_vgpus: 8,
                },
            )?,
            GFP_KERNEL,
        )
    }

    #[test]
    fn bad_configs_are_refused() -> Result {
        for (engines, slots, max_vgpus) in [
            (0, 8, 8),
            (9, 8, 8),
            (2, 0, 8),
            (2, 65, 8),
            (2, 8, 0),
            (2, 8, 65),
        ] {
            let r = Engine::new(
                c"kunit",
                GpuConfig {
                    engines,
                    low_mb: 0,
                    slots,
                    low_shared_entries: 0,
                    relocate: false,
                    max_vgpus,
                },
            );
            assert!(r.is_err());
        }
        // Names longer than 31 bytes do not fit the sysfs/trace name.
        let ok = GpuConfig {
            engines: 1,
            low_mb: 0,
            slots: 1,
            low_shared_entries: 0,
            relocate: false,
            max_vgpus: 64,
        };
        assert!(Engine::new(c"0123456789012345678901234567890", ok).is_ok());
        assert!(Engine::new(c"01234567890123456789012345678901", ok).is_err());
        Ok(())
    }

    #[test]
    fn placement_and_scheduling_are_separate_steps() -> Result {
        let p = recorder();
        let e = i915_engine(false)?;
        // alloc_high x2: 256 MB = 4 slots each fill the 8-slot pool.
        assert_eq!(e.available_mb(256, 0), 2);
        let a = e.place_vgpu(&p, 256, 0, 4)?;
        let b = e.place_vgpu(&p, 256, 0, 8)?;
        assert_eq!(e.place_vgpu(&p, 256, 0, 4), Err(ENOSPC));
        assert_eq!(e.available_mb(256, 0), 0);
        // Placed, not yet in the scheduler: no figures (its files, which
        // read a snapshot, say ENODEV), but its range, which GVT-g's
        // alloc_high programs into the GGTT before init_vgpu.
        assert!(e.vgpu_stats(a).is_none());
        assert!(e.vgpu_snapshot(a).is_none());
        assert_eq!(e.placement(a).map(|pl| (pl.start, pl.slots)), Some((0, 4)));
        assert_eq!(e.placement(b).map(|pl| (pl.start, pl.slots)), Some((4, 4)));
        assert_eq!(e.start(a), Err(EINVAL));
        // init_vgpu.
        e.attach_vgpu(a)?;
        assert_eq!(e.attach_vgpu(a), Err(EINVAL));
        assert!(e.vgpu_stats(a).is_some());
        // One snapshot has the scheduler's and the slot pool's figures.
        let snap = e.vgpu_snapshot(a).ok_or(EINVAL)?;
        assert_eq!((snap.sched.weight, snap.sched.gm_mb), (4, 256));
        assert_eq!((snap.placement.slots, snap.placement.parked), (4, false));
        assert_eq!(snap.ignored_accesses, 0);
        // free_high before clean_vgpu is refused and changes nothing.
        assert_eq!(e.unplace_vgpu(&p, a), Err(EBUSY));
        assert_eq!(e.vgpus(), 2);
        // A started vGPU cannot leave the scheduler.
        e.start(a)?;
        assert_eq!(e.detach_vgpu(a), Err(EBUSY));
        e.stop(a)?;
        e.detach_vgpu(a)?;
        assert_eq!(e.detach_vgpu(a), Err(EINVAL));
        e.unplace_vgpu(&p, a)?;
        assert_eq!(e.unplace_vgpu(&p, a), Err(EINVAL));
        // b never entered the scheduler (init_vgpu failed, say).
        e.unplace_vgpu(&p, b)?;
        assert_eq!(e.vgpus(), 0);
        assert_eq!(e.available_mb(256, 0), 2);
        assert_eq!(p.relocations.load(Ordering::Relaxed), 0);
        Ok(())
    }

    #[test]
    fn relocation_needs_the_capability() -> Result {
        let e = i915_engine(false)?;
        assert!(!e.with_pool(|p| p.tunables().relocation()));
        assert_eq!(e.set_relocation(true), Err(EOPNOTSUPP));
        assert!(!e.with_pool(|p| p.tunables().relocation()));
        e.set_relocation(false)?;
        let e = i915_engine(true)?;
        e.set_relocation(false)?;
        e.set_relocation(true)?;
        assert!(e.with_pool(|p| p.tunables().relocation()));
        Ok(())
    }

    #[test]
    fn a_gpu_takes_its_max_vgpus_and_no_more() -> Result {
        let p = recorder();
        // The simulated GPU's pool under a sharing allocator: 64 one-slot
        // vGPUs on 54 slots.
        let e = Arc::pin_init(
            Engine::new(
                c"kunit",
                GpuConfig {
                    engines: 2,
                    low_mb: 896,
                    slots: 54,
                    low_shared_entries: 16_384,
                    relocate: true,
                    max_vgpus: 64,
                },
            )?,
            GFP_KERNEL,
        )?;
        assert_eq!(e.max_vgpus(), 64);
        e.with_pool_mut(|pool| pool.set_allocator(AllocatorKind::Gscale))?;
        for n in 0..64u32 {
            assert_eq!(e.available_mb(64, 16), 64 - n);
            let id = e.place_vgpu(&p, 64, 16, 1)?;
            e.attach_vgpu(id)?;
            e.start(id)?;
            assert_eq!(u32::from(id), n);
        }
        assert_eq!(e.available_mb(64, 16), 0);
        assert_eq!(e.place_vgpu(&p, 64, 16, 1), Err(ENOSPC));
        // The last id's per-vGPU counters exist.
        let last = VgpuId::new(63).ok_or(EINVAL)?;
        e.ignored_access(last);
        assert_eq!(e.vgpu_snapshot(last).map(|v| v.ignored_accesses), Some(1));
        for id in VgpuId::ALL {
            e.stop(id)?;
            e.destroy_vgpu(&p, id)?;
        }
        assert_eq!(e.vgpus(), 0);
        Ok(())
    }

    #[cfg(CONFIG_GVT_RS_I915)]
    #[test]
    fn gvtg_switch_protocol_drains_through_the_idle_vgpu() -> Result {
        use crate::gvt_core::sched::Policy;
        use crate::i915::switch::{
            GvtgAnswer,
            GvtgProtocol, //
        };

        let p = recorder();
        let e = i915_engine(false)?;
        let g = KBox::pin_init(GvtgProtocol::new(), GFP_KERNEL)?;
        e.set_policy(Policy::Sfq)?;
        // A 1 s turn: the test must not depend on how fast the VM runs.
        e.set_tunable(Tunable::SfqSliceUs, Tunable::SfqSliceUs.range().1)?;
        let a = e.place_vgpu(&p, 128, 0, 1)?;
        e.attach_vgpu(a)?;
        e.start(a)?;
        // Nothing queued: the idle vGPU (or nothing).
        assert_ne!(g.pick_next(&e, &p, false), GvtgAnswer::Run(a));
        assert!(!g.switched(true));
        // Work arrives: a runs.
        e.queued(a, 0, 0)?;
        e.queued(a, 1, 0)?;
        e.queued(a, 1, 0)?;
        assert_eq!(g.pick_next(&e, &p, false), GvtgAnswer::Run(a));
        // Its 2 slots were not resident: each is loaded in a step of its
        // own (the i915 provider's `load_gtt` leaves that to GVT-g).
        assert_eq!(p.loads.load(Ordering::Relaxed), 2);
        assert!(!g.switched(false));
        assert_eq!(g.pick_next(&e, &p, true), GvtgAnswer::Keep);
        assert!(e.may_dispatch(a, 0));
        e.dispatched(a, 0, 0)?;
        // A reset discards one queued workload of engine 1.
        e.cancelled(a, 1)?;
        // The vGPU stops with work in flight (GVT-g keeps the queue of the
        // engines the reset did not touch): drain through the idle vGPU,
        // and make no decision while the barrier is pending.
        e.stop_keeping_queued(a)?;
        assert!(!e.may_dispatch(a, 1));
        assert_eq!(g.pick_next(&e, &p, false), GvtgAnswer::Idle);
        assert_eq!(g.pick_next(&e, &p, true), GvtgAnswer::Keep);
        e.completed(a, 0, 500_000)?;
        assert_eq!(g.pick_next(&e, &p, false), GvtgAnswer::Keep);
        // GVT-g switched to the idle vGPU: ask for a decision, which is
        // idle (a stopped).
        assert!(g.switched(true));
        assert_eq!(g.pick_next(&e, &p, false), GvtgAnswer::Idle);
        assert_eq!(e.vgpu_stats(a).map(|s| s.completed), Some(1));
        // The kept workload is still counted until GVT-g discards it (at
        // destruction, one `cancelled` per queued workload).
        assert_eq!(e.vgpu_stats(a).map(|s| s.queue_depth), Some(1));
        e.cancelled(a, 1)?;
        // Counts out of step are refused, not trusted.
        assert_eq!(e.completed(a, 0, 1), Err(EINVAL));
        assert_eq!(e.cancelled(a, 1), Err(EINVAL));
        e.detach_vgpu(a)?;
        e.unplace_vgpu(&p, a)?;
        Ok(())
    }

    #[test]
    fn core_errors_map_to_their_errno() {
        // The only place the core's errors become errno values.
        assert_eq!(errno(CoreError::Invalid), EINVAL);
        assert_eq!(errno(CoreError::OutOfRange), ERANGE);
        assert_eq!(errno(CoreError::Busy), EBUSY);
        assert_eq!(errno(CoreError::NoSpace), ENOSPC);
        assert_eq!(errno(CoreError::Exists), EEXIST);
        assert_eq!(EINVAL.to_errno(), -22);
        assert_eq!(ERANGE.to_errno(), -34);
        assert_eq!(EBUSY.to_errno(), -16);
        assert_eq!(ENOSPC.to_errno(), -28);
        assert_eq!(EEXIST.to_errno(), -17);
    }

    #[test]
    fn every_tunable_has_exactly_one_sysfs_file() {
        // The core names no tunable: the sysfs table is the only place its
        // file is named, so each tunable must appear there once.
        for t in Tunable::ALL {
            let files = GPU_FILES
                .iter()
                .filter(|(_, knob)| matches!(knob, GpuKnob::Sched(k) if *k == t))
                .count();
            assert_eq!(files, 1);
        }
    }
}
