//! Convergence and efficiency diagnostics: split-R̂, bulk and tail ESS, MCSE, and the MMD
//! evaluator of the thesis (§7.1).
//!
//! ESS follows Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization,
//! folding, and localization: an improved R̂": multi-chain autocorrelation estimate,
//! Geyer's initial positive + monotone sequence truncation, chains split in halves; bulk ESS
//! on rank-normalised draws, tail ESS as the minimum over the 5 % and 95 % quantile
//! indicators. Autocovariances are computed directly (no FFT), `O(n · lags)` with the lag
//! loop stopped by Geyer's rule.
//!
//! All functions take chains as slices of equal length and return `NaN`-free results or
//! `None` when the input is too short / degenerate.

use alloc::vec::Vec;

fn mean(x: &[f64]) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let n = x.len() as f64;
    x.iter().sum::<f64>() / n
}

/// Sample variance with divisor `n − 1`.
fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    #[allow(clippy::cast_precision_loss)]
    let n = x.len() as f64;
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0)
}

fn usable(chains: &[&[f64]]) -> Option<usize> {
    let n = chains.first()?.len();
    if n < 4
        || chains
            .iter()
            .any(|c| c.len() != n || c.iter().any(|x| !x.is_finite()))
    {
        return None;
    }
    Some(n)
}

/// Splits each chain into halves (dropping the middle draw of odd-length chains).
fn split(chains: &[&[f64]]) -> Vec<Vec<f64>> {
    let mut out = Vec::with_capacity(2 * chains.len());
    for c in chains {
        let h = c.len() / 2;
        out.push(c[..h].to_vec());
        out.push(c[c.len() - h..].to_vec());
    }
    out
}

/// Autocovariance of `x` at `lag` (divisor n, the biased estimator Stan uses).
fn autocov(x: &[f64], m: f64, lag: usize) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n - lag {
        s += (x[i] - m) * (x[i + lag] - m);
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    s / nf
}

/// Multi-chain ESS of the given chains (no splitting, no rank normalisation):
/// Vehtari et al. (2021) eq. (10)–(11) with Geyer's initial monotone sequence.
fn ess_raw(chains: &[Vec<f64>]) -> Option<f64> {
    let m = chains.len();
    let n = chains.first()?.len();
    if n < 4 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let (nf, mf) = (n as f64, m as f64);
    let means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
    let vars: Vec<f64> = chains.iter().map(|c| var(c)).collect();
    let w = vars.iter().sum::<f64>() / mf;
    let b_over_n = if m > 1 { var(&means) } else { 0.0 };
    let var_plus = (nf - 1.0) / nf * w + b_over_n;
    if var_plus.is_nan() || var_plus <= 0.0 || !var_plus.is_finite() {
        return None;
    }
    let rho = |t: usize| -> f64 {
        let acov: f64 = chains
            .iter()
            .zip(&means)
            .map(|(c, &mu)| autocov(c, mu, t))
            .sum::<f64>()
            / mf;
        1.0 - (w - acov) / var_plus
    };
    // Geyer: pairs P_k = ρ_{2k} + ρ_{2k+1}, stop at the first non-positive pair,
    // enforce monotone non-increase.
    let mut sum_p = 0.0;
    let mut prev = f64::INFINITY;
    let mut k = 0usize;
    loop {
        let t = 2 * k;
        if t + 1 >= n {
            break;
        }
        let mut p = rho(t) + rho(t + 1);
        if p <= 0.0 {
            break;
        }
        if p > prev {
            p = prev;
        }
        prev = p;
        sum_p += p;
        k += 1;
    }
    // τ = −1 + 2 Σ_{k} P_k ; ESS = M N / τ
    let tau = (-1.0 + 2.0 * sum_p).max(1.0 / libm::log10(mf * nf).max(1.0));
    Some(mf * nf / tau)
}

