//! Shared statistical helpers for the integration tests (included with `mod common;`).
#![allow(dead_code)]

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// The tests' seeded RNG (Xoshiro256++).
pub(crate) fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// One-sided standard-normal quantile for α = 1e-6 (z such that P(Z > z) = 1e-6).
pub(crate) const Z_1E6: f64 = 4.753424308822899;

/// Two-sided threshold for a z-statistic at false-alarm probability 1e-6: P(|Z| > 4.8916) = 1e-6.
pub(crate) const Z2_1E6: f64 = 4.891638475698882;

/// Wilson–Hilferty approximation of the chi-square upper quantile with `k` degrees of freedom
/// at one-sided level 1e-6.
pub(crate) fn chi2_crit_1e6(k: usize) -> f64 {
    let k = k as f64;
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + Z_1E6 * a.sqrt()).powi(3)
}

/// Kolmogorov critical value at α = 1e-6 for sample size n (asymptotic:
/// sqrt(ln(2/α)/2)/sqrt(n)).
pub(crate) fn ks_crit_1e6(n: usize) -> f64 {
    ((2.0f64 / 1e-6).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// KS statistic of `xs` (sorted in place) against `cdf`.
pub(crate) fn ks_stat(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        let f = cdf(x);
        d = d
            .max((f - i as f64 / n).abs())
            .max(((i + 1) as f64 / n - f).abs());
    }
    d
}

/// Sample mean and (unbiased) variance.
pub(crate) fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Pearson chi-square statistic of observed counts against expected counts.
pub(crate) fn chi2(obs: &[f64], exp: &[f64]) -> f64 {
    obs.iter()
        .zip(exp)
        .map(|(o, e)| (o - e) * (o - e) / e)
        .sum()
}

/// Any f64 for the "no panic on any input" properties, the special values heavily
/// represented: NaN, ±∞, ±0, subnormals, ±f64::MAX, any bit pattern, and ordinary values.
pub(crate) fn any_f64() -> impl proptest::strategy::Strategy<Value = f64> {
    use proptest::prelude::*;
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(5e-324),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(f64::MAX),
        Just(-f64::MAX),
        any::<f64>(),
        -10.0..10.0f64,
        0.0..1.0f64,
    ]
}
