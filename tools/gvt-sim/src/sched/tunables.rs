// SPDX-License-Identifier: GPL-2.0

//! The names of the core's tunables on the command line (`--set`).
//!
//! They are the kernel's sysfs file names
//! (`Documentation/ABI/testing/sysfs-class-gvt_rs`), so that a setting
//! reads the same in the simulator as on a host. The core knows no names:
//! the kernel's table is `drivers/gvt-rs/engine/sysfs.rs`; a test below
//! holds this one to the ABI document.

use gvt_core::sched::Tunable;

/// The sysfs file name of `t`.
pub fn name(t: Tunable) -> &'static str {
    match t {
        Tunable::TbsTickUs => "tbs_tick_us",
        Tunable::TbsBalanceMs => "tbs_balance_ms",
        Tunable::TbsStages => "tbs_stages",
        Tunable::TbsStartBoostMs => "tbs_start_boost_ms",
        Tunable::VmcgSliceCeilingUs => "slice_ceiling_us",
        Tunable::VmcgMinSliceUs => "slice_min_us",
        Tunable::VmcgCreditPool => "credit_pool",
        Tunable::VmcgBatch => "dispatch_batch",
        Tunable::VmcgLinkMbps => "pcie_link_mbps",
        Tunable::VmcgGmTotalMb => "gm_total_mb",
        Tunable::SfqSliceUs => "sfq_slice_us",
        Tunable::SfqWakeMaxVf => "sfq_wake_keeps_debt",
        Tunable::SfqWakePreempt => "sfq_wake_preempt",
        Tunable::Throttle => "throttle",
        Tunable::ThrottleFactorPct => "throttle_factor_pct",
        Tunable::WindowMs => "fairness_window_ms",
        Tunable::IdleThresholdUs => "idle_threshold_us",
        Tunable::InteractiveCalls => "interactive_calls",
        Tunable::InteractiveGapUs => "interactive_gap_us",
        Tunable::AnticipateUs => "anticipate_us",
    }
}

/// The tunable whose sysfs file is `name`.
pub fn by_name(name: &str) -> Option<Tunable> {
    Tunable::ALL.into_iter().find(|&t| self::name(t) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for t in Tunable::ALL {
            assert_eq!(by_name(name(t)), Some(t));
        }
        assert_eq!(by_name("nosuch"), None);
    }

    /// Every name is a documented file of a GPU's sysfs directory.
    #[test]
    fn names_are_the_documented_sysfs_files() {
        let abi = include_str!("../../../../Documentation/ABI/testing/sysfs-class-gvt_rs");
        for t in Tunable::ALL {
            let what = format!("What:\t\t/sys/class/gvt_rs/<gpu>/{}\n", name(t));
            assert!(
                abi.contains(&what),
                "{} is not in the ABI document",
                name(t)
            );
        }
    }
}
