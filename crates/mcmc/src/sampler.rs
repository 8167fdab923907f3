//! The step-able sampler interface, observers and a trace collector.

use alloc::vec::Vec;
use rand_core::Rng;

use crate::McmcError;
use crate::budget::Budget;
use crate::chains::Releases;

/// What one iteration did. Borrowed from the sampler; copy what you need.
///
/// # Privacy
///
/// `position`, `accepted`, `noise_sd` and the counters of *evaluated* rows are functions of the
/// noisy releases and public values (post-processing). The **clip counts**
/// (`ratios_clipped`, `gradients_clipped`) are computed from the private data and are **not**
/// privatised: they are diagnostics for the data owner (thesis §7.2) and must not be
/// published with the chain.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// The chain's position after this iteration.
    pub position: &'a [f64],
    /// 1-based iteration counter.
    pub iteration: u64,
    /// Whether the proposal was accepted.
    pub accepted: bool,
    /// Per-row log-likelihood ratios evaluated in the acceptance test.
    pub ratios_evaluated: usize,
    /// How many of them were clipped (or non-finite and mapped to the bound).
    pub ratios_clipped: usize,
    /// Per-row gradients evaluated (Hamiltonian samplers).
    pub gradients_evaluated: usize,
    /// How many of them were norm-clipped.
    pub gradients_clipped: usize,
    /// Standard deviation of the privacy noise added to the acceptance statistic
    /// (0 for the exact kernels).
    pub noise_sd: f64,
    /// Iterations the privacy budget still allows (`None` for the exact kernels).
    pub remaining: Option<u64>,
}

/// What a step did, apart from where the chain is (see [`Step`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub(crate) accepted: bool,
    /// Ratios evaluated / clipped.
    pub(crate) ratios: (usize, usize),
    /// Gradients evaluated / clipped.
    pub(crate) gradients: (usize, usize),
    pub(crate) noise_sd: f64,
}

impl Counts {
    /// A random-walk step (no gradients): `accepted`, ratios evaluated / clipped, noise sd.
    pub(crate) fn walk(accepted: bool, ratios: (usize, usize), noise_sd: f64) -> Self {
        Self {
            accepted,
            ratios,
            noise_sd,
            ..Self::default()
        }
    }
}

/// The iteration counter, the privacy budget (`None` for exact kernels) and the release
/// audit every sampler embeds: it refuses a step beyond the budget and assembles [`Step`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Meter {
    pub(crate) iteration: u64,
    pub(crate) budget: Option<Budget>,
    pub(crate) released: Releases,
}

impl Meter {
    pub(crate) fn new(budget: Option<Budget>) -> Self {
        Self {
            budget,
            ..Self::default()
        }
    }

    /// Starts an iteration: [`McmcError::BudgetExhausted`] once the budget is used up.
    pub(crate) fn begin(&mut self) -> Result<(), McmcError> {
        if let Some(b) = &self.budget {
            b.check(self.iteration)?;
        }
        self.iteration += 1;
        Ok(())
    }

    /// The step record of the iteration just run.
    pub(crate) fn step<'a>(&self, position: &'a [f64], c: Counts) -> Step<'a> {
        Step {
            position,
            iteration: self.iteration,
            accepted: c.accepted,
            ratios_evaluated: c.ratios.0,
            ratios_clipped: c.ratios.1,
            gradients_evaluated: c.gradients.0,
            gradients_clipped: c.gradients.1,
            noise_sd: c.noise_sd,
            remaining: self.budget.map(|b| b.max_iterations() - self.iteration),
        }
    }

    /// (ε, δ) spent by the iterations run so far (`None` for exact kernels).
    pub(crate) fn spent(&self) -> Result<Option<(f64, f64)>, McmcError> {
        self.budget.map(|b| b.spent(self.iteration, 1)).transpose()
    }
}

