//! MMD estimators on row-major data: biased V-statistic (the papers' estimator), unbiased
//! U-statistic, and Gretton's linear-time statistic.
//!
//! Notation (Gretton et al. 2012, eqs. 3–5; Park, Vinaroz & Jitkrittum 2021, §2.1):
//! `X = {x_i}_{i=1}^n`, `Y = {y_j}_{j=1}^m`,
//! `MMD²_b = (1/n²) Σ_{i,j} k(x_i,x_j) + (1/m²) Σ_{i,j} k(y_i,y_j) − (2/(nm)) Σ_{i,j} k(x_i,y_j)`.

use dpinfer_math::NeumaierSum;

use crate::rows::all_finite;
use crate::simd::{Job, dispatch};
use crate::{DistanceError, Kernel, Rows};

/// Gram sums of one set: `(Σ_{i,j} k(x_i, x_j), Σ_i k(x_i, x_i))`, using only the upper
/// triangle (`Σ_{i≠j} = 2 Σ_{i<j}`). Row sums are added with Neumaier compensation in row
/// order, so the result does not depend on how rows are scheduled. Runs at the dispatched
/// [`crate::simd`] level (same bits on every level).
pub(crate) fn self_sums<K: Kernel + ?Sized>(k: &K, x: Rows<'_>) -> (f64, f64) {
    struct J<'a, 'k, K: ?Sized>(&'k K, Rows<'a>);
    impl<K: Kernel + ?Sized> Job for J<'_, '_, K> {
        type Output = (f64, f64);
        #[inline(always)]
        fn run(self) -> (f64, f64) {
            self_sums_here(self.0, self.1)
        }
    }
    dispatch(J(k, x))
}

/// `Σ_{i,j} k(x_i, y_j)` at the dispatched [`crate::simd`] level.
pub(crate) fn cross_sum<K: Kernel + ?Sized>(k: &K, x: Rows<'_>, y: Rows<'_>) -> f64 {
    struct J<'a, 'b, 'k, K: ?Sized>(&'k K, Rows<'a>, Rows<'b>);
    impl<K: Kernel + ?Sized> Job for J<'_, '_, '_, K> {
        type Output = f64;
        #[inline(always)]
        fn run(self) -> f64 {
            cross_sum_here(self.0, self.1, self.2)
        }
    }
    dispatch(J(k, x, y))
}

/// [`self_sums`] compiled into the caller (no dispatch).
#[inline(always)]
fn self_sums_here<K: Kernel + ?Sized>(k: &K, x: Rows<'_>) -> (f64, f64) {
    let mut diag = NeumaierSum::new();
    if let Some(off) = k.upper_gram_sum(x) {
        for xi in x.iter() {
            diag.add(k.eval(xi, xi));
        }
        let diag = diag.sum();
        return (diag + 2.0 * off, diag);
    }
    let d = x.dim();
    let data = x.as_slice();
    let finite = all_finite(data);
    let mut off = NeumaierSum::new();
    for (i, xi) in x.iter().enumerate() {
        diag.add(k.eval(xi, xi));
        let rest = data.get((i + 1) * d..).unwrap_or(&[]);
        if !rest.is_empty() {
            off.add(if finite {
                k.row_sum_finite(xi, rest)
            } else {
                k.row_sum(xi, rest)
            });
        }
    }
    let diag = diag.sum();
    (diag + 2.0 * off.sum(), diag)
}

/// [`cross_sum`] compiled into the caller (no dispatch).
#[inline(always)]
fn cross_sum_here<K: Kernel + ?Sized>(k: &K, x: Rows<'_>, y: Rows<'_>) -> f64 {
    if let Some(v) = k.cross_gram_sum(x, y) {
        return v;
    }
    let ys = y.as_slice();
    let finite = all_finite(x.as_slice()) && all_finite(ys);
    let mut s = NeumaierSum::new();
    for xi in x.iter() {
        s.add(if finite {
            k.row_sum_finite(xi, ys)
        } else {
            k.row_sum(xi, ys)
        });
    }
    s.sum()
}

/// One kernel row sum `k.row_sum(x, ys)` as a dispatchable job (the parallel workers').
#[cfg(feature = "parallel")]
pub(crate) struct RowSum<'k, 'a, 'b, K: ?Sized>(
    pub(crate) &'k K,
    pub(crate) &'a [f64],
    pub(crate) &'b [f64],
);

#[cfg(feature = "parallel")]
impl<K: Kernel + ?Sized> Job for RowSum<'_, '_, '_, K> {
    type Output = f64;
    #[inline(always)]
    fn run(self) -> f64 {
        self.0.row_sum(self.1, self.2)
    }
}

#[allow(clippy::cast_precision_loss)]
#[inline]
pub(crate) fn as_f64(n: usize) -> f64 {
    n as f64
}

fn finite(v: f64) -> Result<f64, DistanceError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(DistanceError::NonFiniteKernel)
    }
}

