//! The sequential samplers of Xiong, Ju & Zhang: **SPPE** (Algorithm 1, posterior estimation
//! with the atomic APT loss) and **SPLE** (Algorithm 2, likelihood estimation with MCMC
//! proposals), over a prior, a batch simulator of the confidential statistic and the
//! mechanism's noise map `τ(u, s)` (the private-data simulator).

use crate::data::{RoundRows, TrainingSet};
use crate::error::{NeuralError, Result};
use crate::flow::{ConditionalFlow, FitReport, MAX_ATOMS};
use crate::settings::{FlowSettings, TrainSettings, check_count};
use dpinfer_mcmc::diagnostics::{ess_bulk, split_rhat};
use dpinfer_mcmc::{MarkovChain, Penalty, PenaltySettings, Proposal, Trace};
use dpinfer_mechanisms::NoiseMap;
use dpinfer_simulators::qmc::{InnerIntegral, Sampling};
use dpinfer_simulators::{BatchSimulator, Prior, RowLikelihood, SimError, SimStream};
use rand_core::Rng;
use std::path::Path;

/// Stream domain of the θ draws of each round (prior, truncated posterior); job = round.
pub const PROPOSAL_DOMAIN: u64 = 0x4e45_5552_5052_0000; // "NEURPR"
/// Stream domain of the confidential-data simulations; job = the simulation's index over all
/// rounds.
pub const SIMULATION_DOMAIN: u64 = 0x4e45_5552_5349_0000; // "NEURSI"
/// Stream domain of the noise uniforms `u` fed to `τ(u, s)` (Sobol scrambles or MC
/// uniforms); job = the simulation's index over all rounds.
pub const NOISE_DOMAIN: u64 = 0x4e45_5552_4e4f_0000; // "NEURNO"
/// Stream domain of training (validation split, minibatch order, atoms); job = round.
pub const TRAIN_DOMAIN: u64 = 0x4e45_5552_5452_0000; // "NEURTR"
/// Stream domain of SPLE's MCMC; job = `round << 16 | chain` (round `rounds + 1`: the final
/// posterior).
pub const MCMC_DOMAIN: u64 = 0x4e45_5552_4d43_0000; // "NEURMC"

/// Largest accepted number of rounds.
pub const MAX_ROUNDS: usize = 1000;
/// Largest accepted number of simulations per round (and of posterior draws).
pub const MAX_SIMULATIONS: usize = 10_000_000;
/// Largest accepted number of noise draws `M` per simulation.
pub const MAX_NOISE_DRAWS: usize = 1 << 16;
/// Largest number of `f64` values a run or a posterior sample may hold (2²⁸: 2 GiB):
/// `rounds × simulations × noise_draws × (dim θ + dim s_dp)` training values, or
/// `n × dim θ` draws; larger requests are refused before anything is allocated.
pub const MAX_VALUES: usize = 1 << 28;
/// Largest accepted number of MCMC chains.
pub const MAX_CHAINS: usize = 64;

/// SPLE's MCMC: exact random-walk Metropolis–Hastings (`dpinfer_mcmc::Penalty::exact`, Gaussian
/// proposal) on `π(θ)·q(s_dp° | θ)`, with an adaptive warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainSettings {
    /// Chains (default 4), each started at a θ drawn from the latest round's simulated θ.
    pub chains: usize,
    /// Warm-up iterations per chain (default 400), in four stages: after each, the proposal's
    /// step is reset to `2.38/√d ×` the stage's pooled per-coordinate sd (halved when a stage
    /// accepted nothing). Warm-up draws are discarded.
    pub warmup: usize,
    /// Keep every `thin`-th draw after warm-up (default 4).
    pub thin: usize,
}

impl Default for ChainSettings {
    fn default() -> Self {
        Self {
            chains: 4,
            warmup: 400,
            thin: 4,
        }
    }
}

impl ChainSettings {
    /// Checks every field.
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] for zero or too many chains, a warm-up below 4 or above
    /// 10⁷ iterations, a thinning of 0 or above 1000.
    pub fn check(&self) -> Result<()> {
        check_count("chains", self.chains, MAX_CHAINS)?;
        check_count("warmup", self.warmup, MAX_SIMULATIONS)?;
        if self.warmup < 4 {
            return Err(NeuralError::Dimension {
                name: "warmup (at least 4)",
                value: self.warmup,
                max: MAX_SIMULATIONS,
            });
        }
        check_count("thin", self.thin, 1000)
    }
}

