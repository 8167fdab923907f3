//! Noise as a map from uniforms: `s_dp = τ(u, s)` with `u ∈ (0, 1)^r`.
//!
//! Xiong, Ju & Zhang (§3.4) write a mechanism that releases a statistic `s(x)` as a map
//! `τ : (u, s(x)) ↦ s_dp` of `r` uniforms, so that the inner integral
//! `I(θ, x) = ∫ η(s_dp | x) g(s_dp, θ) ds_dp = ∫_{(0,1)^r} g(τ(u, s(x)), θ) du` can be
//! estimated with scrambled Sobol points (randomised quasi-Monte Carlo, eq. 11) instead of
//! i.i.d. draws. [`NoiseMap`] is that map, implemented for every mechanism of this crate that
//! releases a statistic: [`Laplace`] and [`Gaussian`] (the secure grid mechanisms, exact
//! discrete noise), [`BinomialCurve`], [`crate::RegressionStats`] (given the clamped
//! statistic `s̃`), and the simulation-only [`IdealizedLaplace`] /
//! [`IdealizedGaussian`] (the paper's continuous formulas). Each map is an inverse CDF, one
//! uniform per released coordinate (`r` = the statistic's length).
//!
//! # These uniforms are public simulation randomness
//!
//! The uniforms fed to `τ` must come from the public, seeded simulation streams
//! (`dpinfer_simulators::SimStream`, e.g. through `dpinfer_simulators::qmc`), **never** from the
//! privacy-noise generator ([`crate::NoiseRng`]). `τ` simulates a release of *simulated*
//! data for inference; it is not a release path. A real release of private data is drawn once,
//! by the mechanism's `release` methods, from the secret noise RNG: an inverse CDF evaluated in
//! `f64` on a known `u` would reveal the data (anyone who knows `u` subtracts the noise).
//!
//! # Distribution
//!
//! For `U` uniform on `(0, 1)^r`, `τ(U, s)` has the distribution of the mechanism's release of
//! `s` (same clamping, same grid, same integer noise law), up to the `f64` rounding of the CDF
//! that is inverted: each map below states how close. The tests compare `τ(U, s)` with the
//! mechanism's own sampler by two-sample Kolmogorov–Smirnov and χ² tests
//! (`tests/suite/noise_map.rs`).
//!
//! # Example
//!
//! ```
//! use dpinfer_mechanisms::{Laplace, NoiseMap};
//! // A 2-vector Laplace release (scale 1, ℓ₁ sensitivity 1, values clamped to [−10, 10]).
//! let mech = Laplace::vector(2, 1.0, 1.0, -10.0, 10.0)?;
//! let r = mech.noise_dim(2)?; // one uniform per coordinate
//! let mut out = [0.0; 2];
//! // u from a public simulation stream (here fixed): the median of the noise is 0.
//! mech.tau(&[0.5, 0.5], &[1.0, -3.0], &mut out)?;
//! assert_eq!(r, 2);
//! assert_eq!(out, [1.0, -3.0]);
//! # Ok::<(), dpinfer_mechanisms::MechanismError>(())
//! ```
//!
//! # References
//!
//! Xiong, Ju, Zhang. *Simulation-based inference for privacy-protected data*, §3.4 (eq. 9–12)
//! and the Laplace map `τ(u, s) = s − (Δ/ε)·sgn(u − ½)·ln(1 − 2|u − ½|)`.

use dpinfer_math::norm_quantile;

use crate::error::finite;
use crate::idealized::{IdealizedGaussian, IdealizedLaplace};
use crate::laplace::check_len;
use crate::{BinomialCurve, Gaussian, Laplace, MechanismError};

