//! Numbers behind the plots: histogram bin counts, kernel density estimates, rank histograms
//! and the systematic resampling that turns weighted samples into plain ones.

use crate::error::{self, PlotError};

/// At most this many draws come out of [`resample`] (plots only need a picture).
pub const MAX_RESAMPLED: usize = 5000;

/// Weighted samples as an unweighted set of `m = min(n, 5000)` values by systematic
/// resampling ([`dpinfer_math::systematic_resample`], the SMC-ABC's resampler, at the offset
/// ½): the `k`-th output is the value whose normalised cumulative weight first exceeds
/// `(k + ½)/m` (a point on a boundary goes to the next positive weight). Deterministic (no
/// random numbers), so a plot of weighted samples is reproducible; meant for pictures, not
/// for inference.
///
/// # Errors
/// [`PlotError::Empty`] without values, [`PlotError::LengthMismatch`] when `weights` is not one
/// per value, [`PlotError::InvalidWeight`] for a NaN, infinite or negative weight,
/// [`PlotError::ZeroWeights`] when they sum to zero, [`PlotError::TooLarge`] when their sum
/// overflows. The values themselves are copied as they are (NaN included).
pub fn resample(values: &[f64], weights: &[f64]) -> Result<Vec<f64>, PlotError> {
    if values.is_empty() {
        return Err(PlotError::Empty {
            what: "values".into(),
        });
    }
    error::weights(values.len(), weights)?;
    Ok(resample_indices(weights)
        .into_iter()
        .map(|i| values[i])
        .collect())
}

/// The positions [`resample`] picks for valid weights (checked by the caller; an empty list
/// otherwise): [`dpinfer_math::systematic_resample`] at the offset ½.
pub(crate) fn resample_indices(w: &[f64]) -> Vec<usize> {
    let mut out = vec![0; w.len().min(MAX_RESAMPLED)];
    match dpinfer_math::systematic_resample(w, 0.5, &mut out) {
        Ok(()) => out,
        Err(_) => Vec::new(),
    }
}

/// Histogram bin count from the sample size: Freedman–Diaconis (`h = 2·IQR·n^{-1/3}`), or
/// Sturges (`⌈log₂ n⌉ + 1`) for fewer than 30 values or a zero IQR; at most 60.
pub(crate) fn bin_count(vals: &[f64], lo: f64, hi: f64) -> usize {
    let n = vals.len();
    if n < 2 {
        return 1;
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let sturges = (nf.log2().ceil() as usize + 1).clamp(1, 60);
    if n < 30 {
        return sturges;
    }
    let mut v = vals.to_vec();
    v.sort_by(f64::total_cmp);
    let iqr = sorted_quantile(&v, 0.75) - sorted_quantile(&v, 0.25);
    let h = 2.0 * iqr * nf.powf(-1.0 / 3.0);
    if h.is_nan() || h <= 0.0 || hi <= lo {
        return sturges;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let fd = ((hi - lo) / h).ceil().min(1e6) as usize;
    fd.clamp(5, 60)
}

/// The `p`-quantile of sorted values by linear interpolation (NaN without values).
fn sorted_quantile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    #[allow(clippy::cast_precision_loss)]
    let pos = p * (v.len() - 1) as f64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let i = pos.floor() as usize;
    let j = (i + 1).min(v.len() - 1);
    v[i] + (pos - pos.floor()) * (v[j] - v[i])
}

/// Silverman's robust bandwidth (*Density Estimation*, 1986, eq. 3.31):
/// `0.9 · min(sd, IQR/1.34) · n^{-1/5}`, the standard deviation alone when the interquartile
/// range is zero. A few far-away values inflate the standard deviation but not the IQR, so
/// they no longer flatten the estimate of the bulk (issue 32).
pub(crate) fn bandwidth(vals: &[f64]) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let n = vals.len() as f64;
    let mean = vals.iter().sum::<f64>() / n;
    let var = vals.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    let sd = var.sqrt();
    let mut sorted = vals.to_vec();
    sorted.sort_by(f64::total_cmp);
    let iqr = sorted_quantile(&sorted, 0.75) - sorted_quantile(&sorted, 0.25);
    let scale = if iqr > 0.0 { sd.min(iqr / 1.34) } else { sd };
    (0.9 * scale * n.powf(-0.2)).max(1e-12 * (1.0 + mean.abs()))
}

