//! Iteration budgets: how many iterations a private sampler may run for a target (ε, δ).
//!
//! Every function returns the **largest** iteration count whose privacy guarantee is at most
//! the requested (ε, δ). The numbers come from `dpinfer-accountants` (thesis Theorems 6–9
//! max-steps, WBK19 subsampled RDP with the sum through `j = α`, exact Gaussian PLD, RDP →
//! (ε, δ) conversions), which rounds every bound to the safe side; this module adds the
//! sampler-facing pieces (DP HMC with fresh start gradients, subsampled-penalty iterations,
//! ε spent so far).
//!
//! # Privacy
//!
//! Neighbouring relation: **substitute one row** (datasets of the same, public size `n`
//! differing in one row), as in the thesis (§2.1, Definition 2) for DP penalty, DP HMC and
//! the sampling-without-replacement amplification of WBK19 (DP Barker, subsampled penalty).
//!
//! # References
//!
//! Räisä (2021) thesis, Theorems 1, 4, 6, 7, 8, 9 and §5.2; Bun & Steinke (2016);
//! Sommer, Meiser & Mohammadi (2019) Lemmas 11–12; Wang, Balle & Kasiviswanathan (2019)
//! Theorem 9 (WBK19); Heikkilä et al. (2019) (HJDH19).

use dpinfer_accountants::{ConversionRule, calibrate, convert, curves, pld};

use crate::McmcError;
use crate::error::{open_unit, positive};

/// Largest order tried by the RDP-based budgets.
pub const MAX_RDP_ORDER: u32 = 256;

fn check_eps_delta(epsilon: f64, delta: f64) -> Result<(), McmcError> {
    positive("epsilon", epsilon)?;
    open_unit("delta", delta)?;
    Ok(())
}

fn rows(n: usize) -> Result<u64, McmcError> {
    if n == 0 {
        return Err(McmcError::InvalidSize {
            name: "n",
            value: n,
        });
    }
    u64::try_from(n).map_err(|_| McmcError::InvalidSize {
        name: "n",
        value: n,
    })
}

/// zCDP budget ρ whose (ε, δ) conversion (thesis Theorem 1) meets the target:
/// `ρ = (√(ε − ln δ) − √(−ln δ))²`, rounded down (accountants `convert::rho_for_approx`).
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ε > 0` is finite and `0 < δ < 1`.
pub fn zcdp_rho(epsilon: f64, delta: f64) -> Result<f64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    Ok(convert::rho_for_approx(epsilon, delta)?)
}

/// ε of a ρ-zCDP mechanism at δ (thesis Theorem 1): `ρ + 2√(ρ ln(1/δ))`, nudged up by a
/// relative 1e-12.
///
/// # Errors
///
/// [`McmcError::InvalidParameter`] unless `ρ ≥ 0` is finite and `0 < δ < 1`.
pub fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64, McmcError> {
    if !(rho.is_finite() && rho >= 0.0) {
        return Err(McmcError::param("rho", rho));
    }
    open_unit("delta", delta)?;
    Ok((rho + 2.0 * libm::sqrt(rho * -libm::log(delta))) * (1.0 + 1e-12))
}

/// δ(ε) of a Gaussian privacy-loss distribution `N(m, 2m)` (SMM19 Lemma 12; thesis
/// Theorems 4 and 7), rounded up (accountants `pld::delta_for_epsilon`).
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
    Ok(pld::delta_for_epsilon(m, epsilon)?)
}

/// Smallest ε with `δ(ε) ≤ delta` for the PLD `N(m, 2m)` (rounded up).
///
/// # Errors
///
/// Invalid `m` or δ.
pub fn gaussian_pld_epsilon(m: f64, delta: f64) -> Result<f64, McmcError> {
    open_unit("delta", delta)?;
    if !(m.is_finite() && m >= 0.0) {
        return Err(McmcError::param("m", m));
    }
    Ok(pld::epsilon_for_delta(m, delta)?)
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
        if ok(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// DP penalty iterations by zCDP (thesis Theorem 6): `k = ⌊2τ²n^{2α}ρ⌋`
/// (accountants `calibrate::dp_penalty_max_steps_zcdp`).
///
/// # Errors
///
/// Invalid ε, δ, τ, `n = 0` or a non-positive / non-finite exponent.
pub fn penalty_iterations_zcdp(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: usize,
    n_exponent: f64,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    positive("n_exponent", n_exponent)?;
    Ok(calibrate::dp_penalty_max_steps_zcdp(
        epsilon,
        delta,
        tau,
        rows(n)?,
        n_exponent,
    )?)
}

/// DP penalty iterations by the exact Gaussian PLD (thesis Theorem 7): the largest `k` with
/// `δ(ε; kμ) ≤ δ`, `μ = 1/(2τ²n^{2α})` (accountants `calibrate::dp_penalty_max_steps_pld`).
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
    positive("n_exponent", n_exponent)?;
    Ok(calibrate::dp_penalty_max_steps_pld(
        epsilon,
        delta,
        tau,
        rows(n)?,
        n_exponent,
    )?)
}

/// Subsampled RDP of WBK19 Theorem 9 (sampling without replacement, ratio `q`) as written in
/// thesis Theorems 8–9, for integer order `alpha ≥ 2`, with the sum through `j = α`
/// inclusive (accountants `curves::wor_rdp`, which also takes the minimum with the
/// unsubsampled `ε'(α)`).
///
/// # Errors
///
/// [`McmcError::Accountant`] for `q ∉ (0, 1]`, `alpha < 2`, or a NaN / negative `ε'(j)`.
pub fn wbk19_subsampled_rdp(
    alpha: u32,
    q: f64,
    base: impl Fn(u32) -> f64,
) -> Result<f64, McmcError> {
    Ok(curves::wor_rdp(q, u64::from(alpha), |j| {
        let v = u32::try_from(j).map_or(f64::NAN, &base);
        if v.is_nan() || v < 0.0 {
            Err(dpinfer_accountants::AccountantError::InvalidParameter {
                name: "base rdp",
                value: v,
            })
        } else {
            Ok(v)
        }
    })?)
}

