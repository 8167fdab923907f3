//! The standard normal distribution: Φ, 1 − Φ, log Φ, Φ⁻¹, the density, and the scaled
//! complementary error function `erfcx`.
//!
//! Everything is built on `libm` (never the platform math library), so results are
//! bit-identical on x86_64, thumbv7em and wasm32. Where an argument is squared inside an
//! exponential, the square is carried in double-double (Dekker's product) so that the
//! exponential does not amplify rounding error.

use crate::two_product;

/// `1/√2` rounded to f64 (high part).
const FRAC_1_SQRT_2_HI: f64 = core::f64::consts::FRAC_1_SQRT_2;
/// `1/√2 − FRAC_1_SQRT_2_HI`.
const FRAC_1_SQRT_2_LO: f64 = -4.833_646_656_726_457e-17;
/// `√(π/2)`.
const SQRT_PI_OVER_2: f64 = 1.253_314_137_315_500_1;
/// `1/√(2π)`.
const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// `1/√π`.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
/// `2/√π`.
const FRAC_2_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;
/// From here up, `erfcx` uses Laplace's continued fraction instead of `e^{x²}·erfc(x)`.
const ERFCX_CF: f64 = 2.0;

/// The complementary error function `erfc(x) = 1 − erf(x)` (from `libm`).
#[inline]
#[must_use]
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

/// `x/√2` as a double-double `(hi, lo)`.
#[inline]
fn div_sqrt2(x: f64) -> (f64, f64) {
    let (h, l) = two_product(x, FRAC_1_SQRT_2_HI);
    let lo = l + x * FRAC_1_SQRT_2_LO;
    let hi = h + lo;
    (hi, lo - (hi - h))
}

/// `e^{-(hi+lo)²}` where `(hi, lo)` is a double-double, with the square formed exactly.
#[inline]
fn exp_neg_sq(hi: f64, lo: f64) -> f64 {
    let (p, e) = two_product(hi, hi);
    let tail = e + 2.0 * hi * lo;
    libm::exp(-p) * (1.0 - tail)
}

/// `ln e^{-(hi+lo)²} = −(hi+lo)²` as `(−p, −tail)`, to be added smallest first.
#[inline]
fn neg_sq(hi: f64, lo: f64) -> (f64, f64) {
    let (p, e) = two_product(hi, hi);
    (-p, -(e + 2.0 * hi * lo))
}

/// The scaled complementary error function `erfcx(x) = e^{x²}·erfc(x)`.
///
/// For `x ≥ 0` the result lies in `(0, 1]` and behaves like `1/(x√π)` for large `x`, so
/// `e^{ε}·erfc(b)` can be evaluated as `e^{ε − b²}·erfcx(b)` without overflow. For negative
/// `x` it grows like `2e^{x²}` and overflows to `+∞` below about `−26.6`.
///
/// NaN gives NaN; `erfcx(+∞) = 0`; `erfcx(−∞) = +∞`.
///
/// # Accuracy
/// See the crate README's accuracy table (measured against 50-digit mpmath values).
#[must_use]
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        if x < -26.7 {
            return f64::INFINITY;
        }
        let (p, e) = two_product(x, x);
        let ex2 = libm::exp(p) * (1.0 + e);
        return 2.0 * ex2 - erfcx(-x);
    }
    if x < ERFCX_CF {
        let (p, e) = two_product(x, x);
        return libm::exp(p) * (1.0 + e) * libm::erfc(x);
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    if x > 1e154 {
        // 1/(x√π) to full precision; the next term is below 1e-308 relative.
        return FRAC_1_SQRT_PI / x;
    }
    // Laplace's continued fraction erfcx(x) = (1/√π)·1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))),
    // evaluated backwards from a fixed depth (stable: every step is a positive quotient).
    // Depths were chosen so that truncation is below 2^-60 relative on each interval.
    let depth: u32 = if x < 2.5 {
        56
    } else if x < 3.0 {
        40
    } else if x < 4.0 {
        36
    } else if x < 6.0 {
        24
    } else if x < 10.0 {
        14
    } else {
        10
    };
    let mut t = 0.0;
    for n in (1..=depth).rev() {
        t = (0.5 * f64::from(n)) / (x + t);
    }
    FRAC_1_SQRT_PI / (x + t)
}