/// A Markov chain the caller steps (ARCHITECTURE: samplers are state machines).
pub trait MarkovChain {
    /// Parameter dimension.
    fn dim(&self) -> usize;
    /// Current position.
    fn position(&self) -> &[f64];
    /// Runs one iteration, drawing public randomness (proposals, momenta, batches) from `rng`.
    ///
    /// # Errors
    ///
    /// [`McmcError::BudgetExhausted`] once a private sampler has used its budget.
    fn step<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<Step<'_>, McmcError>;

    /// Runs `iterations` steps, handing each to `observer`.
    ///
    /// # Errors
    ///
    /// The first error of [`MarkovChain::step`]; steps before it have happened.
    fn run<R: Rng + ?Sized, O: Observer + ?Sized>(
        &mut self,
        iterations: u64,
        rng: &mut R,
        observer: &mut O,
    ) -> Result<(), McmcError> {
        for _ in 0..iterations {
            let s = self.step(rng)?;
            observer.observe(&s);
        }
        Ok(())
    }
}

/// Receives every step. All methods have no-op defaults; `()` observes nothing.
pub trait Observer {
    /// Called after every iteration.
    fn observe(&mut self, step: &Step<'_>) {
        let _ = step;
    }
}

impl Observer for () {}

/// Records draws (row-major, `iterations × d`) and running counters.
///
/// # Privacy
///
/// The clip fractions are **not** differentially private (see [`Step`]); everything else is.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Row-major draws.
    pub draws: Vec<f64>,
    /// Dimension (set by the first step).
    pub dim: usize,
    /// Accepted proposals.
    pub accepted: u64,
    /// Iterations recorded.
    pub iterations: u64,
    /// Ratios evaluated / clipped.
    pub ratios: (u64, u64),
    /// Gradients evaluated / clipped.
    pub gradients: (u64, u64),
    /// Noise standard deviation of every step.
    pub noise_sd: Vec<f64>,
    /// Draws to skip before recording (burn-in).
    pub burn_in: u64,
}

impl Trace {
    /// An empty trace that discards the first `burn_in` draws (counters include them).
    #[must_use]
    pub fn with_burn_in(burn_in: u64) -> Self {
        Self {
            burn_in,
            ..Self::default()
        }
    }
    /// Acceptance rate over all observed iterations.
    #[must_use]
    pub fn acceptance_rate(&self) -> f64 {
        ratio(self.accepted, self.iterations)
    }
    /// Fraction of per-row log-likelihood ratios that were clipped.
    #[must_use]
    pub fn clip_fraction(&self) -> f64 {
        ratio(self.ratios.1, self.ratios.0)
    }
    /// Fraction of per-row gradients that were clipped.
    #[must_use]
    pub fn gradient_clip_fraction(&self) -> f64 {
        ratio(self.gradients.1, self.gradients.0)
    }
    /// Number of recorded draws.
    #[must_use]
    pub fn len(&self) -> usize {
        self.draws.len().checked_div(self.dim).unwrap_or(0)
    }
    /// No draws recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.draws.is_empty()
    }
    /// Coordinate `j` of every recorded draw.
    #[must_use]
    pub fn coordinate(&self, j: usize) -> Vec<f64> {
        if j >= self.dim {
            return Vec::new();
        }
        self.draws
            .iter()
            .skip(j)
            .step_by(self.dim)
            .copied()
            .collect()
    }
}

#[allow(clippy::cast_precision_loss)]
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Observer for Trace {
    fn observe(&mut self, step: &Step<'_>) {
        self.dim = step.position.len();
        self.iterations += 1;
        self.accepted += u64::from(step.accepted);
        self.ratios.0 += step.ratios_evaluated as u64;
        self.ratios.1 += step.ratios_clipped as u64;
        self.gradients.0 += step.gradients_evaluated as u64;
        self.gradients.1 += step.gradients_clipped as u64;
        self.noise_sd.push(step.noise_sd);
        if self.iterations > self.burn_in {
            self.draws.extend_from_slice(step.position);
        }
    }
}
