//! Fast, branch-free `sin`/`cos` pairs for the random-feature map, one per
//! [`KernelVersion`](crate::KernelVersion) ([`sincos_small`], [`sincos_small_v2`]).
//!
//! ## Version 1
//!
//! `t = k·π/2 + r` with `k = round(t · 2/π)` and `|r| ≤ π/4`: Cody–Waite reduction with `π/2`
//! split in three parts of 33 significant bits (fdlibm's `pio2_1`, `pio2_2`, `pio2_3`), so
//! `k · pio2_1` and `k · pio2_2` are exact for `|k| < 2²⁰` and `r` carries an absolute error of
//! at most ~1 ulp of `r`. On `[−π/4, π/4]`, `sin r` and `cos r` are fdlibm's minimax
//! polynomials (`__kernel_sin`, `__kernel_cos`, errors below 2⁻⁵⁸ relative), and the quadrant
//! `k mod 4` (the low bits of `t·2/π + 1.5·2⁵²`) swaps and negates them with bit masks and a
//! sign-bit `xor`. There are no branches and no table lookups in the loop body, so it
//! vectorises; the arithmetic is only `+`, `−`, `×` (no FMA), so results are bit-identical on
//! every target.
//!
//! **Stated error**: for `|t| ≤` [`FAST_LIMIT`] the absolute error of each of `sin t`, `cos t`
//! is below `4e-16` (tested against `libm::sincos` on dense grids and random points, see the
//! tests below, and against the 50-digit table `tests/data/transcendental.txt`); callers use
//! `libm::sincos` beyond the limit. The crate's rounding slack
//! ([`crate::sensitivity::rounding_slack`]) allows `1e-15` per kernel or feature value. About
//! 58 operations per pair (counted from the source; 54 where the bit-selects fuse).
//!
//! ## Version 2: 48 operations instead of 58
//!
//! The same quadrant reduction and quadrant code, with cheaper pieces:
//!
//! - **two-part reduction** `r = (t − k·P1) − k·P2`, `P1` = fdlibm's 33-bit `pio2_1` (so
//!   `k·P1` is exact for `|k| < 2²⁰` and `t − k·P1` is exact by Sterbenz) and
//!   `P2 = π/2 − P1` rounded to `f64` (fdlibm's `pio2_1t`; `|π/2 − P1 − P2| < 3.6e-27`):
//!   `r` is off by at most half an ulp of `r` plus `|k|·3.6e-27 + ulp(k·P2)/2 < 1e-20` for
//!   `|t| ≤ 8e5` (version 1's third part buys nothing at this range).
//! - **minimax polynomials for absolute error** (Remez, `tests/data/gen_transcendental.py
//!   --coefficients`): `sin r ≈ r + Σ_{p=3,5,…,13} s_p r^p` (approximation error
//!   `≤ 1.2e-17`) and `cos r ≈ 1 + Σ_{p=2,4,…,12} c_p r^p` (`≤ 6.5e-17`), both by Horner's
//!   rule in `z = r²` — the cosine without fdlibm's compensated tail (7 operations), which buys
//!   relative accuracy near `cos r = 1` that an absolute bound does not need.
//!
//! **Stated error** (version 2): for `|t| ≤` [`FAST_LIMIT`] the absolute error of each of
//! `sin t`, `cos t` is below `4e-16`, as for version 1 (measured: at most `1.8e-16` on the
//! 50-digit table, version 1 `1.3e-16`; also tested against `libm::sincos` on the same dense
//! grids). Only `+ − ×` and bit operations, in a
//! fixed order: bit-identical on every target and dispatch level.

/// Largest `|t|` served by [`sincos_small`] (`< 2¹⁹·π/2`, keeping `|k| < 2¹⁹`).
pub(crate) const FAST_LIMIT: f64 = 8.0e5;

const INV_PIO2: f64 = core::f64::consts::FRAC_2_PI;
const PIO2_1: f64 = 1.570_796_326_734_125_614_17e0;
const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_455_80e-21;
/// 1.5 · 2^52: adding and subtracting it rounds to the nearest integer, whose low bits the
/// sum's mantissa holds.
const SHIFT: f64 = 6_755_399_441_055_744.0;