/// The standard normal density `φ(x) = e^{−x²/2}/√(2π)`.
///
/// NaN gives NaN; `φ(±∞) = 0`.
#[inline]
#[must_use]
pub fn norm_pdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.is_infinite() || x.abs() > 40.0 {
        return 0.0;
    }
    let (h, l) = div_sqrt2(x);
    FRAC_1_SQRT_2PI * exp_neg_sq(h, l)
}

/// The standard normal CDF `Φ(x) = ½·erfc(−x/√2)`.
///
/// For `x < −1` the argument `z = −x/√2` is carried in double-double `h + l` and
/// `erfc(z) = erfc(h) − l·(2/√π)·e^{−h²}` (first order is exact to double precision since
/// `|l| ≤ 2⁻⁵³·h`), so the relative error stays at a few ulp of the exact value at the given
/// `x` far into the lower tail even though the condition number grows like `x²`. Below
/// `x ≈ −37.5`, where `erfc(h)` would be subnormal, it uses `½·erfcx(z)·e^{−z²}`; the result
/// underflows to 0 below about −38.5.
///
/// NaN gives NaN; `Φ(−∞) = 0`; `Φ(+∞) = 1`.
#[must_use]
pub fn norm_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x >= -1.0 {
        return 0.5 * libm::erfc(-x * FRAC_1_SQRT_2_HI);
    }
    if x < -40.0 {
        return 0.0;
    }
    let (h, l) = div_sqrt2(-x);
    if h < ERFC_NORMAL_LIMIT {
        return 0.5 * (libm::erfc(h) - l * FRAC_2_SQRT_PI * libm::exp(-h * h));
    }
    0.5 * erfcx_dd(h, l) * exp_neg_sq(h, l)
}

/// Below this, `erfc` is a normal number (`erfc(26.5) ≈ 2.8·10⁻³⁰⁷`).
const ERFC_NORMAL_LIMIT: f64 = 26.5;

/// `erfcx(h + l)` to first order in the small tail `l`, for `h ≥ 26`:
/// `erfcx′(z) = 2z·erfcx(z) − 2/√π = −(1/√π)·z⁻²·(1 − 3/(2z²) + O(z⁻⁴))`. The asymptotic form
/// avoids the cancellation in `2z·erfcx(z) − 2/√π`, whose rounding error times `l ≈ 2⁻⁵³z`
/// would swamp `erfcx(z) ≈ 1/(z√π)` once `z` is large.
#[inline]
fn erfcx_dd(h: f64, l: f64) -> f64 {
    let inv_h2 = 1.0 / (h * h);
    erfcx(h) - l * FRAC_1_SQRT_PI * inv_h2 * (1.0 - 1.5 * inv_h2)
}

/// The standard normal survival function `1 − Φ(x) = Φ(−x)`, accurate in the upper tail.
#[inline]
#[must_use]
pub fn norm_sf(x: f64) -> f64 {
    norm_cdf(-x)
}

/// `ln Φ(x)`, accurate for all `x` (tested down to `x = −10⁵`, where it is about `−5·10⁹`).
///
/// Regions: `x > 0` uses `log1p(−Φ(−x))`; `−37.5 ≤ x ≤ 0` uses `ln Φ(x)` (Φ is a normal
/// number there and accurate to a few ulp, see [`norm_cdf`]); below, `ln(½·erfcx(z)) − z²`
/// with `z = −x/√2` and `z²` in double-double.
///
/// NaN gives NaN; `ln Φ(−∞) = −∞`; `ln Φ(+∞) = 0`.
#[must_use]
pub fn ln_norm_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x > 0.0 {
        return libm::log1p(-norm_cdf(-x));
    }
    if x < -1.9e154 {
        // −x²/2 < −f64::MAX (this includes x = −∞).
        return f64::NEG_INFINITY;
    }
    let (h, l) = div_sqrt2(-x);
    if h < ERFC_NORMAL_LIMIT {
        return libm::log(norm_cdf(x));
    }
    let (a, b) = neg_sq(h, l);
    if a.is_infinite() {
        // x²/2 > f64::MAX: ln Φ(x) ≈ −x²/2 is below −f64::MAX.
        return f64::NEG_INFINITY;
    }
    (libm::log(0.5 * erfcx_dd(h, l)) + b) + a
}

