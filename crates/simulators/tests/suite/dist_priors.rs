//! Samplers of `dist` and the priors, against closed forms (seeded; false-alarm rates stated).

use crate::common;
use common::*;

use dpinfer_simulators::dist;
use dpinfer_simulators::prior::{Dirichlet, IidNormal, LogNormal, Normal, Product, Uniform};
use dpinfer_simulators::{Prior, SimError};
use proptest::prelude::*;

#[test]
fn std_normal_ks() {
    // KS at α = 1e-6 against Φ from dpinfer-math.
    let mut r = rng(1);
    let n = 20_000;
    let mut xs: Vec<f64> = (0..n).map(|_| dist::std_normal(&mut r)).collect();
    let d = ks_stat(&mut xs, dpinfer_math::norm_cdf);
    assert!(d < ks_crit_1e6(n), "D = {d}");
}

#[test]
fn exponential_ziggurat_bins_and_tail() {
    // 400 000 draws binned at the quantiles of Exp(1) for probabilities 1/50 (50 equiprobable
    // bins) plus the tail beyond the ziggurat's r = 7.697 split off the last bin: Pearson χ²
    // against exact probabilities, one-sided α = 1e-6; the tail mass e^{-r} = 4.5e-4 gets a
    // z-test at two-sided α = 1e-6.
    let n = 400_000;
    let mut r = rng(13);
    let edges: Vec<f64> = (1..50).map(|k| -(1.0 - k as f64 / 50.0).ln()).collect();
    let r_tail = 7.69711747013105;
    let mut counts = vec![0.0; 51];
    for _ in 0..n {
        let x = dist::exponential(&mut r);
        assert!(x >= 0.0 && x.is_finite());
        let k = edges.partition_point(|&e| e <= x);
        if k == 49 && x > r_tail {
            counts[50] += 1.0
        } else {
            counts[k] += 1.0
        }
    }
    let pt = (-r_tail).exp();
    let mut exp = vec![n as f64 / 50.0; 51];
    exp[49] -= pt * n as f64;
    exp[50] = pt * n as f64;
    assert!(chi2(&counts, &exp) < chi2_crit_1e6(50));
    let z = (counts[50] - exp[50]) / (exp[50] * (1.0 - pt)).sqrt();
    assert!(z.abs() < Z2_1E6, "tail z = {z}");
}

#[test]
fn exponential_and_gamma_ks() {
    // KS at α = 1e-6 each: Exp(1) = Gamma(1); Gamma(2) has CDF 1 − (1 + x)e^{−x}.
    let n = 20_000;
    let mut r = rng(2);
    let mut xs: Vec<f64> = (0..n).map(|_| dist::exponential(&mut r)).collect();
    assert!(ks_stat(&mut xs, |x| 1.0 - (-x).exp()) < ks_crit_1e6(n));
    let mut ys: Vec<f64> = (0..n).map(|_| dist::gamma(&mut r, 2.0)).collect();
    assert!(ks_stat(&mut ys, |x| 1.0 - (1.0 + x) * (-x).exp()) < ks_crit_1e6(n));
    // Gamma(0.5) = χ²₁/2: CDF erf(√x) = 1 − 2Φ(−√(2x))
    let mut zs: Vec<f64> = (0..n).map(|_| dist::gamma(&mut r, 0.5)).collect();
    assert!(
        ks_stat(&mut zs, |x| 1.0
            - 2.0 * dpinfer_math::norm_cdf(-(2.0 * x).sqrt()))
            < ks_crit_1e6(n)
    );
    assert!(dist::gamma(&mut r, -1.0).is_nan());
    assert!(dist::gamma(&mut r, f64::NAN).is_nan());
}

/// Poisson pmf via ln Γ.
fn poisson_pmf(k: u64, lambda: f64) -> f64 {
    (k as f64 * lambda.ln() - lambda - dpinfer_math::ln_gamma(k as f64 + 1.0)).exp()
}

