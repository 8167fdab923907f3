//! Per-mechanism privacy curves and subsampling amplification (low-level free functions,
//! STYLE E9).
//!
//! # References
//! * Thesis (Raisa 2021) Theorem 4 (Gaussian RDP/zCDP/PLD), Theorems 8–9 (WBK19 formula).
//! * I. Mironov, "Rényi differential privacy", CSF 2017, Proposition 6 (Laplace).
//! * I. Mironov, K. Talwar, L. Zhang, "Rényi differential privacy of the sampled Gaussian
//!   mechanism", 2019 (MTZ19), §3.3.
//! * Y.-X. Wang, B. Balle, S. Kasiviswanathan, "Subsampled Rényi differential privacy and
//!   analytical moments accountant", AISTATS 2019 (WBK19), Theorem 9.
//! * B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018,
//!   Theorems 9–10; N. Li, W. Qardaji, D. Su, AsiaCCS 2012 (pure-DP amplification).
//! * Park, Vinaroz, Jitkrittum, "ABCDP", Entropy 2021, Theorem 1 (sparse vector).
//! * Xiong, Ju, Zhang, "Simulation-based inference with privacy-protected data",
//!   Proposition 4 (binomial infection curve).

use dpinfer_math::{NeumaierSum, ln_norm_cdf, log_add_exp, log1mexp, logsumexp_iter, softplus};

use crate::error::{AccountantError, finite, non_negative, positive, rate};
use crate::event::{BinomialBound, Event, MAX_EVENT_DEPTH};
use crate::{Neighbouring, round_up, round_up_positive};

/// `n` as f64, rounded **up** when `n > 2⁵³` is not representable (so counts never shrink).
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub(crate) fn count_up(n: u64) -> f64 {
    let c = n as f64;
    // `c as u64` saturates; if the rounded value is below n, step up.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let back = c as u64;
    if back < n { c.next_up() } else { c }
}

/// `k·d/b` rounded **up** exactly: the smallest `f64` not below the real quotient, for
/// finite `k, d ≥ 0` and `b > 0` whose operands and quotient are normal numbers (the pure-ε
/// costs `kΔ/b` of the Laplace and sparse-vector mechanisms). Elsewhere (zero, subnormal,
/// overflow) it falls back to the margin of [`round_up`].
///
/// A margin would put a mechanism calibrated to spend exactly its budget a few ulps above it
/// (SVT at ε = 1 claimed 1 + 4.3e-14); the exact comparison `q·b ≥ k·d` in 128-bit integer
/// arithmetic claims the true cost, rounded up to the next `f64`, and nothing more.
#[must_use]
pub fn mul_div_up(k: f64, d: f64, b: f64) -> f64 {
    let q = k * d / b;
    let normal = [k, d, b, k * d, q]
        .iter()
        .all(|x| x.is_normal() && *x > 0.0);
    if !normal {
        let positive = k > 0.0 && d > 0.0 && b.is_finite();
        let scaled = d * TWO_600;
        if positive && k * d < f64::MIN_POSITIVE && scaled.is_finite() {
            // k·d underflowed (a subnormal product keeps only an absolute accuracy): the
            // same quotient with d scaled up by 2⁶⁰⁰, then scaled back, exactly where the
            // result is normal and to the floor where it is not.
            return round_up_positive(mul_div_up(k, scaled, b) * TWO_MINUS_600, true);
        }
        return round_up_positive(q, positive);
    }
    // q = fl(fl(k·d)/b) is within two ulps of the quotient: step to the smallest q with
    // q·b ≥ k·d (at most a few steps; the margin is the fallback).
    let mut q = q;
    for _ in 0..8 {
        if !product_at_least((q, b), (k, d)) {
            q = q.next_up();
        } else if product_at_least((q.next_down(), b), (k, d)) {
            q = q.next_down();
        } else {
            return q;
        }
    }
    round_up(k * d / b)
}

/// `2⁶⁰⁰` and `2⁻⁶⁰⁰`, exact powers of two for [`mul_div_up`]'s rescaling.
const TWO_600: f64 = 4.149_515_568_880_993e180;
const TWO_MINUS_600: f64 = 2.409_919_865_102_884e-181;

/// `x = m·2^e` with the 53-bit integer significand `m` of a positive normal `x`.
fn significand(x: f64) -> (u128, i32) {
    let bits = x.to_bits();
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    (u128::from((bits & ((1 << 52) - 1)) | (1 << 52)), e)
}

/// `a.0·a.1 ≥ b.0·b.1` exactly, for positive normal numbers (products of two 53-bit
/// significands lie in [2¹⁰⁴, 2¹⁰⁶), so exponents more than two apart decide alone).
fn product_at_least(a: (f64, f64), b: (f64, f64)) -> bool {
    if !(a.0.is_normal() && a.1.is_normal() && a.0 > 0.0 && a.1 > 0.0) {
        return false;
    }
    let ((ma, ea), (mb, eb)) = (significand(a.0), significand(a.1));
    let ((mc, ec), (md, ed)) = (significand(b.0), significand(b.1));
    let (pa, xa) = (ma * mb, ea + eb);
    let (pb, xb) = (mc * md, ec + ed);
    if xa >= xb {
        let s = xa - xb;
        s > 4 || (pa << s) >= pb
    } else {
        let s = xb - xa;
        s <= 4 && pa >= (pb << s)
    }
}

/// PLD mean / zCDP ρ of one Gaussian mechanism, `μ = Δ²/(2σ²)` (thesis Thm 4.2), rounded up.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `σ > 0` and `Δ ≥ 0` are finite, or if the
/// result overflows.
pub fn gaussian_mu(sigma: f64, sensitivity: f64) -> Result<f64, AccountantError> {
    let s = positive("sigma", sigma)?;
    let d = non_negative("sensitivity", sensitivity)?;
    let r = d / s;
    finite(
        "gaussian mu overflow",
        round_up_positive(0.5 * r * r, d > 0.0),
    )
}

/// The number of released nodes a record's leaf is in, at most, in one epoch of tree
/// aggregation over `steps` leaves ([`Event::TreeAggregation`]): `⌈log₂(steps + 1)⌉`, the
/// complete dyadic blocks of `[1, steps]` containing a leaf (the bit length of `steps`;
/// `dp_accounting`'s `max_depth`). 0 for no step.
#[must_use]
pub fn tree_aggregation_depth(steps: u64) -> u64 {
    u64::from(u64::BITS - steps.leading_zeros())
}

/// PLD mean / zCDP ρ of one epoch of tree aggregation ([`Event::TreeAggregation`]): the
/// Gaussian mechanism with sensitivity `Δ·√d`, `μ = d·Δ²/(2σ²)` with
/// `d = `[`tree_aggregation_depth`]`(steps)`, rounded up.
///
/// # Errors
/// As [`gaussian_mu`]; [`AccountantError::InvalidCount`] for `steps = 0`.
pub fn tree_aggregation_mu(
    sigma: f64,
    sensitivity: f64,
    steps: u64,
) -> Result<f64, AccountantError> {
    let mu = gaussian_mu(sigma, sensitivity)?;
    if steps == 0 {
        return Err(AccountantError::InvalidCount {
            name: "steps",
            value: steps,
        });
    }
    finite(
        "tree aggregation mu overflow",
        round_up(count_up(tree_aggregation_depth(steps)) * mu),
    )
}

/// RDP of the Gaussian mechanism at order α: `αΔ²/(2σ²)` (Mironov 2017; thesis Thm 4.1).
///
/// # Errors
/// As [`gaussian_mu`]; α must be finite and `> 1`.
pub fn gaussian_rdp(sigma: f64, sensitivity: f64, alpha: f64) -> Result<f64, AccountantError> {
    let a = order(alpha)?;
    finite(
        "gaussian rdp overflow",
        round_up(a * gaussian_mu(sigma, sensitivity)?),
    )
}

