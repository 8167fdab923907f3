//! Iteration budgets: how many iterations a private sampler may run for a target (ε, δ).
//!
//! Every function returns the **largest** iteration count whose privacy guarantee is at most
//! the requested (ε, δ); all bounds are upper bounds on the privacy loss, rounded to the safe
//! side (a count is only returned after the guarantee of that count has been re-evaluated and
//! found to satisfy the target).
//!
//! # Privacy
//!
//! Neighbouring relation: **substitute one row** (datasets of the same, public size `n`
//! differing in one row), as in the thesis (§2.1, Definition 2) for DP penalty, DP HMC and
//! the sampling-without-replacement amplification of WBK19 (DP Barker, subsampled penalty).
//!
//! FOLD-LATER: the zCDP conversion, Gaussian PLD and WBK19 subsampled RDP here are minimal
//! private implementations; `dpinfer-accountants` will own them and these functions will
//! call it.
//!
//! # References
//!
//! Räisä (2021) thesis, Theorems 1, 4, 6, 7, 8, 9 and §5.2; Bun & Steinke (2016);
//! Sommer, Meiser & Mohammadi (2019) Lemmas 11–12; Wang, Balle & Kasiviswanathan (2019)
//! Theorem 9 (WBK19); Heikkilä et al. (2019) (HJDH19).

use crate::McmcError;
use crate::error::{open_unit, positive};

/// Largest order tried by the RDP-based budgets.
pub const MAX_RDP_ORDER: u32 = 256;

fn check_eps_delta(epsilon: f64, delta: f64) -> Result<(), McmcError> {
    positive("epsilon", epsilon)?;
    open_unit("delta", delta)?;
    Ok(())
}

/// zCDP budget ρ whose (ε, δ) conversion (thesis Theorem 1) equals the target:
/// `ρ = (√(ε − ln δ) − √(−ln δ))²`.
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ε > 0` is finite and `0 < δ < 1`.
pub fn zcdp_rho(epsilon: f64, delta: f64) -> Result<f64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    let l = -libm::log(delta);
    // (√(ε+l) − √l)² = ε² / (√(ε+l) + √l)², cancellation-free.
    let d = libm::sqrt(epsilon + l) + libm::sqrt(l);
    let r = epsilon / d;
    Ok(r * r)
}

/// ε of a ρ-zCDP mechanism at δ (thesis Theorem 1): `ρ + 2√(ρ ln(1/δ))`.
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ρ ≥ 0` is finite and `0 < δ < 1`.
pub fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64, McmcError> {
    if !(rho.is_finite() && rho >= 0.0) {
        return Err(McmcError::param("rho", rho));
    }
    open_unit("delta", delta)?;
    Ok(rho + 2.0 * libm::sqrt(rho * -libm::log(delta)))
}

