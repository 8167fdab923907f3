//! Gaussian mean toy with a conjugate normal prior: the one model with an exact posterior for
//! any n, used to test every sampler.
//!
//! Model: μ ~ N(μ₀, τ₀²), x_1..x_n | μ ~ i.i.d. N(μ, σ²) with σ known. Posterior (standard
//! conjugate result, e.g. Gelman et al., *Bayesian Data Analysis*, 3rd ed., §2.5):
//! 1/τ_n² = 1/τ₀² + n/σ², μ_n = τ_n² (μ₀/τ₀² + Σx/σ²).

use crate::dist;
use crate::error::{SimError, check_len, finite, positive};
use crate::likelihood::{ClipSum, RowGradient, RowLikelihood, check_range};
use crate::prior::{LN_SQRT_2PI, Normal};
use crate::simulator::{IncrementalSimulator, Simulator};
use crate::stream::StreamVersion;
use rand_core::Rng;

/// The data model x_i ~ N(μ, σ²), i = 1..n, θ = (μ). Output: the n raw draws; one observation
/// per incremental block.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct GaussianMean {
    n: usize,
    sigma: f64,
    prior: Normal,
    version: StreamVersion,
}

impl GaussianMean {
    /// n observations with known noise sd `sigma`, prior μ ~ N(`prior_mean`, `prior_sd`²).
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for `n == 0`; [`SimError::InvalidParameter`] for non-finite or
    /// non-positive `sigma`/`prior_sd` or a non-finite `prior_mean`.
    pub fn new(n: usize, sigma: f64, prior_mean: f64, prior_sd: f64) -> Result<Self, SimError> {
        if n == 0 {
            return Err(SimError::InvalidSize {
                name: "n",
                value: 0,
            });
        }
        Ok(Self {
            n,
            sigma: positive("sigma", sigma)?,
            prior: Normal::new(prior_mean, prior_sd)?,
            version: StreamVersion::V1,
        })
    }

    /// The prior N(μ₀, τ₀²) (implements [`crate::Prior`]).
    #[must_use]
    pub const fn prior(&self) -> Normal {
        self.prior
    }

    /// Noise sd σ.
    #[must_use]
    pub const fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Exact posterior N(μ_n, τ_n²) of μ given `count` observations with sum `sum`.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for a non-finite `sum`.
    pub fn posterior(&self, sum: f64, count: usize) -> Result<Normal, SimError> {
        let sum = finite("sum", sum)?;
        let t0 = 1.0 / (self.prior.sd() * self.prior.sd());
        #[allow(clippy::cast_precision_loss)]
        let prec = t0 + count as f64 / (self.sigma * self.sigma);
        let var = 1.0 / prec;
        let mean = var * (self.prior.mean() * t0 + sum / (self.sigma * self.sigma));
        Normal::new(mean, libm::sqrt(var))
    }

    /// Row likelihood over borrowed data `x` (one column).
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for empty data.
    pub fn likelihood<'a>(&self, x: &'a [f64]) -> Result<GaussianMeanData<'a>, SimError> {
        if x.is_empty() {
            return Err(SimError::InvalidSize {
                name: "n_rows",
                value: 0,
            });
        }
        Ok(GaussianMeanData {
            x,
            sigma: self.sigma,
        })
    }
}

stream_versioned! {
    /// Only the observation noise is versioned; the prior's draws are the same in every version.
    ///
    /// ```
    /// use dpinfer_simulators::models::gaussian::GaussianMean;
    /// use dpinfer_simulators::{SimStream, Simulator, StreamVersion};
    /// let m = GaussianMean::new(100, 1.0, 0.0, 10.0)?.with_stream_version(StreamVersion::V2);
    /// let mut y = [0.0; 100];
    /// m.simulate(&[1.5], &mut SimStream::new(42, 0), &mut y)?;
    /// # Ok::<(), dpinfer_simulators::SimError>(())
    /// ```
    impl[] GaussianMean
}

