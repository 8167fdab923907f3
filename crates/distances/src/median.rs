//! Bandwidth by the median heuristic, on simulated (public) data only.

use crate::rows::sanitize;
use crate::simd::{Job, dispatch};
use crate::{DistanceError, Rows};

#[inline(always)]
fn dist(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        let d = sanitize(*x) - sanitize(*y);
        s += d * d;
    }
    libm::sqrt(s)
}

/// Number of unordered pairs among `s` points, `s(s − 1)/2`, or `None` on overflow.
#[must_use]
pub fn pair_count(s: usize) -> Option<usize> {
    s.checked_mul(s.saturating_sub(1)).map(|p| p / 2)
}

/// The first `s(s − 1)/2` slots of `buf`, one per pair of the `s` points used.
///
/// # Errors
/// [`DistanceError::TooFewRows`] for `s < 2`, [`DistanceError::BufferTooSmall`] when `buf`
/// is shorter (or the count overflows).
fn pair_buffer(s: usize, buf: &mut [f64]) -> Result<&mut [f64], DistanceError> {
    if s < 2 {
        return Err(DistanceError::TooFewRows {
            needed: 2,
            found: s,
        });
    }
    let found = buf.len();
    let needed = pair_count(s).unwrap_or(usize::MAX);
    buf.get_mut(..needed)
        .ok_or(DistanceError::BufferTooSmall { needed, found })
}

/// Median of `v` by selection (`select_nth_unstable`, expected `O(len)`), averaging the two
/// middle values for even lengths (as `numpy.median`). `v` is reordered.
fn median_in_place(v: &mut [f64]) -> Option<f64> {
    let p = v.len();
    if p == 0 {
        return None;
    }
    let (left, mid, _) = v.select_nth_unstable_by(p / 2, f64::total_cmp);
    let hi = *mid;
    if p % 2 == 1 {
        return Some(hi);
    }
    let lo = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(lo / 2.0 + hi / 2.0)
}

fn finish(med: Option<f64>) -> Result<f64, DistanceError> {
    match med {
        Some(m) if m.is_finite() && m > 0.0 => Ok(m),
        _ => Err(DistanceError::DegenerateBandwidth),
    }
}

/// `(⌊i n / s⌋, (i n) mod s)`; `⌊i n / s⌋ < n` for `i < s`, computed in u128 so it cannot
/// overflow.
#[allow(clippy::cast_possible_truncation)]
fn strided(i: usize, n: usize, s: usize) -> (usize, usize) {
    let p = i as u128 * n as u128;
    ((p / s as u128) as usize, (p % s as u128) as usize)
}

/// The subsample rows `⌊i n / s⌋` for `i = i0, i0 + 1, …, s − 1`, stepped without a
/// division (same indices as [`strided`]).
#[inline(always)]
fn strided_from(i0: usize, n: usize, s: usize) -> impl Iterator<Item = usize> {
    let (dq, dr) = (n / s, n % s);
    let (mut q, mut r) = strided(i0, n, s);
    (i0..s).map(move |_| {
        let out = q;
        q += dq;
        r += dr;
        if r >= s {
            q += 1;
            r -= s;
        }
        out
    })
}

/// Fills `out` with the distances between the subsample rows `i < j` (row-major upper
/// triangle), at the dispatched [`crate::simd`] level.
struct SubsampleDistances<'a, 'o> {
    sim: Rows<'a>,
    s: usize,
    out: &'o mut [f64],
}

impl Job for SubsampleDistances<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let (n, d, s) = (self.sim.rows(), self.sim.dim(), self.s);
        let data = self.sim.as_slice();
        let row = |r: usize| &data[r * d..(r + 1) * d];
        let mut k = 0;
        for (i, ri) in strided_from(0, n, s).enumerate() {
            let a = row(ri);
            let m = s - 1 - i;
            let Some(dst) = self.out.get_mut(k..k + m) else {
                return;
            };
            if d == 1 {
                let a0 = sanitize(a[0]);
                for (o, rj) in dst.iter_mut().zip(strided_from(i + 1, n, s)) {
                    let v = a0 - sanitize(data[rj]);
                    *o = libm::sqrt(v * v);
                }
            } else {
                for (o, rj) in dst.iter_mut().zip(strided_from(i + 1, n, s)) {
                    *o = dist(a, row(rj));
                }
            }
            k += m;
        }
    }
}

