//! SMC-ABC's perturbation kernels (`smc::Perturbation`: the default twice-covariance kernel,
//! Filippi et al.'s OLCM and the Silverman-scaled MVN) and the prior-predictive first tolerance
//! (`Tolerance::PriorQuantile`): importance weights against known prior expectations,
//! posteriors against the exact Gaussian-mean ABC posterior, and the calibration sample
//! reproduced independently.
#![cfg(feature = "alloc")]

use crate::common;

use common::{AbcPosterior, gaussian_mean, noisy2, weighted_mean_sd};
use dpinfer_abc::discrepancy::{Discrepancy, Euclidean};
use dpinfer_abc::smc::{
    Perturbation, SMC_CALIBRATION_DOMAIN, SmcAbc, SmcSettings, StopReason, Tolerance,
};
use dpinfer_abc::weights::weighted_quantile;
use dpinfer_simulators::prior::{Normal, Product, Uniform};
use dpinfer_simulators::{Prior, SimStream, Simulator};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

fn settings(particles: usize, tolerance: Tolerance, kernel: Perturbation) -> SmcSettings {
    SmcSettings {
        particles,
        tolerance,
        kernel_scale: kernel.default_scale(),
        ..SmcSettings::default()
    }
}

/// Self-normalised importance estimate `Σ w f` and its delta-method standard error
/// `sqrt(Σ w² (f − est)²)` (weights normalised).
fn estimate(w: &[f64], f: impl Fn(usize) -> f64) -> (f64, f64) {
    let est: f64 = w.iter().enumerate().map(|(i, wi)| wi * f(i)).sum();
    let var: f64 = w
        .iter()
        .enumerate()
        .map(|(i, wi)| wi * wi * (f(i) - est).powi(2))
        .sum();
    (est, var.sqrt())
}

/// At ε = ∞ every proposal is accepted, so generation 1 is an importance sample from the
/// kernel mixture for the prior: its weighted moments must be the prior's. A weight computed
/// with the wrong proposal density (e.g. the shared covariance for OLCM, or no Silverman
/// factor for MVN) biases them by many standard errors. Four checks per kernel at 6 SE each:
/// false-failure probability < 12 · 2e-9 under the normal approximation of the estimates.
#[test]
fn every_kernel_weights_recover_prior_expectations() {
    // θ₁ ~ N(1, 2²), θ₂ ~ U(0, 1): E θ₁ = 1, E θ₁² = 5, E θ₂ = ½, P(θ₂ < 0.2) = 0.2
    let prior = Product::new(
        Normal::new(1.0, 2.0).unwrap(),
        Uniform::new(0.0, 1.0).unwrap(),
    );
    let obs = [0.0, 0.0];
    for kernel in Perturbation::ALL {
        // ESS-triggered resampling off: generation 0 keeps its equal weights
        let s = SmcSettings {
            ess_fraction: 0.0,
            ..settings(
                3000,
                Tolerance::List(vec![f64::INFINITY, f64::INFINITY]),
                kernel,
            )
        };
        let mut smc = SmcAbc::new(prior, noisy2(), Euclidean::new(&obs).unwrap(), s)
            .unwrap()
            .with_perturbation(kernel);
        assert_eq!(smc.perturbation(), kernel);
        let reason = smc.run_batched(20_261_122, 0).unwrap();
        assert_eq!(reason, StopReason::ScheduleExhausted);
        assert_eq!(smc.history().len(), 2);
        let (p, w) = (smc.particles(), smc.weights());
        // the weights are not uniform: the kernel mixture is not the prior
        assert!(smc.history()[1].ess < 0.99 * 3000.0, "{kernel:?}");
        let rows = p.chunks_exact(2);
        let checks: [(&str, f64, Vec<f64>); 4] = [
            ("E θ₁", 1.0, rows.clone().map(|r| r[0]).collect()),
            ("E θ₁²", 5.0, rows.clone().map(|r| r[0] * r[0]).collect()),
            ("E θ₂", 0.5, rows.clone().map(|r| r[1]).collect()),
            (
                "P(θ₂ < 0.2)",
                0.2,
                rows.map(|r| f64::from(r[1] < 0.2)).collect(),
            ),
        ];
        for (name, want, f) in checks {
            let (est, se) = estimate(w, |i| f[i]);
            assert!(
                (est - want).abs() < 6.0 * se,
                "{kernel:?} {name}: {est} vs {want} (se {se})"
            );
        }
    }
}

