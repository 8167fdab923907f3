//! Statistical tests of the exact samplers (seeded ChaCha20; false-alarm rates stated).
//!
//! Each χ² test rejects at α = 1e-6 (upper tail of χ²(df), Wilson–Hilferty critical value),
//! each z-test at |z| > 4.8916 (two-sided α = 1e-6). Over the ~25 checks in this file the
//! probability that a *correct* sampler fails at a random seed is below 3e-5; the seeds are
//! fixed, so the outcome is deterministic.

use crate::common;

use common::{Z_1E6, chi_square_z, chi2_critical, rng, z_score};
use dpinfer_mechanisms::MechanismError;
use dpinfer_mechanisms::sampling::*;

const ALPHA: f64 = 1e-6;

#[test]
fn uniform_below_chi_square() {
    let mut r = rng(1);
    for &n in &[1u64, 2, 6, 10, 37] {
        let draws = 20_000;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[uniform_below(&mut r, n).unwrap() as usize] += 1;
        }
        if n == 1 {
            assert_eq!(counts[0], draws);
            continue;
        }
        let e = draws as f64 / n as f64;
        let stat: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        assert!(
            stat < chi2_critical(n as usize - 1, ALPHA),
            "n={n} stat={stat}"
        );
    }
}

#[test]
fn uniform_below_has_no_modulo_bias() {
    // n = 3·2^62: naive `r % n` would put probability 1/2 on [0, 2^62) instead of 1/3.
    let n = 3u64 << 62;
    let mut r = rng(2);
    let draws = 30_000u64;
    let k = (0..draws)
        .filter(|_| uniform_below(&mut r, n).unwrap() < 1u64 << 62)
        .count() as u64;
    assert!(z_score(k, draws, 1.0 / 3.0).abs() < Z_1E6, "k={k}");
    // u128 path, n = 3·2^126
    let n = 3u128 << 126;
    let k = (0..draws)
        .filter(|_| uniform_below_u128(&mut r, n).unwrap() < 1u128 << 126)
        .count() as u64;
    assert!(z_score(k, draws, 1.0 / 3.0).abs() < Z_1E6, "k={k}");
}

#[test]
fn uniform_fixed_matches_and_reports_exhaustion() {
    let mut r = rng(3);
    let draws = 20_000;
    let mut counts = [0u64; 5];
    for _ in 0..draws {
        counts[uniform_below_fixed(&mut r, 5, 4).unwrap() as usize] += 1;
    }
    let e = draws as f64 / 5.0;
    let stat: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
    assert!(stat < chi2_critical(4, ALPHA), "stat={stat}");
    // n = 2^63 + 1 rejects 2^63 − 1 of 2^64 values: with 1 trial, P(fail) ≈ 1/2.
    let n = (1u64 << 63) + 1;
    let fails = (0..2000)
        .filter(|_| uniform_below_fixed(&mut r, n, 1) == Err(MechanismError::TrialsExhausted))
        .count() as u64;
    assert!(z_score(fails, 2000, 0.5 - 0.5f64.powi(63)).abs() < Z_1E6);
    assert_eq!(
        uniform_below_fixed(&mut r, 0, 3),
        Err(MechanismError::ZeroDenominator)
    );
    assert_eq!(
        uniform_below_fixed(&mut r, 3, 0),
        Err(MechanismError::ZeroDenominator)
    );
}

#[test]
fn bernoulli_rational_rates() {
    let mut r = rng(4);
    for &(p, q) in &[(1u128, 3u128), (7, 10), (1, 1_000_000_007), (999, 1000)] {
        let draws = 40_000u64;
        let k = (0..draws)
            .filter(|_| bernoulli(&mut r, p, q).unwrap())
            .count() as u64;
        let rate = p as f64 / q as f64;
        if rate * draws as f64 >= 1.0 && (1.0 - rate) * draws as f64 >= 1.0 {
            assert!(z_score(k, draws, rate).abs() < Z_1E6, "p/q={p}/{q} k={k}");
        } else {
            // P(k ≥ 3) for Binomial(4e4, 1e-9) < 1e-13
            assert!(k < 3, "k={k}");
        }
        let kf = (0..draws)
            .filter(|_| bernoulli_fixed(&mut r, p as u64, q as u64, 3).unwrap())
            .count() as u64;
        if rate * draws as f64 >= 1.0 && (1.0 - rate) * draws as f64 >= 1.0 {
            assert!(
                z_score(kf, draws, rate).abs() < Z_1E6,
                "fixed p/q={p}/{q} k={kf}"
            );
        }
    }
    assert_eq!(
        bernoulli(&mut r, 2, 1),
        Err(MechanismError::OutOfRange { param: "p" })
    );
    assert_eq!(
        bernoulli(&mut r, 0, 0),
        Err(MechanismError::ZeroDenominator)
    );
}

