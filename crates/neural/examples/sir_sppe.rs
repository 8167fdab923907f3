//! The SIR experiment of Xiong, Ju & Zhang (App. E.1.1) by SPPE and SPLE, against a long SMC-ABC
//! run of `dpinfer-abc` as the reference posterior (MMD with the median-heuristic Gaussian
//! kernel on θ = (β, γ), as the paper).
//!
//! Model as `dpinfer-abc`'s `sir_private` example: the paper's priors (log β ~ N(log 0.4, 0.5),
//! log γ ~ N(log 0.125, 0.2)), K = 10⁶, L = 10 observation times on [0, 160], the binomial
//! infection-curve mechanism with n = m = 1000 (ε = 10) and the paper's printed `s_dp°`; the SIR
//! simulated by tau-leaping (τ = 0.05). The neural samplers see the mechanism through its noise
//! map `τ(u, s)` (`dpinfer_mechanisms::BinomialCurve`, counts divided by n to give the printed
//! proportions); SMC-ABC through its public replica.
//!
//! Not run in CI. Run:
//! `cargo run --release -p dpinfer-neural --example sir_sppe -- [--rounds 10] [--sims 1000]
//! [--m 8] [--maf] [--max-epochs N] [--abc-tolerance 0.05] [--seed 1] [--no-sppe] [--no-sple]`
//! (defaults: the paper's 10 rounds of 1000 simulations and its 8-layer spline flow).
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::smc::{BinomialReplicate, Privatized, SmcAbc, SmcSettings, Tolerance};
use dpinfer_mcmc::diagnostics::{median_bandwidth, mmd2};
use dpinfer_mechanisms::{BinomialCurve, MechanismError, NoiseMap};
use dpinfer_neural::{FlowSettings, MafSettings, SequentialSettings, TrainSettings, sple, sppe};
use dpinfer_simulators::SimStream;
use dpinfer_simulators::models::sir::{SirSettings, SirTauLeap, paper_prior, theta_star};
use std::time::Instant;

/// The paper's published private statistic `s_dp°` (proportions of n = 1000).
const S_DP: [f64; 10] = [
    0.0010, 0.0310, 0.6140, 0.2630, 0.1230, 0.0470, 0.0180, 0.0090, 0.0050, 0.0030,
];
const N: u64 = 1000;
const M_PSEUDO: u64 = 1000;
const K: u64 = 1_000_000;

/// The binomial curve's noise map with the counts divided by `n` (the paper's proportions).
struct Proportions(BinomialCurve);

impl NoiseMap for Proportions {
    fn noise_dim(&self, len: usize) -> Result<usize, MechanismError> {
        self.0.noise_dim(len)
    }
    fn tau(&self, u: &[f64], s: &[f64], out: &mut [f64]) -> Result<(), MechanismError> {
        self.0.tau(u, s, out)?;
        for o in out.iter_mut() {
            *o /= N as f64;
        }
        Ok(())
    }
}

fn arg<T: core::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().ok().unwrap())
}

/// MMD between two θ samples (Gaussian kernel, bandwidth by the median heuristic on 200
/// points of each).
fn mmd(x: &[f64], y: &[f64]) -> f64 {
    let mut rng = SimStream::new(99, 0);
    let h = median_bandwidth(x, y, 2, 200, &mut rng).unwrap();
    mmd2(x, y, 2, h).unwrap().sqrt()
}

