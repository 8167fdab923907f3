//! `NoiseMap`: `τ(U, s)` with `U` uniform has the release's distribution (seeded two-sample
//! tests against each mechanism's own sampler), and every input is validated.
//!
//! The uniforms here come from a seeded ChaCha20 mapped to the midpoints `(j + ½)·2⁻⁵²` (what
//! `dpinfer_simulators::qmc` produces); the samplers draw from another seeded ChaCha20.
//!
//! False-failure rates: each two-sample Kolmogorov–Smirnov check rejects at
//! `D > c·√((n₁ + n₂)/(n₁n₂))` with `c = √(−ln(α/2)/2) = 2.6934`, α = 1e-6 (the asymptotic
//! Kolmogorov distribution; conservative for the discrete laws, whose ties only lower `D`); the
//! χ² homogeneity check rejects above the χ²(df) quantile at α = 1e-6. Eight checks: a
//! file-wide false-failure rate below 8e-6.

use crate::common::{chi2_critical, pool_cells, rng};
use dpinfer_mechanisms::idealized::{IdealizedGaussian, IdealizedLaplace};
use dpinfer_mechanisms::{
    BinomialCurve, Gaussian, Laplace, MechanismError, NoiseMap, RegressionStats,
};
use rand_core::Rng;

/// α = 1e-6 two-sample KS constant `√(−ln(α/2)/2)`.
const KS_C: f64 = 2.693_4;

/// A uniform in (0, 1) on the midpoint grid `(j + ½)·2⁻⁵²`.
fn uniform<R: Rng>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 12) as f64 + 0.5) * libm::exp2(-52.0)
}

/// `n` draws of `τ(U, [s])[0]` for a scalar map.
fn tau_draws<M: NoiseMap>(mech: &M, s: f64, n: usize, seed: u64) -> Vec<f64> {
    let mut r = rng(seed);
    let mut out = [0.0];
    (0..n)
        .map(|_| {
            mech.tau(&[uniform(&mut r)], &[s], &mut out).unwrap();
            out[0]
        })
        .collect()
}

