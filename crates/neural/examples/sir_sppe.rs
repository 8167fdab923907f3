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
//! streams (`--seed`): a synthetic experiment (`--simulated-observation` does the same at
//! ε = 10 instead of taking the printed `s_dp°`).
//!
//! **Repetitions.** The paper's Fig. 1B is the mean and quartiles over 20 trials. `--seeds
//! 1,2,3` repeats SPPE and SPLE with each seed (every stream of the run) against one
//! reference (made with `--reference-seed`, default `--seed`) and prints, per round, the
//! mean, quartiles and range of the MMD over the repetitions. `--reference-cache PATH` keeps
//! the reference's 1000 draws in a text file (written when missing, read otherwise: the
//! same bits, no SMC-ABC run). For the estimator's own noise, SPPE's observer also draws a
//! second sample of 1000 from the same posterior (another stream) and prints its MMD to the
//! first (`self`: what the MMD reads for two samples of one distribution).
//!
//! **A tolerance-free reference.** SMC-ABC's posterior is widened by its final tolerance.
//! `--exact-reference N` also makes an importance-sampling reference of the exact private-data
//! posterior: the binomial curve's pmf is known, so `π(θ | s_dp°) ∝ π(θ)·E_x[η(s_dp° | x)]` is
//! estimated with 4 confidential SIR curves per θ (a pseudo-marginal weight), two passes of `N`
//! draws (the second proposal from the first's draws; ESS printed); every curve is then also
//! measured against it (`--exact-cache PATH` keeps its draws as `--reference-cache` does;
//! `--exact-seed S`, default the reference seed, for a second, independent one;
//! `--exact-widen F` the proposal's sd as a multiple of the pilot's, default 2).
//!
//! Experiment switches (one variable at a time): `--weight-decay`, `--lr`, `--batch`,
//! `--atoms` (the defaults are the paper's and sbi's), `--combined` (SPPE with sbi's combined
//! loss, `SequentialSettings::combined_loss`), `--scratch` (a new flow every round,
//! `SequentialSettings::retrain_from_scratch`), `--iw-mle` (a diagnostic instead of SPPE:
//! SPPE's loop with the flow trained by maximum likelihood with importance weights
//! `π/p̄`, see `iw_mle`; needs `--exact-reference`).
//!
//! **Time.** Every round prints the sampler's wall and CPU seconds so far (the observer's own
//! sampling and MMDs subtracted; CPU from `/proc/self/stat`), and with `--abc-curve` every
//! SMC-ABC generation its wall and CPU seconds, simulations and MMD to both references:
//! item 7's end-to-end comparison. `--abc-curve-tolerance T` and `--abc-curve-budget N` let
//! the curve's run go below the reference's tolerance (default: the reference's settings).
//!
//! **Against sbi** (`benches/sbi_sir.py`, sbi's SNPE-C on the same setting in a throw-away
//! venv): `--dump-releases PATH [N]` writes N (default 2000) SIR curves at θ* and their
//! releases for its `--check-simulator` test of equality in distribution, and
//! `--score EXACT FILE...` prints the MMD of each FILE's 1000 draws (the cache format, as
//! `sbi_sir.py --out` writes them) to EXACT's with this example's estimator. Both return at
//! once (no reference is made).
//!
//! Not run in CI. Run:
//! `cargo run --release -p dpinfer-neural --example sir_sppe -- [--rounds 10] [--sims 1000]
//! [--m 8] [--maf] [--max-epochs N] [--abc-tolerance 0.05] [--epsilon 10] [--abc-curve]
//! [--seed 1] [--seeds 1,2,3] [--reference-seed 1] [--reference-cache PATH]
//! [--exact-reference 8000] [--exact-cache PATH] [--abc-curve-tolerance T]
//! [--abc-curve-budget N] [--combined] [--no-sppe] [--no-sple]`
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
/// Stream domain of the importance-sampling reference (job 0: proposal draws, then one job per
/// confidential simulation).
const EXACT_DOMAIN: u64 = 0x5349_5245_5841_0000; // "SIREXA"
/// Stream domain of SPPE's second per-round sample (job = round), for the MMD's own noise.
const CURVE2_DOMAIN: u64 = 0x5349_5243_5532_0000; // "SIRCU2"
/// Stream domain of `--dump-releases` (job 2i: the i-th SIR at θ*, 2i + 1: its release).
const DUMP_DOMAIN: u64 = 0x5349_5244_4d50_0000; // "SIRDMP"

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
    /// SPPE: MMD between two samples of 1000 of the same posterior, per round.
    own: Vec<f64>,
    /// The importance-sampling reference, when made, and the MMD to it per round.
    exact: Option<&'a [f64]>,
    exact_points: Vec<f64>,
    /// Wall clock and process CPU seconds at the sampler's start, and the observer's own
    /// share of both so far (subtracted from the times printed per round).
    start: (Instant, f64),
    observer: (f64, f64),
}

/// CPU seconds (user + system, every thread) of this process so far, from `/proc/self/stat`
/// (Linux; NaN elsewhere; as `examples/epoch_time.rs`).
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // fields after the command's closing parenthesis; utime and stime are 14 and 15
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0) // USER_HZ
        })
        .unwrap_or(f64::NAN)
}