/// ESS of the draws as they are, with chains split in halves (Stan's basic ESS).
#[must_use]
pub fn ess(chains: &[&[f64]]) -> Option<f64> {
    usable(chains)?;
    ess_raw(&split(chains))
}

/// Rank-normalised split chains: `Φ⁻¹((r − 3/8)/(S + 1/4))` with average ranks `r` of all
/// `S` draws together ([`dpinfer_math::average_ranks`]; ties share their average rank).
fn rank_normalise(chains: &[&[f64]]) -> Vec<Vec<f64>> {
    let sp = split(chains);
    let all: Vec<f64> = sp.iter().flatten().copied().collect();
    #[allow(clippy::cast_precision_loss)]
    let s = all.len() as f64;
    let mut z = dpinfer_math::average_ranks(&all)
        .into_iter()
        .map(|r| dpinfer_math::norm_quantile((r - 0.375) / (s + 0.25)));
    sp.iter()
        .map(|c| z.by_ref().take(c.len()).collect())
        .collect()
}

/// Bulk ESS: ESS of rank-normalised split chains (Vehtari et al. 2021 §4.2).
#[must_use]
pub fn ess_bulk(chains: &[&[f64]]) -> Option<f64> {
    usable(chains)?;
    ess_raw(&rank_normalise(chains))
}

fn quantile(chains: &[&[f64]], p: f64) -> f64 {
    let mut all: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    all.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let i = libm::round((all.len() - 1) as f64 * p) as usize;
    all[i]
}

/// Tail ESS: minimum of the ESS of the indicators `x ≤ q₀.₀₅` and `x ≤ q₀.₉₅`.
#[must_use]
pub fn ess_tail(chains: &[&[f64]]) -> Option<f64> {
    usable(chains)?;
    let mut best = f64::INFINITY;
    for p in [0.05, 0.95] {
        let q = quantile(chains, p);
        let ind: Vec<Vec<f64>> = chains
            .iter()
            .map(|c| c.iter().map(|&x| f64::from(u8::from(x <= q))).collect())
            .collect();
        let refs: Vec<&[f64]> = ind.iter().map(Vec::as_slice).collect();
        best = best.min(ess_raw(&split(&refs))?);
    }
    Some(best)
}

/// Split-R̂ (Gelman et al. BDA3 eq. 11.4 on half-chains), without rank normalisation.
#[must_use]
pub fn split_rhat(chains: &[&[f64]]) -> Option<f64> {
    usable(chains)?;
    rhat_raw(&split(chains))
}

/// Rank-normalised split-R̂ (Vehtari et al. 2021): the maximum of the bulk R̂ and the R̂ of
/// folded draws `|x − median|`.
#[must_use]
pub fn rank_rhat(chains: &[&[f64]]) -> Option<f64> {
    usable(chains)?;
    let bulk = rhat_raw(&rank_normalise(chains))?;
    let med = quantile(chains, 0.5);
    let folded: Vec<Vec<f64>> = chains
        .iter()
        .map(|c| c.iter().map(|x| (x - med).abs()).collect())
        .collect();
    let refs: Vec<&[f64]> = folded.iter().map(Vec::as_slice).collect();
    let tail = rhat_raw(&rank_normalise(&refs))?;
    Some(bulk.max(tail))
}

fn rhat_raw(chains: &[Vec<f64>]) -> Option<f64> {
    let m = chains.len();
    let n = chains.first()?.len();
    if m < 2 || n < 2 {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let nf = n as f64;
    let means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
    #[allow(clippy::cast_precision_loss)]
    let w = chains.iter().map(|c| var(c)).sum::<f64>() / m as f64;
    let b = nf * var(&means);
    let var_plus = (nf - 1.0) / nf * w + b / nf;
    if w.is_nan() || w <= 0.0 {
        return None;
    }
    Some(libm::sqrt(var_plus / w))
}

/// Monte Carlo standard error of the mean: `sd / √ESS` (ESS from [`ess`]).
#[must_use]
pub fn mcse_mean(chains: &[&[f64]]) -> Option<f64> {
    let e = ess(chains)?;
    let all: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    Some(libm::sqrt(var(&all) / e))
}

/// Summary of one scalar quantity over several chains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Pooled mean.
    pub mean: f64,
    /// Pooled standard deviation.
    pub sd: f64,
    /// Monte Carlo standard error of the mean.
    pub mcse: f64,
    /// Bulk ESS.
    pub ess_bulk: f64,
    /// Tail ESS.
    pub ess_tail: f64,
    /// Rank-normalised split-R̂.
    pub rhat: f64,
}

