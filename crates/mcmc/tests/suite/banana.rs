#![cfg(feature = "alloc")] // uses the crate's alloc API
//! Banana model (thesis §2.3, §7): exact kernels against the exact posterior.
//!
//! The tempered banana posterior is `Ban(μ, Σ, a, b, m)` (thesis Theorem 5), so under the map
//! `(θ₁, u = θ₂ + a(θ₁ − m)² + b)` it is an independent Gaussian with known moments: the
//! chains are checked on `(θ₁, u)` with `check_moments` (false-failure ≈ 1.4e-5 per call).
use crate::common;

use common::check_moments;
use dpinfer_mcmc::model::BananaPriorGrad;
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcSettings, MarkovChain, Penalty, PenaltySettings,
    Proposal, Shear, Trace,
};
use dpinfer_simulators::Simulator;
use dpinfer_simulators::models::banana::{Banana, BananaSettings};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

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

/// 2-D banana with milder curvature a = 2 (CI-sized, n = 1000): HMC against the exact
/// posterior.
#[test]
fn hmc_on_banana_matches_exact_posterior() {
    let model = Banana::new(BananaSettings {
        n: 1000,
        a: 2.0,
        ..BananaSettings::thesis_2d()
    })
    .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2021);
    let mut x = vec![0.0; model.output_dim()];
    model.simulate(&[0.0, 3.0], &mut rng, &mut x).unwrap();
    let settings = HmcSettings {
        step_size: 0.05,
        leapfrog_steps: 30,
        inv_mass: vec![0.02, 0.01],
        temperature: 1.0,
    };
    let mut s = Hmc::exact(
        BananaPriorGrad::new(&model),
        model.data(&x).unwrap(),
        settings,
        &[0.0, 3.0],
    )
    .unwrap();
    let mut tr = Trace::with_burn_in(300);
    s.run(3000, &mut Xoshiro256PlusPlus::seed_from_u64(1), &mut tr)
        .unwrap();
    eprintln!("hmc banana a=2 acceptance {:.3}", tr.acceptance_rate());
    check(&model, &x, &tr, 1.0, "hmc banana a=2");
}