/// `ln(1 − Φ(x)) = ln Φ(−x)`, the log survival function, accurate for all `x` (see
/// [`ln_norm_cdf`]).
///
/// NaN gives NaN; `ln_norm_sf(−∞) = 0`; `ln_norm_sf(+∞) = −∞`.
#[inline]
#[must_use]
pub fn ln_norm_sf(x: f64) -> f64 {
    ln_norm_cdf(-x)
}

/// `Φ(a) − Φ(b)` (negative when `a < b`), without the cancellation of the two CDF values:
/// `½(erf(a/√2) − erf(b/√2))` when the arguments straddle zero (a sum of two magnitudes) or
/// both lie in `(−1, 1)`, otherwise the difference of the two lower (or upper) tails.
///
/// NaN in either argument gives NaN; `Φ(+∞) − Φ(−∞) = 1`.
#[must_use]
pub fn norm_cdf_diff(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    // Difference the representation whose two values are smallest: erf near the centre
    // (and whenever the signs differ, where it is a sum of magnitudes), the tails outside.
    if (a >= 0.0) != (b >= 0.0) || a.abs().max(b.abs()) < 1.0 {
        0.5 * (libm::erf(a * FRAC_1_SQRT_2_HI) - libm::erf(b * FRAC_1_SQRT_2_HI))
    } else if a >= 0.0 {
        norm_sf(b) - norm_sf(a)
    } else {
        norm_cdf(a) - norm_cdf(b)
    }
}

/// `ln Φ(a) − ln Φ(b) − ε` for `a, b < −1`, accurate even when the two log-CDFs are huge and
/// nearly equal: with `ln Φ(x) = ln(½·erfcx(−x/√2)) − x²/2`, the difference is
/// `(b − a)(b + a)/2 + ln(erfcx(−a/√2)/erfcx(−b/√2)) − ε`, where `b − a` is exact for close
/// arguments and the `erfcx` ratio is near one.
fn tail_log_gap(a: f64, b: f64, eps: f64) -> f64 {
    let quad = 0.5 * (b - a) * (b + a);
    let ratio = erfcx(-a * FRAC_1_SQRT_2_HI) / erfcx(-b * FRAC_1_SQRT_2_HI);
    (quad - eps) + libm::log(ratio)
}

/// Whether `(a, b, ε)` should take the both-tails route of [`tail_log_gap`].
fn both_tails(a: f64, b: f64, eps: f64) -> bool {
    a < -1.0 && b < -1.0 && a > -1e150 && b > -1e150 && eps.is_finite()
}

/// `e^ε·Φ(b)`, directly when both factors are ordinary numbers, else via logs.
fn exp_times_cdf(eps: f64, b: f64) -> f64 {
    let pb = norm_cdf(b);
    let t = libm::exp(eps) * pb;
    if pb >= f64::MIN_POSITIVE && (f64::MIN_POSITIVE..=f64::MAX).contains(&t) {
        t
    } else {
        libm::exp(eps + ln_norm_cdf(b))
    }
}

