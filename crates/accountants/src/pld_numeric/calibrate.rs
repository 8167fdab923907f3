//! Calibration on the numerical PLD: the noise multiplier for a DP-SGD budget and the
//! maximum number of steps. Results are on the safe side and verified with the same
//! composition an accountant would report.

use super::{Component, ComposedPld, Discretisation, Mechanism};
use crate::error::{non_negative, open_unit, positive, rate};
use crate::{AccountantError, Neighbouring};

/// ε at `delta` after `steps` Poisson-subsampled Gaussian steps with noise multiplier `z`.
fn eps_at(
    z: f64,
    q: f64,
    steps: u64,
    delta: f64,
    disc: Discretisation,
) -> Result<f64, AccountantError> {
    let mu = 0.5 / (z * z);
    let c = Component::new(Mechanism::Gaussian { mu }, q)?;
    let pld = ComposedPld::new(&[(c, steps)], 0.0, Neighbouring::AddRemove, disc, false)?;
    match pld.epsilon(delta) {
        Ok(r) => Ok(r.epsilon),
        Err(AccountantError::DeltaTooSmall { .. }) => Ok(f64::INFINITY),
        Err(e) => Err(e),
    }
}

/// The smallest noise multiplier `z = σ/Δ` (to a relative tolerance of 10⁻⁴, rounded **up**)
/// such that `steps` Poisson-subsampled Gaussian steps at rate `q` are (ε, δ)-DP under
/// add/remove by the numerical PLD. Bisection between the RDP calibration (feasible, because
/// the PLD bound is never above RDP by more than the discretisation error) — or, where RDP
/// on the default orders cannot certify ε at all, the unsampled exact-PLD σ — and below.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] / [`AccountantError::InvalidCount`] for bad
/// inputs; [`AccountantError::Infeasible`] for ε = 0, or when `δ ≥ 1 − (1 − q)^steps` (every
/// σ meets the budget: no noise is needed); errors of the composition at the upper end of the
/// bracket.
pub fn poisson_gaussian_sigma(
    epsilon: f64,
    delta: f64,
    steps: u64,
    q: f64,
    discretisation: Discretisation,
) -> Result<f64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let q = rate("q", q)?;
    if steps == 0 {
        return Err(AccountantError::InvalidCount {
            name: "steps",
            value: 0,
        });
    }
    // Every σ > 0 meets δ ≥ 1 − (1 − q)^steps, the chance that some step samples the row:
    // the hockey-stick divergence is at most the total variation, at most that chance (the
    // runs with and without the row coincide unless it is sampled). There is no smallest σ,
    // and searching towards σ → 0 only builds ever wider loss grids.
    #[allow(
        clippy::cast_precision_loss,
        reason = "a count in the exponent, rounded"
    )]
    let sampled = -libm::expm1(steps as f64 * libm::log1p(-q));
    if delta >= sampled {
        return Err(AccountantError::Infeasible {
            what: "every sigma meets the budget: delta >= 1 - (1 - q)^steps, the chance that any step samples the row (no noise is needed)",
        });
    }
    if eps == 0.0 {
        return Err(AccountantError::Infeasible {
            what: "no finite sigma meets epsilon = 0",
        });
    }
    // The bracket starts at the RDP calibration; where RDP cannot certify ε at all (a small ε
    // at a small δ: its conversion alone costs more on the default orders), at the exact
    // PLD's σ for the same steps *without* sampling, which sampling only improves on (the
    // numerical PLD's pessimism is left to the growth loop below).
    let start = match crate::calibrate::poisson_gaussian_sigma_rdp(
        eps,
        delta,
        steps,
        q,
        &crate::DEFAULT_ORDERS,
    ) {
        Err(AccountantError::Infeasible { .. }) => {
            crate::calibrate::gaussian_sigma(eps, delta, steps, 1.0, crate::calibrate::Method::Pld)
        }
        other => other,
    };
    let mut hi = start?;
    let mut guard = 0;
    while eps_at(hi, q, steps, delta, discretisation)? > eps {
        hi *= 1.25;
        guard += 1;
        if guard > 40 {
            return Err(AccountantError::Infeasible {
                what: "pld sigma bracket",
            });
        }
    }
    // Below the verified `hi`, a composition that fails (its grid too wide for a tiny σ)
    // only leaves that σ unverified: it bounds the search from below.
    let fits = |z: f64| matches!(eps_at(z, q, steps, delta, discretisation), Ok(e) if e <= eps);
    let mut lo = hi * 0.5;
    guard = 0;
    while fits(lo) {
        hi = lo;
        lo *= 0.5;
        guard += 1;
        if guard > 60 {
            return Ok(hi);
        }
    }
    while hi - lo > 1e-4 * hi {
        let mid = 0.5 * (lo + hi);
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    positive("sigma", hi)
}

/// The largest number of Poisson-subsampled Gaussian steps (rate `q`, noise multiplier `z`)
/// that stays (ε, δ)-DP under add/remove by the numerical PLD (0 if not even one step fits),
/// searched up to `max_steps` by doubling and integer bisection (ε is non-decreasing in the
/// number of steps).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for bad inputs; errors of the composition.
pub fn poisson_gaussian_max_steps(
    epsilon: f64,
    delta: f64,
    z: f64,
    q: f64,
    max_steps: u64,
    discretisation: Discretisation,
) -> Result<u64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let z = positive("noise_multiplier", z)?;
    let q = rate("q", q)?;
    let ok = |n: u64| -> Result<bool, AccountantError> {
        Ok(eps_at(z, q, n, delta, discretisation)? <= eps)
    };
    dpinfer_math::largest_true(max_steps, ok)
}
