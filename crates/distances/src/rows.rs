//! A validated row-major view of a data set.

use crate::DistanceError;

/// A non-empty data set of `len() / dim` rows of `dim` coordinates each, stored row-major
/// in a borrowed `&[f64]`.
///
/// Construction checks only the *shape* (public information); the values may be anything,
/// including NaN and ±∞. Every estimator in this crate maps non-finite coordinates
/// deterministically before use ([`sanitize`]), so a bad private record never becomes an
/// error or a NaN.
///
/// ```
/// use dpinfer_distances::{DistanceError, Rows};
/// let r = Rows::new(&[1.0, 2.0, 3.0, 4.0], 2)?;
/// assert_eq!((r.rows(), r.dim()), (2, 2));
/// assert_eq!(Rows::new(&[1.0, 2.0, 3.0], 2), Err(DistanceError::RaggedRows { len: 3, dim: 2 }));
/// # Ok::<(), DistanceError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rows<'a> {
    data: &'a [f64],
    dim: usize,
}

impl<'a> Rows<'a> {
    /// Wraps a row-major buffer with `dim` columns.
    ///
    /// # Errors
    /// [`DistanceError::ZeroDimension`] if `dim == 0`, [`DistanceError::Empty`] if `data` is
    /// empty, [`DistanceError::RaggedRows`] if `data.len()` is not a multiple of `dim`.
    pub fn new(data: &'a [f64], dim: usize) -> Result<Self, DistanceError> {
        if dim == 0 {
            return Err(DistanceError::ZeroDimension);
        }
        if data.is_empty() {
            return Err(DistanceError::Empty);
        }
        if !data.len().is_multiple_of(dim) {
            return Err(DistanceError::RaggedRows {
                len: data.len(),
                dim,
            });
        }
        Ok(Self { data, dim })
    }

    /// One-dimensional data (`dim = 1`).
    ///
    /// # Errors
    /// [`DistanceError::Empty`] if `data` is empty.
    pub fn one_dim(data: &'a [f64]) -> Result<Self, DistanceError> {
        Self::new(data, 1)
    }

    /// Number of rows (at least 1).
    #[must_use]
    #[inline]
    pub fn rows(&self) -> usize {
        self.data.len() / self.dim
    }

    /// Number of coordinates per row (at least 1).
    #[must_use]
    #[inline]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The underlying row-major buffer.
    #[must_use]
    #[inline]
    pub fn as_slice(&self) -> &'a [f64] {
        self.data
    }

    /// Row `i`, or `None` past the end.
    #[must_use]
    #[inline]
    pub fn row(&self, i: usize) -> Option<&'a [f64]> {
        self.data.get(i * self.dim..(i + 1) * self.dim)
    }

    /// Iterator over the rows.
    #[inline]
    pub fn iter(&self) -> core::slice::ChunksExact<'a, f64> {
        self.data.chunks_exact(self.dim)
    }

    pub(crate) fn same_dim(&self, other: &Rows<'_>) -> Result<(), DistanceError> {
        if self.dim == other.dim {
            Ok(())
        } else {
            Err(DistanceError::DimensionMismatch {
                expected: self.dim,
                found: other.dim,
            })
        }
    }
}

/// `true` if every value is finite (eight lanes, so it vectorises: `v·0` is NaN exactly for
/// a non-finite `v`). Lets the hot loops skip [`sanitize`], the identity on finite values.
#[inline(always)]
pub(crate) fn all_finite(data: &[f64]) -> bool {
    let mut nan = [0.0f64; 8];
    let mut it = data.chunks_exact(8);
    for p in &mut it {
        for (n, &v) in nan.iter_mut().zip(p) {
            *n += v * 0.0;
        }
    }
    for (n, &v) in nan.iter_mut().zip(it.remainder()) {
        *n += v * 0.0;
    }
    nan.iter().all(|v| *v == 0.0)
}

/// The deterministic map applied to every coordinate before a kernel or feature map sees
/// it: NaN ↦ 0, ±∞ ↦ ±`f64::MAX`, finite values unchanged.
///
/// The kernels are then ordinary kernels on the finite points, so the sensitivity lemmas
/// apply to data containing non-finite values too, and no NaN can arise downstream (squared
/// differences of finite numbers are in `[0, +∞]`, never NaN).
#[inline(always)]
#[must_use]
pub fn sanitize(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(-f64::MAX, f64::MAX)
    }
}
