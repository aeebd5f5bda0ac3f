// SPDX-License-Identifier: GPL-2.0

//! Synthetic workloads for the slot experiments.
//!
//! The paper publishes no traces, so each VM is a closed-loop renderer: it
//! submits one frame of GPU work, waits for it, "thinks" on the CPU, and
//! submits the next. The three classes stand for the paper's low, medium and
//! high GPU-utilization workloads (lightsmark, firefox-asteroids,
//! urbanterror); the same-workload experiments (nexuiz, Fig. 10a) use the
//! high class. Every duration is jittered uniformly by +-25 %, with the
//! core's shared test generator ([`Rng`], xorshift64*).

use gvt_core::testing::Rng;

/// `base` jittered uniformly by +-25 % (one draw of `rng`).
pub fn jitter(rng: &mut Rng, base: u64) -> u64 {
    let q = base / 4;
    rng.range(base - q, base + q)
}

/// GPU-utilization class of a VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// lightsmark: 3 ms of GPU work per frame, 300 ms of CPU (1 % alone).
    Low,
    /// firefox-asteroids: 6 ms GPU, 60 ms CPU (9 % alone).
    Medium,
    /// urbanterror / nexuiz: 12 ms GPU, 2 ms CPU (86 % alone).
    High,
}

impl Class {
    /// (GPU work, CPU think time) per frame, in ns.
    pub fn frame_ns(self) -> (u64, u64) {
        const MS: u64 = 1_000_000;
        match self {
            Class::Low => (3 * MS, 300 * MS),
            Class::Medium => (6 * MS, 60 * MS),
            Class::High => (12 * MS, 2 * MS),
        }
    }

    /// One-letter tag for tables.
    pub fn tag(self) -> char {
        match self {
            Class::Low => 'L',
            Class::Medium => 'M',
            Class::High => 'H',
        }
    }
}

/// One VM of an experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmSpec {
    /// Its workload class.
    pub class: Class,
    /// High-GM size in 64 MB slots.
    pub slots: u16,
}

impl VmSpec {
    /// Scheduling weight of the GVT-g type its size comes closest to
    /// (384 MB: 2, 512 MB: 4, 1024 MB: 8, 2048 MB: 16; 704 MB: 4).
    pub fn weight(&self) -> u32 {
        match self.slots {
            0..=6 => 2,
            7..=11 => 4,
            12..=16 => 8,
            _ => 16,
        }
    }
}

/// The paper's sizes: 384, 704 and 1024 MB.
pub const PAPER_SIZES: [u16; 3] = [6, 11, 16];

/// `n` VMs of one class with sizes 6/11/16 slots repeating in creation order
/// (the 1:1:1 mix of Section 4.2.1).
pub fn same_workload(n: usize, class: Class) -> Vec<VmSpec> {
    (0..n)
        .map(|i| VmSpec {
            class,
            slots: PAPER_SIZES[i % 3],
        })
        .collect()
}

/// Table 2: (lightsmark, firefox-asteroids, urbanterror) counts of sets 1-5.
pub const TABLE2: [(usize, usize, usize); 5] =
    [(11, 2, 2), (2, 2, 11), (3, 6, 6), (6, 3, 6), (6, 6, 3)];

/// A mixed set: the VMs of Table 2 set `set` (1-based), in a creation order
/// shuffled by `seed`, with sizes 6/11/16 repeating in creation order (the
/// paper does not give the sizes of these VMs).
pub fn mixed_set(set: usize, seed: u64) -> Vec<VmSpec> {
    let (l, m, h) = TABLE2[set - 1];
    let mut classes: Vec<Class> = std::iter::repeat_n(Class::Low, l)
        .chain(std::iter::repeat_n(Class::Medium, m))
        .chain(std::iter::repeat_n(Class::High, h))
        .collect();
    Rng::new(seed ^ 0x5eed).shuffle(&mut classes);
    classes
        .iter()
        .enumerate()
        .map(|(i, &class)| VmSpec {
            class,
            slots: PAPER_SIZES[i % 3],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_bounded() {
        let mut r = Rng::new(3);
        for _ in 0..1000 {
            let j = jitter(&mut r, 1000);
            assert!((750..=1250).contains(&j), "jitter {j}");
        }
        assert_eq!(jitter(&mut r, 3), 3);
    }

    #[test]
    fn sets_follow_table2_and_sizes_map_to_weights() {
        for (set, &(l, m, h)) in TABLE2.iter().enumerate() {
            let vms = mixed_set(set + 1, 11);
            assert_eq!(vms.len(), l + m + h);
            let count = |c| vms.iter().filter(|v| v.class == c).count();
            assert_eq!(
                (count(Class::Low), count(Class::Medium), count(Class::High)),
                (l, m, h)
            );
            let sizes: Vec<u16> = vms.iter().map(|v| v.slots).collect();
            assert_eq!(&sizes[..6], &[6, 11, 16, 6, 11, 16]);
            assert_eq!(vms, mixed_set(set + 1, 11), "same seed, same order");
        }
        let same = same_workload(4, Class::Medium);
        assert!(same.iter().all(|v| v.class == Class::Medium));
        assert_eq!(
            same.iter().map(|v| v.slots).collect::<Vec<_>>(),
            [6, 11, 16, 6]
        );
        let w = |slots| {
            VmSpec {
                class: Class::Low,
                slots,
            }
            .weight()
        };
        assert_eq!(
            [w(6), w(7), w(11), w(12), w(16), w(17), w(32)],
            [2, 4, 4, 8, 8, 16, 16]
        );
        // Every class renders slower on the GPU than its class below.
        assert!(Class::Low.frame_ns().0 < Class::Medium.frame_ns().0);
        assert!(Class::Medium.frame_ns().0 < Class::High.frame_ns().0);
        assert_eq!(
            [Class::Low.tag(), Class::Medium.tag(), Class::High.tag()],
            ['L', 'M', 'H']
        );
    }
}
