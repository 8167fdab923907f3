//! Thesis §7 reproduction on the 2-D banana (n = 100 000 rows at θ = (0, 3)):
//!
//! 1. §7.2 clipping experiment: non-private RWMH with per-row ratios clipped to
//!    `±b‖θ'−θ‖`, MMD to the exact posterior and clip fraction, for a grid of bounds b.
//! 2. §7.4 / Figure 7.2: MMD to the exact posterior against ε ∈ {1, …, 6} for DP penalty
//!    (Gaussian and guided-random-walk proposals, PLD budget), DP HMC (PLD budget) and, on
//!    the tempered posterior (T = 1000/n), DP Barker; plus the exact-posterior baseline.
//!
//! MMD uses the Gaussian RBF kernel with the thesis bandwidth rule (median pairwise distance
//! of 50 + 50 points drawn with replacement) on the second half of each chain (thinned to at
//! most 1000 draws) against 2000 exact posterior draws.
//!
//! Run: `cargo run --release -p dpinfer-mcmc --example banana_mmd`
#![allow(
    clippy::unwrap_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    missing_docs
)]

use dpinfer_mcmc::budget::{Accounting, GradientCharging};
use dpinfer_mcmc::diagnostics::{median_bandwidth, mmd2};
use dpinfer_mcmc::model::BananaPriorGrad;
use dpinfer_mcmc::{
    Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcPrivacy, HmcSettings, Penalty, PenaltyPrivacy,
    PenaltySettings, Proposal, Sampler, Trace,
};
use dpinfer_simulators::Simulator;
use dpinfer_simulators::models::banana::{Banana, BananaPosterior, BananaSettings};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

fn posterior_draws(post: &BananaPosterior, m: usize, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = vec![0.0; 2 * m];
    for c in out.chunks_exact_mut(2) {
        post.sample(&mut rng, c).unwrap();
    }
    out
}

fn second_half_thinned(t: &Trace) -> Vec<f64> {
    let n = t.len();
    let half = &t.draws[(n / 2) * 2..];
    let rows = half.len() / 2;
    let step = (rows / 1000).max(1);
    half.chunks_exact(2)
        .step_by(step)
        .flatten()
        .copied()
        .collect()
}

