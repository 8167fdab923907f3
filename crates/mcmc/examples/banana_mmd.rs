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
//! The other panels of Figure 7.2 (and the 10-D clipping experiment of Figure 7.1, with HMC
//! as in the thesis: RWMH does not converge there) run with arguments:
//! `-- --dim 10` (n = 200 000), `-- --tempered` (T = 1000/n for every sampler, MMD against the
//! tempered posterior), or both. Data at θ = (0, 3, 0, …, 0).
//!
//! Run: `cargo run --release -p dpinfer-mcmc --example banana_mmd [-- --dim 10] [--tempered]`
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
    Barker, BarkerPrivacy, BarkerSettings, Hmc, HmcPrivacy, HmcSettings, MarkovChain, Penalty,
    PenaltyPrivacy, PenaltySettings, Proposal, Trace,
};
use dpinfer_simulators::Simulator;
use dpinfer_simulators::models::banana::{Banana, BananaPosterior, BananaSettings};
use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};

fn posterior_draws(post: &BananaPosterior, m: usize, seed: u64) -> Vec<f64> {
    let d = post.mu().len();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = vec![0.0; d * m];
    for c in out.chunks_exact_mut(d) {
        post.sample(&mut rng, c).unwrap();
    }
    out
}

fn second_half_thinned(t: &Trace, d: usize) -> Vec<f64> {
    let n = t.len();
    let half = &t.draws[(n / 2) * d..];
    let rows = half.len() / d;
    let step = (rows / 1000).max(1);
    half.chunks_exact(d)
        .step_by(step)
        .flatten()
        .copied()
        .collect()
}

fn mmd(sample: &[f64], reference: &[f64], d: usize, seed: u64) -> f64 {
    if sample.len() < 2 * d {
        return f64::NAN;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let h = median_bandwidth(sample, reference, d, 50, &mut rng).unwrap_or(1.0);
    mmd2(sample, reference, d, h).unwrap().sqrt()
}

struct Setup {
    model: Banana,
    x: Vec<f64>,
    sd: Vec<f64>,
    sd_t: Vec<f64>,
    start: Vec<f64>,
    reference: Vec<f64>,
    reference_t: Vec<f64>,
    /// θ dimension.
    dim: usize,
    /// Tempering T = 1000/n of DP Barker.
    t_barker: f64,
    /// Temper DP penalty and DP HMC as well (MMD against the tempered posterior).
    tempered: bool,
}

/// Per-coordinate vector: `first` for θ₁, `second` for θ₂, `rest` for θ₃…
fn per_coord(d: usize, first: f64, second: f64, rest: impl Fn(usize) -> f64) -> Vec<f64> {
    (0..d)
        .map(|k| match k {
            0 => first,
            1 => second,
            _ => rest(k),
        })
        .collect()
}

/// One private run at `eps`; returns (MMD, iterations, ratio clip fraction, acceptance).
fn run_one(
    st: &Setup,
    which: usize,
    eps: f64,
    seed: u64,
) -> Result<(f64, u64, f64, f64), dpinfer_mcmc::McmcError> {
    let (model, x, d) = (&st.model, &st.x, st.dim);
    let sd = if st.tempered { &st.sd_t } else { &st.sd };
    let (temp, target) = if st.tempered {
        (st.t_barker, &st.reference_t)
    } else {
        (1.0, &st.reference)
    };
    let noise = ChaCha20Rng::seed_from_u64(1000 + seed);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2000 + seed);
    let mut tr = Trace::default();
    let small: Vec<f64> = sd.iter().map(|s| 0.3 * s).collect();
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
                    temperature: temp,
                },
                privacy,
                &st.start,
                noise,
            )?;
            let k = s.max_iterations().unwrap_or(0);
            s.run(k, &mut rng, &mut tr)?;
            (k, target)
        }
        2 => {
            let hs = HmcSettings {
                step_size: 0.2,
                leapfrog_steps: 10,
                inv_mass: per_coord(d, sd[0] * sd[0], 4.0 * sd[1] * sd[1], |k| sd[k] * sd[k]),
                temperature: temp,
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
            (k, target)
        }
        _ => {
            let bs = BarkerSettings {
                proposal: Proposal::Gaussian {
                    scale: per_coord(d, 0.15 * st.sd_t[0], 0.3 * st.sd_t[1], |k| 0.3 * st.sd_t[k]),
                },
                temperature: st.t_barker,
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
        mmd(&second_half_thinned(&tr, d), reference, d, 3000 + seed),
        k,
        tr.clip_fraction(),
        tr.acceptance_rate(),
    ))
}

/// `--dim N` (default 2) and `--tempered`.
fn parse_args() -> (usize, bool) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dim = 2;
    let mut tempered = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--dim" => {
                dim = args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(0);
                i += 1;
            }
            "--tempered" => tempered = true,
            other => {
                eprintln!("unknown argument {other}; usage: banana_mmd [--dim N] [--tempered]");
                std::process::exit(2);
            }
        }
        i += 1;
    }
    if dim < 2 {
        eprintln!("--dim needs an integer ≥ 2");
        std::process::exit(2);
    }
    (dim, tempered)
}