/// δ(ε) of a Gaussian privacy-loss distribution `N(m, 2m)` (SMM19 Lemma 12; thesis
/// Theorems 4 and 7): `½ erfc((ε − m)/(2√m)) − ½ e^ε erfc((ε + m)/(2√m))`.
///
/// `m` is the sum of `Δ²/(2σ²)` over all composed Gaussian releases.
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ε ≥ 0` and `m ≥ 0` are finite.
pub fn gaussian_pld_delta(epsilon: f64, m: f64) -> Result<f64, McmcError> {
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(McmcError::param("epsilon", epsilon));
    }
    if !(m.is_finite() && m >= 0.0) {
        return Err(McmcError::param("m", m));
    }
    if m == 0.0 {
        return Ok(0.0);
    }
    let s = 2.0 * libm::sqrt(m);
    let z1 = (epsilon - m) / s;
    let z2 = (epsilon + m) / s;
    // e^ε erfc(z2) = exp(ε − z2²) erfcx(z2) for z2 > 0 (no overflow).
    let second = libm::exp(epsilon - z2 * z2) * dpinfer_math::erfcx(z2);
    let d = 0.5 * (dpinfer_math::erfc(z1) - second);
    // Round up by a relative 1e-12 to cover evaluation error.
    Ok((d.max(0.0) * (1.0 + 1e-12)).min(1.0))
}

/// Largest `k ≤ 2^52` with `ok(k)`, for a predicate that is monotone (true then false).
fn largest_k(mut ok: impl FnMut(u64) -> Result<bool, McmcError>) -> Result<u64, McmcError> {
    if !ok(1)? {
        return Ok(0);
    }
    let mut lo = 1u64;
    let mut hi = 2u64;
    while ok(hi)? {
        lo = hi;
        hi = hi.saturating_mul(2);
        if hi > 1u64 << 52 {
            return Ok(lo);
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid)? { lo = mid } else { hi = mid }
    }
    Ok(lo)
}

#[allow(clippy::cast_precision_loss)]
fn as_f64(n: usize) -> f64 {
    n as f64
}

/// Per-iteration noise multiplier of DP penalty, `τ n^α`: the noise standard deviation is
/// `τ n^α · c(θ, θ')` (thesis Theorem 6).
fn penalty_multiplier(tau: f64, n: usize, n_exponent: f64) -> Result<f64, McmcError> {
    positive("tau", tau)?;
    if n == 0 {
        return Err(McmcError::InvalidSize {
            name: "n",
            value: n,
        });
    }
    if !(n_exponent.is_finite() && n_exponent >= 0.0) {
        return Err(McmcError::param("n_exponent", n_exponent));
    }
    let m = tau * libm::pow(as_f64(n), n_exponent);
    positive("tau * n^alpha", m)
}

/// DP penalty iterations by zCDP (thesis Theorem 6): `k = ⌊2τ²n^{2α}ρ⌋`.
///
/// # Errors
///
/// Invalid ε, δ, τ, `n = 0` or a negative / non-finite exponent.
pub fn penalty_iterations_zcdp(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: usize,
    n_exponent: f64,
) -> Result<u64, McmcError> {
    let rho = zcdp_rho(epsilon, delta)?;
    let m = penalty_multiplier(tau, n, n_exponent)?;
    let rho_step = 1.0 / (2.0 * m * m);
    iterations_from_rho(rho, rho_step, 0.0, epsilon, delta)
}

/// `⌊(ρ − ρ₀)/ρ_step⌋`, then verified: decreased until `ε(ρ₀ + kρ_step) ≤ ε`.
fn iterations_from_rho(
    rho: f64,
    rho_step: f64,
    rho0: f64,
    epsilon: f64,
    delta: f64,
) -> Result<u64, McmcError> {
    let raw = libm::floor((rho - rho0) / rho_step);
    if raw.is_nan() || raw < 1.0 {
        return Ok(0);
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let mut k = raw.min(4.0e15) as u64;
    #[allow(clippy::cast_precision_loss)]
    while k > 0 && zcdp_epsilon(rho0 + k as f64 * rho_step, delta)? > epsilon {
        k -= 1;
    }
    Ok(k)
}

/// DP penalty iterations by the exact Gaussian PLD (thesis Theorem 7): the largest `k` with
/// `δ(ε; kμ) ≤ δ`, `μ = 1/(2τ²n^{2α})`.
///
/// # Errors
///
/// As [`penalty_iterations_zcdp`].
pub fn penalty_iterations_pld(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: usize,
    n_exponent: f64,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    let m = penalty_multiplier(tau, n, n_exponent)?;
    let mu = 1.0 / (2.0 * m * m);
    #[allow(clippy::cast_precision_loss)]
    largest_k(|k| Ok(gaussian_pld_delta(epsilon, k as f64 * mu)? <= delta))
}

/// Subsampled RDP of WBK19 Theorem 9 (sampling without replacement, ratio `q`), as written
/// in thesis Theorems 8–9, for integer order `alpha ≥ 2`, with the sum running through
/// `j = α` inclusive:
///
/// `ε(α) = 1/(α−1) · ln(1 + q²C(α,2) min{4(e^{ε'(2)}−1), 2e^{ε'(2)}} + Σ_{j=3}^{α} 2 q^j C(α,j) e^{(j−1)ε'(j)})`.
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] for `q ∉ (0, 1]`, `alpha < 2`, or a non-finite/negative
/// `ε'(j)`.
pub fn wbk19_subsampled_rdp(
    alpha: u32,
    q: f64,
    base: impl Fn(u32) -> f64,
) -> Result<f64, McmcError> {
    if !(q.is_finite() && q > 0.0 && q <= 1.0) {
        return Err(McmcError::param("q", q));
    }
    if alpha < 2 {
        return Err(McmcError::param("alpha", f64::from(alpha)));
    }
    let lq = libm::log(q);
    let e2 = base(2);
    if !(e2.is_finite() && e2 >= 0.0) {
        return Err(McmcError::param("base rdp", e2));
    }
    let a = u64::from(alpha);
    let t2 = 2.0 * lq
        + dpinfer_math::ln_binomial_int(a, 2)
        + libm::log((4.0 * libm::expm1(e2)).min(2.0 * libm::exp(e2)));
    // Streaming logsumexp over {0, t2, t3, …, tα}.
    let mut mx = 0.0f64.max(t2);
    let mut s = libm::exp(-mx) + libm::exp(t2 - mx);
    for j in 3..=alpha {
        let ej = base(j);
        if !(ej.is_finite() && ej >= 0.0) {
            return Err(McmcError::param("base rdp", ej));
        }
        let t = core::f64::consts::LN_2
            + f64::from(j) * lq
            + dpinfer_math::ln_binomial_int(a, u64::from(j))
            + f64::from(j - 1) * ej;
        if t > mx {
            s = s * libm::exp(mx - t) + 1.0;
            mx = t;
        } else {
            s += libm::exp(t - mx);
        }
    }
    let total = mx + libm::log(s);
    let e = total / f64::from(alpha - 1);
    Ok(e * (1.0 + 1e-12) + 1e-300)
}

/// Largest `k` such that `min_α k ε(α) + ln(1/δ)/(α−1) ≤ ε` (thesis Theorem 1 conversion),
/// given per-iteration RDP `rdp(α)` on orders `2..=max_order`.
fn iterations_from_rdp(
    epsilon: f64,
    delta: f64,
    max_order: u32,
    rdp: impl Fn(u32) -> Result<f64, McmcError>,
) -> Result<u64, McmcError> {
    let ld = -libm::log(delta);
    let mut best = 0u64;
    for alpha in 2..=max_order {
        let room = epsilon - ld / f64::from(alpha - 1);
        if room <= 0.0 {
            continue;
        }
        let e = rdp(alpha)?;
        if e <= 0.0 {
            continue;
        }
        let k = libm::floor(room / e);
        if k >= 1.0 {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let mut k = k.min(4.0e15) as u64;
            #[allow(clippy::cast_precision_loss)]
            while k > 0 && k as f64 * e + ld / f64::from(alpha - 1) > epsilon {
                k -= 1;
            }
            best = best.max(k);
        }
    }
    Ok(best)
}

/// Per-iteration RDP of subsampled DP penalty (thesis Theorem 9): WBK19 with base
/// `ε'(α) = α/(2τ)` and `q = |B|/n`.
///
/// # Errors
///
/// Invalid τ, `alpha < 2`, `batch = 0` or `batch > n`.
pub fn subsampled_penalty_rdp(
    alpha: u32,
    tau: f64,
    n: usize,
    batch: usize,
) -> Result<f64, McmcError> {
    positive("tau", tau)?;
    let q = sampling_ratio(n, batch)?;
    wbk19_subsampled_rdp(alpha, q, |j| f64::from(j) / (2.0 * tau))
}

fn sampling_ratio(n: usize, batch: usize) -> Result<f64, McmcError> {
    if n == 0 {
        return Err(McmcError::InvalidSize {
            name: "n",
            value: n,
        });
    }
    if batch == 0 || batch > n {
        return Err(McmcError::InvalidSize {
            name: "batch",
            value: batch,
        });
    }
    Ok(as_f64(batch) / as_f64(n))
}

/// Subsampled DP penalty iterations (thesis Theorem 9, WBK19 accounting over orders
/// `2..=MAX_RDP_ORDER`).
///
/// # Errors
///
/// As [`subsampled_penalty_rdp`] plus invalid ε, δ.
pub fn subsampled_penalty_iterations(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: usize,
    batch: usize,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    positive("tau", tau)?;
    sampling_ratio(n, batch)?;
    iterations_from_rdp(epsilon, delta, MAX_RDP_ORDER, |a| {
        subsampled_penalty_rdp(a, tau, n, batch)
    })
}

/// Base RDP of one DP Barker test on a batch (thesis Theorem 8; HJDH19):
/// `ε'(α) = 5/(2|B|) + ln(2|B|/(|B| − 5α))/(2(α−1)) + 2α/(|B| − 5α)`, valid for `α < |B|/5`.
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] if `α < 2` or `5α ≥ |B|`.
pub fn barker_base_rdp(alpha: u32, batch: usize) -> Result<f64, McmcError> {
    let b = as_f64(batch);
    let a = f64::from(alpha);
    if alpha < 2 || 5.0 * a >= b {
        return Err(McmcError::param("alpha", a));
    }
    Ok(5.0 / (2.0 * b)
        + libm::log(2.0 * b / (b - 5.0 * a)) / (2.0 * (a - 1.0))
        + 2.0 * a / (b - 5.0 * a))
}