/// `ln(Φ(a) − e^ε·Φ(b))`, finite and accurate when both terms (or their difference)
/// underflow.
///
/// This is the shape of the Gaussian mechanism's privacy profile,
/// `δ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ)` (Balle & Wang 2018, Theorem 8), and of the
/// Gaussian PLD's `δ(ε)`. When `a, b < −1` the gap `ln Φ(a) − ln Φ(b) − ε` is formed without
/// subtracting the two huge log-CDFs, and the result is `ln Φ(a) + log1mexp(−gap)`; elsewhere
/// it is `ln` of [`norm_cdf_sub_exp`] (`log1p` of the complement `Φ(−a) + e^ε·Φ(b)` when the
/// value exceeds ½) or, if that underflows, `log_sub_exp(ln Φ(a), ε + ln Φ(b))`. Errors are those of a backward-stable
/// evaluation: a few ulp of the inputs, amplified only by the inherent cancellation.
///
/// NaN in any argument gives NaN; NaN also when `Φ(a) < e^ε·Φ(b)` (the log of a negative
/// number) and when `ε = +∞` meets `Φ(b) = 0`; `−∞` when the two terms are equal.
///
/// # References
/// B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
/// analytical calibration and optimal denoising", ICML 2018, Theorem 8.
#[must_use]
pub fn ln_norm_cdf_sub_exp(a: f64, b: f64, eps: f64) -> f64 {
    if a.is_nan() || b.is_nan() || eps.is_nan() {
        return f64::NAN;
    }
    if both_tails(a, b, eps) {
        let gap = tail_log_gap(a, b, eps);
        if gap < 0.0 {
            return f64::NAN;
        }
        return ln_norm_cdf(a) + crate::log1mexp(-gap);
    }
    let v = norm_cdf_sub_exp(a, b, eps);
    if v > 0.5 {
        // δ = 1 − (Φ(−a) + e^ε·Φ(b)): take log1p of the small complement, a sum of two
        // positive terms, so ln δ keeps its relative accuracy as δ → 1.
        return libm::log1p(-(norm_sf(a) + exp_times_cdf(eps, b)));
    }
    if v >= f64::MIN_POSITIVE {
        return libm::log(v);
    }
    if v < 0.0 {
        return f64::NAN;
    }
    crate::log_sub_exp(ln_norm_cdf(a), eps + ln_norm_cdf(b))
}

/// `Φ(a) − e^ε·Φ(b)` (may be negative), without overflow and without needless cancellation.
///
/// Routes: when `a, b < −1`, `Φ(a)·(1 − e^{−gap})` with the gap `ln Φ(a) − ln Φ(b) − ε` formed
/// as in [`ln_norm_cdf_sub_exp`]; otherwise for `|ε| ≤ 1` `(Φ(a) − Φ(b)) − expm1(ε)·Φ(b)` with
/// [`norm_cdf_diff`] (so `ε = 0` and `a = −b` small stay accurate), for larger `|ε|` the plain
/// difference; when a term is subnormal or out of range, `±exp` of the log-space difference.
///
/// NaN in any argument gives NaN, as does `ε = +∞` with `Φ(b) = 0`.
///
/// # References
/// B. Balle and Y.-X. Wang, ICML 2018, Theorem 8 (the Gaussian privacy profile).
#[must_use]
pub fn norm_cdf_sub_exp(a: f64, b: f64, eps: f64) -> f64 {
    if a.is_nan() || b.is_nan() || eps.is_nan() {
        return f64::NAN;
    }
    if both_tails(a, b, eps) {
        let gap = tail_log_gap(a, b, eps);
        if gap >= 0.0 {
            let pa = norm_cdf(a);
            if pa >= f64::MIN_POSITIVE {
                return pa * -libm::expm1(-gap);
            }
            return libm::exp(ln_norm_cdf(a) + crate::log1mexp(-gap));
        }
        // e^ε·Φ(b) is the larger term: −e^ε·Φ(b)·(1 − e^{gap}).
        let tb = exp_times_cdf(eps, b);
        if tb.is_finite() && tb >= f64::MIN_POSITIVE {
            return -tb * -libm::expm1(gap);
        }
        return -libm::exp(eps + ln_norm_cdf(b) + crate::log1mexp(gap));
    }
    // The linear routes need every term to be 0 or a normal number (subnormals have lost
    // relative precision) and at least one term to be normal; otherwise use logs.
    let ordinary = |v: f64| v == 0.0 || v >= f64::MIN_POSITIVE;
    let pb = norm_cdf(b);
    if eps.abs() <= 1.0 {
        // Near ε = 0 the two terms nearly cancel when a ≈ b: split off Φ(a) − Φ(b).
        if pb >= f64::MIN_POSITIVE {
            return norm_cdf_diff(a, b) - libm::expm1(eps) * pb;
        }
    } else if eps < 700.0 {
        let pa = norm_cdf(a);
        let t = libm::exp(eps) * pb;
        if ordinary(pa) && ordinary(t) && pa.max(t) >= f64::MIN_POSITIVE {
            return pa - t;
        }
    }
    let la = ln_norm_cdf(a);
    let lb = eps + ln_norm_cdf(b);
    if lb.is_nan() {
        return f64::NAN;
    }
    if la >= lb {
        libm::exp(crate::log_sub_exp(la, lb))
    } else {
        -libm::exp(crate::log_sub_exp(lb, la))
    }
}

