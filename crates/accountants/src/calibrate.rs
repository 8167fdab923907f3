//! Calibration: noise for a target budget and the maximum number of steps for a budget.
//! Every result is on the safe side: σ is rounded/searched **up**, step counts **down**, and
//! the returned value is re-checked against the budget with the accountant's own formula.
//!
//! # References
//! Thesis (Raisa 2021) Theorems 6–8 and §5.2; Sommer–Meiser–Mohammadi 2019; Bun–Steinke 2016;
//! Mironov–Talwar–Zhang 2019; Wang–Balle–Kasiviswanathan 2019.

use crate::convert::{rdp_to_approx_with, rho_for_approx, round_down};
use crate::curves::{count_up, poisson_gaussian_rdp, wor_rdp};
use crate::error::{AccountantError, count_in, non_negative, open_unit, positive, rate};
use crate::pld::{delta_for_epsilon, epsilon_for_delta};
use crate::{ConversionRule, round_up};

// No allocator needed: the MCMC budgets of `dpinfer-mcmc` call it on bare targets.
mod max_steps;
#[cfg(feature = "alloc")]
mod request;
#[allow(deprecated)]
pub use max_steps::Sampler;
pub use max_steps::{MaxSteps, MaxStepsRequest, PrivateMcmc};
#[cfg(feature = "alloc")]
pub use request::{Sigma, SigmaRequest};

/// Which accountant a calibration targets.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Method {
    /// zCDP with the Bun–Steinke conversion (closed form).
    Zcdp,
    /// Exact Gaussian PLD.
    Pld,
    /// RDP on [`crate::DEFAULT_ORDERS`] (Mironov and Balle/CKS conversions).
    Rdp,
}

impl Method {
    /// Every method, in the order zcdp, pld, rdp.
    pub const ALL: [Self; 3] = [Self::Zcdp, Self::Pld, Self::Rdp];

    /// The name used by `Display` and `FromStr`: `"zcdp"`, `"pld"` or `"rdp"`.
    ///
    /// ```
    /// use dpinfer_accountants::calibrate::Method;
    /// assert_eq!("pld".parse::<Method>()?, Method::Pld);
    /// assert_eq!(Method::Zcdp.to_string(), "zcdp");
    /// assert!("gdp".parse::<Method>().is_err());
    /// # Ok::<(), dpinfer_accountants::ParseNameError>(())
    /// ```
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Zcdp => "zcdp",
            Self::Pld => "pld",
            Self::Rdp => "rdp",
        }
    }
}

display_and_parse_by_name!(Method, "calibration method", "zcdp, pld, rdp");

fn positive_count(name: &'static str, k: u64) -> Result<f64, AccountantError> {
    Ok(count_up(count_in(name, k, 1..)?))
}

