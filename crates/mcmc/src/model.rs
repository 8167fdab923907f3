//! Model pieces the samplers need beyond `dpinfer-simulators`' traits, and the conjugate
//! Gaussian-mean toy used to test every sampler against an exact posterior.
//!
//! Data enter the samplers only through [`RowLikelihood`] (per-row log-likelihoods, clipped
//! by the samplers) and [`RowGradient`]; the prior through [`Prior`] and, for Hamiltonian
//! samplers, [`PriorGradient`].

use dpinfer_simulators::{Prior, SimError};
#[cfg(feature = "alloc")]
use dpinfer_simulators::{RowGradient, RowLikelihood};
use rand_core::Rng;

/// Gradient of a prior's log density, for Hamiltonian samplers.
///
/// FOLD-LATER: belongs next to `dpinfer_simulators::Prior`; local until the simulators crate
/// offers prior gradients.
pub trait PriorGradient: Prior {
    /// Writes `∇ ln p(θ)` into `out` (length `dim`).
    fn grad_ln_density(&self, theta: &[f64], out: &mut [f64]);
}

/// Independent Gaussian prior `θ_j ~ N(mean, sd²)` with gradient.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaussianPrior {
    dim: usize,
    mean: f64,
    precision: f64,
    sd: f64,
}

impl GaussianPrior {
    /// `dim` i.i.d. `N(mean, sd²)` coordinates.
    ///
    /// # Errors
    ///
    /// [`crate::McmcError::InvalidSize`] for `dim == 0`; [`crate::McmcError::InvalidParameter`]
    /// for a non-finite mean or a non-positive / non-finite sd.
    pub fn new(dim: usize, mean: f64, sd: f64) -> Result<Self, crate::McmcError> {
        if dim == 0 {
            return Err(crate::McmcError::InvalidSize {
                name: "dim",
                value: 0,
            });
        }
        if !mean.is_finite() {
            return Err(crate::McmcError::param("mean", mean));
        }
        let sd = crate::error::positive("sd", sd)?;
        Ok(Self {
            dim,
            mean,
            precision: 1.0 / (sd * sd),
            sd,
        })
    }
}

impl Prior for GaussianPrior {
    fn dim(&self) -> usize {
        self.dim
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        if out.len() != self.dim {
            return Err(SimError::DimensionMismatch {
                what: "out",
                expected: self.dim,
                got: out.len(),
            });
        }
        for o in out {
            *o = self.mean + self.sd * crate::rng::std_normal(rng);
        }
        Ok(())
    }
    /// Unnormalised: `−½ Σ (θ_j − mean)²/sd²`.
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if theta.len() != self.dim || theta.iter().any(|t| t.is_nan()) {
            return f64::NEG_INFINITY;
        }
        -0.5 * self.precision
            * theta
                .iter()
                .map(|t| (t - self.mean) * (t - self.mean))
                .sum::<f64>()
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        theta.len() == self.dim && theta.iter().all(|x| x.is_finite())
    }
}

impl PriorGradient for GaussianPrior {
    fn grad_ln_density(&self, theta: &[f64], out: &mut [f64]) {
        for (o, t) in out.iter_mut().zip(theta) {
            *o = -self.precision * (t - self.mean);
        }
    }
}

/// Conjugate Gaussian-mean toy likelihood: `x_ij ~ N(θ_j, s²)` independently, data stored
/// column-wise. With a [`GaussianPrior`] its (tempered) posterior is Gaussian in closed form
/// ([`GaussianMean::posterior`]), which is how every sampler is tested.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct GaussianMean {
    dim: usize,
    n: usize,
    /// Column-major data: `cols[j * n + i]`.
    cols: alloc::vec::Vec<f64>,
    noise_precision: f64,
}

#[cfg(feature = "alloc")]
impl GaussianMean {
    /// Builds the model from row-major data (`n × dim`).
    ///
    /// # Errors
    ///
    /// [`crate::McmcError::InvalidSize`] if `dim == 0` or the data are empty or not a
    /// multiple of `dim`; [`crate::McmcError::InvalidParameter`] for a bad `noise_sd`.
    pub fn new(dim: usize, rows: &[f64], noise_sd: f64) -> Result<Self, crate::McmcError> {
        if dim == 0 {
            return Err(crate::McmcError::InvalidSize {
                name: "dim",
                value: dim,
            });
        }
        if rows.is_empty() || !rows.len().is_multiple_of(dim) {
            return Err(crate::McmcError::InvalidSize {
                name: "data length",
                value: rows.len(),
            });
        }
        let s = crate::error::positive("noise_sd", noise_sd)?;
        let n = rows.len() / dim;
        let mut cols = alloc::vec![0.0; rows.len()];
        for i in 0..n {
            for j in 0..dim {
                cols[j * n + i] = rows[i * dim + j];
            }
        }
        Ok(Self {
            dim,
            n,
            cols,
            noise_precision: 1.0 / (s * s),
        })
    }

    /// Exact posterior under prior `N(prior_mean, prior_sd²)` per coordinate with the
    /// likelihood tempered by `temperature`: `(mean, variance)` per coordinate, precision
    /// `T n / s² + 1 / s₀²`.
    #[must_use]
    pub fn posterior(
        &self,
        prior_mean: f64,
        prior_sd: f64,
        temperature: f64,
    ) -> alloc::vec::Vec<(f64, f64)> {
        #[allow(clippy::cast_precision_loss)]
        let nf = self.n as f64;
        let p0 = 1.0 / (prior_sd * prior_sd);
        (0..self.dim)
            .map(|j| {
                let sum: f64 = self.cols[j * self.n..(j + 1) * self.n].iter().sum();
                let prec = temperature * nf * self.noise_precision + p0;
                let mean = (temperature * self.noise_precision * sum + p0 * prior_mean) / prec;
                (mean, 1.0 / prec)
            })
            .collect()
    }

