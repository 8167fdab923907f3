//! Shared helpers for the statistical tests.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_lossless,
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap
)]
#![allow(dead_code)]

use chacha20::ChaCha20Rng;
use rand_core::SeedableRng;

/// The named, test-only deterministic noise RNG: ChaCha20 (implements `CryptoRng`).
pub(crate) fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Upper `alpha` critical value of χ²(df) by the Wilson–Hilferty approximation
/// (relative error < 1% for df ≥ 3 at the tail levels used here).
pub(crate) fn chi2_critical(df: usize, alpha: f64) -> f64 {
    let k = df as f64;
    let z = dpinfer_math::norm_quantile(1.0 - alpha);
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Pearson χ² statistic of integer samples against a pmf on ℤ. Cells with expected count
/// below 5 are pooled into the two tails. Returns (statistic, degrees of freedom).
pub(crate) fn chi_square_z(
    samples: &[i64],
    pmf: impl Fn(i64) -> f64,
    lo: i64,
    hi: i64,
) -> (f64, usize) {
    let n = samples.len() as f64;
    // cells: (-inf, lo), lo..=hi, (hi, inf)
    let width = (hi - lo + 1) as usize;
    let mut counts = vec![0f64; width + 2];
    for &s in samples {
        let idx = if s < lo {
            0
        } else if s > hi {
            width + 1
        } else {
            (s - lo) as usize + 1
        };
        counts[idx] += 1.0;
    }
    let mut probs = vec![0f64; width + 2];
    let mut inside = 0.0;
    for (i, p) in probs.iter_mut().enumerate().skip(1).take(width) {
        *p = pmf(lo + i as i64 - 1);
        inside += *p;
    }
    // split the remaining mass between the tails by symmetry-agnostic direct sums
    let mut left = 0.0;
    let mut z = lo - 1;
    loop {
        let p = pmf(z);
        left += p;
        if p < 1e-18 {
            break;
        }
        z -= 1;
    }
    probs[0] = left;
    probs[width + 1] = (1.0 - inside - left).max(0.0);
    // pool small cells into neighbours (merge from the outside in)
    let merged = pool_cells(counts.into_iter().zip(probs), |(_, p)| p * n >= 5.0);
    let stat: f64 = merged
        .iter()
        .map(|(o, p)| {
            let e = p * n;
            (o - e) * (o - e) / e
        })
        .sum();
    (stat, merged.len() - 1)
}

/// Pools consecutive cells (pairs of sums) until the pooled cell is `big_enough`; a last
/// pool that never gets there is added to the cell before it.
pub(crate) fn pool_cells(
    cells: impl IntoIterator<Item = (f64, f64)>,
    big_enough: impl Fn((f64, f64)) -> bool,
) -> Vec<(f64, f64)> {
    let mut pooled: Vec<(f64, f64)> = Vec::new();
    let mut acc = (0.0, 0.0);
    for c in cells {
        acc.0 += c.0;
        acc.1 += c.1;
        if big_enough(acc) {
            pooled.push(acc);
            acc = (0.0, 0.0);
        }
    }
    if let Some(last) = pooled.last_mut() {
        last.0 += acc.0;
        last.1 += acc.1;
    }
    pooled
}

/// Two-sided binomial z-score of `k` successes in `n` trials with rate `p`.
pub(crate) fn z_score(k: u64, n: u64, p: f64) -> f64 {
    let n = n as f64;
    (k as f64 - n * p) / (n * p * (1.0 - p)).sqrt()
}

/// |z| threshold for a two-sided test at false-alarm probability 1e-6.
pub(crate) const Z_1E6: f64 = 4.891638;