#[test]
fn poisson_chi_square_small_and_large_lambda() {
    // Pearson χ² over bins with expected count ≥ 20 (tails pooled), one-sided α = 1e-6
    // (Wilson–Hilferty critical value). λ = 3.5 uses inversion, λ = 50 and 1234.5 use PTRS.
    for (seed, lambda) in [(3u64, 3.5f64), (4, 50.0), (5, 1234.5)] {
        let mut r = rng(seed);
        let n = 40_000usize;
        let draws: Vec<u64> = (0..n).map(|_| dist::poisson(&mut r, lambda)).collect();
        let lo = (lambda - 5.0 * lambda.sqrt()).max(0.0).floor() as u64;
        let hi = (lambda + 5.0 * lambda.sqrt()).ceil() as u64;
        let mut obs = Vec::new();
        let mut exp = Vec::new();
        let (mut o_acc, mut e_acc) = (0.0, 0.0);
        let mut cdf_lo = 0.0;
        for k in 0..lo {
            cdf_lo += poisson_pmf(k, lambda);
        }
        o_acc += draws.iter().filter(|&&d| d < lo).count() as f64;
        e_acc += cdf_lo * n as f64;
        let mut total_p = cdf_lo;
        for k in lo..=hi {
            let p = poisson_pmf(k, lambda);
            total_p += p;
            o_acc += draws.iter().filter(|&&d| d == k).count() as f64;
            e_acc += p * n as f64;
            if e_acc >= 20.0 {
                obs.push(o_acc);
                exp.push(e_acc);
                o_acc = 0.0;
                e_acc = 0.0;
            }
        }
        o_acc += draws.iter().filter(|&&d| d > hi).count() as f64;
        e_acc += (1.0 - total_p).max(0.0) * n as f64;
        *obs.last_mut().unwrap() += o_acc;
        *exp.last_mut().unwrap() += e_acc;
        let stat = chi2(&obs, &exp);
        assert!(
            stat < chi2_crit_1e6(obs.len() - 1),
            "λ = {lambda}: χ² = {stat} with {} bins",
            obs.len()
        );
    }
    assert_eq!(dist::poisson(&mut rng(0), 0.0), 0);
    assert_eq!(dist::poisson(&mut rng(0), f64::NAN), 0);
}

#[test]
fn binomial_mean_and_variance() {
    // z-tests of the mean (known variance npq), two-sided α = 1e-6 each, and of the variance
    // with se² = (μ₄ − σ⁴)/N, μ₄ = npq(1 + 3(n − 2)pq) — both at 1e-6.
    for (seed, n, p) in [
        (6u64, 20u64, 0.3f64),
        (7, 1000, 0.3),
        (8, 5000, 0.9),
        (9, 100_000, 0.002),
    ] {
        let mut r = rng(seed);
        let m = 20_000;
        let xs: Vec<f64> = (0..m)
            .map(|_| dist::binomial(&mut r, n, p) as f64)
            .collect();
        let (mean, var) = mean_var(&xs);
        let nf = n as f64;
        let s2 = nf * p * (1.0 - p);
        let z = (mean - nf * p) / (s2 / m as f64).sqrt();
        assert!(z.abs() < Z2_1E6, "n={n} p={p}: z = {z}");
        let mu4 = s2 * (1.0 + 3.0 * (nf - 2.0) * p * (1.0 - p));
        let zv = (var - s2) / ((mu4 - s2 * s2) / m as f64).sqrt();
        assert!(zv.abs() < Z2_1E6, "n={n} p={p}: z_var = {zv}");
    }
    assert_eq!(dist::binomial(&mut rng(0), 10, 1.5), 10);
    assert_eq!(dist::binomial(&mut rng(0), 10, f64::NAN), 0);
}

/// Trapezoid integral of exp(ln_density) over [a, b] with `m` panels.
fn integrate(p: &impl Prior, a: f64, b: f64, m: usize) -> f64 {
    let h = (b - a) / m as f64;
    let f = |x: f64| p.ln_density(&[x]).exp();
    let mut s = 0.5 * (f(a) + f(b));
    for i in 1..m {
        s += f(a + i as f64 * h);
    }
    s * h
}

#[test]
fn one_dimensional_priors_are_normalised() {
    // Independent check: numerical integration of exp(ln_density) ≈ 1 (trapezoid error < 1e-6).
    let n = Normal::new(1.5, 0.7).unwrap();
    assert!((integrate(&n, -8.0, 11.0, 20_000) - 1.0).abs() < 1e-6);
    let ln = LogNormal::new(-0.5, 0.4).unwrap();
    assert!((integrate(&ln, 1e-9, 12.0, 200_000) - 1.0).abs() < 1e-6);
    let u = Uniform::new(-2.0, 3.0).unwrap();
    assert!((u.ln_density(&[0.0]) + 5f64.ln()).abs() < 1e-15);
    assert_eq!(u.ln_density(&[3.5]), f64::NEG_INFINITY);
    assert_eq!(ln.ln_density(&[-1.0]), f64::NEG_INFINITY);
    assert_eq!(n.ln_density(&[f64::NAN]), f64::NEG_INFINITY);
    assert_eq!(n.ln_density(&[1.0, 2.0]), f64::NEG_INFINITY);
}

