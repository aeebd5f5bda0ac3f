// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the policy core as compiled into the module.
//!
//! The core is tested thoroughly on the host (`cargo test`); these tests run
//! a few of the papers' worked examples inside the kernel, with the kernel's
//! compiler flags, overflow checks and debug assertions, to show that the
//! very same code gives the very same answers there.

#[kernel::macros::kunit_tests(gvt_rs_core)]
mod tests {
    use crate::gvt_core::{
        sched::{
            Pick,
            Policy,
            Scheduler,
            Tunable, //
        },
        slots::{
            AllocatorKind,
            PoolConfig,
            SlotPool,
            ENTRIES_PER_SLOT, //
        },
        Error as CoreError,
        VgpuId, //
    };
    use kernel::prelude::*;

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    type Pool = SlotPool<4, 16>;

    /// The id of a test's vGPU `n`.
    fn v(n: usize) -> Result<VgpuId> {
        VgpuId::new(n).ok_or(EINVAL)
    }

    fn sched() -> Result<KVBox<Scheduler<4>>> {
        // Its tables have an entry for every possible id whatever its
        // limit (80 KB): copied from read-only data into the heap, never
        // built on the kernel stack (as the engine does).
        crate::engine::boxed_copy(&const { Scheduler::<4>::new() })
    }

    fn pool(slots: u16, allocator: AllocatorKind) -> Result<KVBox<Pool>> {
        // A pool is several KB and `SlotPool::new` needs more stack than
        // that: build the largest one at compile time (it is `const`), copy
        // it from read-only data straight into the heap, never on the kernel
        // stack (as the engine does), and shrink it to `slots` there.
        let init: &'static core::result::Result<Pool, CoreError> = &const {
            Pool::new(PoolConfig {
                slots: 16,
                low_entries: ENTRIES_PER_SLOT,
                allocator: AllocatorKind::Static,
            })
        };
        let init = init.as_ref().map_err(|_| EINVAL)?;
        let mut b = crate::engine::boxed_copy(init)?;
        b.reconfigure(slots, ENTRIES_PER_SLOT).map_err(|_| EINVAL)?;
        b.set_allocator(allocator).map_err(|_| EINVAL)?;
        Ok(b)
    }

    /// Round robin over vGPUs `0..4`, `rounds` times: high slots copied.
    fn round_robin(p: &mut Pool, rounds: u32, now: &mut u64) -> Result<u64> {
        let before = p.totals().high_slots;
        for _ in 0..rounds {
            for id in 0..4 {
                *now += 16 * MS;
                p.switch_in(v(id)?, *now).map_err(|_| EINVAL)?;
            }
        }
        Ok(p.totals().high_slots - before)
    }

    #[test]
    fn vmcg_worked_example() -> Result {
        // VMCG, Section 4: three DomUs with 34/33/33 pending requests and
        // 16/15/15 ms of CPU per 100 ms get credits 34/33/33 and slices
        // 16/15/15 ms, served in descending slice order.
        let mut s = sched()?;
        assert_eq!(s.set_policy(Policy::Vmcg, 0), Ok(()));
        for id in 0..3 {
            assert_eq!(s.create(v(id)?, 1, 512), Ok(()));
            assert_eq!(s.start(v(id)?, 0), Ok(()));
        }
        for (id, n) in [(0, 34), (1, 33), (2, 33)] {
            for _ in 0..n {
                assert_eq!(s.queued(v(id)?, 0, 0), Ok(()));
            }
        }
        assert_eq!(s.cpu_time(v(0)?, 16 * MS), Ok(()));
        assert_eq!(s.cpu_time(v(1)?, 15 * MS), Ok(()));
        assert_eq!(s.cpu_time(v(2)?, 15 * MS), Ok(()));
        assert_eq!(
            s.pick(100 * MS),
            Ok(Pick::Run {
                vgpu: v(0)?,
                slice_ns: 16 * MS,
                switched: true
            })
        );
        for (id, credits, slice_ms) in [(0, 34, 16), (1, 33, 15), (2, 33, 15)] {
            let st = s.stats(v(id)?).ok_or(EINVAL)?;
            assert_eq!(st.credits, credits);
            assert_eq!(st.slice_ns / MS, slice_ms);
        }
        // Nothing may be picked while a workload is in flight.
        assert_eq!(s.next_vgpu(0, 100 * MS), Some(v(0)?));
        assert_eq!(s.dispatched(v(0)?, 0, 0, 100 * MS), Ok(()));
        assert_eq!(s.pick(100 * MS), Err(CoreError::Busy));
        assert_eq!(s.completed(v(0)?, 0, 100 * US, 100 * MS), Ok(()));
        Ok(())
    }

    #[test]
    fn rejected_tunable_changes_nothing() -> Result {
        let mut s = sched()?;
        let t = Tunable::SfqSliceUs;
        let before = s.tunable(t);
        let (_, max) = t.range();
        assert_eq!(s.set_tunable(t, max + 1, 0), Err(CoreError::OutOfRange));
        assert_eq!(s.tunable(t), before);
        Ok(())
    }

    #[test]
    fn dymgpu_algorithm1_example() -> Result {
        // DymGPU, Algorithm 1: M = 5, S = (4, 4, 3, 2) gives P = (0, 1, 1, 1).
        let mut p = pool(5, AllocatorKind::DymSize)?;
        for (id, size) in [(0, 4u16), (1, 4), (2, 3), (3, 2)] {
            assert!(p.create(v(id)?, size, 0).is_ok());
        }
        for (id, start) in [(0, 0u16), (1, 1), (2, 1), (3, 1)] {
            assert_eq!(p.placement(v(id)?).map(|pl| pl.start), Some(start));
        }
        assert_eq!(p.shared_slots(), 3);
        Ok(())
    }

    #[test]
    fn fig4_copies_gscale_against_size_based() -> Result {
        // DymGPU Fig. 4: 12 slots, four vGPUs of 6 slots, round robin:
        // gScale copies 24 + 24(n - 1) slots, size-based 24 + 18(n - 1).
        for (kind, per_round) in [(AllocatorKind::Gscale, 24), (AllocatorKind::DymSize, 18)] {
            let mut p = pool(12, kind)?;
            for id in 0..4 {
                assert!(p.create(v(id)?, 6, 0).is_ok());
            }
            let mut now = 0;
            assert_eq!(round_robin(&mut p, 3, &mut now)?, 24 + per_round * 2);
        }
        Ok(())
    }

    #[test]
    fn oversized_vgpu_is_refused() -> Result {
        let mut p = pool(4, AllocatorKind::Gscale)?;
        assert_eq!(p.create(v(0)?, 5, 0).err(), Some(CoreError::OutOfRange));
        assert!(p.placement(v(0)?).is_none());
        Ok(())
    }
}
