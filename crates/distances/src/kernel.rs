//! Kernels: the [`Kernel`] trait, the sealed [`BoundedKernel`] trait that carries `B_k`, and
//! the Gaussian (RBF), Laplace and Matérn-3/2 kernels.

use crate::gram;
use crate::rows::sanitize;
use crate::version::{Transcendentals, V1, V2, V3, kernel_version_api};
use crate::{DistanceError, KernelVersion, Rows};

/// `exp(x)` for `x ≤ 0` by `version`'s function (one value; the row sums match the version
/// once, outside their loops).
#[inline(always)]
fn exp_nonpos(version: KernelVersion, x: f64) -> f64 {
    match version {
        KernelVersion::V1 => V1::exp_nonpos(x),
        KernelVersion::V2 => V2::exp_nonpos(x),
        KernelVersion::V3 => V3::exp_nonpos(x),
    }
}

/// A positive-definite kernel `k(x, y)` on rows of `f64`.
///
/// Any kernel may be used with the plain estimators ([`crate::mmd2_biased`], …). Only kernels
/// that also implement [`BoundedKernel`] can be used where a sensitivity is needed
/// ([`crate::MmdReference`]); that trait is sealed, so an unbounded kernel cannot claim a bound.
///
/// ```compile_fail
/// // A caller-defined, unbounded kernel works with the plain estimators but cannot build
/// // a sensitivity-carrying reference object:
/// use dpinfer_distances::{Kernel, MmdReference, Rows};
/// struct Linear;
/// impl Kernel for Linear {
///     fn eval(&self, x: &[f64], y: &[f64]) -> f64 { x.iter().zip(y).map(|(a, b)| a * b).sum() }
/// }
/// let obs = Rows::one_dim(&[1.0, 2.0]).unwrap();
/// let _ = MmdReference::new(Linear, obs); // error: `Linear: BoundedKernel` is not satisfied
/// ```
pub trait Kernel {
    /// `k(x, y)`. `x` and `y` have the same length (the row dimension) when called by this
    /// crate.
    fn eval(&self, x: &[f64], y: &[f64]) -> f64;

    /// `Σ_r k(x, y_r)` over the rows of the row-major buffer `ys` (row length `x.len()`).
    /// Kernels override this with a vectorisable loop; the default calls [`Kernel::eval`].
    fn row_sum(&self, x: &[f64], ys: &[f64]) -> f64 {
        let mut s = 0.0;
        for y in ys.chunks_exact(x.len().max(1)) {
            s += self.eval(x, y);
        }
        s
    }

    /// [`Kernel::row_sum`] for a caller that has checked that every value of `x` and `ys` is
    /// finite, so [`crate::sanitize`] (the identity on finite values) may be skipped: the
    /// same value as `row_sum` on such inputs. The default calls `row_sum`; the crate's
    /// kernels run their loop without the sanitising map.
    #[doc(hidden)]
    fn row_sum_finite(&self, x: &[f64], ys: &[f64]) -> f64 {
        self.row_sum(x, ys)
    }

    /// `Σ_{i<j} k(x_i, x_j)` as the Gram sums add it (the row sums `row_sum(x_i, x_{i+1..})`,
    /// Neumaier-added in row order), if the kernel has a faster loop giving the same bits for
    /// these rows; `None` otherwise (the default). The crate's kernels serve `2 ≤ d ≤ 16`.
    #[doc(hidden)]
    fn upper_gram_sum(&self, _x: Rows<'_>) -> Option<f64> {
        None
    }

    /// `Σ_{i,j} k(x_i, y_j)` as the Gram sums add it (the row sums `row_sum(x_i, y)`,
    /// Neumaier-added in row order), if the kernel has a faster loop giving the same bits;
    /// `None` otherwise (the default).
    #[doc(hidden)]
    fn cross_gram_sum(&self, _x: Rows<'_>, _y: Rows<'_>) -> Option<f64> {
        None
    }
}

