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
//! **The curves of Fig. 1B and Fig. 8.** After every round the MMD of SPPE's and SPLE's
//! posterior so far to the reference is printed against the simulations used
//! (`dpinfer_neural::sppe_observed` / `sple_observed`: SPPE's 1000 draws from a stream of
//! their own, SPLE's the MCMC draws the run makes anyway, so observing changes no number);
//! `--abc-curve` adds SMC-ABC's curve: a second, independent SMC-ABC run (another stream),
//! the MMD of each generation's population (resampled to 1000) to the reference.
//!
//! **Privacy level.** `--epsilon E` sets the pseudo-count `m = nL/E` of the binomial curve
//! (Proposition 4: ε = nL/m with n = 1000, L = 10), as the paper's App. E.1.1 does for
//! Fig. 8: ε = 10 (m = 1000, the default, with the paper's printed `s_dp°`), 1 (m = 10⁴) and
//! 0.1 (m = 10⁵). The paper prints no `s_dp°` for ε ≠ 10; there the observation is the curve
//! simulated at θ* and released through the mechanism's noise map, both from public seeded
//! streams (`--seed`): a synthetic experiment.
//!
//! Not run in CI. Run:
//! `cargo run --release -p dpinfer-neural --example sir_sppe -- [--rounds 10] [--sims 1000]
//! [--m 8] [--maf] [--max-epochs N] [--abc-tolerance 0.05] [--epsilon 10] [--abc-curve]
//! [--seed 1] [--no-sppe] [--no-sple]`
//! (defaults: the paper's 10 rounds of 1000 simulations and its 8-layer spline flow).
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use dpinfer_abc::discrepancy::Euclidean;
use dpinfer_abc::smc::{BinomialReplicate, Privatized, SmcAbc, SmcSettings, SmcStep, Tolerance};
use dpinfer_mcmc::diagnostics::{median_bandwidth, mmd2};
use dpinfer_mechanisms::{BinomialCurve, MechanismError, NoiseMap};
use dpinfer_neural::{
    FlowSettings, MafSettings, McmcReport, NeuralPosterior, RoundObserver, RoundReport,
    SequentialSettings, TrainSettings, sple_observed, sppe_observed,
};
use dpinfer_simulators::models::sir::{SirSettings, SirTauLeap, paper_prior, theta_star};
use dpinfer_simulators::{Prior, SimStream, Simulator};
use std::time::Instant;

/// The paper's published private statistic `s_dp°` (proportions of n = 1000).
const S_DP: [f64; 10] = [
    0.0010, 0.0310, 0.6140, 0.2630, 0.1230, 0.0470, 0.0180, 0.0090, 0.0050, 0.0030,
];
const N: u64 = 1000;
/// Observation times L.
const L: u64 = 10;
const K: u64 = 1_000_000;
/// Stream domain of the synthetic observation at ε ≠ 10 (job 0: the SIR at θ*, job 1: the
/// release's uniforms).
const OBSERVATION_DOMAIN: u64 = 0x5349_524f_4253_0000; // "SIROBS"
/// Stream domain of SPPE's per-round curve draws (job = round).
const CURVE_DOMAIN: u64 = 0x5349_5243_5552_0000; // "SIRCUR"

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

/// Weighted particles resampled to 1000 equally weighted draws (systematic, offset ½).
fn resample(p: &[f64], w: &[f64]) -> Vec<f64> {
    let mut cum = Vec::with_capacity(w.len());
    let mut c = 0.0;
    for wi in w {
        c += wi;
        cum.push(c);
    }
    (0..1000_u32)
        .flat_map(|i| {
            let u = (f64::from(i) + 0.5) / 1000.0 * c;
            let j = cum.partition_point(|&x| x < u).min(w.len() - 1);
            [p[2 * j], p[2 * j + 1]]
        })
        .collect()
}

/// The MMD to the reference after every round (Fig. 1B / Fig. 8), printed as it comes.
struct Curve<'a, P> {
    name: &'static str,
    reference: &'a [f64],
    prior: &'a P,
    seed: u64,
    simulations: usize,
    points: Vec<(usize, usize, f64)>,
}

impl<P> Curve<'_, P> {
    fn record(&mut self, report: &RoundReport, draws: &[f64]) {
        let value = mmd(draws, self.reference);
        let sims = report.round * self.simulations;
        eprintln!(
            "curve {}: round {}, {sims} simulations, MMD {value:.4}",
            self.name, report.round
        );
        self.points.push((report.round, sims, value));
    }
}

