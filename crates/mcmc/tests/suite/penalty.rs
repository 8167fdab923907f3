#![cfg(feature = "alloc")] // uses the crate's alloc API
//! RWMH / DP penalty against the exact conjugate posterior.
use crate::common;

use common::*;
use dpinfer_mcmc::budget::{self, Accounting};
use dpinfer_mcmc::model::{GaussianMean, GaussianPrior};
use dpinfer_mcmc::{
    MarkovChain, McmcError, Penalty, PenaltyPrivacy, PenaltySettings, Proposal, Trace,
};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

fn run_exact(proposal: Proposal, temperature: f64, iters: u64, seed: u64) {
    let (prior, lik) = toy(100, 2, 1);
    let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, temperature);
    let settings = PenaltySettings {
        proposal,
        temperature,
    };
    let mut s = Penalty::exact(prior, lik, settings, &[0.5, 0.5]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut tr = Trace::with_burn_in(2000);
    s.run(iters, &mut rng, &mut tr).unwrap();
    for (j, &(mu, v)) in post.iter().enumerate() {
        check_moments(
            &tr.coordinate(j),
            mu,
            v,
            &format!("exact T={temperature} coord {j}"),
        );
    }
    assert_eq!(tr.clip_fraction(), 0.0);
}

#[test]
fn rwmh_gaussian_matches_posterior() {
    run_exact(
        Proposal::Gaussian {
            scale: vec![0.15, 0.15],
        },
        1.0,
        30_000,
        11,
    );
}

#[test]
fn rwmh_one_coordinate_matches_posterior() {
    run_exact(
        Proposal::OneCoordinate {
            scale: vec![0.2, 0.2],
        },
        1.0,
        40_000,
        12,
    );
}

#[test]
fn guided_random_walk_matches_posterior() {
    run_exact(
        Proposal::GuidedRandomWalk {
            scale: vec![0.15, 0.15],
        },
        1.0,
        40_000,
        13,
    );
}

#[test]
fn tempered_rwmh_matches_tempered_posterior() {
    run_exact(
        Proposal::Gaussian {
            scale: vec![0.4, 0.4],
        },
        0.1,
        30_000,
        14,
    );
}

fn private_settings(accounting: Accounting) -> PenaltyPrivacy {
    PenaltyPrivacy {
        clip: 10.0,
        tau: 0.03,
        n_exponent: 0.5,
        epsilon: 3.0e5,
        delta: 1e-6,
        accounting,
    }
}

/// [`private_settings`] with one field changed by `f`.
fn private_with(f: impl FnOnce(&mut PenaltyPrivacy)) -> PenaltyPrivacy {
    let mut p = private_settings(Accounting::Pld);
    f(&mut p);
    p
}

/// τ = 3 (clip 10, α = 0.5, δ = 1e-6): a budget of a few hundred iterations at ε ≈ 1.
fn tight_privacy(epsilon: f64, accounting: Accounting) -> PenaltyPrivacy {
    PenaltyPrivacy {
        clip: 10.0,
        tau: 3.0,
        n_exponent: 0.5,
        epsilon,
        delta: 1e-6,
        accounting,
    }
}

/// A DP penalty chain on `toy(n, d, data_seed)` with a Gaussian walk of step `step` (T = 1)
/// from `init`, noise from ChaCha20 seeded with `noise_seed`.
fn private_chain(
    (n, data_seed): (usize, u64),
    privacy: PenaltyPrivacy,
    step: f64,
    init: &[f64],
    noise_seed: u64,
) -> Penalty<GaussianPrior, GaussianMean, ChaCha20Rng> {
    let (prior, lik) = toy(n, init.len(), data_seed);
    let settings = PenaltySettings {
        proposal: Proposal::Gaussian {
            scale: vec![step; init.len()],
        },
        temperature: 1.0,
    };
    let noise = ChaCha20Rng::seed_from_u64(noise_seed);
    Penalty::private(prior, lik, settings, privacy, init, noise).unwrap()
}

