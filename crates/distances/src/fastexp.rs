//! Fast, branch-free `exp`s for non-positive arguments (the kernels' range), one per
//! [`KernelVersion`](crate::KernelVersion).
//!
//! ## Version 1 ([`exp_nonpos_v1`])
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
//! value is below `1e-15` (about 4.5 ulp; tested on a dense grid against `libm::exp` and
//! against the 50-digit table `tests/data/transcendental.txt`, see the tests below). For
//! `x < −708` (including `−∞`) the result is exactly `0` where the true value is below
//! `3.4e-308`, an absolute error smaller than any kernel sum can resolve. The result is always
//! in `[0, 1]`. About 42 floating-point and integer operations per value.
//!
//! ## Version 2 ([`exp_nonpos_v2`]): 32 operations instead of 42
//!
//! The same reduction `x = k ln 2 + r`, `|r| ≤ ln(2)/2`, with three operations fewer and a
//! shorter polynomial:
//!
//! - **one-constant reduction** `r = x − k·LN2` (`LN2` = `ln 2` rounded to `f64`). For
//!   `|k| ≥ 1` the subtraction is exact (Sterbenz: `x` and `k·LN2` are within a factor 2), so
//!   `r` is off by the rounding of `k·LN2` plus `|k|·|LN2 − ln 2|`, at most `|k|·1.0e-16`; the
//!   result `2^k e^r` is then off by at most `2^k·√2·|k|·1.0e-16 ≤ 7.1e-17` absolutely (largest
//!   at `k = −1, −2`; relatively up to `|k|·1.0e-16`, which only matters where the value is
//!   below `2^-9`, i.e. far below what a kernel sum of values in `[0, 1]` resolves). For
//!   `k = 0` there is no reduction error.
//! - **a degree-10 minimax polynomial** `1 + r + Σ_{p=2..10} c_p r^p` (Remez fit of the relative
//!   error on `|r| ≤ ln(2)/2`, coefficients from `tests/data/gen_transcendental.py
//!   --coefficients`): approximation error `≤ 2.91e-16` relative with the `f64` coefficients,
//!   evaluated by Estrin's scheme (depth 4) in 21 operations instead of the degree-12 Taylor
//!   polynomial's 26; the rounding of the evaluation is at most `4.2 u` relative (`u = 2⁻⁵³`;
//!   first-order running-error bound computed by the same script).
//! - **scaling by adding `k` to the exponent field** of `p` (`p ∈ [0.70, 1.42]` and
//!   `k ∈ [−1021, 0]` keep the result normal): one integer shift and add instead of building
//!   `2^k` and multiplying. `k·2⁵²` is the low bits of `t = x·log₂e + 1.5·2⁵²` shifted up by
//!   52 (the high bits of `1.5·2⁵²` shift out).
//! - inputs below `−708` (and NaN) are clamped to `−708` rather than selected to `0`: the
//!   result is `e^{−708} ≈ 3.3e-308` there, an absolute error below `3.4e-308`.
//!
//! **Stated error** (version 2): for every `x ≤ 0` the absolute error is below `7.6e-16`
//! (from the terms above: for `k = 0` the value is at most 1 and the error at most
//! `2.91e-16 + 4.2 u`; for `k ≤ −1` the value is at most `0.71` and the reduction adds at most
//! `7.1e-17`), inside the `1e-15` that [`crate::sensitivity::rounding_slack`] allows. Measured:
//! at most `3.5e-16` on the 50-digit table (`tests/data/transcendental.txt`; the test asserts
//! `< 6e-16`) and `4.5e-16` against `libm::exp` (itself within an ulp) on a dense grid. The
//! result is in `(0, 1]`. Only `+ − ×` and integer operations, in a fixed order: bit-identical
//! on every target and dispatch level.
//!
//! ## Version 3 ([`exp_nonpos_v3`]): version 2 with fused multiply-adds, 21 operations
//!
//! Version 2's reduction, coefficients, Estrin tree and exponent-field scaling, with every
//! `a·b + c` computed as one fused multiply-add `fma(a, b, c) = RN(a·b + c)` (IEEE 754,
//! correctly rounded: [`fma`]): `t = fma(x, log₂e, 1.5·2⁵²)`, `r = fma(k, −LN2, x)`, the
//! eight polynomial nodes `fma(c_odd, r, c_even)`, `fma(a, r², a')`, `fma(b, r⁴, b')`,
//! `fma(b, r⁸, c)`. 21 operations per value instead of 32 (14 of them multiplies or fmas in
//! both), and the longest dependency chain 11 operations instead of 14. Because the fma is correctly
//! rounded, its result is one number whatever computes it — the `vfmadd` instruction at the
//! x86-64-v3 and -v4 dispatch levels, the runtime's `fma` function at the portable level,
//! `libm::fma` without `std` — so version 3 too is bit-identical on every target and level (pinned in
//! `tests/suite/value_stability.rs` at every level; `fma_is_fused_and_matches_libm` checks the
//! library and hardware fma against `libm`'s on 100 000 near-cancelling triples). **Where the
//! CPU has no FMA** (the portable level) each fma is a library call and version 3 is about 11×
//! slower than version 2 (crate README, run I): use version 2 there.
//!
//! **Stated error** (version 3): absolute error below `7.6e-16` for every `x ≤ 0`, version
//! 2's bound, because every term of its derivation is no larger:
//!
//! - `k` is the integer nearest to `x·LOG2E` (the fma rounds the exact `x·LOG2E + 1.5·2⁵²`
//!   to the integer grid), so `|r| ≤ ln(2)/2 + 708·|LOG2E − log₂e|·ln 2 < ln(2)/2 + 1e-13`:
//!   the polynomial's approximation error (`2.91e-16` relative on `|r| ≤ ln(2)/2`) grows by
//!   less than `1e-26` at that end.
//! - `r = RN(x − k·LN2)` (exact product, one rounding) is off from `x − k ln 2` by at most
//!   `2⁻⁵⁵ + |k|·|LN2 − ln 2| ≤ 2.8e-17 + |k|·2.4e-17` (no error for `k = 0`), so the result
//!   `2^k e^r` by at most `2^k·√2·(2.8e-17 + |k|·2.4e-17) ≤ 3.7e-17` (largest at `k = −1`),
//!   below version 2's `7.1e-17`.
//! - The evaluation: each fma node `RN(a·b + c)` has the first-order error `u·|a·b + c|`,
//!   where version 2's node `RN(RN(a·b) + c)` has `u·|a·b| + u·|a·b + c|`; the tree and
//!   coefficients are the same, so the running-error bound of version 3's evaluation is at
//!   most version 2's `4.2 u`.
//!
//! Measured: at most `3.5e-16` on the 50-digit table (asserted `< 6e-16`) and `4.5e-16`
//! against `libm::exp` on a dense grid and every reduction boundary `± 2 ulp`; 763 of the
//! table's 1 128 values differ from version 2's in the last bits (hence a new version).

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

