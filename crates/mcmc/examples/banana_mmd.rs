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

struct Setup {
    model: Banana,
    x: Vec<f64>,
    sd: Vec<f64>,
    sd_t: Vec<f64>,
    start: [f64; 2],
    reference: Vec<f64>,
    reference_t: Vec<f64>,
}

/// One private run at `eps`; returns (MMD, iterations, ratio clip fraction, acceptance).
fn run_one(
    st: &Setup,
    which: usize,
    eps: f64,
    seed: u64,
) -> Result<(f64, u64, f64, f64), dpinfer_mcmc::McmcError> {
    let (model, x, sd) = (&st.model, &st.x, &st.sd);
    let noise = ChaCha20Rng::seed_from_u64(1000 + seed);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2000 + seed);
    let mut tr = Trace::default();
    let small = vec![0.3 * sd[0], 0.3 * sd[1]];
    let (k, reference) = match which {
        0 | 1 => {
            let proposal = if which == 0 {
                Proposal::Gaussian { scale: small }
            } else {
                Proposal::GuidedRandomWalk { scale: small }
            };
            let privacy = PenaltyPrivacy {
                clip: 1.0,
                tau: 0.1,
                n_exponent: 0.5,
                epsilon: eps,
                delta: 1e-6,
                accounting: Accounting::Pld,
            };
            let mut s = Penalty::private(
                model.prior(),
                model.data(x)?,
                PenaltySettings {
                    proposal,
                    temperature: 1.0,
                },
                privacy,
                &st.start,
                noise,
            )?;
            let k = s.max_iterations().unwrap_or(0);
            s.run(k, &mut rng, &mut tr)?;
            (k, &st.reference)
        }
        2 => {
            let hs = HmcSettings {
                step_size: 0.2,
                leapfrog_steps: 10,
                inv_mass: vec![sd[0] * sd[0], 4.0 * sd[1] * sd[1]],
                temperature: 1.0,
            };
            let hp = HmcPrivacy {
                ratio_clip: 1.0,
                grad_clip: 2.0,
                tau_l: 0.1,
                tau_g: 0.1,
                epsilon: eps,
                delta: 1e-6,
                accounting: Accounting::Pld,
                charging: GradientCharging::Reuse,
            };
            let mut s = Hmc::private(
                BananaPriorGrad::new(model),
                model.data(x)?,
                hs,
                hp,
                &st.start,
                noise,
            )?;
            let k = s.max_iterations().unwrap_or(0);
            s.run(k, &mut rng, &mut tr)?;
            (k, &st.reference)
        }
        _ => {
            let bs = BarkerSettings {
                proposal: Proposal::Gaussian {
                    scale: vec![0.15 * st.sd_t[0], 0.3 * st.sd_t[1]],
                },
                temperature: 1000.0 / 100_000.0,
            };
            let mut s = Barker::private(
                model.prior(),
                model.data(x)?,
                bs,
                BarkerPrivacy {
                    batch: 1000,
                    epsilon: eps,
                    delta: 1e-6,
                },
                &st.start,
                noise,
            )?;
            let k = s.max_iterations().unwrap_or(0);
            s.run(k, &mut rng, &mut tr)?;
            (k, &st.reference_t)
        }
    };
    Ok((
        mmd(&second_half_thinned(&tr), reference, 3000 + seed),
        k,
        tr.clip_fraction(),
        tr.acceptance_rate(),
    ))
}

