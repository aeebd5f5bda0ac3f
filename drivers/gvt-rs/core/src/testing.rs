// SPDX-License-Identifier: GPL-2.0

//! Test support shared by the core's own tests and the host tools.
//!
//! Compiled only for `cargo test` of this crate and when the `testing`
//! feature is enabled (`tools/gvt-sim` enables it). The kernel module never
//! sees this file: it includes `gvt_core.rs` directly, not this crate's
//! `lib.rs`, which is where the module is declared.

mod gpu;

pub use gpu::{
    Event,
    Gpu,
    Recorder, //
};

use crate::VgpuId;

/// A test's vGPU number as an id; panics (fails the test) at
/// [`crate::MAX_VGPUS`] and above.
pub fn vid<T: TryInto<usize>>(n: T) -> VgpuId {
    n.try_into()
        .ok()
        .and_then(VgpuId::new)
        .expect("a vGPU id below MAX_VGPUS")
}

/// Deterministic pseudo-random numbers for tests and simulations: the one
/// generator of the property tests and the simulators (no external crates,
/// the same sequence on every machine and toolchain).
///
/// [`Rng::new`] is xorshift64* (Marsaglia's xorshift with shifts 12, 25, 27,
/// the state multiplied by `0x2545_f491_4f6c_dd1d` on output): use it for
/// anything new. [`Rng::xorshift64`] is plain xorshift64 (shifts 13, 7, 17,
/// the state itself as output), kept because the scheduling simulator's
/// published tables were generated with it for their service-time jitter;
/// changing its variant would change those tables. Both are seeded the
/// same way, and [`Rng::below`], [`Rng::range`] and [`Rng::shuffle`] draw
/// from either.
///
/// Not for cryptography, and `below` has the small modulo bias of
/// `next_u64() % n`, irrelevant for test inputs.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    plain: bool,
}

impl Rng {
    /// The state a seed starts from: a Fibonacci-hashed seed, made odd so
    /// that it is never the all-zero state that xorshift cannot leave
    /// (every seed, 0 included, is usable).
    const fn seed_state(seed: u64) -> u64 {
        seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
    }

    /// An xorshift64* generator from `seed`.
    pub const fn new(seed: u64) -> Self {
        Rng {
            state: Self::seed_state(seed),
            plain: false,
        }
    }

    /// A plain xorshift64 generator from `seed`, the scheduling simulator's
    /// variant (see the type's documentation); new code should use
    /// [`Rng::new`].
    pub const fn xorshift64(seed: u64) -> Self {
        Rng {
            state: Self::seed_state(seed),
            plain: true,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        if self.plain {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.state = x;
            x
        } else {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.state = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// Uniform in `0..n`; 0 when `n` is 0 (one draw either way).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64().checked_rem(n).unwrap_or(0)
    }

    /// Uniform in `lo..=hi` (`lo <= hi`; one draw).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        match hi.wrapping_sub(lo).checked_add(1) {
            Some(n) => lo.wrapping_add(self.below(n)),
            // `0..=u64::MAX`: every value.
            None => self.next_u64(),
        }
    }

    /// Shuffles `v` in place (Fisher-Yates, one draw per element but the
    /// first).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let bound = u64::try_from(i).map_or(u64::MAX, |i| i.saturating_add(1));
            let j = usize::try_from(self.below(bound)).unwrap_or(0);
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::Rng;
    use std::vec::Vec;

    /// The first outputs of both variants for seed 1, pinned: the
    /// simulators' tables depend on these exact sequences.
    #[test]
    fn sequences_are_pinned() {
        let mut star = Rng::new(1);
        let mut plain = Rng::xorshift64(1);
        let s: Vec<u64> = (0..3).map(|_| star.next_u64()).collect();
        let p: Vec<u64> = (0..3).map(|_| plain.next_u64()).collect();
        assert_eq!(s, SEED1_STAR);
        assert_eq!(p, SEED1_PLAIN);
    }

    const SEED1_STAR: [u64; 3] = [
        0x0d83_b3e2_9a21_487a,
        0x54c4_4c79_f1fe_9d67,
        0xa845_f342_007a_0e78,
    ];
    const SEED1_PLAIN: [u64; 3] = [
        0xdc1b_77ae_0bf3_4dad,
        0x64f0_eeb9_026e_6076,
        0x7b07_ce91_e590_6136,
    ];

    #[test]
    fn deterministic_bounded_and_seed_zero_usable() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..8).map(|_| b.next_u64()).collect::<Vec<_>>());
        let mut c = Rng::new(8);
        assert_ne!(xs, (0..8).map(|_| c.next_u64()).collect::<Vec<_>>());
        assert_ne!(Rng::new(0).next_u64(), 0);
        assert_ne!(Rng::xorshift64(0).next_u64(), 0);
        for mut r in [Rng::new(3), Rng::xorshift64(3)] {
            for _ in 0..1000 {
                assert!(r.below(5) < 5);
                assert_eq!(r.below(0), 0);
                assert!((10..=20).contains(&r.range(10, 20)));
                assert_eq!(r.range(4, 4), 4);
            }
            let _ = r.range(0, u64::MAX);
            let mut v: Vec<u32> = (0..50).collect();
            r.shuffle(&mut v);
            assert_ne!(v, (0..50).collect::<Vec<_>>());
            v.sort_unstable();
            assert_eq!(v, (0..50).collect::<Vec<_>>());
        }
    }
}