/// The largest total PLD mean μ with `δ(ε; μ) ≤ delta` (bisection on μ, returning the
/// lower end of the final bracket, which satisfies the budget).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `ε < 0`/non-finite or `δ ∉ (0, 1)`.
pub fn max_pld_mu(epsilon: f64, delta: f64) -> Result<f64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    // Bun–Steinke is valid for the PLD (it is μ-zCDP), so ρ_BS is feasible.
    let mut lo = rho_for_approx(eps, delta)?;
    let ok = |mu: f64| delta_for_epsilon(mu, eps).is_ok_and(|d| d <= delta);
    if !ok(lo) {
        lo = 0.0;
    }
    let mut hi = (lo * 2.0).max(1e-300);
    let mut guard = 0;
    while ok(hi) {
        lo = hi;
        hi *= 2.0;
        guard += 1;
        if guard > 2100 || !hi.is_finite() {
            return Err(AccountantError::NumericalFailure {
                what: "pld mu bracket",
            });
        }
    }
    for _ in 0..200 {
        if hi - lo <= 2.0 * f64::EPSILON * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// σ for `steps` Gaussian releases of sensitivity Δ to meet (ε, δ) under `method`
/// (no subsampling).
///
/// * `Zcdp`: `σ = Δ·√(k/(2ρ))` with `ρ = (√(ε + ln(1/δ)) − √(ln(1/δ)))²` (thesis Thm 6).
/// * `Pld`: `σ = Δ·√(k/(2μ*))` with μ* from [`max_pld_mu`] (thesis Thm 7).
/// * `Rdp`: bisection on σ with the RDP accountant's conversion.
///
/// The result is rounded up and re-verified.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] / [`AccountantError::InvalidCount`] for bad
/// inputs; [`AccountantError::Infeasible`] if ε = 0 (no finite σ suffices).
///
/// ```
/// use dpinfer_accountants::calibrate::{Method, gaussian_sigma};
/// let s_z = gaussian_sigma(1.0, 1e-5, 1000, 1.0, Method::Zcdp)?;
/// let s_p = gaussian_sigma(1.0, 1e-5, 1000, 1.0, Method::Pld)?;
/// assert!(s_p < s_z); // the exact PLD needs less noise
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn gaussian_sigma(
    epsilon: f64,
    delta: f64,
    steps: u64,
    sensitivity: f64,
    method: Method,
) -> Result<f64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let k = positive_count("steps", steps)?;
    let d = positive("sensitivity", sensitivity)?;
    match method {
        Method::Zcdp => {
            let rho = rho_for_approx(eps, delta)?;
            // Verified with the ρ a zCDP accountant composes (each step, the repetition, the
            // sum and the total rounded up) and the Bun–Steinke conversion: where ε ≈ ρ
            // (ε = 1e300) those four margins put the re-accounted ε 1.4e-14 relative above
            // the budget. A few relative ulps of σ absorb them.
            nudge_up(sigma_from_mu(rho, k, d)?, "zcdp sigma verification", |s| {
                let r = round_up(round_up(round_up(k * round_up(0.5 * (d / s) * (d / s)))));
                Ok(
                    crate::convert::zcdp_to_approx_with(r, delta, ConversionRule::Classic)?.epsilon
                        <= eps,
                )
            })
        }
        Method::Pld => {
            let mu = max_pld_mu(eps, delta)?;
            // Verified both ways with the PLD accountant itself (`steps` Gaussian releases of
            // σ composed as one `compose_n`, the path `dpinfer account epsilon --event
            // gaussian:…,count=k` takes, with every rounding margin of the event's μ, the
            // repetition and the total): δ(ε) ≤ δ and the ε(δ) inversion (which rounds up)
            // ≤ ε, so accounting the returned σ never reports more than the budget. A
            // re-derivation of μ that skipped two of those margins reported ε up to 1.8e-14
            // relative above the budget (δ = 0.0021, ε = 0.0314, 1 135 steps). A few relative
            // ulps of σ absorb the margins.
            nudge_up(sigma_from_mu(mu, k, d)?, "pld sigma verification", |s| {
                // The closed form first (its errors — e.g. a μ that overflows for a huge
                // budget — are the calibration's documented ones), then the accountant.
                let m = round_up(k * 0.5 * (d / s) * (d / s));
                if !(delta_for_epsilon(m, eps)? <= delta && epsilon_for_delta(m, delta)? <= eps) {
                    return Ok(false);
                }
                let mut acc = crate::PldAccountant::new(crate::Neighbouring::AddRemove);
                let g = crate::Event::Gaussian {
                    sigma: s,
                    sensitivity: d,
                };
                crate::Accountant::compose_n(&mut acc, &g, steps)?;
                Ok(crate::Accountant::delta(&acc, eps)?.delta <= delta
                    && crate::Accountant::epsilon(&acc, delta)?.epsilon <= eps)
            })
        }
        // As `sigma_from_mu`: an overflowing σ is an error, an underflowing one the smallest
        // positive f64 (still an upper bound on the exact σ).
        Method::Rdp => poisson_gaussian_sigma_rdp(eps, delta, steps, 1.0, &crate::DEFAULT_ORDERS)
            .and_then(|z| {
                crate::error::finite("sigma overflow", round_up(z * d).max(f64::from_bits(1)))
            }),
    }
}

/// The smallest of `s`, `s·(1 + 10⁻¹³)`, … (each rounded up; at most 64 steps) that `meets`
/// the budget when re-accounted: the one verification loop of the zCDP and PLD σ
/// calibrations, which absorbs the accountants' own upward roundings.
fn nudge_up(
    mut s: f64,
    what: &'static str,
    meets: impl Fn(f64) -> Result<bool, AccountantError>,
) -> Result<f64, AccountantError> {
    for _ in 0..64 {
        if meets(s)? {
            return Ok(s);
        }
        s = crate::error::finite("sigma overflow", round_up(s * (1.0 + 1e-13)))?;
    }
    Err(AccountantError::NumericalFailure { what })
}

