//! ABC population Monte Carlo with a **fixed number of proposals per generation** (Beaumont,
//! Cornuet, Marin & Robert 2009, Biometrika 96(4), Algorithm "ABC-PMC", with the
//! nearest-`N` tolerance choice of Beaumont's §4 — the tolerance `ε_g` of generation `g` is
//! the distance of its `N`-th nearest proposal, i.e. the `N/M` quantile).
//!
//! Unlike the adaptive [`crate::smc::SmcAbc`], which simulates until `N` particles fall
//! within the tolerance, a generation here is a fixed public table of `M` proposals — so it
//! **shards** like the one-pass pairs table (`crate::pairs`):
//!
//! 1. generation 0: `M` rows from the prior
//!    ([`Proposal::Prior`](crate::pairs::Proposal::Prior));
//!    generation `g ≥ 1`: row `j` draws an ancestor from population `g − 1` by weight and
//!    perturbs it with `N(0, 2 Σ_w)` ([`PmcKernel`], the kernel [`crate::smc`] uses; redrawn
//!    while outside the prior's support; [`Proposal::Kernel`](crate::pairs::Proposal::Kernel)), all from the row's own stream
//!    `SimStream::with_domain(seed, pairs_domain(g), j)` — compute any row range anywhere
//!    with [`PublicPairs::simulate`] and [`PublicPairs::concat`] the ranges;
//! 2. [`select`] keeps the `N` rows nearest the observation and gives them the Beaumont
//!    weights `π(θ) / Σ_k w_k K(θ | θ_k)` (uniform at generation 0).
//!
//! # Privacy
//!
//! None by itself: like every SMC-ABC it post-processes its observation. It is private
//! exactly when the observation is the output of a DP mechanism (e.g. a statistic released
//! once; simulate with [`crate::smc::Privatized`]).
//!
//! # Limitation
//!
//! The Gaussian perturbation needs a prior with full-dimensional support (a Dirichlet prior
//! on the simplex never accepts a perturbed θ: [`AbcError::SupportMissed`]).

use alloc::vec::Vec;

use dpinfer_simulators::{Prior, SimStream};

use crate::discrepancy::Discrepancy;
use crate::error::AbcError;
use crate::kernel::GaussianKernel;
use crate::pairs::PublicPairs;
use crate::rejection::nearest;
use crate::weights::{
    effective_sample_size, normalize_log_weights, weighted_covariance, weighted_mean,
};

/// Kernel covariance multiplier (Beaumont et al. 2009: twice the weighted covariance).
pub const KERNEL_SCALE: f64 = 2.0;

/// Consecutive out-of-support kernel proposals after which a row fails.
pub const MAX_SUPPORT_MISSES: u64 = 10_000;

/// Settings of a PMC run (the defaults are the `dpinfer` CLI's; validated by
/// [`PmcSettings::validate`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PmcSettings {
    /// Particles `N` kept per generation (`2 ≤ N ≤ proposals`).
    pub particles: usize,
    /// Proposals `M` simulated per generation (the rows of each generation's table).
    pub proposals: u64,
    /// Most generations (`≥ 1`).
    pub generations: u32,
    /// Stop after the generation whose tolerance is `≤` this (`≥ 0`).
    pub final_tolerance: f64,
}

impl Default for PmcSettings {
    fn default() -> Self {
        Self {
            particles: 500,
            proposals: 10_000,
            generations: 5,
            final_tolerance: 0.0,
        }
    }
}

impl PmcSettings {
    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`AbcError::InvalidCount`] for fewer than 2 particles (a kernel needs a spread), more
    /// particles than proposals or zero generations; [`AbcError::InvalidParameter`] for a
    /// negative or non-finite final tolerance.
    pub fn validate(&self) -> Result<(), AbcError> {
        if self.particles < 2 || self.particles as u64 > self.proposals {
            return Err(AbcError::InvalidCount {
                name: "particles",
                value: self.particles,
            });
        }
        if self.generations == 0 {
            return Err(AbcError::InvalidCount {
                name: "generations",
                value: 0,
            });
        }
        crate::error::non_negative("final_tolerance", self.final_tolerance)?;
        Ok(())
    }

    /// Whether a run stops after `population` (its tolerance reached the final one, or it is
    /// the last generation).
    #[must_use]
    pub fn done_after(&self, population: &Population) -> bool {
        population.tolerance <= self.final_tolerance
            || population.generation.saturating_add(1) >= self.generations
    }
}

