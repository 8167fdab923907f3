//! Conversions between notions. Every function returns the conversion it used.
//!
//! # References
//! * I. Mironov, "Rényi differential privacy", CSF 2017, Proposition 3 (thesis Theorem 1).
//! * B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis testing interpretations
//!   and Rényi differential privacy", AISTATS 2020, Theorem 21.
//! * C. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
//!   NeurIPS 2020, Proposition 12 / Corollary 13 (CKS20).
//! * M. Bun, T. Steinke, "Concentrated differential privacy", TCC 2016, Proposition 1.3.

use crate::error::{AccountantError, non_negative, open_unit};
use crate::{Conversion, ConversionRule, Report, round_up, round_up_positive};

/// `ε` of the Balle et al. / CKS conversion at order α for RDP value `r` (unrounded):
/// `r + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)`.
#[inline]
fn balle_eps(alpha: f64, r: f64, ln_delta: f64) -> f64 {
    r + libm::log1p(-1.0 / alpha) - (ln_delta + libm::log(alpha)) / (alpha - 1.0)
}

/// `ε` of Mironov's conversion at order α: `r + ln(1/δ)/(α − 1)`.
#[inline]
fn mironov_eps(alpha: f64, r: f64, ln_delta: f64) -> f64 {
    r - ln_delta / (alpha - 1.0)
}

/// RDP curve → (ε, δ)-DP: the minimum over the grid of both Mironov's and the improved
/// Balle et al. 2020 / CKS20 conversion (each is valid at every order, so the minimum is
/// valid). A negative result is clamped to 0 (an (ε, δ) guarantee implies every larger ε).
///
/// Orders with `r = +∞` are skipped.
///
/// # Privacy
/// Same relation as the RDP curve.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `0 < δ < 1`, for a NaN or negative RDP value
/// or an order `≤ 1`; [`AccountantError::InvalidGrid`] for mismatched lengths;
/// [`AccountantError::NumericalFailure`] if every order is infinite.
///
/// ```
/// use dpinfer_accountants::{Conversion, convert::rdp_to_approx};
/// let r = rdp_to_approx(&[2.0, 32.0], &[0.1, 1.6], 1e-5)?;
/// assert!(matches!(r.conversion, Conversion::BalleCks { .. }));
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn rdp_to_approx(
    orders: &[f64],
    values: &[f64],
    delta: f64,
) -> Result<Report, AccountantError> {
    rdp_to_approx_with(orders, values, delta, ConversionRule::Tightest)
}

/// [`rdp_to_approx`] with a selectable conversion: [`ConversionRule::Classic`] uses
/// Mironov 2017 Prop. 3 alone, `ε = min_α r(α) + ln(1/δ)/(α − 1)` (thesis Theorem 1).
///
/// # Errors
/// As [`rdp_to_approx`].
///
/// ```
/// use dpinfer_accountants::{Conversion, ConversionRule, convert::rdp_to_approx_with};
/// let r = rdp_to_approx_with(&[2.0, 32.0], &[0.1, 1.6], 1e-5, ConversionRule::Classic)?;
/// assert!(matches!(r.conversion, Conversion::Mironov { .. }));
/// let exact = (1.6f64 + (1e5f64).ln() / 31.0).min(0.1 + (1e5f64).ln());
/// assert!(r.epsilon >= exact && r.epsilon <= exact * (1.0 + 1e-13));
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn rdp_to_approx_with(
    orders: &[f64],
    values: &[f64],
    delta: f64,
    rule: ConversionRule,
) -> Result<Report, AccountantError> {
    let delta = open_unit("delta", delta)?;
    let ln_delta = libm::log(delta);
    let (best, conv) = best_conversion(
        orders,
        values,
        rule,
        f64::INFINITY,
        |a, r| mironov_eps(a, r, ln_delta),
        |a, r| balle_eps(a, r, ln_delta),
    )?;
    if !best.is_finite() {
        return Err(AccountantError::NumericalFailure {
            what: "every RDP order is infinite",
        });
    }
    Ok(Report {
        epsilon: round_up(best.max(0.0)),
        delta,
        conversion: conv,
    })
}