/// A mechanism's noise as a map `τ(u, s)` from `r` uniforms in `(0, 1)` (see the
/// [module docs](self)).
///
/// The uniforms are public simulation randomness (a `SimStream`), never the privacy-noise
/// generator; `τ` simulates a release, it never makes one.
pub trait NoiseMap {
    /// `r`: the number of uniforms `τ` reads for a statistic of `len` coordinates.
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] if the mechanism does not release statistics of
    /// length `len` (a vector mechanism of another `dim`, or `len == 0`).
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError>;

    /// Writes `τ(u, s)` into `out`: the release of the statistic `s` that the uniforms `u`
    /// select. `u`, `s` and `out` have the lengths [`NoiseMap::noise_dim`] names (`r = len`
    /// for every mechanism of this crate). All inputs are checked before anything is written,
    /// so on error `out` is unchanged.
    ///
    /// # Errors
    ///
    /// [`MechanismError::LengthMismatch`] for wrong lengths; [`MechanismError::OutOfRange`]
    /// (`"u"`) unless every `u_i` is in the open interval `(0, 1)` (NaN included); the
    /// mechanism's own checks of `s`.
    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError>;
}

/// Checks `u.len() == s.len() == out.len() == r` and every `u_i ∈ (0, 1)`.
pub(crate) fn check_inputs(
    r: usize,
    u: &[f64],
    s: &[f64],
    out: &[f64],
) -> Result<(), MechanismError> {
    check_len(r, u.len())?;
    check_len(r, s.len())?;
    check_len(r, out.len())?;
    if u.iter().all(|&x| x > 0.0 && x < 1.0) {
        Ok(())
    } else {
        Err(MechanismError::OutOfRange { param: "u" })
    }
}

/// `r = len` for mechanisms that release any non-empty statistic coordinate-wise.
fn any_len(len: usize) -> Result<usize, MechanismError> {
    if len == 0 {
        Err(MechanismError::LengthMismatch {
            expected: 1,
            found: 0,
        })
    } else {
        Ok(len)
    }
}

/// The standard Laplace quantile `−sgn(u − ½)·ln(1 − 2|u − ½|)` (the paper's §3.4 map with
/// scale 1), computed as `ln(2u)` below ½ and `−ln(2(1 − u))` from ½ on (`1 − u` is exact
/// there), so no precision is lost in either tail.
fn laplace_quantile(u: f64) -> f64 {
    if u < 0.5 {
        libm::log(2.0 * u)
    } else {
        -libm::log(2.0 * (1.0 - u))
    }
}

/// The smallest `z` with `P(Z ≤ z) ≥ u` for the discrete Laplace `P(Z = z) ∝ e^{−λ|z|}`
/// (`λ = 1/β`, β the scale in grid steps), saturated at `±2⁶²`.
///
/// With `q = e^{−λ}`: `P(Z ≤ z) = q^{−z}/(1 + q)` for `z ≤ −1` and `1 − q^{z+1}/(1 + q)` for
/// `z ≥ 0`, inverted in closed form; the upper branch uses `1 − u`, exact for `u ≥ ½`.
pub(crate) fn discrete_laplace_quantile(lambda: f64, u: f64) -> i64 {
    const CAP: f64 = 4_611_686_018_427_387_904.0; // 2^62
    // ln(1 + q) with q = e^{−λ}
    let ln1q = libm::log1p(libm::exp(-lambda));
    let z = if u < 0.5 {
        // z ≤ 0: z = −⌊−ln(u(1 + q))/λ⌋ (0 when the bracket is below 1)
        let a = -(libm::log(u) + ln1q) / lambda;
        -libm::floor(a.max(0.0)).min(CAP)
    } else {
        // z ≥ 0: z = ⌈−ln((1 − u)(1 + q))/λ⌉ − 1 (0 when the bracket is below 1)
        let b = -(libm::log(1.0 - u) + ln1q) / lambda;
        (libm::ceil(b) - 1.0).clamp(0.0, CAP)
    };
    // |z| ≤ 2^62: the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    let z = z as i64;
    z
}

