//! The SVT-ABC (ABCDP) noise analysis of Park, Vinaroz & Jitkrittum (Entropy 2021) as plain
//! functions: the noise scale of Theorem 1, the density and CDF of the noise difference
//! `m − v` (Lemma 2), the flip probability (Proposition 1) and the error bounds of Theorem 2.
//!
//! # Privacy
//!
//! [`noise_scale`] and [`total_epsilon`] are the pure ε-DP statements of Theorem 1 for the
//! replace-one neighbouring relation on a private dataset of fixed size `N` (the relation under
//! which the distance sensitivity `Δ_ρ` is defined, e.g. `2√B_k / N` for MMD, Lemma 1). Both
//! round toward the safe side (a larger `b`, a larger ε).
//!
//! # References
//!
//! M. Park, M. Vinaroz, W. Jitkrittum. *ABCDP: Approximate Bayesian Computation with
//! Differential Privacy.* Entropy 23 (2021) 961. Algorithm 1, Theorem 1, Lemma 2,
//! Proposition 1, Theorem 2 and Appendices C–E.

use crate::error::{AbcError, non_negative, positive};

/// How Algorithm 1 treats the threshold noise `m ~ Lap(b)` after an acceptance.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Resample {
    /// `RESAMPLE = False`: the noisy threshold is drawn once (Lyu et al. 2017, Algorithm 1);
    /// ε_total = (c + 1)·Δ_ρ / b.
    Never,
    /// `RESAMPLE = True`: a fresh threshold noise after every acceptance (Dwork & Roth SVT);
    /// ε_total = 2c·Δ_ρ / b.
    AfterAccept,
}

fn check_count(c: u64) -> Result<f64, AbcError> {
    if c == 0 {
        return Err(AbcError::InvalidCount {
            name: "c",
            value: 0,
        });
    }
    #[allow(clippy::cast_precision_loss)]
    Ok(c as f64)
}

/// The privacy-loss multiplier `k` with ε_total = k·Δ_ρ / b (Theorem 1, eq. 9).
fn multiplier(c: f64, resample: Resample) -> f64 {
    match resample {
        Resample::Never => c + 1.0,
        Resample::AfterAccept => 2.0 * c,
    }
}

/// The Laplace scale `b` of the threshold noise that makes Algorithm 1 ε_total-DP
/// (Theorem 1, eq. 9, solved for `b`); the query noise has scale `2b`.
///
/// `b = (c + 1)·Δ_ρ / ε_total` without resampling and `b = 2c·Δ_ρ / ε_total` with it. The
/// result is rounded up by one ulp so that the true ε of the returned `b` never exceeds
/// `epsilon_total`.
///
/// # Privacy
///
/// Pure ε_total-DP for the replace-one relation under which `delta_rho` bounds the change of
/// the distance ρ(Y*, Y) (Theorem 1). `c` is the number of accepted samples after which the
/// private pass stops.
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] if `epsilon_total` or `delta_rho` is not finite and
/// positive; [`AbcError::InvalidCount`] if `c == 0`.
///
/// # Examples
///
/// ```
/// use dpinfer_abc::analysis::{noise_scale, Resample};
/// let b = noise_scale(1.0, 10, 2.0 / 5000.0, Resample::Never).unwrap();
/// assert!((b - 11.0 * 2.0 / 5000.0).abs() < 1e-15);
/// assert!(noise_scale(0.0, 10, 1.0, Resample::Never).is_err());
/// ```
pub fn noise_scale(
    epsilon_total: f64,
    c: u64,
    delta_rho: f64,
    resample: Resample,
) -> Result<f64, AbcError> {
    let eps = positive("epsilon_total", epsilon_total)?;
    let delta = positive("delta_rho", delta_rho)?;
    let c = check_count(c)?;
    let b = multiplier(c, resample) * delta / eps;
    if !(b.is_finite() && b > 0.0) {
        return Err(AbcError::InvalidParameter {
            name: "epsilon_total",
            value: epsilon_total,
        });
    }
    Ok(b.next_up())
}

/// The ε_total of Algorithm 1 with threshold-noise scale `b` (Theorem 1, eq. 9), rounded up.
///
/// # Privacy
///
/// As [`noise_scale`]; this is its inverse and is what a privacy ledger records.
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] if `b` or `delta_rho` is not finite and positive or the
/// result overflows; [`AbcError::InvalidCount`] if `c == 0`.
pub fn total_epsilon(b: f64, c: u64, delta_rho: f64, resample: Resample) -> Result<f64, AbcError> {
    let b = positive("b", b)?;
    let delta = positive("delta_rho", delta_rho)?;
    let c = check_count(c)?;
    let eps = multiplier(c, resample) * delta / b;
    if !eps.is_finite() {
        return Err(AbcError::InvalidParameter {
            name: "b",
            value: b,
        });
    }
    Ok(eps.next_up())
}