/// Version 1: `exp(x)` for `x ≤ 0` with the error stated in the module docs. Positive inputs
/// are treated as `0` (result 1); NaN gives 0 (callers never pass NaN).
#[inline(always)]
#[must_use]
pub(crate) fn exp_nonpos_v1(x0: f64) -> f64 {
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

const LN2: f64 = core::f64::consts::LN_2;
// Version 2's polynomial: e^r ≈ 1 + r + Σ_{p=2..10} E_p r^p (Remez, relative error ≤ 2.91e-16
// on |r| ≤ ln2/2; `tests/data/gen_transcendental.py --coefficients`).
const E2: f64 = 0.499_999_999_999_983_24;
const E3: f64 = 0.166_666_666_666_115_54;
const E4: f64 = 0.041_666_666_668_136_47;
const E5: f64 = 0.008_333_333_370_870_293;
const E6: f64 = 0.001_388_888_851_623_173_5;
const E7: f64 = 0.000_198_411_852_359_232_68;
const E8: f64 = 2.480_193_171_217_015_6e-5;
const E9: f64 = 2.763_499_091_430_244e-6;
const E10: f64 = 2.747_679_931_146_893_6e-7;

/// Version 2: `exp(x)` for `x ≤ 0` with the error stated in the module docs (absolute error
/// below `7.6e-16`). Positive inputs are treated as `0` (result 1); `x < −708`, `−∞` and NaN
/// give `e^{−708}` (callers never pass NaN).
#[inline(always)]
#[must_use]
pub(crate) fn exp_nonpos_v2(x0: f64) -> f64 {
    // Plain comparisons (a `max` and a `min`); NaN fails `x0 >= -708` and becomes −708.
    let x = if x0 >= -708.0 { x0 } else { -708.0 };
    let x = if x > 0.0 { 0.0 } else { x };
    let t = x * LOG2E + SHIFT;
    let kf = t - SHIFT;
    let r = x - kf * LN2;
    // Estrin's scheme, fixed order, no FMA.
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let a0 = 1.0 + r;
    let a1 = E2 + E3 * r;
    let a2 = E4 + E5 * r;
    let a3 = E6 + E7 * r;
    let a4 = E8 + E9 * r;
    let b0 = a0 + a1 * r2;
    let b1 = a2 + a3 * r2;
    let b2 = a4 + E10 * r2;
    let p = (b0 + b1 * r4) + b2 * r8;
    // 2^k · p by adding k to p's exponent field: bits(t) = bits(1.5·2⁵²) + k with the low 12
    // bits of bits(1.5·2⁵²) zero, so bits(t) << 52 = k·2⁵² (mod 2⁶⁴).
    let v = f64::from_bits(p.to_bits().wrapping_add(t.to_bits() << 52));
    if v > 1.0 { 1.0 } else { v }
}

/// `a·b + c` with one rounding (IEEE 754 fused multiply-add, correctly rounded), the same bits
/// on every target: with `std`, `f64::mul_add` — one `vfmadd` instruction where the code is
/// compiled with FMA (the x86-64-v3 and -v4 dispatch levels), otherwise a call to the
/// runtime's correctly rounded `fma` function (the portable level: slow; on x86-64 Linux the
/// binary links compiler-builtins' port of it, which uses the FMA instruction when the CPU has
/// one and exact software otherwise); without `std`, `libm::fma` (the same port). Used by [`KernelVersion::V3`](crate::KernelVersion::V3) only.
#[inline(always)]
#[must_use]
pub(crate) fn fma(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        a.mul_add(b, c)
    }
    #[cfg(not(feature = "std"))]
    {
        libm::fma(a, b, c)
    }
}