#[test]
fn bernoulli_exp_neg_rates() {
    let mut r = rng(5);
    for &(num, den) in &[(1u128, 2u128), (1, 1), (27, 10), (5, 1), (1, 1000)] {
        let draws = 40_000u64;
        let k = (0..draws)
            .filter(|_| bernoulli_exp_neg(&mut r, num, den).unwrap())
            .count() as u64;
        let p = (-(num as f64) / den as f64).exp();
        assert!(
            z_score(k, draws, p).abs() < Z_1E6,
            "γ={num}/{den} k={k} p={p}"
        );
    }
    assert!(bernoulli_exp_neg(&mut r, 0, 5).unwrap());
    assert_eq!(
        bernoulli_exp_neg(&mut r, 1, 0),
        Err(MechanismError::ZeroDenominator)
    );
    // Huge γ: e^{-1e30} = 0 in every way; the early exit keeps the work O(1).
    let ones = (0..1000)
        .filter(|_| bernoulli_exp_neg(&mut r, 10u128.pow(30), 1).unwrap())
        .count();
    assert_eq!(ones, 0);
}

fn dlap_pmf(t: u64, s: u64) -> impl Fn(i64) -> f64 {
    let a = s as f64 / t as f64;
    move |z| (a / 2.0).tanh() * (-a * z.unsigned_abs() as f64).exp()
}

#[test]
fn discrete_laplace_pmf_chi_square() {
    let mut r = rng(6);
    for &(t, s) in &[(1u64, 1u64), (3, 2), (10, 1), (1, 4)] {
        let draws = 40_000;
        let samples: Vec<i64> = (0..draws)
            .map(|_| discrete_laplace(&mut r, t, s).unwrap())
            .collect();
        let pmf = dlap_pmf(t, s);
        let lim = (t as i64 * 8 / s as i64).max(3);
        let (stat, df) = chi_square_z(&samples, &pmf, -lim, lim);
        assert!(
            stat < chi2_critical(df, ALPHA),
            "t/s={t}/{s} stat={stat} df={df}"
        );
        // P(0) on its own
        let zeros = samples.iter().filter(|&&z| z == 0).count() as u64;
        assert!(z_score(zeros, draws, pmf(0)).abs() < Z_1E6);
        // upper tail P(Z ≥ 3·scale)
        let c = (3 * t).div_ceil(s) as i64;
        let tail = samples.iter().filter(|&&z| z >= c).count() as u64;
        let a = s as f64 / t as f64;
        let p_tail = (-a * c as f64).exp() / (1.0 + (-a).exp());
        assert!(z_score(tail, draws, p_tail).abs() < Z_1E6, "tail");
    }
}

fn dgauss_pmf(sigma2: f64) -> impl Fn(i64) -> f64 {
    let lim = (40.0 * sigma2.sqrt()) as i64 + 10;
    let norm: f64 = (-lim..=lim)
        .map(|y| (-(y as f64).powi(2) / (2.0 * sigma2)).exp())
        .sum();
    move |y| (-(y as f64).powi(2) / (2.0 * sigma2)).exp() / norm
}

#[test]
fn discrete_gaussian_pmf_chi_square() {
    let mut r = rng(7);
    for &(num, den) in &[(1u64, 1u64), (9, 2), (100, 1), (1, 9)] {
        let sigma2 = num as f64 / den as f64;
        let draws = 40_000;
        let samples: Vec<i64> = (0..draws)
            .map(|_| discrete_gaussian(&mut r, num, den).unwrap())
            .collect();
        let pmf = dgauss_pmf(sigma2);
        let lim = (5.0 * sigma2.sqrt()).ceil() as i64 + 1;
        let (stat, df) = chi_square_z(&samples, &pmf, -lim, lim);
        assert!(df >= 2);
        assert!(
            stat < chi2_critical(df, ALPHA),
            "σ²={sigma2} stat={stat} df={df}"
        );
        let zeros = samples.iter().filter(|&&z| z == 0).count() as u64;
        assert!(z_score(zeros, draws, pmf(0)).abs() < Z_1E6);
        // second moment: E[Y²] < σ² for the discrete Gaussian (CKS20 Prop. 19); compare with
        // the numerically exact value. Var(Y²) ≤ E[Y⁴] ≈ 3σ⁴, so the 1e-6 band is 4.9·√(3/N)·σ².
        let m2_exact: f64 = (-(40 * lim)..=(40 * lim))
            .map(|y| (y * y) as f64 * pmf(y))
            .sum();
        let m2: f64 = samples.iter().map(|&y| (y * y) as f64).sum::<f64>() / draws as f64;
        let band = Z_1E6 * (3.0f64 / draws as f64).sqrt() * sigma2.max(m2_exact) * 1.5;
        assert!((m2 - m2_exact).abs() < band, "m2={m2} exact={m2_exact}");
    }
}