/// The density of `Z = m − v` with `m ~ Lap(b)` and `v ~ Lap(2b)` independent (Lemma 2,
/// eq. 10): `f_Z(z) = [2·exp(−|z|/2b) − exp(−|z|/b)] / (6b)`.
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] if `z` is NaN or `b` is not finite and positive.
pub fn noise_difference_pdf(z: f64, b: f64) -> Result<f64, AbcError> {
    let b = positive("b", b)?;
    if z.is_nan() {
        return Err(AbcError::InvalidParameter {
            name: "z",
            value: z,
        });
    }
    let a = z.abs();
    Ok((2.0 * libm::exp(-a / (2.0 * b)) - libm::exp(-a / b)) / (6.0 * b))
}

/// `G_b(a) = P(Z > a) = [4·exp(−a/2b) − exp(−a/b)] / 6` for `a ≥ 0` (Lemma 2): the upper tail
/// of the noise difference, decreasing from 1/2 at `a = 0` to 0.
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] if `a` is negative or NaN (`+∞` gives 0) or `b` is not
/// finite and positive.
pub fn g_b(a: f64, b: f64) -> Result<f64, AbcError> {
    let b = positive("b", b)?;
    if a.is_nan() || a < 0.0 {
        return Err(AbcError::InvalidParameter {
            name: "a",
            value: a,
        });
    }
    Ok(g_b_unchecked(a, b))
}

#[inline]
pub(crate) fn g_b_unchecked(a: f64, b: f64) -> f64 {
    let e = libm::exp(-a / (2.0 * b));
    // 4e − e² = e(4 − e) avoids a second exp and keeps the value in [0, 1/2].
    (e * (4.0 - e) / 6.0).clamp(0.0, 0.5)
}

/// The CDF of `Z = m − v`: `F_Z(a) = H[a] + (1 − 2H[a])·G_b(|a|)` (Lemma 2).
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] if `a` is NaN or `b` is not finite and positive.
pub fn noise_difference_cdf(a: f64, b: f64) -> Result<f64, AbcError> {
    let b = positive("b", b)?;
    if a.is_nan() {
        return Err(AbcError::InvalidParameter {
            name: "a",
            value: a,
        });
    }
    let g = g_b_unchecked(a.abs(), b);
    Ok(if a >= 0.0 { 1.0 - g } else { g })
}

/// The flip probability `P[τ̃_t ≠ τ_t | τ_t] = G_b(|ρ_t − ε_abc|)` (Proposition 1): the chance
/// that ABCDP's noisy decision differs from plain rejection ABC's for a pair at distance `rho`.
///
/// # Errors
///
/// [`AbcError::InvalidParameter`] if `rho` or `epsilon_abc` is not finite, or `b` is not
/// finite and positive.
pub fn flip_probability(rho: f64, epsilon_abc: f64, b: f64) -> Result<f64, AbcError> {
    let rho = crate::error::finite("rho", rho)?;
    let eps = crate::error::finite("epsilon_abc", epsilon_abc)?;
    g_b((rho - eps).abs(), b)
}

fn check_bound_inputs(
    rhos: &[f64],
    epsilon_abc: f64,
    b: f64,
    k_t: f64,
    c_prime: u64,
) -> Result<f64, AbcError> {
    if rhos.is_empty() {
        return Err(AbcError::Empty { name: "rhos" });
    }
    crate::error::finite("epsilon_abc", epsilon_abc)?;
    positive("b", b)?;
    non_negative("k_t", k_t)?;
    if c_prime == 0 {
        return Err(AbcError::InvalidCount {
            name: "c_prime",
            value: 0,
        });
    }
    if rhos.iter().any(|r| !r.is_finite()) {
        return Err(AbcError::NonFiniteValue { name: "rhos" });
    }
    #[allow(clippy::cast_precision_loss)]
    Ok(c_prime as f64)
}

/// Theorem 2, claim 1: `E‖(1/c)Σ f(θ_t)τ̃_t − (1/c')Σ f(θ_t)τ_t‖₂ ≤ (2K_T/c')·Σ_t G_b(|ρ_t − ε_abc|)`,
/// where `K_T = max_t ‖f(θ_t)‖₂` and `c'` is the number of plain-ABC acceptances.
///
/// # Errors
///
/// [`AbcError::Empty`] for no distances, [`AbcError::NonFiniteValue`] for a non-finite
/// distance, [`AbcError::InvalidParameter`] for a bad `epsilon_abc`, `b` or `k_t`,
/// [`AbcError::InvalidCount`] for `c_prime == 0`.
pub fn expected_error_bound(
    rhos: &[f64],
    epsilon_abc: f64,
    b: f64,
    k_t: f64,
    c_prime: u64,
) -> Result<f64, AbcError> {
    let cp = check_bound_inputs(rhos, epsilon_abc, b, k_t, c_prime)?;
    let mut s = dpinfer_math::NeumaierSum::default();
    for &r in rhos {
        s.add(g_b_unchecked((r - epsilon_abc).abs(), b));
    }
    Ok(2.0 * k_t / cp * s.sum())
}

