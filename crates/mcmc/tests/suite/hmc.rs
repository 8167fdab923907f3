#![cfg(feature = "alloc")] // uses the crate's alloc API
//! HMC / DP HMC against the exact conjugate posterior.
use crate::common;

use common::*;
use dpinfer_mcmc::budget::{self, Accounting, GradientCharging};
use dpinfer_mcmc::{Hmc, HmcPrivacy, HmcSettings, MarkovChain, Trace};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

fn settings(t: f64) -> HmcSettings {
    HmcSettings {
        step_size: 0.03,
        leapfrog_steps: 5,
        inv_mass: vec![1.0, 1.0],
        temperature: t,
    }
}

#[test]
fn hmc_matches_posterior() {
    for (t, seed) in [(1.0, 31), (0.3, 32)] {
        let (prior, lik) = toy(100, 2, 1);
        let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, t);
        let mut s = Hmc::exact(prior, lik, settings(t), &[0.5, 0.5]).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut tr = Trace::with_burn_in(500);
        s.run(8_000, &mut rng, &mut tr).unwrap();
        assert!(tr.acceptance_rate() > 0.8, "{}", tr.acceptance_rate());
        for (j, &(mu, v)) in post.iter().enumerate() {
            check_moments(&tr.coordinate(j), mu, v, &format!("hmc T={t} coord {j}"));
        }
    }
}

fn privacy(charging: GradientCharging) -> HmcPrivacy {
    HmcPrivacy {
        ratio_clip: 10.0,
        grad_clip: 10.0,
        tau_l: 0.05,
        tau_g: 0.05,
        epsilon: 1.0e6,
        delta: 1e-6,
        accounting: Accounting::Zcdp,
        charging,
    }
}

/// Noisy clipped gradients keep the leapfrog volume-preserving and reversible (thesis
/// Theorem 10) and the penalty test corrects the noisy ratio, so with inactive clipping DP
/// HMC targets the exact posterior.
#[test]
fn dp_hmc_targets_posterior_when_clip_inactive() {
    for (charging, seed) in [(GradientCharging::Fresh, 41), (GradientCharging::Reuse, 42)] {
        let (prior, lik) = toy(100, 2, 1);
        let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, 1.0);
        let mut s = Hmc::private(
            prior,
            lik,
            settings(1.0),
            privacy(charging),
            &[0.5, 0.5],
            ChaCha20Rng::seed_from_u64(seed),
        )
        .unwrap();
        assert!(s.max_iterations().unwrap() >= 10_000);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed + 7);
        let mut tr = Trace::with_burn_in(500);
        s.run(10_000, &mut rng, &mut tr).unwrap();
        assert_eq!(tr.clip_fraction(), 0.0);
        assert_eq!(tr.gradient_clip_fraction(), 0.0);
        assert!(tr.noise_sd.iter().sum::<f64>() > 0.0);
        for (j, &(mu, v)) in post.iter().enumerate() {
            check_moments(
                &tr.coordinate(j),
                mu,
                v,
                &format!("dp-hmc {charging:?} coord {j}"),
            );
        }
    }
}

#[test]
fn dp_hmc_budget_is_enforced_and_matches_accountant() {
    for charging in [GradientCharging::Fresh, GradientCharging::Reuse] {
        for accounting in [Accounting::Zcdp, Accounting::Pld] {
            let (prior, lik) = toy(100, 2, 1);
            let p = HmcPrivacy {
                tau_l: 2.0,
                tau_g: 2.0,
                epsilon: 2.0,
                accounting,
                ..privacy(charging)
            };
            let k = budget::Mechanism::Hmc {
                tau_l: 2.0,
                tau_g: 2.0,
                n: 100,
                leapfrog: 5,
                charging,
                accounting,
            }
            .iterations(2.0, 1e-6)
            .unwrap();
            let mut s = Hmc::private(
                prior,
                lik,
                settings(1.0),
                p,
                &[0.5, 0.5],
                ChaCha20Rng::seed_from_u64(1),
            )
            .unwrap();
            run_out_budget(&mut s, k, 2);
            let (eps, _) = s.epsilon_spent().unwrap().unwrap();
            assert!(eps <= 2.0, "{eps}");
        }
    }
}

/// Thesis §7.2 for HMC: the acceptance test's ratio clipping is reported; a loose bound leaves
/// the exact posterior intact, a tight one clips most rows.
#[test]
fn hmc_ratio_clipping_is_reported() {
    let (prior, lik) = toy(100, 2, 1);
    let post = lik.posterior(PRIOR_MEAN, PRIOR_SD, 1.0);
    let mut s = Hmc::exact(prior, lik.clone(), settings(1.0), &[0.5, 0.5])
        .unwrap()
        .with_ratio_clip(1e6)
        .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(91);
    let mut tr = Trace::with_burn_in(500);
    s.run(8_000, &mut rng, &mut tr).unwrap();
    assert_eq!(tr.clip_fraction(), 0.0);
    for (j, &(mu, v)) in post.iter().enumerate() {
        check_moments(
            &tr.coordinate(j),
            mu,
            v,
            &format!("hmc loose clip coord {j}"),
        );
    }
    let mut s = Hmc::exact(prior, lik, settings(1.0), &[0.5, 0.5])
        .unwrap()
        .with_ratio_clip(0.01)
        .unwrap();
    let mut tr = Trace::default();
    s.run(500, &mut rng, &mut tr).unwrap();
    assert!(tr.clip_fraction() > 0.5, "{}", tr.clip_fraction());
    assert!(
        Hmc::exact(prior, toy(10, 2, 1).1, settings(1.0), &[0.5, 0.5])
            .unwrap()
            .with_ratio_clip(f64::NAN)
            .is_err()
    );
}