/// Settings of [`sppe`] and [`sple`], with the paper's defaults (App. E.1.1) where it gives
/// them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequentialSettings {
    /// Rounds `R` (paper: 10).
    pub rounds: usize,
    /// Simulations `N` per round (paper: 1000).
    pub simulations: usize,
    /// Noise draws `M` per simulated statistic: the inner integral of eq. 9 as `M` rows of
    /// weight `1/M` (default 8; the paper does not print its `M`; use a power of two with
    /// RQMC).
    pub noise_draws: usize,
    /// Placement of the `M` uniforms: scrambled Sobol (RQMC, eq. 11; default) or plain Monte
    /// Carlo.
    pub sampling: Sampling,
    /// The flow (default: the paper's 8-layer spline flow).
    pub flow: FlowSettings,
    /// Training (default: the paper's Adam settings and early stopping).
    pub train: TrainSettings,
    /// Fraction of each round's simulations held out for validation (paper: 5 %).
    pub validation_fraction: f64,
    /// Atoms of SPPE's atomic loss from round 2 on (default 10, sbi's).
    pub atoms: usize,
    /// SPPE from round 2 on: add the negative log-density of the round-1 rows (drawn from the
    /// prior) to their atomic loss — sbi's `use_combined_loss`
    /// ([`ConditionalFlow::fit_combined`]). Default `false` (the atomic loss alone, as sbi's
    /// default and every seeded SPPE number before this option).
    pub combined_loss: bool,
    /// SPPE from round 2 on: train a **new** flow each round (the weights drawn again from
    /// the seed, the standardisation fitted on all rounds' training rows) instead of
    /// continuing the last round's — sbi's `retrain_from_scratch`. Default `false` (the flow
    /// continued, its standardisation fitted on round 1 only, as every seeded SPPE number
    /// before this option).
    pub retrain_from_scratch: bool,
    /// SPLE's MCMC.
    pub chains: ChainSettings,
    /// SPLE's final posterior draws (default 1000).
    pub posterior_draws: usize,
    /// Smallest fraction of SPPE's posterior draws inside the prior's support before the
    /// truncation gives up with [`NeuralError::Truncation`] (default 0.01).
    pub min_acceptance: f64,
    /// Seed of every stream of the run (public simulation randomness).
    pub seed: u64,
}

impl Default for SequentialSettings {
    fn default() -> Self {
        Self {
            rounds: 10,
            simulations: 1000,
            noise_draws: 8,
            sampling: Sampling::Rqmc,
            flow: FlowSettings::default(),
            train: TrainSettings::default(),
            validation_fraction: crate::DEFAULT_VALIDATION_FRACTION,
            atoms: 10,
            combined_loss: false,
            retrain_from_scratch: false,
            chains: ChainSettings::default(),
            posterior_draws: 1000,
            min_acceptance: 0.01,
            seed: 0,
        }
    }
}

impl SequentialSettings {
    /// Checks every field.
    ///
    /// # Errors
    /// [`NeuralError::Dimension`] for a zero or too large count (rounds, simulations below 2,
    /// noise draws, atoms below 2, posterior draws, the chain settings);
    /// [`NeuralError::Setting`] for a validation fraction outside `(0, 1)` or a minimum
    /// acceptance outside `(0, 1]`; the flow's and training's own checks.
    pub fn check(&self) -> Result<()> {
        check_count("rounds", self.rounds, MAX_ROUNDS)?;
        check_count("simulations", self.simulations, MAX_SIMULATIONS)?;
        if self.simulations < 2 {
            return Err(NeuralError::TooFewPairs {
                pairs: self.simulations,
                needed: 2,
            });
        }
        check_count("noise_draws", self.noise_draws, MAX_NOISE_DRAWS)?;
        check_count("atoms", self.atoms, MAX_ATOMS)?;
        if self.atoms < 2 {
            return Err(NeuralError::Dimension {
                name: "atoms (at least 2)",
                value: self.atoms,
                max: MAX_ATOMS,
            });
        }
        check_count("posterior_draws", self.posterior_draws, MAX_SIMULATIONS)?;
        self.flow.check()?;
        self.train.check()?;
        self.chains.check()?;
        if !(self.validation_fraction > 0.0 && self.validation_fraction < 1.0) {
            return Err(NeuralError::Setting {
                name: "validation_fraction",
                value: self.validation_fraction,
                expected: "in (0, 1)",
            });
        }
        if !(self.min_acceptance > 0.0 && self.min_acceptance <= 1.0) {
            return Err(NeuralError::Setting {
                name: "min_acceptance",
                value: self.min_acceptance,
                expected: "in (0, 1]",
            });
        }
        Ok(())
    }
}

/// What SPLE's MCMC did (reported, never hidden: check `rhat` and `ess_bulk`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McmcReport {
    /// Chains run.
    pub chains: usize,
    /// Iterations per chain after warm-up.
    pub iterations: usize,
    /// Acceptance rate after warm-up, over all chains.
    pub acceptance: f64,
    /// Per-coordinate Gaussian proposal step used after warm-up.
    pub step: Vec<f64>,
    /// Split-R̂ per coordinate over the chains' post-warm-up draws (`dpinfer_mcmc`'s
    /// `split_rhat`; NaN when too few draws).
    pub rhat: Vec<f64>,
    /// Bulk ESS per coordinate (`dpinfer_mcmc`'s `ess_bulk`; NaN when too few draws).
    pub ess_bulk: Vec<f64>,
}

/// How a round's θ were drawn.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProposalReport {
    /// From the prior (round 1).
    Prior,
    /// SPPE: from `q(θ | s_dp°)` truncated to the prior's support by rejection; the fraction
    /// of draws kept.
    Truncated {
        /// Fraction of the flow's draws inside the prior's support.
        acceptance: f64,
    },
    /// SPLE: by MCMC on `π(θ)·q(s_dp° | θ)`.
    Mcmc(McmcReport),
}

