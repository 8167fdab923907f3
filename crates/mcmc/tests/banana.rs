//! Banana model (thesis §2.3, §7): exact kernels against the exact posterior.
//!
//! The tempered banana posterior is `Ban(μ, Σ, a, b, m)` (thesis Theorem 5), so under the map
//! `(θ₁, u = θ₂ + a(θ₁ − m)² + b)` it is an independent Gaussian with known moments: the
//! chains are checked on `(θ₁, u)` with `check_moments` (false-failure ≈ 1.4e-5 per call).
#![allow(
    clippy::unwrap_used,
    clippy::float_cmp,
    clippy::cast_precision_loss,
    missing_docs
)]
mod common;

use common::check_moments;
use dpinfer_mcmc::model::BananaPriorGrad;
use dpinfer_mcmc::{Hmc, HmcSettings, Penalty, PenaltySettings, Proposal, Sampler, Trace};
use dpinfer_simulators::Simulator;
use dpinfer_simulators::models::banana::{Banana, BananaSettings};
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

fn setup(n: usize) -> (Banana, Vec<f64>) {
    let model = Banana::new(BananaSettings {
        n,
        ..BananaSettings::thesis_2d()
    })
    .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2021);
    let mut x = vec![0.0; model.output_dim()];
    model.simulate(&[0.0, 3.0], &mut rng, &mut x).unwrap();
    (model, x)
}

fn check(model: &Banana, x: &[f64], tr: &Trace, t: f64, what: &str) {
    let data = model.data(x).unwrap();
    let post = model.posterior(&data, t).unwrap();
    let s = model.settings();
    let th1 = tr.coordinate(0);
    let u: Vec<f64> = th1
        .iter()
        .zip(tr.coordinate(1))
        .map(|(&a, b)| b + s.a * (a - s.m) * (a - s.m) + s.b)
        .collect();
    check_moments(
        &th1,
        post.mu()[0],
        post.sd()[0].powi(2),
        &format!("{what} theta1"),
    );
    check_moments(&u, post.mu()[1], post.sd()[1].powi(2), &format!("{what} u"));
}

#[test]
fn hmc_on_banana_matches_exact_posterior() {
    let (model, x) = setup(1000);
    let data = model.data(&x).unwrap();
    let settings = HmcSettings {
        step_size: 0.05,
        leapfrog_steps: 30,
        inv_mass: vec![0.02, 0.3],
        temperature: 1.0,
    };
    let mut s = Hmc::exact(BananaPriorGrad::new(&model), data, settings, &[0.0, 3.0]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut tr = Trace::with_burn_in(300);
    s.run(4000, &mut rng, &mut tr).unwrap();
    eprintln!("hmc banana acceptance {:.3}", tr.acceptance_rate());
    check(&model, &x, &tr, 1.0, "hmc banana");
}

/// RWMH mixes slowly along the banana (thesis §7.2), so this needs a long run: `--ignored`.
#[test]
#[ignore = "long: 600k RWMH iterations"]
fn rwmh_on_banana_matches_exact_posterior() {
    let (model, x) = setup(1000);
    let data = model.data(&x).unwrap();
    let t = 1.0;
    let settings = PenaltySettings {
        proposal: Proposal::Gaussian {
            scale: vec![0.04, 0.1],
        },
        temperature: t,
    };
    let mut s = Penalty::exact(model.prior(), data, settings, &[0.0, 3.0]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let mut tr = Trace::with_burn_in(2000);
    s.run(600_000, &mut rng, &mut tr).unwrap();
    eprintln!("rwmh banana acceptance {:.3}", tr.acceptance_rate());
    check(&model, &x, &tr, t, "rwmh banana");
}