/// The thesis' 2-D banana (a = 20). Step 0.02: with 0.05 the banana's tips
/// (|θ₁ − μ₁| > 2 sd) see ~50 % rejections and are under-visited in finite runs (θ₁ variance
/// −10 % over 40 000 iterations, the usual HMC high-curvature pathology); at 0.02 tip
/// rejections drop to ~5 %. Long: `--ignored`.
#[test]
#[ignore = "long: 40k HMC iterations with L = 75"]
fn hmc_on_thesis_banana_matches_exact_posterior() {
    let (model, x) = setup(1000);
    let data = model.data(&x).unwrap();
    let settings = HmcSettings {
        step_size: 0.02,
        leapfrog_steps: 75,
        inv_mass: vec![0.02, 0.3],
        temperature: 1.0,
    };
    let mut s = Hmc::exact(BananaPriorGrad::new(&model), data, settings, &[0.0, 3.0]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut tr = Trace::with_burn_in(500);
    s.run(40_000, &mut rng, &mut tr).unwrap();
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

/// The banana's own shear (a = 20, m = 0) as the proposal's.
fn shear(model: &Banana) -> Shear {
    let s = model.settings();
    Shear { a: s.a, m: s.m }
}

/// The sheared walk ([`Proposal::Sheared`]) on the thesis' banana (n = 1000, T = 1: θ₁ sd
/// 0.14, θ₂ spread 0.57 about a ridge 0.05 wide, the curvature of the DP Barker examples'
/// tempered posterior): exact Barker matches the exact posterior after 20 000 iterations,
/// where the plain Gaussian walk needs 600 000 ([`rwmh_on_banana_matches_exact_posterior`]).
/// False-failure ≈ 2.8e-5 (two `check_moments` calls of ≈ 1.4e-5).
#[test]
fn exact_barker_with_the_sheared_walk_matches_the_exact_banana_posterior() {
    let (model, x) = setup(1000);
    let settings = BarkerSettings {
        proposal: Proposal::Sheared {
            scale: vec![0.2, 0.07],
            shear: shear(&model),
        },
        temperature: 1.0,
    };
    let data = model.data(&x).unwrap();
    let mut s = Barker::exact(model.prior(), data, settings, &[0.0, 3.0]).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let mut tr = Trace::with_burn_in(1000);
    s.run(20_000, &mut rng, &mut tr).unwrap();
    eprintln!("sheared barker acceptance {:.3}", tr.acceptance_rate());
    check(&model, &x, &tr, 1.0, "sheared barker banana");
}

/// DP Barker with the sheared walk on the banana at n = 5 000, batch 1 000, T = 0.05 (n₀ = nT
/// = 250: the tempered posterior has θ₁ sd 0.28 and θ₂ spread 2.3 about a ridge 0.1 wide),
/// steps of 0.6 posterior sd in the sheared coordinates. The per-row clip √|B|/n₀ = 0.126 is
/// about twice a row's ratio sd at these steps, so under 1 % of the ratios are clipped
/// (asserted) and the chain targets the tempered posterior up to the CLT and V_corr
/// approximations (as `barker::dp_barker_targets_tempered_posterior`); checked against it
/// on (θ₁, u) with the exact kernels' tolerance (false-failure ≈ 2.8e-5). ε = 3·10⁴ only buys
/// the iterations.
#[test]
fn dp_barker_with_the_sheared_walk_targets_the_tempered_banana() {
    let (model, x) = setup(5000);
    let t = 250.0 / 5000.0;
    let settings = BarkerSettings {
        proposal: Proposal::Sheared {
            scale: vec![0.12, 0.042],
            shear: shear(&model),
        },
        temperature: t,
    };
    let privacy = BarkerPrivacy {
        batch: 1000,
        epsilon: 3.0e4,
        delta: 1e-6,
    };
    let data = model.data(&x).unwrap();
    let noise = ChaCha20Rng::seed_from_u64(54);
    let mut s =
        Barker::private(model.prior(), data, settings, privacy, &[0.0, 3.0], noise).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(55);
    let mut tr = Trace::with_burn_in(1000);
    s.run(30_000, &mut rng, &mut tr).unwrap();
    eprintln!(
        "sheared dp-barker clip fraction {:.4}, acceptance {:.3}",
        tr.clip_fraction(),
        tr.acceptance_rate()
    );
    assert!(tr.clip_fraction() < 0.02);
    check(&model, &x, &tr, t, "sheared dp-barker banana");
}

/// 10-D banana (thesis §7 variances σ₃² = … = σ₁₀² = 1), CI-sized (n = 1000) and with milder
/// curvature a = 2 (at a = 20 and n = 1000 a fixed-length diagonal-mass HMC under-visits the
/// banana's tips within a CI budget): HMC against the exact posterior on (θ₁, u) and on two
/// of the Gaussian coordinates.
#[test]
fn hmc_on_10d_banana_matches_exact_posterior() {
    let model = Banana::new(BananaSettings {
        n: 1000,
        a: 2.0,
        ..BananaSettings::thesis_10d()
    })
    .unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2022);
    let mut x = vec![0.0; model.output_dim()];
    let mut truth = vec![0.0; 10];
    truth[1] = 3.0;
    model.simulate(&truth, &mut rng, &mut x).unwrap();
    let data = model.data(&x).unwrap();
    let post = model.posterior(&data, 1.0).unwrap();
    let mut inv_mass = vec![0.02, 0.01];
    inv_mass.extend(post.sd()[2..].iter().map(|s| s * s));
    let settings = HmcSettings {
        step_size: 0.05,
        leapfrog_steps: 30,
        inv_mass,
        temperature: 1.0,
    };
    let mut init = post.mu().to_vec();
    init[1] -= 2.0 * init[0] * init[0];
    let mut s = Hmc::exact(
        BananaPriorGrad::new(&model),
        model.data(&x).unwrap(),
        settings,
        &init,
    )
    .unwrap();
    let mut tr = Trace::with_burn_in(300);
    s.run(3000, &mut Xoshiro256PlusPlus::seed_from_u64(3), &mut tr)
        .unwrap();
    eprintln!("hmc 10-d banana acceptance {:.3}", tr.acceptance_rate());
    check(&model, &x, &tr, 1.0, "hmc 10-d banana");
    for j in [2, 9] {
        check_moments(
            &tr.coordinate(j),
            post.mu()[j],
            post.sd()[j].powi(2),
            &format!("hmc 10-d banana theta{}", j + 1),
        );
    }
}
