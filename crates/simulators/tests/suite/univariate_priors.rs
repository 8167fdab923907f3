//! Truncated normal, gamma, beta and exponential priors: log densities against 50-digit mpmath
//! values (`data/univariate_priors.py`), samplers by seeded KS tests against closed-form CDFs,
//! each at false-failure probability 1e-6 (asymptotic Kolmogorov bound), and validation.

use crate::common;
use common::{ks_crit_1e6, ks_stat, mean_var};

use dpinfer_math::{norm_cdf, norm_sf};
use dpinfer_simulators::prior::{Beta, Exponential, Gamma, TruncatedNormal};
#[cfg(feature = "alloc")]
use dpinfer_simulators::prior::{DeclaredPrior, Dirichlet, Marginal, Uniform};
use dpinfer_simulators::{Prior, SimError, SimStream};

fn draws<P: Prior>(p: &P, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SimStream::new(seed, 0);
    (0..n)
        .map(|_| {
            let mut x = [0.0];
            p.sample(&mut rng, &mut x).unwrap();
            x[0]
        })
        .collect()
}

#[test]
fn log_densities_match_mpmath() {
    let text = include_str!("../data/univariate_priors.txt");
    let mut n = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let v: Vec<f64> = f[1..].iter().map(|s| s.parse().unwrap()).collect();
        let (p1, p2, p3, p4, x, want) = (v[0], v[1], v[2], v[3], v[4], v[5]);
        let got = match f[0] {
            "gamma" => Gamma::new(p1, p2).unwrap().ln_density(&[x]),
            "beta" => Beta::new(p1, p2).unwrap().ln_density(&[x]),
            "exponential" => Exponential::new(p1).unwrap().ln_density(&[x]),
            "truncated-normal" => TruncatedNormal::new(p1, p2, p3, p4)
                .unwrap()
                .ln_density(&[x]),
            other => panic!("unknown {other}"),
        };
        // Relative 1e-12 plus an absolute 1e-12 (ln_gamma and the log-space mass are accurate
        // to a few ulp; x·ln terms add cancellation near ln pdf ≈ 0).
        let tol = 1e-12 * (1.0 + want.abs()) + 1e-12;
        assert!(
            (got - want).abs() <= tol,
            "{line}: got {got}, |err| {:.2e}",
            (got - want).abs()
        );
        n += 1;
    }
    assert_eq!(n, 73);
}

#[test]
fn supports_and_outside() {
    let g = Gamma::new(2.0, 1.0).unwrap();
    assert_eq!(g.ln_density(&[0.0]), f64::NEG_INFINITY);
    assert_eq!(g.ln_density(&[-1.0]), f64::NEG_INFINITY);
    assert!(!g.in_support(&[f64::NAN]));
    let b = Beta::new(2.0, 2.0).unwrap();
    assert!(!b.in_support(&[0.0]) && !b.in_support(&[1.0]) && b.in_support(&[0.5]));
    let e = Exponential::new(1.0).unwrap();
    assert!(e.in_support(&[0.0]) && !e.in_support(&[-1e-300]));
    let t = TruncatedNormal::new(0.0, 1.0, -1.0, 1.0).unwrap();
    assert!(t.in_support(&[1.0]) && !t.in_support(&[1.000_000_1]));
    assert_eq!(t.ln_density(&[0.0, 0.0]), f64::NEG_INFINITY);
}

