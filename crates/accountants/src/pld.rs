//! The Gaussian privacy-loss distribution `N(μ, 2μ)`: exact δ(ε) and ε(δ).
//!
//! # References
//! D. Sommer, S. Meiser, E. Mohammadi, "Privacy loss classes: the central limit theorem in
//! differential privacy", PoPETs 2019, Lemmas 11–12 and Theorem 1; thesis (Raisa 2021)
//! Theorem 4.3 and §5.2.

use dpinfer_math::{erfc, erfcx};

use crate::error::{AccountantError, non_negative, open_unit};
use crate::round_up;

/// The smallest positive subnormal: reported instead of 0 when the exact δ is positive but
/// underflows, so a reported δ is never below the exact one.
const TINY: f64 = 4.9406564584124654e-324;

/// Unit roundoff of f64, `2⁻⁵³`.
const U: f64 = 1.1102230246251565e-16;
/// Relative error bound assumed for one `erfcx`, `erfc` or `erf` evaluation: 8 units of
/// roundoff, twice the 4 ulp that `dpinfer-math` asserts for `erfcx` against mpmath (and
/// well above the ≤ 1 ulp of musl-derived `libm` `erf`/`erfc`).
const FN_ERR: f64 = 8.0 * U;
/// `2/√π`, a bound on `|erf′|`, `|erfc′|` and (for `x ≥ 0`) `|erfcx′|`.
const TWO_OVER_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;