/// The halting probability `γ ∈ (0, 1]` of the truncated negative binomial distribution
/// with shape `η ≥ 0` (`η = 0`: logarithmic, `η = 1`: geometric) and mean `μ ≥ 1`
/// (Papernot–Steinke 2022, Definition 1: mean `η(1/γ − 1)/(1 − γ^η)`, `(1/γ − 1)/ln(1/γ)` at
/// `η = 0`), as `dp_accounting`: bisection to 10⁻⁹ relative, the lower end returned (a
/// smaller γ only raises the bound of `repeat_and_select_rdp`).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `η < 0`, NaN, infinite `η` (the Poisson case
/// has no γ) or `μ < 1` / non-finite.
pub fn truncated_negative_binomial_gamma(shape: f64, mean: f64) -> Result<f64, AccountantError> {
    if shape.is_nan() || shape < 0.0 || shape.is_infinite() {
        return Err(AccountantError::InvalidParameter {
            name: "shape",
            value: shape,
        });
    }
    if !(mean.is_finite() && mean >= 1.0) {
        return Err(AccountantError::InvalidParameter {
            name: "mean",
            value: mean,
        });
    }
    // Exact comparisons: the geometric case and the removable points are single values.
    if shape.to_bits() == 1.0_f64.to_bits() {
        // 1/μ rounded down.
        return Ok((1.0 / mean).next_down().max(f64::MIN_POSITIVE));
    }
    // (e^x − 1)/x and ln(x)/(x − 1), continuous at their removable points.
    let expm1_over_x = |x: f64| if x == 0.0 { 1.0 } else { libm::expm1(x) / x };
    let logx_over_xm1 = |x: f64| {
        if x.to_bits() == 1.0_f64.to_bits() {
            1.0
        } else {
            libm::log(x) / (x - 1.0)
        }
    };
    let tnb_mean = |g: f64| {
        if shape == 0.0 {
            1.0 / (g * logx_over_xm1(g))
        } else {
            1.0 / (g * expm1_over_x(shape * libm::log(g)) * logx_over_xm1(g))
        }
    };
    let (mut lo, mut hi) = (0.0_f64, (2.0 * (shape + 1.0) / mean).min(1.0));
    while hi > lo * (1.0 + 1e-9) {
        let mid = 0.5 * (lo + hi);
        if tnb_mean(mid) < mean {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo <= f64::MIN_POSITIVE {
            break;
        }
    }
    if lo > 0.0 {
        Ok(lo)
    } else {
        Err(AccountantError::NumericalFailure {
            what: "truncated negative binomial gamma",
        })
    }
}

/// Validates the parameters of repeat-and-select ([`Event::RepeatAndSelect`]): a finite mean
/// `μ ≥ 1` of `K` and a shape `η ∈ [0, ∞]` of its law.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] naming `mean` or `shape`.
pub(crate) fn check_repeat_and_select(mean: f64, shape: f64) -> Result<(), AccountantError> {
    if !(mean.is_finite() && mean >= 1.0) {
        return Err(AccountantError::InvalidParameter {
            name: "mean",
            value: mean,
        });
    }
    if shape.is_nan() || shape < 0.0 {
        return Err(AccountantError::InvalidParameter {
            name: "shape",
            value: shape,
        });
    }
    Ok(())
}

/// RDP at order `α > 1` of repeat-and-select (Papernot & Steinke, "Hyperparameter tuning
/// with Rényi differential privacy", ICLR 2022; `dp_accounting`'s `RepeatAndSelectDpEvent`):
/// run a mechanism `K` times, `K` random with mean `μ ≥ 1`, and release only the best run.
/// `inner(λ)` is the mechanism's RDP at order `λ`, evaluated on `orders` (and α).
///
/// * Truncated negative binomial `K` (shape `η ∈ [0, ∞)`, halting probability γ from
///   [`truncated_negative_binomial_gamma`]; `η = 0` logarithmic, `η = 1` geometric), their
///   Theorem 2: `ε(α) + (1 + η)·min_λ̂[(1 − 1/λ̂)ε(λ̂) + ln(1/γ)/λ̂] + ln(μ)/(α − 1)`.
/// * Poisson `K` (`η = ∞`), their Theorem 6: `ε(α) + μ·δ̂ + ln(μ)/(α − 1)`, with `δ̂` the
///   mechanism's δ at `ε̂ = ln(1 + 1/(α − 1))` from its RDP curve
///   ([`crate::convert::rdp_to_delta`]).
///
/// Both are then made monotone in the order (RDP is non-decreasing in α): the value at α is
/// the least bound at any order `λ ≥ α` of `orders ∪ {α}`. Rounded up.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for bad α, μ or η; the inner curve's errors.
pub(crate) fn repeat_and_select_rdp(
    alpha: f64,
    mean: f64,
    shape: f64,
    orders: &[f64; crate::DEFAULT_ORDER_COUNT],
    mut inner: impl FnMut(f64) -> Result<f64, AccountantError>,
) -> Result<f64, AccountantError> {
    const M: usize = crate::DEFAULT_ORDER_COUNT + 1;
    let a = order(alpha)?;
    check_repeat_and_select(mean, shape)?;
    let mut ls = [a; M];
    ls[..crate::DEFAULT_ORDER_COUNT].copy_from_slice(orders);
    let mut rs = [0.0; M];
    for (r, &l) in rs.iter_mut().zip(&ls) {
        *r = inner(l)?;
    }
    let ln_mean = libm::log(mean);
    let mut bound_at = [f64::INFINITY; M];
    if shape.is_infinite() {
        for ((b, &l), &r) in bound_at.iter_mut().zip(&ls).zip(&rs) {
            let eps_hat = libm::log1p(1.0 / (l - 1.0));
            let d_hat = crate::convert::rdp_to_delta(&ls, &rs, eps_hat)?.delta;
            *b = round_up(r + round_up(mean * d_hat) + round_up(ln_mean / (l - 1.0)));
        }
    } else {
        let gamma = truncated_negative_binomial_gamma(shape, mean)?;
        let ln_inv_gamma = -libm::log(gamma);
        let c = ls
            .iter()
            .zip(&rs)
            .map(|(&l, &r)| round_up((1.0 - 1.0 / l) * r + ln_inv_gamma / l))
            .fold(f64::INFINITY, f64::min);
        let c = round_up((1.0 + shape) * c);
        for ((b, &l), &r) in bound_at.iter_mut().zip(&ls).zip(&rs) {
            *b = round_up(r + c + round_up(ln_mean / (l - 1.0)));
        }
    }
    let best = ls
        .iter()
        .zip(&bound_at)
        .filter(|(l, _)| **l >= a)
        .map(|(_, b)| *b)
        .fold(f64::INFINITY, f64::min);
    if best.is_nan() {
        return Err(AccountantError::NumericalFailure {
            what: "repeat and select rdp",
        });
    }
    Ok(best.max(0.0))
}

/// Largest integer order at which [`random_allocation_rdp`] evaluates the remove direction
/// exactly; above it the Gaussian's `αΔ²/(2σ²)` (no amplification) is used.
pub const RANDOM_ALLOCATION_MAX_EXACT_ORDER: u64 = 64;

/// RDP at order `α > 1` of **random allocation** (`dp_accounting`'s requested "balls in
/// bins"; Feldman & Shenfeld, "Privacy amplification by random allocation", 2025, arXiv
/// 2502.08202): each record is used in exactly one of `steps = t` steps, chosen uniformly at
/// random, each step the Gaussian mechanism (noise σ, ℓ₂ sensitivity Δ) on the records it
/// uses; add/remove neighbours, dominating pair `P = (1/t)Σᵢ N(a·eᵢ, I_t)` against
/// `Q = N(0, I_t)`, `a = Δ/σ` (Feldman–Shenfeld's reduction of the t adaptive steps to it).
/// An **upper bound**, the larger of the two directions:
///
/// * remove, `D_α(P‖Q)`: exact at integer `α ≤ 64` (their Corollary 6.2):
///   `E_Q[(P/Q)^α] = t^{−α} e^{−αa²/2} Σ_{n₁+…+n_t = α} (α!/Πnᵢ!) e^{a²Σnᵢ²/2}
///   = t^{−α} e^{−αa²/2} α! [x^α] f(x)^t` with `f(x) = Σ_{m ≤ α} e^{a²m²/2} x^m/m!`,
///   computed by repeated squaring of the truncated series in log space and rounded up by
///   10⁻¹⁰ relative; a fractional α takes the value at `⌈α⌉` (RDP is non-decreasing in α);
///   above 64, `αa²/2` (each component is a Gaussian: quasi-convexity);
/// * add, `D_α(Q‖P) ≤ a²(t + α − 1)/(2t)`: the arithmetic mean `P` is at least the geometric
///   mean of its components, `P(z) ≥ Q(z)·exp((a/t)Σzᵢ − a²/2)`, so
///   `E_Q[(Q/P)^{α−1}] ≤ exp((α − 1)a²/2 + (α − 1)²a²/(2t))` (the add-direction bound of
///   Feldman–Shenfeld's package).
///
/// `t = 1` is the Gaussian mechanism exactly.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for bad σ, Δ or α; [`AccountantError::InvalidCount`]
/// for `steps = 0`.
pub fn random_allocation_rdp(
    sigma: f64,
    sensitivity: f64,
    steps: u64,
    alpha: f64,
) -> Result<f64, AccountantError> {
    let al = order(alpha)?;
    let mu = gaussian_mu(sigma, sensitivity)?; // a²/2
    if steps == 0 {
        return Err(AccountantError::InvalidCount {
            name: "steps",
            value: steps,
        });
    }
    if mu == 0.0 {
        return Ok(0.0);
    }
    let t = count_up(steps);
    let add = round_up(2.0 * mu * (t + al - 1.0) / (2.0 * t) * (1.0 + 4.0 * f64::EPSILON));
    let ai = libm::ceil(al);
    #[allow(clippy::cast_precision_loss)]
    let remove = if steps == 1 || ai > RANDOM_ALLOCATION_MAX_EXACT_ORDER as f64 {
        round_up(al * mu)
    } else {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = ai as usize;
        let v = random_allocation_remove_exact(mu, steps, n);
        if v.is_finite() {
            // Never above the unamplified Gaussian at ⌈α⌉ (both are bounds; keep the least).
            v.min(round_up(ai * mu))
        } else {
            round_up(ai * mu)
        }
    };
    finite("random allocation rdp", add.max(remove))
}

/// `D_n(P‖Q)` of [`random_allocation_rdp`]'s remove pair at integer order `2 ≤ n ≤ 64`, `μ =
/// a²/2 > 0`, rounded up by a round-off bound and 10⁻¹⁰ relative.
fn random_allocation_remove_exact(mu: f64, steps: u64, n: usize) -> f64 {
    // 65 coefficients (degrees 0 to RANDOM_ALLOCATION_MAX_EXACT_ORDER = 64).
    const M: usize = 65;
    // ln of the coefficients of f: ln c_m = μ m² − ln m!.
    let mut base = [f64::NEG_INFINITY; M];
    for (m, c) in base.iter_mut().enumerate().take(n + 1) {
        #[allow(clippy::cast_precision_loss)]
        let mf = m as f64;
        *c = mu * mf * mf - dpinfer_math::ln_gamma(mf + 1.0);
    }
    // Truncated product of two log-space series (degree ≤ n).
    let mul = |x: &[f64; M], y: &[f64; M]| {
        let mut out = [f64::NEG_INFINITY; M];
        for (d, o) in out.iter_mut().enumerate().take(n + 1) {
            let mut top = f64::NEG_INFINITY;
            for i in 0..=d {
                top = top.max(x[i] + y[d - i]);
            }
            if top == f64::NEG_INFINITY {
                continue;
            }
            let mut sum = 0.0;
            for i in 0..=d {
                sum += libm::exp(x[i] + y[d - i] - top);
            }
            *o = top + libm::log(sum);
        }
        out
    };
    let mut acc = [f64::NEG_INFINITY; M];
    acc[0] = 0.0; // the series 1
    let mut power = base;
    let mut e = steps;
    while e > 0 {
        if e & 1 == 1 {
            acc = mul(&acc, &power);
        }
        e >>= 1;
        if e > 0 {
            power = mul(&power, &power);
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    let (lg, shift) = (
        dpinfer_math::ln_gamma(nf + 1.0),
        nf * (mu + libm::log(count_up(steps))),
    );
    let v = (lg + acc[n] - shift) / (nf - 1.0);
    // Round-off: each of the ≤ 2·64 series products and its log-sum-exp errs by a few ulp of
    // the magnitudes involved; 64·n ulp of the three terms' magnitudes bounds it generously.
    #[allow(clippy::cast_precision_loss)]
    let slack = 64.0 * nf * f64::EPSILON * (lg.abs() + acc[n].abs() + shift.abs()) / (nf - 1.0);
    round_up(v + slack + 1e-10 * v.abs()).max(0.0)
}

fn order(alpha: f64) -> Result<f64, AccountantError> {
    if alpha.is_finite() && alpha > 1.0 {
        Ok(alpha)
    } else {
        Err(AccountantError::InvalidParameter {
            name: "alpha",
            value: alpha,
        })
    }
}

/// RDP of the Laplace mechanism (scale b, ℓ₁ sensitivity Δ, λ = b/Δ) at order α > 1
/// (Mironov 2017, Proposition 6):
/// `1/(α−1) · ln( α/(2α−1)·e^{(α−1)/λ} + (α−1)/(2α−1)·e^{−α/λ} )`, evaluated in log space,
/// and never more than the pure bound `1/λ`.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `b ≤ 0`, `Δ < 0`, non-finite inputs or α ≤ 1.
pub fn laplace_rdp(scale: f64, sensitivity: f64, alpha: f64) -> Result<f64, AccountantError> {
    let b = positive("scale", scale)?;
    let d = non_negative("sensitivity", sensitivity)?;
    let a = order(alpha)?;
    if d == 0.0 {
        return Ok(0.0);
    }
    let inv_l = d / b;
    let den = 2.0 * a - 1.0;
    let t = log_add_exp(
        libm::log(a / den) + (a - 1.0) * inv_l,
        libm::log((a - 1.0) / den) - a * inv_l,
    );
    let r = (t / (a - 1.0)).max(0.0);
    finite("laplace rdp", round_up(r.min(inv_l)))
}

/// RDP implied by pure ε-DP at order α: `min(ε, αε²/2)` (Bun–Steinke 2016 Prop. 1.4 via
/// zCDP, and RDP ≤ max divergence).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for ε < 0, non-finite, or α ≤ 1.
pub fn pure_rdp(epsilon: f64, alpha: f64) -> Result<f64, AccountantError> {
    let e = non_negative("epsilon", epsilon)?;
    let a = order(alpha)?;
    finite("pure rdp", round_up(e.min(0.5 * a * e * e)))
}

/// Pure ε of the sparse-vector / SVT-ABC mechanism (ABCDP Theorem 1):
/// `(c+1)Δ/b` without threshold resampling, `2cΔ/b` with. `c = 0` (no positive answer is
/// ever released) costs the threshold alone, `Δ/b`: every released answer is negative, and
/// shifting the threshold noise by Δ maps each all-negative run on one neighbour to the
/// other (the first step of Theorem 1's proof; Dwork–Roth 2014 Thm 3.23). Both forms agree
/// there (`(0+1)Δ/b`); for resampling `2cΔ/b` would wrongly give 0.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `b ≤ 0`, `Δ < 0` or non-finite values.
pub fn sparse_vector_epsilon(
    c: u64,
    scale: f64,
    sensitivity: f64,
    resample: bool,
) -> Result<f64, AccountantError> {
    let b = positive("scale", scale)?;
    let d = non_negative("sensitivity", sensitivity)?;
    let k = if c == 0 {
        1.0
    } else if resample {
        2.0 * count_up(c)
    } else {
        count_up(c).next_up().max(count_up(c) + 1.0)
    };
    finite("sparse vector epsilon", mul_div_up(k, d, b))
}

/// Pure ε of **one** binomial infection-curve release with `n` trials and pseudo-count `m`
/// (Xiong et al. Prop. 4): exact `n·ln(1 + 1/m)` or the paper's `n/m`.
///
/// # Errors
/// [`AccountantError::InvalidCount`] for `n = 0`; [`AccountantError::InvalidParameter`] for
/// `m ≤ 0` or non-finite.
pub fn binomial_release_epsilon(
    n: u64,
    m: f64,
    bound: BinomialBound,
) -> Result<f64, AccountantError> {
    if n == 0 {
        return Err(AccountantError::InvalidCount {
            name: "n",
            value: n,
        });
    }
    let m = positive("m", m)?;
    let per = match bound {
        BinomialBound::Exact => libm::log1p(1.0 / m),
        BinomialBound::Paper => 1.0 / m,
    };
    finite("binomial epsilon", round_up(count_up(n) * per))
}

/// Pure ε of `L` binomial infection-curve releases (Xiong et al. Prop. 4): exact
/// `L·n·ln(1 + 1/m)` (default) or the paper's `nL/m`. The exact bound is never larger,
/// because `ln(1 + x) ≤ x`.
///
/// # Errors
/// As [`binomial_release_epsilon`], plus `L = 0`.
pub fn binomial_curve_epsilon(
    n: u64,
    m: f64,
    releases: u64,
    bound: BinomialBound,
) -> Result<f64, AccountantError> {
    let (l, e) = binomial_releases(n, m, releases, bound)?;
    finite("binomial epsilon", round_up(l * e))
}

/// RDP at order α of **one** DP-Barker iteration on a batch of `batch` rows drawn without
/// replacement from `population` (Räisä 2021 thesis Theorem 8, after Heikkilä et al. 2019;
/// [`Event::DpBarker`]).
///
/// Theorem 8 bounds integer orders `2 ≤ α < |B|/5` by the WBK19 amplification with
/// `q = |B|/n` of `ε'(α) = 5/(2|B|) + ln(2|B|/(|B| − 5α))/(2(α−1)) + 2α/(|B| − 5α)`
/// ([`crate::calibrate::dp_barker_rdp`]). A fractional α takes the bound of `⌈α⌉` (order 2
/// below 2): Rényi divergence is nondecreasing in α (van Erven & Harremoës 2014, Thm 3), so
/// it is still an upper bound. Orders with `5⌈α⌉ ≥ |B|` have no bound: `+∞`.
///
/// # Privacy
/// Replace-one relation (substitute one row), per-row log-likelihood ratios bounded by
/// `√|B|/n`.
///
/// # Errors
/// [`AccountantError::InvalidCount`] unless `n ≥ 1` and `11 ≤ |B| ≤ n`;
/// [`AccountantError::InvalidParameter`] for α not finite or ≤ 1.
pub fn dp_barker_step_rdp(batch: u64, population: u64, alpha: f64) -> Result<f64, AccountantError> {
    crate::event::check_dp_barker(batch, population)?;
    let a = libm::ceil(order(alpha)?).max(2.0);
    if a >= count_up(batch) {
        return Ok(f64::INFINITY);
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let a = a as u64;
    if a.checked_mul(5).is_none_or(|a5| a5 >= batch) {
        return Ok(f64::INFINITY);
    }
    crate::calibrate::dp_barker_rdp(batch, population, a)
}

/// Pure-DP amplification by subsampling: `ln(1 + q(e^ε − 1))`. Valid for Poisson sampling
/// with rate q under add/remove (Li–Qardaji–Su 2012) and for sampling a fraction
/// `q = m/n` without replacement under replace-one (Balle et al. 2018, Thm 9).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `q ∈ (0, 1]` and `ε ≥ 0` finite.
pub fn amplify_pure(q: f64, epsilon: f64) -> Result<f64, AccountantError> {
    let q = rate("q", q)?;
    let e = non_negative("epsilon", epsilon)?;
    if q >= 1.0 {
        return Ok(e);
    }
    let v = if e < 1.0 {
        libm::log1p(q * libm::expm1(e))
    } else {
        log_add_exp(libm::log1p(-q), libm::log(q) + e)
    };
    // Never above ε itself (the unamplified bound, already an upper bound), so the floor of
    // an underflowed positive value cannot exceed what q = 1 reports.
    finite(
        "amplified epsilon",
        round_up_positive(v.min(e), q > 0.0 && e > 0.0).min(round_up(e)),
    )
}

/// `ln(e^x − 1)` for `x > 0` without overflow.
#[inline]
fn ln_expm1(x: f64) -> f64 {
    if x > 1.0 {
        x + log1mexp(-x)
    } else {
        libm::log(libm::expm1(x))
    }
}

/// `ln(k(1 − p)/p)` and `ε = ln(1 + k(1 − p)/p)` of k-ary randomized response, unrounded
/// (`p ∈ (0, 1)`, `k ≥ 2`); `x = k(1 − p)/p` may overflow, its logarithm does not.
fn randomized_response_loss(noise: f64, buckets: u64) -> f64 {
    let x = count_up(buckets) * (1.0 - noise) / noise;
    if x.is_finite() {
        libm::log1p(x)
    } else {
        // x > 1.8e308: ln(1 + x) = ln x to far below an ulp.
        libm::log(count_up(buckets)) + libm::log1p(-noise) - libm::log(noise)
    }
}

/// Pure ε of k-ary randomized response ([`Event::RandomizedResponse`]) with noise parameter
/// `p` over `k` buckets: `ln(1 + k(1 − p)/p)`, the log-ratio of `1 − p + p/k` to `p/k`
/// (exact: the two output laws of a changed record attain it), rounded up; 0 for `k = 1`
/// or `p = 1`.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `p ∈ (0, 1]`;
/// [`AccountantError::InvalidCount`] for `k = 0`.
pub fn randomized_response_epsilon(noise: f64, buckets: u64) -> Result<f64, AccountantError> {
    crate::event::check_randomized_response(noise, buckets)?;
    if buckets == 1 || noise >= 1.0 {
        return Ok(0.0);
    }
    finite(
        "randomized response epsilon",
        round_up(randomized_response_loss(noise, buckets)),
    )
}

/// RDP at order α of k-ary randomized response under replace-one: the Rényi divergence of
/// the output laws `(a, b, b, …)` and `(b, a, b, …)`, `a = 1 − p + p/k`, `b = p/k`
/// (`dp_accounting`'s `_randomized_response_rdp_replace_one`):
/// `D_α = ln(b·e^{αL} + a·e^{−αL} + (k − 2)b)/(α − 1)` with `L = ln(a/b)`. Evaluated as
/// `log1p(b·expm1((α−1)L)·e^{−(α−1)L}·expm1(αL))/(α − 1)` — the sum minus 1 factored into
/// positive terms (no cancellation as α → 1 or p → 1), in log space (no overflow) — and
/// capped by ε (RDP ≤ max divergence), rounded up.
///
/// # Errors
/// As [`randomized_response_epsilon`], and [`AccountantError::InvalidParameter`] for
/// `α ≤ 1` or non-finite α.
pub fn randomized_response_rdp(
    noise: f64,
    buckets: u64,
    alpha: f64,
) -> Result<f64, AccountantError> {
    let eps = randomized_response_epsilon(noise, buckets)?;
    let a = order(alpha)?;
    if eps == 0.0 {
        return Ok(0.0);
    }
    let l = randomized_response_loss(noise, buckets);
    let u = (a - 1.0) * l;
    let ln_b = libm::log(noise) - libm::log(count_up(buckets));
    let ln_sum_m1 = ln_b + ln_expm1(u) - u + ln_expm1(a * l);
    if ln_sum_m1.is_nan() {
        return Err(AccountantError::NumericalFailure {
            what: "randomized response rdp",
        });
    }
    let d = softplus(ln_sum_m1) / (a - 1.0);
    finite("randomized response rdp", round_up(d.min(eps)))
}

/// ρ-zCDP of an ε-bounded-range mechanism ([`Event::ExponentialMechanism`]): `ρ = ε²/8`
/// (Cesar–Rogers 2021; the loss lies in an interval of length ε, so Hoeffding's lemma
/// bounds its moment generating function), rounded up.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for ε < 0 or non-finite.
pub fn bounded_range_rho(epsilon: f64) -> Result<f64, AccountantError> {
    let e = non_negative("epsilon", epsilon)?;
    finite(
        "bounded range rho",
        round_up_positive(0.125 * e * e, e > 0.0),
    )
}

/// RDP at order α of the Poisson-subsampled Gaussian mechanism (rate q, noise multiplier
/// `z = σ/Δ`) under add/remove, Mironov–Talwar–Zhang 2019:
/// `ε(α) = ln(A_α)/(α − 1)` with `A_α = E_{x∼N(0,z²)}[(1 − q + q·e^{(2x−1)/(2z²)})^α]`.
///
/// * Integer α: `A − 1 = Σ_{k=2}^{α} C(α,k) q^k (1−q)^{α−k} expm1(k(k−1)/(2z²))`, every term
///   positive and summed in log space, then `ε = log1p(A − 1)/(α − 1)`: no `1 + tiny`
///   cancellation for q down to 10⁻⁸, no overflow for α ≥ 4096.
/// * Fractional α: the two-sided MTZ19 series with **signed** binomial coefficients (the
///   terms alternate once `i > α`), rewritten so that the leading `1` cancels analytically
///   for `q < ½`, accumulated as separate positive and negative log-sums.
///
/// Returns `+∞` only if the exact value overflows f64.
///
/// # Privacy
/// Add/remove relation. `Δ = 0` gives 0. `q = 1` gives the plain Gaussian `α/(2z²)`.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `q ∉ (0, 1]`, `z ≤ 0`, non-finite, α ≤ 1;
/// [`AccountantError::NumericalFailure`] if the fractional series does not converge or
/// cancels below zero.
pub fn poisson_gaussian_rdp(
    q: f64,
    noise_multiplier: f64,
    alpha: f64,
) -> Result<f64, AccountantError> {
    let q = rate("q", q)?;
    let z = positive("noise_multiplier", noise_multiplier)?;
    let a = order(alpha)?;
    let inv2s2 = 0.5 / (z * z);
    if q >= 1.0 {
        return finite("gaussian rdp", round_up(a * inv2s2));
    }
    if inv2s2 < TINY_GAUSSIAN_RDP {
        // z > 7·10⁹⁹: `z²` (and `z₀`) leave the f64 range in the fractional series. The
        // unsubsampled Gaussian `α/(2z²) < α·10⁻²⁰⁰` is a valid bound (subsampling never
        // costs more) and is below any ε the conversions can resolve.
        return Ok(round_up(a * (0.5 / z / z)));
    }
    let ln_am1 = if a - libm::floor(a) <= 0.0 && a <= 1e7 {
        integer_log_a_minus_1(q, inv2s2, a)
    } else {
        fractional_log_a_minus_1(q, z, inv2s2, a)?
    };
    if ln_am1.is_nan() {
        return Err(AccountantError::NumericalFailure {
            what: "poisson subsampled gaussian series",
        });
    }
    let eps = softplus(ln_am1) / (a - 1.0);
    // Never more than the unsubsampled Gaussian (post-processing of the full data release).
    Ok(round_up(eps.min(a * inv2s2)))
}

/// Below this `1/(2z²)` the Poisson-subsampled Gaussian's RDP is reported as the plain
/// Gaussian's (see [`poisson_gaussian_rdp`]).
const TINY_GAUSSIAN_RDP: f64 = 1e-200;

/// `ln(A_α − 1)` for integer α (all terms positive), by [`logsumexp_iter`] (max-shifted,
/// one `exp` per term): a term that overflows to `+∞` (`k(k−1)/(2z²)` beyond f64 when `z`
/// is tiny) makes the sum `+∞`, never NaN or "no terms" (issue 26: σ = 1e-200 summed
/// `∞ − ∞` and came out as an empty sum, ε = 0).
fn integer_log_a_minus_1(q: f64, inv2s2: f64, a: f64) -> f64 {
    let ln_q = libm::log(q);
    let ln_1mq = libm::log1p(-q);
    let mut ln_c = NeumaierSum::new(); // ln C(α, k), built incrementally
    ln_c.add(libm::log(a)); // k = 1
    let mut k = 2.0_f64;
    logsumexp_iter(core::iter::from_fn(|| {
        if k > a {
            return None;
        }
        ln_c.add(libm::log((a - k + 1.0) / k));
        let x = k * (k - 1.0) * inv2s2;
        // ln(e^x − 1) = x + ln(1 − e^{−x}); the correction is below 2⁻⁶⁰ for x > 42.
        let lx = if x > 42.0 { x } else { ln_expm1(x) };
        let t = ln_c.sum() + k * ln_q + (a - k) * ln_1mq + lx;
        k += 1.0;
        Some(t)
    }))
}

/// Relative convergence tolerance of the Euler-accelerated fractional tail (the result is
/// inflated by twice this, so it stays an upper bound).
const EULER_TOL: f64 = 1e-11;

/// Iteration cap of the fractional-order series.
const MAX_FRAC_TERMS: usize = 50_000;

/// Signed log-space accumulator: keeps `ln Σ positive` and `ln Σ |negative|`.
#[derive(Clone, Copy)]
struct SignedLogSum {
    pos: f64,
    neg: f64,
}

impl SignedLogSum {
    fn add(&mut self, ln_abs: f64, positive: bool) {
        if positive {
            self.pos = log_add_exp(self.pos, ln_abs);
        } else {
            self.neg = log_add_exp(self.neg, ln_abs);
        }
    }
}

/// `ln(A_α − 1)` for fractional α by the MTZ19 series.
///
/// With `z₀ = z² ln(1/q − 1) + ½`, `b_i = C(α,i) q^i (1−q)^{α−i}`, `c_i = i(i−1)/(2z²)`:
/// `A = Σ_i b_i e^{c_i} Φ((z₀−i)/z) + Σ_i C(α,i) q^{α−i}(1−q)^i e^{c_{α−i}} Φ((α−i−z₀)/z)`.
/// For `q < ½`, `Σ_i b_i = 1`, so
/// `A − 1 = Σ_i b_i (expm1(c_i) Φ((z₀−i)/z) − Φ((i−z₀)/z)) + (second sum)`.
fn fractional_log_a_minus_1(q: f64, z: f64, inv2s2: f64, a: f64) -> Result<f64, AccountantError> {
    let ln_q = libm::log(q);
    let ln_1mq = libm::log1p(-q);
    let z0 = z * z * (libm::log(1.0 / q - 1.0)) + 0.5;
    let mut acc = SignedLogSum {
        pos: f64::NEG_INFINITY,
        neg: f64::NEG_INFINITY,
    };
    let use_identity = q < 0.5;
    let mut ln_c = NeumaierSum::new(); // ln |C(α, i)|
    let mut sign = true; // sign of C(α, i)
    let mut i = 0.0_f64;
    let mut converged = false;
    // The tail (i > α) alternates in sign with |terms| decaying only like i^{−α−2}; the
    // partial sums are averaged (S_{n−1} + t_n/2), whose error is ≈ |t_n − t_{n+1}|/2
    // ≈ |t_n|(α+2)/(2n) (alternating-series bound).
    let mut last: [(f64, bool); 3] = [(f64::NEG_INFINITY, true); 3];
    const EULER: usize = 8;
    let mut hist = [0.0_f64; EULER];
    let mut filled = 0usize;
    let mut reference = f64::NEG_INFINITY;
    let mut prev_est = f64::NAN;
    let mut accelerated: Option<f64> = None;
    for _ in 0..MAX_FRAC_TERMS {
        if i > 0.0 {
            let f = a - i + 1.0;
            if f < 0.0 {
                sign = !sign;
            }
            ln_c.add(libm::log(f.abs()) - libm::log(i));
        }
        let lc = ln_c.sum();
        let j = a - i;
        let ln_b = lc + i * ln_q + j * ln_1mq;
        let ci = i * (i - 1.0) * inv2s2;
        let cj = j * (j - 1.0) * inv2s2;
        let ln_p = ln_norm_cdf((z0 - i) / z);
        let ln_s1 = lc + j * ln_q + i * ln_1mq + cj + ln_norm_cdf((j - z0) / z);
        let mut parts = [(f64::NEG_INFINITY, true); 3];
        if use_identity {
            if ci > 0.0 {
                parts[0] = (ln_b + ln_expm1(ci) + ln_p, sign);
            }
            parts[1] = (ln_b + ln_norm_cdf((i - z0) / z), !sign);
        } else {
            parts[0] = (ln_b + ci + ln_p, sign);
        }
        parts[2] = (ln_s1, sign);
        let mut biggest = f64::NEG_INFINITY;
        for &(t, sg) in &parts {
            if t > f64::NEG_INFINITY {
                acc.add(t, sg);
                biggest = biggest.max(t);
            }
        }
        last = parts;
        if i > a + 2.0 && acc.pos > acc.neg {
            let total = acc.pos + log1mexp(acc.neg - acc.pos);
            // ln(A − 1): the sum itself in the identity branch, else from ln A.
            let total = if use_identity {
                total
            } else if total > 0.0 {
                total + log1mexp(-total)
            } else {
                f64::NEG_INFINITY
            };
            if biggest + libm::log((a + 2.0) / i) < total - 36.0 {
                converged = true;
                break;
            }
            // Euler–van Wijngaarden repeated averaging of the last EULER partial sums of the
            // alternating tail (linear scale relative to `reference`).
            if reference == f64::NEG_INFINITY {
                reference = acc.pos;
            }
            hist.copy_within(1.., 0);
            hist[EULER - 1] = libm::exp(acc.pos - reference) - libm::exp(acc.neg - reference);
            filled += 1;
            if filled >= EULER {
                let mut t = hist;
                for level in 1..EULER {
                    for jx in 0..EULER - level {
                        t[jx] = 0.5 * (t[jx] + t[jx + 1]);
                    }
                }
                let est = t[0];
                // The quantity whose relative accuracy matters is A − 1: `est` itself in the
                // identity branch, `est − e^{−reference}` (= (A − 1)·e^{−reference}) otherwise.
                let target = if use_identity {
                    est
                } else {
                    est - libm::exp(-reference)
                };
                let floor = 1e-15 * libm::exp(acc.pos.max(acc.neg) - reference);
                if target > 0.0 && (est - prev_est).abs() <= EULER_TOL * target + floor {
                    // Inflate by twice the tolerance so the truncation error cannot make the
                    // value smaller than the exact one.
                    accelerated = Some(reference + libm::log(target) + 2.0 * EULER_TOL);
                    converged = true;
                    break;
                }
                prev_est = est;
            }
        }
        i += 1.0;
    }
    if let Some(ln_am1) = accelerated {
        return Ok(ln_am1);
    }
    if !converged {
        return Err(AccountantError::NumericalFailure {
            what: "fractional MTZ19 series did not converge",
        });
    }
    // Averaging correction: remove half of the last term (S_n − t_n/2).
    for &(t, sg) in &last {
        if t > f64::NEG_INFINITY {
            acc.add(t - core::f64::consts::LN_2, !sg);
        }
    }
    // ln(A) or ln(A − 1) depending on the branch.
    let ln_sum = if acc.pos > acc.neg {
        acc.pos + log1mexp(acc.neg - acc.pos)
    } else {
        return Err(AccountantError::NumericalFailure {
            what: "fractional MTZ19 series cancelled below zero",
        });
    };
    if use_identity {
        Ok(ln_sum)
    } else {
        // ln(A − 1) from ln A ≥ 0 (A ≥ 1 always).
        if ln_sum <= 0.0 {
            return Ok(f64::NEG_INFINITY);
        }
        Ok(ln_sum + log1mexp(-ln_sum))
    }
}

/// RDP at integer order α ≥ 2 of a mechanism run on a sample drawn **without replacement**
/// with sampling ratio `q = batch/population`, given the base mechanism's RDP at integer
/// orders (WBK19 Theorem 9; thesis Theorems 8–9):
///
/// `ε(α) = 1/(α−1)·ln(1 + q²C(α,2)·min{4(e^{ε'(2)}−1), 2e^{ε'(2)}} + Σ_{j=3}^{α} 2q^j C(α,j) e^{(j−1)ε'(j)})`
///
/// with the sum running **through j = α inclusive**, evaluated in log space, and then the
/// minimum with the unsubsampled `ε'(α)` (also a valid bound).
///
/// # Privacy
/// Replace-one relation.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `q ∉ (0, 1]`, [`AccountantError::InvalidCount`]
/// for α < 2, any error of `base`, [`AccountantError::NumericalFailure`] for a NaN.
pub fn wor_rdp<F>(q: f64, alpha: u64, mut base: F) -> Result<f64, AccountantError>
where
    F: FnMut(u64) -> Result<f64, AccountantError>,
{
    let q = rate("q", q)?;
    if alpha < 2 {
        return Err(AccountantError::InvalidCount {
            name: "alpha",
            value: alpha,
        });
    }
    let a = count_up(alpha);
    let base_alpha = base(alpha)?;
    let e2 = base(2)?;
    let ln_q = libm::log(q);
    let ln_c2 = libm::log(a) + libm::log(a - 1.0) - core::f64::consts::LN_2;
    let ln_min = (core::f64::consts::LN_2 * 2.0 + ln_expm1(e2).max(f64::NEG_INFINITY))
        .min(core::f64::consts::LN_2 + e2);
    let ln_min = if e2 == 0.0 { f64::NEG_INFINITY } else { ln_min };
    let mut acc = NeumaierSum::new();
    acc.add(ln_c2);
    let mut err: Option<AccountantError> = None;
    let mut j: u64 = 3;
    // ln of the sum without its leading 1; ε = log1p(sum)/(α−1) keeps full relative
    // accuracy when the sum is tiny.
    let terms = core::iter::once(2.0 * ln_q + ln_c2 + ln_min).chain(core::iter::from_fn(|| {
        if j > alpha || err.is_some() {
            return None;
        }
        let jf = count_up(j);
        acc.add(libm::log(a - jf + 1.0) - libm::log(jf));
        let ej = match base(j) {
            Ok(v) => v,
            Err(e) => {
                err = Some(e);
                return None;
            }
        };
        j += 1;
        Some(core::f64::consts::LN_2 + jf * ln_q + acc.sum() + (jf - 1.0) * ej)
    }));
    let ln_sum = logsumexp_iter(terms);
    if let Some(e) = err {
        return Err(e);
    }
    if ln_sum.is_nan() {
        return Err(AccountantError::NumericalFailure { what: "WBK19 sum" });
    }
    let eps = softplus(ln_sum) / (a - 1.0);
    Ok(round_up(eps.min(base_alpha)))
}

// ----- event evaluation (used by the accountants) -----

/// A privacy notion an event tree can be folded into: its value, how repetitions and
/// compositions of values combine, and the value of every other node (mechanisms and
/// subsampled events). [`fold`] is the one walk over the tree; adding an [`Event`] variant
/// means one arm in the `node` of each notion that can express it (the `_` arms report
/// [`AccountantError::Unsupported`]).
pub(crate) trait Notion {
    /// The notion's value of one event (ε, (ε, δ), ρ, μ, or an RDP value at one order).
    type Value: Additive;
    /// The name of the [`AccountantError::NumericalFailure`] when a composed or repeated
    /// value overflows to ±∞, or `None` where +∞ is a valid value (RDP).
    const OVERFLOW: Option<&'static str>;
    /// The value of a node that is neither [`Event::SelfComposed`] nor [`Event::Composed`]
    /// (its children, if any, are at `depth + 1`).
    fn node(
        &self,
        ev: &Event<'_>,
        relation: Neighbouring,
        depth: usize,
    ) -> Result<Self::Value, AccountantError>;
}

/// A value that composes by addition (compensated sums, each component rounded up).
pub(crate) trait Additive: Copy {
    /// The running sum.
    type Sum: Default;
    /// The empty composition.
    const ZERO: Self;
    /// Adds one part.
    fn add(self, sum: &mut Self::Sum);
    /// The sum of the parts, rounded up.
    fn total(sum: &Self::Sum) -> Self;
    /// `count` times the value, rounded up.
    fn times(self, count: u64) -> Self;
    /// Checks a composed or repeated value: finite unless `overflow` is `None` (the first
    /// component; a δ component is capped at 1 instead).
    fn settle(self, overflow: Option<&'static str>) -> Result<Self, AccountantError>;
}

impl Additive for f64 {
    type Sum = NeumaierSum;
    const ZERO: Self = 0.0;
    fn add(self, sum: &mut NeumaierSum) {
        sum.add(self);
    }
    fn total(sum: &NeumaierSum) -> Self {
        round_up(sum.sum())
    }
    fn times(self, count: u64) -> Self {
        round_up(count_up(count) * self)
    }
    fn settle(self, overflow: Option<&'static str>) -> Result<Self, AccountantError> {
        match overflow {
            Some(what) => finite(what, self),
            None => Ok(self),
        }
    }
}

impl Additive for (f64, f64) {
    type Sum = (NeumaierSum, NeumaierSum);
    const ZERO: Self = (0.0, 0.0);
    fn add(self, sum: &mut Self::Sum) {
        sum.0.add(self.0);
        sum.1.add(self.1);
    }
    fn total(sum: &Self::Sum) -> Self {
        (f64::total(&sum.0), f64::total(&sum.1))
    }
    fn times(self, count: u64) -> Self {
        (self.0.times(count), self.1.times(count))
    }
    fn settle(self, overflow: Option<&'static str>) -> Result<Self, AccountantError> {
        Ok((self.0.settle(overflow)?, self.1.min(1.0)))
    }
}

/// Folds the event tree `ev` (at nesting `depth`) into `notion`: the depth check,
/// composition (Σ, compensated) and repetition (count × value) for every notion, the
/// notion's own [`Notion::node`] for everything else.
pub(crate) fn fold<N: Notion>(
    notion: &N,
    ev: &Event<'_>,
    relation: Neighbouring,
    depth: usize,
) -> Result<N::Value, AccountantError> {
    if depth > MAX_EVENT_DEPTH {
        return Err(AccountantError::TooDeep);
    }
    match *ev {
        Event::SelfComposed { event, count } => {
            if count == 0 {
                return Ok(Additive::ZERO);
            }
            fold(notion, event, relation, depth + 1)?
                .times(count)
                .settle(N::OVERFLOW)
        }
        Event::Composed(events) => {
            let mut sum = <N::Value as Additive>::Sum::default();
            for e in events {
                fold(notion, e, relation, depth + 1)?.add(&mut sum);
            }
            <N::Value as Additive>::total(&sum).settle(N::OVERFLOW)
        }
        _ => notion.node(ev, relation, depth),
    }
}

/// The pure ε of `ev`, reported as unsupported by `accountant` (not by pure DP) when pure
/// DP cannot express it: the fallback of the notions that accept any pure-DP mechanism.
fn via_pure(
    ev: &Event<'_>,
    relation: Neighbouring,
    depth: usize,
    accountant: &'static str,
) -> Result<f64, AccountantError> {
    match fold(&Pure, ev, relation, depth) {
        Err(AccountantError::Unsupported { .. }) => Err(AccountantError::Unsupported {
            event: ev.name(),
            accountant,
        }),
        r => r,
    }
}

/// [`AccountantError::Unsupported`] by `accountant`, after the parameter and relation checks
/// (so a bad parameter is reported as such, not as unsupported).
fn refuse<T>(
    ev: &Event<'_>,
    relation: Neighbouring,
    accountant: &'static str,
) -> Result<T, AccountantError> {
    ev.validate(relation)?;
    Err(AccountantError::Unsupported {
        event: ev.name(),
        accountant,
    })
}

/// `(L, ε₁)` of a binomial curve: the release count (as f64, rounded up) and the pure ε of
/// one release, for the notions that compose the `L` releases themselves.
fn binomial_releases(
    n: u64,
    m: f64,
    releases: u64,
    bound: BinomialBound,
) -> Result<(f64, f64), AccountantError> {
    if releases == 0 {
        return Err(AccountantError::InvalidCount {
            name: "releases",
            value: releases,
        });
    }
    Ok((count_up(releases), binomial_release_epsilon(n, m, bound)?))
}

/// `q = batch/population` rounded up, at most 1.
fn wor_rate(batch: u64, population: u64) -> f64 {
    (count_up(batch) / count_up(population)).next_up().min(1.0)
}

/// Pure ε-DP (ε adds).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Pure;

impl Notion for Pure {
    type Value = f64;
    const OVERFLOW: Option<&'static str> = Some("pure composition");
    fn node(
        &self,
        ev: &Event<'_>,
        relation: Neighbouring,
        depth: usize,
    ) -> Result<f64, AccountantError> {
        match *ev {
            Event::Laplace { scale, sensitivity } => {
                let b = positive("scale", scale)?;
                let d = non_negative("sensitivity", sensitivity)?;
                finite("laplace epsilon", mul_div_up(1.0, d, b))
            }
            Event::PureEpsilon { epsilon } | Event::ExponentialMechanism { epsilon } => {
                non_negative("epsilon", epsilon)
            }
            Event::ApproxDp {
                epsilon,
                delta: 0.0,
            } => non_negative("epsilon", epsilon),
            Event::SparseVector {
                c,
                scale,
                sensitivity,
                resample,
            } => sparse_vector_epsilon(c, scale, sensitivity, resample),
            Event::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => binomial_curve_epsilon(n, m, releases, bound),
            Event::Gaussian {
                sigma,
                sensitivity: 0.0,
            } => {
                positive("sigma", sigma)?;
                Ok(0.0)
            }
            Event::PoissonSampled { q, event } => {
                ev.validate(relation)?;
                amplify_pure(q, fold(self, event, relation, depth + 1)?)
            }
            Event::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => {
                ev.validate(relation)?;
                amplify_pure(
                    wor_rate(batch, population),
                    fold(self, event, relation, depth + 1)?,
                )
            }
            Event::DiscreteLaplace { scale, sensitivity } => {
                let b = positive("scale", scale)?;
                finite(
                    "discrete laplace epsilon",
                    round_up_positive(count_up(sensitivity) / b, sensitivity > 0),
                )
            }
            Event::DiscreteGaussian {
                sigma,
                sensitivity: 0,
            } => {
                positive("sigma", sigma)?;
                Ok(0.0)
            }
            Event::DpBarker { .. } => refuse(ev, relation, "pure DP"),
            Event::RandomizedResponse { noise, buckets } => {
                ev.validate(relation)?;
                randomized_response_epsilon(noise, buckets)
            }
            _ => Err(AccountantError::Unsupported {
                event: ev.name(),
                accountant: "pure DP",
            }),
        }
    }
}

/// (ε, δ) for basic composition: both add, δ capped at 1.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Approx;

impl Notion for Approx {
    type Value = (f64, f64);
    const OVERFLOW: Option<&'static str> = Some("approx composition");
    fn node(
        &self,
        ev: &Event<'_>,
        relation: Neighbouring,
        depth: usize,
    ) -> Result<(f64, f64), AccountantError> {
        let amplified = |q: f64, event: &Event<'_>| {
            let (e, d) = fold(self, event, relation, depth + 1)?;
            Ok((amplify_pure(q, e)?, round_up(q * d).min(1.0)))
        };
        match *ev {
            Event::ApproxDp { epsilon, delta } => {
                let p = crate::ApproxDp::new(epsilon, delta)?;
                Ok((p.epsilon(), p.delta()))
            }
            Event::PoissonSampled { q, event } => {
                ev.validate(relation)?;
                amplified(q, event)
            }
            Event::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => {
                ev.validate(relation)?;
                amplified(wor_rate(batch, population), event)
            }
            _ => Ok((via_pure(ev, relation, depth, "approximate DP")?, 0.0)),
        }
    }
}

/// ρ-zCDP (ρ adds).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Zcdp;

impl Notion for Zcdp {
    type Value = f64;
    const OVERFLOW: Option<&'static str> = Some("zcdp composition");
    fn node(
        &self,
        ev: &Event<'_>,
        relation: Neighbouring,
        depth: usize,
    ) -> Result<f64, AccountantError> {
        match *ev {
            Event::Gaussian { sigma, sensitivity } => gaussian_mu(sigma, sensitivity),
            Event::Zcdp { rho } => non_negative("rho", rho),
            Event::ExponentialMechanism { epsilon } => bounded_range_rho(epsilon),
            Event::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => tree_aggregation_mu(sigma, sensitivity, steps),
            Event::DiscreteGaussian { sigma, sensitivity } => {
                let s = positive("sigma", sigma)?;
                let r = count_up(sensitivity) / s;
                finite(
                    "discrete gaussian rho",
                    round_up_positive(0.5 * r * r, sensitivity > 0),
                )
            }
            Event::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => {
                let (l, e) = binomial_releases(n, m, releases, bound)?;
                finite("binomial zcdp", round_up_positive(l * 0.5 * e * e, e > 0.0))
            }
            Event::PoissonSampled { .. } | Event::SampledWithoutReplacement { .. } => {
                refuse(ev, relation, "zCDP")
            }
            _ => {
                let e = via_pure(ev, relation, depth, "zCDP")?;
                finite("zcdp of pure", round_up_positive(0.5 * e * e, e > 0.0))
            }
        }
    }
}

/// The mean μ of a Gaussian privacy-loss distribution (μ adds): Gaussian events and their
/// compositions only.
#[derive(Copy, Clone, Debug)]
pub(crate) struct GaussianMu;

impl Notion for GaussianMu {
    type Value = f64;
    const OVERFLOW: Option<&'static str> = Some("pld composition");
    fn node(
        &self,
        ev: &Event<'_>,
        relation: Neighbouring,
        _depth: usize,
    ) -> Result<f64, AccountantError> {
        match *ev {
            Event::Gaussian { sigma, sensitivity } => gaussian_mu(sigma, sensitivity),
            Event::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => tree_aggregation_mu(sigma, sensitivity, steps),
            _ => refuse(ev, relation, "Gaussian PLD"),
        }
    }
}

/// Rényi DP at one order α (RDP values add; +∞ is a valid value, so compositions are not
/// checked for finiteness).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Rdp {
    /// The order α > 1.
    pub(crate) alpha: f64,
}

impl Notion for Rdp {
    type Value = f64;
    /// +∞ is a valid RDP value: nothing to check.
    const OVERFLOW: Option<&'static str> = None;
    fn node(
        &self,
        ev: &Event<'_>,
        relation: Neighbouring,
        depth: usize,
    ) -> Result<f64, AccountantError> {
        let alpha = self.alpha;
        let unsupported = || AccountantError::Unsupported {
            event: ev.name(),
            accountant: "RDP",
        };
        match *ev {
            Event::Gaussian { sigma, sensitivity } => gaussian_rdp(sigma, sensitivity, alpha),
            Event::Laplace { scale, sensitivity } => laplace_rdp(scale, sensitivity, alpha),
            Event::Zcdp { rho } => {
                non_negative("rho", rho)?;
                finite("zcdp rdp", round_up(order(alpha)? * rho))
            }
            Event::ApproxDp {
                epsilon,
                delta: 0.0,
            } => pure_rdp(epsilon, alpha),
            Event::PureEpsilon { .. }
            | Event::SparseVector { .. }
            | Event::DiscreteLaplace { .. } => pure_rdp(fold(&Pure, ev, relation, depth)?, alpha),
            Event::DiscreteGaussian { .. } => finite(
                "discrete gaussian rdp",
                round_up(order(alpha)? * fold(&Zcdp, ev, relation, depth)?),
            ),
            Event::BinomialCurve {
                n,
                m,
                releases,
                bound,
            } => {
                let (l, e1) = binomial_releases(n, m, releases, bound)?;
                finite("binomial rdp", round_up(l * pure_rdp(e1, alpha)?))
            }
            Event::PoissonSampled { q, event } => {
                ev.validate(relation)?;
                match *event {
                    Event::Gaussian { sigma, sensitivity } => {
                        positive("sigma", sigma)?;
                        if non_negative("sensitivity", sensitivity)? == 0.0 {
                            return Ok(0.0);
                        }
                        poisson_gaussian_rdp(q, sigma / sensitivity, alpha)
                    }
                    _ => match fold(&Pure, event, relation, depth + 1) {
                        // Never more than the event itself at this order (Rényi divergence is
                        // jointly convex): exact at q = 1, and monotone in q up to it.
                        Ok(e) => Ok(pure_rdp(amplify_pure(q, e)?, alpha)?.min(fold(
                            self,
                            event,
                            relation,
                            depth + 1,
                        )?)),
                        Err(AccountantError::Unsupported { .. }) => Err(unsupported()),
                        Err(e) => Err(e),
                    },
                }
            }
            Event::SampledWithoutReplacement {
                batch,
                population,
                event,
            } => {
                ev.validate(relation)?;
                let a = order(alpha)?;
                let q = count_up(batch) / count_up(population);
                let q = if count_up(batch) > q * count_up(population) {
                    q.next_up()
                } else {
                    q
                };
                if q >= 1.0 {
                    // The whole dataset is the sample: the event itself, at the same order.
                    return fold(self, event, relation, depth + 1);
                }
                // Integer orders directly; fractional orders by monotonicity of RDP in α.
                let ai = libm::ceil(a).max(2.0);
                if ai > 1e7 {
                    return Err(AccountantError::InvalidParameter {
                        name: "alpha",
                        value: alpha,
                    });
                }
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let ai = ai as u64;
                let sampled = wor_rdp(q.min(1.0), ai, |j| {
                    fold(&Self { alpha: count_up(j) }, event, relation, depth + 1)
                })?;
                // Never more than the event itself at this (possibly fractional) order: the
                // sampled pair is a mixture of replace-one pairs of the event (joint
                // quasi-convexity of Rényi divergence).
                Ok(sampled.min(fold(self, event, relation, depth + 1)?))
            }
            Event::DpBarker { batch, population } => {
                ev.validate(relation)?;
                dp_barker_step_rdp(batch, population, alpha)
            }
            Event::RandomizedResponse { noise, buckets } => {
                ev.validate(relation)?;
                randomized_response_rdp(noise, buckets, alpha)
            }
            Event::TreeAggregation {
                sigma,
                sensitivity,
                steps,
            } => finite(
                "tree aggregation rdp",
                round_up(order(alpha)? * tree_aggregation_mu(sigma, sensitivity, steps)?),
            ),
            Event::ExponentialMechanism { epsilon } => {
                let e = non_negative("epsilon", epsilon)?;
                let rho = bounded_range_rho(e)?;
                finite("bounded range rdp", round_up(e.min(order(alpha)? * rho)))
            }
            Event::RandomAllocation {
                sigma,
                sensitivity,
                steps,
                selected,
            } => {
                ev.validate(relation)?;
                if selected != 1 {
                    return Err(AccountantError::Unsupported {
                        event: "RandomAllocation",
                        accountant: "RDP (more than one step per record)",
                    });
                }
                random_allocation_rdp(sigma, sensitivity, steps, alpha)
            }
            Event::RepeatAndSelect { event, mean, shape } => {
                ev.validate(relation)?;
                repeat_and_select_rdp(alpha, mean, shape, &crate::DEFAULT_ORDERS, |l| {
                    fold(&Self { alpha: l }, event, relation, depth + 1)
                })
            }
            _ => Err(unsupported()),
        }
    }
}

/// Pure ε of an event under `relation` (`fold(&Pure, …)`, kept for the numerical PLD).
#[cfg(feature = "alloc")]
pub(crate) fn event_pure(
    ev: &Event<'_>,
    relation: Neighbouring,
    depth: usize,
) -> Result<f64, AccountantError> {
    fold(&Pure, ev, relation, depth)
}

#[cfg(test)]
mod exact_rounding {
    #![allow(clippy::unwrap_used, clippy::cast_precision_loss)]
    use super::mul_div_up;

    /// `r·b ≥ k·d` for integers `k, d, b < 2²⁶` and a positive normal `r`, in integers:
    /// `r = m·2^e`, so compare `m·b` with `k·d·2^(−e)` (or `m·b·2^e` with `k·d`).
    fn at_least(r: f64, k: u64, d: u64, b: u64) -> bool {
        let bits = r.to_bits();
        let m = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
        let e = i64::try_from((bits >> 52) & 0x7ff).unwrap() - 1075;
        let (lhs, rhs) = (m * u128::from(b), u128::from(k) * u128::from(d));
        if e >= 0 {
            lhs << e >= rhs
        } else {
            lhs >= rhs << (-e)
        }
    }

    #[test]
    fn mul_div_up_is_the_smallest_f64_not_below_the_quotient() {
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + (x >> 38)
        };
        for _ in 0..50_000 {
            let (k, d, b) = (next(), next(), next());
            let r = mul_div_up(k as f64, d as f64, b as f64);
            assert!(
                at_least(r, k, d, b),
                "{k}·{d}/{b}: {r} is below the quotient"
            );
            assert!(
                !at_least(r.next_down(), k, d, b),
                "{k}·{d}/{b}: {r} is not the smallest"
            );
        }
        // Exact quotients stay exact (no margin on top): 11·0.5/5.5 = 1.
        assert_eq!(mul_div_up(11.0, 0.5, 5.5).to_bits(), 1.0f64.to_bits());
        assert_eq!(mul_div_up(3.0, 1.0, 3.0).to_bits(), 1.0f64.to_bits());
        // 1/3 is not representable: the result is the f64 just above it.
        let third = mul_div_up(1.0, 1.0, 3.0);
        assert!(third > 1.0 / 3.0 && third.next_down() <= 1.0 / 3.0);
        // Zero and the non-normal range fall back to the margin.
        assert_eq!(mul_div_up(1.0, 0.0, 2.0).to_bits(), 0.0f64.to_bits());
        assert!(mul_div_up(1.0, f64::MIN_POSITIVE, 3.0) > f64::MIN_POSITIVE / 3.0);
        assert_eq!(super::TWO_600.to_bits(), libm::pow(2.0, 600.0).to_bits());
        assert_eq!(
            super::TWO_MINUS_600.to_bits(),
            libm::pow(2.0, -600.0).to_bits()
        );
        // A quotient that underflows is the floor, never 0; a product k·d that rounds in
        // the subnormal range (1.5 × 3 ulp = 4.5 ulp, rounded to 4) with a normal quotient is
        // still rounded up: 4.5 × 2⁻¹⁰⁷⁴ / 10⁻³⁰⁰ ≈ 2.2232e-23.
        assert_eq!(
            mul_div_up(1.0, 1e-300, 1e300).to_bits(),
            crate::POSITIVE_FLOOR.to_bits()
        );
        let ulp = f64::from_bits(1);
        let q = mul_div_up(1.5, 3.0 * ulp, 1e-300);
        let exact = 4.5 * 4.940_656_458_412_465_4 * 1e-24;
        assert!(
            q >= exact && q <= exact * (1.0 + 1e-13),
            "{q:e} vs {exact:e}"
        );
    }
}