/// With the clip inactive, the penalty correction makes DP penalty target the exact
/// (tempered) posterior (thesis §3.1).
#[test]
fn dp_penalty_targets_posterior_when_clip_inactive() {
    for (temperature, proposal, seed) in [
        (
            1.0,
            Proposal::Gaussian {
                scale: vec![0.1, 0.1],
            },
            21,
        ),
        (
            0.5,
            Proposal::GuidedRandomWalk {
                scale: vec![0.1, 0.1],
            },
            22,
        ),
    ] {
        let (prior, lik) = toy(100, 2, 1);
        let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, temperature);
        let settings = PenaltySettings {
            proposal,
            temperature,
        };
        let privacy = private_settings(Accounting::Zcdp);
        let mut s = Penalty::private(
            prior,
            lik,
            settings,
            privacy,
            &[0.5, 0.5],
            ChaCha20Rng::seed_from_u64(seed),
        )
        .unwrap();
        let k = s.max_iterations().unwrap();
        assert!(k >= 40_000, "{k}");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed + 100);
        let mut tr = Trace::with_burn_in(2000);
        s.run(40_000, &mut rng, &mut tr).unwrap();
        assert_eq!(
            tr.clip_fraction(),
            0.0,
            "clipping must be inactive for this check"
        );
        let mean_sd = tr.noise_sd.iter().sum::<f64>() / tr.noise_sd.len() as f64;
        assert!(mean_sd > 0.15, "noise must actually be on: {mean_sd}");
        for (j, &(mu, v)) in post.iter().enumerate() {
            check_moments(
                &tr.coordinate(j),
                mu,
                v,
                &format!("dp-penalty T={temperature} coord {j}"),
            );
        }
    }
}

/// DP penalty iterations (PLD, τ = 3, n = 100, α = ½, δ = 1e-6) for ε.
fn penalty_k(epsilon: f64) -> u64 {
    budget::Mechanism::Penalty {
        tau: 3.0,
        n: 100,
        n_exponent: 0.5,
        accounting: Accounting::Pld,
    }
    .iterations(epsilon, 1e-6)
    .unwrap()
}

/// The budget is the accountants' `MaxStepsRequest` (one place for "how many iterations fit"),
/// and an exponent whose `n^α` overflows the noise is named as the exponent, not as τ (the
/// direct call to the calibration function blamed τ).
#[test]
fn dp_penalty_budget_is_the_request_and_names_the_exponent() {
    use dpinfer_accountants::calibrate::{MaxStepsRequest, Method};
    use dpinfer_accountants::{ConversionRule, calibrate};
    let k = MaxStepsRequest::Penalty {
        tau: 3.0,
        a: 0.5,
        method: Method::Pld,
    }
    .max_steps(1.0, 1e-6, 100, ConversionRule::Tightest)
    .unwrap()
    .steps;
    assert_eq!(penalty_k(1.0), k);
    assert_eq!(
        k,
        calibrate::dp_penalty_max_steps_pld(1.0, 1e-6, 3.0, 100, 0.5).unwrap()
    );
    let e = budget::Mechanism::Penalty {
        tau: 0.5,
        n: 100,
        n_exponent: 400.0,
        accounting: Accounting::Zcdp,
    }
    .iterations(1.0, 1e-6)
    .unwrap_err();
    assert!(
        matches!(
            e,
            McmcError::InvalidParameter {
                name: "n_exponent",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn dp_penalty_refuses_to_exceed_budget() {
    let k = penalty_k(1.0);
    let mut s = private_chain(
        (100, 2),
        tight_privacy(1.0, Accounting::Pld),
        0.1,
        &[0.5],
        3,
    );
    run_out_budget(&mut s, k, 4);
    let (eps, delta) = s.epsilon_spent().unwrap().unwrap();
    assert!(eps <= 1.0 && delta == 1e-6, "{eps}");
}

#[test]
fn constructors_validate() {
    let (prior, lik) = toy(10, 2, 3);
    let bad = [
        PenaltySettings {
            proposal: Proposal::Gaussian { scale: vec![0.1] },
            temperature: 1.0,
        },
        PenaltySettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.1, f64::NAN],
            },
            temperature: 1.0,
        },
        PenaltySettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.1, 0.1],
            },
            temperature: 0.0,
        },
        PenaltySettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.1, 0.1],
            },
            temperature: 1.5,
        },
    ];
    for s in bad {
        assert!(Penalty::exact(prior, lik.clone(), s, &[0.0, 0.0]).is_err());
    }
    let ok = PenaltySettings {
        proposal: Proposal::Gaussian {
            scale: vec![0.1, 0.1],
        },
        temperature: 1.0,
    };
    assert!(Penalty::exact(prior, lik.clone(), ok.clone(), &[f64::NAN, 0.0]).is_err());
    assert!(Penalty::exact(prior, lik.clone(), ok.clone(), &[0.0]).is_err());
    for p in [
        private_with(|p| p.epsilon = -1.0),
        private_with(|p| p.delta = 1.0),
        private_with(|p| p.clip = f64::INFINITY),
        private_with(|p| p.tau = 0.0),
        private_with(|p| p.n_exponent = f64::NAN),
        private_with(|p| p.epsilon = 1e-9),
    ] {
        assert!(
            Penalty::private(
                prior,
                lik.clone(),
                ok.clone(),
                p,
                &[0.0, 0.0],
                ChaCha20Rng::seed_from_u64(1)
            )
            .is_err()
        );
    }
}

