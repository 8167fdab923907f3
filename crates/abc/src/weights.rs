//! Importance-weight arithmetic for soft-ABC and SMC-ABC: log-space normalisation (no 0/0),
//! effective sample size, weighted moments, a small Cholesky factorisation and systematic
//! resampling, and (with `alloc`) weighted quantiles. All functions work on caller-owned
//! slices; only the quantiles allocate (one index permutation per call).
//!
//! Points are stored row-major: `points[i * dim .. (i + 1) * dim]` is particle `i`.

use crate::error::AbcError;

/// Normalises log-weights into probabilities: `out[i] = exp(log_w[i] − logsumexp(log_w))`,
/// computed with the maximum shifted out so that no weight under- or overflows to 0/0.
/// Returns the log normaliser `logsumexp(log_w)`. A log-weight of −∞ is a zero weight.
///
/// # Errors
///
/// [`AbcError::Empty`] for no weights, [`AbcError::LengthMismatch`] if `out` differs in
/// length, [`AbcError::NonFiniteValue`] for a NaN or +∞ log-weight, and
/// [`AbcError::ZeroTotalWeight`] if every log-weight is −∞.
///
/// # Examples
///
/// ```
/// use dpinfer_abc::weights::normalize_log_weights;
/// let mut w = [0.0; 3];
/// normalize_log_weights(&[-1000.0, -1000.0, f64::NEG_INFINITY], &mut w).unwrap();
/// assert!((w[0] - 0.5).abs() < 1e-15 && w[2] == 0.0);
/// ```
pub fn normalize_log_weights(log_w: &[f64], out: &mut [f64]) -> Result<f64, AbcError> {
    if log_w.is_empty() {
        return Err(AbcError::Empty { name: "log_w" });
    }
    crate::error::check_len("out", log_w.len(), out.len())?;
    let mut max = f64::NEG_INFINITY;
    for &l in log_w {
        if l.is_nan() || l == f64::INFINITY {
            return Err(AbcError::NonFiniteValue { name: "log_w" });
        }
        max = max.max(l);
    }
    if max == f64::NEG_INFINITY {
        return Err(AbcError::ZeroTotalWeight);
    }
    let mut s = dpinfer_math::NeumaierSum::default();
    for (o, &l) in out.iter_mut().zip(log_w) {
        *o = libm::exp(l - max);
        s.add(*o);
    }
    let total = s.sum(); // ≥ 1 because the maximum contributes exp(0) = 1
    for o in out.iter_mut() {
        *o /= total;
    }
    Ok(max + libm::log(total))
}

/// Kish's effective sample size `(Σw)² / Σw²` of non-negative weights (equal to
/// `1 / Σw²` for normalised weights, the ESS of Algorithm 3 in Xiong, Ju & Zhang).
///
/// # Errors
///
/// [`AbcError::Empty`], [`AbcError::NonFiniteValue`] for a negative or non-finite weight,
/// [`AbcError::ZeroTotalWeight`] if all weights are zero.
pub fn effective_sample_size(w: &[f64]) -> Result<f64, AbcError> {
    if w.is_empty() {
        return Err(AbcError::Empty { name: "w" });
    }
    let (mut s, mut s2) = (
        dpinfer_math::NeumaierSum::default(),
        dpinfer_math::NeumaierSum::default(),
    );
    let max = w.iter().fold(0.0_f64, |m, &x| m.max(x));
    for &x in w {
        if !(x.is_finite() && x >= 0.0) {
            return Err(AbcError::NonFiniteValue { name: "w" });
        }
    }
    if max <= 0.0 {
        return Err(AbcError::ZeroTotalWeight);
    }
    for &x in w {
        let y = x / max; // scale-free: avoids overflow of the squares
        s.add(y);
        s2.add(y * y);
    }
    let (s, s2) = (s.sum(), s2.sum());
    Ok(s * s / s2)
}

fn check_points(points: &[f64], dim: usize, w: &[f64]) -> Result<usize, AbcError> {
    if dim == 0 {
        return Err(AbcError::InvalidCount {
            name: "dim",
            value: 0,
        });
    }
    if w.is_empty() {
        return Err(AbcError::Empty { name: "w" });
    }
    let n = w.len();
    match n.checked_mul(dim) {
        Some(len) if len == points.len() => Ok(n),
        _ => Err(AbcError::LengthMismatch {
            name: "points",
            expected: n.saturating_mul(dim),
            found: points.len(),
        }),
    }
}

