//! [`NoGradient`]: a prior or likelihood without gradients, for the kernels that never
//! differentiate.

use dpinfer_simulators::{BatchClipSum, ClipSum, Prior, RowGradient, RowLikelihood, SimError};
use rand_core::Rng;

use crate::model::PriorGradient;

/// The [`SimError::Model`] code [`NoGradient`]'s [`RowGradient::row_grad`] fails with
/// (`"NG"`).
pub const NO_GRADIENT: u32 = 0x4e47;

/// A prior or per-row likelihood used by a kernel that never asks for a gradient (every
/// [`super::Kernel`] but HMC and DP HMC). [`super::Run::without_gradient`] wraps the model in
/// it and refuses the gradient kernels, so the gradient methods are never reached from a
/// run; called directly they fail (likelihood: [`SimError::Model`] with code
/// [`NO_GRADIENT`], not recoverable) or write NaN (prior), which a sampler treats as a
/// rejection, never as a number.
///
/// Every other method forwards to the wrapped value, including the provided methods a model
/// may override with a fast path (`clipped_log_ratio_sum`, `clipped_log_ratio_rows`, …),
/// so wrapping never changes a number.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dpinfer_mcmc::model::{GaussianMean, GaussianPrior};
/// use dpinfer_mcmc::run::{Kernel, Run, RunSettings, Walk, WalkKind};
/// use rand::rngs::ChaCha20Rng;
///
/// let lik = GaussianMean::new(1, &[0.3, 1.2, 0.9], 1.0)?;
/// let prior = GaussianPrior::new(1, 0.0, 10.0)?;
/// let kernel = Kernel::Barker(Walk::new(WalkKind::Gaussian));
/// let settings = RunSettings { iterations: 200, ..RunSettings::default() };
/// let run = Run::without_gradient(prior, lik, &[0.0], &kernel, &settings, Vec::<ChaCha20Rng>::new())?;
/// assert_eq!(run.run(&())?.traces[0].len(), 100);
/// # }
/// # Ok::<(), dpinfer_mcmc::McmcError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoGradient<T>(pub T);

impl<P: Prior> Prior for NoGradient<P> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        self.0.sample(rng, out)
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        self.0.ln_density(theta)
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        self.0.in_support(theta)
    }
}

impl<P: Prior> PriorGradient for NoGradient<P> {
    /// Writes NaN: no gradient (a Hamiltonian trajectory through it is rejected).
    fn grad_ln_density(&self, _theta: &[f64], out: &mut [f64]) {
        out.fill(f64::NAN);
    }
}

impl<L: RowLikelihood> RowLikelihood for NoGradient<L> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn n_rows(&self) -> usize {
        self.0.n_rows()
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        self.0.row_log_lik(theta, first, out)
    }
    fn row_log_ratio(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.0.row_log_ratio(theta, theta_new, first, out)
    }
    fn clipped_log_ratio_sum(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        count: usize,
        b: f64,
    ) -> Result<ClipSum, SimError> {
        self.0
            .clipped_log_ratio_sum(theta, theta_new, first, count, b)
    }
    fn clipped_log_ratio_rows(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        rows: &[usize],
        b: f64,
    ) -> Result<BatchClipSum, SimError> {
        self.0.clipped_log_ratio_rows(theta, theta_new, rows, b)
    }
    fn log_lik(&self, theta: &[f64]) -> Result<f64, SimError> {
        self.0.log_lik(theta)
    }
}

impl<L: RowLikelihood> RowGradient for NoGradient<L> {
    /// Fails: [`SimError::Model`] with code [`NO_GRADIENT`], not recoverable.
    fn row_grad(&self, _theta: &[f64], _first: usize, _out: &mut [f64]) -> Result<(), SimError> {
        Err(SimError::Model {
            code: NO_GRADIENT,
            recoverable: false,
        })
    }
}