/// `δ(ε)` for the Gaussian PLD with mean μ and a bound on the absolute error of that
/// evaluation, `(δ̂, e)` with `|δ̂ − δ| ≤ e` (unrounded; used by the root searches).
///
/// The bound is a first-order forward error analysis of each regime: the arguments
/// `a = (ε−μ)/(2√μ)`, `b = (ε+μ)/(2√μ)` carry an absolute error of at most
/// `u·((ε+μ)/(2√μ) + 4|x|)` (one subtraction or addition, one square root, two products /
/// quotients), which moves each special function by at most `(2/√π)·err` (its derivative
/// bound) and `e^{−a²}` by the relative `2|a|·err + u·a²`; each special function adds its own
/// relative error ([`FN_ERR`]); and every subtraction of two computed terms can lose all
/// their common digits, so the term errors are added in absolute value. In the tiny-μ regime
/// the difference `erfcx(a) − erfcx(b)` (with `b − a = √μ`) is what needs the bound: the
/// terms agree to about `log₁₀(1/√μ)` digits, far more than any fixed relative margin.
fn delta_with_error(mu: f64, eps: f64) -> (f64, f64) {
    if mu == 0.0 {
        return (0.0, 0.0);
    }
    if mu == f64::INFINITY {
        return (1.0, 0.0);
    }
    let s = 2.0 * libm::sqrt(mu);
    let a = (eps - mu) / s;
    let b = (eps + mu) / s;
    let base = U * ((eps + mu) / s);
    let ea = base + 4.0 * U * a.abs();
    let eb = base + 4.0 * U * b.abs();
    // Identity b² − a² = ε, so e^ε·erfc(b) = e^{−a²}·erfcx(b) with no overflow.
    if a >= 0.0 && libm::exp(-a * a) == 0.0 {
        // a² > 745.1: δ ≤ ½e^{−a²} < 2.5e-324, below the smallest subnormal (reported as
        // that by the caller); also covers a = +∞ (ε/√μ overflowing).
        return (0.0, 0.0);
    }
    let (d, err) = if a >= 0.0 && mu <= SMALL_MU {
        // δ = ½ e^{−a²} ∫_a^{a+√μ} g, g = −erfcx′ > 0 (b − a = √μ): no subtraction at all.
        let e = libm::exp(-a * a);
        let h = libm::sqrt(mu);
        let (q, rel_q) = erfcx_gap(a, h);
        // Moving a by ea moves the integral by at most |g′/g| ≤ 2 (+2/a) times ea relative.
        let rel = rel_q + 2.0 * ea * (1.0 + 1.0 / a.max(1.0)) + U;
        let rel_e = 2.0 * a * ea + U * a * a + 2.0 * U;
        let d = 0.5 * e * q;
        (d, d * (rel + rel_e + 2.0 * U))
    } else if a >= 0.0 {
        // δ = ½ e^{−a²} (erfcx(a) − erfcx(b)).
        let e = libm::exp(-a * a);
        let (x, y) = (erfcx(a), erfcx(b));
        let diff = x - y;
        let e_diff = FN_ERR * (x + y) + TWO_OVER_SQRT_PI * (ea + eb) + U * diff.abs();
        let rel_e = 2.0 * a * ea + U * a * a + 2.0 * U;
        let d = 0.5 * e * diff;
        (d, 0.5 * e * e_diff + d.abs() * (rel_e + 2.0 * U))
    } else if a > -1.0 && b < 1.0 {
        // Small arguments: δ = ½(erf(b) − erf(a)) − ½ expm1(ε) erfc(b), no cancellation.
        let (fb, fa) = (libm::erf(b), libm::erf(a));
        let t1 = fb - fa;
        let em1 = libm::expm1(eps);
        let cb = erfc(b);
        let t2 = em1 * cb;
        let e1 = FN_ERR * (fb.abs() + fa.abs()) + TWO_OVER_SQRT_PI * (ea + eb) + U * t1.abs();
        let e2 = t2 * (FN_ERR + 3.0 * U) + em1 * TWO_OVER_SQRT_PI * eb;
        let d = 0.5 * t1 - 0.5 * t2;
        (d, 0.5 * (e1 + e2) + U * (t1.abs() + t2.abs()))
    } else {
        // δ = ½ (erfc(a) − e^{−a²} erfcx(b)).
        let e = libm::exp(-a * a);
        let t1 = erfc(a);
        let yb = erfcx(b);
        let t2 = e * yb;
        let e1 = FN_ERR * t1 + TWO_OVER_SQRT_PI * e * ea;
        let rel2 = 2.0 * a.abs() * ea + U * a * a + 2.0 * U + FN_ERR;
        let e2 = t2 * rel2 + e * TWO_OVER_SQRT_PI * eb;
        let d = 0.5 * (t1 - t2);
        (d, 0.5 * (e1 + e2) + U * (t1.abs() + t2.abs()))
    };
    (d, err)
}

/// Below this μ (`√μ ≤ 1/4`) the `a ≥ 0` regime integrates `−erfcx′` instead of subtracting
/// two nearly equal `erfcx` values.
const SMALL_MU: f64 = 0.0625;

/// Gauss–Legendre nodes (positive half) and weights on [−1, 1], 8 points.
const GL8: [(f64, f64); 4] = [
    (0.183_434_642_495_649_8, 0.362_683_783_378_362),
    (0.525_532_409_916_329, 0.313_706_645_877_887_3),
    (0.796_666_477_413_626_7, 0.222_381_034_453_374_5),
    (0.960_289_856_497_536_3, 0.101_228_536_290_376_3),
];

/// `g(t) = −erfcx′(t) = 2/√π − 2t·erfcx(t) > 0` for `t ≥ 0`, with a relative error bound.
/// Below 2 the subtraction loses at most a factor `(2/√π + 2t·erfcx(t))/g(t) ≤ 20`; from 2 on,
/// Laplace's continued fraction `erfcx(t) = (1/√π)/(t + τ)` gives `g = (2/√π)·τ/(t + τ)`
/// without any subtraction (τ evaluated backwards, every step a positive quotient; depths
/// those of `dpinfer_math::erfcx` plus 8).
fn neg_erfcx_slope(t: f64) -> (f64, f64) {
    if t < 2.0 {
        let y = erfcx(t);
        let g = TWO_OVER_SQRT_PI - 2.0 * t * y;
        let kappa = (TWO_OVER_SQRT_PI + 2.0 * t * y) / g;
        return (g, kappa * (FN_ERR + 3.0 * U));
    }
    let depth: u32 = if t < 2.5 {
        64
    } else if t < 3.0 {
        48
    } else if t < 4.0 {
        44
    } else if t < 6.0 {
        32
    } else if t < 10.0 {
        22
    } else {
        18
    };
    let mut tau = 0.0;
    for n in (1..=depth).rev() {
        tau = (0.5 * f64::from(n)) / (t + tau);
    }
    (TWO_OVER_SQRT_PI * tau / (t + tau), 16.0 * U)
}

