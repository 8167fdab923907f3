//! SMC-ABC (ABC population Monte Carlo, Beaumont, Cornuet, Marin & Robert 2009; Algorithm 3 of
//! Xiong, Ju & Zhang) with a Gaussian perturbation kernel of **twice** the weighted particle
//! covariance (by default; see [`Perturbation`] for the optimal local covariance kernel of
//! Filippi et al. 2013 and a Silverman-scaled multivariate normal), Beaumont importance weights
//! computed in log space, ESS-triggered systematic resampling, tolerance schedules (optionally
//! with a first tolerance from the prior-predictive distances, [`Tolerance::PriorQuantile`])
//! and stopping rules.
//!
//! Each [`SmcAbc::step`] runs one generation and returns its [`GenerationStats`].
//!
//! # Inference from privatized data
//!
//! To target `π(θ | s_dp)` (Xiong, Ju & Zhang §3.1), give the sampler a simulator that runs the
//! confidential model *and then the public privacy mechanism* on its output, e.g.
//! [`Privatized`] with [`LaplaceReplicate`]. The mechanism's replicate noise is public
//! simulation randomness (the analyst re-runs a published mechanism); it is never the data
//! owner's privacy noise.
//!
//! # Privacy
//!
//! SMC-ABC itself is not a private mechanism: it post-processes whatever observation it is
//! given. It is private exactly when the observation is the output of a DP mechanism
//! (post-processing invariance).

use alloc::vec::Vec;
use core::ops::ControlFlow;

use dpinfer_simulators::{BatchSimulator, Prior, SimError, Simulator};
use rand_core::Rng;

use crate::batch::{Gather, block_rows, row_streams, simulate_rows};
use crate::discrepancy::{Discrepancy, sanitize};

/// Stream domain base of [`SmcAbc::step_batched`] and `SmcAbc::step_parallel` (plus the
/// generation index).
pub const SMC_DOMAIN: u64 = 0x0053_4d43_0000_0000; // "SMC"

/// Stream domain of the prior-predictive calibration sample of [`Tolerance::PriorQuantile`]
/// in [`SmcAbc::step_batched`] and `SmcAbc::step_parallel` (row = particle index).
pub const SMC_CALIBRATION_DOMAIN: u64 = 0x0053_4d43_4341_4c00; // "SMCCAL"

/// Consecutive out-of-support proposals after which a particle gives up (budget stop).
const MAX_MISSES: u64 = 1_000_000;
use crate::error::{AbcError, positive};
use crate::kernel::{GaussianKernel, silverman_factor};
use crate::rng::u01_open;
use crate::weights::{
    effective_sample_size, normalize_log_weights, systematic_resample, weighted_mean,
    weighted_quantile,
};

/// The tolerance sequence ε_1 > ε_2 > … of the generations.
#[derive(Clone, Debug, PartialEq)]
pub enum Tolerance {
    /// An explicit list; the run ends after the last entry.
    List(Vec<f64>),
    /// `ε_t = initial · factor^(t−1)` (the reference code of Xiong et al. uses
    /// `initial = 1.0`, `factor = 0.7`), floored at the final tolerance.
    Geometric {
        /// ε of the first generation (`> 0`, may be `+∞` for a prior-only first generation).
        initial: f64,
        /// Ratio in `(0, 1)`.
        factor: f64,
    },
    /// `ε_{t+1}` = weighted `alpha`-quantile of generation `t`'s accepted distances (Del Moral
    /// et al. 2012; pyabc's `QuantileEpsilon`), floored at the final tolerance.
    Quantile {
        /// ε of the first generation (`> 0`, `+∞` allowed).
        initial: f64,
        /// Quantile level in `(0, 1)`.
        alpha: f64,
    },
    /// As [`Tolerance::Quantile`], but generation 0's tolerance is itself the `alpha`-quantile
    /// of the distances of a **calibration sample** of `N` prior-predictive simulations (pyabc's
    /// default `QuantileEpsilon(initial_epsilon="from_sample")`): generation 0 is then
    /// rejection ABC from the prior at that tolerance instead of the prior itself. The
    /// calibration simulations count towards generation 0's simulations and the budget.
    PriorQuantile {
        /// Quantile level in `(0, 1)`.
        alpha: f64,
    },
}

/// The perturbation kernel of generations `t ≥ 1` (all: an ancestor drawn by weight, plus a
/// Gaussian step). Every kernel's Beaumont weights use its own proposal density.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Perturbation {
    /// `N(0, kernel_scale · Σ_w)`, `Σ_w` the weighted covariance of the population (Beaumont
    /// et al. 2009, with `kernel_scale = 2`: "twice the covariance"). The default.
    #[default]
    Covariance,
    /// The optimal local covariance matrix kernel (Filippi, Barnes, Cornebise & Stumpf 2013,
    /// §4.2): ancestor `θ_j` perturbed by `N(0, kernel_scale · Σ_j)`, with
    /// `Σ_j = Σ_k ω̃_k (θ̃_k − θ_j)(θ̃_k − θ_j)ᵀ` over the particles `θ̃_k` already within the
    /// new tolerance (the whole population if fewer than `dim + 1` are). Filippi et al. use
    /// `kernel_scale = 1`.
    Olcm,
    /// A multivariate normal with a Silverman-scaled bandwidth: `N(0, kernel_scale · h² Σ_w)`,
    /// `h = (4 / (ESS (d + 2)))^{1/(d+4)}` (pyabc's `MultivariateNormalTransition`, whose
    /// default `scaling` is `kernel_scale = 1`).
    Mvn,
}