/// Gaussian kernel density estimate on a grid, Silverman's robust bandwidth ([`bandwidth`]).
pub(crate) fn kde(vals: &[f64], grid: &[f64]) -> Vec<f64> {
    kde_within(vals, grid, None)
}

/// [`kde`], or with `bounds = Some((lo, hi))` the estimate reflected at `lo` and `hi` (the
/// kernel mass that would spill over a bound is folded back) and zero beyond them (by more
/// than `3·(hi − lo)/n`, the distance of the extreme draws from a hard bound): the
/// boundary-corrected estimate for draws of a bounded density, which a plain KDE halves at
/// the bound (a Dirichlet(1) marginal, whose density is largest at 0).
pub(crate) fn kde_within(vals: &[f64], grid: &[f64], bounds: Option<(f64, f64)>) -> Vec<f64> {
    #[allow(clippy::cast_precision_loss)]
    let n = vals.len() as f64;
    if vals.len() < 2 {
        return vec![0.0; grid.len()];
    }
    let bw = bandwidth(vals);
    let norm = 1.0 / (n * bw * (2.0 * core::f64::consts::PI).sqrt());
    let k = |g: f64, v: f64| {
        let z = (g - v) / bw;
        (-0.5 * z * z).exp()
    };
    // The smallest and largest of n draws fall about (hi − lo)/n inside a hard bound: grid
    // points that close beyond them still get the reflected estimate.
    let slack = bounds.map_or(0.0, |(lo, hi)| 3.0 * (hi - lo) / n);
    grid.iter()
        .map(|&g| match bounds {
            None => vals.iter().map(|&v| k(g, v)).sum::<f64>() * norm,
            Some((lo, hi)) if g < lo - slack || g > hi + slack => 0.0,
            Some((lo, hi)) => {
                vals.iter()
                    .map(|&v| k(g, v) + k(g, 2.0 * lo - v) + k(g, 2.0 * hi - v))
                    .sum::<f64>()
                    * norm
            }
        })
        .collect()
}

