// SPDX-License-Identifier: GPL-2.0

//! `vmcg`: credits from Eq. 2 and CPU-time-scaled slices (`Vmcg`, in
//! `../vmcg.rs`).

use super::{
    super::{
        vmcg::VmcgCfg,
        Scheduler,
        Tunable, //
        VgpuId,
    },
    PolicyOps, //
};

/// The ops of `vmcg`.
pub(super) struct VmcgOps;

/// The `vmcg` tunables, in the units its bookkeeping takes.
fn cfg<const N: usize>(s: &Scheduler<N>) -> VmcgCfg {
    VmcgCfg {
        ceiling_ns: s.tun.us(Tunable::VmcgSliceCeilingUs),
        min_slice_ns: s.tun.us(Tunable::VmcgMinSliceUs),
        pool: s.tun.get(Tunable::VmcgCreditPool).min(u64::from(u32::MAX)) as u32,
        batch: s.tun.get(Tunable::VmcgBatch).min(u64::from(u32::MAX)) as u32,
        link_mbps: s.tun.get(Tunable::VmcgLinkMbps),
        gm_total_mb: s.tun.get(Tunable::VmcgGmTotalMb),
    }
}

impl<const N: usize> PolicyOps<N> for VmcgOps {
    fn started(&self, s: &mut Scheduler<N>, id: VgpuId, _restart: bool, now: u64) {
        s.vmcg.start(id, &s.v[id], now);
    }

    fn dispatched(&self, s: &mut Scheduler<N>, c: VgpuId) {
        let cfg = cfg(s);
        s.vmcg.dispatched(c, &cfg);
    }

    fn may_dispatch(&self, s: &mut Scheduler<N>, c: VgpuId) -> bool {
        s.vmcg.can_dispatch(c, &s.backlogged)
    }

    fn turn_over(&self, s: &Scheduler<N>, c: VgpuId, now: u64) -> bool {
        s.turn_expired(c, now) || s.vmcg.denied
    }

    fn pick_next(&self, s: &mut Scheduler<N>, _prev: Option<VgpuId>, now: u64) -> Option<VgpuId> {
        let lim = s.throttle_limit();
        let cfg = cfg(s);
        let thr = &s.thr;
        let el = |id: VgpuId| thr.usage(id) <= lim;
        s.vmcg.pick(now, &s.v, &s.backlogged, &cfg, &el)
    }

    fn begin_turn(&self, s: &mut Scheduler<N>, id: VgpuId) -> u64 {
        s.vmcg.begin_turn();
        s.vmcg.slice_ns[id]
    }
}