impl Perturbation {
    /// The kernel's name in configs and front ends: `"twice-covariance"`, `"olcm"`, `"mvn"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Covariance => "twice-covariance",
            Self::Olcm => "olcm",
            Self::Mvn => "mvn",
        }
    }

    /// Every kernel, the default first.
    pub const ALL: [Self; 3] = [Self::Covariance, Self::Olcm, Self::Mvn];

    /// The kernel of a [`Perturbation::name`]; `None` for any other name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The covariance multiplier its authors use: 2 for [`Perturbation::Covariance`]
    /// (Beaumont et al.), 1 for the others (Filippi et al.; pyabc).
    #[must_use]
    pub const fn default_scale(self) -> f64 {
        match self {
            Self::Covariance => 2.0,
            Self::Olcm | Self::Mvn => 1.0,
        }
    }
}

/// Settings of [`SmcAbc`] (public fields; validated by [`SmcAbc::new`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SmcSettings {
    /// Number of particles `N ≥ 2`.
    pub particles: usize,
    /// Tolerance schedule.
    pub tolerance: Tolerance,
    /// Stop after the generation whose tolerance is `≤` this (`≥ 0`).
    pub final_tolerance: f64,
    /// Maximum number of generations (`≥ 1`).
    pub max_generations: usize,
    /// Maximum total number of simulations (`≥ 1`); the run stops when it is exhausted,
    /// keeping the last complete generation.
    pub simulation_budget: u64,
    /// Stop after a generation whose acceptance rate is below this (`[0, 1]`).
    pub min_acceptance_rate: f64,
    /// Resample when `ESS < ess_fraction · N` (`[0, 1]`; 0 never resamples).
    pub ess_fraction: f64,
    /// Kernel covariance multiplier (Beaumont et al. 2009: 2).
    pub kernel_scale: f64,
}

impl Default for SmcSettings {
    fn default() -> Self {
        Self {
            particles: 1000,
            tolerance: Tolerance::Quantile {
                initial: f64::INFINITY,
                alpha: 0.5,
            },
            final_tolerance: 0.0,
            max_generations: 20,
            simulation_budget: 10_000_000,
            min_acceptance_rate: 0.0,
            ess_fraction: 0.5,
            kernel_scale: 2.0,
        }
    }
}

impl SmcSettings {
    /// A shorter run than [`Default`]: 500 particles, at most 10 generations and 10⁶
    /// simulations, the quantile-α = ½ schedule from `ε₁ = +∞` (the `dpinfer` command's
    /// defaults for `sampler.kind = "smc-abc"`); the other fields as [`Default`].
    #[must_use]
    pub fn quick() -> Self {
        Self {
            particles: 500,
            max_generations: 10,
            simulation_budget: 1_000_000,
            ..Self::default()
        }
    }
}

fn unit_interval(name: &'static str, x: f64) -> Result<f64, AbcError> {
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(AbcError::InvalidParameter { name, value: x })
    }
}

fn open_unit(name: &'static str, x: f64) -> Result<f64, AbcError> {
    if x > 0.0 && x < 1.0 {
        Ok(x)
    } else {
        Err(AbcError::InvalidParameter { name, value: x })
    }
}

fn first_tolerance(name: &'static str, x: f64) -> Result<f64, AbcError> {
    if x == f64::INFINITY || (x.is_finite() && x > 0.0) {
        Ok(x)
    } else {
        Err(AbcError::InvalidParameter { name, value: x })
    }
}

impl SmcSettings {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for fewer than 2 particles, zero generations or budget;
    /// [`AbcError::InvalidParameter`] for tolerances, factors or rates out of range;
    /// [`AbcError::Empty`] for an empty tolerance list.
    pub fn validate(&self) -> Result<(), AbcError> {
        if self.particles < 2 {
            return Err(AbcError::InvalidCount {
                name: "particles",
                value: self.particles,
            });
        }
        if self.max_generations == 0 {
            return Err(AbcError::InvalidCount {
                name: "max_generations",
                value: 0,
            });
        }
        if self.simulation_budget == 0 {
            return Err(AbcError::InvalidCount {
                name: "simulation_budget",
                value: 0,
            });
        }
        crate::error::non_negative("final_tolerance", self.final_tolerance)?;
        unit_interval("min_acceptance_rate", self.min_acceptance_rate)?;
        unit_interval("ess_fraction", self.ess_fraction)?;
        positive("kernel_scale", self.kernel_scale)?;
        match &self.tolerance {
            Tolerance::List(v) => {
                if v.is_empty() {
                    return Err(AbcError::Empty { name: "tolerance" });
                }
                for &e in v {
                    crate::rejection::tolerance_ok("tolerance", e)?;
                }
            }
            Tolerance::Geometric { initial, factor } => {
                first_tolerance("initial", *initial)?;
                if !(*factor > 0.0 && *factor < 1.0) {
                    return Err(AbcError::InvalidParameter {
                        name: "factor",
                        value: *factor,
                    });
                }
            }
            Tolerance::Quantile { initial, alpha } => {
                first_tolerance("initial", *initial)?;
                open_unit("alpha", *alpha)?;
            }
            Tolerance::PriorQuantile { alpha } => {
                open_unit("alpha", *alpha)?;
            }
        }
        Ok(())
    }
}

/// Why an SMC-ABC run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// A generation reached the final tolerance.
    FinalTolerance,
    /// The tolerance list ran out.
    ScheduleExhausted,
    /// `max_generations` generations ran.
    MaxGenerations,
    /// The simulation budget ran out during a generation (that generation is discarded).
    Budget,
    /// A generation's acceptance rate fell below the minimum.
    AcceptanceRate,
    /// An observer asked to stop (e.g. a wall-clock limit).
    Observer,
}

impl StopReason {
    /// Whether the run reached its target tolerance (the only reason that is not a warning).
    #[must_use]
    pub const fn reached_target(self) -> bool {
        matches!(self, Self::FinalTolerance | Self::ScheduleExhausted)
    }