/// One round of [`sppe`] or [`sple`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoundReport {
    /// The round (from 1).
    pub round: usize,
    /// How this round's θ were drawn.
    pub proposal: ProposalReport,
    /// Simulations run this round.
    pub simulations: usize,
    /// Simulations the model rejected (`ok = false` or a non-finite statistic); their θ are
    /// dropped.
    pub rejected: usize,
    /// Training rows over all rounds so far (`M` per kept simulation).
    pub rows: usize,
    /// The round's training: epochs, best epoch, training and validation loss per epoch
    /// (SPPE from round 2: the atomic loss; otherwise the negative log-density).
    pub fit: FitReport,
}

/// The result of [`sppe`]: the posterior estimator and the per-round reports.
#[derive(Debug)]
#[non_exhaustive]
pub struct Sppe {
    /// The trained `q(θ | s_dp)` at the observation.
    pub posterior: NeuralPosterior,
    /// One report per round.
    pub rounds: Vec<RoundReport>,
}

/// The result of [`sple`]: the likelihood estimator, the posterior draws and the reports.
#[derive(Debug)]
#[non_exhaustive]
pub struct Sple {
    /// The trained `q(s_dp | θ)` (target `s_dp`, context θ).
    pub likelihood: ConditionalFlow,
    /// `posterior_draws` draws (row-major) of `π(θ)·q(s_dp° | θ)` by MCMC.
    pub posterior: Vec<f64>,
    /// The final MCMC's diagnostics.
    pub posterior_mcmc: McmcReport,
    /// One report per round.
    pub rounds: Vec<RoundReport>,
}

/// Sees every round of [`sppe_observed`] and [`sple_observed`] as it ends, with the estimate
/// so far: the accuracy-against-simulations curves of Xiong, Ju & Zhang's Fig. 1B and Fig. 8
/// are the posterior after each round. Observing changes no number of the run: the observer
/// gets shared references only, and if it samples it draws from its own streams. `()`
/// observes nothing ([`sppe`] and [`sple`] use it).
pub trait RoundObserver {
    /// SPPE: after round `report.round`'s training, the posterior estimate `q(θ | s_dp°)` so
    /// far (sample it with [`NeuralPosterior::sample`] and a stream of the observer's own).
    fn sppe_round(&mut self, _report: &RoundReport, _posterior: &NeuralPosterior) {}

    /// SPLE: after round `report.round`'s training and MCMC, the row-major draws of
    /// `π(θ)·q(s_dp° | θ)` under that round's likelihood estimate — the next round's proposal
    /// (`simulations` draws), or after the last round the final posterior (`posterior_draws`
    /// draws) — and their chains' diagnostics. No extra MCMC is run for the observer.
    fn sple_round(&mut self, _report: &RoundReport, _posterior: &[f64], _mcmc: &McmcReport) {}
}

/// Observes nothing.
impl RoundObserver for () {}

/// A trained posterior estimator `q(θ | s_dp)` and the observation `s_dp°` it is evaluated at.
#[derive(Debug)]
pub struct NeuralPosterior {
    flow: ConditionalFlow,
    observed: Vec<f64>,
}

impl NeuralPosterior {
    /// Pairs a posterior flow (target θ, context `s_dp`, e.g. one loaded from a file) with an
    /// observation (another release can reuse a trained flow without retraining; the
    /// estimate is good where the training rounds' proposals put their mass).
    ///
    /// # Errors
    /// [`NeuralError::Length`] unless `observed` has the flow's context dimension;
    /// [`NeuralError::NonFinite`] for a NaN or infinite value.
    pub fn new(flow: ConditionalFlow, observed: &[f64]) -> Result<Self> {
        check_observed(observed, flow.context_dim())?;
        Ok(Self {
            flow,
            observed: observed.to_vec(),
        })
    }

    /// The flow `q(θ | s_dp)`.
    #[must_use]
    pub fn flow(&self) -> &ConditionalFlow {
        &self.flow
    }

    /// The flow `q(θ | s_dp)`, by value (to keep, save or pair with another observation).
    #[must_use]
    pub fn into_flow(self) -> ConditionalFlow {
        self.flow
    }

    /// The observation `s_dp°`.
    #[must_use]
    pub fn observed(&self) -> &[f64] {
        &self.observed
    }

    /// Saves the flow ([`ConditionalFlow::save`]); the observation is not stored.
    ///
    /// # Errors
    /// [`NeuralError::Io`].
    pub fn save(&self, path: &Path) -> Result<()> {
        self.flow.save(path)
    }

