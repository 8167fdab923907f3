//! Composition theorems for approximate DP: basic, advanced (Dwork–Rothblum–Vadhan) and the
//! optimal homogeneous bound of Kairouz–Oh–Viswanath.
//!
//! # References
//! * C. Dwork, G. Rothblum, S. Vadhan, "Boosting and differential privacy", FOCS 2010;
//!   Dwork–Roth 2014, Theorem 3.20.
//! * P. Kairouz, S. Oh, P. Viswanath, "The composition theorem for differential privacy",
//!   ICML 2015, Theorem 3.3.

use dpinfer_math::{NeumaierSum, log_add_exp, log_sub_exp, softplus};

use crate::curves::count_up;
use crate::error::{AccountantError, count_in, non_negative, open_unit};
use crate::{ApproxDp, Conversion, Report, round_up};

/// Advanced composition: `k` adaptive (ε₀, δ₀)-DP mechanisms are
/// `(√(2k ln(1/δ'))·ε₀ + k·ε₀·(e^{ε₀} − 1), k·δ₀ + δ')`-DP for any `δ' > 0`
/// (Dwork–Roth 2014 Thm 3.20). `delta_total` is the total δ; `δ' = delta_total − kδ₀`.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for invalid inputs; [`AccountantError::DeltaTooSmall`]
/// if `delta_total ≤ kδ₀`.
///
/// ```
/// use dpinfer_accountants::{ApproxDp, composition::advanced};
/// let r = advanced(ApproxDp::new(0.01, 0.0)?, 1000, 1e-6)?;
/// assert!(r.epsilon < 10.0);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn advanced(each: ApproxDp, k: u64, delta_total: f64) -> Result<Report, AccountantError> {
    let dt = open_unit("delta", delta_total)?;
    let kf = count_up(k);
    let spent = round_up(kf * each.delta());
    let dp = dt - spent;
    if dp.is_nan() || dp <= 0.0 {
        return Err(AccountantError::DeltaTooSmall {
            requested: dt,
            spent,
        });
    }
    let e = each.epsilon();
    let eps = libm::sqrt(2.0 * kf * -libm::log(dp)) * e + kf * e * libm::expm1(e);
    if !eps.is_finite() {
        return Err(AccountantError::NumericalFailure {
            what: "advanced composition overflow",
        });
    }
    Ok(Report {
        epsilon: round_up(eps),
        delta: dt,
        conversion: Conversion::AdvancedComposition,
    })
}

/// Largest `k` for which [`optimal`] evaluates the exact KOV bound; above it, callers fall
/// back to the advanced bound.
pub const KOV_MAX_K: u64 = 2_000_000;

/// Iterates the KOV pairs `(ε_i, ln δ_i)` for `i = 0..=⌊k/2⌋`, where `ε_i = (k − 2i)ε₀` and
/// `δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε₀} − e^{(k−2i+l)ε₀}) / (1 + e^{ε₀})^k`, calling `visit`
/// until it returns `false`. δ_i is inflated by a cancellation-aware relative margin.
fn kov_walk(eps0: f64, k: u64, mut visit: impl FnMut(u64, f64) -> bool) {
    let kf = count_up(k);
    let norm = kf * softplus(eps0);
    // Relative error of the difference below, from cancellation: ≈ ulp / (1 − e^{−2ε₀}).
    let margin = 1.0 + 1e-13 / (-libm::expm1(-2.0 * eps0)).max(1e-300);
    let ln_margin = libm::log(margin);
    let mut ln_a = f64::NEG_INFINITY; // ln Σ_{l<i} C(k,l) e^{(k−l)ε}
    let mut ln_b = f64::NEG_INFINITY; // ln Σ_{l<i} C(k,l) e^{lε}
    let mut ln_c = NeumaierSum::new(); // ln C(k, l)
    let half = k / 2;
    let mut i: u64 = 0;
    loop {
        let lnd = if i == 0 {
            f64::NEG_INFINITY
        } else {
            let second = count_up(k - 2 * i) * eps0 + ln_b;
            let d = log_sub_exp(ln_a, second.min(ln_a));
            d - norm + ln_margin
        };
        if !visit(i, lnd) || i >= half {
            break;
        }
        // add l = i to the prefix sums
        let l = i;
        if l > 0 {
            let lf = count_up(l);
            ln_c.add(libm::log(kf - lf + 1.0) - libm::log(lf));
        }
        let c = ln_c.sum();
        ln_a = log_add_exp(ln_a, c + count_up(k - l) * eps0);
        ln_b = log_add_exp(ln_b, c + count_up(l) * eps0);
        i += 1;
    }
}