fn sigma_from_mu(mu: f64, k: f64, d: f64) -> Result<f64, AccountantError> {
    if mu <= 0.0 {
        return Err(AccountantError::Infeasible {
            what: "no finite sigma meets the budget",
        });
    }
    let s = d * libm::sqrt(k / (2.0 * mu));
    // The exact σ is positive: where the product underflows to 0, the smallest positive
    // `f64` is still an upper bound on it (a tiny Δ with a huge ε).
    crate::error::finite("sigma overflow", round_up(s).max(f64::from_bits(1)))
}

/// Checks an order grid for the RDP calibrations (a valid grid of at most
/// [`MAX_CALIBRATION_ORDERS`] orders) and returns the scratch buffer `rdp_eps` fills.
fn rdp_scratch(orders: &[f64]) -> Result<[f64; MAX_CALIBRATION_ORDERS], AccountantError> {
    crate::notions::check_grid(orders)?;
    if orders.len() > MAX_CALIBRATION_ORDERS {
        return Err(AccountantError::InvalidGrid);
    }
    Ok([0.0; MAX_CALIBRATION_ORDERS])
}

/// The most RDP orders the calibrations accept (they work on a fixed-size stack buffer).
const MAX_CALIBRATION_ORDERS: usize = 128;

/// ε (at δ) after `k` Poisson-subsampled Gaussian steps with noise multiplier z, over
/// `orders`.
fn rdp_eps(
    q: f64,
    z: f64,
    k: f64,
    orders: &[f64],
    delta: f64,
    buf: &mut [f64],
    rule: ConversionRule,
) -> f64 {
    for (v, &a) in buf.iter_mut().zip(orders) {
        *v = match poisson_gaussian_rdp(q, z, a) {
            Ok(r) => round_up(k * r),
            Err(_) => f64::INFINITY,
        };
    }
    rdp_to_approx_with(orders, &buf[..orders.len()], delta, rule)
        .map_or(f64::INFINITY, |r| r.epsilon)
}

/// Smallest noise multiplier `z = σ/Δ` (to relative tolerance 10⁻⁹, rounded up) such that
/// `steps` Poisson-subsampled Gaussian steps with rate q are (ε, δ)-DP by the RDP accountant
/// on `orders` (at most 128 orders). `q = 1` is the plain Gaussian. Bracketing by doubling,
/// then Illinois/bisection on `ln z`; the returned z is the upper end of the bracket, where
/// the budget has been verified.
///
/// # Privacy
/// Add/remove relation (MTZ19).
///
/// # Errors
/// Bad inputs, more than 128 orders ([`AccountantError::InvalidGrid`]), or
/// [`AccountantError::Infeasible`] if no z ≤ 10⁸ meets the budget.
pub fn poisson_gaussian_sigma_rdp(
    epsilon: f64,
    delta: f64,
    steps: u64,
    q: f64,
    orders: &[f64],
) -> Result<f64, AccountantError> {
    poisson_gaussian_sigma_rdp_with(epsilon, delta, steps, q, orders, ConversionRule::Tightest)
}