impl Simulator for GaussianMean {
    fn param_dim(&self) -> usize {
        1
    }
    fn output_dim(&self) -> usize {
        self.n
    }
    fn simulate<R: Rng + ?Sized>(
        &self,
        theta: &[f64],
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        check_len("out", self.n, out.len())?;
        let mu = IncrementalSimulator::begin(self, theta)?.mu;
        match self.version {
            StreamVersion::V1 => {
                for y in out.iter_mut() {
                    *y = mu + self.sigma * dist::std_normal(rng);
                }
            }
            StreamVersion::V2 => {
                for y in out.iter_mut() {
                    *y = mu + self.sigma * dist::ziggurat_normal(rng);
                }
            }
        }
        if out.iter().any(|x| !x.is_finite()) {
            return Err(SimError::Degenerate {
                what: "gaussian data overflow",
            });
        }
        Ok(())
    }
}

/// Run state of [`GaussianMean`]: (μ, observations emitted).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct GaussianRun {
    mu: f64,
    done: usize,
}

impl IncrementalSimulator for GaussianMean {
    type Run = GaussianRun;
    fn n_blocks(&self) -> usize {
        self.n
    }
    fn block_len(&self) -> usize {
        1
    }
    fn begin(&self, theta: &[f64]) -> Result<GaussianRun, SimError> {
        check_len("theta", 1, theta.len())?;
        if !theta[0].is_finite() {
            return Err(SimError::OutsideSupport { index: 0 });
        }
        Ok(GaussianRun {
            mu: theta[0],
            done: 0,
        })
    }
    fn next_block<R: Rng + ?Sized>(
        &self,
        run: &mut GaussianRun,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        super::one_value_block(&mut run.done, self.n, out, |_| {
            let y = run.mu + self.sigma * self.version.std_normal(rng);
            if !y.is_finite() {
                return Err(SimError::Degenerate {
                    what: "gaussian data overflow",
                });
            }
            Ok(y)
        })
    }
}

/// Borrowed data for the Gaussian mean likelihood: ℓ_j(μ) = ln N(x_j; μ, σ²).
///
/// # Privacy
/// Holds private data; errors depend only on θ/buffer lengths, never on values.
#[derive(Copy, Clone, Debug)]
pub struct GaussianMeanData<'a> {
    x: &'a [f64],
    sigma: f64,
}

impl RowLikelihood for GaussianMeanData<'_> {
    fn dim(&self) -> usize {
        1
    }
    fn n_rows(&self) -> usize {
        self.x.len()
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        crate::error::finite_theta_of(1, theta)?;
        check_range(first, out.len(), self.x.len())?;
        let c = -libm::log(self.sigma) - LN_SQRT_2PI;
        let inv = 1.0 / self.sigma;
        for (o, &x) in out.iter_mut().zip(&self.x[first..]) {
            let z = (x - theta[0]) * inv;
            *o = c - 0.5 * z * z;
        }
        Ok(())
    }
    /// r_j = (μ′ − μ)/σ² · x_j − (μ′² − μ²)/(2σ²): linear in x_j, one pass.
    fn clipped_log_ratio_sum(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        count: usize,
        b: f64,
    ) -> Result<ClipSum, SimError> {
        crate::error::finite_theta_pair(1, theta, theta_new)?;
        check_range(first, count, self.x.len())?;
        let s2 = self.sigma * self.sigma;
        let alpha = (theta_new[0] - theta[0]) / s2;
        let c = -(theta_new[0] * theta_new[0] - theta[0] * theta[0]) / (2.0 * s2);
        crate::likelihood::affine_clip_sum(&[&self.x[first..first + count]], &[alpha], c, b)
    }
}

impl RowGradient for GaussianMeanData<'_> {
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        crate::error::finite_theta_of(1, theta)?;
        check_range(first, out.len(), self.x.len())?;
        let s2 = self.sigma * self.sigma;
        for (o, &x) in out.iter_mut().zip(&self.x[first..]) {
            *o = (x - theta[0]) / s2;
        }
        Ok(())
    }
}
