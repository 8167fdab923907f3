//! Fractional ranks, the one implementation behind the MCMC rank-normalised diagnostics
//! (`dpinfer-mcmc`) and the rank plots (`dpinfer-plots`).

use alloc::vec;
use alloc::vec::Vec;

/// Fractional ranks of the finite values in input order: 1-based, ordered by
/// [`f64::total_cmp`] (so `−0.0` ranks below `0.0`), ties share their average rank
/// `(first + last)/2` (the "average" method of Vehtari et al. 2021, §4, and of
/// `scipy.stats.rankdata`). Non-finite values are left out of the ranking and get NaN.
///
/// ```
/// let r = dpinfer_math::average_ranks(&[3.0, 1.0, 3.0, f64::NAN, 2.0, 3.0]);
/// assert_eq!(&r[..3], &[4.0, 1.0, 4.0]); // 1, 2, 3, 3, 3: the 3s share (3 + 4 + 5)/3
/// assert!(r[3].is_nan());
/// assert_eq!(&r[4..], &[2.0, 4.0]);
/// ```
#[must_use]
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..values.len())
        .filter(|&i| values[i].is_finite())
        .collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![f64::NAN; values.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && values[idx[j]].total_cmp(&values[idx[i]]).is_eq() {
            j += 1;
        }
        // sorted positions i..j (0-based) share the rank (i + 1 + j)/2, exact below 2⁵³
        #[allow(clippy::cast_precision_loss)]
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        i = j;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against `scipy.stats.rankdata(x, method="average")` for
    /// x = [0.5, -1, 0.5, 2, -1, -1, 7]: [4.5, 2, 4.5, 6, 2, 2, 7].
    #[test]
    #[allow(clippy::float_cmp)] // ranks are exact halves
    fn matches_rankdata_average() {
        let r = average_ranks(&[0.5, -1.0, 0.5, 2.0, -1.0, -1.0, 7.0]);
        assert_eq!(r, [4.5, 2.0, 4.5, 6.0, 2.0, 2.0, 7.0]);
        assert!(average_ranks(&[]).is_empty());
        let r = average_ranks(&[f64::INFINITY, 1.0, f64::NEG_INFINITY]);
        assert!(r[0].is_nan() && r[2].is_nan());
        assert_eq!(r[1], 1.0);
        // total order: −0 below +0
        assert_eq!(average_ranks(&[0.0, -0.0]), [2.0, 1.0]);
    }
}
