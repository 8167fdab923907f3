//! SPPE round after round on a model whose private-data posterior is known in closed form
//! (issue 28: does SPPE's estimate drift away from the exact posterior as rounds go on?).
//!
//! θ ~ N(0, I₂); the confidential statistic `s = Aθ + σ_s·z` (`A = [[1, 0.5], [0, 1]]`,
//! `z ~ N(0, I₂)`), released by the Gaussian mechanism `s_dp = s + σ_dp·u` through its noise
//! map (`IdealizedGaussian`, the `M` uniforms per simulation by RQMC as in every SPPE run). So
//! `s_dp | θ ~ N(Aθ, v·I)` with `v = σ_s² + σ_dp²` and the exact posterior is Gaussian with
//! precision `Λ = I + AᵀA/v` and mean `Λ⁻¹Aᵀs_dp°/v`. The observation is `s_dp° = Aθ*` with
//! `θ* = (0.8, −1.2)` by default: in the prior's tail, as the SIR experiment's β.
//!
//! After every round it prints SPPE's posterior mean and sd (1000 truncated draws from a
//! stream of their own) beside the exact ones, and the error of the mean in exact sds. Run:
//! `cargo run --release -p dpinfer-neural --example drift_sppe -- [--rounds 10] [--sims 500]
//! [--m 2] [--max-epochs 20] [--seeds 1,2,3] [--atoms 10] [--sd-s 0.1] [--sd-dp 0.1]
//! [--theta1 0.8] [--theta2 -1.2] [--combined] [--lognormal [--c1 0.065] [--c2 0.027]]`
//! [--scratch] (`--combined`: sbi's combined loss, `SequentialSettings::combined_loss`;
//! `--scratch`: a new flow every round, `SequentialSettings::retrain_from_scratch`).
//!
//! `--ode [--sigma 0.01]` keeps the SIR experiment's prior and θ* but makes the statistic the
//! *deterministic* SIR's infected proportion at its 10 times (`S(0) = 1 − 10⁻⁶`, Runge–Kutta)
//! plus `N(0, σ²)` per point, released with `N(0, σ²)`: a nonlinear, 10-dimensional context as
//! the SIR's, with an exact posterior by quadrature on a grid in `(ln β, ln γ)`.
//!
//! `--lognormal` uses the SIR experiment's prior instead (log β ~ N(log 0.4, 0.5), log γ ~
//! N(log 0.125, 0.2)) with `s_j = ln θ_j / c_j + N(0, ½)` released with `N(0, ½)` noise, so
//! `ln θ`'s posterior is Gaussian (independent per coordinate) and θ's log-normal; at
//! `θ* = (e^−0.5, e^−3)` (the SIR's) and the default `c`, the exact posterior has the SIR's
//! exact posterior's sds (β ≈ 0.040, γ ≈ 0.0013), a flow on θ's own scale as there.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss
)]

use dpinfer_mechanisms::idealized::IdealizedGaussian;
use dpinfer_neural::{
    FlowSettings, MafSettings, NeuralPosterior, RoundObserver, RoundReport, SequentialSettings,
    TrainSettings, sppe_observed,
};
use dpinfer_simulators::dist::ziggurat_normal;
use dpinfer_simulators::models::sir::{paper_prior, theta_star};
use dpinfer_simulators::prior::IidNormal;
use dpinfer_simulators::{BatchSimulator, FnSimulator, Prior, SimStream};
use std::time::Instant;

/// Stream domain of the observer's draws ("DRIFTO").
const OBSERVER_DOMAIN: u64 = 0x4452_4946_544f_0000;
const A: [[f64; 2]; 2] = [[1.0, 0.5], [0.0, 1.0]];

fn arg<T: core::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().ok().unwrap())
}

/// The exact posterior's mean and the sds of its two coordinates.
fn exact_posterior(v: f64, s_dp: [f64; 2]) -> ([f64; 2], [f64; 2]) {
    // Λ = I + AᵀA/v
    let ata = |i: usize, j: usize| A[0][i] * A[0][j] + A[1][i] * A[1][j];
    let l = [
        [1.0 + ata(0, 0) / v, ata(0, 1) / v],
        [ata(1, 0) / v, 1.0 + ata(1, 1) / v],
    ];
    let det = l[0][0] * l[1][1] - l[0][1] * l[1][0];
    let cov = [
        [l[1][1] / det, -l[0][1] / det],
        [-l[1][0] / det, l[0][0] / det],
    ];
    let b = [
        (A[0][0] * s_dp[0] + A[1][0] * s_dp[1]) / v,
        (A[0][1] * s_dp[0] + A[1][1] * s_dp[1]) / v,
    ];
    let mean = [
        cov[0][0] * b[0] + cov[0][1] * b[1],
        cov[1][0] * b[0] + cov[1][1] * b[1],
    ];
    (mean, [cov[0][0].sqrt(), cov[1][1].sqrt()])
}