const S1: f64 = -1.666_666_666_666_663_243_48e-1;
const S2: f64 = 8.333_333_333_322_489_461_24e-3;
const S3: f64 = -1.984_126_982_985_794_931_34e-4;
const S4: f64 = 2.755_731_370_707_006_767_89e-6;
const S5: f64 = -2.505_076_025_340_686_341_95e-8;
const S6: f64 = 1.589_690_995_211_550_102_21e-10;

const C1: f64 = 4.166_666_666_666_660_190_37e-2;
const C2: f64 = -1.388_888_888_887_410_957_49e-3;
const C3: f64 = 2.480_158_728_947_672_941_78e-5;
const C4: f64 = -2.755_731_435_139_066_330_35e-7;
const C5: f64 = 2.087_572_321_298_174_827_90e-9;
const C6: f64 = -1.135_964_755_778_819_482_65e-11;

/// `P2 = π/2 − PIO2_1` rounded to `f64` (version 2's second part).
const PIO2_2V2: f64 = 6.077_100_506_506_192_249_32e-11;
// Version 2's polynomials (Remez, absolute error on |r| ≤ π/4; gen_transcendental.py).
const S3V2: f64 = -0.166_666_666_666_666_55;
const S5V2: f64 = 0.008_333_333_333_328_013;
const S7V2: f64 = -0.000_198_412_698_338_905_5;
const S9V2: f64 = 2.755_731_496_140_975_6e-6;
const S11V2: f64 = -2.505_093_497_636_05e-8;
const S13V2: f64 = 1.590_589_294_010_935_3e-10;
const C2V2: f64 = -0.499_999_999_999_994_84;
const C4V2: f64 = 0.041_666_666_666_503_21;
const C6V2: f64 = -0.001_388_888_887_172_754_5;
const C8V2: f64 = 2.480_157_901_653_919_8e-5;
const C10V2: f64 = -2.755_529_637_255_462_4e-7;
const C12V2: f64 = 2.063_358_986_498_535_4e-9;

/// Version 2's `(sin t, cos t)` for `|t| ≤ FAST_LIMIT` (see the module docs).
#[inline(always)]
#[must_use]
pub(crate) fn sincos_small_v2(t: f64) -> (f64, f64) {
    let shifted = t * INV_PIO2 + SHIFT;
    let kf = shifted - SHIFT;
    let r = (t - kf * PIO2_1) - kf * PIO2_2V2;
    let z = r * r;
    let ps = S11V2 + z * S13V2;
    let ps = S9V2 + z * ps;
    let ps = S7V2 + z * ps;
    let ps = S5V2 + z * ps;
    let ps = S3V2 + z * ps;
    let s = r + (r * z) * ps;
    let pc = C10V2 + z * C12V2;
    let pc = C8V2 + z * pc;
    let pc = C6V2 + z * pc;
    let pc = C4V2 + z * pc;
    let pc = C2V2 + z * pc;
    let c = 1.0 + z * pc;
    quadrant(shifted.to_bits(), s, c)
}

/// Version 1's `(sin t, cos t)` for `|t| ≤ FAST_LIMIT` (finite); other inputs give
/// unspecified finite or NaN values — callers check the range first.
#[inline(always)]
#[must_use]
pub(crate) fn sincos_small(t: f64) -> (f64, f64) {
    let shifted = t * INV_PIO2 + SHIFT;
    let kf = shifted - SHIFT;
    // `shifted` = 1.5·2⁵² + k exactly (|k| < 2⁵¹), so its low mantissa bits are k mod 4.
    let n = shifted.to_bits();
    let (s, c) = reduced(t, kf);
    quadrant(n, s, c)
}

/// `(sin r, cos r)` of the reduced argument `r = t − k·π/2` (Cody–Waite, three parts of π/2),
/// by fdlibm's polynomials (cos in its compensated form with `y = 0`).
#[inline(always)]
fn reduced(t: f64, kf: f64) -> (f64, f64) {
    let r = ((t - kf * PIO2_1) - kf * PIO2_2) - kf * PIO2_3;
    let z = r * r;
    // sin r
    let mut ps = S5 + z * S6;
    ps = S4 + z * ps;
    ps = S3 + z * ps;
    ps = S2 + z * ps;
    let s = r + r * z * (S1 + z * ps);
    // cos r
    let w = z * z;
    let rc = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let one_minus = 1.0 - hz;
    let c = one_minus + (((1.0 - one_minus) - hz) + z * rc);
    (s, c)
}