const NEG_LN2: f64 = -core::f64::consts::LN_2;

/// Version 3: version 2's reduction, polynomial and scaling, each `a·b + c` of it fused
/// into one correctly rounded [`fma`]: 21 operations per value instead of 32, and shorter
/// dependency chains. Error stated in the module docs (absolute error below `7.6e-16`);
/// positive inputs give 1, `x < −708`, `−∞` and NaN give `e^{−708}`.
#[inline(always)]
#[must_use]
pub(crate) fn exp_nonpos_v3(x0: f64) -> f64 {
    let x = if x0 >= -708.0 { x0 } else { -708.0 };
    let x = if x > 0.0 { 0.0 } else { x };
    // t = RN(x·log₂e + 1.5·2⁵²): k = t − 1.5·2⁵² is the integer nearest to x·LOG2E.
    let t = fma(x, LOG2E, SHIFT);
    let kf = t - SHIFT;
    // r = RN(x − k·LN2), the product exact inside the fma.
    let r = fma(kf, NEG_LN2, x);
    // Version 2's Estrin tree, every node one fma.
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let a0 = 1.0 + r;
    let a1 = fma(E3, r, E2);
    let a2 = fma(E5, r, E4);
    let a3 = fma(E7, r, E6);
    let a4 = fma(E9, r, E8);
    let b0 = fma(a1, r2, a0);
    let b1 = fma(a3, r2, a2);
    let b2 = fma(E10, r2, a4);
    let p = fma(b2, r8, fma(b1, r4, b0));
    let v = f64::from_bits(p.to_bits().wrapping_add(t.to_bits() << 52));
    if v > 1.0 { 1.0 } else { v }
}

#[cfg(test)]
#[allow(clippy::float_cmp)] // exact special values are the point
mod tests {
    use super::exp_nonpos_v1 as exp_nonpos;

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

    /// The 50-digit reference table (`tests/data/gen_transcendental.py`): `e^x = hi + lo`.
    fn table() -> impl Iterator<Item = (f64, f64, f64)> {
        include_str!("../tests/data/transcendental.txt")
            .lines()
            .filter_map(|l| l.strip_prefix("exp "))
            .map(|l| {
                let mut it = l.split(' ');
                let mut hex =
                    || f64::from_bits(u64::from_str_radix(it.next().unwrap(), 16).unwrap());
                let (x, hi) = (hex(), hex());
                let lo: f64 = it.next().unwrap().parse().unwrap();
                (x, hi, lo)
            })
    }