/// The two-sample Kolmogorov–Smirnov statistic.
fn ks_two_sample(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

fn assert_same_law(name: &str, a: Vec<f64>, b: Vec<f64>) {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let crit = KS_C * ((na + nb) / (na * nb)).sqrt();
    let d = ks_two_sample(a, b);
    assert!(d < crit, "{name}: KS D = {d} ≥ {crit}");
}

#[test]
fn idealized_laplace_tau_matches_its_sampler() {
    let mech = IdealizedLaplace::new(1.5).unwrap();
    let n = 20_000;
    let taus = tau_draws(&mech, 2.0, n, 11);
    let mut r = rng(12);
    let draws = (0..n).map(|_| mech.add_noise(2.0, &mut r)).collect();
    assert_same_law("idealized Laplace", taus, draws);
    // The paper's formula at the median and a quartile: s and s + b·ln 2.
    let mut out = [0.0];
    mech.tau(&[0.5], &[2.0], &mut out).unwrap();
    assert_eq!(out[0], 2.0);
    mech.tau(&[0.75], &[0.0], &mut out).unwrap();
    assert!((out[0] - 1.5 * core::f64::consts::LN_2).abs() < 1e-15);
}

#[test]
fn idealized_gaussian_tau_matches_its_sampler() {
    let mech = IdealizedGaussian::new(0.7).unwrap();
    let n = 20_000;
    let taus = tau_draws(&mech, -1.0, n, 21);
    let mut r = rng(22);
    let draws = (0..n).map(|_| mech.add_noise(-1.0, &mut r)).collect();
    assert_same_law("idealized Gaussian", taus, draws);
}

#[test]
fn secure_laplace_tau_matches_release() {
    let mech = Laplace::new(2.0, 1.0, -100.0, 100.0).unwrap();
    let n = 20_000;
    let taus = tau_draws(&mech, 3.3, n, 31);
    let g = mech.grid();
    // Every τ output is a grid point, like every release.
    assert!(taus.iter().all(|&v| g.to_f64(g.round(v).unwrap()) == v));
    let mut r = rng(32);
    let draws = (0..n).map(|_| mech.release(3.3, &mut r).unwrap()).collect();
    assert_same_law("secure Laplace", taus, draws);
    // Clamping as in the release: NaN ↦ lo, +∞ ↦ hi; the median is the rounded input.
    let mut a = [0.0];
    let mut b = [0.0];
    mech.tau(&[0.3], &[f64::NAN], &mut a).unwrap();
    mech.tau(&[0.3], &[-100.0], &mut b).unwrap();
    assert_eq!(a, b);
    mech.tau(&[0.5], &[f64::INFINITY], &mut a).unwrap();
    assert_eq!(a[0], 100.0);
}

#[test]
fn secure_gaussian_tau_matches_release() {
    let mech = Gaussian::new(1.25, 1.0, -50.0, 50.0).unwrap();
    let n = 20_000;
    let taus = tau_draws(&mech, -7.0, n, 41);
    let g = mech.grid();
    assert!(taus.iter().all(|&v| g.to_f64(g.round(v).unwrap()) == v));
    let mut r = rng(42);
    let draws = (0..n)
        .map(|_| mech.release(-7.0, &mut r).unwrap())
        .collect();
    assert_same_law("secure Gaussian", taus, draws);
}

#[test]
fn vector_maps_act_per_coordinate() {
    let lap = Laplace::vector(3, 1.0, 1.0, -10.0, 10.0).unwrap();
    let gau = Gaussian::vector(3, 1.0, 1.0, -10.0, 10.0).unwrap();
    assert_eq!(lap.noise_dim(3).unwrap(), 3);
    assert_eq!(gau.noise_dim(3).unwrap(), 3);
    let (u, s) = ([0.1, 0.5, 0.9], [1.0, 2.0, 3.0]);
    let mut v = [0.0; 3];
    let mut one = [0.0];
    lap.tau(&u, &s, &mut v).unwrap();
    let lap1 = Laplace::new(lap.scale(), 1.0, -10.0, 10.0).unwrap();
    for i in 0..3 {
        lap1.tau(&u[i..=i], &s[i..=i], &mut one).unwrap();
        assert_eq!(v[i], one[0]);
    }
    assert!(v[0] < 1.0 && v[1] == 2.0 && v[2] > 3.0);
    gau.tau(&u, &s, &mut v).unwrap();
    assert!(v[0] < 1.0 && v[1] == 2.0 && v[2] > 3.0);
}

/// χ² homogeneity of two equal-size samples of counts in `0..=n`, cells pooled until both
/// samples' sum is at least 10.
fn assert_same_counts(name: &str, a: &[u64], b: &[u64], n: u64) {
    let cells = usize::try_from(n).unwrap() + 1;
    let (mut ca, mut cb) = (vec![0f64; cells], vec![0f64; cells]);
    for &x in a {
        ca[usize::try_from(x).unwrap()] += 1.0;
    }
    for &x in b {
        cb[usize::try_from(x).unwrap()] += 1.0;
    }
    let pooled = pool_cells(ca.into_iter().zip(cb), |(x, y)| x + y >= 10.0);
    let stat: f64 = pooled
        .iter()
        .map(|&(x, y)| (x - y) * (x - y) / (x + y))
        .sum();
    let df = pooled.len() - 1;
    let crit = chi2_critical(df, 1e-6);
    assert!(stat < crit, "{name}: χ² = {stat} ≥ {crit} (df {df})");
}

#[test]
fn binomial_curve_tau_matches_release() {
    // Small: every count cell visible (n = 20, p = (4 + 2)/(10 + 4)).
    let mech = BinomialCurve::new(20, 2, 10).unwrap();
    let n = 20_000;
    let taus: Vec<u64> = tau_draws(&mech, 4.0, n, 51)
        .into_iter()
        .map(|v| v as u64)
        .collect();
    let mut r = rng(52);
    let draws: Vec<u64> = (0..n)
        .map(|_| mech.release_point(4, &mut r).unwrap())
        .collect();
    assert_same_counts("binomial n = 20", &taus, &draws, 20);
    // The paper's SIR setting (n = m = 1000, K = 10⁶) at a peak-sized count, and a count
    // above K, clamped as the release clamps. The release costs n = 1000 exact uniforms per
    // draw (about 1 ms in the test profile), so it gets the smaller sample.
    let sir = BinomialCurve::new(1000, 1000, 1_000_000).unwrap();
    let taus = tau_draws(&sir, 250_000.0, 20_000, 53);
    let mut r = rng(54);
    let draws = (0..300)
        .map(|_| sir.release_point(250_000, &mut r).unwrap() as f64)
        .collect();
    assert_same_law("binomial SIR", taus, draws);
    let mut a = [0.0];
    let mut b = [0.0];
    sir.tau(&[0.4], &[2e6], &mut a).unwrap();
    sir.tau(&[0.4], &[1e6], &mut b).unwrap();
    assert_eq!(a, b);
    // Extreme uniforms stay inside {0, …, n}.
    let tiny = libm::exp2(-53.0);
    sir.tau(&[tiny], &[0.0], &mut a).unwrap();
    sir.tau(&[1.0 - tiny], &[1e6], &mut b).unwrap();
    assert!(a[0] >= 0.0 && b[0] <= 1000.0 && a[0] < b[0]);
}

#[test]
fn regression_stats_tau_matches_release() {
    // An intercept and two predictors (App. E.2; the mechanism releases all 10 entries, the
    // paper drops the constant (1, 1) one), n = 100 records on a fixed pattern, ε = 1.
    let n = 100;
    let x: Vec<f64> = (0..3 * n)
        .map(|i| {
            if i % 3 == 0 {
                1.0
            } else {
                ((i * 37 % 101) as f64 - 50.0) / 10.0
            }
        })
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| ((i * 53 % 107) as f64 - 48.0) / 8.0)
        .collect();
    let bounds = [(-1.0, 1.0), (-10.0, 10.0), (-10.0, 10.0)];
    let mech = RegressionStats::new(&bounds, (-10.0, 10.0), 100, 1.0).unwrap();
    assert_eq!(mech.noise_dim(10).unwrap(), 10);
    let mut s = [0.0; 10];
    mech.clamped_statistic_into(&x, &y, &mut s).unwrap();
    // The median noise is 0: τ returns the statistic rounded to the grid.
    let mut out = [0.0; 10];
    mech.tau(&[0.5; 10], &s, &mut out).unwrap();
    for (o, si) in out.iter().zip(&s) {
        assert!((o - si).abs() <= mech.grid().spacing());
    }
    let draws = 5_000;
    let mut ru = rng(61);
    let mut rn = rng(62);
    let mut u = [0.0; 10];
    let (mut taus, mut rels) = (Vec::new(), Vec::new());
    for _ in 0..draws {
        u.iter_mut().for_each(|ui| *ui = uniform(&mut ru));
        mech.tau(&u, &s, &mut out).unwrap();
        taus.push(out[4]);
        mech.release_into(&x, &y, &mut out, &mut rn).unwrap();
        rels.push(out[4]);
    }
    assert_same_law("regression statistic", taus, rels);
    assert_eq!(
        mech.tau(&[0.5; 10], &[f64::NAN; 10], &mut out),
        Err(MechanismError::NonFinite { param: "x" })
    );
}