impl<P: Prior> RoundObserver for Curve<'_, P> {
    fn sppe_round(&mut self, report: &RoundReport, posterior: &NeuralPosterior) {
        let mut rng = SimStream::with_domain(self.seed, CURVE_DOMAIN, report.round as u64);
        let (draws, _) = posterior.sample(self.prior, 1000, 0.01, &mut rng).unwrap();
        self.record(report, &draws);
    }
    fn sple_round(&mut self, report: &RoundReport, posterior: &[f64], _mcmc: &McmcReport) {
        self.record(report, posterior);
    }
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
    // Proposition 4: ε = nL/m.
    let epsilon: f64 = arg(&args, "--epsilon", 10.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let m_pseudo = ((N * L) as f64 / epsilon).round().max(1.0) as u64;
    let mech = Proportions(BinomialCurve::new(N, m_pseudo, K).unwrap());
    let s_dp: Vec<f64> = if m_pseudo == 1000 {
        S_DP.to_vec()
    } else {
        let mut counts = vec![0.0; S_DP.len()];
        let mut rng = SimStream::with_domain(seed, OBSERVATION_DOMAIN, 0);
        sir.simulate(&theta_star(), &mut rng, &mut counts).unwrap();
        let mut rng = SimStream::with_domain(seed, OBSERVATION_DOMAIN, 1);
        let u: Vec<f64> = counts
            .iter()
            .map(|_| dpinfer_simulators::dist::uniform_open01(&mut rng))
            .collect();
        let mut out = vec![0.0; S_DP.len()];
        mech.tau(&u, &counts, &mut out).unwrap();
        out
    };
    println!(
        "ε = nL/m = {} (n = {N}, L = {L}, m = {m_pseudo}); s_dp° = {s_dp:?}",
        (N * L) as f64 / m_pseudo as f64
    );

    // Reference: SMC-ABC (1000 particles, ε_t = 0.5·0.7^t) down to the final tolerance.
    let t0 = Instant::now();
    let abc_sim = Privatized::new(
        sir,
        BinomialReplicate::new(N, m_pseudo as f64, K as f64).unwrap(),
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
        abc_sim.clone(),
        Euclidean::new(&s_dp).unwrap(),
        abc_settings.clone(),
    )
    .unwrap();
    smc.run(&mut SimStream::new(seed, 1)).unwrap();
    let reference = resample(smc.particles(), smc.weights());
    let abc_secs = t0.elapsed().as_secs_f64();
    println!(
        "SMC-ABC reference: {} simulations, {} generations, {abc_secs:.1} s",
        smc.simulations(),
        smc.history().len()
    );
    println!("| method | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|");
    summary("SMC-ABC", &reference);

    // SMC-ABC's curve: an independent run (another stream), every generation against the
    // reference.
    let mut abc_curve = Vec::new();
    if args.iter().any(|a| a == "--abc-curve") {
        let t0 = Instant::now();
        let mut run = SmcAbc::new(
            &prior,
            abc_sim,
            Euclidean::new(&s_dp).unwrap(),
            abc_settings,
        )
        .unwrap();
        let mut rng = SimStream::new(seed, 4);
        while let SmcStep::Generation(stats) = run.step(&mut rng).unwrap() {
            let value = mmd(&resample(run.particles(), run.weights()), &reference);
            eprintln!(
                "curve SMC-ABC: generation {}, tolerance {:.4}, {} simulations, MMD {value:.4}",
                stats.generation,
                stats.tolerance,
                run.simulations()
            );
            abc_curve.push((stats.generation, run.simulations(), value));
        }
        eprintln!("SMC-ABC curve run: {:.1} s", t0.elapsed().as_secs_f64());
    }

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
        let mut curve = Curve {
            name: "SPPE",
            reference: &reference,
            prior: &prior,
            seed,
            simulations: settings.simulations,
            points: Vec::new(),
        };
        let post = sppe_observed(&prior, &sir, &mech, &s_dp, &settings, &mut curve).unwrap();
        let sppe_secs = t0.elapsed().as_secs_f64();
        let sppe_curve = curve.points;
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
        Some((sppe_draws, sppe_secs, sppe_curve))
    };
    let lik = if args.iter().any(|a| a == "--no-sple") {
        None
    } else {
        let t0 = Instant::now();
        let mut curve = Curve {
            name: "SPLE",
            reference: &reference,
            prior: &prior,
            seed,
            simulations: settings.simulations,
            points: Vec::new(),
        };
        let lik = sple_observed(&prior, &sir, &mech, &s_dp, &settings, &mut curve).unwrap();
        let sple_secs = t0.elapsed().as_secs_f64();
        let sple_curve = curve.points;
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
        Some((lik, sple_secs, sple_curve))
    };

    let sims = settings.rounds * settings.simulations;
    let ts = theta_star();
    println!(
        "\n{} rounds × {} simulations, M = {}, {:?}, ε = {epsilon}\n",
        settings.rounds, settings.simulations, settings.noise_draws, settings.flow
    );
    println!("| method | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|");
    println!("| truth θ* | {:.4} | {:.4} |", ts[0], ts[1]);
    summary("SMC-ABC", &reference);
    if let Some((sppe_draws, _, _)) = &sppe_run {
        summary("SPPE", sppe_draws);
    }
    if let Some((lik, _, _)) = &lik {
        summary("SPLE", &lik.posterior);
    }
    println!("\n| method | simulations | wall time (s) | MMD to SMC-ABC |");
    println!("|---|---|---|---|");
    println!("| SMC-ABC | {} | {abc_secs:.1} | — |", smc.simulations());
    if let Some((sppe_draws, sppe_secs, _)) = &sppe_run {
        println!(
            "| SPPE | {sims} | {sppe_secs:.1} | {:.4} |",
            mmd(sppe_draws, &reference)
        );
    }
    if let Some((lik, sple_secs, _)) = &lik {
        println!(
            "| SPLE | {sims} | {sple_secs:.1} | {:.4} |",
            mmd(&lik.posterior, &reference)
        );
    }
    println!("\n| method | round / generation | simulations | MMD to the reference |");
    println!("|---|---|---|---|");
    for (g, sims, v) in &abc_curve {
        println!("| SMC-ABC | {g} | {sims} | {v:.4} |");
    }
    for (name, points) in [
        ("SPPE", sppe_run.as_ref().map(|r| &r.2)),
        ("SPLE", lik.as_ref().map(|r| &r.2)),
    ] {
        for (r, sims, v) in points.into_iter().flatten() {
            println!("| {name} | {r} | {sims} | {v:.4} |");
        }
    }
}