    /// What the reason means for the posterior, and what to change, in one sentence (for
    /// front ends; the names are those of [`SmcSettings`]).
    #[must_use]
    pub const fn explain(self) -> &'static str {
        match self {
            Self::FinalTolerance => {
                "the final tolerance was reached: the last population is the ABC posterior at that tolerance"
            }
            Self::ScheduleExhausted => {
                "every tolerance of the schedule was used: the last population is the ABC posterior at the last tolerance"
            }
            Self::MaxGenerations => {
                "the generation limit (max_generations) was reached before the final tolerance: the posterior is wider than requested; raise max_generations or relax final_tolerance"
            }
            Self::Budget => {
                "the simulation budget (simulation_budget) ran out during a generation, which was discarded: the posterior is the previous, wider population; raise the budget or relax final_tolerance"
            }
            Self::AcceptanceRate => {
                "the acceptance rate fell below min_acceptance_rate: smaller tolerances cost too many simulations; the posterior is the last population; lower min_acceptance_rate or accept this tolerance"
            }
            Self::Observer => {
                "an observer stopped the run (e.g. a wall-clock limit): the posterior is the last complete population"
            }
        }
    }
}

/// Per-generation diagnostics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GenerationStats {
    /// Generation index, from 0.
    pub generation: usize,
    /// Tolerance ε_t used.
    pub tolerance: f64,
    /// Simulations in this generation.
    pub simulations: u64,
    /// Total simulations so far.
    pub total_simulations: u64,
    /// Accepted / simulated in this generation.
    pub acceptance_rate: f64,
    /// Effective sample size of the generation's weights (before any resampling).
    pub ess: f64,
    /// Whether the population was resampled after this generation.
    pub resampled: bool,
}

/// What one [`SmcAbc::step`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SmcStep {
    /// A generation completed.
    Generation(GenerationStats),
    /// The run is over (the population is the last complete generation).
    Done(StopReason),
}

/// Observes generations; can stop the run. `()` observes nothing.
pub trait SmcObserver {
    /// Called after each completed generation; `ControlFlow::Break(())` stops the run.
    fn on_generation(
        &mut self,
        stats: &GenerationStats,
        particles: &[f64],
        weights: &[f64],
    ) -> ControlFlow<()> {
        let _ = (stats, particles, weights);
        ControlFlow::Continue(())
    }
}

impl SmcObserver for () {}

/// Stops a run once a wall-clock deadline has passed (checked after each generation).
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    /// The deadline.
    pub deadline: std::time::Instant,
}