/// Biased (V-statistic) squared MMD between `x` and `y`, the estimator of Park, Vinaroz &
/// Jitkrittum (2021, §2.1, after eq. 5) and Gretton et al. (2012, eq. 5). Rounding can make
/// the exact-arithmetic non-negative value slightly negative; the result is clamped at 0.
///
/// For repeated comparisons against the same observed set use [`crate::MmdReference`], which
/// caches the observed Gram sum and also carries the sensitivity.
///
/// # Errors
/// [`DistanceError::DimensionMismatch`] if the row dimensions differ;
/// [`DistanceError::NonFiniteKernel`] if a caller-defined kernel returned a non-finite value
/// (never for this crate's kernels).
///
/// ```
/// use dpinfer_distances::{mmd2_biased, Gaussian, Rows};
/// let k = Gaussian::new(1.0)?;
/// // Point masses at 0 and 1: MMD² = 2 − 2 exp(−1/2).
/// let x = Rows::one_dim(&[0.0, 0.0, 0.0])?;
/// let y = Rows::one_dim(&[1.0, 1.0])?;
/// assert!((mmd2_biased(&k, x, y)? - (2.0 - 2.0 * (-0.5f64).exp())).abs() < 1e-14);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
pub fn mmd2_biased<K: Kernel + ?Sized>(
    k: &K,
    x: Rows<'_>,
    y: Rows<'_>,
) -> Result<f64, DistanceError> {
    x.same_dim(&y)?;
    let (n, m) = (as_f64(x.rows()), as_f64(y.rows()));
    let (kxx, _) = self_sums(k, x);
    let (kyy, _) = self_sums(k, y);
    let kxy = cross_sum(k, x, y);
    let v = finite(kxx / (n * n) + kyy / (m * m) - 2.0 * (kxy / (n * m)))?;
    Ok(v.max(0.0))
}

/// Biased MMD, `√(MMD²_b)`: the distance `ρ` of ABCDP (Park, Vinaroz & Jitkrittum 2021,
/// Lemma 1 is stated for this quantity).
///
/// # Errors
/// As [`mmd2_biased`].
pub fn mmd_biased<K: Kernel + ?Sized>(
    k: &K,
    x: Rows<'_>,
    y: Rows<'_>,
) -> Result<f64, DistanceError> {
    Ok(libm::sqrt(mmd2_biased(k, x, y)?))
}

/// Unbiased (U-statistic) squared MMD (Gretton et al. 2012, eq. 3):
/// `(1/(n(n−1))) Σ_{i≠j} k(x_i,x_j) + (1/(m(m−1))) Σ_{i≠j} k(y_i,y_j) − (2/(nm)) Σ k(x_i,y_j)`.
///
/// Returned raw (it can be negative; its expectation is the population MMD²). Its
/// sensitivity differs from the biased estimator's: see
/// [`crate::sensitivity::mmd2_unbiased`].
///
/// # Errors
/// [`DistanceError::TooFewRows`] if either set has fewer than 2 rows; otherwise as
/// [`mmd2_biased`].
pub fn mmd2_unbiased<K: Kernel + ?Sized>(
    k: &K,
    x: Rows<'_>,
    y: Rows<'_>,
) -> Result<f64, DistanceError> {
    x.same_dim(&y)?;
    for r in [x.rows(), y.rows()] {
        if r < 2 {
            return Err(DistanceError::TooFewRows {
                needed: 2,
                found: r,
            });
        }
    }
    let (n, m) = (as_f64(x.rows()), as_f64(y.rows()));
    let (kxx, dx) = self_sums(k, x);
    let (kyy, dy) = self_sums(k, y);
    let kxy = cross_sum(k, x, y);
    finite((kxx - dx) / (n * (n - 1.0)) + (kyy - dy) / (m * (m - 1.0)) - 2.0 * (kxy / (n * m)))
}

/// `√(max(0, MMD²_u))`: the unbiased estimate clamped at 0 before the square root.
///
/// # Errors
/// As [`mmd2_unbiased`].
pub fn mmd_unbiased<K: Kernel + ?Sized>(
    k: &K,
    x: Rows<'_>,
    y: Rows<'_>,
) -> Result<f64, DistanceError> {
    Ok(libm::sqrt(mmd2_unbiased(k, x, y)?.max(0.0)))
}

/// Gretton et al.'s linear-time statistic (2012, §6, Lemma 14):
/// `MMD²_l = (1/⌊n/2⌋) Σ_{i=1}^{⌊n/2⌋} h(z_{2i−1}, z_{2i})` with
/// `h(z, z') = k(x,x') + k(y,y') − k(x,y') − k(x',y)`, `z = (x, y)`. Unbiased, cost `O(n)`;
/// returned raw (can be negative). With `n` odd the last pair is dropped.
///
/// # Errors
/// [`DistanceError::RowCountMismatch`] unless both sets have the same number of rows;
/// [`DistanceError::TooFewRows`] with fewer than 2 rows; otherwise as [`mmd2_biased`].
pub fn mmd2_linear<K: Kernel + ?Sized>(
    k: &K,
    x: Rows<'_>,
    y: Rows<'_>,
) -> Result<f64, DistanceError> {
    x.same_dim(&y)?;
    if x.rows() != y.rows() {
        return Err(DistanceError::RowCountMismatch {
            left: x.rows(),
            right: y.rows(),
        });
    }
    if x.rows() < 2 {
        return Err(DistanceError::TooFewRows {
            needed: 2,
            found: x.rows(),
        });
    }
    let d = x.dim();
    let pairs = x.rows() / 2;
    let mut s = NeumaierSum::new();
    for (xp, yp) in x
        .as_slice()
        .chunks_exact(2 * d)
        .zip(y.as_slice().chunks_exact(2 * d))
    {
        let (x1, x2) = xp.split_at(d);
        let (y1, y2) = yp.split_at(d);
        s.add(k.eval(x1, x2) + k.eval(y1, y2) - k.eval(x1, y2) - k.eval(x2, y1));
    }
    finite(s.sum() / as_f64(pairs))
}

/// Row sums `f(i)` for `i < n` computed on the current rayon thread pool (work-stealing, so
/// the triangular self-sum balances), returned in row order, so any reduction over them in
/// order is independent of the thread count.
#[cfg(feature = "parallel")]
pub(crate) fn parallel_rows<F: Fn(usize) -> f64 + Sync + Send>(
    n: usize,
    f: F,
) -> alloc::vec::Vec<f64> {
    use rayon::prelude::*;
    (0..n).into_par_iter().with_min_len(8).map(f).collect()
}