    /// `n` draws (row-major) of `q(θ | s_dp°)` truncated to the prior's support: draws of the
    /// flow with [`Prior::in_support`] false are rejected and redrawn (the flow's density
    /// renormalised on the support). Returns the draws and the fraction of the examined draws
    /// kept. Base normals from `rng` (public simulation randomness).
    ///
    /// # Errors
    /// [`NeuralError::Length`] if the prior's dimension is not the flow's target dimension;
    /// [`NeuralError::Dimension`] for `n` of 0 or above [`MAX_SIMULATIONS`], or `n × dim θ`
    /// above [`MAX_VALUES`];
    /// [`NeuralError::Setting`] for `min_acceptance` outside `(0, 1]`;
    /// [`NeuralError::Truncation`] when fewer than `min_acceptance` of the draws are in the
    /// support.
    pub fn sample<P: Prior + ?Sized, R: Rng + ?Sized>(
        &self,
        prior: &P,
        n: usize,
        min_acceptance: f64,
        rng: &mut R,
    ) -> Result<(Vec<f64>, f64)> {
        check_count("n", n, MAX_SIMULATIONS)?;
        let d = self.flow.target_dim();
        check_count("n × dim θ", n.saturating_mul(d), MAX_VALUES)?;
        if prior.dim() != d {
            return Err(NeuralError::Length {
                name: "prior dimension",
                expected: d,
                got: prior.dim(),
            });
        }
        if !(min_acceptance > 0.0 && min_acceptance <= 1.0) {
            return Err(NeuralError::Setting {
                name: "min_acceptance",
                value: min_acceptance,
                expected: "in (0, 1]",
            });
        }
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let cap = ((n as f64) / min_acceptance).ceil() as usize;
        let mut out = Vec::with_capacity(n * d);
        let (mut drawn, mut examined) = (0usize, 0usize);
        while out.len() < n * d {
            if drawn >= cap {
                return Err(NeuralError::Truncation {
                    accepted: out.len() / d,
                    drawn,
                });
            }
            let want = n - out.len() / d;
            // size the batch by the acceptance seen so far (all of `want` at first)
            #[allow(clippy::cast_precision_loss)]
            let rate = if examined == 0 {
                1.0
            } else {
                (out.len() / d) as f64 / examined as f64
            };
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            let batch = (((want as f64) / rate.max(min_acceptance) * 1.1).ceil() as usize + 8)
                .min(cap - drawn);
            let mut buf = vec![0.0; batch * d];
            self.flow.sample(&self.observed, rng, &mut buf)?;
            drawn += batch;
            for row in buf.chunks_exact(d) {
                examined += 1;
                if row.iter().all(|v| v.is_finite()) && prior.in_support(row) {
                    out.extend_from_slice(row);
                    if out.len() == n * d {
                        break;
                    }
                }
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let acceptance = n as f64 / examined as f64;
        Ok((out, acceptance.min(1.0)))
    }
}

/// Checks the model's pieces and the observation; returns `(dim θ, dim s, r)`.
fn check_problem<P, S, N>(
    prior: &P,
    simulator: &S,
    mechanism: &N,
    observed: &[f64],
    settings: &SequentialSettings,
) -> Result<(usize, usize, InnerIntegral)>
where
    P: Prior + ?Sized,
    S: BatchSimulator + ?Sized,
    N: NoiseMap + ?Sized,
{
    settings.check()?;
    let d = simulator.batch_param_dim();
    let k = simulator.batch_output_dim();
    check_count("parameter dimension", d, crate::MAX_DIM)?;
    check_count("statistic dimension", k, crate::MAX_DIM)?;
    if prior.dim() != d {
        return Err(NeuralError::Length {
            name: "prior dimension",
            expected: d,
            got: prior.dim(),
        });
    }
    check_observed(observed, k)?;
    check_count(
        "rounds × simulations × noise_draws × (dim θ + dim s_dp)",
        settings
            .rounds
            .saturating_mul(settings.simulations)
            .saturating_mul(settings.noise_draws)
            .saturating_mul(d + k),
        MAX_VALUES,
    )?;
    check_count(
        "posterior_draws × dim θ",
        settings.posterior_draws.saturating_mul(d),
        MAX_VALUES,
    )?;
    let r = mechanism.noise_dim(k).map_err(|e| NeuralError::Mechanism {
        message: e.to_string(),
    })?;
    let inner = InnerIntegral::new(settings.sampling, settings.noise_draws, r).map_err(|e| {
        NeuralError::Mechanism {
            message: format!("{r} noise uniforms per release: {e}"),
        }
    })?;
    Ok((d, k, inner))
}

fn check_observed(observed: &[f64], k: usize) -> Result<()> {
    if observed.len() != k {
        return Err(NeuralError::Length {
            name: "observed",
            expected: k,
            got: observed.len(),
        });
    }
    crate::data::check_rows("observed", observed, k)
}

/// One round's simulations: the kept θ (`pairs × d`) and their `M` releases each
/// (`pairs × M × k`), and the number rejected.
struct Simulated {
    thetas: Vec<f64>,
    releases: Vec<f64>,
    rejected: usize,
}

#[allow(clippy::too_many_arguments)]
fn simulate_round<S, N>(
    simulator: &S,
    mechanism: &N,
    inner: &InnerIntegral,
    thetas: &[f64],
    d: usize,
    k: usize,
    first: u64,
    round: usize,
    seed: u64,
) -> Result<Simulated>
where
    S: BatchSimulator + ?Sized,
    N: NoiseMap + ?Sized,
{
    let n = thetas.len() / d;
    let mut streams: Vec<SimStream> = (0..n as u64)
        .map(|i| SimStream::with_domain(seed, SIMULATION_DOMAIN, first + i))
        .collect();
    let mut stats = vec![0.0; n * k];
    let mut ok = vec![false; n];
    simulator
        .simulate_batch(thetas, &mut streams, &mut stats, &mut ok)
        .map_err(|e| NeuralError::Simulation {
            round,
            message: e.to_string(),
        })?;
    let m = inner.points();
    let mut out = Simulated {
        thetas: Vec::with_capacity(n * d),
        releases: Vec::new(),
        rejected: 0,
    };
    let mut release = vec![0.0; k];
    for i in 0..n {
        let s = &stats[i * k..(i + 1) * k];
        if !ok[i] || s.iter().any(|v| !v.is_finite()) {
            out.rejected += 1;
            continue;
        }
        let mut noise = SimStream::with_domain(seed, NOISE_DOMAIN, first + i as u64);
        let releases = &mut out.releases;
        inner
            .estimate(
                &mut noise,
                &mut release,
                |u, y| mechanism.tau(u, s, y),
                |y| {
                    releases.extend_from_slice(y);
                    0.0
                },
            )
            .map_err(|e| NeuralError::Mechanism {
                message: e.to_string(),
            })?;
        out.thetas.extend_from_slice(&thetas[i * d..(i + 1) * d]);
    }
    debug_assert_eq!(
        out.releases.len() as u64,
        (out.thetas.len() / d) as u64 * m * k as u64
    );
    if out.thetas.is_empty() {
        return Err(NeuralError::Simulation {
            round,
            message: format!("all {n} simulations were rejected by the model"),
        });
    }
    Ok(out)
}

/// `n` prior draws from the round's proposal stream.
fn prior_draws<P: Prior + ?Sized>(prior: &P, n: usize, rng: &mut SimStream) -> Result<Vec<f64>> {
    let d = prior.dim();
    let mut out = vec![0.0; n * d];
    for row in out.chunks_exact_mut(d) {
        prior.sample(rng, row).map_err(|e| NeuralError::Sampler {
            stage: "prior",
            message: e.to_string(),
        })?;
    }
    Ok(out)
}

/// `θ` repeated `m` times per row.
fn repeat_rows(values: &[f64], dim: usize, m: usize) -> Vec<f64> {
    values
        .chunks_exact(dim)
        .flat_map(|row| core::iter::repeat_n(row, m).flatten().copied())
        .collect()
}

/// **SPPE** (Xiong, Ju & Zhang, Algorithm 1): sequential private-data posterior estimation.
///
/// Round `r = 1..R`: draw `N` θ from the proposal (round 1 the prior, then `q(θ | s_dp°)` of
/// the previous round truncated to the prior's support, see [`NeuralPosterior::sample`]);
/// simulate the confidential statistic `s(x)` with `simulator` (one [`SimStream`] per
/// simulation), and `M` releases `τ(u_j, s)` of each with `mechanism`'s noise map, the
/// uniforms `u_j` placed by RQMC (scrambled Sobol) or MC ([`InnerIntegral`]); add the round's
/// `M` rows of weight `1/M` per simulation to all earlier rounds' (the filtration `D_r`); train
/// `q(θ | s_dp)` on all of them: round 1 by maximum likelihood (the proposal is the prior), later
/// rounds with the atomic APT loss ([`ConditionalFlow::fit_atomic`], eq. 7–8), which corrects for
/// the proposals. The flow is not re-initialised between rounds (unless
/// [`SequentialSettings::retrain_from_scratch`]); with [`SequentialSettings::combined_loss`]
/// the round-1 rows also add their negative log-density from round 2 on.
///
/// Inference from an already-released `s_dp°` is post-processing: no privacy cost (see the
/// crate docs).
///
/// # Errors
/// The settings' checks; [`NeuralError::Dimension`] if the run would hold more than
/// [`MAX_VALUES`] values; [`NeuralError::Length`] if the prior, simulator and observation
/// disagree on dimensions; [`NeuralError::Mechanism`] if the noise map refuses the statistic's
/// length or a simulated statistic (or needs more than 32 uniforms); [`NeuralError::Simulation`]
/// for a fatal simulator error or a round whose simulations were all rejected;
/// [`NeuralError::TooFewPairs`] if fewer than 2 were kept; [`NeuralError::Truncation`];
/// [`NeuralError::Diverged`] from training.
pub fn sppe<P, S, N>(
    prior: &P,
    simulator: &S,
    mechanism: &N,
    observed: &[f64],
    settings: &SequentialSettings,
) -> Result<Sppe>
where
    P: Prior + ?Sized,
    S: BatchSimulator + ?Sized,
    N: NoiseMap + ?Sized,
{
    sppe_observed(prior, simulator, mechanism, observed, settings, &mut ())
}

/// [`sppe`], calling `observer` after every round ([`RoundObserver::sppe_round`]) with the
/// round's report and the posterior estimate so far; the run's numbers are those of [`sppe`].
///
/// # Errors
/// As [`sppe`].
pub fn sppe_observed<P, S, N, O>(
    prior: &P,
    simulator: &S,
    mechanism: &N,
    observed: &[f64],
    settings: &SequentialSettings,
    observer: &mut O,
) -> Result<Sppe>
where
    P: Prior + ?Sized,
    S: BatchSimulator + ?Sized,
    N: NoiseMap + ?Sized,
    O: RoundObserver + ?Sized,
{
    let (d, k, inner) = check_problem(prior, simulator, mechanism, observed, settings)?;
    let m = settings.noise_draws;
    let flow = ConditionalFlow::new(settings.flow, d, k, settings.seed)?;
    let mut posterior = NeuralPosterior::new(flow, observed)?;
    let mut data = TrainingSet::new(d, k, settings.validation_fraction)?;
    let mut log_prior: Vec<f64> = Vec::new();
    // rows of round 1 (drawn from the prior): the first rows of `data`
    let mut prior_rows = 0;
    let mut rounds = Vec::with_capacity(settings.rounds);
    #[allow(clippy::cast_precision_loss)]
    let weight = 1.0 / m as f64;
    for round in 1..=settings.rounds {
        let mut rng = SimStream::with_domain(settings.seed, PROPOSAL_DOMAIN, round as u64);
        let (thetas, proposal) = if round == 1 {
            (
                prior_draws(prior, settings.simulations, &mut rng)?,
                ProposalReport::Prior,
            )
        } else {
            let (t, acceptance) = posterior.sample(
                prior,
                settings.simulations,
                settings.min_acceptance,
                &mut rng,
            )?;
            (t, ProposalReport::Truncated { acceptance })
        };
        let first = ((round - 1) * settings.simulations) as u64;
        let sim = simulate_round(
            simulator,
            mechanism,
            &inner,
            &thetas,
            d,
            k,
            first,
            round,
            settings.seed,
        )?;
        let target = repeat_rows(&sim.thetas, d, m);
        let weights = vec![weight; target.len() / d];
        let mut train_rng = SimStream::with_domain(settings.seed, TRAIN_DOMAIN, round as u64);
        data.push_round(
            RoundRows {
                target: &target,
                context: &sim.releases,
                weight: Some(&weights),
                rows_per_pair: m,
            },
            &mut train_rng,
        )?;
        log_prior.extend(target.chunks_exact(d).map(|t| prior.ln_density(t)));
        if round == 1 {
            prior_rows = data.len();
        } else if settings.retrain_from_scratch {
            posterior.flow = ConditionalFlow::new(settings.flow, d, k, settings.seed)?;
        }
        let fit = if round == 1 {
            posterior.flow.fit(&data, &settings.train, &mut train_rng)?
        } else if settings.combined_loss {
            let mle: Vec<bool> = (0..data.len()).map(|row| row < prior_rows).collect();
            posterior.flow.fit_combined(
                &data,
                &log_prior,
                &mle,
                settings.atoms,
                &settings.train,
                &mut train_rng,
            )?
        } else {
            posterior.flow.fit_atomic(
                &data,
                &log_prior,
                settings.atoms,
                &settings.train,
                &mut train_rng,
            )?
        };
        rounds.push(RoundReport {
            round,
            proposal,
            simulations: settings.simulations,
            rejected: sim.rejected,
            rows: data.len(),
            fit,
        });
        if let Some(report) = rounds.last() {
            observer.sppe_round(report, &posterior);
        }
    }
    Ok(Sppe { posterior, rounds })
}

/// **SPLE** (Xiong, Ju & Zhang, Algorithm 2): sequential private-data likelihood estimation.
///
/// As [`sppe`], but the flow is `q(s_dp | θ)` (target the release, context θ), trained every
/// round by maximum likelihood on all rounds' rows (the PLE loss, eq. 5, its inner integral
/// as `M` rows of weight `1/M`), and each next round's θ — and the final posterior — are drawn
/// from `π(θ)·q(s_dp° | θ)` by MCMC ([`ChainSettings`]: `dpinfer_mcmc`'s exact random-walk
/// Metropolis–Hastings, R̂ and bulk ESS reported in [`McmcReport`]).
///
/// # Errors
/// As [`sppe`] (but never [`NeuralError::Truncation`]); [`NeuralError::Sampler`] (`mcmc`) if a
/// chain cannot start (no θ of the round with a finite `π(θ)·q(s_dp° | θ)`).
pub fn sple<P, S, N>(
    prior: &P,
    simulator: &S,
    mechanism: &N,
    observed: &[f64],
    settings: &SequentialSettings,
) -> Result<Sple>
where
    P: Prior + ?Sized,
    S: BatchSimulator + ?Sized,
    N: NoiseMap + ?Sized,
{
    sple_observed(prior, simulator, mechanism, observed, settings, &mut ())
}

/// [`sple`], calling `observer` after every round ([`RoundObserver::sple_round`]) with the
/// round's report and the MCMC draws the run makes anyway (the next round's proposal, after
/// the last round the final posterior); the run's numbers are those of [`sple`].
///
/// # Errors
/// As [`sple`].
pub fn sple_observed<P, S, N, O>(
    prior: &P,
    simulator: &S,
    mechanism: &N,
    observed: &[f64],
    settings: &SequentialSettings,
    observer: &mut O,
) -> Result<Sple>
where
    P: Prior + ?Sized,
    S: BatchSimulator + ?Sized,
    N: NoiseMap + ?Sized,
    O: RoundObserver + ?Sized,
{
    let (d, k, inner) = check_problem(prior, simulator, mechanism, observed, settings)?;
    let m = settings.noise_draws;
    let mut flow = ConditionalFlow::new(settings.flow, k, d, settings.seed)?;
    let mut data = TrainingSet::new(k, d, settings.validation_fraction)?;
    let mut rounds = Vec::with_capacity(settings.rounds);
    #[allow(clippy::cast_precision_loss)]
    let weight = 1.0 / m as f64;
    let mut thetas = {
        let mut rng = SimStream::with_domain(settings.seed, PROPOSAL_DOMAIN, 1);
        prior_draws(prior, settings.simulations, &mut rng)?
    };
    let mut proposal = ProposalReport::Prior;
    let mut pool = Vec::new();
    for round in 1..=settings.rounds {
        let first = ((round - 1) * settings.simulations) as u64;
        let sim = simulate_round(
            simulator,
            mechanism,
            &inner,
            &thetas,
            d,
            k,
            first,
            round,
            settings.seed,
        )?;
        let context = repeat_rows(&sim.thetas, d, m);
        let weights = vec![weight; context.len() / d];
        let mut train_rng = SimStream::with_domain(settings.seed, TRAIN_DOMAIN, round as u64);
        data.push_round(
            RoundRows {
                target: &sim.releases,
                context: &context,
                weight: Some(&weights),
                rows_per_pair: m,
            },
            &mut train_rng,
        )?;
        let fit = flow.fit(&data, &settings.train, &mut train_rng)?;
        rounds.push(RoundReport {
            round,
            proposal: core::mem::replace(&mut proposal, ProposalReport::Prior),
            simulations: settings.simulations,
            rejected: sim.rejected,
            rows: data.len(),
            fit,
        });
        pool = sim.thetas;
        if round < settings.rounds {
            let (t, report) = mcmc_draws(
                &flow,
                prior,
                observed,
                &pool,
                settings.simulations,
                &settings.chains,
                settings.seed,
                round + 1,
            )?;
            if let Some(last) = rounds.last() {
                observer.sple_round(last, &t, &report);
            }
            thetas = t;
            proposal = ProposalReport::Mcmc(report);
        }
    }
    let (posterior, posterior_mcmc) = mcmc_draws(
        &flow,
        prior,
        observed,
        &pool,
        settings.posterior_draws,
        &settings.chains,
        settings.seed,
        settings.rounds + 1,
    )?;
    if let Some(last) = rounds.last() {
        observer.sple_round(last, &posterior, &posterior_mcmc);
    }
    Ok(Sple {
        likelihood: flow,
        posterior,
        posterior_mcmc,
        rounds,
    })
}

impl Sple {
    /// `n` draws of `π(θ)·q(s_dp | θ)` for another observation `s_dp` (no retraining), by
    /// the same MCMC, its chains started at prior draws; stream `seed`.
    ///
    /// # Errors
    /// As [`sple`]'s MCMC; [`NeuralError::Length`]/[`NeuralError::NonFinite`] for a bad
    /// observation or a prior of the wrong dimension; [`NeuralError::Dimension`] for `n`.
    pub fn posterior_for<P: Prior + ?Sized>(
        &self,
        prior: &P,
        observed: &[f64],
        n: usize,
        chains: &ChainSettings,
        seed: u64,
    ) -> Result<(Vec<f64>, McmcReport)> {
        chains.check()?;
        check_count("n", n, MAX_SIMULATIONS)?;
        check_observed(observed, self.likelihood.target_dim())?;
        let d = self.likelihood.context_dim();
        if prior.dim() != d {
            return Err(NeuralError::Length {
                name: "prior dimension",
                expected: d,
                got: prior.dim(),
            });
        }
        let mut rng = SimStream::with_domain(seed, PROPOSAL_DOMAIN, 0);
        let pool = prior_draws(prior, 256, &mut rng)?;
        mcmc_draws(&self.likelihood, prior, observed, &pool, n, chains, seed, 0)
    }
}

/// `log q(s_dp° | θ)` as a one-row likelihood for `dpinfer_mcmc`.
#[derive(Clone, Copy)]
struct FlowLikelihood<'a> {
    flow: &'a ConditionalFlow,
    observed: &'a [f64],
}

impl RowLikelihood for FlowLikelihood<'_> {
    fn dim(&self) -> usize {
        self.flow.context_dim()
    }