/// All diagnostics of one scalar over `chains` (at least 2 chains of ≥ 4 draws each for R̂).
#[must_use]
pub fn summarize(chains: &[&[f64]]) -> Option<Summary> {
    let all: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    Some(Summary {
        mean: mean(&all),
        sd: libm::sqrt(var(&all)),
        mcse: mcse_mean(chains)?,
        ess_bulk: ess_bulk(chains)?,
        ess_tail: ess_tail(chains)?,
        rhat: if chains.len() >= 2 {
            rank_rhat(chains)?
        } else {
            split_rhat(chains)?
        },
    })
}

/// Squared MMD (biased V-statistic) between samples `x` (`nx × d`, row-major) and `y`
/// (`ny × d`) with the Gaussian RBF kernel `exp(−‖a−b‖²/(2h²))` (thesis §7.1; Gretton et al.
/// 2012). Returns `None` for empty input, `d = 0`, mismatched lengths or bad `h`.
#[must_use]
pub fn mmd2(x: &[f64], y: &[f64], d: usize, h: f64) -> Option<f64> {
    if d == 0
        || x.is_empty()
        || y.is_empty()
        || !x.len().is_multiple_of(d)
        || !y.len().is_multiple_of(d)
        || !(h > 0.0 && h.is_finite())
    {
        return None;
    }
    let k = |a: &[f64], b: &[f64]| {
        let s: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
        libm::exp(-s / (2.0 * h * h))
    };
    let mean_k = |p: &[f64], q: &[f64]| {
        let mut s = 0.0;
        for a in p.chunks_exact(d) {
            for b in q.chunks_exact(d) {
                s += k(a, b);
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let c = ((p.len() / d) * (q.len() / d)) as f64;
        s / c
    };
    let v = mean_k(x, x) + mean_k(y, y) - 2.0 * mean_k(x, y);
    Some(v.max(0.0))
}

/// Thesis bandwidth rule (§7.1, after Gretton et al. 2012): the median of the pairwise
/// distances between `m` points drawn with replacement from each sample (indices from
/// `rng`; the thesis uses m = 50).
pub fn median_bandwidth<R: rand_core::Rng + ?Sized>(
    x: &[f64],
    y: &[f64],
    d: usize,
    m: usize,
    rng: &mut R,
) -> Option<f64> {
    if d == 0
        || m == 0
        || x.len() < d
        || y.len() < d
        || !x.len().is_multiple_of(d)
        || !y.len().is_multiple_of(d)
    {
        return None;
    }
    let mut pts: Vec<&[f64]> = Vec::with_capacity(2 * m);
    for src in [x, y] {
        let rows = src.len() / d;
        for _ in 0..m {
            let i = crate::rng::below(rng, rows);
            pts.push(&src[i * d..(i + 1) * d]);
        }
    }
    let mut dists = Vec::new();
    for i in 0..pts.len() {
        for j in i + 1..pts.len() {
            let s: f64 = pts[i]
                .iter()
                .zip(pts[j])
                .map(|(u, v)| (u - v) * (u - v))
                .sum();
            dists.push(libm::sqrt(s));
        }
    }
    dists.sort_by(f64::total_cmp);
    let med = dists[dists.len() / 2];
    if med > 0.0 { Some(med) } else { None }
}