/// The crate's kernels' [`Kernel::upper_gram_sum`] and [`Kernel::cross_gram_sum`]: the
/// coordinate-major tiled loop of `gram.rs` with the kernel's function of the squared
/// distance (`self.gram_with::<T, UPPER>`), the version matched once per call.
macro_rules! tiled_gram_sums {
    () => {
        #[inline(always)]
        fn upper_gram_sum(&self, x: Rows<'_>) -> Option<f64> {
            let (s, d) = (x.as_slice(), x.dim());
            match self.version {
                KernelVersion::V1 => self.gram_with::<V1, true>(s, s, d),
                KernelVersion::V2 => self.gram_with::<V2, true>(s, s, d),
                KernelVersion::V3 => self.gram_with::<V3, true>(s, s, d),
            }
        }
        #[inline(always)]
        fn cross_gram_sum(&self, x: Rows<'_>, y: Rows<'_>) -> Option<f64> {
            let (xs, ys, d) = (x.as_slice(), y.as_slice(), x.dim());
            match self.version {
                KernelVersion::V1 => self.gram_with::<V1, false>(xs, ys, d),
                KernelVersion::V2 => self.gram_with::<V2, false>(xs, ys, d),
                KernelVersion::V3 => self.gram_with::<V3, false>(xs, ys, d),
            }
        }
    };
}