#[cfg(feature = "std")]
impl SmcObserver for WallClock {
    fn on_generation(&mut self, _: &GenerationStats, _: &[f64], _: &[f64]) -> ControlFlow<()> {
        if std::time::Instant::now() >= self.deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// The SMC-ABC sampler.
#[derive(Debug)]
pub struct SmcAbc<P, S, D, O = ()> {
    prior: P,
    sim: S,
    dist: D,
    observer: O,
    settings: SmcSettings,
    perturbation: Perturbation,
    dim: usize,
    generation: usize,
    total_sims: u64,
    epsilon: f64,
    // current population
    particles: Vec<f64>,
    weights: Vec<f64>,
    distances: Vec<f64>,
    // scratch
    new_particles: Vec<f64>,
    new_log_w: Vec<f64>,
    new_distances: Vec<f64>,
    kernel: GaussianKernel,
    theta: Vec<f64>,
    diff: Vec<f64>,
    scratch: Vec<f64>,
    logs: Vec<f64>,
    out: Vec<f64>,
    idx: Vec<usize>,
    stats: Vec<GenerationStats>,
    done: Option<StopReason>,
}

impl<P: Prior, S: BatchSimulator, D: Discrepancy> SmcAbc<P, S, D, ()> {
    /// Builds the sampler with no observer.
    ///
    /// # Errors
    ///
    /// As [`SmcSettings::validate`], plus [`AbcError::LengthMismatch`] if prior and simulator
    /// disagree on dim θ.
    pub fn new(prior: P, sim: S, dist: D, settings: SmcSettings) -> Result<Self, AbcError> {
        Self::with_observer(prior, sim, dist, settings, ())
    }
}

impl<P: Prior, S: BatchSimulator, D: Discrepancy, O: SmcObserver> SmcAbc<P, S, D, O> {
    /// Builds the sampler with an observer.
    ///
    /// # Errors
    ///
    /// As [`SmcAbc::new`].
    pub fn with_observer(
        prior: P,
        sim: S,
        dist: D,
        settings: SmcSettings,
        observer: O,
    ) -> Result<Self, AbcError> {
        settings.validate()?;
        let dim = crate::error::model_dim(prior.dim(), sim.batch_param_dim())?;
        let n = settings.particles;
        let epsilon = match &settings.tolerance {
            Tolerance::List(v) => v[0],
            Tolerance::Geometric { initial, .. } | Tolerance::Quantile { initial, .. } => *initial,
            // replaced by the calibration sample's quantile in generation 0
            Tolerance::PriorQuantile { .. } => f64::INFINITY,
        }
        .max(settings.final_tolerance);
        let out_dim = sim.batch_output_dim();
        Ok(Self {
            prior,
            sim,
            dist,
            observer,
            perturbation: Perturbation::default(),
            dim,
            generation: 0,
            total_sims: 0,
            epsilon,
            particles: Vec::new(),
            weights: Vec::new(),
            distances: Vec::new(),
            new_particles: alloc::vec![0.0; n * dim],
            new_log_w: alloc::vec![0.0; n],
            new_distances: alloc::vec![0.0; n],
            kernel: GaussianKernel::new(dim),
            theta: alloc::vec![0.0; dim],
            diff: alloc::vec![0.0; dim],
            scratch: alloc::vec![0.0; dim],
            logs: Vec::new(),
            out: alloc::vec![0.0; out_dim],
            idx: alloc::vec![0; n],
            settings,
            stats: Vec::new(),
            done: None,
        })
    }

    /// Chooses the perturbation kernel (default [`Perturbation::Covariance`]); its covariance
    /// is multiplied by [`SmcSettings::kernel_scale`] (see [`Perturbation::default_scale`]).
    /// Call before the first step.
    #[must_use]
    pub fn with_perturbation(mut self, perturbation: Perturbation) -> Self {
        self.perturbation = perturbation;
        self
    }

    /// The perturbation kernel.
    #[must_use]
    pub fn perturbation(&self) -> Perturbation {
        self.perturbation
    }

    /// The current population, row-major (`particles × dim`); empty before the first step.
    #[must_use]
    pub fn particles(&self) -> &[f64] {
        &self.particles
    }

    /// Normalised weights of the current population.
    #[must_use]
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Distances of the current population.
    #[must_use]
    pub fn distances(&self) -> &[f64] {
        &self.distances
    }

    /// Dimension of θ.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Diagnostics of all completed generations.
    #[must_use]
    pub fn history(&self) -> &[GenerationStats] {
        &self.stats
    }

    /// Total simulations so far.
    #[must_use]
    pub fn simulations(&self) -> u64 {
        self.total_sims
    }

    /// Weighted posterior mean of the current population into `out` (length `dim`).
    ///
    /// # Errors
    ///
    /// [`AbcError::Empty`] before the first generation; shape errors as
    /// [`crate::weights::weighted_mean`].
    pub fn posterior_mean(&self, out: &mut [f64]) -> Result<(), AbcError> {
        if self.weights.is_empty() {
            return Err(AbcError::Empty { name: "population" });
        }
        weighted_mean(&self.particles, self.dim, &self.weights, out)
    }

    /// Proposes θ into `theta` (with `z` as scratch for standard normals): from the prior at
    /// generation 0, otherwise resample + perturb ([`GaussianKernel::propose`]). Returns
    /// `false` if the proposal lies outside the prior support. Reads the sampler state only.
    fn propose_into<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        theta: &mut [f64],
        z: &mut [f64],
    ) -> Result<bool, AbcError> {
        if self.generation == 0 {
            self.prior.sample(rng, theta).map_err(AbcError::Model)?;
            return Ok(true);
        }
        self.kernel.propose(rng, theta, z);
        Ok(self.prior.in_support(theta))
    }

    fn next_tolerance(&self) -> Option<f64> {
        let fin = self.settings.final_tolerance;
        let g = self.generation; // index of the generation about to run
        match &self.settings.tolerance {
            Tolerance::List(v) => v.get(g).map(|&e| e.max(fin)),
            Tolerance::Geometric { initial, factor } => {
                #[allow(clippy::cast_precision_loss)]
                let e = initial * libm::pow(*factor, g as f64);
                Some(e.max(fin))
            }
            Tolerance::Quantile { alpha, .. } | Tolerance::PriorQuantile { alpha } => {
                let q = weighted_quantile(&self.distances, &self.weights, *alpha)
                    .unwrap_or(f64::INFINITY);
                Some(q.min(self.epsilon).max(fin))
            }
        }
    }

    /// Checks the stopping rules and prepares the kernel; `Some` if the run is over.
    fn begin_generation(&mut self) -> Result<Option<SmcStep>, AbcError> {
        if let Some(r) = self.done {
            return Ok(Some(SmcStep::Done(r)));
        }
        if self.generation >= self.settings.max_generations {
            return Ok(Some(self.stop(StopReason::MaxGenerations)));
        }
        if self.generation > 0 {
            match self.next_tolerance() {
                Some(e) => self.epsilon = e,
                None => return Ok(Some(self.stop(StopReason::ScheduleExhausted))),
            }
            let scale = self.settings.kernel_scale;
            match self.perturbation {
                Perturbation::Covariance => {
                    self.kernel.fit(&self.particles, &self.weights, scale)?;
                }
                Perturbation::Mvn => {
                    let ess = effective_sample_size(&self.weights)?;
                    let h = silverman_factor(ess, self.dim);
                    self.kernel
                        .fit(&self.particles, &self.weights, scale * h * h)?;
                }
                Perturbation::Olcm => self.kernel.fit_local(
                    &self.particles,
                    &self.weights,
                    &self.distances,
                    self.epsilon,
                    scale,
                )?,
            }
        }
        Ok(None)
    }

    /// Whether generation 0 is about to run with a first tolerance still to calibrate.
    fn calibrating(&self) -> bool {
        self.generation == 0 && matches!(self.settings.tolerance, Tolerance::PriorQuantile { .. })
    }

    /// Generation 0's tolerance of [`Tolerance::PriorQuantile`]: the `alpha`-quantile (type 1,
    /// equal weights) of the calibration distances, floored at the final tolerance.
    fn calibrated_tolerance(&self, dists: &[f64]) -> Result<f64, AbcError> {
        let Tolerance::PriorQuantile { alpha } = self.settings.tolerance else {
            return Ok(self.epsilon);
        };
        #[allow(clippy::cast_precision_loss)]
        let w = alloc::vec![1.0 / dists.len() as f64; dists.len()];
        Ok(weighted_quantile(dists, &w, alpha)?.max(self.settings.final_tolerance))
    }

    /// Proposes, simulates and compares particles `first..first + n` of a per-stream
    /// generation (`n = dists.len()`), particle `i` with its own stream
    /// `SimStream::with_domain(seed, domain, i)`, until each is accepted: every round, each
    /// pending particle proposes from its stream (redrawing out-of-support proposals, which
    /// are not simulated), then all pending particles are simulated in one
    /// [`BatchSimulator::simulate_batch`] call. Each particle therefore consumes exactly the
    /// draws of a per-particle loop, whatever the block size. Writes θ rows, distances and
    /// simulation counts; returns `false` (stop: budget) as soon as a particle uses up `cap`
    /// simulations or `MAX_MISSES` consecutive out-of-support proposals.
    #[allow(clippy::too_many_arguments)]
    fn accept_block(
        &self,
        job: Job,
        first: usize,
        thetas: &mut [f64],
        dists: &mut [f64],
        sims: &mut [u64],
        g: &mut Gather,
    ) -> Result<bool, AbcError> {
        let (d, k) = (self.dim, self.out.len());
        let n = dists.len();
        let mut streams = row_streams(job.seed, job.domain, first as u64, n);
        let mut out = alloc::vec![0.0; n * k];
        let mut ok = alloc::vec![false; n];
        let mut z = alloc::vec![0.0; d];
        let mut pending: Vec<usize> = (0..n).collect();
        // scratch of the batched distances: the rows simulated this round, gathered
        let (mut simulated, mut rows, mut found) = (Vec::new(), Vec::new(), Vec::new());
        sims.fill(0);
        while !pending.is_empty() {
            for &i in &pending {
                let mut misses = 0u64;
                loop {
                    if sims[i] >= job.cap {
                        return Ok(false);
                    }
                    if self.propose_into(
                        &mut streams[i],
                        &mut thetas[i * d..(i + 1) * d],
                        &mut z,
                    )? {
                        break;
                    }
                    misses += 1;
                    if misses >= MAX_MISSES {
                        return Ok(false);
                    }
                }
                sims[i] += 1;
            }
            simulate_rows(
                &self.sim,
                d,
                k,
                thetas,
                &mut streams,
                &mut out,
                &mut ok,
                &pending,
                g,
            )?;
            simulated.clear();
            simulated.extend(pending.iter().copied().filter(|&i| ok[i]));
            round_distances(
                &self.dist, &out, k, &simulated, &mut rows, &mut found, dists,
            );
            // a recoverable failure, or a distance above the tolerance: propose again
            pending.retain(|&i| !ok[i] || dists[i] > job.eps);
        }
        Ok(true)
    }

    /// Runs `fill` for one job over all `N` particles into `new_particles`/`new_distances`:
    /// the simulations it used (saturating sum), or `None` when some particle was not
    /// accepted within the job's cap.
    fn fill_generation<F>(&mut self, job: Job, fill: &F) -> Result<Option<u64>, AbcError>
    where
        F: Fn(&Self, Job, &mut [f64], &mut [f64], &mut [u64]) -> Result<bool, AbcError>,
    {
        let n = self.settings.particles;
        let mut thetas = core::mem::take(&mut self.new_particles);
        let mut dists = core::mem::take(&mut self.new_distances);
        thetas.resize(n * self.dim, 0.0);
        dists.resize(n, 0.0);
        let mut sims = alloc::vec![0u64; n];
        let all = fill(&*self, job, &mut thetas, &mut dists, &mut sims);
        self.new_particles = thetas;
        self.new_distances = dists;
        Ok(all?.then(|| sims.iter().fold(0u64, |a, &b| a.saturating_add(b))))
    }

    /// One per-stream generation: `fill` runs [`Self::accept_block`] over all particles (in
    /// blocks, sequentially or on threads) and reports whether every particle was accepted.
    fn step_streams<F>(&mut self, seed: u64, fill: F) -> Result<SmcStep, AbcError>
    where
        F: Fn(&Self, Job, &mut [f64], &mut [f64], &mut [u64]) -> Result<bool, AbcError>,
    {
        use dpinfer_simulators::SimStream;
        if let Some(s) = self.begin_generation()? {
            return Ok(s);
        }
        let mut calibration = 0u64;
        if self.calibrating() {
            // the prior-predictive calibration sample: N simulations accepted at ε = ∞, one
            // stream per row of `SMC_CALIBRATION_DOMAIN`
            let job = Job {
                seed,
                domain: SMC_CALIBRATION_DOMAIN,
                eps: f64::INFINITY,
                cap: self
                    .settings
                    .simulation_budget
                    .saturating_sub(self.total_sims),
            };
            let Some(sims) = self.fill_generation(job, &fill)? else {
                return Ok(self.stop(StopReason::Budget));
            };
            calibration = sims;
            if self.total_sims.saturating_add(calibration) > self.settings.simulation_budget {
                return Ok(self.stop(StopReason::Budget));
            }
            self.epsilon = self.calibrated_tolerance(&self.new_distances)?;
        }
        let eps = self.epsilon;
        let domain = SMC_DOMAIN.wrapping_add(self.generation as u64);
        let cap = self
            .settings
            .simulation_budget
            .saturating_sub(self.total_sims + calibration);
        let job = Job {
            seed,
            domain,
            eps,
            cap,
        };
        let Some(sims) = self.fill_generation(job, &fill)? else {
            return Ok(self.stop(StopReason::Budget));
        };
        let sims = calibration.saturating_add(sims);
        if self.total_sims.saturating_add(sims) > self.settings.simulation_budget {
            return Ok(self.stop(StopReason::Budget));
        }
        let u = u01_open(&mut SimStream::with_domain(seed, domain, u64::MAX));
        self.finish_generation(eps, sims, u)
    }

    /// Runs one generation with one reproducible stream per particle
    /// (`SimStream::with_domain(seed, SMC_DOMAIN + generation, particle)`; the resampling
    /// uniform uses particle index `u64::MAX`), calling the simulator on the pending particles
    /// of blocks of `batch` particles (`batch = 0` reads as all particles; blocks are capped at
    /// 2²⁴ θ-and-output values): one
    /// [`BatchSimulator::simulate_batch`] call per round of proposals, e.g. one numpy call.
    /// The result is bit-identical for every `batch` and equal to `SmcAbc::step_parallel`'s
    /// (but differs from [`SmcAbc::step`], which draws from one sequential stream). If the
    /// generation would exceed the simulation budget it is discarded and the run stops with
    /// [`StopReason::Budget`] (which also wins over a fatal error of a later particle).
    ///
    /// # Errors
    ///
    /// As [`SmcAbc::step`].
    pub fn step_batched(&mut self, seed: u64, batch: usize) -> Result<SmcStep, AbcError> {
        let n = self.settings.particles;
        let batch = block_rows(
            if batch == 0 { n } else { batch.min(n) },
            self.dim,
            self.out.len(),
        );
        self.step_streams(seed, |this, job, thetas, dists, sims| {
            let mut g = Gather::default();
            for (b, ((th, ds), sm)) in thetas
                .chunks_mut(batch * this.dim)
                .zip(dists.chunks_mut(batch))
                .zip(sims.chunks_mut(batch))
                .enumerate()
            {
                if !this.accept_block(job, b * batch, th, ds, sm, &mut g)? {
                    return Ok(false);
                }
            }
            Ok(true)
        })
    }

    /// Runs [`SmcAbc::step_batched`] until done.
    ///
    /// # Errors
    ///
    /// As [`SmcAbc::step`].
    pub fn run_batched(&mut self, seed: u64, batch: usize) -> Result<StopReason, AbcError> {
        loop {
            if let SmcStep::Done(r) = self.step_batched(seed, batch)? {
                return Ok(r);
            }
        }
    }

    /// Weights, ESS, resampling (with the uniform `u`), diagnostics and stopping rules of a
    /// completed generation whose particles are in `new_particles`/`new_distances`.
    fn finish_generation(&mut self, eps: f64, sims: u64, u: f64) -> Result<SmcStep, AbcError> {
        let n = self.settings.particles;
        self.total_sims += sims;
        // Beaumont weights in log space.
        if self.generation == 0 {
            self.new_log_w.fill(0.0);
        } else {
            for i in 0..n {
                let th = &self.new_particles[i * self.dim..(i + 1) * self.dim];
                let lp = self.prior.ln_density(th);
                self.new_log_w[i] = self
                    .kernel
                    .log_weight(lp, th, &mut self.diff, &mut self.logs);
            }
        }
        let mut w = alloc::vec![0.0; n];
        normalize_log_weights(&self.new_log_w, &mut w)?;
        core::mem::swap(&mut self.particles, &mut self.new_particles);
        if self.new_particles.len() != n * self.dim {
            self.new_particles = alloc::vec![0.0; n * self.dim];
        }
        core::mem::swap(&mut self.distances, &mut self.new_distances);
        if self.new_distances.len() != n {
            self.new_distances = alloc::vec![0.0; n];
        }
        self.weights = w;
        let ess = effective_sample_size(&self.weights)?;
        #[allow(clippy::cast_precision_loss)]
        let resample = ess < self.settings.ess_fraction * n as f64;
        if resample {
            systematic_resample(&self.weights, u.min(1.0 - f64::EPSILON), &mut self.idx)?;
            let mut p = alloc::vec![0.0; n * self.dim];
            let mut d = alloc::vec![0.0; n];
            for (k, &j) in self.idx.iter().enumerate() {
                p[k * self.dim..(k + 1) * self.dim]
                    .copy_from_slice(&self.particles[j * self.dim..(j + 1) * self.dim]);
                d[k] = self.distances[j];
            }
            self.particles = p;
            self.distances = d;
            #[allow(clippy::cast_precision_loss)]
            self.weights.fill(1.0 / n as f64);
        }
        #[allow(clippy::cast_precision_loss)]
        let stats = GenerationStats {
            generation: self.generation,
            tolerance: eps,
            simulations: sims,
            total_simulations: self.total_sims,
            acceptance_rate: n as f64 / sims.max(1) as f64,
            ess,
            resampled: resample,
        };
        self.stats.push(stats);
        self.generation += 1;
        if self
            .observer
            .on_generation(&stats, &self.particles, &self.weights)
            .is_break()
        {
            self.done = Some(StopReason::Observer);
        } else if eps <= self.settings.final_tolerance {
            self.done = Some(StopReason::FinalTolerance);
        } else if stats.acceptance_rate < self.settings.min_acceptance_rate {
            self.done = Some(StopReason::AcceptanceRate);
        }
        Ok(SmcStep::Generation(stats))
    }

    fn stop(&mut self, r: StopReason) -> SmcStep {
        self.done = Some(r);
        SmcStep::Done(r)
    }
}

/// The fixed inputs of one per-stream generation.
#[derive(Clone, Copy, Debug)]
struct Job {
    seed: u64,
    domain: u64,
    eps: f64,
    cap: u64,
}

impl<P: Prior, S: Simulator, D: Discrepancy, O: SmcObserver> SmcAbc<P, S, D, O> {
    /// Runs generations until done; returns the stop reason.
    ///
    /// # Errors
    ///
    /// As [`SmcAbc::step`].
    pub fn run<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<StopReason, AbcError> {
        loop {
            if let SmcStep::Done(r) = self.step(rng)? {
                return Ok(r);
            }
        }
    }

