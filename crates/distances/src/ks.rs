//! The two-sample Kolmogorov–Smirnov distance between empirical distributions, with its
//! asymptotic p-value: the check "is this posterior sample distinguishable from the prior?".
//!
//! # References
//!
//! Smirnov (1948); the limiting distribution `Q_KS(λ) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²λ²}` with
//! the effective size `n_e = n m / (n + m)` and Stephens' small-sample correction
//! `λ = (√n_e + 0.12 + 0.11/√n_e) D` (Press et al., *Numerical Recipes*, 3rd ed., §14.3.3).
//!
//! These functions compare **public** or **released** samples (post-processing); they are not
//! privacy mechanisms and carry no sensitivity.

use crate::DistanceError;

/// Two-sample KS statistic `D = sup_x |F_a(x) − F_b(x)|` of two samples that the function
/// sorts in place (ascending, `f64::total_cmp`); no allocation.
///
/// # Errors
/// [`DistanceError::Empty`] if either sample is empty; [`DistanceError::NonFiniteValue`] if a
/// value is NaN or infinite.
pub fn ks_statistic(a: &mut [f64], b: &mut [f64]) -> Result<f64, DistanceError> {
    if a.is_empty() || b.is_empty() {
        return Err(DistanceError::Empty);
    }
    if a.iter().chain(b.iter()).any(|v| !v.is_finite()) {
        return Err(DistanceError::NonFiniteValue);
    }
    a.sort_unstable_by(f64::total_cmp);
    b.sort_unstable_by(f64::total_cmp);
    #[allow(clippy::cast_precision_loss)]
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j) = (0usize, 0usize);
    let mut d: f64 = 0.0;
    while i < a.len() && j < b.len() {
        // Step past every copy of the smaller value in both samples (ties move together).
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        #[allow(clippy::cast_precision_loss)]
        let gap = (i as f64 / na - j as f64 / nb).abs();
        d = d.max(gap);
    }
    Ok(d)
}