/// The quantile of a continuity-corrected normal on ℤ: the smallest `k` with
/// `Φ((k + ½)/σ) ≥ u`, i.e. `⌈σ·Φ⁻¹(u) − ½⌉`, saturated at `±2⁶²`.
fn rounded_normal_quantile(sigma: f64, u: f64) -> i64 {
    const CAP: f64 = 4_611_686_018_427_387_904.0; // 2^62
    let k = libm::ceil(sigma * norm_quantile(u) - 0.5).clamp(-CAP, CAP);
    #[allow(clippy::cast_possible_truncation)]
    let k = k as i64;
    k
}

/// The smallest `k ∈ {0, …, n}` with `P(X ≤ k) ≥ u` for `X ~ Binomial(n, p)`, `0 < p < 1`.
///
/// The pmf is evaluated at the mode (`ln_binomial_int`) and by its ratio recurrence outwards
/// until a term falls below `2⁻⁶⁴` of the mass summed so far; the tails are normalised by their
/// computed total (so the `exp` at the mode cancels), and the search walks from the mode down
/// (lower CDF, for `u` at or below `P(X ≤ mode)`) or up (upper tail `P(X > k) ≤ 1 − u`). The
/// CDF is exact up to `f64` rounding (absolute error a few multiples of 2⁻⁵³) and the
/// neglected tail mass (below `n·2⁻⁶⁴`). Work: `O(√(np(1 − p)))` terms on each side (about
/// 10 standard deviations each).
fn binomial_quantile(n: u64, p: f64, u: f64) -> u64 {
    const TINY: f64 = 5.421_010_862_427_522e-20; // 2^-64
    if n == 0 {
        return 0;
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    let ratio_up = p / (1.0 - p); // pmf(k+1)/pmf(k) = (n−k)/(k+1)·ratio_up
    // mode ⌊(n+1)p⌋ ∈ [0, n]
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let mode = (libm::floor((nf + 1.0) * p) as u64).min(n);
    #[allow(clippy::cast_precision_loss)]
    let (mf, rest) = (mode as f64, (n - mode) as f64);
    let pm = libm::exp(
        dpinfer_math::ln_binomial_int(n, mode) + mf * libm::log(p) + rest * libm::log1p(-p),
    );
    // Lower mass L = Σ_{k ≤ mode} pmf(k) and upper mass S = Σ_{k > mode} pmf(k).
    let mut lower = pm;
    let mut k = mode;
    let mut pk = pm;
    while k > 0 {
        #[allow(clippy::cast_precision_loss)]
        let kf = k as f64;
        pk *= kf / ((nf - kf + 1.0) * ratio_up);
        lower += pk;
        k -= 1;
        if pk < lower * TINY {
            break;
        }
    }
    let mut upper = 0.0;
    let mut k = mode;
    let mut pk = pm;
    while k < n {
        #[allow(clippy::cast_precision_loss)]
        let kf = k as f64;
        pk *= (nf - kf) / (kf + 1.0) * ratio_up;
        upper += pk;
        k += 1;
        if pk < (lower + upper) * TINY {
            break;
        }
    }
    let total = lower + upper;
    if u * total <= lower {
        // Walk down: F(k − 1) = F(k) − pmf(k); stop at the smallest k with F(k) ≥ u.
        let target = u * total;
        let (mut k, mut f, mut pk) = (mode, lower, pm);
        while k > 0 {
            let below = f - pk;
            if below < target {
                break;
            }
            #[allow(clippy::cast_precision_loss)]
            let kf = k as f64;
            f = below;
            pk *= kf / ((nf - kf + 1.0) * ratio_up);
            k -= 1;
        }
        k
    } else {
        // Walk up: P(X > k) = S(k); stop at the smallest k with P(X > k) ≤ 1 − u.
        let target = (1.0 - u) * total;
        let (mut k, mut s, mut pk) = (mode, upper, pm);
        while k < n && s > target {
            #[allow(clippy::cast_precision_loss)]
            let kf = k as f64;
            pk *= (nf - kf) / (kf + 1.0) * ratio_up;
            s -= pk;
            k += 1;
        }
        k
    }
}

/// `out_i = s_i + noise(u_i)` per coordinate, for an `s` of any non-empty length with finite
/// entries: the `tau` of the idealized (continuous, simulation-only) noise maps below.
///
/// # Errors
///
/// As [`NoiseMap::tau`]; [`MechanismError::NonFinite`] (`"s"`) for a NaN or infinite `s_i`.
fn add_per_coordinate(
    u: &[f64],
    s: &[f64],
    out: &mut [f64],
    noise: impl Fn(f64) -> f64,
) -> Result<(), MechanismError> {
    check_inputs(any_len(s.len())?, u, s, out)?;
    for &si in s {
        finite("s", si)?;
    }
    for ((o, &ui), &si) in out.iter_mut().zip(u).zip(s) {
        *o = si + noise(ui);
    }
    Ok(())
}

/// Continuous Laplace `s_i − b·sgn(u_i − ½)·ln(1 − 2|u_i − ½|)` per coordinate, the paper's
/// §3.4 formula (scale `b = Δ/ε`): exactly `Lap(b)` up to the rounding of `ln`. Simulation only,
/// like the type.
impl NoiseMap for IdealizedLaplace {
    /// `r = len` (any non-empty statistic, noise added per coordinate).
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        any_len(len)
    }

    /// # Errors
    ///
    /// As [`NoiseMap::tau`]; [`MechanismError::NonFinite`] (`"s"`) for a NaN or infinite `s_i`.
    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        let b = self.scale();
        add_per_coordinate(u, s, out, |ui| b * laplace_quantile(ui))
    }
}