/// Each kernel, with the default and with the prior-predictive first tolerance, reaches the
/// exact ABC posterior of the Gaussian-mean toy at the final tolerance (same 8-SE rule as
/// `gaussian_mean::smc_matches_exact_abc_posterior`: false failure < 1e-14 per check under
/// the ESS approximation).
#[test]
fn every_kernel_matches_the_exact_abc_posterior() {
    let (tau, n, ybar) = (1.0, 100.0, 0.5);
    let obs = [ybar];
    for kernel in Perturbation::ALL {
        for tolerance in [
            Tolerance::Quantile {
                initial: f64::INFINITY,
                alpha: 0.5,
            },
            Tolerance::PriorQuantile { alpha: 0.5 },
        ] {
            let s = SmcSettings {
                final_tolerance: 0.01,
                max_generations: 30,
                ..settings(1000, tolerance.clone(), kernel)
            };
            let mut smc = SmcAbc::new(
                Normal::new(0.0, tau).unwrap(),
                gaussian_mean(n),
                Euclidean::new(&obs).unwrap(),
                s,
            )
            .unwrap()
            .with_perturbation(kernel);
            let reason = smc.run(&mut Xoshiro256PlusPlus::seed_from_u64(77)).unwrap();
            assert_eq!(
                reason,
                StopReason::FinalTolerance,
                "{kernel:?} {tolerance:?}"
            );
            let last = *smc.history().last().unwrap();
            assert!(smc.distances().iter().all(|&d| d <= last.tolerance));
            let post = AbcPosterior::new(tau, n, ybar, last.tolerance);
            let (m, sd) = weighted_mean_sd(smc.particles(), smc.weights());
            let ess = last.ess.min(1000.0);
            assert!(
                (m - post.mean).abs() < 8.0 * post.sd / ess.sqrt(),
                "{kernel:?} {tolerance:?}: mean {m} vs {}",
                post.mean
            );
            assert!(
                (sd - post.sd).abs() < 8.0 * post.sd / (2.0 * ess).sqrt(),
                "{kernel:?} {tolerance:?}: sd {sd} vs {}",
                post.sd
            );
        }
    }
}

/// Generation 0's tolerance is the median of N prior-predictive distances, recomputed here
/// from the calibration streams (`SMC_CALIBRATION_DOMAIN`, row = particle), bit for bit; the
/// calibration simulations are counted; every generation-0 particle is within it.
#[test]
fn prior_quantile_first_tolerance_is_the_calibration_median() {
    let prior = Product::new(
        Normal::new(0.0, 1.0).unwrap(),
        Normal::new(0.0, 1.0).unwrap(),
    );
    let obs = [0.3, -0.2];
    let dist = Euclidean::new(&obs).unwrap();
    let (n, seed) = (400usize, 9u64);
    let s = SmcSettings {
        max_generations: 1,
        ..settings(
            n,
            Tolerance::PriorQuantile { alpha: 0.5 },
            Perturbation::Covariance,
        )
    };
    let mut smc = SmcAbc::new(prior, noisy2(), dist, s).unwrap();
    smc.step_batched(seed, 64).unwrap();
    let g0 = smc.history()[0];
    let mut d = vec![0.0; n];
    for (i, di) in d.iter_mut().enumerate() {
        let mut st = SimStream::with_domain(seed, SMC_CALIBRATION_DOMAIN, i as u64);
        let (mut th, mut out) = ([0.0; 2], [0.0; 2]);
        prior.sample(&mut st, &mut th).unwrap();
        noisy2().simulate(&th, &mut st, &mut out).unwrap();
        *di = dist.distance(&out);
    }
    let median = weighted_quantile(&d, &vec![1.0 / n as f64; n], 0.5).unwrap();
    assert_eq!(g0.tolerance, median);
    assert!(median.is_finite() && median > 0.0);
    assert!(smc.distances().iter().all(|&x| x <= median));
    // N calibration simulations plus about 2N (acceptance ½) for the population
    assert!(g0.simulations > 2 * n as u64, "{}", g0.simulations);
    assert!(g0.simulations < 4 * n as u64, "{}", g0.simulations);
    // the default schedule's generation 0 is the prior at ε = ∞ with N simulations
    let mut plain = SmcAbc::new(
        prior,
        noisy2(),
        dist,
        SmcSettings {
            max_generations: 1,
            ..settings(
                n,
                Tolerance::Quantile {
                    initial: f64::INFINITY,
                    alpha: 0.5,
                },
                Perturbation::Covariance,
            )
        },
    )
    .unwrap();
    plain.step_batched(seed, 64).unwrap();
    assert_eq!(plain.history()[0].tolerance, f64::INFINITY);
    assert_eq!(plain.history()[0].simulations, n as u64);
}