    /// One accepted particle: proposes, simulates and compares until `ρ ≤ eps`. Returns the
    /// number of simulations, or `None` once `cap` simulations (or `MAX_MISSES` consecutive
    /// out-of-support proposals) are used up.
    /// Fills the generation's `N` slots in order at tolerance `eps`, each particle under what
    /// is left of the simulation budget (`sims` counts this generation's simulations so far),
    /// with `keep(i, d, θ)` for slot `i`; `Ok(false)` when the budget runs out first.
    fn accept_round<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        eps: f64,
        sims: &mut u64,
        (theta, z, out): (&mut [f64], &mut [f64], &mut [f64]),
        mut keep: impl FnMut(usize, f64, &[f64]),
    ) -> Result<bool, AbcError> {
        for i in 0..self.settings.particles {
            let cap = self
                .settings
                .simulation_budget
                .saturating_sub(self.total_sims + *sims);
            let Some((d, k)) = self.accept_one(rng, eps, cap, theta, z, out)? else {
                return Ok(false);
            };
            *sims += k;
            keep(i, d, theta);
        }
        Ok(true)
    }

    fn accept_one<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        eps: f64,
        cap: u64,
        theta: &mut [f64],
        z: &mut [f64],
        out: &mut [f64],
    ) -> Result<Option<(f64, u64)>, AbcError> {
        let mut sims = 0u64;
        let mut misses = 0u64;
        loop {
            if sims >= cap {
                return Ok(None);
            }
            if !self.propose_into(rng, theta, z)? {
                misses += 1;
                if misses >= MAX_MISSES {
                    return Ok(None);
                }
                continue; // outside the prior support: weight would be 0, no simulation
            }
            misses = 0;
            sims += 1;
            match self.sim.simulate(theta, rng, out) {
                Ok(()) => {}
                Err(e) if e.is_recoverable() => continue,
                Err(e) => return Err(AbcError::Model(e)),
            }
            let d = sanitize(self.dist.distance(out));
            if d <= eps {
                return Ok(Some((d, sims)));
            }
        }
    }

    /// Runs one generation, drawing from `rng` sequentially.
    ///
    /// # Errors
    ///
    /// [`AbcError::Model`] for a fatal prior/simulator failure,
    /// [`AbcError::DegenerateCovariance`] if the population collapses,
    /// [`AbcError::ZeroTotalWeight`] if every new particle has zero weight.
    pub fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<SmcStep, AbcError> {
        if let Some(s) = self.begin_generation()? {
            return Ok(s);
        }
        let dim = self.dim;
        let mut theta = core::mem::take(&mut self.theta);
        let mut z = core::mem::take(&mut self.scratch);
        let mut out = core::mem::take(&mut self.out);
        let mut sims = 0u64;
        let mut dists = core::mem::take(&mut self.new_distances);
        let mut particles = core::mem::take(&mut self.new_particles);
        let mut res = Ok(true);
        if self.calibrating() {
            // the prior-predictive calibration sample: N simulations accepted at ε = ∞
            let bufs = (&mut theta[..], &mut z[..], &mut out[..]);
            let eps = f64::INFINITY;
            res = self.accept_round(rng, eps, &mut sims, bufs, |i, d, _| dists[i] = d);
            if matches!(res, Ok(true)) {
                match self.calibrated_tolerance(&dists) {
                    Ok(e) => self.epsilon = e,
                    Err(e) => res = Err(e),
                }
            }
        }
        let eps = self.epsilon;
        if matches!(res, Ok(true)) {
            let bufs = (&mut theta[..], &mut z[..], &mut out[..]);
            res = self.accept_round(rng, eps, &mut sims, bufs, |i, d, th| {
                particles[i * dim..(i + 1) * dim].copy_from_slice(th);
                dists[i] = d;
            });
        }
        self.new_distances = dists;
        self.new_particles = particles;
        self.theta = theta;
        self.scratch = z;
        self.out = out;
        if !res? {
            self.total_sims = self.settings.simulation_budget;
            return Ok(self.stop(StopReason::Budget));
        }
        let u = u01_open(rng);
        self.finish_generation(eps, sims, u)
    }
}