/// Quadrant `q = n mod 4` of `(sin r, cos r)`: 0 → (s, c), 1 → (c, −s), 2 → (−s, −c),
/// 3 → (−c, s), with bit operations only (masks, and sign flips by `xor`: exactly the
/// negation), which vectorise on every x86-64 level including SSE2.
#[inline(always)]
fn quadrant(n: u64, s: f64, c: f64) -> (f64, f64) {
    let (sb, cb) = (s.to_bits(), c.to_bits());
    let swap = 0u64.wrapping_sub(n & 1); // all ones for odd quadrants
    let s1 = (cb & swap) | (sb & !swap);
    let c1 = (sb & swap) | (cb & !swap);
    let sin = f64::from_bits(s1 ^ ((n & 2) << 62)); // negate in quadrants 2, 3
    let cos = f64::from_bits(c1 ^ ((n.wrapping_add(1) & 2) << 62)); // and in 1, 2
    (sin, cos)
}

#[cfg(test)]
#[allow(clippy::float_cmp, clippy::cast_precision_loss)]
mod tests {
    use super::{FAST_LIMIT, sincos_small};
    use crate::version::{Transcendentals, V1};

    fn sincos(t: f64) -> (f64, f64) {
        V1::sincos(t)
    }

    fn check(t: f64, worst: &mut f64) {
        let (s, c) = sincos_small(t);
        let (se, ce) = libm::sincos(t);
        let e = (s - se).abs().max((c - ce).abs());
        assert!(e <= 4e-16, "t = {t:e}: sin {s} vs {se}, cos {c} vs {ce}");
        *worst = worst.max(e);
    }