    fn check(&self, theta: &[f64], first: usize, count: usize) -> Result<(), SimError> {
        if theta.len() != self.dim {
            return Err(SimError::DimensionMismatch {
                what: "theta",
                expected: self.dim,
                got: theta.len(),
            });
        }
        match first.checked_add(count) {
            Some(e) if e <= self.n => Ok(()),
            _ => Err(SimError::DimensionMismatch {
                what: "rows",
                expected: self.n,
                got: first.saturating_add(count),
            }),
        }
    }
}

#[cfg(feature = "alloc")]
impl RowLikelihood for GaussianMean {
    fn dim(&self) -> usize {
        self.dim
    }
    fn n_rows(&self) -> usize {
        self.n
    }
    fn row_log_lik(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        self.check(theta, first, out.len())?;
        out.fill(0.0);
        for (j, &t) in theta.iter().enumerate() {
            let col = &self.cols[j * self.n + first..j * self.n + first + out.len()];
            for (o, &x) in out.iter_mut().zip(col) {
                *o -= 0.5 * self.noise_precision * (x - t) * (x - t);
            }
        }
        Ok(())
    }
    fn row_log_ratio(
        &self,
        theta: &[f64],
        theta_new: &[f64],
        first: usize,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        self.check(theta, first, out.len())?;
        self.check(theta_new, first, out.len())?;
        out.fill(0.0);
        for j in 0..self.dim {
            // ½ τ (θ'−θ)(2x − θ − θ')
            let d = 0.5 * self.noise_precision * (theta_new[j] - theta[j]);
            let s = theta[j] + theta_new[j];
            let col = &self.cols[j * self.n + first..j * self.n + first + out.len()];
            for (o, &x) in out.iter_mut().zip(col) {
                *o += d * (2.0 * x - s);
            }
        }
        Ok(())
    }
}

#[cfg(feature = "alloc")]
impl RowGradient for GaussianMean {
    fn row_grad(&self, theta: &[f64], first: usize, out: &mut [f64]) -> Result<(), SimError> {
        if !out.len().is_multiple_of(self.dim) {
            return Err(SimError::DimensionMismatch {
                what: "out",
                expected: self.dim,
                got: out.len(),
            });
        }
        let rows = out.len() / self.dim;
        self.check(theta, first, rows)?;
        for r in 0..rows {
            for j in 0..self.dim {
                out[r * self.dim + j] =
                    self.noise_precision * (self.cols[j * self.n + first + r] - theta[j]);
            }
        }
        Ok(())
    }
}

/// Largest clip bound the simulators' fused passes accept; the exact kernels use it as an
/// inactive bound.
#[cfg(feature = "alloc")]
pub(crate) const MAX_CLIP: f64 = 1e250;

/// A per-row clip bound `L‖θ'−θ‖` usable by the fused passes: `None` when it is not a normal
/// positive number ≤ [`MAX_CLIP`] (a decision on public values only; the proposal is then
/// rejected without touching the data).
#[cfg(feature = "alloc")]
#[must_use]
pub(crate) fn usable_bound(b: f64) -> Option<f64> {
    (b.is_normal() && b > 0.0 && b <= MAX_CLIP).then_some(b)
}

/// Σ over rows `first..first+count` of the log ratios for the exact kernels: the model's fused
/// pass with bound [`MAX_CLIP`] = 1e250, so finite values are in effect never clipped (NaN
/// rows count 0 and ±∞ rows ±1e250, the simulators crate's clip semantics).
#[cfg(feature = "alloc")]
pub(crate) fn log_ratio_sum<L: RowLikelihood + ?Sized>(
    lik: &L,
    theta: &[f64],
    theta_new: &[f64],
    first: usize,
    count: usize,
) -> Result<f64, SimError> {
    Ok(lik
        .clipped_log_ratio_sum(theta, theta_new, first, count, MAX_CLIP)?
        .sum)
}

/// The banana prior `Ban(0, σ₀²I, a, b, m)` of `dpinfer-simulators` with its gradient
/// (thesis Definition 8, Theorem 5), for HMC on the banana model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BananaPriorGrad {
    prior: dpinfer_simulators::models::banana::BananaPrior,
    a: f64,
    b: f64,
    m: f64,
    tau0: f64,
}

impl BananaPriorGrad {
    /// Wraps the prior of `model`.
    #[must_use]
    pub fn new(model: &dpinfer_simulators::models::banana::Banana) -> Self {
        let s = model.settings();
        Self {
            prior: model.prior(),
            a: s.a,
            b: s.b,
            m: s.m,
            tau0: 1.0 / s.sigma0_sq,
        }
    }
}

impl Prior for BananaPriorGrad {
    fn dim(&self) -> usize {
        self.prior.dim()
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        self.prior.sample(rng, out)
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        self.prior.ln_density(theta)
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        self.prior.in_support(theta)
    }
}

impl PriorGradient for BananaPriorGrad {
    /// `∇ −½τ₀(θ₁² + u² + Σ_{i≥3} θ_i²)`, `u = θ₂ + a(θ₁ − m)² + b`.
    fn grad_ln_density(&self, theta: &[f64], out: &mut [f64]) {
        if theta.len() < 2 || out.len() != theta.len() {
            out.fill(0.0);
            return;
        }
        let d1 = theta[0] - self.m;
        let u = theta[1] + self.a * d1 * d1 + self.b;
        out[0] = -self.tau0 * (theta[0] + 2.0 * self.a * d1 * u);
        out[1] = -self.tau0 * u;
        for (o, t) in out.iter_mut().zip(theta).skip(2) {
            *o = -self.tau0 * t;
        }
    }
}