pub(crate) mod sealed {
    /// Seals [`super::BoundedKernel`].
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// A kernel with `sup_{x,y} |k(x, y)| ≤ B_k < ∞`, the hypothesis of Lemma 1 (Park, Vinaroz
/// & Jitkrittum, *Entropy* 2021) and Lemma 3.1 (Park & Jitkrittum, Gaussian/soft ABCDP).
///
/// The trait is sealed: only this crate's kernels, whose bound is proved (and enforced by
/// clamping the computed value into `[0, B_k]`), implement it. Implementing it is a privacy
/// claim, so it is not open to callers.
pub trait BoundedKernel: Kernel + sealed::Sealed {
    /// `B_k`, an upper bound on `|k(x, y)|` over all inputs.
    fn bound(&self) -> f64;
}

/// [`sanitize`] when `S`, else the identity (for inputs known to be finite, where `sanitize`
/// is the identity).
#[inline(always)]
fn san<const S: bool>(v: f64) -> f64 {
    if S { sanitize(v) } else { v }
}

#[inline(always)]
fn sq_dist(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(y) {
        let d = sanitize(*a) - sanitize(*b);
        s += d * d;
    }
    s
}

/// Sums `f(‖x − y_r‖²)` over rows with four independent accumulators (vectorises; the
/// summation order is fixed, so results are reproducible). `S = false` skips the sanitising
/// of `ys` (callers guarantee finite values; same bits).
#[inline(always)]
fn radial_row_sum<const S: bool>(x: &[f64], ys: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let dim = x.len();
    let mut acc = [0.0f64; 4];
    if dim == 1 {
        // Chunks of 8: `f` on eight distances at once (one AVX-512 vector, two AVX2 or four
        // SSE2 vectors), then the first four and the last four added into the four lanes in
        // that order — the same order as adding element `i` into lane `i mod 4` one by one.
        const C: usize = 8;
        let xi = sanitize(x[0]);
        let mut chunks = ys.chunks_exact(C);
        for q in &mut chunks {
            let mut v = [0.0f64; C];
            for (vi, &y) in v.iter_mut().zip(q) {
                let d = xi - san::<S>(y);
                *vi = f(d * d);
            }
            for (a, vi) in acc.iter_mut().zip(&v[..4]) {
                *a += *vi;
            }
            for (a, vi) in acc.iter_mut().zip(&v[4..]) {
                *a += *vi;
            }
        }
        for (i, &y) in chunks.remainder().iter().enumerate() {
            let d = xi - san::<S>(y);
            acc[i & 3] += f(d * d);
        }
    } else if dim <= 8 {
        match dim {
            2 => fixed_dim::<2, S>(x, ys, &f, &mut acc),
            3 => fixed_dim::<3, S>(x, ys, &f, &mut acc),
            4 => fixed_dim::<4, S>(x, ys, &f, &mut acc),
            5 => fixed_dim::<5, S>(x, ys, &f, &mut acc),
            6 => fixed_dim::<6, S>(x, ys, &f, &mut acc),
            7 => fixed_dim::<7, S>(x, ys, &f, &mut acc),
            _ => fixed_dim::<8, S>(x, ys, &f, &mut acc),
        }
    } else {
        const B: usize = 32;
        let mut t = [0.0f64; B];
        let mut blocks = ys.chunks_exact(B * dim);
        for blk in &mut blocks {
            for (ti, y) in t.iter_mut().zip(blk.chunks_exact(dim)) {
                *ti = sq_dist(x, y);
            }
            for ti in &mut t {
                *ti = f(*ti);
            }
            for q in t.chunks_exact(4) {
                acc[0] += q[0];
                acc[1] += q[1];
                acc[2] += q[2];
                acc[3] += q[3];
            }
        }
        for (i, y) in blocks.remainder().chunks_exact(dim).enumerate() {
            acc[i & 3] += f(sq_dist(x, y));
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// The loop of [`radial_row_sum`] for a compile-time dimension `D` (2..=8), in chunks of 8
/// rows: the chunk's `8·D` coordinates are differenced against `x` repeated 8 times and
/// squared as one contiguous vector, each row's squares are summed in coordinate order
/// (from 0, as the scalar `Σ_k (x_k − y_k)²`), `f` runs on the 8 row distances, and the first
/// four then the last four are added into the four lanes — row `i` into lane `i mod 4`, in
/// row order, as the generic path does.
#[inline(always)]
fn fixed_dim<const D: usize, const S: bool>(
    x: &[f64],
    ys: &[f64],
    f: &impl Fn(f64) -> f64,
    acc: &mut [f64; 4],
) {
    const R: usize = 8;
    let mut xs = [0.0f64; D];
    for (a, b) in xs.iter_mut().zip(x) {
        *a = sanitize(*b);
    }
    let xpat = [xs; R];
    let sq = |y: &[f64]| {
        let mut s = 0.0;
        for (a, b) in xs.iter().zip(y) {
            let d = a - san::<S>(*b);
            s += d * d;
        }
        s
    };
    let mut chunks = ys.chunks_exact(R * D);
    for blk in &mut chunks {
        let mut d2 = [[0.0f64; D]; R];
        for ((o, a), b) in d2
            .as_flattened_mut()
            .iter_mut()
            .zip(xpat.as_flattened())
            .zip(blk)
        {
            let d = a - san::<S>(*b);
            *o = d * d;
        }
        let mut t = [0.0f64; R];
        for (ti, row) in t.iter_mut().zip(&d2) {
            let mut s = 0.0;
            for v in row {
                s += v;
            }
            *ti = s;
        }
        for ti in &mut t {
            *ti = f(*ti);
        }
        for (a, v) in acc.iter_mut().zip(&t[..4]) {
            *a += *v;
        }
        for (a, v) in acc.iter_mut().zip(&t[4..]) {
            *a += *v;
        }
    }
    for (i, y) in chunks.remainder().chunks_exact(D).enumerate() {
        acc[i & 3] += f(sq(y));
    }
}

fn inv_sq_bandwidth_half(bandwidth: f64) -> Result<f64, DistanceError> {
    if !(bandwidth.is_finite() && bandwidth > 0.0) {
        return Err(DistanceError::InvalidBandwidth);
    }
    let two_l2 = 2.0 * bandwidth * bandwidth;
    let c = 1.0 / two_l2;
    if two_l2.is_finite() && two_l2 > 0.0 && c.is_finite() && c > 0.0 {
        Ok(c)
    } else {
        Err(DistanceError::InvalidBandwidth)
    }
}

/// The Gaussian (RBF) kernel `k(x, y) = exp(−‖x − y‖² / (2 l²))` with bandwidth `l`;
/// `B_k = 1` for every `l > 0` (Park, Vinaroz & Jitkrittum 2021, after Lemma 1;
/// Raisa 2021, §7.1).
///
/// `exp` is the crate's fast exponential of the kernel's [`KernelVersion`] (version 1, the
/// default: relative error `< 1e-15`; version 2: absolute error `< 7.6e-16`; see the README);
/// the value is clamped into `[0, 1]`, so `B_k = 1` holds for the computed kernel too.
///
/// ```
/// use dpinfer_distances::{Gaussian, Kernel, BoundedKernel};
/// let k = Gaussian::new(2.0)?;
/// assert!((k.eval(&[0.0], &[2.0]) - (-0.5f64).exp()).abs() < 1e-15);
/// assert_eq!(k.bound(), 1.0);
/// assert!(Gaussian::new(0.0).is_err() && Gaussian::new(f64::NAN).is_err());
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gaussian {
    bandwidth: f64,
    neg_c: f64,
    version: KernelVersion,
}

impl Gaussian {
    /// A Gaussian kernel with bandwidth `l`.
    ///
    /// # Errors
    /// [`DistanceError::InvalidBandwidth`] unless `l` is finite, positive and `1/(2l²)` is a
    /// finite positive number (roughly `1e-154 < l < 1e154`).
    pub fn new(bandwidth: f64) -> Result<Self, DistanceError> {
        let c = inv_sq_bandwidth_half(bandwidth)?;
        Ok(Self {
            bandwidth,
            neg_c: -c,
            version: KernelVersion::V1,
        })
    }

    /// The bandwidth `l`.
    #[must_use]
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }

    /// `k` as a function of the squared distance.
    #[inline(always)]
    #[must_use]
    pub fn of_sq_dist(&self, d2: f64) -> f64 {
        exp_nonpos(self.version, d2 * self.neg_c)
    }

    #[inline(always)]
    fn row_sum_with<T: Transcendentals, const S: bool>(&self, x: &[f64], ys: &[f64]) -> f64 {
        let neg_c = self.neg_c;
        radial_row_sum::<S>(x, ys, |d2| T::exp_nonpos(d2 * neg_c))
    }

    #[inline(always)]
    fn gram_with<T: Transcendentals, const UPPER: bool>(
        &self,
        x: &[f64],
        y: &[f64],
        dim: usize,
    ) -> Option<f64> {
        let neg_c = self.neg_c;
        gram::tiled::<UPPER>(x, y, dim, |d2| T::exp_nonpos(d2 * neg_c))
    }
}
kernel_version_api!(Gaussian, "kernel", "`exp`");

impl Kernel for Gaussian {
    #[inline]
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        self.of_sq_dist(sq_dist(x, y))
    }
    #[inline(always)]
    fn row_sum(&self, x: &[f64], ys: &[f64]) -> f64 {
        match self.version {
            KernelVersion::V1 => self.row_sum_with::<V1, true>(x, ys),
            KernelVersion::V2 => self.row_sum_with::<V2, true>(x, ys),
            KernelVersion::V3 => self.row_sum_with::<V3, true>(x, ys),
        }
    }
    #[inline(always)]
    fn row_sum_finite(&self, x: &[f64], ys: &[f64]) -> f64 {
        match self.version {
            KernelVersion::V1 => self.row_sum_with::<V1, false>(x, ys),
            KernelVersion::V2 => self.row_sum_with::<V2, false>(x, ys),
            KernelVersion::V3 => self.row_sum_with::<V3, false>(x, ys),
        }
    }
    tiled_gram_sums!();
}
impl sealed::Sealed for Gaussian {}
impl BoundedKernel for Gaussian {
    fn bound(&self) -> f64 {
        1.0
    }
}

/// The Laplace (exponential) kernel `k(x, y) = exp(−‖x − y‖ / l)`, `B_k = 1`.
///
/// ```
/// use dpinfer_distances::{Laplace, Kernel};
/// let k = Laplace::new(1.0)?;
/// assert!((k.eval(&[0.0, 0.0], &[3.0, 4.0]) - (-5.0f64).exp()).abs() < 1e-16);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Laplace {
    bandwidth: f64,
    neg_inv: f64,
    version: KernelVersion,
}

impl Laplace {
    /// A Laplace kernel with length scale `l`.
    ///
    /// # Errors
    /// [`DistanceError::InvalidBandwidth`] unless `l` is finite, positive and `1/l` finite.
    pub fn new(bandwidth: f64) -> Result<Self, DistanceError> {
        let inv = 1.0 / bandwidth;
        if bandwidth.is_finite() && bandwidth > 0.0 && inv.is_finite() && inv > 0.0 {
            Ok(Self {
                bandwidth,
                neg_inv: -inv,
                version: KernelVersion::V1,
            })
        } else {
            Err(DistanceError::InvalidBandwidth)
        }
    }
    /// The length scale `l`.
    #[must_use]
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }
}