fn moments(draws: &[f64]) -> ([f64; 2], [f64; 2]) {
    let n = draws.len() as f64 / 2.0;
    let mean = [0, 1].map(|j| draws.iter().skip(j).step_by(2).sum::<f64>() / n);
    let sd = [0, 1].map(|j| {
        (draws
            .iter()
            .skip(j)
            .step_by(2)
            .map(|x| (x - mean[j]).powi(2))
            .sum::<f64>()
            / n)
            .sqrt()
    });
    (mean, sd)
}

/// Per round: the mean's error in exact sds and the sd ratio, per coordinate.
struct Drift<'a, P> {
    prior: &'a P,
    seed: u64,
    exact: ([f64; 2], [f64; 2]),
    rows: Vec<Row>,
}

/// One round: the posterior mean's error in exact sds and the sd ratio, per coordinate.
type Row = ([f64; 2], [f64; 2]);

impl<P: Prior> RoundObserver for Drift<'_, P> {
    fn sppe_round(&mut self, report: &RoundReport, posterior: &NeuralPosterior) {
        let mut rng = SimStream::with_domain(self.seed, OBSERVER_DOMAIN, report.round as u64);
        let (draws, _) = posterior.sample(self.prior, 1000, 0.01, &mut rng).unwrap();
        let (mean, sd) = moments(&draws);
        let (em, es) = self.exact;
        let z = [0, 1].map(|j| (mean[j] - em[j]) / es[j]);
        let ratio = [0, 1].map(|j| sd[j] / es[j]);
        eprintln!(
            "seed {} round {}: mean ({:.4}, {:.4}) sd ({:.4}, {:.4}); error of the mean \
             ({:+.2}, {:+.2}) exact sds, sd ratio ({:.2}, {:.2}); {} epochs, best {}",
            self.seed,
            report.round,
            mean[0],
            mean[1],
            sd[0],
            sd[1],
            z[0],
            z[1],
            ratio[0],
            ratio[1],
            report.fit.epochs,
            report.fit.best_epoch + 1,
        );
        self.rows.push((z, ratio));
    }
}

/// SPPE with every seed; per seed, per round: the errors and sd ratios.
fn run<P: Prior>(
    prior: &P,
    sim: &(impl BatchSimulator + ?Sized),
    mech: &IdealizedGaussian,
    s_dp: &[f64],
    exact: ([f64; 2], [f64; 2]),
    base: &SequentialSettings,
    seeds: &[u64],
) -> Vec<Vec<Row>> {
    println!(
        "s_dp° = {s_dp:?}; exact posterior mean ({:.4}, {:.4}), sd ({:.4}, {:.4})",
        exact.0[0], exact.0[1], exact.1[0], exact.1[1]
    );
    let mut all = Vec::new();
    for &seed in seeds {
        let t0 = Instant::now();
        let mut drift = Drift {
            prior,
            seed,
            exact,
            rows: Vec::new(),
        };
        let settings = SequentialSettings { seed, ..*base };
        sppe_observed(prior, sim, mech, s_dp, &settings, &mut drift).unwrap();
        eprintln!("seed {seed}: {:.1} s", t0.elapsed().as_secs_f64());
        all.push(drift.rows);
    }
    all
}

/// Times of the `--ode` curve (the SIR experiment's: t = 0, 17, …, 153).
const ODE_TIMES: usize = 10;