/// Expected number of flips `μ_T = Σ_t G_b(|ρ_t − ε_abc|)` (proof of Theorem 2).
///
/// # Errors
///
/// As [`expected_error_bound`] (without `k_t`, `c_prime`).
pub fn expected_flips(rhos: &[f64], epsilon_abc: f64, b: f64) -> Result<f64, AbcError> {
    check_bound_inputs(rhos, epsilon_abc, b, 0.0, 1)?;
    let mut s = dpinfer_math::NeumaierSum::default();
    for &r in rhos {
        s.add(g_b_unchecked((r - epsilon_abc).abs(), b));
    }
    Ok(s.sum())
}

/// Theorem 2, claim 3: a lower bound on `P(‖(1/c)Σ f(θ_t)τ̃_t − (1/c')Σ f(θ_t)τ_t‖₂ ≤ a)`,
/// namely `1 − (4K_T / (3ac'))·Σ_t exp(−|ρ_t − ε_abc| / 2b)`, clamped at 0.
///
/// # Errors
///
/// As [`expected_error_bound`], plus [`AbcError::InvalidParameter`] if `a` is not finite
/// and positive.
pub fn error_probability_bound(
    rhos: &[f64],
    epsilon_abc: f64,
    b: f64,
    k_t: f64,
    c_prime: u64,
    a: f64,
) -> Result<f64, AbcError> {
    let cp = check_bound_inputs(rhos, epsilon_abc, b, k_t, c_prime)?;
    let a = positive("a", a)?;
    let mut s = dpinfer_math::NeumaierSum::default();
    for &r in rhos {
        s.add(libm::exp(-(r - epsilon_abc).abs() / (2.0 * b)));
    }
    let p = 1.0 - 4.0 * k_t / (3.0 * a * cp) * s.sum();
    Ok(if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::u01_open;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    fn laplace(rng: &mut Xoshiro256PlusPlus, b: f64) -> f64 {
        let u = u01_open(rng) - 0.5;
        -b * u.signum() * libm::log(1.0 - 2.0 * u.abs())
    }

    #[test]
    fn theorem1_roundtrip_and_values() {
        let d = 2.0 / 5000.0;
        for (r, k) in [(Resample::Never, 11.0), (Resample::AfterAccept, 20.0)] {
            let b = noise_scale(0.5, 10, d, r).unwrap();
            assert!((b - k * d / 0.5).abs() <= 4.0 * f64::EPSILON * b);
            let eps = total_epsilon(b, 10, d, r).unwrap();
            // never under-reported, and tight to a few ulps
            assert!(eps >= 0.5 * (1.0 - 4.0 * f64::EPSILON));
            assert!((eps - 0.5).abs() < 1e-14);
        }
        assert!(noise_scale(f64::NAN, 1, 1.0, Resample::Never).is_err());
        assert!(noise_scale(1.0, 0, 1.0, Resample::Never).is_err());
        assert!(noise_scale(1.0, 1, -1.0, Resample::Never).is_err());
        assert!(noise_scale(f64::MIN_POSITIVE, 1, f64::MAX, Resample::Never).is_err());
    }

    #[test]
    fn pdf_integrates_to_one_and_matches_cdf() {
        // Closed-form check of Lemma 2: trapezoid integral of the pdf equals the CDF difference.
        let b = 0.3;
        let (lo, hi, n) = (-20.0_f64, 1.7_f64, 200_000);
        let h = (hi - lo) / f64::from(n);
        let mut s = 0.0;
        for i in 0..=n {
            let z = lo + h * f64::from(i);
            let w = if i == 0 || i == n { 0.5 } else { 1.0 };
            s += w * noise_difference_pdf(z, b).unwrap();
        }
        let want = noise_difference_cdf(hi, b).unwrap() - noise_difference_cdf(lo, b).unwrap();
        assert!((s * h - want).abs() < 1e-8, "{} vs {want}", s * h);
        assert!((g_b(0.0, b).unwrap() - 0.5).abs() < 1e-15);
        assert_eq!(g_b(f64::INFINITY, b).unwrap(), 0.0);
        assert!(g_b(-1.0, b).is_err());
    }

    #[test]
    fn cdf_matches_monte_carlo() {
        // KS-type check at a few points: |F̂ − F| < 6·sqrt(F(1−F)/n) → false failure < 1e-8
        // per point (normal approximation of a binomial proportion).
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let b = 0.05;
        let n = 200_000;
        let mut zs: alloc::vec::Vec<f64> = (0..n)
            .map(|_| laplace(&mut rng, b) - laplace(&mut rng, 2.0 * b))
            .collect();
        zs.sort_by(f64::total_cmp);
        for a in [-0.3, -0.1, -0.02, 0.0, 0.01, 0.05, 0.2] {
            let emp = zs.partition_point(|&z| z <= a) as f64 / f64::from(n);
            let f = noise_difference_cdf(a, b).unwrap();
            let sd = (f * (1.0 - f) / f64::from(n)).sqrt();
            assert!((emp - f).abs() < 6.0 * sd + 1e-12, "a={a}: {emp} vs {f}");
        }
    }

    #[test]
    fn flip_probability_matches_monte_carlo() {
        // Proposition 1, simulated exactly as Algorithm 1 does one comparison.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let (eps_abc, b) = (0.2, 0.04);
        let n = 100_000_u32;
        for rho in [0.05, 0.15, 0.2, 0.25, 0.4] {
            let tau = rho <= eps_abc;
            let mut flips = 0u32;
            for _ in 0..n {
                let noisy = rho + laplace(&mut rng, 2.0 * b) <= eps_abc + laplace(&mut rng, b);
                flips += u32::from(noisy != tau);
            }
            let p = flip_probability(rho, eps_abc, b).unwrap();
            let emp = f64::from(flips) / f64::from(n);
            let sd = (p * (1.0 - p) / f64::from(n)).sqrt();
            // 6 sd: false-failure probability < 2e-9 per ρ.
            assert!((emp - p).abs() < 6.0 * sd, "rho={rho}: {emp} vs {p}");
        }
    }

    #[test]
    fn theorem2_bounds_hold_in_simulation() {
        // Fixed pairs (θ_t, ρ_t); f(θ) = θ. Simulate Algorithm 1's indicators with one threshold
        // noise (RESAMPLE = False, no early stop so c is random) and compare:
        //  * the mean number of flips with μ_T = Σ G_b (exact by linearity; 6 sd),
        //  * the mean error with the claim-1 bound (a bound, so only ≤ is required).
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let t = 400;
        let thetas: alloc::vec::Vec<f64> = (0..t).map(|_| 2.0 * u01_open(&mut rng) - 1.0).collect();
        let rhos: alloc::vec::Vec<f64> = thetas
            .iter()
            .map(|th| (th * th + 0.1 * u01_open(&mut rng)).sqrt())
            .collect();
        let (eps_abc, b) = (0.3, 0.01);
        let tau: alloc::vec::Vec<bool> = rhos.iter().map(|&r| r <= eps_abc).collect();
        let c_prime = tau.iter().filter(|&&x| x).count() as u64;
        let exact_mean: f64 = thetas
            .iter()
            .zip(&tau)
            .filter(|(_, t)| **t)
            .map(|(th, _)| *th)
            .sum::<f64>()
            / c_prime as f64;
        let reps = 4000;
        let (mut flips_sum, mut flips_sq, mut err_sum) = (0.0, 0.0, 0.0);
        for _ in 0..reps {
            let m = laplace(&mut rng, b);
            let (mut s, mut c, mut flips) = (0.0, 0u32, 0u32);
            for i in 0..t {
                let acc = rhos[i] + laplace(&mut rng, 2.0 * b) <= eps_abc + m;
                flips += u32::from(acc != tau[i]);
                if acc {
                    s += thetas[i];
                    c += 1;
                }
            }
            flips_sum += f64::from(flips);
            flips_sq += f64::from(flips) * f64::from(flips);
            if c > 0 {
                err_sum += (s / f64::from(c) - exact_mean).abs();
            }
        }
        let mu = expected_flips(&rhos, eps_abc, b).unwrap();
        let mean = flips_sum / f64::from(reps);
        let var = flips_sq / f64::from(reps) - mean * mean;
        let sd = (var / f64::from(reps)).sqrt();
        assert!(
            (mean - mu).abs() < 6.0 * sd + 1e-9,
            "{mean} vs {mu} (sd {sd})"
        );
        let k_t = thetas.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let bound = expected_error_bound(&rhos, eps_abc, b, k_t, c_prime).unwrap();
        assert!(
            err_sum / f64::from(reps) <= bound,
            "{} > {bound}",
            err_sum / f64::from(reps)
        );
        let p = error_probability_bound(&rhos, eps_abc, b, k_t, c_prime, 10.0 * bound).unwrap();
        assert!((0.0..=1.0).contains(&p));
    }
}