/// One generation's population: the `N` kept particles and their normalised weights.
///
/// With the `serde` feature it serializes as an object with the fields below, in this order
/// (JSON through `serde_json` round-trips every `f64` bit for bit); a population read back
/// should be checked with [`Population::validate`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Population {
    /// Generation index `g`.
    pub generation: u32,
    /// Tolerance `ε_g`: the distance of the `N`-th nearest proposal.
    pub tolerance: f64,
    /// dim θ.
    pub dim: usize,
    /// Particles, row-major (`N × dim`).
    pub particles: Vec<f64>,
    /// Normalised importance weights (length `N`).
    pub weights: Vec<f64>,
    /// Kish effective sample size of the weights.
    pub ess: f64,
    /// Proposals `M` of this generation.
    pub proposals: u64,
}

impl Population {
    /// Number of particles `N`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// `true` for no particles (never for a validated population).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Internal consistency (e.g. of a population read from a file): shapes, finite
    /// particles, finite non-negative weights summing to 1 (±1e-9) whose ESS is the stored
    /// one (relative 1e-9), at least as many proposals as particles, a tolerance `≥ 0`.
    ///
    /// # Errors
    ///
    /// [`AbcError::Empty`], [`AbcError::LengthMismatch`], [`AbcError::NonFiniteValue`],
    /// [`AbcError::InvalidParameter`] (`weights`, `ess`, `tolerance`) or
    /// [`AbcError::InvalidCount`] (`proposals`) for the first inconsistency.
    pub fn validate(&self) -> Result<(), AbcError> {
        let n = self.weights.len();
        if self.dim == 0 || n == 0 {
            return Err(AbcError::Empty { name: "population" });
        }
        crate::error::check_len(
            "particles",
            self.dim.saturating_mul(n),
            self.particles.len(),
        )?;
        if self.particles.iter().any(|v| !v.is_finite()) {
            return Err(AbcError::NonFiniteValue { name: "particles" });
        }
        if let Some(&w) = self.weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(AbcError::InvalidParameter {
                name: "weights",
                value: w,
            });
        }
        let total: f64 = self.weights.iter().sum();
        if (total - 1.0).abs() > 1e-9 {
            return Err(AbcError::InvalidParameter {
                name: "weights (sum)",
                value: total,
            });
        }
        let ess = effective_sample_size(&self.weights)?;
        if (ess - self.ess).abs() > 1e-9 * ess.max(1.0) {
            return Err(AbcError::InvalidParameter {
                name: "ess",
                value: self.ess,
            });
        }
        if self.proposals < n as u64 {
            return Err(AbcError::InvalidCount {
                name: "proposals",
                value: usize::try_from(self.proposals).unwrap_or(usize::MAX),
            });
        }
        if self.tolerance.is_nan() || self.tolerance < 0.0 {
            return Err(AbcError::InvalidParameter {
                name: "tolerance",
                value: self.tolerance,
            });
        }
        Ok(())
    }
}

/// The perturbation kernel of a population: ancestor by weight plus `N(0, 2 Σ_w)`
/// (Beaumont et al. 2009), shared with [`crate::smc::SmcAbc`].
#[derive(Clone, Debug)]
pub struct PmcKernel {
    kernel: GaussianKernel,
    generation: u32,
    dim: usize,
}

impl PmcKernel {
    /// Fits the kernel to `population` (which is validated first). A (near-)degenerate
    /// population — e.g. copies of one particle — would give a kernel of width ~1e-16 whose
    /// every proposal is its ancestor, so it is refused: each coordinate's weighted sd must
    /// be at least `1e-8 · max(|mean|, 1)`, and no coordinate (almost) a linear function of
    /// the others (Cholesky pivot² ≥ `1e-10 ·` its marginal variance).
    ///
    /// # Errors
    ///
    /// As [`Population::validate`]; [`AbcError::DegeneratePopulation`] naming the coordinate;
    /// [`AbcError::DegenerateCovariance`] if the covariance is not positive definite.
    pub fn new(population: &Population) -> Result<Self, AbcError> {
        population.validate()?;
        let d = population.dim;
        let (particles, weights) = (&population.particles, &population.weights);
        let mut mean = alloc::vec![0.0; d];
        weighted_mean(particles, d, weights, &mut mean)?;
        let mut cov = alloc::vec![0.0; d * d];
        weighted_covariance(particles, d, weights, &mean, &mut cov)?;
        for (i, &m) in mean.iter().enumerate() {
            let v = cov[i * d + i];
            if !(v.is_finite() && libm::sqrt(v.max(0.0)) >= 1e-8 * m.abs().max(1.0)) {
                return Err(AbcError::DegeneratePopulation { coordinate: i });
            }
        }
        let mut kernel = GaussianKernel::new(d);
        kernel.fit(particles, weights, KERNEL_SCALE)?;
        let l = kernel.chol();
        for i in 0..d {
            let lii = l[i * d + i];
            if lii * lii < 1e-10 * KERNEL_SCALE * cov[i * d + i] {
                return Err(AbcError::DegeneratePopulation { coordinate: i });
            }
        }
        Ok(Self {
            kernel,
            generation: population.generation,
            dim: d,
        })
    }