#[test]
fn discrete_gaussian_large_sigma_moments() {
    // The size used by the Gaussian mechanism: σ ≈ 2^24 grid steps.
    let mut r = rng(8);
    let sigma = (1u64 << 24) - 3;
    let draws = 4000;
    let samples: Vec<f64> = (0..draws)
        .map(|_| discrete_gaussian(&mut r, sigma * sigma, 1).unwrap() as f64 / sigma as f64)
        .collect();
    let mean = samples.iter().sum::<f64>() / draws as f64;
    let var = samples.iter().map(|x| x * x).sum::<f64>() / draws as f64;
    // mean ~ N(0, 1/N): band 4.9/√N; var: sd ≈ √(2/N)
    assert!(mean.abs() < Z_1E6 / (draws as f64).sqrt(), "mean={mean}");
    assert!(
        (var - 1.0).abs() < Z_1E6 * (2.0 / draws as f64).sqrt(),
        "var={var}"
    );
}

#[test]
fn overflow_is_an_error_not_a_resample() {
    let mut r = rng(9);
    // σ² = 2^64−1: 2·num·den·t² overflows u128 → error before any sample.
    assert_eq!(
        discrete_gaussian(&mut r, u64::MAX, 1),
        Err(MechanismError::Overflow)
    );
    assert_eq!(
        discrete_gaussian(&mut r, 0, 1),
        Err(MechanismError::ZeroDenominator)
    );
    assert_eq!(
        discrete_laplace(&mut r, 0, 1),
        Err(MechanismError::ZeroDenominator)
    );
    // scale 2^64−1 with s = 1: any V ≥ 1 gives |Y| > i64::MAX → Overflow, never a clipped value.
    let mut overflows = 0;
    for _ in 0..200 {
        match discrete_laplace(&mut r, u64::MAX, 1) {
            Ok(y) => assert!(y.unsigned_abs() < u64::MAX),
            Err(e) => {
                assert_eq!(e, MechanismError::Overflow);
                overflows += 1;
            }
        }
    }
    // P(V ≥ 1 or |U| > i64::MAX) ≥ 1 − (1−e^{-1})·½ ≈ 0.68; P(< 80 of 200) < 1e-20
    assert!(overflows > 80, "overflows={overflows}");
}

mod failing {
    use core::fmt;

    /// A fallible "crypto" RNG that fails after `left` words (test-only).
    pub(crate) struct Failing {
        pub(crate) left: u32,
    }
    #[derive(Debug)]
    pub(crate) struct Dry;
    impl fmt::Display for Dry {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("entropy source is dry")
        }
    }
    impl core::error::Error for Dry {}
    impl rand_core::TryRng for Failing {
        type Error = Dry;
        fn try_next_u32(&mut self) -> Result<u32, Dry> {
            self.try_next_u64().map(|v| v as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Dry> {
            if self.left == 0 {
                return Err(Dry);
            }
            self.left -= 1;
            Ok(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(u64::from(self.left) + 1))
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Dry> {
            for b in dst {
                *b = self.try_next_u64()? as u8;
            }
            Ok(())
        }
    }
    impl rand_core::TryCryptoRng for Failing {}
}

#[test]
fn entropy_failure_is_an_error() {
    let mut f = failing::Failing { left: 0 };
    assert_eq!(uniform_below(&mut f, 10), Err(MechanismError::Entropy));
    assert_eq!(discrete_laplace(&mut f, 3, 1), Err(MechanismError::Entropy));
    assert_eq!(
        discrete_gaussian(&mut f, 3, 1),
        Err(MechanismError::Entropy)
    );
    // fails part-way through a sample: still an error, no output
    for left in 0..6 {
        let mut f = failing::Failing { left };
        match discrete_gaussian(&mut f, 1000, 1) {
            Ok(_) | Err(MechanismError::Entropy) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
}

#[test]
fn value_stability_chacha20() {
    // Pinned outputs of the named PRNG ChaCha20 (seed 42). A change here changes every
    // released value for a given noise seed; only change it deliberately.
    let mut r = rng(42);
    let u: Vec<u64> = (0..4)
        .map(|_| uniform_below(&mut r, 1000).unwrap())
        .collect();
    let l: Vec<i64> = (0..4)
        .map(|_| discrete_laplace(&mut r, 7, 2).unwrap())
        .collect();
    let g: Vec<i64> = (0..4)
        .map(|_| discrete_gaussian(&mut r, 50, 1).unwrap())
        .collect();
    let b: Vec<bool> = (0..4)
        .map(|_| bernoulli_exp_neg(&mut r, 3, 4).unwrap())
        .collect();
    assert_eq!(
        (u, l, g, b),
        (
            PIN_U.to_vec(),
            PIN_L.to_vec(),
            PIN_G.to_vec(),
            PIN_B.to_vec()
        )
    );
}

const PIN_U: [u64; 4] = [256, 305, 821, 736];
const PIN_L: [i64; 4] = [-1, 0, -7, 0];
const PIN_G: [i64; 4] = [13, -11, 2, 0];
const PIN_B: [bool; 4] = [false, true, true, false];