#[test]
fn validation_is_typed() {
    fn bad<T>(r: Result<T, SimError>) -> bool {
        matches!(r, Err(SimError::InvalidParameter { .. }))
    }
    assert!(bad(Gamma::new(0.0, 1.0)));
    assert!(bad(Gamma::new(1.0, f64::NAN)));
    assert!(bad(Gamma::new(f64::INFINITY, 1.0)));
    assert!(bad(Beta::new(1.0, -1.0)));
    assert!(bad(Beta::new(f64::NAN, 1.0)));
    assert!(bad(Exponential::new(0.0)));
    assert!(bad(TruncatedNormal::new(0.0, 1.0, 1.0, 1.0)));
    assert!(bad(TruncatedNormal::new(
        0.0,
        1.0,
        f64::NEG_INFINITY,
        f64::INFINITY
    )));
    assert!(bad(TruncatedNormal::new(0.0, 1.0, f64::NAN, 1.0)));
    assert!(bad(TruncatedNormal::new(0.0, 0.0, 0.0, 1.0)));
    // No mass in f64 log space: 1e5 standard deviations out.
    assert!(bad(TruncatedNormal::new(0.0, 1.0, 1e200, f64::INFINITY)));
    #[cfg(feature = "alloc")]
    assert!(matches!(
        DeclaredPrior::new(vec![]),
        Err(SimError::InvalidSize { .. })
    ));
}

#[test]
fn gamma_ks() {
    let n = 20_000;
    // Gamma(3, rate 2): CDF 1 − e^{−2x}(1 + 2x + 2x²).
    let mut xs = draws(&Gamma::new(3.0, 2.0).unwrap(), n, 1);
    let d = ks_stat(&mut xs, |x| {
        let y = 2.0 * x;
        1.0 - (-y).exp() * (1.0 + y + 0.5 * y * y)
    });
    assert!(d < ks_crit_1e6(n), "D = {d}");
    // Gamma(0.5, rate 4): 4X ~ χ²₁/2, CDF 1 − 2Φ̄(√(2·4x)).
    let mut xs = draws(&Gamma::new(0.5, 4.0).unwrap(), n, 2);
    let d = ks_stat(&mut xs, |x| 1.0 - 2.0 * norm_sf((8.0 * x).sqrt()));
    assert!(d < ks_crit_1e6(n), "D = {d}");
}

#[test]
fn beta_ks() {
    let n = 20_000;
    // Beta(2, 3): CDF 6x² − 8x³ + 3x⁴.
    let mut xs = draws(&Beta::new(2.0, 3.0).unwrap(), n, 3);
    let d = ks_stat(&mut xs, |x| x * x * (6.0 - 8.0 * x + 3.0 * x * x));
    assert!(d < ks_crit_1e6(n), "D = {d}");
    // Beta(½, ½) (arcsine): CDF (2/π) asin √x.
    let mut xs = draws(&Beta::new(0.5, 0.5).unwrap(), n, 4);
    let d = ks_stat(&mut xs, |x| 2.0 / core::f64::consts::PI * x.sqrt().asin());
    assert!(d < ks_crit_1e6(n), "D = {d}");
    // Beta(0.01, 1): CDF x^0.01 — tiny shapes stay inside (0, 1) (log-space draw).
    let mut xs = draws(&Beta::new(0.01, 1.0).unwrap(), n, 5);
    assert!(xs.iter().all(|&x| x > 0.0 && x < 1.0));
    let d = ks_stat(&mut xs, |x| x.powf(0.01));
    assert!(d < ks_crit_1e6(n), "D = {d}");
}

#[test]
fn exponential_ks() {
    let n = 20_000;
    let mut xs = draws(&Exponential::new(0.25).unwrap(), n, 6);
    let d = ks_stat(&mut xs, |x| 1.0 - (-0.25 * x).exp());
    assert!(d < ks_crit_1e6(n), "D = {d}");
}