/// Per-iteration RDP of DP Barker: WBK19 amplification of [`barker_base_rdp`] with
/// `q = |B|/n` (thesis Theorem 8).
///
/// # Errors
///
/// As [`barker_base_rdp`] plus invalid sizes.
pub fn barker_rdp(alpha: u32, n: usize, batch: usize) -> Result<f64, McmcError> {
    let q = sampling_ratio(n, batch)?;
    barker_base_rdp(alpha, batch)?;
    wbk19_subsampled_rdp(alpha, q, |j| {
        barker_base_rdp(j, batch).unwrap_or(f64::INFINITY)
    })
}

/// DP Barker iterations for (ε, δ) (thesis Theorem 8 + Theorem 1), over integer orders
/// `2 ≤ α < |B|/5` (capped at [`MAX_RDP_ORDER`]).
///
/// # Privacy
///
/// Valid for the per-row bound `T|r_j| ≤ √|B|/n` (enforced by clipping in [`crate::Barker`])
/// and total noise variance σ² = 2, for which HJDH19 derive Theorem 8 (under the bound the
/// batch variance satisfies σ_b² ≤ 1, so the added `N(0, 2 − σ_b²)` has variance ≥ 1).
///
/// # Errors
///
/// Invalid ε, δ, sizes, or `|B| ≤ 10` (no valid order).
pub fn barker_iterations(
    epsilon: f64,
    delta: f64,
    n: usize,
    batch: usize,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    sampling_ratio(n, batch)?;
    let max_alpha = u32::try_from((batch.saturating_sub(1)) / 5)
        .unwrap_or(u32::MAX)
        .min(MAX_RDP_ORDER);
    if max_alpha < 2 {
        return Err(McmcError::InvalidSize {
            name: "batch",
            value: batch,
        });
    }
    iterations_from_rdp(epsilon, delta, max_alpha, |a| barker_rdp(a, n, batch))
}