/// RDP curve → smallest δ at a given ε over the grid and both conversions:
/// Mironov `ln δ = (α−1)(r − ε)` and Balle/CKS `ln δ = (α−1)(r − ε + ln(1−1/α)) − ln α`.
/// Clamped to at most 1.
///
/// # Errors
/// As [`rdp_to_approx`], with `ε ≥ 0` finite instead of δ.
pub fn rdp_to_delta(
    orders: &[f64],
    values: &[f64],
    epsilon: f64,
) -> Result<Report, AccountantError> {
    rdp_to_delta_with(orders, values, epsilon, ConversionRule::Tightest)
}

/// [`rdp_to_delta`] with a selectable conversion ([`ConversionRule::Classic`]: Mironov's
/// `δ = min_α exp((α − 1)(r(α) − ε))` alone).
///
/// # Errors
/// As [`rdp_to_delta`].
pub fn rdp_to_delta_with(
    orders: &[f64],
    values: &[f64],
    epsilon: f64,
    rule: ConversionRule,
) -> Result<Report, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    // ln δ ≤ 0 always (δ = 1 is trivially true)
    let (best, conv) = best_conversion(
        orders,
        values,
        rule,
        0.0,
        |a, r| (a - 1.0) * (r - eps),
        |a, r| (a - 1.0) * (r - eps + libm::log1p(-1.0 / a)) - libm::log(a),
    )?;
    let delta = if best >= 0.0 {
        1.0
    } else {
        round_up_positive(libm::exp(best), true).min(1.0)
    };
    Ok(Report {
        epsilon: eps,
        delta,
        conversion: conv,
    })
}

/// The smallest of `start` and, over the finite points `(α, r)` of an RDP curve, Mironov's
/// bound `mironov(α, r)` and (unless [`ConversionRule::Classic`]) Balle/CKS's `balle(α, r)`,
/// with the conversion that gave it ([`Conversion::Pure`] if none beat `start`): the one
/// scan behind [`rdp_to_approx_with`] (bounds on ε) and [`rdp_to_delta_with`] (on ln δ).
///
/// # Errors
/// [`AccountantError::InvalidGrid`] for mismatched or empty slices;
/// [`AccountantError::InvalidParameter`] for an order that is NaN or `≤ 1` (`order`) or a
/// value that is NaN or negative (`rdp`). Points with an infinite order or value are skipped.
fn best_conversion(
    orders: &[f64],
    values: &[f64],
    rule: ConversionRule,
    start: f64,
    mironov: impl Fn(f64, f64) -> f64,
    balle: impl Fn(f64, f64) -> f64,
) -> Result<(f64, Conversion), AccountantError> {
    if orders.len() != values.len() || orders.is_empty() {
        return Err(AccountantError::InvalidGrid);
    }
    let mut best = start;
    let mut conv = Conversion::Pure;
    for (&a, &r) in orders.iter().zip(values) {
        if a.is_nan() || a <= 1.0 {
            return Err(AccountantError::InvalidParameter {
                name: "order",
                value: a,
            });
        }
        if r.is_nan() || r < 0.0 {
            return Err(AccountantError::InvalidParameter {
                name: "rdp",
                value: r,
            });
        }
        if !r.is_finite() || !a.is_finite() {
            continue;
        }
        let m = mironov(a, r);
        if m < best {
            best = m;
            conv = Conversion::Mironov { order: a };
        }
        if rule == ConversionRule::Classic {
            continue;
        }
        let b = balle(a, r);
        if b < best {
            best = b;
            conv = Conversion::BalleCks { order: a };
        }
    }
    Ok((best, conv))
}