fn summary(name: &str, theta: &[f64]) {
    let n = theta.len() as f64 / 2.0;
    let mean: Vec<f64> = (0..2)
        .map(|j| theta.iter().skip(j).step_by(2).sum::<f64>() / n)
        .collect();
    let sd: Vec<f64> = (0..2)
        .map(|j| {
            (theta
                .iter()
                .skip(j)
                .step_by(2)
                .map(|v| (v - mean[j]).powi(2))
                .sum::<f64>()
                / n)
                .sqrt()
        })
        .collect();
    println!(
        "| {name} | {:.4} ± {:.4} | {:.4} ± {:.4} |",
        mean[0], sd[0], mean[1], sd[1]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = arg(&args, "--seed", 1);
    let sir = SirTauLeap::new(SirSettings::paper(), 0.05).unwrap();
    let prior = paper_prior().unwrap();

    // Reference: SMC-ABC (1000 particles, ε_t = 0.5·0.7^t) down to the final tolerance.
    let t0 = Instant::now();
    let abc_sim = Privatized::new(
        sir,
        BinomialReplicate::new(N, M_PSEUDO as f64, K as f64).unwrap(),
    );
    let abc_settings = SmcSettings {
        particles: 1000,
        tolerance: Tolerance::Geometric {
            initial: 0.5,
            factor: 0.7,
        },
        final_tolerance: arg(&args, "--abc-tolerance", 0.05),
        max_generations: 40,
        simulation_budget: 2_000_000,
        kernel_scale: 2.0,
        ..SmcSettings::default()
    };
    let mut smc = SmcAbc::new(
        &prior,
        abc_sim,
        Euclidean::new(&S_DP).unwrap(),
        abc_settings,
    )
    .unwrap();
    smc.run(&mut SimStream::new(seed, 1)).unwrap();
    // resample the weighted particles to 1000 equally weighted draws
    let (p, w) = (smc.particles(), smc.weights());
    let mut cum = Vec::with_capacity(w.len());
    let mut c = 0.0;
    for wi in w {
        c += wi;
        cum.push(c);
    }
    let reference: Vec<f64> = (0..1000_u32)
        .flat_map(|i| {
            let u = (f64::from(i) + 0.5) / 1000.0 * c;
            let j = cum.partition_point(|&x| x < u).min(w.len() - 1);
            [p[2 * j], p[2 * j + 1]]
        })
        .collect();
    let abc_secs = t0.elapsed().as_secs_f64();
    println!(
        "SMC-ABC reference: {} simulations, {} generations, {abc_secs:.1} s",
        smc.simulations(),
        smc.history().len()
    );
    println!("| method | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|");
    summary("SMC-ABC", &reference);

    let mech = Proportions(BinomialCurve::new(N, M_PSEUDO, K).unwrap());
    let flow = if args.iter().any(|a| a == "--maf") {
        FlowSettings::Maf(MafSettings::default())
    } else {
        FlowSettings::default()
    };
    let settings = SequentialSettings {
        rounds: arg(&args, "--rounds", 10),
        simulations: arg(&args, "--sims", 1000),
        noise_draws: arg(&args, "--m", 8),
        flow,
        train: TrainSettings {
            max_epochs: arg(&args, "--max-epochs", 1000),
            ..TrainSettings::default()
        },
        seed,
        ..SequentialSettings::default()
    };

    let sppe_run = if args.iter().any(|a| a == "--no-sppe") {
        None
    } else {
        let t0 = Instant::now();
        let post = sppe(&prior, &sir, &mech, &S_DP, &settings).unwrap();
        let sppe_secs = t0.elapsed().as_secs_f64();
        for r in &post.rounds {
            eprintln!(
                "SPPE round {}: {} epochs, best validation loss {:.4}, proposal {:?}",
                r.round, r.fit.epochs, r.fit.validation_loss[r.fit.best_epoch], r.proposal
            );
        }
        let (sppe_draws, _) = post
            .posterior
            .sample(&prior, 1000, 0.01, &mut SimStream::new(seed, 2))
            .unwrap();
        eprintln!(
            "SPPE: {sppe_secs:.1} s, MMD to SMC-ABC {:.4}",
            mmd(&sppe_draws, &reference)
        );
        Some((sppe_draws, sppe_secs))
    };
    let lik = if args.iter().any(|a| a == "--no-sple") {
        None
    } else {
        let t0 = Instant::now();
        let lik = sple(&prior, &sir, &mech, &S_DP, &settings).unwrap();
        let sple_secs = t0.elapsed().as_secs_f64();
        for r in &lik.rounds {
            eprintln!(
                "SPLE round {}: {} epochs, best validation loss {:.4}",
                r.round, r.fit.epochs, r.fit.validation_loss[r.fit.best_epoch]
            );
        }
        eprintln!("SPLE final chains: {:?}", lik.posterior_mcmc);
        eprintln!(
            "SPLE: {sple_secs:.1} s, MMD to SMC-ABC {:.4}",
            mmd(&lik.posterior, &reference)
        );
        Some((lik, sple_secs))
    };

    let sims = settings.rounds * settings.simulations;
    let ts = theta_star();
    println!(
        "\n{} rounds × {} simulations, M = {}, {:?}\n",
        settings.rounds, settings.simulations, settings.noise_draws, settings.flow
    );
    println!("| method | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|");
    println!("| truth θ* | {:.4} | {:.4} |", ts[0], ts[1]);
    summary("SMC-ABC", &reference);
    if let Some((sppe_draws, _)) = &sppe_run {
        summary("SPPE", sppe_draws);
    }
    if let Some((lik, _)) = &lik {
        summary("SPLE", &lik.posterior);
    }
    println!("\n| method | simulations | wall time (s) | MMD to SMC-ABC |");
    println!("|---|---|---|---|");
    println!("| SMC-ABC | {} | {abc_secs:.1} | — |", smc.simulations());
    if let Some((sppe_draws, sppe_secs)) = &sppe_run {
        println!(
            "| SPPE | {sims} | {sppe_secs:.1} | {:.4} |",
            mmd(sppe_draws, &reference)
        );
    }
    if let Some((lik, sple_secs)) = &lik {
        println!(
            "| SPLE | {sims} | {sple_secs:.1} | {:.4} |",
            mmd(&lik.posterior, &reference)
        );
    }
}