/// `dists[i] = ρ(output row i)` (NaN read as `+∞`) for the block rows `simulated`
/// (increasing), in one [`Discrepancy::distances`] call: directly on `out` when every row of
/// the block was simulated, otherwise on the rows gathered into `rows` (`found` receives
/// their distances). Each value is bit for bit the one-row [`Discrepancy::distance`].
fn round_distances<D: Discrepancy + ?Sized>(
    dist: &D,
    out: &[f64],
    k: usize,
    simulated: &[usize],
    rows: &mut Vec<f64>,
    found: &mut Vec<f64>,
    dists: &mut [f64],
) {
    if k == 0 {
        // `distances` reads zero-width rows as +∞; keep the one-row value
        for &i in simulated {
            dists[i] = sanitize(dist.distance(&[]));
        }
        return;
    }
    if simulated.len() == dists.len() {
        dist.distances(out, k, dists);
        for d in dists.iter_mut() {
            *d = sanitize(*d);
        }
        return;
    }
    rows.clear();
    for &i in simulated {
        rows.extend_from_slice(&out[i * k..(i + 1) * k]);
    }
    found.clear();
    found.resize(simulated.len(), f64::INFINITY);
    dist.distances(rows, k, found);
    for (&i, &d) in simulated.iter().zip(found.iter()) {
        dists[i] = sanitize(d);
    }
}