/// Minimises a unimodal function of `t` on `[lo, hi]` by golden-section search; returns the
/// best `(t, f(t))` seen. Any `t` gives a valid bound, so a non-exact minimum only costs
/// tightness.
fn golden_min(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> (f64, f64) {
    const INV_PHI: f64 = 0.6180339887498949;
    let mut x1 = hi - INV_PHI * (hi - lo);
    let mut x2 = lo + INV_PHI * (hi - lo);
    let mut f1 = f(x1);
    let mut f2 = f(x2);
    for _ in 0..90 {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - INV_PHI * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + INV_PHI * (hi - lo);
            f2 = f(x2);
        }
    }
    if f1 <= f2 { (x1, f1) } else { (x2, f2) }
}

/// ρ-zCDP → (ε, δ): the better of Bun–Steinke `ρ + 2√(ρ ln(1/δ))` and the CKS20 bound
/// `min_α αρ + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)` (α optimised by golden-section search on
/// `ln(α − 1)`; every α is valid, so the result is an upper bound regardless of the
/// optimiser's accuracy).
///
/// # Privacy
/// Same relation as the zCDP guarantee.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `ρ ≥ 0` finite and `0 < δ < 1`.
///
/// ```
/// use dpinfer_accountants::convert::zcdp_to_approx;
/// let r = zcdp_to_approx(0.5, 1e-5)?;
/// let bs = 0.5 + 2.0 * (0.5 * (1e5f64).ln()).sqrt();
/// assert!(r.epsilon < bs);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn zcdp_to_approx(rho: f64, delta: f64) -> Result<Report, AccountantError> {
    zcdp_to_approx_with(rho, delta, ConversionRule::Tightest)
}

/// [`zcdp_to_approx`] with a selectable conversion: [`ConversionRule::Classic`] is
/// Bun–Steinke 2016 Prop. 1.3 alone, `ε = ρ + 2√(ρ ln(1/δ))` (thesis Theorem 1).
///
/// # Errors
/// As [`zcdp_to_approx`].
///
/// ```
/// use dpinfer_accountants::{Conversion, ConversionRule, convert::zcdp_to_approx_with};
/// let r = zcdp_to_approx_with(0.5, 1e-5, ConversionRule::Classic)?;
/// assert_eq!(r.conversion, Conversion::BunSteinke);
/// let bs = 0.5 + 2.0 * (0.5 * (1e5f64).ln()).sqrt();
/// assert!(r.epsilon >= bs && r.epsilon <= bs * (1.0 + 1e-13));
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn zcdp_to_approx_with(
    rho: f64,
    delta: f64,
    rule: ConversionRule,
) -> Result<Report, AccountantError> {
    let rho = non_negative("rho", rho)?;
    let delta = open_unit("delta", delta)?;
    if rho == 0.0 {
        return Ok(Report {
            epsilon: 0.0,
            delta,
            conversion: Conversion::Pure,
        });
    }
    let ln_delta = libm::log(delta);
    let bs = rho + 2.0 * libm::sqrt(rho * -ln_delta);
    if rule == ConversionRule::Classic {
        return Ok(Report {
            epsilon: round_up(bs),
            delta,
            conversion: Conversion::BunSteinke,
        });
    }
    // Near-optimal α for Bun–Steinke is 1 + √(ln(1/δ)/ρ); search ±12 e-folds around it
    // (the ratio capped at f64::MAX: for a subnormal ρ it overflows, and a search around +∞
    // found nothing, so the reported ε jumped back up to Bun–Steinke's, above that of a
    // larger ρ).
    let t0 = libm::log(libm::sqrt((-ln_delta / rho).min(f64::MAX)));
    let f = |t: f64| {
        let am1 = libm::exp(t);
        let a = 1.0 + am1;
        a * rho + libm::log1p(-1.0 / a) - (ln_delta + libm::log(a)) / am1
    };
    let (t, cks) = golden_min(f, t0 - 12.0, t0 + 12.0);
    let (eps, conversion) = if cks.is_finite() && cks < bs {
        (
            cks,
            Conversion::CksZcdp {
                order: 1.0 + libm::exp(t),
            },
        )
    } else {
        (bs, Conversion::BunSteinke)
    };
    Ok(Report {
        epsilon: round_up(eps.max(0.0)),
        delta,
        conversion,
    })
}