/// [`poisson_gaussian_sigma_rdp`] with a selectable RDP → (ε, δ) conversion
/// ([`ConversionRule::Classic`]: Mironov 2017 Prop. 3 alone, as Abadi et al. 2016 and the
/// thesis use).
///
/// # Errors
/// As [`poisson_gaussian_sigma_rdp`].
pub fn poisson_gaussian_sigma_rdp_with(
    epsilon: f64,
    delta: f64,
    steps: u64,
    q: f64,
    orders: &[f64],
    rule: ConversionRule,
) -> Result<f64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let k = positive_count("steps", steps)?;
    let q = rate("q", q)?;
    let mut buf = rdp_scratch(orders)?;
    let f = |z: f64, buf: &mut [f64]| rdp_eps(q, z, k, orders, delta, buf, rule) - eps;
    let mut hi = 1.0_f64;
    let mut fhi = f(hi, &mut buf);
    let mut lo = hi;
    let mut flo = fhi;
    if fhi > 0.0 {
        while fhi > 0.0 {
            lo = hi;
            flo = fhi;
            hi *= 2.0;
            if hi > 1e8 {
                // The conversion's own cost on this grid (ε at zero RDP): no σ gets below it.
                let zeros = &mut buf[..orders.len()];
                zeros.fill(0.0);
                let floor = rdp_to_approx_with(orders, zeros, delta, rule)
                    .map_or(f64::INFINITY, |r| r.epsilon);
                return Err(AccountantError::Infeasible {
                    what: if floor >= eps {
                        "no noise multiplier meets the budget: at this delta the RDP to (epsilon, delta) conversion on this order grid alone costs more than epsilon (the largest order bounds it below); the PLD method has no such floor"
                    } else {
                        "no noise multiplier up to 1e8 meets the budget"
                    },
                });
            }
            fhi = f(hi, &mut buf);
        }
    } else {
        while flo <= 0.0 {
            hi = lo;
            fhi = flo;
            lo *= 0.5;
            if lo < 1e-8 {
                return Ok(round_up(hi));
            }
            flo = f(lo, &mut buf);
        }
    }
    // Now f(lo) > 0 ≥ f(hi). Illinois on ln z.
    let (mut a, mut b) = (libm::log(lo), libm::log(hi));
    let (mut fa, mut fb) = (flo, fhi);
    let mut side = 0;
    for _ in 0..100 {
        if b - a <= 1e-9 {
            break;
        }
        let mut x = if fa.is_finite() && fb.is_finite() {
            b - fb * (b - a) / (fb - fa)
        } else {
            0.5 * (a + b)
        };
        if !(x > a && x < b) {
            x = 0.5 * (a + b);
        }
        let fx = f(libm::exp(x), &mut buf);
        if fx > 0.0 {
            a = x;
            fa = fx;
            if side == -1 {
                fb *= 0.5;
            }
            side = -1;
        } else {
            b = x;
            fb = fx;
            if side == 1 {
                fa *= 0.5;
            }
            side = 1;
        }
    }
    let z = round_up(libm::exp(b));
    if f(z, &mut buf) > 0.0 {
        return Err(AccountantError::NumericalFailure {
            what: "rdp sigma verification",
        });
    }
    Ok(z)
}