#[test]
fn lognormal_and_product_sampling_moments() {
    // E[e^X] = e^{μ + σ²/2} for X ~ N(μ, σ²); z-test with the closed-form variance
    // (e^{σ²} − 1) e^{2μ + σ²}, two-sided α = 1e-6.
    let p = Product::new(
        LogNormal::new(0.4f64.ln(), 0.5f64.sqrt()).unwrap(),
        Uniform::new(0.0, 2.0).unwrap(),
    );
    let mut r = rng(11);
    let m = 40_000;
    let mut a = Vec::with_capacity(m);
    let mut b = Vec::with_capacity(m);
    let mut th = [0.0; 2];
    for _ in 0..m {
        p.sample(&mut r, &mut th).unwrap();
        assert!(p.in_support(&th));
        a.push(th[0]);
        b.push(th[1]);
    }
    let (mu, s2) = (0.4f64.ln(), 0.5);
    let mean = (mu + s2 / 2.0).exp();
    let var = (s2.exp() - 1.0) * (2.0 * mu + s2).exp();
    let (ma, _) = mean_var(&a);
    assert!(((ma - mean) / (var / m as f64).sqrt()).abs() < Z2_1E6);
    let (mb, _) = mean_var(&b);
    assert!(((mb - 1.0) / ((4.0 / 12.0) / m as f64).sqrt()).abs() < Z2_1E6);
    // ln density of a product is the sum
    let x = [0.3, 1.2];
    assert!((p.ln_density(&x) - (p.a.ln_density(&x[..1]) + p.b.ln_density(&x[1..]))).abs() < 1e-15);
    assert_eq!(
        p.sample(&mut r, &mut [0.0; 3]),
        Err(SimError::DimensionMismatch {
            what: "out",
            expected: 2,
            got: 3
        })
    );
}

#[test]
fn dirichlet_moments_and_density() {
    // Dirichlet(1,…,1) in k = 5: E θ_i = 1/5, Var θ_i = (k − 1)/(k²(k + 1)) = 4/150;
    // density Γ(5) = 24 on the simplex. z-tests two-sided α = 1e-6 per coordinate.
    let d = Dirichlet::new(5, 1.0).unwrap();
    let mut r = rng(12);
    let m = 20_000;
    let mut sums = [0.0; 5];
    let mut sq = [0.0; 5];
    let mut th = [0.0; 5];
    for _ in 0..m {
        d.sample(&mut r, &mut th).unwrap();
        assert!(d.in_support(&th));
        for i in 0..5 {
            sums[i] += th[i];
            sq[i] += th[i] * th[i];
        }
    }
    let var = 4.0 / 150.0;
    for i in 0..5 {
        let mean = sums[i] / m as f64;
        assert!(((mean - 0.2) / (var / m as f64).sqrt()).abs() < Z2_1E6);
        let v = sq[i] / m as f64 - mean * mean;
        assert!((v - var).abs() < 0.03 * var, "var {v}");
    }
    assert!((d.ln_density(&[0.1, 0.2, 0.3, 0.2, 0.2]) - 24f64.ln()).abs() < 1e-12);
    assert_eq!(d.ln_density(&[0.5, 0.6, 0.0, 0.0, 0.0]), f64::NEG_INFINITY);
    // α = 2.5, k = 3: E θ_i = 1/3 (z-test, α = 1e-6)
    let d3 = Dirichlet::new(3, 2.5).unwrap();
    let mut t3 = [0.0; 3];
    let mut s0 = 0.0;
    for _ in 0..m {
        d3.sample(&mut r, &mut t3).unwrap();
        s0 += t3[0];
    }
    let var3 = (1.0 / 3.0) * (2.0 / 3.0) / (7.5 + 1.0);
    assert!(((s0 / m as f64 - 1.0 / 3.0) / (var3 / m as f64).sqrt()).abs() < Z2_1E6);
}

#[test]
fn constructors_reject_bad_parameters() {
    assert!(matches!(
        Normal::new(0.0, 0.0),
        Err(SimError::InvalidParameter { name: "sd", .. })
    ));
    assert!(Normal::new(f64::NAN, 1.0).is_err());
    assert!(LogNormal::new(0.0, f64::INFINITY).is_err());
    assert!(Uniform::new(1.0, 1.0).is_err());
    assert!(Uniform::new(-f64::MAX, f64::MAX).is_err());
    assert!(Dirichlet::new(1, 1.0).is_err());
    assert!(Dirichlet::new(3, -1.0).is_err());
    assert!(IidNormal::new(0, 0.0, 1.0).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn priors_never_panic_and_never_return_nan(a in any_f64(), b in any_f64(), x in any_f64(), seed in any::<u64>()) {
        let mut r = rng(seed);
        let mut out = [0.0];
        if let Ok(p) = Normal::new(a, b) {
            p.sample(&mut r, &mut out).unwrap();
            prop_assert!(!out[0].is_nan());
            prop_assert!(!p.ln_density(&[x]).is_nan());
        }
        if let Ok(p) = LogNormal::new(a, b) {
            p.sample(&mut r, &mut out).unwrap();
            prop_assert!(out[0] >= 0.0);
            prop_assert!(!p.ln_density(&[x]).is_nan());
        }
        if let Ok(p) = Uniform::new(a, b) {
            p.sample(&mut r, &mut out).unwrap();
            prop_assert!(p.in_support(&out));
            prop_assert!(!p.ln_density(&[x]).is_nan());
        }
        if let Ok(p) = Dirichlet::new(3, a) {
            let mut o = [0.0; 3];
            p.sample(&mut r, &mut o).unwrap();
            prop_assert!(o.iter().all(|v| v.is_finite()));
            prop_assert!(!p.ln_density(&[x, 0.5, 0.5]).is_nan());
        }
    }
}
