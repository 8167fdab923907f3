//! A fast, branch-free `exp` for non-positive arguments (the Gaussian kernel's range).
//!
//! `exp(x) = 2^k · e^r` with `k = round(x / ln 2)` (Cody–Waite reduction, `ln 2` split in a
//! high part with trailing zeros and a low part, so `k · LN2_HI` is exact) and
//! `|r| ≤ ln(2)/2`; `e^r` is its degree-12 Taylor polynomial (truncation error
//! `≤ (ln 2 / 2)^13 / 13! < 1.7e-16`) evaluated by Estrin's scheme (depth 4, so the loop is
//! throughput- rather than latency-bound); `2^k` is built from its bit
//! pattern. There are no branches and no float-to-int casts, so the loop vectorises, and only
//! `+`, `−`, `×` appear (no FMA), so results are bit-identical on every target.
//!
//! **Stated error**: for `x ∈ [−708, 0]` the relative error against the correctly rounded
//! value is below `1e-15` (about 4.5 ulp; tested on a dense grid against `libm::exp`, see the
//! tests below). For `x < −708` (including `−∞`) the result is exactly `0` where the true value
//! is below `3.4e-308`, an absolute error smaller than any kernel sum can resolve. The
//! result is always in `[0, 1]`.

const LOG2E: f64 = core::f64::consts::LOG2_E;
const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
/// 1.5 · 2^52: adding and subtracting it rounds to the nearest integer, and the low bits of
/// the sum hold that integer.
const SHIFT: f64 = 6_755_399_441_055_744.0;
const C2: f64 = 1.0 / 2.0;
const C3: f64 = 1.0 / 6.0;
const C4: f64 = 1.0 / 24.0;
const C5: f64 = 1.0 / 120.0;
const C6: f64 = 1.0 / 720.0;
const C7: f64 = 1.0 / 5040.0;
const C8: f64 = 1.0 / 40320.0;
const C9: f64 = 1.0 / 362_880.0;
const C10: f64 = 1.0 / 3_628_800.0;
const C11: f64 = 1.0 / 39_916_800.0;
const C12: f64 = 1.0 / 479_001_600.0;

/// `exp(x)` for `x ≤ 0` with the error stated in the module docs. Positive inputs are
/// treated as `0` (result 1); NaN gives 0 (callers never pass NaN).
#[inline(always)]
#[must_use]
pub(crate) fn exp_nonpos(x0: f64) -> f64 {
    // Plain comparisons (they vectorise as compare + blend); NaN fails `x0 >= -708` and is
    // replaced by the lower end, so no NaN survives.
    let x = if x0 >= -708.0 { x0 } else { -708.0 };
    let x = if x > 0.0 { 0.0 } else { x };
    let t = x * LOG2E + SHIFT;
    let kf = t - SHIFT;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    // Estrin's scheme: the degree-12 polynomial as a tree of depth 4 (pairs, then powers
    // r², r⁴, r⁸), so consecutive evaluations overlap in the pipeline instead of waiting on a
    // 12-step Horner chain. Fixed operation order, no FMA: bit-identical on every target.
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let a0 = 1.0 + r;
    let a1 = C2 + C3 * r;
    let a2 = C4 + C5 * r;
    let a3 = C6 + C7 * r;
    let a4 = C8 + C9 * r;
    let a5 = C10 + C11 * r;
    let b0 = a0 + a1 * r2;
    let b1 = a2 + a3 * r2;
    let b2 = a4 + a5 * r2;
    let c0 = b0 + b1 * r4;
    let c1 = b2 + C12 * r4;
    let p = c0 + c1 * r8;
    // k ∈ [−1022, 0]; bits(t) − bits(SHIFT) = k in two's complement, so the biased exponent
    // k + 1023 ∈ [1, 1023] is formed with wrapping integer arithmetic.
    let k_biased = t.to_bits().wrapping_sub(SHIFT.to_bits()).wrapping_add(1023);
    let scale = f64::from_bits(k_biased << 52);
    let v = p * scale;
    // `x0 >= -708.0` is false for NaN and for anything below the cut.
    let v = if x0 >= -708.0 { v } else { 0.0 };
    if v > 1.0 { 1.0 } else { v }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact special values are the point
mod tests {
    use super::exp_nonpos;

    #[test]
    fn matches_libm_to_stated_relative_error() {
        // Dense grid plus the reduction boundaries k·ln2/2.
        let mut worst: f64 = 0.0;
        let n = 400_000;
        for i in 0..=n {
            let x = -708.0 * f64::from(i) / f64::from(n);
            for y in [x, x.next_up().min(0.0), x.next_down()] {
                if y < -708.0 {
                    continue;
                }
                let e = libm::exp(y);
                let rel = ((exp_nonpos(y) - e) / e).abs();
                worst = worst.max(rel);
            }
        }
        for k in 0..2044 {
            let x = -f64::from(k) * core::f64::consts::LN_2 / 2.0;
            if x < -708.0 {
                break;
            }
            let e = libm::exp(x);
            worst = worst.max(((exp_nonpos(x) - e) / e).abs());
        }
        assert!(worst < 1e-15, "worst relative error {worst:e}");
    }

    #[test]
    fn special_values() {
        assert_eq!(exp_nonpos(0.0), 1.0);
        assert_eq!(exp_nonpos(-0.0), 1.0);
        assert_eq!(exp_nonpos(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp_nonpos(-709.0), 0.0);
        assert_eq!(exp_nonpos(f64::NAN), 0.0);
        assert_eq!(exp_nonpos(5.0), 1.0);
        assert!(exp_nonpos(-708.0) > 0.0);
        assert!(exp_nonpos(-1e-300) <= 1.0);
    }
}