/// The Kolmogorov survival function `Q_KS(λ) = 2 Σ_{k≥1} (−1)^{k−1} e^{−2k²λ²}` (the
/// probability that the limiting statistic exceeds `λ`), 1 for `λ ≤ 0` and accurate to
/// 1e-15 absolute (the series converges fast for `λ ≥ 0.3`; below, the Jacobi-transformed
/// series `1 − √(2π)/λ Σ e^{−(2k−1)²π²/(8λ²)}` is used).
///
/// # Errors
/// [`DistanceError::NonFiniteValue`] for NaN.
pub fn kolmogorov_sf(lambda: f64) -> Result<f64, DistanceError> {
    if lambda.is_nan() {
        return Err(DistanceError::NonFiniteValue);
    }
    if lambda <= 0.0 {
        return Ok(1.0);
    }
    if lambda < 0.3 {
        // P(K ≤ λ) = √(2π)/λ Σ_{k≥1} exp(−(2k−1)²π²/(8λ²)), at most 1e-20 here.
        let c = core::f64::consts::PI * core::f64::consts::PI / (8.0 * lambda * lambda);
        let mut cdf = 0.0;
        for k in 1..=5_i32 {
            let odd = f64::from(2 * k - 1);
            cdf += libm::exp(-odd * odd * c);
        }
        return Ok((1.0 - libm::sqrt(2.0 * core::f64::consts::PI) / lambda * cdf).clamp(0.0, 1.0));
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for k in 1..=100_i32 {
        let kf = f64::from(k);
        let term = libm::exp(-2.0 * kf * kf * lambda * lambda);
        sum += sign * term;
        if term < 1e-18 {
            break;
        }
        sign = -sign;
    }
    Ok((2.0 * sum).clamp(0.0, 1.0))
}

/// Asymptotic p-value of a two-sample KS statistic `d` from samples of sizes `n` and `m`
/// (for weighted samples, pass their effective sizes), with Stephens' correction.
///
/// # Errors
/// [`DistanceError::InvalidSize`] for a size that is zero, NaN or infinite;
/// [`DistanceError::NonFiniteValue`] for a `d` outside `[0, 1]` or NaN.
pub fn ks_p_value(d: f64, n: f64, m: f64) -> Result<f64, DistanceError> {
    if !(d.is_finite() && (0.0..=1.0).contains(&d)) {
        return Err(DistanceError::NonFiniteValue);
    }
    if !(n.is_finite() && m.is_finite() && n > 0.0 && m > 0.0) {
        return Err(DistanceError::InvalidSize);
    }
    let ne = libm::sqrt(n * m / (n + m));
    kolmogorov_sf((ne + 0.12 + 0.11 / ne) * d)
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn statistic_on_small_cases_by_hand() {
        // Identical samples: D = 0; disjoint: D = 1.
        assert_eq!(
            ks_statistic(&mut [1.0, 2.0, 3.0], &mut [3.0, 1.0, 2.0]),
            Ok(0.0)
        );
        assert_eq!(ks_statistic(&mut [1.0, 2.0], &mut [5.0, 6.0, 7.0]), Ok(1.0));
        // a = {1, 2, 3, 4}, b = {2.5, 5}: after 2, F_a = 1/2, F_b = 0 → D = 1/2;
        // after 4, F_a = 1, F_b = 1/2 → 1/2.
        assert_eq!(
            ks_statistic(&mut [4.0, 3.0, 2.0, 1.0], &mut [5.0, 2.5]),
            Ok(0.5)
        );
        // Ties across samples move together: a = {1, 1, 2}, b = {1, 2, 2}: after 1,
        // 2/3 − 1/3 = 1/3.
        let d = ks_statistic(&mut [1.0, 1.0, 2.0], &mut [1.0, 2.0, 2.0]).unwrap();
        assert!((d - 1.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(ks_statistic(&mut [], &mut [1.0]), Err(DistanceError::Empty));
        assert_eq!(
            ks_statistic(&mut [f64::NAN], &mut [1.0]),
            Err(DistanceError::NonFiniteValue)
        );
        assert!(kolmogorov_sf(f64::NAN).is_err());
        assert!(ks_p_value(1.5, 10.0, 10.0).is_err());
        assert!(ks_p_value(0.1, 0.0, 10.0).is_err());
        assert!(ks_p_value(0.1, f64::INFINITY, 10.0).is_err());
    }

    #[test]
    fn kolmogorov_tail_matches_a_50_digit_reference() {
        // scripts/ks_reference.py (mpmath, 50 digits); absolute error ≤ 1e-15.
        for (lambda, q) in [
            (0.05, 1.0),
            (0.2, 0.99999999999949495927),
            (0.29, 0.9999963201361131798),
            (0.31, 0.99997850205705978608),
            (0.5, 0.96394524366487509439),
            (0.8, 0.544142411574198149),
            (1.0, 0.2699996716773545212),
            (1.5, 0.022217962616525128721),
            (2.0, 0.00067092525577969534654),
            (3.0, 3.0459959489425256872e-8),
        ] {
            let got = kolmogorov_sf(lambda).unwrap();
            assert!((got - q).abs() <= 1e-15, "Q({lambda}) = {got}, want {q}");
        }
        // The classical critical values (same script): Q⁻¹(0.10, 0.05, 0.01).
        for (lambda, p) in [
            (1.2238478702170823883, 0.10),
            (1.3580986393225506043, 0.05),
            (1.6276236115189503465, 0.01),
        ] {
            let got = kolmogorov_sf(lambda).unwrap();
            assert!((got - p).abs() <= 1e-15, "Q({lambda}) = {got}, want {p}");
        }
        assert_eq!(kolmogorov_sf(0.0), Ok(1.0));
        assert_eq!(kolmogorov_sf(-1.0), Ok(1.0));
    }

    #[test]
    fn p_value_of_equal_and_far_samples() {
        assert_eq!(ks_p_value(0.0, 100.0, 100.0), Ok(1.0));
        assert!(ks_p_value(0.5, 100.0, 100.0).unwrap() < 1e-9);
    }

    #[test]
    fn p_values_are_calibrated_under_the_null() {
        // 400 pairs of uniform samples (n = 60, m = 40) from a fixed splitmix64 stream: the
        // count of p < 0.05 is Binomial(400, 0.05) under a calibrated test (mean 20);
        // [8, 34] holds it with probability 0.9983 (exact binomial tails 6.2e-4 + 1.1e-3).
        let mut state = 0x2026_1125_u64;
        let mut u = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            #[allow(clippy::cast_precision_loss)]
            let x = (z ^ (z >> 31)) as f64 / 18_446_744_073_709_551_616.0;
            x
        };
        let mut rejections = 0;
        for _ in 0..400 {
            let mut a: [f64; 60] = core::array::from_fn(|_| u());
            let mut b: [f64; 40] = core::array::from_fn(|_| u());
            let d = ks_statistic(&mut a, &mut b).unwrap();
            if ks_p_value(d, 60.0, 40.0).unwrap() < 0.05 {
                rejections += 1;
            }
        }
        assert!(
            (8..=34).contains(&rejections),
            "{rejections} of 400 rejected"
        );
    }
}
