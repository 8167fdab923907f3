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

/// `δ(ε)` for the Gaussian PLD with mean μ (unrounded, used by the root searches).
fn delta_raw(mu: f64, eps: f64) -> f64 {
    if mu == 0.0 {
        return 0.0;
    }
    if mu == f64::INFINITY {
        return 1.0;
    }
    let s = 2.0 * libm::sqrt(mu);
    let a = (eps - mu) / s;
    let b = (eps + mu) / s;
    // Identity b² − a² = ε, so e^ε·erfc(b) = e^{−a²}·erfcx(b) with no overflow.
    if a >= 0.0 {
        // δ = ½ e^{−a²} (erfcx(a) − erfcx(b)).
        0.5 * libm::exp(-a * a) * (erfcx(a) - erfcx(b))
    } else if a > -1.0 && b < 1.0 {
        // Small arguments: δ = ½(erf(b) − erf(a)) − ½ expm1(ε) erfc(b), no cancellation.
        0.5 * (libm::erf(b) - libm::erf(a)) - 0.5 * libm::expm1(eps) * erfc(b)
    } else {
        0.5 * (erfc(a) - libm::exp(-a * a) * erfcx(b))
    }
}

/// `δ(ε) = ½(erfc((ε−μ)/(2√μ)) − e^ε·erfc((ε+μ)/(2√μ)))` for the PLD `N(μ, 2μ)`, evaluated
/// through `erfcx` so that ε up to 5000 and μ from 10⁻¹⁰ to 10⁴ stay finite and accurate
/// (≤ 10⁻⁹ relative against 50-digit mpmath, see the golden tests). Rounded up; a positive
/// δ that underflows is reported as the smallest subnormal.
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
    let d = delta_raw(mu, eps);
    if d.is_nan() {
        return Err(AccountantError::NumericalFailure { what: "pld delta" });
    }
    Ok(round_up(d).clamp(TINY, 1.0))
}

/// The smallest ε ≥ 0 with `δ(ε) ≤ delta` for the PLD `N(μ, 2μ)`, by safeguarded
/// bisection/secant on `ln δ(ε)` inside the bracket `[0, μ + 2√(μ ln(1/δ))]` (the upper end
/// is the Bun–Steinke bound, valid because the PLD is μ-zCDP). The returned ε is the upper
/// end of the final bracket, where `δ(ε) ≤ delta` has been checked, then rounded up.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `μ ≥ 0` finite and `0 < δ < 1`;
/// [`AccountantError::NumericalFailure`] if the bracket is inconsistent.
pub fn epsilon_for_delta(mu: f64, delta: f64) -> Result<f64, AccountantError> {
    let mu = non_negative("mu", mu)?;
    let delta = open_unit("delta", delta)?;
    if mu == 0.0 || delta_raw(mu, 0.0) <= delta {
        return Ok(0.0);
    }
    let ln_target = libm::log(delta);
    let mut hi = mu + 2.0 * libm::sqrt(mu * -ln_target);
    // The zCDP bound is valid; grow it only if rounding makes it look too small.
    let mut guard = 0;
    while delta_raw(mu, hi) > delta {
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
        let d = delta_raw(mu, e);
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
        if delta_raw(mu, x) > delta {
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
    if delta_raw(mu, hi) > delta {
        return Err(AccountantError::NumericalFailure {
            what: "pld epsilon search",
        });
    }
    Ok(round_up(hi))
}