/// The standard normal quantile function `Φ⁻¹(p)`, to full double precision on `(0, 1)`
/// including the tails (tested down to `p = 10⁻³⁰⁰` and the smallest subnormal).
///
/// Starts from Wichura's AS241 (relative error ≈ 10⁻¹⁶; Abramowitz & Stegun 26.2.23 below
/// `p ≈ 10⁻³¹⁶`, where AS241 is not fitted) and refines with Newton steps:
/// on `½·erf(x/√2) − (p − ½)` in the centre (`|p − ½| ≤ 0.425`, where `p − ½` is exact), and
/// on `ln Φ(x) − ln p` in the tails, whose Newton step is `(ln Φ(x) − ln p)·√(π/2)·erfcx(−x/√2)`.
/// For `p > ½` in the tail it uses `Φ⁻¹(p) = −Φ⁻¹(1 − p)`, with `1 − p` exact. The converged
/// value is finally snapped to the smallest double at which the (monotone) residual reaches
/// its target, which makes `Φ⁻¹` non-decreasing in `p` even between adjacent doubles
/// (checked by property tests) at a cost of at most a fraction of an ulp.
///
/// NaN or `p ∉ [0, 1]` gives NaN; `Φ⁻¹(0) = −∞`; `Φ⁻¹(½) = 0`; `Φ⁻¹(1) = +∞`.
///
/// # References
/// M. J. Wichura, "Algorithm AS 241: The percentage points of the normal distribution",
/// *Applied Statistics* 37(3), 477–484, 1988.
/// M. Abramowitz and I. Stegun, *Handbook of Mathematical Functions*, 26.2.23.
#[must_use]
pub fn norm_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    #[allow(clippy::float_cmp, reason = "only p = 1 exactly maps to +∞")]
    let p_is_one = p == 1.0;
    if p_is_one {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q == 0.0 {
        return 0.0;
    }
    if q.abs() <= 0.425 {
        let mut x = as241_centre(q);
        for _ in 0..4 {
            let (h, _) = div_sqrt2(x);
            let dx = (0.5 * libm::erf(h) - q) / norm_pdf(x);
            x -= dx;
            if dx.abs() <= 1e-300 + 1e-15 * x.abs() {
                break;
            }
        }
        // Snap to the smallest double whose (monotone) residual reaches q: makes Φ⁻¹
        // non-decreasing across adjacent p, at the cost of at most the residual's plateau.
        return snap_up(x, q, |t| 0.5 * libm::erf(t * FRAC_1_SQRT_2_HI));
    }
    if q > 0.0 {
        return -lower_tail_quantile(1.0 - p);
    }
    lower_tail_quantile(p)
}