/// `erfcx(a) − erfcx(a + h) = ∫_a^{a+h} −erfcx′` for `a ≥ 0`, `0 < h ≤ 1/4`, by 8-point
/// Gauss–Legendre, with a relative error bound: the integrand's own error, node and weight
/// rounding, and the quadrature remainder `h^17 (8!)⁴/(17 (16!)³)·max|erfcx^{(17)}|`, where
/// `|erfcx^{(k)}(x)| ≤ min(k!/Γ(k/2 + 1), k!/(√π x^{k+1}))` for `x ≥ 0` (from
/// `erfcx(x) = (2/√π)∫₀^∞ e^{−s²−2xs} ds`).
fn erfcx_gap(a: f64, h: f64) -> (f64, f64) {
    let (mid, half) = (a + 0.5 * h, 0.5 * h);
    let (mut sum, mut rel) = (0.0, 0.0_f64);
    for &(x, w) in &GL8 {
        for t in [mid - half * x, mid + half * x] {
            let (g, r) = neg_erfcx_slope(t);
            sum += w * g;
            // node error ≈ u·t moves g by |g′/g|·u·t ≤ (2 + 2/t)·u·t
            rel = rel.max(r + U * (2.0 * t + 2.0));
        }
    }
    let q = half * sum;
    if q.is_nan() || q <= 0.0 {
        // Underflow (δ ≪ the smallest subnormal; reported as such by the caller).
        return (0.0, 0.0);
    }
    // 17!/Γ(9.5) and 17!/√π; (8!)⁴/(17·(16!)³).
    const Y17_0: f64 = 2.986e9;
    const FACT17_SQRT_PI: f64 = 2.007e14;
    const GL_REM: f64 = 1.7e-23;
    let bound = Y17_0.min(FACT17_SQRT_PI / libm::pow(a.max(1e-3), 18.0));
    let rem = GL_REM * libm::pow(h, 17.0) * bound;
    (q, rel + 8.0 * U + rem / q)
}

/// An upper bound of `δ(ε)`: the evaluation plus its error bound (unrounded).
fn delta_upper(mu: f64, eps: f64) -> f64 {
    let (d, e) = delta_with_error(mu, eps);
    d + e
}

/// `δ(ε) = ½(erfc((ε−μ)/(2√μ)) − e^ε·erfc((ε+μ)/(2√μ)))` for the PLD `N(μ, 2μ)`, evaluated
/// through `erfcx` so that ε up to 5000 and μ from 10⁻¹⁰ to 10⁴ stay finite. The reported
/// value is the evaluation **plus its forward error bound** (derived per regime, see the
/// source), then rounded up: it is never below the exact δ, and within 3·10⁻¹¹ relative of it
/// on the golden grid (`tests/data/pld_grid.txt`, 60-digit mpmath at the exact binary μ and
/// ε). For μ ≤ 1/16 and ε ≥ μ the difference `erfcx(a) − erfcx(b)` (which cancels, `b − a = √μ`)
/// is evaluated as the integral of `−erfcx′` by Gauss–Legendre instead. A positive δ
/// that underflows is reported as the smallest subnormal.
///
/// # Privacy
/// Exact for any adaptive composition of Gaussian mechanisms whose PLD means sum to μ, under
/// the relation for which the sensitivities were computed.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `μ ≥ 0` and `ε ≥ 0` are finite.
///
/// ```
/// // One Gaussian with σ = Δ: μ = 1/2.
/// let d = dpinfer_accountants::pld::delta_for_epsilon(0.5, 1.0)?;
/// assert!((d - 0.12693673750664397).abs() < 1e-12);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn delta_for_epsilon(mu: f64, epsilon: f64) -> Result<f64, AccountantError> {
    let mu = non_negative("mu", mu)?;
    let eps = non_negative("epsilon", epsilon)?;
    if mu == 0.0 {
        return Ok(0.0);
    }
    let d = delta_upper(mu, eps);
    if d.is_nan() {
        return Err(AccountantError::NumericalFailure { what: "pld delta" });
    }
    Ok(round_up(d).clamp(TINY, 1.0))
}