fn main() {
    let model = Banana::new(BananaSettings::thesis_2d()).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2021);
    let mut x = vec![0.0; model.output_dim()];
    model.simulate(&[0.0, 3.0], &mut rng, &mut x).unwrap();
    let data = model.data(&x).unwrap();
    let post = model.posterior(&data, 1.0).unwrap();
    let t_barker = 1000.0 / 100_000.0;
    let post_t = model.posterior(&data, t_barker).unwrap();
    let reference = posterior_draws(&post, 2000, 1);
    let reference_t = posterior_draws(&post_t, 2000, 2);
    let baseline = mmd(&posterior_draws(&post, 1000, 3), &reference, 4);
    let baseline_t = mmd(&posterior_draws(&post_t, 1000, 5), &reference_t, 6);
    println!(
        "exact-posterior baseline MMD: {baseline:.4} (tempered T = {t_barker}: {baseline_t:.4})"
    );
    let sd = post.sd().to_vec();
    let start = [
        post.mu()[0],
        post.mu()[1] - 20.0 * post.mu()[0] * post.mu()[0],
    ];
    let st = Setup {
        sd_t: post_t.sd().to_vec(),
        model,
        x,
        sd: sd.clone(),
        start,
        reference,
        reference_t,
    };

    println!(
        "\n## Clipping (non-private RWMH, 3000 iterations, mean of 3 seeds)\n\n| clip bound b | clip fraction | MMD |\n|---|---|---|"
    );
    for b in [0.1, 0.2, 0.5, 1.0, 2.0, 5.0] {
        let (mut m, mut c) = (0.0, 0.0);
        for seed in 0..3 {
            let settings = PenaltySettings {
                proposal: Proposal::Gaussian {
                    scale: vec![1.5 * sd[0], 3.0 * sd[1]],
                },
                temperature: 1.0,
            };
            let mut s = Penalty::exact(
                st.model.prior(),
                st.model.data(&st.x).unwrap(),
                settings,
                &start,
            )
            .unwrap()
            .with_clip(b)
            .unwrap();
            let mut tr = Trace::default();
            s.run(
                3000,
                &mut Xoshiro256PlusPlus::seed_from_u64(10 + seed),
                &mut tr,
            )
            .unwrap();
            m += mmd(&second_half_thinned(&tr), &st.reference, 11 + seed) / 3.0;
            c += tr.clip_fraction() / 3.0;
        }
        println!("| {b} | {c:.4} | {m:.4} |");
    }

    println!(
        "\n## ESS/s of the exact kernels (n = 100 000, min bulk ESS over θ₁, θ₂)\n\n| kernel | iterations | seconds | min bulk ESS | ESS/s | acceptance |\n|---|---|---|---|---|---|"
    );
    {
        let sd0 = sd[0];
        // whitened scales along θ₁ and along the banana's θ₂ marginal (≈ √(σ₂² + 2a²σ₁⁴))
        let sd_theta2 = (sd[1] * sd[1] + 2.0 * 400.0 * sd0.powi(4)).sqrt();
        for (name, iters) in [
            ("HMC (L = 10, ε = 0.3, diag mass)", 2000u64),
            ("RWMH (Gaussian)", 20_000),
        ] {
            let t0 = std::time::Instant::now();
            let mut tr = Trace::with_burn_in(iters / 10);
            let mut r = Xoshiro256PlusPlus::seed_from_u64(77);
            if name.starts_with("HMC") {
                let hs = HmcSettings {
                    step_size: 0.3,
                    leapfrog_steps: 10,
                    inv_mass: vec![sd0 * sd0, sd_theta2 * sd_theta2],
                    temperature: 1.0,
                };
                let mut s = Hmc::exact(
                    BananaPriorGrad::new(&st.model),
                    st.model.data(&st.x).unwrap(),
                    hs,
                    &start,
                )
                .unwrap();
                s.run(iters, &mut r, &mut tr).unwrap();
            } else {
                let settings = PenaltySettings {
                    proposal: Proposal::Gaussian {
                        scale: vec![1.2 * sd0, 1.2 * sd_theta2],
                    },
                    temperature: 1.0,
                };
                let mut s = Penalty::exact(
                    st.model.prior(),
                    st.model.data(&st.x).unwrap(),
                    settings,
                    &start,
                )
                .unwrap();
                s.run(iters, &mut r, &mut tr).unwrap();
            }
            let secs = t0.elapsed().as_secs_f64();
            let ess = (0..2)
                .map(|j| dpinfer_mcmc::diagnostics::ess_bulk(&[&tr.coordinate(j)]).unwrap_or(0.0))
                .fold(f64::INFINITY, f64::min);
            println!(
                "| {name} | {iters} | {secs:.2} | {ess:.0} | {:.0} | {:.2} |",
                ess / secs,
                tr.acceptance_rate()
            );
        }
    }

    println!(
        "\n## MMD vs ε (δ = 1e-6, PLD/RDP budgets, mean of 3 seeds; k = iterations, clip = ratio clip fraction, acc = acceptance)\n"
    );
    println!(
        "| ε | DP penalty | DP penalty GRW | DP HMC L=10 | DP Barker T=1e-2, |B|=1000 |\n|---|---|---|---|---|"
    );
    for e in 1u64..=6 {
        let eps = e as f64;
        let mut row = format!("| {e} |");
        for which in 0..4 {
            let mut acc = (0.0, 0, 0.0, 0.0);
            let mut err = None;
            for seed in 0..3 {
                match run_one(&st, which, eps, 100 * e + 10 * which as u64 + seed) {
                    Ok((m, k, c, a)) => {
                        acc = (acc.0 + m / 3.0, k, acc.2 + c / 3.0, acc.3 + a / 3.0)
                    }
                    Err(x) => err = Some(x),
                }
            }
            match err {
                None => {
                    row += &format!(
                        " {:.3} (k {}, clip {:.2}, acc {:.2}) |",
                        acc.0, acc.1, acc.2, acc.3
                    )
                }
                Some(x) => row += &format!(" – ({x}) |"),
            }
        }
        println!("{row}");
    }
}