fn sampling_ratio(n: usize, batch: usize) -> Result<f64, McmcError> {
    rows(n)?;
    if batch == 0 || batch > n {
        return Err(McmcError::InvalidSize {
            name: "batch",
            value: batch,
        });
    }
    #[allow(clippy::cast_precision_loss)]
    let q = (batch as f64 / n as f64).next_up().min(1.0);
    Ok(q)
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

/// ε at δ after `k` compositions of a mechanism with per-step RDP `rdp(α)` on orders
/// `2..=max_order` (by default the best of Mironov's and Balle et al.'s conversions;
/// accountants `convert::rdp_to_approx_with`).
fn rdp_epsilon(
    k: u64,
    delta: f64,
    per_step: &[(f64, f64)],
    rule: ConversionRule,
) -> Result<f64, McmcError> {
    #[allow(clippy::cast_precision_loss)]
    let kf = k as f64;
    let mut orders = alloc_free::Buf::new();
    let mut values = alloc_free::Buf::new();
    for &(a, r) in per_step {
        orders.push(a);
        values.push(kf * r);
    }
    Ok(convert::rdp_to_approx_with(orders.as_slice(), values.as_slice(), delta, rule)?.epsilon)
}

/// Fixed-capacity buffers (no allocator needed) for the order grid.
mod alloc_free {
    pub(super) struct Buf {
        data: [f64; super::MAX_RDP_ORDER as usize],
        len: usize,
    }
    impl Buf {
        pub(super) fn new() -> Self {
            Self {
                data: [0.0; super::MAX_RDP_ORDER as usize],
                len: 0,
            }
        }
        pub(super) fn push(&mut self, x: f64) {
            if self.len < self.data.len() {
                self.data[self.len] = x;
                self.len += 1;
            }
        }
        pub(super) fn as_slice(&self) -> &[f64] {
            &self.data[..self.len]
        }
    }
}

/// Per-step RDP curve on orders `2..=top` (at most `MAX_RDP_ORDER − 1` orders).
fn curve(
    top: u32,
    rdp: impl Fn(u32) -> Result<f64, McmcError>,
) -> Result<([(f64, f64); MAX_RDP_ORDER as usize], usize), McmcError> {
    let mut out = [(0.0, 0.0); MAX_RDP_ORDER as usize];
    let mut len = 0;
    for a in 2..=top.min(MAX_RDP_ORDER) {
        out[len] = (f64::from(a), rdp(a)?);
        len += 1;
    }
    Ok((out, len))
}

/// Subsampled DP penalty iterations (thesis Theorem 9, WBK19 accounting over orders
/// `2..=MAX_RDP_ORDER`, RDP → (ε, δ) by the better of Mironov's and Balle et al.'s
/// conversions): the largest `k` whose ε at δ is at most the target.
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
    subsampled_penalty_iterations_with(epsilon, delta, tau, n, batch, ConversionRule::Tightest)
}