#[cfg(feature = "parallel")]
impl<P, S, D, O> SmcAbc<P, S, D, O>
where
    P: Prior + Sync,
    S: BatchSimulator + Sync,
    D: Discrepancy + Sync,
    O: SmcObserver + Sync,
{
    /// [`SmcAbc::step_batched`] on the current rayon thread pool (choose the thread count with
    /// `rayon::ThreadPool::install`), in work items of 16 particles: bit-identical to
    /// `step_batched` for every thread count.
    ///
    /// # Errors
    ///
    /// As [`SmcAbc::step`].
    pub fn step_parallel(&mut self, seed: u64) -> Result<SmcStep, AbcError> {
        use rayon::prelude::*;
        const CHUNK: usize = 16;
        self.step_streams(seed, |this, job, thetas, dists, sims| {
            thetas
                .par_chunks_mut(CHUNK * this.dim)
                .zip(dists.par_chunks_mut(CHUNK))
                .zip(sims.par_chunks_mut(CHUNK))
                .enumerate()
                .map_init(Gather::default, |g, (c, ((th, ds), sm))| {
                    this.accept_block(job, c * CHUNK, th, ds, sm, g)
                })
                .collect::<Vec<_>>()
                .into_iter()
                // the first work item (in particle order) that did not accept them all
                // decides, whatever the thread count
                .find(|r| !matches!(r, Ok(true)))
                .unwrap_or(Ok(true))
        })
    }

    /// Runs [`SmcAbc::step_parallel`] until done.
    ///
    /// # Errors
    ///
    /// As [`SmcAbc::step`].
    pub fn run_parallel(&mut self, seed: u64) -> Result<StopReason, AbcError> {
        loop {
            if let SmcStep::Done(r) = self.step_parallel(seed)? {
                return Ok(r);
            }
        }
    }
}