impl Laplace {
    #[inline(always)]
    fn row_sum_with<T: Transcendentals, const S: bool>(&self, x: &[f64], ys: &[f64]) -> f64 {
        let n = self.neg_inv;
        radial_row_sum::<S>(x, ys, |d2| T::exp_nonpos(libm::sqrt(d2) * n))
    }

    #[inline(always)]
    fn gram_with<T: Transcendentals, const UPPER: bool>(
        &self,
        x: &[f64],
        y: &[f64],
        dim: usize,
    ) -> Option<f64> {
        let n = self.neg_inv;
        gram::tiled::<UPPER>(x, y, dim, |d2| T::exp_nonpos(libm::sqrt(d2) * n))
    }
}
kernel_version_api!(Laplace, "kernel", "`exp`");

impl Kernel for Laplace {
    #[inline]
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        exp_nonpos(self.version, libm::sqrt(sq_dist(x, y)) * self.neg_inv)
    }
    #[inline(always)]
    fn row_sum(&self, x: &[f64], ys: &[f64]) -> f64 {
        match self.version {
            KernelVersion::V1 => self.row_sum_with::<V1, true>(x, ys),
            KernelVersion::V2 => self.row_sum_with::<V2, true>(x, ys),
            KernelVersion::V3 => self.row_sum_with::<V3, true>(x, ys),
        }
    }
    #[inline(always)]
    fn row_sum_finite(&self, x: &[f64], ys: &[f64]) -> f64 {
        match self.version {
            KernelVersion::V1 => self.row_sum_with::<V1, false>(x, ys),
            KernelVersion::V2 => self.row_sum_with::<V2, false>(x, ys),
            KernelVersion::V3 => self.row_sum_with::<V3, false>(x, ys),
        }
    }
    tiled_gram_sums!();
}
impl sealed::Sealed for Laplace {}
impl BoundedKernel for Laplace {
    fn bound(&self) -> f64 {
        1.0
    }
}