/// Φ⁻¹(p) for `0 < p < 0.075` by Newton on `ln Φ(x) = ln p`.
fn lower_tail_quantile(p: f64) -> f64 {
    let lp = libm::log(p);
    let r = libm::sqrt(-lp);
    // AS241 is fitted for r ≤ 27 (p ≳ 10⁻³¹⁶); below, the cruder A&S start needs more steps.
    let mut x = if r <= 27.0 {
        as241_tail(r)
    } else {
        as_guess(p)
    };
    for _ in 0..12 {
        // Newton on ln Φ(x) = ln p: the step is (ln Φ(x) − ln p)·Φ(x)/φ(x). While Φ is a
        // normal number the Mills ratio Φ/φ comes from the values at hand; deeper, from
        // √(π/2)·erfcx(−x/√2). The derivative only needs a few digits near convergence.
        let (h, _) = div_sqrt2(-x);
        let dx = if h < ERFC_NORMAL_LIMIT {
            let c = norm_cdf(x);
            (libm::log(c) - lp) * (c / norm_pdf(x))
        } else {
            (ln_norm_cdf(x) - lp) * SQRT_PI_OVER_2 * erfcx(h)
        };
        x -= dx;
        if dx.abs() <= 1e-15 * x.abs() {
            break;
        }
    }
    // ln Φ is monotone and steep enough here that snapping costs no accuracy.
    snap_up(x, lp, ln_norm_cdf)
}

/// Wichura's AS241 (PPND16) for `|q| ≤ 0.425`, `q = p − ½`: relative error about 10⁻¹⁶.
fn as241_centre(q: f64) -> f64 {
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    let r = 0.180_625 - q * q;
    q * horner(&A, r) / horner(&B, r)
}

/// AS241 for the lower tail, `r = √(−ln p)`, `1.6 ≤ r ≤ 27`; returns a value < 0.
fn as241_tail(r: f64) -> f64 {
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    if r <= 5.0 {
        let t = r - 1.6;
        -(horner(&C, t) / horner(&D, t))
    } else {
        let t = r - 5.0;
        -(horner(&E, t) / horner(&F, t))
    }
}

/// `Σ c[i]·x^i` by Horner's rule (no FMA).
fn horner(c: &[f64; 8], x: f64) -> f64 {
    let mut s = c[7];
    for &ci in c[..7].iter().rev() {
        s = s * x + ci;
    }
    s
}

/// The smallest double `y` near `x` with `f(y) ≥ target`, for a non-decreasing `f` (at most
/// eight steps either way; Newton has already put `x` within a couple of ulp). Because the
/// answer depends only on `f` and `target`, the quantile inherits the monotonicity of `f`.
fn snap_up(x: f64, target: f64, f: impl Fn(f64) -> f64) -> f64 {
    let mut x = x;
    if f(x) >= target {
        for _ in 0..8 {
            let y = x.next_down();
            if f(y) >= target {
                x = y;
            } else {
                break;
            }
        }
    } else {
        for _ in 0..8 {
            x = x.next_up();
            if f(x) >= target {
                break;
            }
        }
    }
    x
}

/// Abramowitz & Stegun 26.2.23 for `0 < p ≤ ½` (returns a value ≤ 0).
fn as_guess(p: f64) -> f64 {
    let t = libm::sqrt(-2.0 * libm::log(p));
    let num = 2.515_517 + t * (0.802_853 + t * 0.010_328);
    let den = 1.0 + t * (1.432_788 + t * (0.189_269 + t * 0.001_308));
    -(t - num / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_inverts_cdf_in_centre() {
        for &p in &[0.1, 0.25, 0.5, 0.6, 0.9, 0.975] {
            let x = norm_quantile(p);
            assert!((norm_cdf(x) - p).abs() <= 4.0 * f64::EPSILON * p);
        }
        assert_eq!(norm_quantile(0.5).to_bits(), 0.0_f64.to_bits());
        assert!((norm_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-15);
    }

    #[test]
    fn quantile_far_tail() {
        // mpmath: findroot(ncdf(x) - 1e-300)
        let x = norm_quantile(1e-300);
        assert!((x - -37.047_096_299_361_2).abs() < 1e-12, "{x}");
    }
}