/// Weighted mean `μ = Σ w_i θ_i / Σ w_i` of row-major `points` into `mean` (length `dim`).
///
/// # Errors
///
/// [`AbcError::LengthMismatch`]/[`AbcError::Empty`]/[`AbcError::InvalidCount`] for
/// inconsistent shapes, [`AbcError::ZeroTotalWeight`] if the weights sum to zero.
pub fn weighted_mean(
    points: &[f64],
    dim: usize,
    w: &[f64],
    mean: &mut [f64],
) -> Result<(), AbcError> {
    check_points(points, dim, w)?;
    crate::error::check_len("mean", dim, mean.len())?;
    let total: f64 = w.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(AbcError::ZeroTotalWeight);
    }
    mean.fill(0.0);
    for (p, &wi) in points.chunks_exact(dim).zip(w) {
        for (m, &x) in mean.iter_mut().zip(p) {
            *m += wi * x;
        }
    }
    for m in mean.iter_mut() {
        *m /= total;
    }
    Ok(())
}

/// Weighted covariance `Σ w_i (θ_i − μ)(θ_i − μ)ᵀ / Σ w_i` (the plug-in estimate, no bias
/// correction) into `cov` (row-major `dim × dim`), given the weighted mean.
///
/// Beaumont et al. (2009) use **twice** this matrix as the covariance of the Gaussian
/// perturbation kernel; the `smc` module applies the factor.
///
/// # Errors
///
/// As [`weighted_mean`], plus [`AbcError::LengthMismatch`] for `mean`/`cov` of wrong length.
pub fn weighted_covariance(
    points: &[f64],
    dim: usize,
    w: &[f64],
    mean: &[f64],
    cov: &mut [f64],
) -> Result<(), AbcError> {
    check_points(points, dim, w)?;
    crate::error::check_len("mean", dim, mean.len())?;
    crate::error::check_len("cov", dim * dim, cov.len())?;
    let total: f64 = w.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(AbcError::ZeroTotalWeight);
    }
    cov.fill(0.0);
    for (p, &wi) in points.chunks_exact(dim).zip(w) {
        for r in 0..dim {
            let dr = p[r] - mean[r];
            for c in 0..=r {
                cov[r * dim + c] += wi * dr * (p[c] - mean[c]);
            }
        }
    }
    for r in 0..dim {
        for c in 0..=r {
            let v = cov[r * dim + c] / total;
            cov[r * dim + c] = v;
            cov[c * dim + r] = v;
        }
    }
    Ok(())
}

/// In-place lower Cholesky factor of a symmetric positive-definite row-major `dim × dim`
/// matrix (the upper triangle is zeroed). Returns `ln det(A) / 2 = Σ ln L_ii`.
///
/// # Errors
///
/// [`AbcError::LengthMismatch`] for a wrong length, [`AbcError::DegenerateCovariance`] if the
/// matrix is not (numerically) positive definite or holds non-finite entries.
pub fn cholesky_in_place(a: &mut [f64], dim: usize) -> Result<f64, AbcError> {
    if a.len() != dim * dim || dim == 0 {
        return Err(AbcError::LengthMismatch {
            name: "matrix",
            expected: dim * dim,
            found: a.len(),
        });
    }
    let mut half_log_det = 0.0;
    for j in 0..dim {
        let mut d = a[j * dim + j];
        for k in 0..j {
            d -= a[j * dim + k] * a[j * dim + k];
        }
        if !(d.is_finite() && d > 0.0) {
            return Err(AbcError::DegenerateCovariance);
        }
        let l = libm::sqrt(d);
        a[j * dim + j] = l;
        half_log_det += libm::log(l);
        for i in (j + 1)..dim {
            let mut s = a[i * dim + j];
            for k in 0..j {
                s -= a[i * dim + k] * a[j * dim + k];
            }
            a[i * dim + j] = s / l;
        }
        for c in (j + 1)..dim {
            a[j * dim + c] = 0.0;
        }
    }
    Ok(half_log_det)
}