/// The Matérn-3/2 kernel `k = (1 + √3 r / l) exp(−√3 r / l)`, `r = ‖x − y‖`, `B_k = 1`.
///
/// ```
/// use dpinfer_distances::{Matern32, Kernel};
/// let k = Matern32::new(1.0)?;
/// let a = 3f64.sqrt();
/// assert!((k.eval(&[0.0], &[1.0]) - (1.0 + a) * (-a).exp()).abs() < 1e-15);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Matern32 {
    bandwidth: f64,
    sqrt3_inv: f64,
    version: KernelVersion,
}

impl Matern32 {
    /// A Matérn-3/2 kernel with length scale `l`.
    ///
    /// # Errors
    /// [`DistanceError::InvalidBandwidth`] unless `l` is finite, positive and `√3/l` finite.
    pub fn new(bandwidth: f64) -> Result<Self, DistanceError> {
        let a = libm::sqrt(3.0) / bandwidth;
        if bandwidth.is_finite() && bandwidth > 0.0 && a.is_finite() && a > 0.0 {
            Ok(Self {
                bandwidth,
                sqrt3_inv: a,
                version: KernelVersion::V1,
            })
        } else {
            Err(DistanceError::InvalidBandwidth)
        }
    }
    /// The length scale `l`.
    #[must_use]
    pub fn bandwidth(&self) -> f64 {
        self.bandwidth
    }
    #[inline(always)]
    fn of_sq_dist<T: Transcendentals>(a_scale: f64, d2: f64) -> f64 {
        let a = libm::sqrt(d2) * a_scale;
        // (1 + a) e^{-a} ≤ 1 for a ≥ 0; beyond a = 700 it is below 1e-300: return 0 (also
        // avoids ∞ · 0).
        let v = (1.0 + a) * T::exp_nonpos(-a);
        if a <= 700.0 { v.min(1.0) } else { 0.0 }
    }
    #[inline(always)]
    fn row_sum_with<T: Transcendentals, const S: bool>(&self, x: &[f64], ys: &[f64]) -> f64 {
        let s = self.sqrt3_inv;
        radial_row_sum::<S>(x, ys, |d2| Self::of_sq_dist::<T>(s, d2))
    }