    fn n_rows(&self) -> usize {
        1
    }

    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        if theta.len() != self.flow.context_dim() {
            return Err(SimError::DimensionMismatch {
                what: "theta",
                expected: self.flow.context_dim(),
                got: theta.len(),
            });
        }
        if first + out.len() > 1 {
            return Err(SimError::DimensionMismatch {
                what: "rows",
                expected: 1,
                got: first + out.len(),
            });
        }
        if out.is_empty() {
            return Ok(());
        }
        if theta.iter().any(|v| !v.is_finite()) {
            out[0] = f64::NEG_INFINITY;
            return Ok(());
        }
        self.flow
            .log_prob(self.observed, theta, out)
            .map_err(|_| SimError::Degenerate {
                what: "flow log-density",
            })?;
        if out[0].is_nan() {
            out[0] = f64::NEG_INFINITY;
        }
        Ok(())
    }
}

/// Per-coordinate sd of row-major draws (`None` for fewer than 2 rows).
fn column_sd(draws: &[f64], d: usize) -> Vec<f64> {
    let n = draws.len() / d;
    (0..d)
        .map(|j| {
            let col = draws.iter().skip(j).step_by(d);
            #[allow(clippy::cast_precision_loss)]
            let nf = n as f64;
            let mean = col.clone().sum::<f64>() / nf;
            let var = col.map(|v| (v - mean) * (v - mean)).sum::<f64>() / (nf - 1.0).max(1.0);
            var.sqrt()
        })
        .collect()
}