/// [`subsampled_penalty_iterations`] with a selectable RDP → (ε, δ) conversion
/// ([`ConversionRule::Classic`]: Mironov 2017 Prop. 3 alone, thesis Theorem 1, as the thesis
/// computes its iteration counts).
///
/// # Errors
///
/// As [`subsampled_penalty_iterations`].
pub fn subsampled_penalty_iterations_with(
    epsilon: f64,
    delta: f64,
    tau: f64,
    n: usize,
    batch: usize,
    rule: ConversionRule,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    positive("tau", tau)?;
    sampling_ratio(n, batch)?;
    let (c, len) = curve(MAX_RDP_ORDER, |a| subsampled_penalty_rdp(a, tau, n, batch))?;
    largest_k(|k| Ok(rdp_epsilon(k, delta, &c[..len], rule)? <= epsilon))
}

/// ε at δ spent by `k` iterations of subsampled DP penalty.
///
/// # Errors
///
/// As [`subsampled_penalty_iterations`].
pub fn subsampled_penalty_epsilon(
    k: u64,
    delta: f64,
    tau: f64,
    n: usize,
    batch: usize,
) -> Result<f64, McmcError> {
    open_unit("delta", delta)?;
    let (c, len) = curve(MAX_RDP_ORDER, |a| subsampled_penalty_rdp(a, tau, n, batch))?;
    rdp_epsilon(k, delta, &c[..len], ConversionRule::Tightest)
}

/// Base RDP of one DP Barker test on a batch (thesis Theorem 8; HJDH19):
/// `ε'(α) = 5/(2|B|) + ln(2|B|/(|B| − 5α))/(2(α−1)) + 2α/(|B| − 5α)`, valid for `α < |B|/5`.
///
/// # Errors
///
/// `α < 2` or `5α ≥ |B|`.
pub fn barker_base_rdp(alpha: u32, batch: usize) -> Result<f64, McmcError> {
    Ok(calibrate::dp_barker_base_rdp(
        rows(batch)?,
        u64::from(alpha),
    )?)
}

/// Per-iteration RDP of DP Barker: WBK19 amplification of [`barker_base_rdp`] with
/// `q = |B|/n` (thesis Theorem 8).
///
/// # Errors
///
/// As [`barker_base_rdp`] plus invalid sizes.
pub fn barker_rdp(alpha: u32, n: usize, batch: usize) -> Result<f64, McmcError> {
    Ok(calibrate::dp_barker_rdp(
        rows(batch)?,
        rows(n)?,
        u64::from(alpha),
    )?)
}

fn barker_top(batch: usize) -> Result<u32, McmcError> {
    let top = u32::try_from(batch.saturating_sub(1) / 5)
        .unwrap_or(u32::MAX)
        .min(MAX_RDP_ORDER);
    if top < 2 {
        return Err(McmcError::InvalidSize {
            name: "batch",
            value: batch,
        });
    }
    Ok(top)
}

/// DP Barker iterations for (ε, δ) (thesis Theorem 8, accountants
/// `calibrate::dp_barker_max_steps`), over integer orders `2 ≤ α < |B|/5` (capped at
/// [`MAX_RDP_ORDER`]).
///
/// # Privacy
///
/// Valid for the per-row bound `T|r_j| ≤ √|B|/n` (enforced by clipping in [`crate::Barker`])
/// and total noise variance σ² = 2, the setting of HJDH19's Theorem 8 (under the bound the
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
    barker_iterations_with(epsilon, delta, n, batch, ConversionRule::Tightest)
}

/// [`barker_iterations`] with a selectable RDP → (ε, δ) conversion
/// ([`ConversionRule::Classic`]: Mironov 2017 Prop. 3 alone, as the thesis; accountants
/// `calibrate::dp_barker_max_steps_with`).
///
/// # Errors
///
/// As [`barker_iterations`].
pub fn barker_iterations_with(
    epsilon: f64,
    delta: f64,
    n: usize,
    batch: usize,
    rule: ConversionRule,
) -> Result<u64, McmcError> {
    check_eps_delta(epsilon, delta)?;
    sampling_ratio(n, batch)?;
    barker_top(batch)?;
    Ok(calibrate::dp_barker_max_steps_with(
        epsilon,
        delta,
        rows(batch)?,
        rows(n)?,
        u64::from(MAX_RDP_ORDER),
        rule,
    )?
    .0)
}