    /// `|f(x) − e^x|` with `e^x = hi + lo` exactly enough: `f − hi` is exact (Sterbenz) when
    /// close, and `lo` is below half an ulp of `hi`.
    fn abs_err(f: f64, hi: f64, lo: f64) -> f64 {
        ((f - hi) - lo).abs()
    }

    /// Both versions against the 50-digit table over `[−708, 0]` (dense near 0, every
    /// reduction boundary `k·ln2/2 ± 2 ulp`): version 1 within `1e-15` relative, version 2
    /// within `6e-16` absolute (the module docs' bounds). Fails on a wrong coefficient or
    /// reduction constant: e.g. `E10` off by 1e-9 relative, or `LN2` one ulp off, gives
    /// errors far above the bounds (the table's points reach `k = −1021`).
    #[test]
    fn both_versions_within_stated_bounds_against_mpmath() {
        let (mut n, mut w1, mut w2) = (0, 0.0f64, 0.0f64);
        for (x, hi, lo) in table() {
            let e1 = abs_err(exp_nonpos(x), hi, lo) / hi;
            let e2 = abs_err(super::exp_nonpos_v2(x), hi, lo);
            assert!(e1 < 1e-15, "v1 x = {x:e}: relative error {e1:e}");
            assert!(e2 < 6e-16, "v2 x = {x:e}: absolute error {e2:e}");
            (w1, w2) = (w1.max(e1), w2.max(e2));
            n += 1;
        }
        assert!(n > 1000, "{n} table points");
        // The bounds are not loose by orders of magnitude: both versions use most of them.
        #[cfg(feature = "std")]
        std::println!("worst: v1 {w1:e} relative, v2 {w2:e} absolute");
        assert!(w1 > 1e-17 && w2 > 5e-17, "worst {w1:e} / {w2:e}");
    }