    #[test]
    fn matches_libm_to_stated_absolute_error() {
        let mut worst: f64 = 0.0;
        // Dense grid over the range the feature map sees most (|t| ≤ 50), quadrant edges,
        // and a geometric sweep up to the limit.
        for i in -200_000..=200_000 {
            check(f64::from(i) * 2.5e-4, &mut worst);
        }
        for k in -2000..=2000 {
            let edge = f64::from(k) * core::f64::consts::FRAC_PI_4;
            for d in [-1e-12, -1e-15, 0.0, 1e-15, 1e-12] {
                check(edge + d, &mut worst);
            }
        }
        let mut t = 1e-300;
        while t <= FAST_LIMIT {
            check(t, &mut worst);
            check(-t, &mut worst);
            t *= 1.001;
        }
        // xorshift points uniformly in [−FAST_LIMIT, FAST_LIMIT].
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            check((2.0 * u - 1.0) * FAST_LIMIT, &mut worst);
        }
        assert!(worst > 0.0);
    }

    /// The previous (float-select) quadrant code: the bit operations must give the same bits.
    fn sincos_small_float_quadrant(t: f64) -> (f64, f64) {
        let kf = (t * super::INV_PIO2 + super::SHIFT) - super::SHIFT;
        let kq = (kf * 0.25 + super::SHIFT) - super::SHIFT;
        let m = kf - 4.0 * kq;
        let am = m.abs();
        let swap = am > 0.5 && am < 1.5;
        let (s0, c0) = super::reduced(t, kf);
        let (s1, c1) = if swap { (c0, s0) } else { (s0, c0) };
        let neg_sin = !(-0.5..=1.5).contains(&m);
        let neg_cos = !(-1.5..=0.5).contains(&m);
        let sin = if neg_sin { -s1 } else { s1 };
        let cos = if neg_cos { -c1 } else { c1 };
        (sin, cos)
    }

    #[test]
    fn bit_quadrant_equals_float_quadrant() {
        let mut n = 0u64;
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut check = |t: f64| {
            let (a, b) = sincos_small(t);
            let (c, d) = sincos_small_float_quadrant(t);
            assert_eq!(
                (a.to_bits(), b.to_bits()),
                (c.to_bits(), d.to_bits()),
                "t = {t:e}"
            );
            n += 1;
        };
        for i in -400_000..=400_000 {
            check(f64::from(i) * 1.3e-4);
        }
        for k in -3000..=3000 {
            let edge = f64::from(k) * core::f64::consts::FRAC_PI_4;
            for d in [-1e-12, -1e-16, 0.0, 1e-16, 1e-12] {
                check(edge + d);
            }
        }
        for _ in 0..400_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            check((2.0 * u - 1.0) * FAST_LIMIT);
            check((2.0 * u - 1.0) * 40.0);
        }
        check(-0.0);
        check(FAST_LIMIT);
        check(-FAST_LIMIT);
        assert!(n > 1_600_000);
    }

    /// The 50-digit reference table (`tests/data/gen_transcendental.py`):
    /// `(t, sin hi, sin lo, cos hi, cos lo)`.
    fn table() -> impl Iterator<Item = [f64; 5]> {
        include_str!("../tests/data/transcendental.txt")
            .lines()
            .filter_map(|l| l.strip_prefix("sc "))
            .map(|l| {
                let mut it = l.split(' ');
                let mut next = || it.next().unwrap();
                let hex = |s: &str| f64::from_bits(u64::from_str_radix(s, 16).unwrap());
                let (t, sh) = (hex(next()), hex(next()));
                let sl: f64 = next().parse().unwrap();
                let ch = hex(next());
                [t, sh, sl, ch, next().parse().unwrap()]
            })
    }

    /// Both versions against the 50-digit table on `|t| ≤ FAST_LIMIT` (dense on `|t| ≤ 50`,
    /// every quadrant edge `k·π/4 ± 2 ulp`, a geometric sweep, random points): absolute error
    /// below `4e-16` for each of `sin`, `cos` (the module docs' bound). A wrong coefficient
    /// or reduction constant (e.g. `PIO2_2V2` one ulp off, which matters at `|k|` ≈ 5e5)
    /// breaks it.
    #[test]
    fn both_versions_within_stated_bound_against_mpmath() {
        let (mut n, mut w1, mut w2) = (0, 0.0f64, 0.0f64);
        for [t, sh, sl, ch, cl] in table() {
            let err = |(s, c): (f64, f64)| (((s - sh) - sl).abs()).max(((c - ch) - cl).abs());
            let (e1, e2) = (err(sincos_small(t)), err(super::sincos_small_v2(t)));
            assert!(e1 < 4e-16, "v1 t = {t:e}: {e1:e}");
            assert!(e2 < 4e-16, "v2 t = {t:e}: {e2:e}");
            (w1, w2) = (w1.max(e1), w2.max(e2));
            n += 1;
        }
        assert!(n > 1500, "{n} table points");
        #[cfg(feature = "std")]
        std::println!("worst absolute error: v1 {w1:e}, v2 {w2:e}");
        assert!(w1 > 5e-17 && w2 > 5e-17, "worst {w1:e} / {w2:e}");
    }

    /// Version 2 on version 1's dense grids against `libm::sincos` (within 1 ulp): absolute
    /// error below `4e-16`.
    #[test]
    fn v2_matches_libm_on_dense_grids() {
        let mut worst: f64 = 0.0;
        let mut check = |t: f64| {
            let (s, c) = super::sincos_small_v2(t);
            let (se, ce) = libm::sincos(t);
            let e = (s - se).abs().max((c - ce).abs());
            assert!(e <= 4e-16, "t = {t:e}: sin {s} vs {se}, cos {c} vs {ce}");
            worst = worst.max(e);
        };
        for i in -200_000..=200_000 {
            check(f64::from(i) * 2.5e-4);
        }
        for k in -2000..=2000 {
            let edge = f64::from(k) * core::f64::consts::FRAC_PI_4;
            for d in [-1e-12, -1e-15, 0.0, 1e-15, 1e-12] {
                check(edge + d);
            }
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            check((2.0 * u - 1.0) * FAST_LIMIT);
        }
        assert!(worst > 0.0);
        assert_eq!(super::sincos_small_v2(0.0), (0.0, 1.0));
        assert_eq!(super::sincos_small_v2(-0.0).1, 1.0);
    }

    #[test]
    fn exact_points_and_fallback() {
        assert_eq!(sincos_small(0.0), (0.0, 1.0));
        assert_eq!(sincos_small(-0.0).1, 1.0);
        for t in [1e6, -3.3e7, 1e300] {
            assert_eq!(sincos(t), libm::sincos(t));
        }
    }
}