/// A public replica of a privacy mechanism, applied by the analyst to simulated confidential
/// summaries (so that SMC-ABC targets `π(θ | s_dp)`). Uses the *simulation* RNG.
pub trait PublicMechanism {
    /// Writes `η(· | s)` into `out` (same length as `s`).
    fn privatize<R: Rng + ?Sized>(&self, s: &[f64], rng: &mut R, out: &mut [f64]);
}

/// The Laplace mechanism's public replica: `s + Lap(scale)` per coordinate, where
/// `scale = Δ₁/ε` of the published release.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaplaceReplicate {
    scale: f64,
}

impl LaplaceReplicate {
    /// A replica with Laplace scale `scale`.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidParameter`] unless `scale` is finite and positive.
    pub fn new(scale: f64) -> Result<Self, AbcError> {
        Ok(Self {
            scale: positive("scale", scale)?,
        })
    }
}

impl PublicMechanism for LaplaceReplicate {
    fn privatize<R: Rng + ?Sized>(&self, s: &[f64], rng: &mut R, out: &mut [f64]) {
        for (o, &x) in out.iter_mut().zip(s) {
            let u = u01_open(rng) - 0.5;
            *o = x - self.scale * u.signum() * libm::log1p(-2.0 * u.abs());
        }
    }
}

/// The binomial infection-curve mechanism's public replica (Xiong, Ju & Zhang §4.1 and
/// Appendix E.1): each infection count `I` becomes
/// `Binomial(n, (min(max(I, 0), K) + m)/(K + 2m)) / n`, the release
/// `dpinfer_mechanisms::BinomialCurve` makes of the observed curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinomialReplicate {
    n: u64,
    m: f64,
    k: f64,
}

impl BinomialReplicate {
    /// A replica with `n` trials, pseudo-count `m` and population `K`.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for `n = 0`; [`AbcError::InvalidParameter`] unless `m` is
    /// finite and positive and `K` finite and non-negative.
    pub fn new(n: u64, m: f64, k: f64) -> Result<Self, AbcError> {
        if n == 0 {
            return Err(AbcError::InvalidCount {
                name: "n",
                value: 0,
            });
        }
        Ok(Self {
            n,
            m: positive("m", m)?,
            k: crate::error::non_negative("K", k)?,
        })
    }
}

impl PublicMechanism for BinomialReplicate {
    fn privatize<R: Rng + ?Sized>(&self, s: &[f64], rng: &mut R, out: &mut [f64]) {
        let (n, m, k) = (self.n, self.m, self.k);
        for (o, &i) in out.iter_mut().zip(s) {
            let p = ((i.clamp(0.0, k) + m) / (k + 2.0 * m)).clamp(0.0, 1.0);
            #[allow(clippy::cast_precision_loss)]
            let v = dpinfer_simulators::dist::binomial(rng, n, p) as f64 / n as f64;
            *o = v;
        }
    }
}

/// One of the crate's public replicas, chosen at run time (e.g. from a config).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Replicate {
    /// [`LaplaceReplicate`].
    Laplace(LaplaceReplicate),
    /// [`BinomialReplicate`].
    Binomial(BinomialReplicate),
}

impl PublicMechanism for Replicate {
    fn privatize<R: Rng + ?Sized>(&self, s: &[f64], rng: &mut R, out: &mut [f64]) {
        match self {
            Self::Laplace(m) => m.privatize(s, rng, out),
            Self::Binomial(m) => m.privatize(s, rng, out),
        }
    }
}

/// No mechanism: the observation is not a release (`out = s`, no draws).
impl<M: PublicMechanism> PublicMechanism for Option<M> {
    fn privatize<R: Rng + ?Sized>(&self, s: &[f64], rng: &mut R, out: &mut [f64]) {
        match self {
            Some(m) => m.privatize(s, rng, out),
            None => out.copy_from_slice(s),
        }
    }
}

/// "Confidential model + public privacy mechanism" as one simulator (Xiong et al. §3.1).
#[derive(Clone, Debug)]
pub struct Privatized<S, M> {
    sim: S,
    mech: M,
}

impl<S: Simulator, M: PublicMechanism> Privatized<S, M> {
    /// Composes a simulator with a public mechanism replica.
    pub fn new(sim: S, mech: M) -> Self {
        Self { sim, mech }
    }
}

impl<S: Simulator, M: PublicMechanism> Simulator for Privatized<S, M> {
    fn param_dim(&self) -> usize {
        self.sim.param_dim()
    }
    fn output_dim(&self) -> usize {
        self.sim.output_dim()
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.sim.simulate(theta, rng, out)?;
        // privatize in place through a small stack buffer per chunk
        let mut buf = [0.0_f64; 32];
        for chunk in out.chunks_mut(32) {
            let k = chunk.len();
            buf[..k].copy_from_slice(chunk);
            self.mech.privatize(&buf[..k], rng, chunk);
        }
        Ok(())
    }
}