/// Continuous Gaussian `s_i + σ·Φ⁻¹(u_i)` per coordinate (`dpinfer_math::norm_quantile`,
/// relative error about 1e-15). Simulation only, like the type.
impl NoiseMap for IdealizedGaussian {
    /// `r = len` (any non-empty statistic, noise added per coordinate).
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        any_len(len)
    }

    /// # Errors
    ///
    /// As [`NoiseMap::tau`]; [`MechanismError::NonFinite`] (`"s"`) for a NaN or infinite `s_i`.
    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        let sigma = self.sigma();
        add_per_coordinate(u, s, out, |ui| sigma * norm_quantile(ui))
    }
}

/// The secure Laplace release `g·(round(clamp(s_i)/g) + Z_i)` with `Z_i` the discrete Laplace
/// quantile of `u_i` (scale `β = b/g` grid steps, the sampler's exact `t/s`), converted back
/// exactly as [`Laplace::release_into`] does — the same clamping (NaN ↦ `lo`), rounding and
/// `±2⁵³` saturation. The discrete Laplace CDF is inverted in closed form; with `β ≈ 2⁴⁰` on the
/// default grids its `f64` rounding moves an output by one grid step (`b·2⁻⁴⁰`) with probability
/// of order 10⁻⁴, and never further.
impl NoiseMap for Laplace {
    /// `r = dim`; any other `len` is a [`MechanismError::LengthMismatch`].
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        check_len(self.dim(), len)?;
        Ok(len)
    }

    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        check_inputs(self.noise_dim(s.len())?, u, s, out)?;
        let (bridge, beta) = self.noise_parts();
        let lambda = 1.0 / beta;
        for ((o, &ui), &si) in out.iter_mut().zip(u).zip(s) {
            let z = discrete_laplace_quantile(lambda, ui);
            *o = bridge.release(bridge.to_grid(si), z);
        }
        Ok(())
    }
}