/// Several private chains share one budget: shares sum to the budget's iteration count and
/// the chains together run exactly that many iterations; exact chains agree (R̂ ≈ 1).
#[test]
fn multichain_splits_budget_and_chains_agree() {
    use dpinfer_mcmc::{ChainShares, MultiChain};
    let privacy = tight_privacy(2.0, Accounting::Pld);
    let k = penalty_k(2.0);
    let chains: Vec<_> = (0..3)
        .map(|i| private_chain((100, 2), privacy, 0.1, &[0.5], 100 + i))
        .collect();
    let mut mc = MultiChain::new(chains).unwrap();
    assert_eq!(mc.shares().unwrap(), &ChainShares::split(k, 3).unwrap());
    assert_eq!(mc.shares().unwrap().shares.iter().sum::<u64>(), k);
    let mut rngs: Vec<_> = (0..3)
        .map(|i| Xoshiro256PlusPlus::seed_from_u64(200 + i))
        .collect();
    let traces = mc.run(u64::MAX, 0, &mut rngs).unwrap();
    assert_eq!(traces.iter().map(|t| t.iterations).sum::<u64>(), k);
    assert!(ChainShares::split(5, 0).is_err());

    let chains: Vec<_> = (0..4)
        .map(|_| {
            let (prior, lik) = toy(100, 1, 2);
            let settings = PenaltySettings {
                proposal: Proposal::Gaussian { scale: vec![0.15] },
                temperature: 1.0,
            };
            Penalty::exact(prior, lik, settings, &[0.5]).unwrap()
        })
        .collect();
    let mut mc = MultiChain::new(chains).unwrap();
    assert!(mc.shares().is_none());
    let mut rngs: Vec<_> = (0..4)
        .map(|i| Xoshiro256PlusPlus::seed_from_u64(300 + i))
        .collect();
    let traces = mc.run(4000, 500, &mut rngs).unwrap();
    let cs: Vec<Vec<f64>> = traces.iter().map(|t| t.coordinate(0)).collect();
    let refs: Vec<&[f64]> = cs.iter().map(Vec::as_slice).collect();
    let r = dpinfer_mcmc::diagnostics::rank_rhat(&refs).unwrap();
    assert!(r < 1.05, "{r}");
}

/// Threads do not change a number: parallel chains equal sequential chains bit for bit.
#[cfg(feature = "parallel")]
#[test]
fn parallel_chains_are_bit_identical() {
    use dpinfer_mcmc::MultiChain;
    let make = || {
        let chains: Vec<_> = (0..3)
            .map(|i| {
                let (prior, lik) = toy(50, 2, 9);
                let privacy = PenaltyPrivacy {
                    clip: 10.0,
                    tau: 1.0,
                    n_exponent: 0.5,
                    epsilon: 50.0,
                    delta: 1e-6,
                    accounting: Accounting::Zcdp,
                };
                let settings = PenaltySettings {
                    proposal: Proposal::GuidedRandomWalk {
                        scale: vec![0.1, 0.1],
                    },
                    temperature: 1.0,
                };
                Penalty::private(
                    prior,
                    lik,
                    settings,
                    privacy,
                    &[0.5, 0.5],
                    ChaCha20Rng::seed_from_u64(40 + i),
                )
                .unwrap()
            })
            .collect();
        MultiChain::new(chains).unwrap()
    };
    let rngs = || {
        (0..3)
            .map(|i| Xoshiro256PlusPlus::seed_from_u64(70 + i))
            .collect::<Vec<_>>()
    };
    let a = make().run(500, 0, &mut rngs()).unwrap();
    for threads in [1, 2, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let b = pool
            .install(|| make().run_parallel(500, 0, &mut rngs()))
            .unwrap();
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&x.draws), bits(&y.draws), "{threads} threads");
            assert_eq!(bits(&x.noise_sd), bits(&y.noise_sd), "{threads} threads");
        }
    }
}