    #[inline(always)]
    fn gram_with<T: Transcendentals, const UPPER: bool>(
        &self,
        x: &[f64],
        y: &[f64],
        dim: usize,
    ) -> Option<f64> {
        let s = self.sqrt3_inv;
        gram::tiled::<UPPER>(x, y, dim, |d2| Self::of_sq_dist::<T>(s, d2))
    }
}
kernel_version_api!(Matern32, "kernel", "`exp`");

impl Kernel for Matern32 {
    #[inline]
    fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        let d2 = sq_dist(x, y);
        match self.version {
            KernelVersion::V1 => Self::of_sq_dist::<V1>(self.sqrt3_inv, d2),
            KernelVersion::V2 => Self::of_sq_dist::<V2>(self.sqrt3_inv, d2),
            KernelVersion::V3 => Self::of_sq_dist::<V3>(self.sqrt3_inv, d2),
        }
    }
    #[inline(always)]
    fn row_sum(&self, x: &[f64], ys: &[f64]) -> f64 {
        match self.version {
            KernelVersion::V1 => self.row_sum_with::<V1, true>(x, ys),
            KernelVersion::V2 => self.row_sum_with::<V2, true>(x, ys),
            KernelVersion::V3 => self.row_sum_with::<V3, true>(x, ys),
        }
    }
    #[inline(always)]
    fn row_sum_finite(&self, x: &[f64], ys: &[f64]) -> f64 {
        match self.version {
            KernelVersion::V1 => self.row_sum_with::<V1, false>(x, ys),
            KernelVersion::V2 => self.row_sum_with::<V2, false>(x, ys),
            KernelVersion::V3 => self.row_sum_with::<V3, false>(x, ys),
        }
    }
    tiled_gram_sums!();
}
impl sealed::Sealed for Matern32 {}
impl BoundedKernel for Matern32 {
    fn bound(&self) -> f64 {
        1.0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    use super::{Gaussian, Kernel, Laplace, Matern32};
    use crate::KernelVersion;

    /// The defining order of every row sum: row `i` into lane `i mod 4`, in row order, lanes
    /// added as `(l0 + l1) + (l2 + l3)`.
    fn reference<K: Kernel>(k: &K, x: &[f64], ys: &[f64]) -> f64 {
        let mut acc = [0.0f64; 4];
        for (i, y) in ys.chunks_exact(x.len()).enumerate() {
            acc[i & 3] += k.eval(x, y);
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3])
    }