    /// Largest `|e(y) − libm::exp(y)|` over `n + 1` grid points of `[−708, 0]` (each with its
    /// neighbours and two scaled-down copies), and, with `boundaries`, every reduction
    /// boundary `k·ln2/2` ± 2 ulp.
    fn worst_against_libm(e: fn(f64) -> f64, n: u32, boundaries: bool) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..=n {
            let x = -708.0 * f64::from(i) / f64::from(n);
            for y in [x, x.next_up().min(0.0), x.next_down(), x * 1e-3, x * 1e-6] {
                if y < -708.0 {
                    continue;
                }
                worst = worst.max((e(y) - libm::exp(y)).abs());
            }
        }
        for k in 0..if boundaries { 2044 } else { 0 } {
            let mut y = -f64::from(k) * core::f64::consts::LN_2 / 2.0;
            for _ in 0..2 {
                y = y.next_down();
            }
            for _ in 0..5 {
                if (-708.0..=0.0).contains(&y) {
                    worst = worst.max((e(y) - libm::exp(y)).abs());
                }
                y = y.next_up();
            }
        }
        worst
    }

    /// Version 2 on the dense grid of version 1's test against `libm::exp` (which is within
    /// 1 ulp): absolute difference below `6e-16 + 2.3e-16`.
    #[test]
    fn v2_matches_libm_on_a_dense_grid() {
        let worst = worst_against_libm(super::exp_nonpos_v2, 400_000, false);
        #[cfg(feature = "std")]
        std::println!("v2 against libm: worst absolute difference {worst:e}");
        assert!(worst < 8.3e-16, "worst absolute error {worst:e}");
    }

    /// `e(0) = e(−0) = e(x > 0) = 1`, one positive floor below `3.4e-308` for `x ≤ −708`,
    /// `−∞` and NaN, and never above 1 just below 0 (versions 2 and 3).
    fn check_special_values(e: fn(f64) -> f64) {
        assert_eq!(e(0.0), 1.0);
        assert_eq!(e(-0.0), 1.0);
        assert_eq!(e(5.0), 1.0);
        assert_eq!(e(f64::INFINITY), 1.0);
        let floor = e(-708.0);
        assert!(floor > 0.0 && floor < 3.4e-308);
        for x in [-709.0, -1e300, f64::NEG_INFINITY, f64::NAN] {
            assert_eq!(e(x), floor);
        }
        // Never above 1, in particular just below 0 where e^x rounds to 1.
        let mut x = -1e-300;
        while x > -1.0 {
            assert!(e(x) <= 1.0 && e(x) > 0.0);
            x *= 1.01;
        }
    }

    #[test]
    fn v2_special_values() {
        check_special_values(super::exp_nonpos_v2);
    }

    /// Version 3 against the 50-digit table: absolute error below `6e-16`, as version 2 (its
    /// bound, module docs), and it differs from version 2 in some last bits (the fused
    /// operations round differently), so the version switch is needed.
    #[test]
    fn v3_within_stated_bound_against_mpmath() {
        let (mut n, mut worst, mut differ) = (0, 0.0f64, 0);
        for (x, hi, lo) in table() {
            let v = super::exp_nonpos_v3(x);
            let e = abs_err(v, hi, lo);
            assert!(e < 6e-16, "v3 x = {x:e}: absolute error {e:e}");
            worst = worst.max(e);
            differ += usize::from(v.to_bits() != super::exp_nonpos_v2(x).to_bits());
            n += 1;
        }
        #[cfg(feature = "std")]
        std::println!("v3: worst absolute error {worst:e}; {differ} of {n} values differ from v2");
        assert!(n > 1000 && worst > 5e-17, "{n} points, worst {worst:e}");
        assert!(differ > 0, "v3 gives v2's bits on every table point");
    }

    /// Version 3 on a dense grid against `libm::exp` (within 1 ulp): absolute difference below
    /// `6e-16 + 2.3e-16`, as version 2.
    #[test]
    fn v3_matches_libm_on_a_dense_grid() {
        let worst = worst_against_libm(super::exp_nonpos_v3, 200_000, true);
        #[cfg(feature = "std")]
        std::println!("v3 against libm: worst absolute difference {worst:e}");
        assert!(worst < 8.3e-16, "worst absolute error {worst:e}");
    }

    #[test]
    fn v3_special_values() {
        check_special_values(super::exp_nonpos_v3);
    }

    /// The crate's `fma` is fused (one rounding: it differs from `a·b + c` where the product's
    /// rounding matters) and gives `libm::fma`'s bits (the software, correctly rounded one the
    /// `no_std` build uses) on hard cases: exact cancellation, ties, subnormal and huge
    /// results, signed zeros, and 100 000 seeded triples whose `a·b` and `c` nearly cancel.
    #[test]
    fn fma_is_fused_and_matches_libm() {
        use super::fma;
        let e = f64::EPSILON;
        // (1 + ε)(1 − ε) − 1 = −ε²: lost entirely by a rounded product.
        assert_eq!(fma(1.0 + e, 1.0 - e, -1.0), -e * e);
        assert_eq!((1.0 + e) * (1.0 - e) - 1.0, 0.0);
        let same = |a: f64, b: f64, c: f64| {
            assert_eq!(
                fma(a, b, c).to_bits(),
                libm::fma(a, b, c).to_bits(),
                "fma({a:e}, {b:e}, {c:e})"
            );
        };
        for (a, b, c) in [
            (1.0 + e, 1.0 - e, -1.0),
            (0.1, 10.0, -1.0),
            (1e308, 10.0, -f64::MAX),
            (1e-160, 1e-160, 0.0),
            (1e-200, 1e-200, 5e-324),
            (-0.0, 1.0, 0.0),
            (0.0, -1.0, -0.0),
            (1.0 + 2.0 * e, 0.5, 2.0f64.powi(-54)),
            (3.0, 1.0 / 3.0, -1.0),
        ] {
            same(a, b, c);
        }
        let mut s: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..100_000 {
            let (u, v) = (next(), next());
            let a = f64::from_bits((u >> 12) | 0x3FF0_0000_0000_0000)
                * if u & 1 == 0 { 1.0 } else { -1.0 };
            let b = f64::from_bits((v >> 12) | 0x3FF0_0000_0000_0000);
            // c cancels a·b to within a few ulps (worst case for a wrong rounding) or not.
            let shift = f64::from(u32::try_from(next() % 8).unwrap_or(0));
            let c = -(a * b) * (1.0 + shift * e);
            same(a, b, c);
        }
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