impl<P> Curve<'_, P> {
    /// The sampler's wall and CPU seconds so far, without the observer's own.
    fn sampler_time(&self) -> (f64, f64) {
        (
            self.start.0.elapsed().as_secs_f64() - self.observer.0,
            cpu_seconds() - self.start.1 - self.observer.1,
        )
    }

    fn record(&mut self, report: &RoundReport, draws: &[f64]) {
        let value = mmd(draws, self.reference);
        let sims = report.round * self.simulations;
        let n = draws.len() as f64 / 2.0;
        let beta = draws.iter().step_by(2).sum::<f64>() / n;
        let gamma = draws.iter().skip(1).step_by(2).sum::<f64>() / n;
        if let Some(exact) = self.exact {
            let v = mmd(draws, exact);
            eprintln!(
                "curve {}: round {}, MMD to the IS reference {v:.4}",
                self.name, report.round
            );
            self.exact_points.push(v);
        }
        eprintln!(
            "curve {}: round {}, {sims} simulations, MMD {value:.4}, mean β {beta:.4} γ {gamma:.5}",
            self.name, report.round
        );
        self.points.push((report.round, sims, value));
    }
}

impl<P: Prior> RoundObserver for Curve<'_, P> {
    fn sppe_round(&mut self, report: &RoundReport, posterior: &NeuralPosterior) {
        let (wall, cpu) = self.sampler_time();
        eprintln!(
            "time {}: round {}, {wall:.1} s wall, {cpu:.1} s CPU (sampler only)",
            self.name, report.round
        );
        let t0 = (Instant::now(), cpu_seconds());
        let mut rng = SimStream::with_domain(self.seed, CURVE_DOMAIN, report.round as u64);
        let (draws, _) = posterior.sample(self.prior, 1000, 0.01, &mut rng).unwrap();
        let mut rng = SimStream::with_domain(self.seed, CURVE2_DOMAIN, report.round as u64);
        let (second, _) = posterior.sample(self.prior, 1000, 0.01, &mut rng).unwrap();
        let own = mmd(&draws, &second);
        eprintln!("curve SPPE: round {}, self MMD {own:.4}", report.round);
        self.own.push(own);
        self.record(report, &draws);
        self.observer.0 += t0.0.elapsed().as_secs_f64();
        self.observer.1 += cpu_seconds() - t0.1;
    }
    fn sple_round(&mut self, report: &RoundReport, posterior: &[f64], _mcmc: &McmcReport) {
        let (wall, cpu) = self.sampler_time();
        eprintln!(
            "time {}: round {}, {wall:.1} s wall, {cpu:.1} s CPU (sampler only)",
            self.name, report.round
        );
        let t0 = (Instant::now(), cpu_seconds());
        self.record(report, posterior);
        self.observer.0 += t0.0.elapsed().as_secs_f64();
        self.observer.1 += cpu_seconds() - t0.1;
    }
}

fn summary(name: &str, theta: &[f64]) {
    let [mb, sb, mg, sg] = mean_sd(theta);
    println!("| {name} | {mb:.4} ± {sb:.4} | {mg:.4} ± {sg:.4} |");
}

/// Mean, lower quartile, upper quartile, minimum and maximum (quartiles by linear
/// interpolation of the order statistics).
fn spread(values: &[f64]) -> [f64; 5] {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let x = p * (v.len() - 1) as f64;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (i, f) = (x.floor() as usize, x - x.floor());
        if i + 1 < v.len() {
            v[i] + f * (v[i + 1] - v[i])
        } else {
            v[i]
        }
    };
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    [mean, q(0.25), q(0.75), v[0], v[v.len() - 1]]
}

/// 1000 draws of θ = (β, γ) in the cache format (a `# what` line, then `β γ` per line) and
/// the description.
fn parse_draws(text: &str, path: &str) -> (Vec<f64>, String) {
    let mut lines = text.lines();
    let what = lines
        .next()
        .unwrap_or("")
        .trim_start_matches("# ")
        .to_string();
    let draws: Vec<f64> = lines
        .flat_map(|l| l.split_whitespace().map(|v| v.parse::<f64>().unwrap()))
        .collect();
    assert_eq!(
        draws.len(),
        2000,
        "{path}: expected 1000 draws of θ = (β, γ)"
    );
    (draws, what)
}

/// `--score EXACT FILE...`: the MMD of every FILE's 1000 draws (the cache format, e.g. sbi's
/// draws written by `benches/sbi_sir.py --out`) to EXACT's, with this example's estimator
/// (`mmd`: the same bandwidth draws, the same bits as the curves it prints), and each
/// sample's mean ± sd.
fn score(files: &[String]) {
    let read = |path: &str| parse_draws(&std::fs::read_to_string(path).unwrap(), path);
    let (exact, what) = read(&files[0]);
    println!("against {} ({what})", files[0]);
    println!("| file | MMD | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|---|");
    for path in &files[1..] {
        let (draws, _) = read(path);
        let [mb, sb, mg, sg] = mean_sd(&draws);
        println!(
            "| {path} | {:.4} | {mb:.4} ± {sb:.4} | {mg:.5} ± {sg:.5} |",
            mmd(&draws, &exact)
        );
    }
}