/// The smallest ε ≥ 0 with `δ(ε) ≤ delta` for the PLD `N(μ, 2μ)`, by safeguarded
/// bisection/secant on `ln δ(ε)` inside the bracket `[0, μ + 2√(μ ln(1/δ))]` (the upper end
/// is the Bun–Steinke bound, valid because the PLD is μ-zCDP). Every comparison uses the
/// error-bounded upper value of δ (as [`delta_for_epsilon`]), so the returned ε — the upper
/// end of the final bracket, where `δ(ε) ≤ delta` has been checked, then rounded up — is
/// never below the exact ε(δ).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `μ ≥ 0` finite and `0 < δ < 1`;
/// [`AccountantError::NumericalFailure`] if the bracket is inconsistent.
pub fn epsilon_for_delta(mu: f64, delta: f64) -> Result<f64, AccountantError> {
    let mu = non_negative("mu", mu)?;
    let delta = open_unit("delta", delta)?;
    if mu == 0.0 || delta_upper(mu, 0.0) <= delta {
        return Ok(0.0);
    }
    let ln_target = libm::log(delta);
    let mut hi = mu + 2.0 * libm::sqrt(mu * -ln_target);
    // The zCDP bound is valid; grow it only if rounding makes it look too small.
    let mut guard = 0;
    while delta_upper(mu, hi) > delta {
        hi = hi * 1.01 + 1e-300;
        guard += 1;
        if guard > 200 || !hi.is_finite() {
            return Err(AccountantError::NumericalFailure {
                what: "pld epsilon bracket",
            });
        }
    }
    let mut lo = 0.0_f64;
    let f = |e: f64| {
        let d = delta_upper(mu, e);
        if d > 0.0 {
            libm::log(d) - ln_target
        } else {
            f64::NEG_INFINITY
        }
    };
    let mut flo = f(lo);
    let mut fhi = f(hi);
    let mut side = 0i32;
    for _ in 0..200 {
        if hi - lo <= 4.0 * f64::EPSILON * hi {
            break;
        }
        // Illinois-modified regula falsi with a bisection fallback.
        let mut x = if flo.is_finite() && fhi.is_finite() && flo > fhi {
            lo + (hi - lo) * flo / (flo - fhi)
        } else {
            0.5 * (lo + hi)
        };
        if !(x > lo && x < hi) {
            x = 0.5 * (lo + hi);
        }
        let fx = f(x);
        // Decide on δ itself (ln can round a δ just above the target to ≤ 0).
        if delta_upper(mu, x) > delta {
            lo = x;
            flo = fx;
            if side == -1 {
                fhi *= 0.5;
            }
            side = -1;
        } else {
            hi = x;
            fhi = fx;
            if side == 1 {
                flo *= 0.5;
            }
            side = 1;
        }
    }
    if delta_upper(mu, hi) > delta {
        return Err(AccountantError::NumericalFailure {
            what: "pld epsilon search",
        });
    }
    Ok(round_up(hi))
}