#[test]
fn truncated_normal_ks_every_regime() {
    let n = 20_000;
    // (mean, sd, lo, hi): normal proposal (wide, around 0), uniform proposal (short, around
    // 0), exponential tail, uniform tail (short interval in a tail), left tail (reflected),
    // one-sided infinite.
    let cases = [
        (0.0, 1.0, -3.0, 3.0),
        (1.0, 2.0, 0.0, 2.0),
        (0.0, 1.0, 4.0, f64::INFINITY),
        (0.0, 1.0, 5.0, 5.1),
        (10.0, 3.0, f64::NEG_INFINITY, -20.0),
        (0.0, 1.0, -0.5, f64::INFINITY),
    ];
    for (k, &(m, s, lo, hi)) in cases.iter().enumerate() {
        let p = TruncatedNormal::new(m, s, lo, hi).unwrap();
        let mut xs = draws(&p, n, 10 + k as u64);
        assert!(xs.iter().all(|&x| x >= lo && x <= hi), "case {k}");
        let a = (lo - m) / s;
        let b = (hi - m) / s;
        // CDF from the side of the interval where the tail probabilities do not cancel.
        let d = if a >= 0.0 {
            let z = norm_sf(a) - norm_sf(b);
            ks_stat(&mut xs, |x| (norm_sf(a) - norm_sf((x - m) / s)) / z)
        } else {
            let z = norm_cdf(b) - norm_cdf(a);
            ks_stat(&mut xs, |x| (norm_cdf((x - m) / s) - norm_cdf(a)) / z)
        };
        assert!(d < ks_crit_1e6(n), "case {k}: D = {d}");
    }
}

#[test]
fn truncated_normal_far_tail_moments() {
    // [40, ∞): mean = 1/R(40) (inverse Mills ratio), var = 1 + 40·μ − μ²; asymptotic series
    // 1/R(x) = x + 1/x − 2/x³ + 10/x⁵ − 74/x⁷ (error < 1e-12 at x = 40). z-tests on the mean
    // at two-sided 1e-6 (|z| < 4.89); n = 20 000.
    let p = TruncatedNormal::new(0.0, 1.0, 40.0, f64::INFINITY).unwrap();
    let xs = draws(&p, 20_000, 99);
    let x: f64 = 40.0;
    let mu = x + 1.0 / x - 2.0 / x.powi(3) + 10.0 / x.powi(5) - 74.0 / x.powi(7);
    let var = 1.0 + x * mu - mu * mu;
    let (m, _) = mean_var(&xs);
    let z = (m - mu) / (var / xs.len() as f64).sqrt();
    assert!(z.abs() < 4.89, "z = {z}");
}

#[cfg(feature = "alloc")]
#[test]
fn declared_prior_is_the_product() {
    let p = DeclaredPrior::new(vec![
        Marginal::Uniform(Uniform::new(-1.0, 3.0).unwrap()),
        Marginal::Dirichlet(Dirichlet::new(3, 2.0).unwrap()),
        Marginal::Gamma(Gamma::new(3.0, 2.0).unwrap()),
    ])
    .unwrap();
    assert_eq!(p.dim(), 5);
    let th = [0.5, 0.2, 0.3, 0.5, 1.5];
    let want = Uniform::new(-1.0, 3.0).unwrap().ln_density(&th[..1])
        + Dirichlet::new(3, 2.0).unwrap().ln_density(&th[1..4])
        + Gamma::new(3.0, 2.0).unwrap().ln_density(&th[4..]);
    assert_eq!(p.ln_density(&th), want);
    assert!(p.in_support(&th));
    assert!(!p.in_support(&[0.5, 0.2, 0.3, 0.6, 1.5]));
    assert_eq!(p.ln_density(&th[..4]), f64::NEG_INFINITY);
    // Sampling draws the blocks in order from one stream.
    let mut a = [0.0; 5];
    p.sample(&mut SimStream::new(3, 1), &mut a).unwrap();
    let mut rng = SimStream::new(3, 1);
    let mut b = [0.0; 5];
    Uniform::new(-1.0, 3.0)
        .unwrap()
        .sample(&mut rng, &mut b[..1])
        .unwrap();
    Dirichlet::new(3, 2.0)
        .unwrap()
        .sample(&mut rng, &mut b[1..4])
        .unwrap();
    Gamma::new(3.0, 2.0)
        .unwrap()
        .sample(&mut rng, &mut b[4..])
        .unwrap();
    assert_eq!(a, b);
    assert!(matches!(
        p.sample(&mut rng, &mut b[..4]),
        Err(SimError::DimensionMismatch { .. })
    ));
}