/// The secure Gaussian release `g·(round(clamp(s_i)/g) + Y_i)` with `Y_i = ⌈σ_u·Φ⁻¹(u_i) − ½⌉`,
/// converted back exactly as [`Gaussian::release_into`] does. This inverts the
/// continuity-corrected normal CDF `Φ((k + ½)/σ_u)` in place of the discrete Gaussian
/// `N_ℤ(0, σ_u²)`'s; by the Euler–Maclaurin midpoint formula the two CDFs differ by at most
/// `0.011/σ_u²` (below 2⁻⁵² for the default grids' `σ_u > 2²³`; for a grid coarsened by
/// very wide bounds, see [`Gaussian::effective_sigma`] / [`Gaussian::grid`], the bound holds
/// with the smaller `σ_u`).
impl NoiseMap for Gaussian {
    /// `r = dim`; any other `len` is a [`MechanismError::LengthMismatch`].
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        check_len(self.dim(), len)?;
        Ok(len)
    }

    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        check_inputs(self.noise_dim(s.len())?, u, s, out)?;
        let (bridge, sigma_units) = self.noise_parts();
        for ((o, &ui), &si) in out.iter_mut().zip(u).zip(s) {
            let y = rounded_normal_quantile(sigma_units, ui);
            *o = bridge.release(bridge.to_grid(si), y);
        }
        Ok(())
    }
}

/// The binomial infection-curve release: `out_i` is the `Binomial(n, (I_i + m)/(K + 2m))`
/// quantile of `u_i`, for the infection counts `s_i = I_i` (clamped to `K` as
/// [`BinomialCurve::release_point`] does), as an `f64` count in `{0, …, n}` (divide by `n` for
/// the paper's proportions). The binomial CDF is summed from its mode (see the crate's
/// `binomial_quantile`): exact up to `f64` rounding, absolute CDF error a few multiples of 2⁻⁵³.
impl NoiseMap for BinomialCurve {
    /// `r = len` = the number of time points `L` (any non-empty curve).
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        any_len(len)
    }

    /// # Errors
    ///
    /// As [`NoiseMap::tau`]; [`MechanismError::NonFinite`] (`"s"`) for NaN/±∞ and
    /// [`MechanismError::OutOfRange`] (`"s"`) for a negative or non-integer count.
    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        check_inputs(any_len(s.len())?, u, s, out)?;
        for &si in s {
            finite("s", si)?;
            if si < 0.0 || libm::floor(si) < si {
                return Err(MechanismError::OutOfRange { param: "s" });
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let (pop, m, denom) = (
            self.population() as f64,
            self.m() as f64,
            self.denominator() as f64,
        );
        for ((o, &ui), &si) in out.iter_mut().zip(u).zip(s) {
            let p = (si.min(pop) + m) / denom;
            #[allow(clippy::cast_precision_loss)]
            let k = binomial_quantile(self.n(), p, ui) as f64;
            *o = k;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_quantile_brackets_the_cdf() {
        // Brute-force CDF by direct summation of exp(ln pmf) for a small case.
        let (n, p) = (30u64, 0.3);
        let mut cdf = [0.0f64; 31];
        let mut acc = 0.0;
        for k in 0..=n {
            #[allow(clippy::cast_precision_loss)]
            let kf = k as f64;
            acc += libm::exp(
                dpinfer_math::ln_binomial_int(n, k)
                    + kf * libm::log(p)
                    + (30.0 - kf) * libm::log1p(-p),
            );
            cdf[usize::try_from(k).unwrap()] = acc;
        }
        for i in 1..1000 {
            let u = f64::from(i) / 1000.0;
            let k = usize::try_from(binomial_quantile(n, p, u)).unwrap();
            assert!(cdf[k] >= u - 1e-14, "u {u} k {k}");
            assert!(k == 0 || cdf[k - 1] < u + 1e-14, "u {u} k {k}");
        }
    }

    #[test]
    fn discrete_laplace_quantile_brackets_the_cdf() {
        let lambda = 0.7;
        let q = libm::exp(-lambda);
        let cdf = |z: i64| {
            #[allow(clippy::cast_precision_loss)]
            let zf = z as f64;
            if z < 0 {
                libm::pow(q, -zf) / (1.0 + q)
            } else {
                1.0 - libm::pow(q, zf + 1.0) / (1.0 + q)
            }
        };
        for i in 1..1000 {
            let u = f64::from(i) / 1000.0;
            let z = discrete_laplace_quantile(lambda, u);
            assert!(cdf(z) >= u - 1e-12, "u {u} z {z}");
            assert!(cdf(z - 1) < u + 1e-12, "u {u} z {z}");
        }
    }
}