fn mmd(sample: &[f64], reference: &[f64], seed: u64) -> f64 {
    if sample.len() < 4 {
        return f64::NAN;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let h = median_bandwidth(sample, reference, 2, 50, &mut rng).unwrap_or(1.0);
    mmd2(sample, reference, 2, h).unwrap().sqrt()
}

fn main() {
    let model = Banana::new(BananaSettings::thesis_2d()).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2021);
    let mut x = vec![0.0; model.output_dim()];
    model.simulate(&[0.0, 3.0], &mut rng, &mut x).unwrap();
    let data = model.data(&x).unwrap();
    let post = model.posterior(&data, 1.0).unwrap();
    let n = 100_000.0;
    let t_barker = 1000.0 / n;
    let post_t = model.posterior(&data, t_barker).unwrap();
    let reference = posterior_draws(&post, 2000, 1);
    let reference_t = posterior_draws(&post_t, 2000, 2);
    let baseline = mmd(&posterior_draws(&post, 1000, 3), &reference, 4);
    let baseline_t = mmd(&posterior_draws(&post_t, 1000, 5), &reference_t, 6);
    println!(
        "exact-posterior baseline MMD: {baseline:.4} (tempered T = {t_barker}: {baseline_t:.4})"
    );
    let sd = post.sd().to_vec();
    let scale = vec![1.5 * sd[0], 3.0 * sd[1]];
    let start = [
        post.mu()[0],
        post.mu()[1] - 20.0 * post.mu()[0] * post.mu()[0],
    ];

    println!(
        "\n## Clipping (non-private RWMH, 3000 iterations)\n\n| clip bound b | clip fraction | MMD |\n|---|---|---|"
    );
    for b in [0.5, 1.0, 2.0, 5.0, 10.0, 50.0] {
        let settings = PenaltySettings {
            proposal: Proposal::Gaussian {
                scale: scale.clone(),
            },
            temperature: 1.0,
        };
        let mut s = Penalty::exact(model.prior(), model.data(&x).unwrap(), settings, &start)
            .unwrap()
            .with_clip(b)
            .unwrap();
        let mut tr = Trace::default();
        s.run(3000, &mut Xoshiro256PlusPlus::seed_from_u64(10), &mut tr)
            .unwrap();
        println!(
            "| {b} | {:.4} | {:.4} |",
            tr.clip_fraction(),
            mmd(&second_half_thinned(&tr), &reference, 11)
        );
    }

    println!("\n## MMD vs ε (δ = 1e-6; iterations from the PLD budget)\n");
    println!(
        "| ε | DP penalty (k) | DP penalty GRW | DP HMC L=10 (k) | DP Barker T=1e-2, |B|=1000 (k, clip frac) |\n|---|---|---|---|---|"
    );
    for e in 1u64..=6 {
        let eps = e as f64;
        let mut row = format!("| {e} |");
        for (i, prop) in [
            Proposal::Gaussian {
                scale: scale.clone(),
            },
            Proposal::GuidedRandomWalk {
                scale: scale.clone(),
            },
        ]
        .into_iter()
        .enumerate()
        {
            let privacy = PenaltyPrivacy {
                clip: 5.0,
                tau: 0.1,
                n_exponent: 0.5,
                epsilon: eps,
                delta: 1e-6,
                accounting: Accounting::Pld,
            };
            let settings = PenaltySettings {
                proposal: prop,
                temperature: 1.0,
            };
            let mut s = Penalty::private(
                model.prior(),
                model.data(&x).unwrap(),
                settings,
                privacy,
                &start,
                ChaCha20Rng::seed_from_u64(100 + e),
            )
            .unwrap();
            let k = s.max_iterations().unwrap();
            let mut tr = Trace::default();
            s.run(k, &mut Xoshiro256PlusPlus::seed_from_u64(200 + e), &mut tr)
                .unwrap();
            let m = mmd(&second_half_thinned(&tr), &reference, 12);
            if i == 0 {
                row += &format!(" {m:.4} ({k}, clip {:.3}) |", tr.clip_fraction());
            } else {
                row += &format!(" {m:.4} |");
            }
        }
        let hs = HmcSettings {
            step_size: 0.2,
            leapfrog_steps: 10,
            inv_mass: vec![sd[0] * sd[0], 4.0 * sd[1] * sd[1]],
            temperature: 1.0,
        };
        let hp = HmcPrivacy {
            ratio_clip: 5.0,
            grad_clip: 5.0,
            tau_l: 0.1,
            tau_g: 0.1,
            epsilon: eps,
            delta: 1e-6,
            accounting: Accounting::Pld,
            charging: GradientCharging::Reuse,
        };
        match Hmc::private(
            BananaPriorGrad::new(&model),
            model.data(&x).unwrap(),
            hs,
            hp,
            &start,
            ChaCha20Rng::seed_from_u64(300 + e),
        ) {
            Ok(mut s) => {
                let k = s.max_iterations().unwrap();
                let mut tr = Trace::default();
                s.run(k, &mut Xoshiro256PlusPlus::seed_from_u64(400 + e), &mut tr)
                    .unwrap();
                row += &format!(
                    " {:.4} ({k}, clip {:.3}/{:.3}) |",
                    mmd(&second_half_thinned(&tr), &reference, 13),
                    tr.clip_fraction(),
                    tr.gradient_clip_fraction()
                );
            }
            Err(err) => row += &format!(" – ({err}) |"),
        }
        let bs = BarkerSettings {
            proposal: Proposal::Gaussian {
                scale: vec![0.15 * post_t.sd()[0], 0.3 * post_t.sd()[1]],
            },
            temperature: t_barker,
        };
        match Barker::private(
            model.prior(),
            model.data(&x).unwrap(),
            bs,
            BarkerPrivacy {
                batch: 1000,
                epsilon: eps,
                delta: 1e-6,
            },
            &start,
            ChaCha20Rng::seed_from_u64(500 + e),
        ) {
            Ok(mut s) => {
                let k = s.max_iterations().unwrap();
                let mut tr = Trace::default();
                s.run(k, &mut Xoshiro256PlusPlus::seed_from_u64(600 + e), &mut tr)
                    .unwrap();
                row += &format!(
                    " {:.4} ({k}, {:.3}) |",
                    mmd(&second_half_thinned(&tr), &reference_t, 14),
                    tr.clip_fraction()
                );
            }
            Err(err) => row += &format!(" – ({err}) |"),
        }
        println!("{row}");
    }
}
