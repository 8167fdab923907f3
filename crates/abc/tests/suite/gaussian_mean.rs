//! Rejection ABC and SMC-ABC on the Gaussian-mean toy against exact (ABC) posteriors.
#![cfg(feature = "alloc")]

use crate::common;

use common::{AbcPosterior, exact_posterior, gaussian_mean, weighted_mean_sd};
use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::rejection::{RejectionAbc, RejectionSettings, Rule};
use dpinfer_abc::smc::{SmcAbc, SmcSettings, StopReason, Tolerance};
use dpinfer_simulators::Simulator;
use dpinfer_simulators::prior::Normal;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

const TAU: f64 = 1.0;
const N: f64 = 100.0;
const YBAR: f64 = 0.5;

/// The observed summary ȳ.
const OBS: [f64; 1] = [YBAR];

/// KS critical value at α = 1e-6: sqrt(−ln(α/2)/2)/√n (asymptotic Kolmogorov distribution).
fn ks_crit(n: usize) -> f64 {
    (-(1e-6_f64 / 2.0).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// Rejection ABC on the toy (prior N(0, τ²), ȳ observed), run with `seed`.
fn rejection(
    settings: RejectionSettings,
    seed: u64,
) -> RejectionAbc<Normal, impl Simulator, Euclidean<'static>> {
    let mut s = RejectionAbc::new(
        Normal::new(0.0, TAU).unwrap(),
        gaussian_mean(N),
        Euclidean::new(&OBS).unwrap(),
        settings,
    )
    .unwrap();
    s.run(&mut Xoshiro256PlusPlus::seed_from_u64(seed)).unwrap();
    s
}

/// SMC-ABC on the toy, run with `seed`, and why it stopped.
fn smc(
    settings: SmcSettings,
    seed: u64,
) -> (
    SmcAbc<Normal, impl Simulator, Euclidean<'static>>,
    StopReason,
) {
    let mut s = SmcAbc::new(
        Normal::new(0.0, TAU).unwrap(),
        gaussian_mean(N),
        Euclidean::new(&OBS).unwrap(),
        settings,
    )
    .unwrap();
    let reason = s.run(&mut Xoshiro256PlusPlus::seed_from_u64(seed)).unwrap();
    (s, reason)
}

/// A sample's mean `m` and sd `sd` within `z` standard errors of the target's (`mean`,
/// `target_sd`) for `n` effective draws: SE ≈ sd/√n for the mean, sd/√(2n) for the sd.
fn assert_mean_sd(m: f64, sd: f64, mean: f64, target_sd: f64, n: f64, z: f64) {
    assert!((m - mean).abs() < z * target_sd / n.sqrt(), "{m} vs {mean}");
    assert!(
        (sd - target_sd).abs() < z * target_sd / (2.0 * n).sqrt(),
        "{sd} vs {target_sd}"
    );
}

#[test]
fn rejection_matches_exact_abc_posterior() {
    let eps = 0.05;
    let settings = RejectionSettings {
        rule: Rule::Threshold(eps),
        budget: 10_000_000,
        target: 4000,
    };
    let s = rejection(settings, 20261122);
    let th = s.accepted();
    assert_eq!(th.len(), 4000);
    assert!(s.distances().iter().all(|&d| d <= eps));
    let post = AbcPosterior::new(TAU, N, YBAR, eps);
    let n = th.len() as f64;
    let (m, sd) = weighted_mean_sd(th, &vec![1.0; th.len()]);
    // Independent draws from π_ε: mean within 6 SE (false failure 2e-9), sd within 6 SE of an
    // sd estimate (SE ≈ sd/√(2n)).
    assert_mean_sd(m, sd, post.mean, post.sd, n, 6.0);
    let d = post.ks(th);
    assert!(d < ks_crit(th.len()), "KS {d}");
}

#[test]
fn rejection_small_tolerance_matches_exact_posterior() {
    // As ε → 0 the ABC posterior tends to the exact one; at ε = 0.005 (sd of the summary 0.1)
    // the quadrature difference of the means is < 1e-6, far below the MC error.
    let eps = 0.005;
    let settings = RejectionSettings {
        rule: Rule::Threshold(eps),
        budget: 10_000_000,
        target: 1500,
    };
    let s = rejection(settings, 5);
    let (em, es) = exact_posterior(TAU, N, YBAR);
    let th = s.accepted();
    let n = th.len() as f64;
    let (m, sd) = weighted_mean_sd(th, &vec![1.0; th.len()]);
    assert_mean_sd(m, sd, em, es, n, 6.0);
}

#[test]
fn rejection_nearest_keeps_k_smallest() {
    let settings = RejectionSettings {
        rule: Rule::Nearest(100),
        budget: 20_000,
        target: u64::MAX,
    };
    let s = rejection(settings, 9);
    assert_eq!(s.simulations(), 20_000);
    assert_eq!(s.accepted().len(), 100);
    assert!(s.distances().windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(s.tolerance(), s.distances()[99]);
}

#[test]
fn smc_matches_exact_abc_posterior() {
    let settings = SmcSettings {
        max_generations: 30,
        ..common::median_smc(1000, 0.01)
    };
    let (s, reason) = smc(settings, 77);
    assert_eq!(reason, StopReason::FinalTolerance);
    let last = *s.history().last().unwrap();
    assert!(last.tolerance <= 0.01 + 1e-15);
    assert!(s.distances().iter().all(|&d| d <= last.tolerance));
    let post = AbcPosterior::new(TAU, N, YBAR, last.tolerance);
    let (m, sd) = weighted_mean_sd(s.particles(), s.weights());
    // Weighted particles: SE ≈ sd/√ESS; SMC populations are correlated through resampling, so
    // allow 8 SE for the mean and 8 SE (sd/√(2 ESS)) for the sd — a loose check whose nominal
    // false-failure probability is < 1e-14 under the ESS approximation.
    let ess = last.ess.min(1000.0);
    assert_mean_sd(m, sd, post.mean, post.sd, ess, 8.0);
    // tolerances decrease
    assert!(
        s.history()
            .windows(2)
            .all(|w| w[1].tolerance <= w[0].tolerance)
    );
}

#[test]
fn smc_geometric_schedule_and_budget_stop() {
    let settings = SmcSettings {
        particles: 200,
        tolerance: Tolerance::Geometric {
            initial: 1.0,
            factor: 0.7,
        },
        final_tolerance: 0.0,
        max_generations: 100,
        simulation_budget: 20_000,
        ..SmcSettings::default()
    };
    let (s, reason) = smc(settings, 1);
    assert_eq!(reason, StopReason::Budget);
    assert!(s.simulations() <= 20_000);
    for (g, st) in s.history().iter().enumerate() {
        let want = 0.7_f64.powi(g as i32);
        assert!((st.tolerance - want).abs() < 1e-12 * want.max(1.0));
    }
    // the kept population is the last complete generation
    let tol = s.history().last().unwrap().tolerance;
    assert!(s.distances().iter().all(|&d| d <= tol));
}