/// `n` draws of `π(θ)·q(s_dp° | θ)`: `chains` exact RWMH chains started at θ drawn from `pool`,
/// adaptive warm-up, then thinned draws interleaved over the chains.
#[allow(clippy::too_many_arguments)]
fn mcmc_draws<P: Prior + ?Sized>(
    flow: &ConditionalFlow,
    prior: &P,
    observed: &[f64],
    pool: &[f64],
    n: usize,
    settings: &ChainSettings,
    seed: u64,
    round: usize,
) -> Result<(Vec<f64>, McmcReport)> {
    let d = flow.context_dim();
    let lik = FlowLikelihood { flow, observed };
    let mcmc = |e: dpinfer_mcmc::McmcError| NeuralError::Sampler {
        stage: "mcmc",
        message: e.to_string(),
    };
    let mut rngs: Vec<SimStream> = (0..settings.chains as u64)
        .map(|c| SimStream::with_domain(seed, MCMC_DOMAIN, ((round as u64) << 16) | c))
        .collect();
    // Starting points: pool rows with a finite target density, drawn uniformly.
    let pool_n = pool.len() / d;
    let mut lp = [0.0];
    let mut positions: Vec<Vec<f64>> = Vec::with_capacity(settings.chains);
    for rng in &mut rngs {
        let mut start = None;
        for _ in 0..64 {
            let row = &pool[crate::data::index_below(rng, pool_n) * d..][..d];
            if prior.ln_density(row).is_finite()
                && lik.row_log_lik(row, 0, &mut lp).is_ok()
                && lp[0].is_finite()
            {
                start = Some(row.to_vec());
                break;
            }
        }
        positions.push(start.ok_or(NeuralError::Sampler {
            stage: "mcmc",
            message: "no simulated θ has a finite posterior density to start a chain".to_owned(),
        })?);
    }
    let mut step: Vec<f64> = column_sd(pool, d)
        .iter()
        .map(|s| if s.is_finite() && *s > 0.0 { *s } else { 0.1 })
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let optimal = 2.38 / (d as f64).sqrt();
    for s in &mut step {
        *s *= optimal;
    }
    let run = |positions: &mut [Vec<f64>],
               rngs: &mut [SimStream],
               step: &[f64],
               iterations: usize|
     -> Result<Vec<Trace>> {
        let mut traces = Vec::with_capacity(positions.len());
        for (pos, rng) in positions.iter_mut().zip(rngs.iter_mut()) {
            let settings = PenaltySettings {
                proposal: Proposal::Gaussian {
                    scale: step.to_vec(),
                },
                temperature: 1.0,
            };
            let mut chain = Penalty::exact(prior, lik, settings, pos).map_err(mcmc)?;
            let mut trace = Trace::with_burn_in(0);
            chain
                .run(iterations as u64, rng, &mut trace)
                .map_err(mcmc)?;
            pos.copy_from_slice(chain.position());
            traces.push(trace);
        }
        Ok(traces)
    };
    let stage = settings.warmup.div_ceil(4);
    for _ in 0..4 {
        let traces = run(&mut positions, &mut rngs, &step, stage)?;
        let all: Vec<f64> = traces
            .iter()
            .flat_map(|t| t.draws.iter().copied())
            .collect();
        let accepted: u64 = traces.iter().map(|t| t.accepted).sum();
        let sd = column_sd(&all, d);
        for (s, new) in step.iter_mut().zip(sd) {
            if accepted == 0 || !(new.is_finite() && new > 0.0) {
                *s *= 0.5;
            } else {
                *s = optimal * new;
            }
        }
    }
    let per_chain = n.div_ceil(settings.chains);
    let iterations = per_chain * settings.thin;
    let traces = run(&mut positions, &mut rngs, &step, iterations)?;
    let mut draws = Vec::with_capacity(n * d);
    'outer: for t in 0..per_chain {
        for trace in &traces {
            if draws.len() == n * d {
                break 'outer;
            }
            let i = (t + 1) * settings.thin - 1;
            draws.extend_from_slice(&trace.draws[i * d..(i + 1) * d]);
        }
    }
    let accepted: u64 = traces.iter().map(|t| t.accepted).sum();
    let total: u64 = traces.iter().map(|t| t.iterations).sum();
    let columns: Vec<Vec<Vec<f64>>> = (0..d)
        .map(|j| traces.iter().map(|t| t.coordinate(j)).collect())
        .collect();
    let (rhat, ess): (Vec<f64>, Vec<f64>) = columns
        .iter()
        .map(|cols| {
            let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
            (
                split_rhat(&refs).unwrap_or(f64::NAN),
                ess_bulk(&refs).unwrap_or(f64::NAN),
            )
        })
        .unzip();
    #[allow(clippy::cast_precision_loss)]
    let acceptance = accepted as f64 / total.max(1) as f64;
    Ok((
        draws,
        McmcReport {
            chains: settings.chains,
            iterations,
            acceptance,
            step,
            rhat,
            ess_bulk: ess,
        },
    ))
}
