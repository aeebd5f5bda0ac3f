// SPDX-License-Identifier: GPL-2.0

//! The policies a GPU can run, selectable at run time.

/// Scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Upstream GVT-g's time-based scheduler (the baseline).
    Tbs,
    /// VMCG: credits from Eq. 2 and CPU-time-scaled slices.
    Vmcg,
    /// FairGV: start-time fair queueing on measured GPU time.
    Sfq,
    /// `sfq`'s tags and charges with EEVDF's choice (eligible vGPU with the
    /// earliest virtual deadline), deadline-based wake-up preemption and
    /// the GPU held idle only for interactive vGPUs.
    Eevdf,
}

impl Policy {
    /// Every policy, in sysfs listing order.
    pub const ALL: [Policy; 4] = [Policy::Tbs, Policy::Vmcg, Policy::Sfq, Policy::Eevdf];

    /// Name as shown and accepted by sysfs.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Tbs => "tbs",
            Policy::Vmcg => "vmcg",
            Policy::Sfq => "sfq",
            Policy::Eevdf => "eevdf",
        }
    }

    /// Whether the policy keeps `sfq`'s start tags (`sfq` and `eevdf`).
    pub const fn fair_queueing(self) -> bool {
        matches!(self, Policy::Sfq | Policy::Eevdf)
    }

    /// Parses a name (exact match; the caller strips a trailing newline).
    pub fn from_name(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.name() == s)
    }
}