/// How DP HMC's gradient releases are charged (thesis §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GradientCharging {
    /// A fresh noisy gradient at the start of every trajectory: `k(L+1)` gradient releases.
    Fresh,
    /// Algorithm 3: the last noisy gradient of an accepted trajectory (or the previous start
    /// gradient after a reject) is reused: `kL + 1` releases.
    Reuse,
}

fn hmc_units(tau_l: f64, tau_g: f64, n: usize) -> Result<(f64, f64), McmcError> {
    positive("tau_l", tau_l)?;
    positive("tau_g", tau_g)?;
    if n == 0 {
        return Err(McmcError::InvalidSize {
            name: "n",
            value: n,
        });
    }
    let nf = as_f64(n);
    Ok((
        1.0 / (2.0 * tau_l * tau_l * nf),
        1.0 / (2.0 * tau_g * tau_g * nf),
    ))
}

fn gradient_releases(k: u64, leapfrog: u64, charging: GradientCharging) -> u64 {
    match charging {
        GradientCharging::Fresh => k.saturating_mul(leapfrog + 1),
        GradientCharging::Reuse => k.saturating_mul(leapfrog).saturating_add(1),
    }
}

/// DP HMC iterations by zCDP (thesis §5.2): per release `ρ_l = 1/(2τ_l²n)`,
/// `ρ_g = 1/(2τ_g²n)`; `k` iterations cost `kρ_l + G(k)ρ_g` with `G` from `charging`.
///
/// # Errors
///
/// Invalid ε, δ, τ's, `n = 0` or `leapfrog = 0`.
pub fn dp_hmc_iterations_zcdp(
    epsilon: f64,
    delta: f64,
    tau_l: f64,
    tau_g: f64,
    n: usize,
    leapfrog: u32,
    charging: GradientCharging,
) -> Result<u64, McmcError> {
    let rho = zcdp_rho(epsilon, delta)?;
    let (rl, rg) = hmc_units(tau_l, tau_g, n)?;
    if leapfrog == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog",
            value: 0,
        });
    }
    let l = f64::from(leapfrog);
    match charging {
        GradientCharging::Fresh => {
            iterations_from_rho(rho, rl + (l + 1.0) * rg, 0.0, epsilon, delta)
        }
        GradientCharging::Reuse => iterations_from_rho(rho, rl + l * rg, rg, epsilon, delta),
    }
}