/// Optimal composition of `k` adaptive (ε₀, δ₀)-DP mechanisms (Kairouz–Oh–Viswanath 2015,
/// Theorem 3.3): the composition is `((k−2i)ε₀, 1 − (1−δ₀)^k (1−δ_i))`-DP for every
/// `i ∈ {0, …, ⌊k/2⌋}`; this returns the smallest such ε whose δ is at most `delta_total`,
/// also over the corner points of the `(k+1)`-fold composition (which dominates).
/// O(k) time, prefix sums in log space.
///
/// # Privacy
/// Homogeneous mechanisms whose (ε₀, δ₀) is fixed in advance; the relation of the parts.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for bad inputs, [`AccountantError::InvalidCount`]
/// for `k > KOV_MAX_K`, [`AccountantError::DeltaTooSmall`] if even `i = 0` (basic
/// composition) exceeds `delta_total`.
pub fn optimal(each: ApproxDp, k: u64, delta_total: f64) -> Result<Report, AccountantError> {
    let a = optimal_at(each, k, delta_total);
    // The (k+1)-fold composition dominates the k-fold one, so its bound is also valid for k;
    // taking the minimum removes the parity staircase of the corner points (ε levels are
    // (k − 2i)ε₀) and makes the reported ε monotone in k.
    match (a, optimal_at(each, k.saturating_add(1), delta_total)) {
        (Ok(x), Ok(y)) => Ok(if y.epsilon < x.epsilon { y } else { x }),
        (Ok(x), Err(_)) => Ok(x),
        (Err(_), Ok(y)) if k < KOV_MAX_K => Ok(y),
        (Err(e), _) => Err(e),
    }
}

fn optimal_at(each: ApproxDp, k: u64, delta_total: f64) -> Result<Report, AccountantError> {
    let dt = open_unit("delta", delta_total)?;
    count_in("k", k, ..=KOV_MAX_K)?;
    let e0 = each.epsilon();
    let ln_keep = count_up(k) * libm::log1p(-each.delta()); // ln (1−δ₀)^k
    let mut best: Option<u64> = None;
    if e0 == 0.0 {
        // δ_i = 0 for all i; ε = 0 if the δ₀ part fits.
        if -libm::expm1(ln_keep) <= dt {
            return Ok(Report {
                epsilon: 0.0,
                delta: dt,
                conversion: Conversion::OptimalComposition,
            });
        }
        return Err(AccountantError::DeltaTooSmall {
            requested: dt,
            spent: -libm::expm1(ln_keep),
        });
    }
    kov_walk(e0, k, |i, ln_di| {
        // δ = 1 − (1−δ₀)^k (1 − δ_i)
        let d = -libm::expm1(ln_keep + libm::log1p(-libm::exp(ln_di)));
        let d = round_up(d);
        if d <= dt {
            best = Some(i);
            true
        } else {
            false
        }
    });
    match best {
        Some(i) => Ok(Report {
            epsilon: round_up(count_up(k - 2 * i) * e0),
            delta: dt,
            conversion: Conversion::OptimalComposition,
        }),
        None => Err(AccountantError::DeltaTooSmall {
            requested: dt,
            spent: round_up(-libm::expm1(ln_keep)),
        }),
    }
}

/// The δ of the optimal KOV composition at a given total ε (the smallest δ over the `i` with
/// `(k − 2i)ε₀ ≤ ε`).
///
/// # Errors
/// As [`optimal`], with `ε ≥ 0` finite.
pub fn optimal_delta(each: ApproxDp, k: u64, epsilon: f64) -> Result<Report, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    count_in("k", k, ..=KOV_MAX_K)?;
    let e0 = each.epsilon();
    let ln_keep = count_up(k) * libm::log1p(-each.delta());
    let kf = count_up(k);
    // smallest i with (k − 2i) ε₀ ≤ ε
    let need = if e0 == 0.0 {
        0.0
    } else {
        libm::ceil((kf - eps / e0) / 2.0).max(0.0)
    };
    if need > count_up(k / 2) {
        return Ok(Report {
            epsilon: eps,
            delta: 1.0,
            conversion: Conversion::OptimalComposition,
        });
    }
    if e0 == 0.0 {
        return Ok(Report {
            epsilon: eps,
            delta: round_up(-libm::expm1(ln_keep)).min(1.0),
            conversion: Conversion::OptimalComposition,
        });
    }
    let mut out = 1.0;
    kov_walk(e0, k, |i, ln_di| {
        if count_up(i) >= need {
            out = round_up(-libm::expm1(ln_keep + libm::log1p(-libm::exp(ln_di)))).min(1.0);
            false
        } else {
            true
        }
    });
    Ok(Report {
        epsilon: eps,
        delta: out,
        conversion: Conversion::OptimalComposition,
    })
}