/// The largest number of Poisson-subsampled Gaussian steps (rate `q`, noise multiplier
/// `z = σ/Δ`) that is (ε, δ)-DP by the RDP accountant on `orders` (at most 128; MTZ19
/// per-step RDP, composed by multiplication, converted with `rule`): the direct form of what
/// a [`crate::BudgetFilter`] around an [`crate::RdpAccountant`] admits one step at a time.
/// `q = 1` is the plain Gaussian. Doubling, then bisection on the integer count; every
/// candidate is checked with the conversion itself. Saturates at 2⁵³.
///
/// # Privacy
/// Add/remove relation (MTZ19).
///
/// # Errors
/// Bad inputs (`ε < 0`, `δ ∉ (0, 1)`, `z ≤ 0`, `q ∉ (0, 1]`), more than 128 orders or a bad
/// grid ([`AccountantError::InvalidGrid`]).
///
/// ```
/// use dpinfer_accountants::{ConversionRule, calibrate::poisson_gaussian_max_steps_rdp};
/// let k = poisson_gaussian_max_steps_rdp(1.0, 1e-5, 1.1, 0.01, &dpinfer_accountants::DEFAULT_ORDERS,
///     ConversionRule::Tightest)?;
/// assert!(k > 100);
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn poisson_gaussian_max_steps_rdp(
    epsilon: f64,
    delta: f64,
    noise_multiplier: f64,
    q: f64,
    orders: &[f64],
    rule: ConversionRule,
) -> Result<u64, AccountantError> {
    let eps = non_negative("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let z = positive("noise_multiplier", noise_multiplier)?;
    let q = rate("q", q)?;
    let mut buf = rdp_scratch(orders)?;
    dpinfer_math::largest_true(1 << 53, |k| {
        Ok(rdp_eps(q, z, count_up(k), orders, delta, &mut buf, rule) <= eps)
    })
}

/// Laplace scale for an ε-DP release of a query with ℓ₁ sensitivity Δ: `b = Δ/ε`
/// (Dwork–Roth 2014 Thm 3.6), rounded **up** (a larger b only adds privacy).
///
/// # Privacy
/// ε-DP under the relation for which Δ was computed.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `ε > 0` and `Δ ≥ 0` are finite;
/// [`AccountantError::Infeasible`] for `Δ = 0` (no noise is needed: any b works).
///
/// ```
/// use dpinfer_accountants::calibrate::{laplace_epsilon, laplace_scale};
/// let b = laplace_scale(0.5, 2.0)?;
/// assert!(b >= 4.0 && b <= 4.0 * (1.0 + 1e-13));
/// assert!(laplace_epsilon(b, 2.0)? <= 0.5 * (1.0 + 1e-13));
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn laplace_scale(epsilon: f64, sensitivity: f64) -> Result<f64, AccountantError> {
    let eps = positive("epsilon", epsilon)?;
    let d = non_negative("sensitivity", sensitivity)?;
    if d == 0.0 {
        return Err(AccountantError::Infeasible {
            what: "sensitivity 0 needs no Laplace noise",
        });
    }
    crate::error::finite("laplace scale", round_up(d / eps))
}

/// ε of a Laplace release with scale `b` on a query of ℓ₁ sensitivity Δ: `ε = Δ/b`
/// (Dwork–Roth 2014 Thm 3.6), rounded **up**; the inverse of [`laplace_scale`].
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `b > 0` and `Δ ≥ 0` are finite.
pub fn laplace_epsilon(scale: f64, sensitivity: f64) -> Result<f64, AccountantError> {
    let b = positive("scale", scale)?;
    let d = non_negative("sensitivity", sensitivity)?;
    crate::error::finite("laplace epsilon", crate::curves::mul_div_up(1.0, d, b))
}

/// The DP-penalty iteration budget under `method`: [`dp_penalty_max_steps_zcdp`] or
/// [`dp_penalty_max_steps_pld`] (the one dispatch for every front end).
///
/// # Errors
/// As the function it dispatches to; [`AccountantError::Unsupported`] for [`Method::Rdp`].
///
/// ```
/// use dpinfer_accountants::calibrate::{Method, dp_penalty_max_steps, dp_penalty_max_steps_pld};
/// let k = dp_penalty_max_steps(Method::Pld, 6.0, 1e-6, 0.1, 100_000, 0.5)?;
/// assert_eq!(k, dp_penalty_max_steps_pld(6.0, 1e-6, 0.1, 100_000, 0.5)?);
/// assert!(dp_penalty_max_steps(Method::Rdp, 6.0, 1e-6, 0.1, 100_000, 0.5).is_err());
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn dp_penalty_max_steps(
    method: Method,
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: u64,
    a: f64,
) -> Result<u64, AccountantError> {
    match method {
        Method::Zcdp => dp_penalty_max_steps_zcdp(epsilon, delta, tau, n, a),
        Method::Pld => dp_penalty_max_steps_pld(epsilon, delta, tau, n, a),
        Method::Rdp => Err(AccountantError::Unsupported {
            event: "DP penalty",
            accountant: "RDP calibration (zcdp or pld)",
        }),
    }
}

/// The DP-HMC iteration budget under `method` (the gradient reused across a trajectory):
/// [`dp_hmc_max_steps_zcdp`] or [`dp_hmc_max_steps_pld`] (the one dispatch for every front
/// end).
///
/// # Errors
/// As the function it dispatches to; [`AccountantError::Unsupported`] for [`Method::Rdp`].
///
/// ```
/// use dpinfer_accountants::calibrate::{Method, dp_hmc_max_steps, dp_hmc_max_steps_zcdp};
/// let k = dp_hmc_max_steps(Method::Zcdp, 1.0, 1e-5, 0.1, 0.2, 1000, 10)?;
/// assert_eq!(k, dp_hmc_max_steps_zcdp(1.0, 1e-5, 0.1, 0.2, 1000, 10)?);
/// assert!(dp_hmc_max_steps(Method::Rdp, 1.0, 1e-5, 0.1, 0.2, 1000, 10).is_err());
/// # Ok::<(), dpinfer_accountants::AccountantError>(())
/// ```
pub fn dp_hmc_max_steps(
    method: Method,
    epsilon: f64,
    delta: f64,
    tau_l: f64,
    tau_g: f64,
    n: u64,
    leapfrog: u64,
) -> Result<u64, AccountantError> {
    match method {
        Method::Zcdp => dp_hmc_max_steps_zcdp(epsilon, delta, tau_l, tau_g, n, leapfrog),
        Method::Pld => dp_hmc_max_steps_pld(epsilon, delta, tau_l, tau_g, n, leapfrog),
        Method::Rdp => Err(AccountantError::Unsupported {
            event: "DP HMC",
            accountant: "RDP calibration (zcdp or pld)",
        }),
    }
}

/// DP-penalty, thesis Theorem 6 (zCDP): with per-step noise `σ² = τ²n^{2a}c²`, the chain may
/// run `k = ⌊2τ²n^{2a}ρ⌋` iterations, `ρ = (√(ε − ln δ) − √(−ln δ))²`. Computed with ρ
/// rounded down and the product rounded down before the floor; saturates at `u64::MAX`.
///
/// `a` is the paper's exponent α > 0 (not an RDP order).
///
/// # Privacy
/// Replace-one (the sensitivity c is a sup over substituted rows).
///
/// # Errors
/// Bad inputs ([`AccountantError::InvalidParameter`], `n = 0`).
pub fn dp_penalty_max_steps_zcdp(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: u64,
    a: f64,
) -> Result<u64, AccountantError> {
    let rho = rho_for_approx(positive("epsilon", epsilon)?, delta)?;
    let mu = penalty_mu(tau, n, a)?;
    Ok(floor_u64(round_down(rho / mu)))
}

/// Per-step PLD mean of DP-penalty: `μ = 1/(2τ²n^{2a})` (thesis Theorem 7), rounded up.
fn penalty_mu(tau: f64, n: u64, a: f64) -> Result<f64, AccountantError> {
    let tau = positive("tau", tau)?;
    let a = positive("a", a)?;
    let nf = positive_count("n", n)?;
    let ln_mu = -(core::f64::consts::LN_2 + 2.0 * libm::log(tau) + 2.0 * a * libm::log(nf));
    let mu = round_up(libm::exp(ln_mu));
    if mu > 0.0 && mu.is_finite() {
        Ok(mu)
    } else {
        Err(AccountantError::InvalidParameter {
            name: "tau",
            value: tau,
        })
    }
}

fn floor_u64(x: f64) -> u64 {
    if x.is_nan() || x < 1.0 {
        return 0;
    }
    if x >= 1.8e19 {
        return u64::MAX;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let k = libm::floor(x) as u64;
    k
}

/// The largest count `≤ k` that `fits`, for a `fits` that holds for every count below one
/// that fits (a privacy cost growing with the count): `k` itself when it fits (one call, the
/// common case), else [`dpinfer_math::largest_true`] below it; 0 if no positive count fits
/// (`fits(0)` is never asked). How an iteration budget is re-checked with the accountant that
/// composes the releases (the calibration formulas round on their own, so their count can be
/// one too many by a few ulps of ε).
///
/// # Errors
/// The first error of `fits`.
pub fn largest_fitting<E>(k: u64, mut fits: impl FnMut(u64) -> Result<bool, E>) -> Result<u64, E> {
    if k == 0 || fits(k)? {
        return Ok(k);
    }
    dpinfer_math::largest_true(k - 1, fits)
}

/// Largest `k` with `δ(ε; μ(k)) ≤ delta` for a PLD mean `μ(k)` increasing in `k`
/// (integer search on top of the real-valued [`max_pld_mu`]).
fn max_k_pld(
    epsilon: f64,
    delta: f64,
    mu_of_k: impl Fn(u64) -> f64,
    guess: f64,
) -> Result<u64, AccountantError> {
    let ok = |k: u64| delta_for_epsilon(mu_of_k(k), epsilon).is_ok_and(|d| d <= delta);
    let mut k = floor_u64(guess);
    // Step down until feasible, then up while feasible (a few steps at most).
    let mut guard = 0;
    while k > 0 && !ok(k) {
        k -= 1;
        guard += 1;
        if guard > 64 {
            return Err(AccountantError::NumericalFailure {
                what: "pld step search",
            });
        }
    }
    while k < u64::MAX && ok(k + 1) {
        k += 1;
        guard += 1;
        if guard > 128 {
            break;
        }
    }
    Ok(k)
}

/// DP-penalty, thesis Theorem 7 (exact Gaussian PLD): the largest `k` such that
/// `δ(ε) = ½(erfc((ε−kμ)/(2√(kμ))) − e^ε erfc((ε+kμ)/(2√(kμ)))) ≤ delta` with
/// `μ = 1/(2τ²n^{2a})`; integer search verified with the PLD formula. Never smaller than the
/// Theorem 6 count.
///
/// # Errors
/// As [`dp_penalty_max_steps_zcdp`].
pub fn dp_penalty_max_steps_pld(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: u64,
    a: f64,
) -> Result<u64, AccountantError> {
    let eps = positive("epsilon", epsilon)?;
    let mu = penalty_mu(tau, n, a)?;
    let total = max_pld_mu(eps, delta)?;
    max_k_pld(eps, delta, |k| round_up(count_up(k) * mu), total / mu)
}

/// DP-HMC (thesis §5.2) per-release costs: gradient `1/(2τ_g²n)`, log-likelihood ratio
/// `1/(2τ_l²n)` (both zCDP ρ and PLD μ, since each is a Gaussian release).
fn hmc_costs(tau_l: f64, tau_g: f64, n: u64) -> Result<(f64, f64), AccountantError> {
    let tl = positive("tau_l", tau_l)?;
    let tg = positive("tau_g", tau_g)?;
    let nf = positive_count("n", n)?;
    let rl = round_up(0.5 / (tl * tl * nf));
    let rg = round_up(0.5 / (tg * tg * nf));
    if rl.is_finite() && rg.is_finite() && rl > 0.0 && rg > 0.0 {
        Ok((rl, rg))
    } else {
        Err(AccountantError::InvalidParameter {
            name: "tau",
            value: tau_l.min(tau_g),
        })
    }
}

/// DP-HMC, zCDP form (thesis §5.2): `k = ⌊(ρ − ρ_g)/(ρ_l + Lρ_g)⌋` with L leapfrog steps
/// (one gradient before the loop, L per iteration, one log-likelihood ratio per iteration).
///
/// # Errors
/// Bad inputs; [`AccountantError::Infeasible`] if the initial gradient alone exceeds ρ.
pub fn dp_hmc_max_steps_zcdp(
    epsilon: f64,
    delta: f64,
    tau_l: f64,
    tau_g: f64,
    n: u64,
    leapfrog: u64,
) -> Result<u64, AccountantError> {
    let rho = rho_for_approx(positive("epsilon", epsilon)?, delta)?;
    let (rl, rg) = hmc_costs(tau_l, tau_g, n)?;
    if rho < rg {
        return Err(AccountantError::Infeasible {
            what: "initial gradient release exceeds the budget",
        });
    }
    let per = round_up(rl + count_up(leapfrog) * rg);
    Ok(floor_u64(round_down((rho - rg) / per)))
}

/// DP-HMC, PLD form (thesis §5.2): the largest k with
/// `μ = k/(2σ_l'²) + (kL + 1)/(2σ_g'²)`, `σ'² = τ²n`, meeting δ(ε) ≤ delta.
///
/// # Errors
/// As [`dp_hmc_max_steps_zcdp`].
pub fn dp_hmc_max_steps_pld(
    epsilon: f64,
    delta: f64,
    tau_l: f64,
    tau_g: f64,
    n: u64,
    leapfrog: u64,
) -> Result<u64, AccountantError> {
    let eps = positive("epsilon", epsilon)?;
    let (rl, rg) = hmc_costs(tau_l, tau_g, n)?;
    let total = max_pld_mu(eps, delta)?;
    if total < rg {
        return Err(AccountantError::Infeasible {
            what: "initial gradient release exceeds the budget",
        });
    }
    let per = round_up(rl + count_up(leapfrog) * rg);
    max_k_pld(
        eps,
        delta,
        |k| round_up(count_up(k) * per + rg),
        (total - rg) / per,
    )
}

/// Per-iteration RDP of the DP-Barker base mechanism (thesis Theorem 8):
/// `ε'(α) = 5/(2|B|) + ln(2|B|/(|B| − 5α))/(2(α−1)) + 2α/(|B| − 5α)`, valid for integer
/// `2 ≤ α < |B|/5`.
///
/// # Errors
/// [`AccountantError::InvalidCount`] unless `2 ≤ α` and `5α < |B|`.
pub fn dp_barker_base_rdp(batch: u64, alpha: u64) -> Result<f64, AccountantError> {
    if alpha < 2 || alpha.checked_mul(5).is_none_or(|a5| a5 >= batch) {
        return Err(AccountantError::InvalidCount {
            name: "alpha",
            value: alpha,
        });
    }
    let b = count_up(batch);
    let a = count_up(alpha);
    let gap = b - 5.0 * a;
    let v = 2.5 / b + libm::log(2.0 * b / gap) / (2.0 * (a - 1.0)) + 2.0 * a / gap;
    Ok(round_up(v))
}

/// Per-iteration RDP of DP-Barker at integer order α (thesis Theorem 8): the WBK19
/// amplification of [`dp_barker_base_rdp`] with `q = |B|/n`.
///
/// # Errors
/// As [`dp_barker_base_rdp`], plus `batch > n`.
pub fn dp_barker_rdp(batch: u64, n: u64, alpha: u64) -> Result<f64, AccountantError> {
    if n == 0 || batch == 0 || batch > n {
        return Err(AccountantError::InvalidCount {
            name: "batch",
            value: batch,
        });
    }
    dp_barker_base_rdp(batch, alpha)?;
    let q = (count_up(batch) / count_up(n)).next_up().min(1.0);
    wor_rdp(q, alpha, |j| dp_barker_base_rdp(batch, j))
}

/// DP-Barker maximum iterations (thesis Theorem 8): over integer orders
/// `2 ≤ α < |B|/5` (at most up to `max_order`), the largest
/// `k = ⌊(ε − c_α)/ε(α)⌋` where `c_α` is the better of Mironov's and Balle/CKS's conversion
/// offsets. Returns `(k, α)`.
///
/// # Errors
/// Bad inputs; [`AccountantError::Infeasible`] if `|B| ≤ 10` (no admissible order).
pub fn dp_barker_max_steps(
    epsilon: f64,
    delta: f64,
    batch: u64,
    n: u64,
    max_order: u64,
) -> Result<(u64, u64), AccountantError> {
    dp_barker_max_steps_with(
        epsilon,
        delta,
        batch,
        n,
        max_order,
        ConversionRule::Tightest,
    )
}

/// [`dp_barker_max_steps`] with a selectable conversion: [`ConversionRule::Classic`] uses
/// Mironov's offset `c_α = ln(1/δ)/(α − 1)` alone (thesis Theorem 1, as the thesis does),
/// so `k = max_α ⌊(ε − ln(1/δ)/(α − 1))/ε(α)⌋`.
///
/// # Errors
/// As [`dp_barker_max_steps`].
pub fn dp_barker_max_steps_with(
    epsilon: f64,
    delta: f64,
    batch: u64,
    n: u64,
    max_order: u64,
    rule: ConversionRule,
) -> Result<(u64, u64), AccountantError> {
    let eps = positive("epsilon", epsilon)?;
    let delta = open_unit("delta", delta)?;
    let ln_d = libm::log(delta);
    let top = (batch.saturating_sub(1) / 5).min(max_order);
    if top < 2 {
        return Err(AccountantError::Infeasible {
            what: "DP-Barker needs an integer order 2 <= alpha < |B|/5",
        });
    }
    let mut best: Option<(u64, u64)> = None;
    for alpha in 2..=top {
        if 5 * alpha >= batch {
            break;
        }
        let r = dp_barker_rdp(batch, n, alpha)?;
        let a = count_up(alpha);
        let mironov = -ln_d / (a - 1.0);
        let c = match rule {
            ConversionRule::Classic => mironov,
            ConversionRule::Tightest => {
                mironov.min(libm::log1p(-1.0 / a) - (ln_d + libm::log(a)) / (a - 1.0))
            }
        };
        let room = round_down(eps - round_up(c.max(0.0)));
        if room <= 0.0 || r <= 0.0 {
            continue;
        }
        let k = floor_u64(round_down(room / r));
        if best.is_none_or(|(bk, _)| k > bk) {
            best = Some((k, alpha));
        }
    }
    Ok(best.unwrap_or((0, 2)))
}