/// `‖L⁻¹ x‖²` for a lower-triangular row-major `L` (forward substitution; `scratch` receives
/// `L⁻¹ x`). With `L` from [`cholesky_in_place`] of `Σ` this is `xᵀ Σ⁻¹ x`. All slices must
/// have at least the lengths `dim × dim`, `dim`, `dim`; shorter slices give NaN (never a panic).
#[must_use]
pub fn mahalanobis_sq(l: &[f64], dim: usize, x: &[f64], scratch: &mut [f64]) -> f64 {
    if dim.checked_mul(dim).is_none_or(|d2| l.len() < d2) || x.len() < dim || scratch.len() < dim {
        return f64::NAN;
    }
    let mut q = 0.0;
    for i in 0..dim {
        let mut s = x[i];
        for k in 0..i {
            s -= l[i * dim + k] * scratch[k];
        }
        let z = s / l[i * dim + i];
        scratch[i] = z;
        q += z * z;
    }
    q
}

/// Systematic resampling: with one uniform `u ∈ [0, 1)`, writes into `out` the indices
/// `i` such that the points `(k + u)/M`, `k = 0..M`, fall in the `i`-th cumulative-weight
/// interval. Each index `i` appears `⌊M w_i⌋` or `⌈M w_i⌉` times (low-variance resampling).
/// The workspace's one implementation, [`dpinfer_math::systematic_resample`].
///
/// # Errors
///
/// [`AbcError::Empty`] for no weights or no output slots,
/// [`AbcError::InvalidParameter`] for `u ∉ [0, 1)`, [`AbcError::NonFiniteValue`] for a
/// negative or non-finite weight and [`AbcError::ZeroTotalWeight`] if they sum to zero.
pub fn systematic_resample(w: &[f64], u: f64, out: &mut [usize]) -> Result<(), AbcError> {
    use dpinfer_math::ResampleError as E;
    dpinfer_math::systematic_resample(w, u, out).map_err(|e| match e {
        E::EmptyWeights => AbcError::Empty { name: "w" },
        E::EmptyOutput => AbcError::Empty { name: "out" },
        E::Offset(value) => AbcError::InvalidParameter { name: "u", value },
        E::InvalidWeight(_) => AbcError::NonFiniteValue { name: "w" },
        E::Total(_) => AbcError::ZeroTotalWeight,
        // `ResampleError` is non-exhaustive: a future refusal is still a refused input.
        _ => AbcError::InvalidParameter {
            name: "w",
            value: f64::NAN,
        },
    })
}

/// Weighted quantiles of `values` at each of `levels` into `out`: for a level α the smallest
/// value `v` (in [`f64::total_cmp`] order, so `+∞` and NaN sort last) with weighted CDF
/// `Σ_{x_i ≤ v} w_i ≥ α Σ w_i` — the inverse of the weighted empirical CDF (Hyndman & Fan
/// 1996 type 1, the lower value at ties; with equal weights the order statistic
/// `x_(⌈α n⌉)`). Sorts once for all levels.
///
/// # Errors
///
/// [`AbcError::Empty`] for no values, [`AbcError::LengthMismatch`] when `weights` or `out`
/// differ in length from `values` / `levels`, [`AbcError::NonFiniteValue`] for a negative or
/// non-finite weight, [`AbcError::ZeroTotalWeight`] when the weights sum to zero,
/// [`AbcError::InvalidParameter`] for a level outside `[0, 1]`.
///
/// # Examples
///
/// ```
/// use dpinfer_abc::weights::weighted_quantiles;
/// let mut q = [0.0; 3];
/// weighted_quantiles(&[3.0, 1.0, 2.0], &[1.0, 1.0, 2.0], &[0.25, 0.5, 1.0], &mut q).unwrap();
/// assert_eq!(q, [1.0, 2.0, 3.0]);
/// ```
#[cfg(feature = "alloc")]
pub fn weighted_quantiles(
    values: &[f64],
    weights: &[f64],
    levels: &[f64],
    out: &mut [f64],
) -> Result<(), AbcError> {
    if values.is_empty() {
        return Err(AbcError::Empty { name: "values" });
    }
    for (name, expected, found) in [
        ("weights", values.len(), weights.len()),
        ("out", levels.len(), out.len()),
    ] {
        if expected != found {
            return Err(AbcError::LengthMismatch {
                name,
                expected,
                found,
            });
        }
    }
    if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
        return Err(AbcError::NonFiniteValue { name: "weights" });
    }
    if let Some(&l) = levels.iter().find(|l| !(0.0..=1.0).contains(*l)) {
        return Err(AbcError::InvalidParameter {
            name: "level",
            value: l,
        });
    }
    let total: f64 = weights.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(AbcError::ZeroTotalWeight);
    }
    let mut idx: alloc::vec::Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    for (o, &alpha) in out.iter_mut().zip(levels) {
        let mut v = values[idx[idx.len() - 1]];
        let mut c = 0.0;
        for &i in &idx {
            c += weights[i];
            if c >= alpha * total {
                v = values[i];
                break;
            }
        }
        *o = v;
    }
    Ok(())
}