/// The sequential path calibrates too; a budget smaller than the calibration sample stops
/// the run before generation 0 with `StopReason::Budget`.
#[test]
fn prior_quantile_sequential_and_budget() {
    let obs = [0.5];
    let mk = |budget| {
        SmcAbc::new(
            Normal::new(0.0, 1.0).unwrap(),
            gaussian_mean(100.0),
            Euclidean::new(&obs).unwrap(),
            SmcSettings {
                max_generations: 1,
                simulation_budget: budget,
                ..settings(
                    300,
                    Tolerance::PriorQuantile { alpha: 0.25 },
                    Perturbation::Olcm,
                )
            },
        )
        .unwrap()
    };
    let mut smc = mk(1_000_000);
    smc.run(&mut Xoshiro256PlusPlus::seed_from_u64(3)).unwrap();
    let g0 = smc.history()[0];
    assert!(g0.tolerance.is_finite());
    assert!(smc.distances().iter().all(|&x| x <= g0.tolerance));
    // 300 calibration + about 1200 (acceptance ¼)
    assert!(
        g0.simulations > 900 && g0.simulations < 2500,
        "{}",
        g0.simulations
    );
    for budget in [299, 1000] {
        let mut b = mk(budget);
        let r = b.run(&mut Xoshiro256PlusPlus::seed_from_u64(3)).unwrap();
        assert_eq!(r, StopReason::Budget);
        assert!(b.history().is_empty());
        let mut b = mk(budget);
        assert_eq!(b.run_batched(3, 0).unwrap(), StopReason::Budget);
        assert!(b.history().is_empty());
    }
}

#[test]
fn kernel_names_and_settings_validation() {
    for k in Perturbation::ALL {
        assert_eq!(Perturbation::from_name(k.name()), Some(k));
    }
    assert_eq!(Perturbation::default(), Perturbation::Covariance);
    assert_eq!(
        Perturbation::from_name("twice-covariance"),
        Some(Perturbation::Covariance)
    );
    assert_eq!(Perturbation::from_name("gaussian"), None);
    for alpha in [0.0, 1.0, -0.5, f64::NAN, f64::INFINITY] {
        let s = settings(10, Tolerance::PriorQuantile { alpha }, Perturbation::Olcm);
        assert!(s.validate().is_err(), "{alpha}");
    }
    assert!(
        settings(
            10,
            Tolerance::PriorQuantile { alpha: 0.3 },
            Perturbation::Mvn
        )
        .validate()
        .is_ok()
    );
}

/// The new kernels and the calibration sample keep the per-stream guarantee: bit-identical
/// for every block size and rayon thread count.
#[cfg(feature = "parallel")]
#[test]
fn new_kernels_are_bit_identical_across_blocks_and_threads() {
    let prior = Product::new(
        Normal::new(0.0, 1.0).unwrap(),
        Normal::new(0.0, 1.0).unwrap(),
    );
    let obs = [0.3, -0.2];
    for kernel in [Perturbation::Olcm, Perturbation::Mvn] {
        let mk = || {
            SmcAbc::new(
                prior,
                noisy2(),
                Euclidean::new(&obs).unwrap(),
                SmcSettings {
                    max_generations: 4,
                    ..settings(200, Tolerance::PriorQuantile { alpha: 0.5 }, kernel)
                },
            )
            .unwrap()
            .with_perturbation(kernel)
        };
        let mut a = mk();
        a.run_batched(5, 0).unwrap();
        let mut b = mk();
        b.run_batched(5, 7).unwrap();
        let c = common::on_threads(2, || {
            let mut c = mk();
            c.run_parallel(5).unwrap();
            c
        });
        for other in [&b, &c] {
            assert_eq!(a.particles(), other.particles(), "{kernel:?}");
            assert_eq!(a.weights(), other.weights(), "{kernel:?}");
            assert_eq!(a.history(), other.history(), "{kernel:?}");
        }
    }
}