/// `--dump-releases PATH N`: N curves of the SIR at θ* and their releases through the
/// binomial curve's noise map (fresh uniforms per release), one simulation per line: the
/// 10 infected counts, then the 10 released proportions. `benches/sbi_sir.py
/// --check-simulator PATH` compares them in distribution with its numpy simulator.
fn dump_releases(sir: &SirTauLeap, mech: &Proportions, seed: u64, path: &str, n: usize) {
    let mut text = String::new();
    let mut curve = vec![0.0; S_DP.len()];
    let mut out = vec![0.0; S_DP.len()];
    for i in 0..n as u64 {
        let mut rng = SimStream::with_domain(seed, DUMP_DOMAIN, 2 * i);
        sir.simulate(&theta_star(), &mut rng, &mut curve).unwrap();
        let mut rng = SimStream::with_domain(seed, DUMP_DOMAIN, 2 * i + 1);
        let u: Vec<f64> = curve
            .iter()
            .map(|_| dpinfer_simulators::dist::uniform_open01(&mut rng))
            .collect();
        mech.tau(&u, &curve, &mut out).unwrap();
        let row: Vec<String> = curve.iter().chain(&out).map(|v| format!("{v:?}")).collect();
        text.push_str(&row.join(" "));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
    println!("{n} SIR curves at θ* and their releases written to {path} (seed {seed})");
}

/// Means and sds (population) of β and γ over draws of θ = (β, γ).
fn mean_sd(theta: &[f64]) -> [f64; 4] {
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
    [mean[0], sd[0], mean[1], sd[1]]
}

/// The reference posterior: SMC-ABC's final population resampled to 1000 draws, or the same
/// draws read back from `cache` (written when missing). Returns the draws and a description.
fn load_or_make(
    cache: Option<&str>,
    make: impl FnOnce() -> (Vec<f64>, String),
) -> (Vec<f64>, String) {
    if let Some(path) = cache
        && let Ok(text) = std::fs::read_to_string(path)
    {
        let (draws, what) = parse_draws(&text, path);
        return (draws, format!("{what} (read from {path})"));
    }
    let (draws, what) = make();
    if let Some(path) = cache {
        let mut text = format!("# {what}\n");
        for row in draws.chunks_exact(2) {
            // `{:?}` writes the shortest string that parses back to the same bits
            text.push_str(&format!("{:?} {:?}\n", row[0], row[1]));
        }
        std::fs::write(path, text).unwrap();
    }
    (draws, what)
}

/// A **tolerance-free reference**: importance sampling of the exact private-data posterior
/// `π(θ | s_dp°) ∝ π(θ)·E_x[η(s_dp° | x)]` (Xiong, Ju & Zhang, eq. 2), the mechanism's pmf
/// `η` being the binomial curve's (`s_j ~ Binomial(n, (I_j + m)/(K + 2m))`, Prop. 4),
/// averaged over `sims` confidential SIR curves per θ (a pseudo-marginal, unbiased estimate of
/// the likelihood; the SIR at K = 10⁶ is nearly deterministic, so a few suffice). Proposal: a
/// Gaussian in (ln β, ln γ) with `widen` times the sd of `pilot` (default 2) and its
/// correlation. Returns 1000
/// draws resampled from the weighted `n` and the ESS. [`exact_reference`] runs it twice, the
/// second time with the first's draws as the pilot.
#[allow(clippy::too_many_arguments)]
fn importance_sampling<P: Prior>(
    prior: &P,
    sir: &SirTauLeap,
    s_dp: &[f64],
    m_pseudo: u64,
    pilot: &[f64],
    n: usize,
    sims: usize,
    seed: u64,
    stage: u64,
    widen: f64,
) -> (Vec<f64>, f64) {
    let logs: Vec<[f64; 2]> = pilot
        .chunks_exact(2)
        .map(|t| [t[0].ln(), t[1].ln()])
        .collect();
    let np = logs.len() as f64;
    let mu = [0, 1].map(|j| logs.iter().map(|l| l[j]).sum::<f64>() / np);
    let cov = |a: usize, b: usize| {
        logs.iter()
            .map(|l| (l[a] - mu[a]) * (l[b] - mu[b]))
            .sum::<f64>()
            / np
            * widen
            * widen
    };
    // Cholesky of the widened covariance
    let l00 = cov(0, 0).sqrt();
    let l10 = cov(1, 0) / l00;
    let l11 = (cov(1, 1) - l10 * l10).sqrt();
    let counts: Vec<f64> = s_dp.iter().map(|v| (v * N as f64).round()).collect();
    let denom = (K + 2 * m_pseudo) as f64;
    let first_job = stage << 40;
    let mut rng = SimStream::with_domain(seed, EXACT_DOMAIN, first_job);
    let mut theta = Vec::with_capacity(2 * n);
    let mut logw = Vec::with_capacity(n);
    let mut curve = vec![0.0; S_DP.len()];
    for i in 0..n {
        let z0 = dpinfer_simulators::dist::std_normal(&mut rng);
        let z1 = dpinfer_simulators::dist::std_normal(&mut rng);
        let l = [mu[0] + l00 * z0, mu[1] + l10 * z0 + l11 * z1];
        let t = [l[0].exp(), l[1].exp()];
        // ln g(θ) in θ's own units: the Gaussian in ln θ and the Jacobian 1/(βγ)
        let ln_g = -0.5 * (z0 * z0 + z1 * z1)
            - (2.0 * core::f64::consts::PI).ln()
            - l00.ln()
            - l11.ln()
            - l[0]
            - l[1];
        let mut lls = Vec::with_capacity(sims);
        for j in 0..sims {
            let mut sim_rng =
                SimStream::with_domain(seed, EXACT_DOMAIN, first_job + 1 + (i * sims + j) as u64);
            sir.simulate(&t, &mut sim_rng, &mut curve).unwrap();
            let ll: f64 = curve
                .iter()
                .zip(&counts)
                .map(|(&inf, &k)| {
                    let p = (inf.clamp(0.0, K as f64) + m_pseudo as f64) / denom;
                    k * p.ln() + (N as f64 - k) * (1.0 - p).ln()
                })
                .sum();
            lls.push(ll);
        }
        let top = lls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ll = top + (lls.iter().map(|v| (v - top).exp()).sum::<f64>() / sims as f64).ln();
        theta.extend_from_slice(&t);
        logw.push(prior.ln_density(&t) - ln_g + ll);
    }
    let top = logw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = logw.iter().map(|v| (v - top).exp()).collect();
    let sum: f64 = w.iter().sum();
    let ess = sum * sum / w.iter().map(|v| v * v).sum::<f64>();
    (resample(&theta, &w), ess)
}

/// The importance-sampling reference: a first pass with SMC-ABC's draws as the pilot, a second
/// with the first pass's (a proposal closer to the posterior: a larger ESS).
#[allow(clippy::too_many_arguments)]
fn exact_reference<P: Prior>(
    prior: &P,
    sir: &SirTauLeap,
    s_dp: &[f64],
    m_pseudo: u64,
    pilot: &[f64],
    n: usize,
    sims: usize,
    seed: u64,
    widen: f64,
) -> (Vec<f64>, f64, f64) {
    let (first, ess1) =
        importance_sampling(prior, sir, s_dp, m_pseudo, pilot, n, sims, seed, 0, widen);
    let (draws, ess2) =
        importance_sampling(prior, sir, s_dp, m_pseudo, &first, n, sims, seed, 1, widen);
    (draws, ess1, ess2)
}

/// One repetition's per-round curve (round, simulations, MMD).
type Points = Vec<(usize, usize, f64)>;

/// One repetition (seed): SPPE's and SPLE's curves against SMC-ABC, SPPE's self MMD, and the
/// curves against the importance-sampling reference (empty without it).
struct Repetition {
    seed: u64,
    sppe: Points,
    own: Vec<f64>,
    sple: Points,
    sppe_exact: Vec<f64>,
    sple_exact: Vec<f64>,
}

/// The diagnostic of `--iw-mle`: SPPE's loop (round 1 from the prior, then `q(θ | s_dp°)` of
/// the round before, truncated to the prior's support; the same streams, so round 1's rows are
/// SPPE's) but the flow trained every round by **maximum likelihood with importance weights**
/// `π(θ)/p̄(θ)` on all rounds' rows (Lueckmann et al. 2017's correction instead of the atomic
/// loss), `p̄` the mixture of every proposal used so far in proportion to its simulations (the
/// prior among them, so a weight is at most the number of rounds). Its minimiser is the
/// posterior too; if it does not drift where SPPE does, the atomic loss holds the estimate
/// less. Returns the per-round (β mean, γ mean, MMD to `exact`).
#[allow(clippy::too_many_arguments, clippy::too_many_lines)]
fn iw_mle<P: Prior>(
    prior: &P,
    sir: &SirTauLeap,
    mech: &Proportions,
    s_dp: &[f64],
    settings: &SequentialSettings,
    exact: &[f64],
    scratch: &std::path::Path,
) -> Vec<(f64, f64, f64)> {
    use dpinfer_neural::{
        ConditionalFlow, NOISE_DOMAIN, PROPOSAL_DOMAIN, RoundRows, SIMULATION_DOMAIN, TRAIN_DOMAIN,
        TrainingSet,
    };
    use dpinfer_simulators::qmc::InnerIntegral;
    let (d, k, m, n) = (2, S_DP.len(), settings.noise_draws, settings.simulations);
    let inner = InnerIntegral::new(settings.sampling, m, k).unwrap();
    let mut flow = ConditionalFlow::new(settings.flow, d, k, settings.seed).unwrap();
    // the proposals' flows (round r + 2's proposal is proposals[r]), reloaded from snapshots
    let mut proposals: Vec<ConditionalFlow> = Vec::new();
    let (mut thetas, mut releases) = (Vec::new(), Vec::new());
    // ln p_r(θ) of every pair under every proposal r (0: the prior)
    let mut log_p: Vec<Vec<f64>> = vec![Vec::new()];
    let mut out = Vec::new();
    let obs_rows = |rows: usize| -> Vec<f64> { s_dp.repeat(rows) };
    for round in 1..=settings.rounds {
        let mut rng = SimStream::with_domain(settings.seed, PROPOSAL_DOMAIN, round as u64);
        let new_thetas = if round == 1 {
            let mut t = vec![0.0; n * d];
            for row in t.chunks_exact_mut(d) {
                prior.sample(&mut rng, row).unwrap();
            }
            t
        } else {
            let post = NeuralPosterior::new(flow, s_dp).unwrap();
            let (t, acceptance) = post.sample(prior, n, 0.01, &mut rng).unwrap();
            assert!(acceptance > 0.999, "truncation bound: {acceptance}");
            flow = post.into_flow();
            // snapshot the proposal and evaluate it at every earlier pair
            let path = scratch.join(format!("iw-proposal-{}-{round}.safetensors", settings.seed));
            flow.save(&path).unwrap();
            let q = ConditionalFlow::load(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            let rows = thetas.len() / d;
            let mut lp = vec![0.0; rows];
            q.log_prob(&thetas, &obs_rows(rows), &mut lp).unwrap();
            log_p.push(lp);
            proposals.push(q);
            t
        };
        // simulate as the library does (same streams): the SIR, then M releases per curve
        let first = ((round - 1) * n) as u64;
        let mut curve = vec![0.0; k];
        let mut release = vec![0.0; k];
        for (i, theta) in new_thetas.chunks_exact(d).enumerate() {
            let mut sim_rng =
                SimStream::with_domain(settings.seed, SIMULATION_DOMAIN, first + i as u64);
            sir.simulate(theta, &mut sim_rng, &mut curve).unwrap();
            let mut noise = SimStream::with_domain(settings.seed, NOISE_DOMAIN, first + i as u64);
            inner
                .estimate(
                    &mut noise,
                    &mut release,
                    |u, y| mech.tau(u, &curve, y),
                    |y| {
                        releases.extend_from_slice(y);
                        0.0
                    },
                )
                .unwrap();
        }
        // every proposal's density at the new pairs
        let new_rows = n;
        for (r, lp) in log_p.iter_mut().enumerate() {
            if r == 0 {
                lp.extend(new_thetas.chunks_exact(d).map(|t| prior.ln_density(t)));
            } else {
                let mut v = vec![0.0; new_rows];
                proposals[r - 1]
                    .log_prob(&new_thetas, &obs_rows(new_rows), &mut v)
                    .unwrap();
                lp.extend(v);
            }
        }
        thetas.extend_from_slice(&new_thetas);
        // weights π/p̄ per pair, p̄ = (1/R) Σ_r p_r (every round has n simulations)
        let pairs = thetas.len() / d;
        let rounds_so_far = log_p.len() as f64;
        let weights: Vec<f64> = (0..pairs)
            .map(|i| {
                let terms: Vec<f64> = log_p.iter().map(|lp| lp[i]).collect();
                let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let mix =
                    top + (terms.iter().map(|t| (t - top).exp()).sum::<f64>() / rounds_so_far).ln();
                (log_p[0][i] - mix).exp() / m as f64
            })
            .collect();
        // rebuild the training set with the new weights (the same validation pairs per round)
        let mut data = TrainingSet::new(d, k, settings.validation_fraction).unwrap();
        for r in 0..round {
            let rows = n * m;
            let target = repeat(&thetas[r * n * d..(r + 1) * n * d], d, m);
            let w = repeat(&weights[r * n..(r + 1) * n], 1, m);
            let mut train_rng = SimStream::with_domain(settings.seed, TRAIN_DOMAIN, (r + 1) as u64);
            data.push_round(
                RoundRows {
                    target: &target,
                    context: &releases[r * rows * k..(r + 1) * rows * k],
                    weight: Some(&w),
                    rows_per_pair: m,
                },
                &mut train_rng,
            )
            .unwrap();
        }
        let mut train_rng =
            SimStream::with_domain(settings.seed, TRAIN_DOMAIN, (round as u64) << 32);
        let fit = flow.fit(&data, &settings.train, &mut train_rng).unwrap();
        let ess = {
            let sw: f64 = weights.iter().sum();
            sw * sw / weights.iter().map(|w| w * w).sum::<f64>()
        };
        let post = NeuralPosterior::new(flow, s_dp).unwrap();
        let mut rng = SimStream::with_domain(settings.seed, CURVE_DOMAIN, round as u64);
        let (draws, _) = post.sample(prior, 1000, 0.01, &mut rng).unwrap();
        flow = post.into_flow();
        let nd = draws.len() as f64 / 2.0;
        let beta = draws.iter().step_by(2).sum::<f64>() / nd;
        let gamma = draws.iter().skip(1).step_by(2).sum::<f64>() / nd;
        let value = mmd(&draws, exact);
        eprintln!(
            "IW-MLE seed {} round {round}: {} epochs (best {}), weight ESS {ess:.0} of {pairs}, \
             mean β {beta:.4} γ {gamma:.5}, MMD to the IS reference {value:.4}",
            settings.seed,
            fit.epochs,
            fit.best_epoch + 1
        );
        out.push((beta, gamma, value));
    }
    out
}

/// Each row of `values` (`dim` wide) repeated `m` times.
fn repeat(values: &[f64], dim: usize, m: usize) -> Vec<f64> {
    values
        .chunks_exact(dim)
        .flat_map(|row| core::iter::repeat_n(row, m).flatten().copied())
        .collect()
}

#[allow(clippy::too_many_lines)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = arg(&args, "--seed", 1);
    let seeds: Vec<u64> = args
        .iter()
        .position(|a| a == "--seeds")
        .and_then(|i| args.get(i + 1))
        .map_or_else(
            || vec![seed],
            |v| v.split(',').map(|s| s.parse().unwrap()).collect(),
        );
    let ref_seed: u64 = arg(&args, "--reference-seed", seed);
    let cache = args
        .iter()
        .position(|a| a == "--reference-cache")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    if let Some(i) = args.iter().position(|a| a == "--score") {
        score(&args[i + 1..]);
        return;
    }
    let sir = SirTauLeap::new(SirSettings::paper(), 0.05).unwrap();
    let prior = paper_prior().unwrap();
    // Proposition 4: ε = nL/m.
    let epsilon: f64 = arg(&args, "--epsilon", 10.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let m_pseudo = ((N * L) as f64 / epsilon).round().max(1.0) as u64;
    let mech = Proportions(BinomialCurve::new(N, m_pseudo, K).unwrap());
    let s_dp: Vec<f64> = if m_pseudo == 1000 && !args.iter().any(|a| a == "--simulated-observation")
    {
        S_DP.to_vec()
    } else {
        let mut counts = vec![0.0; S_DP.len()];
        let mut rng = SimStream::with_domain(ref_seed, OBSERVATION_DOMAIN, 0);
        sir.simulate(&theta_star(), &mut rng, &mut counts).unwrap();
        let mut rng = SimStream::with_domain(ref_seed, OBSERVATION_DOMAIN, 1);
        let u: Vec<f64> = counts
            .iter()
            .map(|_| dpinfer_simulators::dist::uniform_open01(&mut rng))
            .collect();
        let mut out = vec![0.0; S_DP.len()];
        mech.tau(&u, &counts, &mut out).unwrap();
        out
    };
    if let Some(i) = args.iter().position(|a| a == "--dump-releases") {
        let n = args.get(i + 2).map_or(2000, |v| v.parse().unwrap());
        dump_releases(&sir, &mech, seed, &args[i + 1], n);
        return;
    }
    println!(
        "ε = nL/m = {} (n = {N}, L = {L}, m = {m_pseudo}); s_dp° = {s_dp:?}",
        (N * L) as f64 / m_pseudo as f64
    );

    // Reference: SMC-ABC (1000 particles, ε_t = 0.5·0.7^t) down to the final tolerance.
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
    let (reference, ref_what) = load_or_make(cache, || {
        let t0 = Instant::now();
        let mut smc = SmcAbc::new(
            &prior,
            abc_sim.clone(),
            Euclidean::new(&s_dp).unwrap(),
            abc_settings.clone(),
        )
        .unwrap();
        smc.run(&mut SimStream::new(ref_seed, 1)).unwrap();
        let what = format!(
            "SMC-ABC reference: ε = {epsilon}, tolerance {}, seed {ref_seed}, {} simulations, \
             {} generations, {:.1} s",
            abc_settings.final_tolerance,
            smc.simulations(),
            smc.history().len(),
            t0.elapsed().as_secs_f64()
        );
        (resample(smc.particles(), smc.weights()), what)
    });
    println!("{ref_what}");
    println!("| method | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|");
    summary("SMC-ABC", &reference);
    // The tolerance-free reference (importance sampling with the mechanism's pmf).
    let exact_n: usize = arg(&args, "--exact-reference", 0);
    let exact_seed: u64 = arg(&args, "--exact-seed", ref_seed);
    let widen: f64 = arg(&args, "--exact-widen", 2.0);
    let exact_cache = args
        .iter()
        .position(|a| a == "--exact-cache")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let exact: Option<Vec<f64>> = (exact_n > 0).then(|| {
        let (draws, what) = load_or_make(exact_cache, || {
            let t0 = Instant::now();
            let (draws, ess1, ess2) = exact_reference(
                &prior, &sir, &s_dp, m_pseudo, &reference, exact_n, 4, exact_seed, widen,
            );
            let what = format!(
                "importance-sampling reference: ε = {epsilon}, seed {exact_seed}, two passes of \
                 {exact_n} draws × 4 confidential simulations (proposal sd × {widen}), ESS \
                 {ess1:.0} then {ess2:.0}, \
                 {:.1} s",
                t0.elapsed().as_secs_f64()
            );
            (draws, what)
        });
        println!("{what}");
        summary("importance sampling", &draws);
        println!(
            "| MMD(SMC-ABC, importance sampling) = {:.4} | | |",
            mmd(&reference, &draws)
        );
        draws
    });

    // SMC-ABC's curve: an independent run (another stream), every generation against the
    // reference.
    let mut abc_curve = Vec::new();
    if args.iter().any(|a| a == "--abc-curve") {
        // the curve's run may go below the reference's tolerance (against the exact reference)
        let curve_settings = SmcSettings {
            final_tolerance: arg(&args, "--abc-curve-tolerance", abc_settings.final_tolerance),
            simulation_budget: arg(&args, "--abc-curve-budget", abc_settings.simulation_budget),
            ..abc_settings.clone()
        };
        let t0 = (Instant::now(), cpu_seconds());
        let mut run = SmcAbc::new(
            &prior,
            abc_sim,
            Euclidean::new(&s_dp).unwrap(),
            curve_settings,
        )
        .unwrap();
        let mut rng = SimStream::new(ref_seed, 4);
        let mut observer = (0.0, 0.0);
        while let SmcStep::Generation(stats) = run.step(&mut rng).unwrap() {
            let wall = t0.0.elapsed().as_secs_f64() - observer.0;
            let cpu = cpu_seconds() - t0.1 - observer.1;
            let t1 = (Instant::now(), cpu_seconds());
            let draws = resample(run.particles(), run.weights());
            let value = mmd(&draws, &reference);
            let to_exact = exact.as_deref().map_or(f64::NAN, |e| mmd(&draws, e));
            eprintln!(
                "curve SMC-ABC: generation {}, tolerance {:.4}, {} simulations, MMD {value:.4}, \
                 MMD to the IS reference {to_exact:.4}, {wall:.1} s wall, {cpu:.1} s CPU",
                stats.generation,
                stats.tolerance,
                run.simulations()
            );
            summary(&format!("SMC-ABC generation {}", stats.generation), &draws);
            abc_curve.push((stats.generation, run.simulations(), value));
            observer.0 += t1.0.elapsed().as_secs_f64();
            observer.1 += cpu_seconds() - t1.1;
        }
        eprintln!("SMC-ABC curve run: {:.1} s", t0.0.elapsed().as_secs_f64());
    }

    let flow = if args.iter().any(|a| a == "--maf") {
        FlowSettings::Maf(MafSettings::default())
    } else {
        FlowSettings::default()
    };
    let base = SequentialSettings {
        rounds: arg(&args, "--rounds", 10),
        simulations: arg(&args, "--sims", 1000),
        noise_draws: arg(&args, "--m", 8),
        flow,
        train: TrainSettings {
            max_epochs: arg(&args, "--max-epochs", 1000),
            weight_decay: arg(
                &args,
                "--weight-decay",
                TrainSettings::default().weight_decay,
            ),
            learning_rate: arg(&args, "--lr", TrainSettings::default().learning_rate),
            batch_size: arg(&args, "--batch", TrainSettings::default().batch_size),
            ..TrainSettings::default()
        },
        atoms: arg(&args, "--atoms", SequentialSettings::default().atoms),
        combined_loss: args.iter().any(|a| a == "--combined"),
        retrain_from_scratch: args.iter().any(|a| a == "--scratch"),
        seed,
        ..SequentialSettings::default()
    };
    let sims = base.rounds * base.simulations;
    println!(
        "\n{} rounds × {} simulations, M = {}, {:?}, ε = {epsilon}, seeds {seeds:?}\n",
        base.rounds, base.simulations, base.noise_draws, base.flow
    );
    println!("| seed | method | β mean ± sd | γ mean ± sd |");
    println!("|---|---|---|---|");
    let ts = theta_star();
    println!("| | truth θ* | {:.4} | {:.4} |", ts[0], ts[1]);
    // per seed: (SPPE curve, SPPE self-MMD per round, SPLE curve)
    let mut runs: Vec<Repetition> = Vec::new();
    let mut times = Vec::new();
    let new_curve = |name: &'static str, run_seed: u64| Curve {
        name,
        reference: &reference,
        prior: &prior,
        seed: run_seed,
        simulations: base.simulations,
        points: Vec::new(),
        own: Vec::new(),
        exact: exact.as_deref(),
        exact_points: Vec::new(),
        start: (Instant::now(), cpu_seconds()),
        observer: (0.0, 0.0),
    };
    if args.iter().any(|a| a == "--iw-mle") {
        let Some(exact) = exact.as_deref() else {
            eprintln!("sir_sppe: --iw-mle measures against --exact-reference N");
            std::process::exit(2)
        };
        let scratch = std::env::temp_dir();
        let mut all = Vec::new();
        for &run_seed in &seeds {
            let settings = SequentialSettings {
                seed: run_seed,
                ..base
            };
            all.push(iw_mle(
                &prior, &sir, &mech, &s_dp, &settings, exact, &scratch,
            ));
        }
        println!("| round | IW-MLE mean β (per seed) | MMD to IS (per seed) |");
        println!("|---|---|---|");
        for round in 0..base.rounds {
            let b: Vec<String> = all.iter().map(|r| format!("{:.3}", r[round].0)).collect();
            let v: Vec<String> = all.iter().map(|r| format!("{:.3}", r[round].2)).collect();
            println!("| {} | {} | {} |", round + 1, b.join(", "), v.join(", "));
        }
        return;
    }
    for &run_seed in &seeds {
        let settings = SequentialSettings {
            seed: run_seed,
            ..base
        };
        let (mut sppe_curve, mut own, mut sple_curve) = (Vec::new(), Vec::new(), Vec::new());
        let (mut sppe_exact, mut sple_exact) = (Vec::new(), Vec::new());
        if !args.iter().any(|a| a == "--no-sppe") {
            let t0 = Instant::now();
            let mut curve = new_curve("SPPE", run_seed);
            let post = sppe_observed(&prior, &sir, &mech, &s_dp, &settings, &mut curve).unwrap();
            let secs = t0.elapsed().as_secs_f64();
            for r in &post.rounds {
                eprintln!(
                    "SPPE seed {run_seed} round {}: {} epochs, best validation loss {:.4}, \
                     proposal {:?}, {} simulations rejected",
                    r.round,
                    r.fit.epochs,
                    r.fit.validation_loss[r.fit.best_epoch],
                    r.proposal,
                    r.rejected
                );
                eprintln!("  validation loss per epoch: {:.4?}", r.fit.validation_loss);
            }
            let (draws, _) = post
                .posterior
                .sample(&prior, 1000, 0.01, &mut SimStream::new(run_seed, 2))
                .unwrap();
            eprintln!(
                "SPPE seed {run_seed}: {secs:.1} s, MMD to SMC-ABC {:.4}",
                mmd(&draws, &reference)
            );
            summary(&format!("{run_seed} | SPPE"), &draws);
            times.push(("SPPE", run_seed, secs, mmd(&draws, &reference)));
            sppe_curve = curve.points;
            own = curve.own;
            sppe_exact = curve.exact_points;
        }
        if !args.iter().any(|a| a == "--no-sple") {
            let t0 = Instant::now();
            let mut curve = new_curve("SPLE", run_seed);
            let lik = sple_observed(&prior, &sir, &mech, &s_dp, &settings, &mut curve).unwrap();
            let secs = t0.elapsed().as_secs_f64();
            for r in &lik.rounds {
                eprintln!(
                    "SPLE seed {run_seed} round {}: {} epochs, best validation loss {:.4}",
                    r.round, r.fit.epochs, r.fit.validation_loss[r.fit.best_epoch]
                );
            }
            eprintln!(
                "SPLE seed {run_seed} final chains: {:?}",
                lik.posterior_mcmc
            );
            eprintln!(
                "SPLE seed {run_seed}: {secs:.1} s, MMD to SMC-ABC {:.4}",
                mmd(&lik.posterior, &reference)
            );
            summary(&format!("{run_seed} | SPLE"), &lik.posterior);
            times.push(("SPLE", run_seed, secs, mmd(&lik.posterior, &reference)));
            sple_curve = curve.points;
            sple_exact = curve.exact_points;
        }
        runs.push(Repetition {
            seed: run_seed,
            sppe: sppe_curve,
            own,
            sple: sple_curve,
            sppe_exact,
            sple_exact,
        });
    }

    println!("\n| method | seed | simulations | wall time (s) | MMD to SMC-ABC |");
    println!("|---|---|---|---|---|");
    for (name, s, secs, v) in &times {
        println!("| {name} | {s} | {sims} | {secs:.1} | {v:.4} |");
    }
    println!(
        "\n| method | seed | round / generation | simulations | MMD to the reference | self MMD |"
    );
    println!("|---|---|---|---|---|---|");
    for (g, n, v) in &abc_curve {
        println!("| SMC-ABC | {ref_seed} | {g} | {n} | {v:.4} | |");
    }
    for run in &runs {
        let s = run.seed;
        for ((r, n, v), o) in run.sppe.iter().zip(&run.own) {
            println!("| SPPE | {s} | {r} | {n} | {v:.4} | {o:.4} |");
        }
        for (r, n, v) in &run.sple {
            println!("| SPLE | {s} | {r} | {n} | {v:.4} | |");
        }
    }
    if runs.len() > 1 {
        println!(
            "\nOver {} repetitions (seeds {seeds:?}): MMD per round, mean [lower quartile, upper \
             quartile] (min – max)\n",
            runs.len()
        );
        println!("| method | round | simulations | MMD mean | quartiles | range |");
        println!("|---|---|---|---|---|---|");
        for (name, pick) in [
            ("SPPE", 1usize),
            ("SPPE self", 2),
            ("SPLE", 3),
            ("SPPE to IS", 4),
            ("SPLE to IS", 5),
        ] {
            for round in 0..base.rounds {
                let values: Vec<f64> = runs
                    .iter()
                    .filter_map(|run| match pick {
                        1 => run.sppe.get(round).map(|p| p.2),
                        2 => run.own.get(round).copied(),
                        3 => run.sple.get(round).map(|p| p.2),
                        4 => run.sppe_exact.get(round).copied(),
                        _ => run.sple_exact.get(round).copied(),
                    })
                    .collect();
                if values.is_empty() {
                    continue;
                }
                let [mean, q1, q3, lo, hi] = spread(&values);
                println!(
                    "| {name} | {} | {} | {mean:.4} | [{q1:.4}, {q3:.4}] | {lo:.4} – {hi:.4} |",
                    round + 1,
                    (round + 1) * base.simulations
                );
            }
        }
    }
}