/// The median heuristic bandwidth: the median Euclidean distance between distinct rows of a
/// subsample of at most `max_points` evenly spaced rows of `sim` (Gretton et al. 2012, §8;
/// used with a Gaussian kernel by Park, Vinaroz & Jitkrittum 2021, §5.1).
///
/// Call it on **simulated** data only: computed on `Y*` it would itself be a release of
/// private information (the ABCDP experiments compute it "on the simulated data (i.e., we did
/// not use the real data for this, hence there is no privacy violation)", §5.1).
///
/// The `s(s − 1)/2` distances go into the caller's `buf` (no allocation) and the median is
/// found by selection, not a full sort. The subsample keeps rows `⌊i n / s⌋`, `i < s`
/// (deterministic; the rows of a simulated set are exchangeable).
///
/// # Errors
/// [`DistanceError::TooFewRows`] if fewer than 2 rows are used;
/// [`DistanceError::BufferTooSmall`] if `buf` holds fewer than `s(s − 1)/2` values;
/// [`DistanceError::DegenerateBandwidth`] if the median is 0 or not finite.
///
/// ```
/// use dpinfer_distances::{median_heuristic, Rows};
/// let sim = [0.0, 1.0, 3.0, 7.0]; // distances 1,3,7,2,6,4 → median (3+4)/2
/// let mut buf = [0.0; 6];
/// assert_eq!(median_heuristic(Rows::one_dim(&sim)?, 100, &mut buf)?, 3.5);
/// # Ok::<(), dpinfer_distances::DistanceError>(())
/// ```
pub fn median_heuristic(
    sim: Rows<'_>,
    max_points: usize,
    buf: &mut [f64],
) -> Result<f64, DistanceError> {
    let s = sim.rows().min(max_points);
    let out = pair_buffer(s, buf)?;
    dispatch(SubsampleDistances {
        sim,
        s,
        out: &mut *out,
    });
    finish(median_in_place(out))
}

/// [`median_heuristic`] with an internally allocated buffer.
///
/// # Errors
/// As [`median_heuristic`].
#[cfg(feature = "alloc")]
pub fn median_heuristic_vec(sim: Rows<'_>, max_points: usize) -> Result<f64, DistanceError> {
    let s = sim.rows().min(max_points);
    let p = pair_count(s).ok_or(DistanceError::BufferTooSmall {
        needed: usize::MAX,
        found: 0,
    })?;
    let mut buf = alloc::vec![0.0; p];
    median_heuristic(sim, max_points, &mut buf)
}

/// The evaluation variant of the DP-MCMC thesis (Raisa 2021, §7.1): pick subsamples from
/// **both** samples (the thesis draws 50 from each, with replacement; the caller draws the
/// indices `idx_x`, `idx_y`, so this crate needs no RNG), pool them, and take the median
/// Euclidean distance between distinct pooled points. Intended for evaluating posterior
/// samples, where neither input is private.
///
/// # Errors
/// [`DistanceError::DimensionMismatch`]; [`DistanceError::IndexOutOfRange`];
/// [`DistanceError::TooFewRows`] if fewer than 2 indices in total;
/// [`DistanceError::BufferTooSmall`] unless `buf` holds `s(s − 1)/2` values,
/// `s = idx_x.len() + idx_y.len()`; [`DistanceError::DegenerateBandwidth`].
pub fn median_heuristic_pooled(
    x: Rows<'_>,
    y: Rows<'_>,
    idx_x: &[usize],
    idx_y: &[usize],
    buf: &mut [f64],
) -> Result<f64, DistanceError> {
    x.same_dim(&y)?;
    for (idx, rows) in [(idx_x, x.rows()), (idx_y, y.rows())] {
        if let Some(&bad) = idx.iter().find(|&&i| i >= rows) {
            return Err(DistanceError::IndexOutOfRange {
                index: bad,
                len: rows,
            });
        }
    }
    let s = idx_x.len().saturating_add(idx_y.len());
    let out = pair_buffer(s, buf)?;
    let point = |i: usize| -> &[f64] {
        if i < idx_x.len() {
            x.row(idx_x[i]).unwrap_or(&[])
        } else {
            y.row(idx_y[i - idx_x.len()]).unwrap_or(&[])
        }
    };
    let mut k = 0;
    for i in 0..s {
        let a = point(i);
        for j in (i + 1)..s {
            out[k] = dist(a, point(j));
            k += 1;
        }
    }
    finish(median_in_place(out))
}

#[cfg(test)]
mod tests {
    use super::{strided, strided_from};

    /// The division-free stepping visits exactly the rows `⌊i n / s⌋` (including the carry
    /// when `n mod s ≠ 0`, and huge `n` where `i n` overflows `usize`).
    #[test]
    fn strided_from_matches_the_formula() {
        for (n, s) in [
            (2, 2),
            (7, 3),
            (1000, 500),
            (1000, 999),
            (5000, 1999),
            (12_345, 678),
            (usize::MAX / 3, 17),
        ] {
            for i0 in [0, 1, s / 2, s - 1] {
                let want = (i0..s).map(|i| strided(i, n, s).0);
                assert!(
                    strided_from(i0, n, s).eq(want),
                    "n = {n}, s = {s}, i0 = {i0}"
                );
                assert!(strided_from(i0, n, s).all(|r| r < n));
            }
        }
    }
}