/// DP HMC iterations by the Gaussian PLD (thesis §5.2): PLD `N(m, 2m)` with
/// `m = kρ_l + G(k)ρ_g`; the largest `k` with `δ(ε; m) ≤ δ`.
///
/// # Errors
///
/// As [`dp_hmc_iterations_zcdp`].
pub fn dp_hmc_iterations_pld(
    epsilon: f64,
    delta: f64,
    tau_l: f64,
    tau_g: f64,
    n: usize,
    leapfrog: u32,
    charging: GradientCharging,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    let (rl, rg) = hmc_units(tau_l, tau_g, n)?;
    if leapfrog == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog",
            value: 0,
        });
    }
    #[allow(clippy::cast_precision_loss)]
    largest_k(|k| {
        let g = gradient_releases(k, u64::from(leapfrog), charging);
        gaussian_pld_delta(epsilon, k as f64 * rl + g as f64 * rg).map(|d| d <= delta)
    })
}

/// ε spent by `k` DP HMC iterations under the Gaussian PLD at δ (bisection on ε; returned
/// value is an upper bound).
///
/// # Errors
///
/// As [`dp_hmc_iterations_zcdp`].
pub fn gaussian_pld_epsilon(m: f64, delta: f64) -> Result<f64, McmcError> {
    open_unit("delta", delta)?;
    if m == 0.0 {
        return Ok(0.0);
    }
    let mut hi = 1.0;
    while gaussian_pld_delta(hi, m)? > delta {
        hi *= 2.0;
        if hi > 1e12 {
            return Err(McmcError::AccountingFailed);
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if gaussian_pld_delta(mid, m)? > delta {
            lo = mid
        } else {
            hi = mid
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    Ok(hi)
}

/// Which bound converts a DP penalty / DP HMC budget into iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accounting {
    /// zCDP (thesis Theorem 6; Bun & Steinke 2016): closed form, looser.
    Zcdp,
    /// Exact Gaussian privacy-loss distribution (thesis Theorem 7; SMM19): tighter.
    Pld,
}

/// ε spent after composing Gaussian releases of total `m = Σ Δ²/(2σ²)`, at `delta`.
///
/// # Errors
///
/// Invalid δ or `m`.
pub fn gaussian_epsilon(accounting: Accounting, m: f64, delta: f64) -> Result<f64, McmcError> {
    match accounting {
        Accounting::Zcdp => zcdp_epsilon(m, delta),
        Accounting::Pld => gaussian_pld_epsilon(m, delta),
    }
}