fn main() {
    let (dim, tempered) = parse_args();
    let settings = if dim == 2 {
        BananaSettings::thesis_2d()
    } else {
        BananaSettings {
            dim,
            ..BananaSettings::thesis_10d()
        }
    };
    let model = Banana::new(settings).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2021);
    let mut x = vec![0.0; model.output_dim()];
    let mut truth = vec![0.0; dim];
    truth[1] = 3.0;
    model.simulate(&truth, &mut rng, &mut x).unwrap();
    let data = model.data(&x).unwrap();
    let post = model.posterior(&data, 1.0).unwrap();
    let t_barker = 1000.0 / settings.n as f64;
    let post_t = model.posterior(&data, t_barker).unwrap();
    let reference = posterior_draws(&post, 2000, 1);
    let reference_t = posterior_draws(&post_t, 2000, 2);
    let baseline = mmd(&posterior_draws(&post, 1000, 3), &reference, dim, 4);
    let baseline_t = mmd(&posterior_draws(&post_t, 1000, 5), &reference_t, dim, 6);
    println!(
        "{dim}-D banana, n = {}: exact-posterior baseline MMD: {baseline:.4} (tempered T = {t_barker}: {baseline_t:.4})",
        settings.n
    );
    let sd = post.sd().to_vec();
    let mu = post.mu();
    let start = per_coord(dim, mu[0], mu[1] - 20.0 * mu[0] * mu[0], |k| mu[k]);
    let st = Setup {
        sd_t: post_t.sd().to_vec(),
        model,
        x,
        sd: sd.clone(),
        start: start.clone(),
        reference,
        reference_t,
        dim,
        t_barker,
        tempered,
    };
    if dim == 2 && !tempered {
        two_d_extras(&st);
    } else if !tempered {
        hmc_clipping(&st);
    }
    mmd_vs_epsilon(&st);
}

/// Figure 7.1 right panels: non-private HMC (500 draws, L = 10) with ratio clip b.
fn hmc_clipping(st: &Setup) {
    let sd = &st.sd;
    println!(
        "\n## Clipping (non-private HMC, 500 iterations, L = 10, mean of 2 seeds)\n\n| clip bound b | clip fraction | MMD |\n|---|---|---|"
    );
    let sd_theta2 = (sd[1] * sd[1] + 2.0 * 400.0 * sd[0].powi(4)).sqrt();
    for b in [0.1, 0.2, 0.5, 1.0, 2.0, 5.0] {
        let (mut m, mut c) = (0.0, 0.0);
        for seed in 0..2 {
            let hs = HmcSettings {
                step_size: 0.3,
                leapfrog_steps: 10,
                inv_mass: per_coord(st.dim, sd[0] * sd[0], sd_theta2 * sd_theta2, |k| {
                    sd[k] * sd[k]
                }),
                temperature: 1.0,
            };
            let mut s = Hmc::exact(
                BananaPriorGrad::new(&st.model),
                st.model.data(&st.x).unwrap(),
                hs,
                &st.start,
            )
            .unwrap()
            .with_ratio_clip(b)
            .unwrap();
            let mut tr = Trace::default();
            s.run(
                500,
                &mut Xoshiro256PlusPlus::seed_from_u64(10 + seed),
                &mut tr,
            )
            .unwrap();
            m += mmd(
                &second_half_thinned(&tr, st.dim),
                &st.reference,
                st.dim,
                11 + seed,
            ) / 2.0;
            c += tr.clip_fraction() / 2.0;
        }
        println!("| {b} | {c:.4} | {m:.4} |");
    }
}

/// The 2-D-only sections: RWMH clipping experiment and ESS/s of the exact kernels.
fn two_d_extras(st: &Setup) {
    let (sd, start) = (&st.sd, &st.start);
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
                start,
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
            m += mmd(&second_half_thinned(&tr, 2), &st.reference, 2, 11 + seed) / 3.0;
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
                    start,
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
                    start,
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
}

/// Figure 7.2: MMD against ε for every sampler.
fn mmd_vs_epsilon(st: &Setup) {
    let temp = if st.tempered {
        format!(", DP penalty and DP HMC tempered with T = {}", st.t_barker)
    } else {
        String::new()
    };
    println!(
        "\n## MMD vs ε (δ = 1e-6, PLD/RDP budgets, mean of 3 seeds; k = iterations, clip = ratio clip fraction, acc = acceptance{temp})\n"
    );
    println!(
        "| ε | DP penalty | DP penalty GRW | DP HMC L=10 | DP Barker T={}, |B|=1000 |\n|---|---|---|---|---|",
        if st.dim == 2 {
            "1e-2".to_string()
        } else {
            st.t_barker.to_string()
        }
    );
    for e in 1u64..=6 {
        let eps = e as f64;
        let mut row = format!("| {e} |");
        for which in 0..4 {
            let mut acc = (0.0, 0, 0.0, 0.0);
            let mut err = None;
            for seed in 0..3 {
                match run_one(st, which, eps, 100 * e + 10 * which as u64 + seed) {
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