/// ε at δ spent by `k` DP Barker iterations.
///
/// # Errors
///
/// As [`barker_iterations`].
pub fn barker_epsilon(k: u64, delta: f64, n: usize, batch: usize) -> Result<f64, McmcError> {
    open_unit("delta", delta)?;
    sampling_ratio(n, batch)?;
    let (c, len) = curve(barker_top(batch)?, |a| barker_rdp(a, n, batch))?;
    rdp_epsilon(k, delta, &c[..len], ConversionRule::Tightest)
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

/// Per-release PLD means / zCDP costs `(ρ_l, ρ_g) = (1/(2τ_l²n), 1/(2τ_g²n))`, rounded up.
pub(crate) fn hmc_units(tau_l: f64, tau_g: f64, n: usize) -> Result<(f64, f64), McmcError> {
    positive("tau_l", tau_l)?;
    positive("tau_g", tau_g)?;
    #[allow(clippy::cast_precision_loss)]
    let nf = rows(n)? as f64;
    let rl = (1.0 / (2.0 * tau_l * tau_l * nf)) * (1.0 + 1e-12);
    let rg = (1.0 / (2.0 * tau_g * tau_g * nf)) * (1.0 + 1e-12);
    positive("rho_l", rl)?;
    positive("rho_g", rg)?;
    Ok((rl, rg))
}

/// Gradient releases after `k` iterations with `leapfrog` steps.
#[must_use]
pub fn gradient_releases(k: u64, leapfrog: u64, charging: GradientCharging) -> u64 {
    match charging {
        GradientCharging::Fresh => k.saturating_mul(leapfrog + 1),
        GradientCharging::Reuse => k.saturating_mul(leapfrog).saturating_add(1),
    }
}

/// Gradient releases of `chains` chains that run `k` iterations **in total** with `leapfrog`
/// steps: `k(L+1)` (`Fresh`) or `kL + chains` (`Reuse`: each chain releases its own start
/// gradient, Algorithm 3's "+1"). `chains = 1` is [`gradient_releases`].
#[must_use]
pub fn chains_gradient_releases(
    k: u64,
    leapfrog: u64,
    charging: GradientCharging,
    chains: u64,
) -> u64 {
    match charging {
        GradientCharging::Fresh => k.saturating_mul(leapfrog + 1),
        GradientCharging::Reuse => k.saturating_mul(leapfrog).saturating_add(chains),
    }
}

/// Total PLD mean (= zCDP ρ) of `chains` DP HMC chains running `k` iterations in total:
/// `kρ_l + G ρ_g` with `G` from [`chains_gradient_releases`], rounded up.
///
/// # Errors
///
/// Invalid τ's or `n`.
pub fn dp_hmc_chains_cost(
    k: u64,
    tau_l: f64,
    tau_g: f64,
    n: usize,
    leapfrog: u32,
    charging: GradientCharging,
    chains: u64,
) -> Result<f64, McmcError> {
    let (rl, rg) = hmc_units(tau_l, tau_g, n)?;
    let g = chains_gradient_releases(k, u64::from(leapfrog), charging, chains);
    #[allow(clippy::cast_precision_loss)]
    let m = k as f64 * rl + g as f64 * rg;
    Ok(m * (1.0 + 1e-12))
}

/// DP HMC iterations **summed over** `chains` chains sharing one (ε, δ) budget
/// (`target = (ε, δ)`, `kernel = (L, charging)`): the largest `K` with
/// [`dp_hmc_chains_cost`]`(K) ≤ ρ(ε, δ)` (zCDP, Bun–Steinke) or `δ(ε; cost(K)) ≤ δ` (PLD).
/// For `chains = 1` it equals [`dp_hmc_iterations_zcdp`] / [`dp_hmc_iterations_pld`].
///
/// # Errors
///
/// As [`dp_hmc_iterations_zcdp`]; [`McmcError::InvalidSize`] for `chains == 0`.
pub fn dp_hmc_chains_iterations(
    accounting: Accounting,
    target: (f64, f64),
    tau_l: f64,
    tau_g: f64,
    n: usize,
    kernel: (u32, GradientCharging),
    chains: u64,
) -> Result<u64, McmcError> {
    let (epsilon, delta) = target;
    let (leapfrog, charging) = kernel;
    check_eps_delta(epsilon, delta)?;
    if chains == 0 {
        return Err(McmcError::InvalidSize {
            name: "chains",
            value: 0,
        });
    }
    if leapfrog == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog",
            value: 0,
        });
    }
    if chains == 1 {
        return match accounting {
            Accounting::Zcdp => {
                dp_hmc_iterations_zcdp(epsilon, delta, tau_l, tau_g, n, leapfrog, charging)
            }
            Accounting::Pld => {
                dp_hmc_iterations_pld(epsilon, delta, tau_l, tau_g, n, leapfrog, charging)
            }
        };
    }
    hmc_units(tau_l, tau_g, n)?;
    let cost = |k| dp_hmc_chains_cost(k, tau_l, tau_g, n, leapfrog, charging, chains);
    match accounting {
        Accounting::Zcdp => {
            let rho = zcdp_rho(epsilon, delta)?;
            if cost(0)? > rho {
                return Ok(0);
            }
            largest_k(|k| Ok(cost(k)? <= rho))
        }
        Accounting::Pld => {
            if gaussian_pld_delta(epsilon, cost(0)?)? > delta {
                return Ok(0);
            }
            largest_k(|k| Ok(gaussian_pld_delta(epsilon, cost(k)?)? <= delta))
        }
    }
}