/// The deterministic SIR's infected proportion `I(t)` at t = 0, 17, …, 153 (`S(0) = 1 − 10⁻⁶`,
/// `I(0) = 10⁻⁶`; classical Runge–Kutta, step 0.05 days).
fn sir_curve(beta: f64, gamma: f64, out: &mut [f64]) {
    let (mut s, mut i) = (1.0 - 1e-6, 1e-6);
    let f = |s: f64, i: f64| (-beta * s * i, beta * s * i - gamma * i);
    let h = 0.05;
    let steps_per_obs = 340; // 17 days
    out[0] = i;
    for o in out.iter_mut().skip(1) {
        for _ in 0..steps_per_obs {
            let (a1, b1) = f(s, i);
            let (a2, b2) = f(s + 0.5 * h * a1, i + 0.5 * h * b1);
            let (a3, b3) = f(s + 0.5 * h * a2, i + 0.5 * h * b2);
            let (a4, b4) = f(s + h * a3, i + h * b3);
            s += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
            i += h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4);
        }
        *o = i;
    }
}

/// The `--ode` model's exact posterior mean and sd of (β, γ): the posterior of `(ln β, ln γ)`
/// (the prior's Gaussians times the Gaussian likelihood of the curve with variance `v` per
/// point) on a 161 × 161 grid of ±7 sds around a first, coarse pass's mean.
fn ode_posterior(s_dp: &[f64], v: f64) -> ([f64; 2], [f64; 2]) {
    let (mu0, var0) = ([0.4_f64.ln(), 0.125_f64.ln()], [0.5, 0.2]);
    let mut curve = [0.0; ODE_TIMES];
    let mut pass = |lo: [f64; 2], hi: [f64; 2], n: usize| {
        let mut pts = Vec::with_capacity(n * n);
        for a in 0..n {
            for b in 0..n {
                let l = [
                    lo[0] + (hi[0] - lo[0]) * a as f64 / (n - 1) as f64,
                    lo[1] + (hi[1] - lo[1]) * b as f64 / (n - 1) as f64,
                ];
                sir_curve(l[0].exp(), l[1].exp(), &mut curve);
                let ll: f64 = curve
                    .iter()
                    .zip(s_dp)
                    .map(|(c, o)| -0.5 * (c - o) * (c - o) / v)
                    .sum::<f64>()
                    - 0.5 * (l[0] - mu0[0]).powi(2) / var0[0]
                    - 0.5 * (l[1] - mu0[1]).powi(2) / var0[1];
                pts.push((l, ll));
            }
        }
        let top = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = pts.iter().map(|p| (p.1 - top).exp()).collect();
        let z: f64 = w.iter().sum();
        let moment = |g: &dyn Fn([f64; 2]) -> f64| {
            pts.iter().zip(&w).map(|(p, wi)| wi * g(p.0)).sum::<f64>() / z
        };
        let m_log = [moment(&|l| l[0]), moment(&|l| l[1])];
        let sd_log = [0, 1].map(|j| (moment(&|l| (l[j] - m_log[j]).powi(2))).sqrt());
        let m = [moment(&|l| l[0].exp()), moment(&|l| l[1].exp())];
        let sd = [0, 1].map(|j| (moment(&|l| (l[j].exp() - m[j]).powi(2))).sqrt());
        (m_log, sd_log, m, sd)
    };
    let (m1, s1, ..) = pass([-3.0, -4.0], [1.5, 0.5], 181);
    let lo = [m1[0] - 7.0 * s1[0], m1[1] - 7.0 * s1[1]];
    let hi = [m1[0] + 7.0 * s1[0], m1[1] + 7.0 * s1[1]];
    let (.., m, sd) = pass(lo, hi, 161);
    (m, sd)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seeds: Vec<u64> = arg(&args, "--seeds", String::from("1,2,3"))
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let base = SequentialSettings {
        rounds: arg(&args, "--rounds", 10),
        simulations: arg(&args, "--sims", 500),
        noise_draws: arg(&args, "--m", 2),
        flow: FlowSettings::Maf(MafSettings::default()),
        train: TrainSettings {
            max_epochs: arg(&args, "--max-epochs", 20),
            ..TrainSettings::default()
        },
        atoms: arg(&args, "--atoms", 10),
        combined_loss: args.iter().any(|a| a == "--combined"),
        retrain_from_scratch: args.iter().any(|a| a == "--scratch"),
        ..SequentialSettings::default()
    };
    let all = if args.iter().any(|a| a == "--ode") {
        // the SIR experiment's prior and θ*; the deterministic SIR curve at its 10 times plus
        // N(0, σ²) per point, released with N(0, σ²)
        let prior = paper_prior().unwrap();
        let sigma: f64 = arg(&args, "--sigma", 0.01);
        let sim = FnSimulator::new(2, ODE_TIMES, move |theta, rng, out| {
            sir_curve(theta[0], theta[1], out);
            for o in out.iter_mut() {
                *o += sigma * ziggurat_normal(rng);
            }
            Ok(())
        })
        .unwrap();
        let mech = IdealizedGaussian::new(sigma).unwrap();
        let ts = theta_star();
        let mut s_dp = [0.0; ODE_TIMES];
        sir_curve(ts[0], ts[1], &mut s_dp);
        let exact = ode_posterior(&s_dp, 2.0 * sigma * sigma);
        run(&prior, &sim, &mech, &s_dp, exact, &base, &seeds)
    } else if args.iter().any(|a| a == "--lognormal") {
        // the SIR experiment's prior; s_j = ln θ_j / c_j + N(0, ½), released with N(0, ½):
        // s_dp | θ ~ N(ln θ / c, I), so ln θ's posterior is Gaussian, independent per coordinate
        let prior = paper_prior().unwrap();
        let c = [arg(&args, "--c1", 0.065), arg(&args, "--c2", 0.027)];
        let half = core::f64::consts::FRAC_1_SQRT_2;
        let sim = FnSimulator::new(2, 2, move |theta, rng, out| {
            for j in 0..2 {
                out[j] = theta[j].ln() / c[j] + half * ziggurat_normal(rng);
            }
            Ok(())
        })
        .unwrap();
        let mech = IdealizedGaussian::new(half).unwrap();
        let ts = theta_star();
        let s_dp = [0, 1].map(|j| ts[j].ln() / c[j]);
        // prior of ln θ: N(ln 0.4, 0.5), N(ln 0.125, 0.2) (variances)
        let (mu0, var0) = ([0.4_f64.ln(), 0.125_f64.ln()], [0.5, 0.2]);
        let mut exact = ([0.0; 2], [0.0; 2]);
        for j in 0..2 {
            // likelihood of ln θ_j: N(c_j s_dp_j, c_j²)
            let prec = 1.0 / var0[j] + 1.0 / (c[j] * c[j]);
            let m = (mu0[j] / var0[j] + s_dp[j] / c[j]) / prec;
            let v = 1.0 / prec;
            exact.0[j] = (m + v / 2.0).exp();
            exact.1[j] = exact.0[j] * v.exp_m1().sqrt();
        }
        run(&prior, &sim, &mech, &s_dp, exact, &base, &seeds)
    } else {
        let sd_s: f64 = arg(&args, "--sd-s", 0.1);
        let sd_dp: f64 = arg(&args, "--sd-dp", 0.1);
        let prior = IidNormal::new(2, 0.0, 1.0).unwrap();
        let sim = FnSimulator::new(2, 2, move |theta, rng, out| {
            for (o, row) in out.iter_mut().zip(A) {
                *o = row[0] * theta[0] + row[1] * theta[1] + sd_s * ziggurat_normal(rng);
            }
            Ok(())
        })
        .unwrap();
        let mech = IdealizedGaussian::new(sd_dp).unwrap();
        let theta_star = [arg(&args, "--theta1", 0.8), arg(&args, "--theta2", -1.2)];
        let s_dp = [0, 1].map(|i| A[i][0] * theta_star[0] + A[i][1] * theta_star[1]);
        let exact = exact_posterior(sd_s * sd_s + sd_dp * sd_dp, s_dp);
        run(&prior, &sim, &mech, &s_dp, exact, &base, &seeds)
    };
    println!(
        "\nOver seeds {seeds:?}: per round, the mean error of the posterior mean in exact sds and \
         the mean sd ratio (SPPE / exact), per coordinate\n"
    );
    println!("| round | error θ₁ | error θ₂ | sd ratio θ₁ | sd ratio θ₂ |");
    println!("|---|---|---|---|---|");
    for round in 0..base.rounds {
        let n = all.len() as f64;
        let avg = |f: &dyn Fn(&Row) -> f64| all.iter().map(|rows| f(&rows[round])).sum::<f64>() / n;
        println!(
            "| {} | {:+.2} | {:+.2} | {:.2} | {:.2} |",
            round + 1,
            avg(&|r| r.0[0]),
            avg(&|r| r.0[1]),
            avg(&|r| r.1[0]),
            avg(&|r| r.1[1]),
        );
    }
}