    /// The generation of the population the kernel was fitted to (`g − 1` for the proposals
    /// of generation `g`).
    #[must_use]
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// dim θ.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Draws a proposal inside the prior's support: kernel draws from `rng` until one lies
    /// in the support.
    ///
    /// # Errors
    ///
    /// [`AbcError::LengthMismatch`] for a prior or `theta` of another dimension,
    /// [`AbcError::SupportMissed`] after [`MAX_SUPPORT_MISSES`] misses.
    pub fn draw_in_support<P: Prior + ?Sized>(
        &self,
        prior: &P,
        rng: &mut SimStream,
        theta: &mut [f64],
    ) -> Result<(), AbcError> {
        if prior.dim() != self.dim || theta.len() != self.dim {
            return Err(AbcError::LengthMismatch {
                name: "theta",
                expected: self.dim,
                found: theta.len().min(prior.dim()),
            });
        }
        let mut z = alloc::vec![0.0; self.dim];
        for _ in 0..MAX_SUPPORT_MISSES {
            self.kernel.propose(rng, theta, &mut z);
            if prior.in_support(theta) {
                return Ok(());
            }
        }
        Err(AbcError::SupportMissed {
            tries: MAX_SUPPORT_MISSES,
        })
    }

    /// The Beaumont log-weight `ln π(θ) − ln Σ_k w_k K(θ | θ_k)` (up to a constant).
    #[must_use]
    pub fn log_weight<P: Prior + ?Sized>(&self, prior: &P, theta: &[f64]) -> f64 {
        let mut diff = alloc::vec![0.0; self.dim];
        let mut logs = Vec::new();
        self.kernel
            .log_weight(prior.ln_density(theta), theta, &mut diff, &mut logs)
    }
}

/// The central step of a generation: keeps the `particles` proposals of `pairs` nearest the
/// observation (distance `dist`; ties by row, NaN as `+∞`) and weights them — uniformly at
/// generation 0 (`kernel = None`), by `π(θ) / Σ_k w_k K(θ | θ_k)` with the kernel of the
/// previous population otherwise. The population's generation is the kernel's plus one.
///
/// # Errors
///
/// [`AbcError::InvalidCount`] unless `1 ≤ particles ≤ pairs.len()`;
/// [`AbcError::LengthMismatch`] for a kernel of another dimension;
/// [`AbcError::ZeroTotalWeight`] if every kept particle has weight 0.
pub fn select<P: Prior + ?Sized, D: Discrepancy>(
    prior: &P,
    kernel: Option<&PmcKernel>,
    pairs: &PublicPairs,
    dist: D,
    particles: usize,
) -> Result<Population, AbcError> {
    let d = pairs.theta_dim();
    if let Some(k) = kernel
        && k.dim != d
    {
        return Err(AbcError::LengthMismatch {
            name: "kernel dim",
            expected: d,
            found: k.dim,
        });
    }
    let near = nearest(pairs, dist, particles)?;
    let mut kept = Vec::with_capacity(particles * d);
    for &i in &near.indices {
        kept.extend_from_slice(pairs.theta(i));
    }
    let log_w: Vec<f64> = match kernel {
        None => alloc::vec![0.0; particles],
        Some(k) => kept
            .chunks_exact(d)
            .map(|t| k.log_weight(prior, t))
            .collect(),
    };
    let mut weights = alloc::vec![0.0; particles];
    normalize_log_weights(&log_w, &mut weights)?;
    let ess = effective_sample_size(&weights)?;
    Ok(Population {
        generation: kernel.map_or(0, |k| k.generation.saturating_add(1)),
        tolerance: near.tolerance,
        dim: d,
        particles: kept,
        weights,
        ess,
        proposals: pairs.len() as u64,
    })
}