/// [`weighted_quantiles`] at one level.
///
/// # Errors
///
/// As [`weighted_quantiles`].
#[cfg(feature = "alloc")]
pub fn weighted_quantile(values: &[f64], weights: &[f64], alpha: f64) -> Result<f64, AbcError> {
    let mut q = [0.0];
    weighted_quantiles(values, weights, &[alpha], &mut q)?;
    Ok(q[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "alloc")]
    fn weighted_quantiles_invert_the_weighted_ecdf() {
        // Equal weights: the order statistic x_(⌈α n⌉) of 1..=101.
        let v: alloc::vec::Vec<f64> = (1..=101).rev().map(f64::from).collect();
        let w = [1.0; 101];
        let mut q = [0.0; 5];
        weighted_quantiles(&v, &w, &[0.025, 0.25, 0.5, 0.75, 0.975], &mut q).unwrap();
        assert_eq!(q, [3.0, 26.0, 51.0, 76.0, 99.0]);
        // Weights move the median; level 0 is the minimum, 1 the maximum.
        assert_eq!(
            weighted_quantile(&[0.0, 1.0], &[1.0, 3.0], 0.5).unwrap(),
            1.0
        );
        assert_eq!(
            weighted_quantile(&[0.0, 1.0], &[3.0, 1.0], 0.5).unwrap(),
            0.0
        );
        assert_eq!(
            weighted_quantile(&[2.0, 1.0], &[1.0, 1.0], 0.0).unwrap(),
            1.0
        );
        assert_eq!(
            weighted_quantile(&[2.0, 1.0], &[1.0, 1.0], 1.0).unwrap(),
            2.0
        );
        // +∞ sorts last and is returned only when the level needs it.
        let inf = [f64::INFINITY, 0.5];
        assert_eq!(weighted_quantile(&inf, &[1.0, 1.0], 0.5).unwrap(), 0.5);
        assert_eq!(
            weighted_quantile(&inf, &[1.0, 1.0], 0.9).unwrap(),
            f64::INFINITY
        );
        // Invalid input is an error, never NaN.
        assert!(matches!(
            weighted_quantile(&[], &[], 0.5),
            Err(AbcError::Empty { .. })
        ));
        assert!(matches!(
            weighted_quantile(&[1.0], &[1.0, 2.0], 0.5),
            Err(AbcError::LengthMismatch { .. })
        ));
        for w in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                weighted_quantile(&[1.0], &[w], 0.5),
                Err(AbcError::NonFiniteValue { .. })
            ));
        }
        assert_eq!(
            weighted_quantile(&[1.0], &[0.0], 0.5),
            Err(AbcError::ZeroTotalWeight)
        );
        for l in [-0.1, 1.5, f64::NAN] {
            assert!(matches!(
                weighted_quantile(&[1.0], &[1.0], l),
                Err(AbcError::InvalidParameter { .. })
            ));
        }
        assert!(weighted_quantiles(&[1.0], &[1.0], &[0.5], &mut []).is_err());
    }

    #[test]
    fn log_normalisation_is_stable() {
        let mut w = [0.0; 4];
        let l = normalize_log_weights(
            &[-1e308, 800.0, 800.0 + libm::log(3.0), f64::NEG_INFINITY],
            &mut w,
        )
        .unwrap();
        // 800 + ln 3 is rounded to the ulp of 800 (1.1e-13), hence 1e-12.
        assert!((w[1] - 0.25).abs() < 1e-12 && (w[2] - 0.75).abs() < 1e-12);
        assert_eq!(w[0], 0.0);
        assert!((l - (800.0 + libm::log(4.0))).abs() < 1e-12);
        assert_eq!(
            normalize_log_weights(&[f64::NEG_INFINITY; 2], &mut w[..2]),
            Err(AbcError::ZeroTotalWeight)
        );
        assert!(normalize_log_weights(&[f64::NAN], &mut w[..1]).is_err());
        assert!(normalize_log_weights(&[1.0], &mut w[..2]).is_err());
    }

    #[test]
    fn ess_known_values() {
        assert!((effective_sample_size(&[0.25; 4]).unwrap() - 4.0).abs() < 1e-14);
        assert!((effective_sample_size(&[1.0, 0.0, 0.0]).unwrap() - 1.0).abs() < 1e-14);
        // (1+2+3)²/(1+4+9) = 36/14
        assert!(
            (effective_sample_size(&[1e300, 2e300, 3e300]).unwrap() - 36.0 / 14.0).abs() < 1e-13
        );
        assert!(effective_sample_size(&[0.0, 0.0]).is_err());
        assert!(effective_sample_size(&[-1.0, 2.0]).is_err());
    }

    #[test]
    fn weighted_moments_match_hand_computation() {
        // points (0,0), (2,0), (0,4) with weights 1,1,2: mean (0.5, 2),
        // cov_xx = (1·0.25 + 1·2.25 + 2·0.25)/4 = 0.75, cov_yy = (4+4+2·4)/4 = 4,
        // cov_xy = (1·(−0.5)(−2) + 1·(1.5)(−2) + 2·(−0.5)(2))/4 = (1 − 3 − 2)/4 = −1.
        let pts = [0.0, 0.0, 2.0, 0.0, 0.0, 4.0];
        let w = [1.0, 1.0, 2.0];
        let mut m = [0.0; 2];
        weighted_mean(&pts, 2, &w, &mut m).unwrap();
        assert_eq!(m, [0.5, 2.0]);
        let mut c = [0.0; 4];
        weighted_covariance(&pts, 2, &w, &m, &mut c).unwrap();
        for (a, b) in c.iter().zip([0.75, -1.0, -1.0, 4.0]) {
            assert!((a - b).abs() < 1e-14);
        }
        let mut l = c;
        let hld = cholesky_in_place(&mut l, 2).unwrap();
        // det = 0.75·4 − 1 = 2
        assert!((2.0 * hld - libm::log(2.0)).abs() < 1e-14);
        // L Lᵀ = C
        assert!((l[0] * l[0] - 0.75).abs() < 1e-14);
        assert!((l[2] * l[0] + 1.0).abs() < 1e-14);
        assert!((l[2] * l[2] + l[3] * l[3] - 4.0).abs() < 1e-14);
        assert!(cholesky_in_place(&mut [1.0, 2.0, 2.0, 1.0], 2).is_err());
        let mut s = [0.0; 2];
        let q = mahalanobis_sq(&l, 2, &[1.0, 1.0], &mut s);
        // xᵀ C⁻¹ x with C⁻¹ = [[4,1],[1,0.75]]/2 → (4+2+0.75)/2 = 3.375
        assert!((q - 3.375).abs() < 1e-13);
    }

    #[test]
    fn systematic_resampling_counts() {
        let w = [0.1, 0.0, 0.6, 0.3];
        let mut out = [0usize; 10];
        for u in [0.05, 0.3, 0.999] {
            systematic_resample(&w, u, &mut out).unwrap();
            let mut counts = [0usize; 4];
            for &i in &out {
                counts[i] += 1;
            }
            assert_eq!(counts, [1, 0, 6, 3], "u={u}");
        }
        assert!(systematic_resample(&w, 1.0, &mut out).is_err());
        assert!(systematic_resample(&[0.0], 0.5, &mut out).is_err());
    }
}