/// Rank histograms of `vals` cut into `chains` consecutive parts of `⌊n/chains⌋` draws (a
/// remainder is dropped): the parts' draws are ranked together (average ranks for ties) and
/// each part's ranks are counted in the same bins — 20 as in Vehtari et al. (2021), fewer
/// when a part has under 100 draws (at least 5 per bin in expectation). Returns the counts
/// per part and bin, and the count every bin has in expectation under uniform ranks.
pub(crate) fn rank_counts(vals: &[f64], chains: usize) -> (Vec<Vec<f64>>, f64) {
    let chains = chains.max(1);
    let per = vals.len() / chains;
    let used = per * chains;
    let ranks = dpinfer_math::average_ranks(&vals[..used]);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bins = (per / 5).clamp(1, 20);
    #[allow(clippy::cast_precision_loss)]
    let (total, nb) = (used.max(1) as f64, bins as f64);
    let mut counts = vec![vec![0.0f64; bins]; chains];
    for (c, part) in counts.iter_mut().enumerate() {
        for r in &ranks[c * per..(c + 1) * per] {
            if r.is_finite() {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let b = (((r - 0.5) / total * nb).floor() as usize).min(bins - 1);
                part[b] += 1.0;
            }
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let expected = per as f64 / nb;
    (counts, expected)
}

/// Rank histograms of a sequence of draws cut into consecutive parts (the chains of
/// split-R̂), as drawn on the right of [`trace_rank_plot`](crate::trace_rank_plot).
#[derive(Debug, Clone, PartialEq)]
pub struct RankHistograms {
    /// Counts per part (outer) and bin (inner); every part has the same bins.
    pub counts: Vec<Vec<f64>>,
    /// The count every bin has in expectation when all parts sample one distribution.
    pub expected: f64,
}

/// Rank histograms of `draws` cut into `chains` consecutive parts of `⌊n/chains⌋` draws (a
/// remainder is dropped): all kept draws are ranked together (ties share their average rank)
/// and each part's ranks are counted in the same bins — 20 as in Vehtari, Gelman, Simpson,
/// Carpenter & Bürkner (2021, §4), fewer when a part has under 100 draws (at least 5 per bin in
/// expectation). Non-finite draws are left out of the ranking.
///
/// # Errors
/// [`PlotError::Empty`] without draws, [`PlotError::InvalidChains`] for 0 or more than
/// [`MAX_CHAINS`](crate::MAX_CHAINS) chains or more chains than draws.
pub fn rank_histograms(draws: &[f64], chains: usize) -> Result<RankHistograms, PlotError> {
    if draws.is_empty() {
        return Err(PlotError::Empty {
            what: "draws".into(),
        });
    }
    check_chains(chains)?;
    if chains > draws.len() {
        return Err(PlotError::InvalidChains { chains });
    }
    let (counts, expected) = rank_counts(draws, chains);
    Ok(RankHistograms { counts, expected })
}

/// Checks a number of chains: 1 to [`MAX_CHAINS`](crate::MAX_CHAINS).
pub(crate) fn check_chains(chains: usize) -> Result<(), PlotError> {
    if (1..=crate::MAX_CHAINS).contains(&chains) {
        Ok(())
    } else {
        Err(PlotError::InvalidChains { chains })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_follow_the_sample_size() {
        let ten: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(bin_count(&ten, 0.0, 9.0), 5); // Sturges: ⌈log₂ 10⌉ + 1
        let flat = vec![1.0; 100];
        assert_eq!(bin_count(&flat, 0.99, 1.01), 8); // zero IQR: Sturges
        assert_eq!(bin_count(&[], 0.0, 1.0), 1);
    }

    /// Issue 32: the prior curve was a plain KDE of prior draws, which halves a bounded
    /// density at its bound (a Dirichlet(1) marginal drawn at 1.6 where its density is 4).
    /// Reflected at the draws' range, a uniform keeps height 1 at its ends and a
    /// Beta(1, 4) = Dirichlet(1, 1, 1, 1, 1) marginal comes close to 4 at 0.
    #[test]
    fn reflected_kde_keeps_a_bounded_density_at_its_bound() {
        let u: Vec<f64> = (0..4000).map(|i| (f64::from(i) + 0.5) / 4000.0).collect();
        let beta: Vec<f64> = u.iter().map(|p| 1.0 - (1.0 - p).powf(0.25)).collect();
        let range = |v: &[f64]| Some((v[0].min(v[v.len() - 1]), v[0].max(v[v.len() - 1])));
        let flat = kde_within(&u, &[0.0, 0.5, 1.0], range(&u));
        assert!(flat.iter().all(|d| (d - 1.0).abs() < 0.05), "{flat:?}");
        let b = kde_within(&beta, &[0.0, 0.2], range(&beta));
        // Beta(1, 4): density 4 at 0 and 4·0.8³ = 2.048 at 0.2.
        assert!(b[0] > 3.4 && (b[1] - 2.048).abs() < 0.15, "{b:?}");
        assert!(kde(&u, &[0.0])[0] < 0.6 && kde(&beta, &[0.0])[0] < 2.3);
        // zero outside the draws' range
        assert_eq!(kde_within(&u, &[-0.1, 1.1], range(&u)), vec![0.0, 0.0]);
    }

    /// Issue 32: a few far-away accepts inflated Silverman's `1.06·sd·n^{-1/5}` and flattened
    /// the KDE of the bulk; the robust scale `min(sd, IQR/1.34)` ignores them.
    #[test]
    fn far_away_draws_do_not_flatten_the_kde() {
        // 500 draws of N(0, 1) by inverse CDF and 5 accepts at 200.
        let mut v: Vec<f64> = (0..500)
            .map(|i| dpinfer_math::norm_quantile((f64::from(i) + 0.5) / 500.0))
            .collect();
        let bulk = kde(&v, &[0.0])[0];
        v.extend([200.0; 5]);
        let with_outliers = kde(&v, &[0.0])[0];
        // N(0, 1) has density 0.399 at 0; the 5 outliers hold 1 % of the mass.
        assert!((bulk - 0.399).abs() < 0.04, "{bulk}");
        assert!(
            with_outliers > 0.9 * 0.99 * bulk,
            "{with_outliers} vs {bulk}"
        );
    }

    /// Systematic resampling by hand: weights 1, 0, 3 over three draws put the points 1/6,
    /// 1/2, 5/6 on the normalised cumulative weights 1/4, 1/4, 1: the first draw once, the
    /// third twice, never the zero-weight one.
    #[test]
    #[allow(clippy::float_cmp)] // copies of the inputs
    fn resampling_follows_the_cumulative_weights() {
        let v = [10.0, 20.0, 30.0];
        let w = [1.0, 0.0, 3.0];
        assert_eq!(resample(&v, &w), Ok(vec![10.0, 30.0, 30.0]));
        // a point on a boundary goes to the next weight: 1/4 for weights 1, 3
        assert_eq!(resample(&[1.0, 2.0], &[1.0, 3.0]), Ok(vec![2.0, 2.0]));
        // equal weights give the values back
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        assert_eq!(resample(&v, &[0.5; 100]), Ok(v.clone()));
        // more than 5000 draws: 5000 come out, in proportion to the weights
        // (a quarter of the weight on 10 000 zeros, three quarters on 10 000 ones: the
        // points (k + ½)/5000 pass 1/4 from k = 1250 on)
        let big: Vec<f64> = (0..20_000).map(|i| f64::from(i >= 10_000)).collect();
        let w: Vec<f64> = (0..20_000)
            .map(|i| if i < 10_000 { 1.0 } else { 3.0 })
            .collect();
        let r = resample(&big, &w).unwrap_or_default();
        assert_eq!(r.len(), MAX_RESAMPLED);
        assert_eq!(r.iter().sum::<f64>(), 3750.0);
    }

    #[test]
    fn resampling_rejects_bad_weights() {
        let v = [1.0, 2.0];
        assert_eq!(resample(&v, &[0.0, 0.0]), Err(PlotError::ZeroWeights));
        assert_eq!(
            resample(&v, &[1.0, -1.0]),
            Err(PlotError::InvalidWeight { index: 1 })
        );
        assert_eq!(
            resample(&v, &[f64::NAN, 1.0]),
            Err(PlotError::InvalidWeight { index: 0 })
        );
        assert!(matches!(
            resample(&v, &[1.0]),
            Err(PlotError::LengthMismatch { .. })
        ));
        assert!(matches!(resample(&[], &[]), Err(PlotError::Empty { .. })));
        assert!(matches!(
            resample(&v, &[f64::MAX, f64::MAX]),
            Err(PlotError::TooLarge { .. })
        ));
    }

    /// Rank histograms: two halves at different levels (a chain that has not mixed) put all
    /// of the first half's ranks in the bottom bins, halves of a well-mixed sequence stay near
    /// the uniform count.
    #[test]
    #[allow(clippy::float_cmp)] // counts are exact small numbers
    fn rank_histograms_show_mixing() {
        // a well-mixed sequence: a fixed pseudo-random permutation of 0..400; a drifting one
        let mixed: Vec<f64> = (0..400u32).map(|i| f64::from((i * 7919) % 400)).collect();
        let drift: Vec<f64> = (0..400u32)
            .map(|i| f64::from(i / 200) * 10.0 + f64::from(i % 7))
            .collect();
        let Ok(RankHistograms {
            counts: c,
            expected: e,
        }) = rank_histograms(&drift, 2)
        else {
            panic!("valid input")
        };
        assert_eq!(e, 10.0);
        assert_eq!(c[0][..10].iter().sum::<f64>(), 200.0);
        assert!(c[0][10..].iter().all(|&k| k == 0.0) && c[1][..10].iter().all(|&k| k == 0.0));
        let (c, _) = rank_counts(&mixed, 2);
        for part in &c {
            assert_eq!(part.iter().sum::<f64>(), 200.0);
            assert!(part.iter().all(|&k| (3.0..=17.0).contains(&k)), "{part:?}");
        }
        // few draws: fewer bins, at least 5 per bin in expectation; an odd draw is dropped
        let (c, e) = rank_counts(
            &[
                1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 0.5, 0.0,
            ],
            2,
        );
        assert_eq!((c[0].len(), e), (1, 6.0));
        assert_eq!(
            rank_histograms(&mixed, 0),
            Err(PlotError::InvalidChains { chains: 0 })
        );
        assert_eq!(
            rank_histograms(&[1.0], 2),
            Err(PlotError::InvalidChains { chains: 2 })
        );
    }
}
