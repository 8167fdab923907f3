#![cfg(feature = "alloc")] // uses the crate's alloc API
//! Barker, DP Barker and subsampled penalty on the conjugate toy.
use crate::common;

use common::*;
use dpinfer_accountants::ConversionRule;
use dpinfer_mcmc::budget;
use dpinfer_mcmc::model::{GaussianMean, GaussianPrior};
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, MarkovChain, Proposal, SubsampledPenalty,
    SubsampledPenaltyPrivacy, SubsampledPenaltySettings, Trace,
};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

#[test]
fn exact_barker_matches_posterior() {
    let (prior, lik) = toy(100, 2, 1);
    let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, 1.0);
    let settings = BarkerSettings {
        proposal: Proposal::Gaussian {
            scale: vec![0.12, 0.12],
        },
        temperature: 1.0,
    };
    let mut s = Barker::exact(prior, lik, settings, &[0.5, 0.5]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(51);
    let mut tr = Trace::with_burn_in(2000);
    s.run(40_000, &mut rng, &mut tr).unwrap();
    for (j, &(mu, v)) in post.iter().enumerate() {
        check_moments(&tr.coordinate(j), mu, v, &format!("barker coord {j}"));
    }
}

/// DP Barker on `toy(2000, 1, 5)` from 0.9 with a Gaussian walk of step `step` at
/// temperature `t`, noise from ChaCha20 seeded with `noise_seed`.
fn dp_barker(
    step: f64,
    t: f64,
    privacy: BarkerPrivacy,
    noise_seed: u64,
) -> Barker<GaussianPrior, GaussianMean, ChaCha20Rng> {
    let (prior, lik) = toy(2000, 1, 5);
    let settings = BarkerSettings {
        proposal: Proposal::Gaussian { scale: vec![step] },
        temperature: t,
    };
    let noise = ChaCha20Rng::seed_from_u64(noise_seed);
    Barker::private(prior, lik, settings, privacy, &[0.9], noise).unwrap()
}

/// DP Barker on a tempered toy with little clipping (≈3 %, below the thesis §7.2 10 % rule): targets the tempered posterior up to
/// the CLT and V_corr (sup-CDF 6e-4) approximations; tolerance as in `check_moments`.
#[test]
fn dp_barker_targets_tempered_posterior() {
    let t = 100.0 / 2000.0; // n0 = 100
    let post = toy(2000, 1, 5).1.posterior(PRIOR_MEAN, PRIOR_SD, t);
    let privacy = BarkerPrivacy {
        batch: 1000,
        epsilon: 3.0e4,
        delta: 1e-6,
    };
    let mut s = dp_barker(0.12, t, privacy, 52);
    eprintln!("dp-barker k = {}", s.max_iterations().unwrap());
    assert!(s.max_iterations().unwrap() >= 30_000);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(53);
    let mut tr = Trace::with_burn_in(1000);
    s.run(30_000, &mut rng, &mut tr).unwrap();
    eprintln!(
        "dp-barker clip fraction {:.4}, acceptance {:.3}",
        tr.clip_fraction(),
        tr.acceptance_rate()
    );
    assert!(tr.clip_fraction() < 0.05);
    check_moments(&tr.coordinate(0), post[0].0, post[0].1, "dp-barker");
}

#[test]
fn dp_barker_budget_enforced() {
    let k = budget::Mechanism::Barker {
        n: 2000,
        batch: 100,
        rule: ConversionRule::Tightest,
    }
    .iterations(1.0, 1e-5)
    .unwrap();
    assert!(k > 0);
    let privacy = BarkerPrivacy {
        batch: 100,
        epsilon: 1.0,
        delta: 1e-5,
    };
    let mut s = dp_barker(0.1, 0.05, privacy, 1);
    run_out_budget(&mut s, k, 2);
    assert!(s.last_batch_variance() <= 1.0 + 1e-12);
    let (eps, _) = s.epsilon_spent().unwrap().unwrap();
    assert!(eps <= 1.0, "{eps}");
}

