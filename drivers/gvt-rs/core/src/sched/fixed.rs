// SPDX-License-Identifier: GPL-2.0

//! Integer arithmetic helpers: fixed point without floating point or 128-bit types.
//!
//! The kernel's `compiler_builtins` has no `__udivti3`/`__multi3`, so a 64x64
//! multiplication that may exceed 64 bits is done here with two 64-bit halves
//! and a restoring long division. Everything saturates or returns `None`
//! instead of panicking.

/// One in Q16 fixed point (16 fractional bits).
pub(crate) const Q16_ONE: u64 = 1 << 16;

/// Parts per million: the unit of shares and fairness figures.
pub(crate) const PPM: u64 = 1_000_000;

/// Full 128-bit product of two `u64`, as `(high, low)` halves.
pub(crate) const fn mul_wide(a: u64, b: u64) -> (u64, u64) {
    let (a1, a0) = (a >> 32, a & 0xffff_ffff);
    let (b1, b0) = (b >> 32, b & 0xffff_ffff);
    // Each partial product of two 32-bit halves fits in 64 bits.
    let p00 = a0.wrapping_mul(b0);
    let p01 = a0.wrapping_mul(b1);
    let p10 = a1.wrapping_mul(b0);
    let p11 = a1.wrapping_mul(b1);
    // Middle column: at most 3 * (2^32 - 1), fits in 64 bits.
    let mid = (p00 >> 32)
        .wrapping_add(p01 & 0xffff_ffff)
        .wrapping_add(p10 & 0xffff_ffff);
    let lo = (p00 & 0xffff_ffff) | (mid << 32);
    let hi = p11
        .wrapping_add(p01 >> 32)
        .wrapping_add(p10 >> 32)
        .wrapping_add(mid >> 32);
    (hi, lo)
}

/// `(a * b) / d` computed exactly (truncated), or `None` if `d == 0` or the
/// quotient does not fit in 64 bits.
pub(crate) fn mul_div(a: u64, b: u64, d: u64) -> Option<u64> {
    if d == 0 {
        return None;
    }
    if let Some(p) = a.checked_mul(b) {
        return p.checked_div(d);
    }
    let (hi, lo) = mul_wide(a, b);
    if hi >= d {
        return None;
    }
    // Restoring division of the 128-bit (hi, lo) by d; hi < d so the
    // quotient fits in 64 bits and the remainder stays below d.
    let mut rem = hi;
    let mut q: u64 = 0;
    let mut i = 64u32;
    while i > 0 {
        i = i.saturating_sub(1);
        let carry = rem >> 63;
        rem = (rem << 1) | ((lo >> i) & 1);
        q <<= 1;
        if carry != 0 || rem >= d {
            rem = rem.wrapping_sub(d);
            q |= 1;
        }
    }
    Some(q)
}

/// `(a * b) / d` rounded to nearest (ties up), or `None` as [`mul_div`].
pub(crate) fn mul_div_round(a: u64, b: u64, d: u64) -> Option<u64> {
    let q = mul_div(a, b, d)?;
    // Remainder test without overflow: compare 2 * (a*b - q*d) with d by
    // recomputing the quotient of (2ab) / d.
    let q2 = mul_div(a, b.checked_mul(2)?, d).or_else(|| {
        // b * 2 overflowed: fall back to a * 2 when possible.
        mul_div(a.checked_mul(2)?, b, d)
    });
    match q2 {
        Some(q2) if q2 & 1 == 1 => q.checked_add(1),
        Some(_) => Some(q),
        None => Some(q),
    }
}

/// `(a * b) / d` saturating at `u64::MAX`; `d == 0` gives `u64::MAX` unless
/// the product is zero.
pub(crate) fn mul_div_sat(a: u64, b: u64, d: u64) -> u64 {
    if a == 0 || b == 0 {
        return 0;
    }
    mul_div(a, b, d).unwrap_or(u64::MAX)
}

/// `1/k!` in Q30, `k = 0..=12` (terms beyond 12 are below 2^-30 for `x <= 1`).
const INV_FACT_Q30: [u64; 13] = [
    1_073_741_824,
    1_073_741_824,
    536_870_912,
    178_956_971,
    44_739_243,
    8_947_849,
    1_491_308,
    213_044,
    26_631,
    2_959,
    296,
    27,
    2,
];

/// `e^x` for `x` in Q16 clamped to `[0, 1]`, returned in Q16.
///
/// Taylor series in Q30 with precomputed `1/k!` (no division): the
/// truncation and rounding errors stay below 2^-26, so the result is exact
/// to +-1 LSB of Q16 (1.5e-5) and lies in `[65536, 178145]`.
pub(crate) fn exp_q16(x: u64) -> u64 {
    let x30 = x.min(Q16_ONE) << 14;
    let mut p: u64 = 1 << 30; // x^k in Q30, <= 2^30
    let mut sum: u64 = 0;
    for c in INV_FACT_Q30 {
        // c <= 2^30 and p <= 2^30: the product fits in 64 bits.
        sum = sum.saturating_add(c.saturating_mul(p) >> 30);
        p = p.saturating_mul(x30) >> 30;
    }
    sum.saturating_add(1 << 13) >> 14
}

/// Difference `a - b` of two wrapping virtual times, as a signed value.
///
/// Virtual times are compared like the kernel compares jiffies: correct as
/// long as the two values are less than 2^63 apart.
pub(crate) const fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_exact_and_wide() {
        assert_eq!(mul_div(10, 20, 3), Some(66));
        assert_eq!(mul_div(1, 1, 0), None);
        // 2^63 * 6 / 4 = 3 * 2^62 needs a 128-bit intermediate.
        assert_eq!(mul_div(1 << 63, 6, 4), Some(3 << 62));
        assert_eq!(mul_div(u64::MAX, u64::MAX, u64::MAX), Some(u64::MAX));
        assert_eq!(mul_div(u64::MAX, 2, 1), None);
        assert_eq!(
            mul_div(0xdead_beef_cafe_babe, 0x1234_5678_9abc, 0x1234_5678_9abc),
            Some(0xdead_beef_cafe_babe)
        );
        assert_eq!(mul_div_sat(u64::MAX, 3, 1), u64::MAX);
        assert_eq!(mul_div_sat(0, 3, 0), 0);
    }

    #[test]
    fn mul_div_round_nearest() {
        assert_eq!(mul_div_round(100, 35, 103), Some(34)); // 33.98
        assert_eq!(mul_div_round(100, 34, 103), Some(33)); // 33.01
        assert_eq!(mul_div_round(1, 1, 2), Some(1)); // tie up
        assert_eq!(mul_div_round(1, 1, 3), Some(0));
        assert_eq!(mul_div_round(5, 1, 0), None);
    }

    #[test]
    fn exp_values() {
        assert_eq!(exp_q16(0), Q16_ONE);
        // e = 2.718281828 -> 178145.0 in Q16.
        assert!(exp_q16(Q16_ONE).abs_diff(178_145) <= 1);
        // e^0.5 = 1.6487212707 -> 108051.6
        assert!(exp_q16(Q16_ONE / 2).abs_diff(108_052) <= 1);
        // Clamped above 1.
        assert_eq!(exp_q16(10 * Q16_ONE), exp_q16(Q16_ONE));
    }

    #[test]
    fn vdiff_wraps() {
        assert!(vdiff(5, u64::MAX - 5) > 0);
        assert!(vdiff(u64::MAX - 5, 5) < 0);
        assert_eq!(vdiff(7, 7), 0);
    }
}