/// ρ-zCDP → smallest δ at ε: the better of Bun–Steinke `exp(−(ε−ρ)²/(4ρ))` (for ε ≥ ρ) and
/// the CKS20 bound `min_α exp((α−1)(αρ − ε + ln(1−1/α)))/α`.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `ρ ≥ 0` and `ε ≥ 0` are finite.
pub fn zcdp_to_delta(rho: f64, epsilon: f64) -> Result<Report, AccountantError> {
    zcdp_to_delta_with(rho, epsilon, ConversionRule::Tightest)
}

/// [`zcdp_to_delta`] with a selectable conversion ([`ConversionRule::Classic`]: Bun–Steinke's
/// `δ = exp(−(ε − ρ)²/(4ρ))` for ε ≥ ρ, else 1).
///
/// # Errors
/// As [`zcdp_to_delta`].
pub fn zcdp_to_delta_with(
    rho: f64,
    epsilon: f64,
    rule: ConversionRule,
) -> Result<Report, AccountantError> {
    let rho = non_negative("rho", rho)?;
    let eps = non_negative("epsilon", epsilon)?;
    if rho == 0.0 {
        return Ok(Report {
            epsilon: eps,
            delta: 0.0,
            conversion: Conversion::Pure,
        });
    }
    let bs = if eps > rho {
        -(eps - rho) * (eps - rho) / (4.0 * rho)
    } else {
        0.0
    };
    if rule == ConversionRule::Classic {
        let delta = if bs >= 0.0 {
            1.0
        } else {
            round_up_positive(libm::exp(bs), true).min(1.0)
        };
        return Ok(Report {
            epsilon: eps,
            delta,
            conversion: Conversion::BunSteinke,
        });
    }
    let f = |t: f64| {
        let am1 = libm::exp(t);
        let a = 1.0 + am1;
        am1 * (a * rho - eps + libm::log1p(-1.0 / a)) - libm::log(a)
    };
    let t0 = libm::log(((eps - rho) / (2.0 * rho)).clamp(1e-3, f64::MAX));
    let (t, cks) = golden_min(f, t0 - 12.0, t0 + 12.0);
    let (ln_d, conversion) = if cks.is_finite() && cks < bs {
        (
            cks,
            Conversion::CksZcdp {
                order: 1.0 + libm::exp(t),
            },
        )
    } else {
        (bs, Conversion::BunSteinke)
    };
    let delta = if ln_d >= 0.0 {
        1.0
    } else {
        round_up_positive(libm::exp(ln_d), true).min(1.0)
    };
    Ok(Report {
        epsilon: eps,
        delta,
        conversion,
    })
}

/// The largest ρ whose Bun–Steinke conversion meets (ε, δ):
/// `ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))²` (thesis Theorem 6), computed without cancellation
/// as `ε² / (√(ε + L) + √L)²` with `L = ln(1/δ)`.
///
/// # Privacy
/// This is a *budget*, so it is rounded **down** (by the same margin as [`round_up`]): any
/// ρ-zCDP mechanism with ρ ≤ the returned value is (ε, δ)-DP.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `ε ≥ 0` finite and `0 < δ < 1`.
///
/// ```
/// let rho = dpinfer_accountants::convert::rho_for_approx(1e-12, 1e-5)?;
/// assert!(rho > 0.0);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn rho_for_approx(epsilon: f64, delta: f64) -> Result<f64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let l = -libm::log(delta);
    let s = libm::sqrt(eps + l) + libm::sqrt(l);
    let rho = (eps / s) * (eps / s);
    Ok(round_down(rho))
}

/// Mirror of [`round_up`] for budgets: steps a non-negative value down by the same margin.
#[must_use]
pub(crate) fn round_down(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x.max(0.0);
    }
    (x - x * crate::ROUNDING_MARGIN).next_down().max(0.0)
}
