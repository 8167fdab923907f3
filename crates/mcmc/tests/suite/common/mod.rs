#![allow(dead_code)]
#![allow(clippy::unwrap_used)]
//! Shared helpers for the statistical tests.

use dpinfer_mcmc::diagnostics::ess;
use dpinfer_mcmc::model::{GaussianMean, GaussianPrior};
use dpinfer_mcmc::run::{DpBarker, DpHmc, RunSettings, Target};
use dpinfer_mcmc::{Budgeted, McmcError};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Normal};

pub(crate) const PRIOR_MEAN: f64 = 0.0;
pub(crate) const PRIOR_SD: f64 = 10.0;

/// `n` rows of `d`-dim data from N(1, 1), seeded.
pub(crate) fn toy(n: usize, d: usize, seed: u64) -> (GaussianPrior, GaussianMean) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let nd = Normal::new(1.0, 1.0).unwrap();
    let rows: Vec<f64> = (0..n * d).map(|_| nd.sample(&mut rng)).collect();
    (
        GaussianPrior::new(d, PRIOR_MEAN, PRIOR_SD).unwrap(),
        GaussianMean::new(d, &rows, 1.0).unwrap(),
    )
}

/// Checks a chain's mean and variance against the exact values with ESS-based standard
/// errors: |mean − μ| ≤ 4.5 SE (two-sided normal tail 6.8e-6) and |var − v| ≤ 4.5 SE of the
/// variance estimate (SE from the ESS of the squared deviations; same tail). Per call the
/// false-failure probability is ≈ 1.4e-5 under the CLT for the chain averages.
pub(crate) fn check_moments(draws: &[f64], mu: f64, v: f64, what: &str) {
    let n = draws.len() as f64;
    let m = draws.iter().sum::<f64>() / n;
    let sq: Vec<f64> = draws.iter().map(|x| (x - m) * (x - m)).collect();
    let var = sq.iter().sum::<f64>() / (n - 1.0);
    let ess_m = ess(&[draws]).unwrap();
    let se_m = (var / ess_m).sqrt();
    let sq_mean = sq.iter().sum::<f64>() / n;
    let sq_var = sq
        .iter()
        .map(|s| (s - sq_mean) * (s - sq_mean))
        .sum::<f64>()
        / (n - 1.0);
    let ess_v = ess(&[&sq]).unwrap();
    let se_v = (sq_var / ess_v).sqrt();
    eprintln!(
        "{what}: mean {m:.5} (exact {mu:.5}, se {se_m:.2e}, ess {ess_m:.0}); var {var:.3e} (exact {v:.3e}, se {se_v:.2e}, ess {ess_v:.0})"
    );
    assert!(
        ess_m > 200.0 && ess_v > 200.0,
        "{what}: too few effective draws ({ess_m}, {ess_v})"
    );
    assert!(
        (m - mu).abs() <= 4.5 * se_m,
        "{what}: mean {m} vs {mu} (se {se_m})"
    );
    assert!(
        (var - v).abs() <= 4.5 * se_v,
        "{what}: var {var} vs {v} (se {se_v})"
    );
}

/// Runs a private chain through the whole budget it reports, `k` iterations (checked), on the
/// proposal stream seeded `seed`, and checks that one step more is refused with
/// `BudgetExhausted { allowed: k }`.
pub(crate) fn run_out_budget<C: Budgeted>(s: &mut C, k: u64, seed: u64) {
    assert_eq!(s.limit(), Some(k));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    s.run(k, &mut rng, &mut ()).unwrap();
    assert_eq!(
        s.step(&mut rng).unwrap_err(),
        McmcError::BudgetExhausted { allowed: k }
    );
}

/// Run settings: `iterations` per chain, `chains` chains, run seed `seed`.
pub(crate) fn run_settings(iterations: u64, chains: usize, seed: u64) -> RunSettings {
    RunSettings {
        iterations,
        chains,
        seed,
        ..RunSettings::default()
    }
}

/// DP Barker at ε = 20 (δ = 1e-6) with batches of 50 at temperature 0.1.
pub(crate) fn tempered_dp_barker() -> DpBarker {
    let mut barker = DpBarker::new(Target {
        epsilon: 20.0,
        delta: 1e-6,
    });
    barker.batch = 50;
    barker.walk.temperature = 0.1;
    barker
}

/// DP HMC for `target` with `leapfrog_steps` steps of `step_size` and τ_l = τ_g = 2.
pub(crate) fn dp_hmc(target: Target, step_size: f64, leapfrog_steps: u32) -> DpHmc {
    let mut hmc = DpHmc::new(target);
    hmc.step_size = step_size;
    hmc.leapfrog_steps = leapfrog_steps;
    hmc.tau_l = 2.0;
    hmc.tau_g = 2.0;
    hmc
}