/// Subsampled penalty without noise: the σ_b² correction (CLT) keeps the chain near the
/// posterior; with |B| = n/2 the approximation error is small. Tolerance as in
/// `check_moments`.
#[test]
fn subsampled_penalty_approximates_posterior() {
    let (prior, lik) = toy(4000, 1, 6);
    let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, 1.0);
    let settings = SubsampledPenaltySettings {
        proposal: Proposal::Gaussian { scale: vec![0.016] },
        temperature: 1.0,
        batch: 200,
        clip: 50.0,
    };
    let mut s = SubsampledPenalty::exact(prior, lik, settings, &[0.9]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(61);
    let mut tr = Trace::with_burn_in(1000);
    s.run(40_000, &mut rng, &mut tr).unwrap();
    check_moments(
        &tr.coordinate(0),
        post[0].0,
        post[0].1,
        "subsampled penalty",
    );
}

#[test]
fn subsampled_dp_penalty_budget_enforced() {
    let (prior, lik) = toy(1000, 1, 6);
    let settings = SubsampledPenaltySettings {
        proposal: Proposal::Gaussian { scale: vec![0.05] },
        temperature: 0.1,
        batch: 100,
        clip: 5.0,
    };
    let privacy = SubsampledPenaltyPrivacy {
        tau: 20.0,
        epsilon: 1.0,
        delta: 1e-5,
    };
    let k = budget::Mechanism::SubsampledPenalty {
        tau: 20.0,
        n: 1000,
        batch: 100,
        rule: ConversionRule::Tightest,
    }
    .iterations(1.0, 1e-5)
    .unwrap();
    let mut s = SubsampledPenalty::private(
        prior,
        lik,
        settings,
        privacy,
        &[0.9],
        ChaCha20Rng::seed_from_u64(1),
    )
    .unwrap();
    run_out_budget(&mut s, k, 2);
    let (eps, _) = s.epsilon_spent().unwrap().unwrap();
    assert!(eps <= 1.0, "{eps}");
}

/// Theorem 9 / Lemma 1: the released data part `nT/b Σ c_j − σ_b²/2` changes by at most
/// `c = Δ_λ + Δ_σ` when one batch element is substituted, for clipped values in `[−r, r]`
/// (random batches and the adversarial all-at-the-bound batches).
#[test]
fn subsampled_sensitivity_bounds_released_quantity() {
    use dpinfer_mcmc::subsampled_sensitivity;
    use rand::RngExt;
    let released = |c: &[f64], n: usize, t: f64| {
        let b = c.len() as f64;
        let k = n as f64 * t / b;
        let s: f64 = c.iter().sum();
        let s2: f64 = c.iter().map(|x| x * x).sum();
        k * s - 0.5 * (k * k * (s2 - s * s / b)).max(0.0)
    };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    for (n, b, t, clip, dist) in [
        (1000usize, 10usize, 1.0, 1.0, 0.1),
        (10_000, 100, 0.01, 3.0, 0.05),
        (500, 2, 0.5, 2.0, 1.0),
    ] {
        let r = clip * dist;
        let bound = subsampled_sensitivity(n, b, t, clip, dist);
        let mut worst: f64 = 0.0;
        for trial in 0..2000 {
            let mut c: Vec<f64> = if trial < 2 {
                vec![if trial == 0 { r } else { -r }; b]
            } else {
                (0..b).map(|_| rng.random_range(-r..=r)).collect()
            };
            let before = released(&c, n, t);
            c[0] = if trial < 2 {
                -c[0]
            } else {
                rng.random_range(-r..=r)
            };
            worst = worst.max((released(&c, n, t) - before).abs());
        }
        assert!(worst <= bound, "n {n} b {b}: {worst} > {bound}");
    }
}