#[test]
fn inputs_are_validated() {
    let lap = Laplace::vector(2, 1.0, 1.0, 0.0, 1.0).unwrap();
    let gau = Gaussian::new(1.0, 1.0, 0.0, 1.0).unwrap();
    let bin = BinomialCurve::new(10, 1, 5).unwrap();
    let il = IdealizedLaplace::new(1.0).unwrap();
    let ig = IdealizedGaussian::new(1.0).unwrap();
    let maps: [&dyn NoiseMap; 5] = [&lap, &gau, &bin, &il, &ig];
    let dims = [2usize, 1, 1, 1, 1];
    for (map, &d) in maps.iter().zip(&dims) {
        let s = vec![1.0; d];
        let mut out = vec![-9.0; d];
        for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY, -0.0] {
            let mut u = vec![0.5; d];
            u[d - 1] = bad;
            assert_eq!(
                map.tau(&u, &s, &mut out),
                Err(MechanismError::OutOfRange { param: "u" }),
                "u = {bad}"
            );
            assert!(out.iter().all(|&o| o == -9.0), "out written on error");
        }
        let u = vec![0.5; d];
        let mut long = vec![0.0; d + 1];
        assert!(matches!(
            map.tau(&u, &s, &mut long),
            Err(MechanismError::LengthMismatch { .. })
        ));
        assert!(matches!(
            map.tau(&u[..d - 1], &s[..d - 1], &mut out[..d - 1]),
            Err(MechanismError::LengthMismatch { .. })
        ));
        assert!(map.noise_dim(0).is_err());
    }
    assert!(lap.noise_dim(3).is_err());
    let mut out = [0.0];
    for bad in [f64::NAN, f64::INFINITY] {
        assert_eq!(
            il.tau(&[0.5], &[bad], &mut out),
            Err(MechanismError::NonFinite { param: "s" })
        );
        assert_eq!(
            ig.tau(&[0.5], &[bad], &mut out),
            Err(MechanismError::NonFinite { param: "s" })
        );
        assert_eq!(
            bin.tau(&[0.5], &[bad], &mut out),
            Err(MechanismError::NonFinite { param: "s" })
        );
    }
    for bad in [-1.0, 2.5] {
        assert_eq!(
            bin.tau(&[0.5], &[bad], &mut out),
            Err(MechanismError::OutOfRange { param: "s" })
        );
    }
}