/// Total PLD mean (= zCDP ρ) of `k` DP HMC iterations.
///
/// # Errors
///
/// Invalid τ's or `n`.
pub fn dp_hmc_cost(
    k: u64,
    tau_l: f64,
    tau_g: f64,
    n: usize,
    leapfrog: u32,
    charging: GradientCharging,
) -> Result<f64, McmcError> {
    let (rl, rg) = hmc_units(tau_l, tau_g, n)?;
    let g = gradient_releases(k, u64::from(leapfrog), charging);
    #[allow(clippy::cast_precision_loss)]
    let m = k as f64 * rl + g as f64 * rg;
    Ok(m * (1.0 + 1e-12))
}

/// DP HMC iterations by zCDP (thesis §5.2): per release `ρ_l = 1/(2τ_l²n)`,
/// `ρ_g = 1/(2τ_g²n)`; `k` iterations cost `kρ_l + G(k)ρ_g` with `G` from `charging`.
/// `Reuse` is the thesis formula `⌊(ρ − ρ_g)/(ρ_l + Lρ_g)⌋` (accountants
/// `calibrate::dp_hmc_max_steps_zcdp`).
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
    check_eps_delta(epsilon, delta)?;
    if leapfrog == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog",
            value: 0,
        });
    }
    match charging {
        GradientCharging::Reuse => Ok(calibrate::dp_hmc_max_steps_zcdp(
            epsilon,
            delta,
            tau_l,
            tau_g,
            rows(n)?,
            u64::from(leapfrog),
        )?),
        GradientCharging::Fresh => {
            let rho = zcdp_rho(epsilon, delta)?;
            hmc_units(tau_l, tau_g, n)?;
            largest_k(|k| Ok(dp_hmc_cost(k, tau_l, tau_g, n, leapfrog, charging)? <= rho))
        }
    }
}

/// DP HMC iterations by the Gaussian PLD (thesis §5.2): PLD `N(m, 2m)` with
/// `m = kρ_l + G(k)ρ_g`; the largest `k` with `δ(ε; m) ≤ δ` (`Reuse`: accountants
/// `calibrate::dp_hmc_max_steps_pld`).
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
    if leapfrog == 0 {
        return Err(McmcError::InvalidSize {
            name: "leapfrog",
            value: 0,
        });
    }
    match charging {
        GradientCharging::Reuse => Ok(calibrate::dp_hmc_max_steps_pld(
            epsilon,
            delta,
            tau_l,
            tau_g,
            rows(n)?,
            u64::from(leapfrog),
        )?),
        GradientCharging::Fresh => {
            hmc_units(tau_l, tau_g, n)?;
            largest_k(|k| {
                Ok(gaussian_pld_delta(
                    epsilon,
                    dp_hmc_cost(k, tau_l, tau_g, n, leapfrog, charging)?,
                )? <= delta)
            })
        }
    }
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