    /// The sanitise-free row sums (`row_sum_finite`, used when a whole set is finite) give
    /// the bits of the defining one-row order on finite data (dims 1..=10, lengths around
    /// the chunk sizes, all three kernels, every dispatch level), and `all_finite` finds every
    /// non-finite value wherever it sits.
    #[test]
    fn finite_row_sums_equal_the_sanitising_ones() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            8.0 * ((x >> 11) as f64 / (1u64 << 53) as f64) - 4.0
        };
        let mut buf = [0.0f64; 10 * 75];
        for v in &mut buf {
            *v = next();
        }
        buf[7] = 1e300; // finite but huge: exp underflows to 0 either way
        assert!(crate::rows::all_finite(&buf));
        for version in [KernelVersion::V1, KernelVersion::V2, KernelVersion::V3] {
            let g = Gaussian::new(0.8).unwrap().with_kernel_version(version);
            let l = Laplace::new(1.1).unwrap().with_kernel_version(version);
            let m = Matern32::new(0.6).unwrap().with_kernel_version(version);
            for dim in 1..=10 {
                let xr = &buf[..dim];
                for rows in [1, 3, 4, 7, 8, 9, 31, 32, 33, 40, 64, 70] {
                    let ys = &buf[dim..dim + dim * rows];
                    for (name, got, want) in [
                        ("gauss", g.row_sum_finite(xr, ys), reference(&g, xr, ys)),
                        ("laplace", l.row_sum_finite(xr, ys), reference(&l, xr, ys)),
                        ("matern", m.row_sum_finite(xr, ys), reference(&m, xr, ys)),
                    ] {
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "{name} dim {dim} rows {rows}"
                        );
                    }
                    #[cfg(feature = "std")]
                    for level in crate::simd::Level::available() {
                        let got =
                            crate::simd::with_level(level, || g.row_sum_finite(xr, ys)).unwrap();
                        assert_eq!(got.to_bits(), reference(&g, xr, ys).to_bits(), "{level:?}");
                    }
                }
            }
        }
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for at in [0, 5, 8, 13, 749] {
                let mut b = buf;
                b[at] = bad;
                assert!(!crate::rows::all_finite(&b));
                assert!(crate::rows::all_finite(&b[..at]));
            }
        }
        assert!(crate::rows::all_finite(&[]));
    }

    /// The chunked/vectorised row sums (1-D chunks of 8, 2..=8-D contiguous chunks, the
    /// generic path above 8) give the bits of the one-row-at-a-time order, for every
    /// dimension 1..=10, lengths around the chunk sizes, non-finite data, all three kernels,
    /// and on every dispatch level of this CPU.
    #[test]
    fn row_sums_equal_the_defining_order() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            6.0 * ((x >> 11) as f64 / (1u64 << 53) as f64) - 3.0
        };
        let mut buf = [0.0f64; 10 * 75];
        for (i, v) in buf.iter_mut().enumerate() {
            *v = match i % 89 {
                5 => f64::NAN,
                17 => f64::NEG_INFINITY,
                40 => 1e200,
                _ => next(),
            };
        }
        for version in [KernelVersion::V1, KernelVersion::V2, KernelVersion::V3] {
            let g = Gaussian::new(0.8).unwrap().with_kernel_version(version);
            let l = Laplace::new(1.1).unwrap().with_kernel_version(version);
            let m = Matern32::new(0.6).unwrap().with_kernel_version(version);
            for dim in 1..=10 {
                let xr = &buf[..dim];
                for rows in [1, 3, 4, 7, 8, 9, 31, 32, 33, 40, 64, 70] {
                    let ys = &buf[dim..dim + dim * rows];
                    for (name, got, want) in [
                        ("gauss", g.row_sum(xr, ys), reference(&g, xr, ys)),
                        ("laplace", l.row_sum(xr, ys), reference(&l, xr, ys)),
                        ("matern", m.row_sum(xr, ys), reference(&m, xr, ys)),
                    ] {
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "{name} dim {dim} rows {rows}"
                        );
                    }
                    // The dispatch levels exist under `std` only.
                    #[cfg(feature = "std")]
                    for level in crate::simd::Level::available() {
                        let got = crate::simd::with_level(level, || {
                            crate::mmd::cross_sum(
                                &g,
                                crate::Rows::new(xr, dim).unwrap(),
                                crate::Rows::new(ys, dim).unwrap(),
                            )
                        })
                        .unwrap();
                        let want = reference(&g, xr, ys);
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "{level:?} dim {dim} rows {rows}"
                        );
                    }
                }
            }
        }
    }
}
