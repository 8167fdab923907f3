//! The Gaussian perturbation kernel of population Monte Carlo ABC (Beaumont, Cornuet, Marin &
//! Robert 2009, Biometrika 96(4), §3): an ancestor drawn by weight from the previous
//! population, plus `N(0, scale · Σ_w)` with `Σ_w` the weighted particle covariance
//! (Beaumont et al. use `scale = 2`). Shared by the adaptive SMC-ABC ([`crate::smc`]) and the
//! fixed-proposal PMC generations ([`crate::pmc`]), so both draw and weight the same way.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::error::AbcError;
use crate::rng::{standard_normal, u01_open};
use crate::weights::{cholesky_in_place, mahalanobis_sq, weighted_covariance, weighted_mean};

/// A fitted kernel: the population it perturbs, the Cholesky factor `L` of `scale · Σ_w`,
/// the whitened particles `L⁻¹ θ_j` and the cumulative weights.
#[derive(Clone, Debug)]
pub(crate) struct GaussianKernel {
    dim: usize,
    particles: Vec<f64>,
    weights: Vec<f64>,
    cum: Vec<f64>,
    chol: Vec<f64>,
    half_log_det: f64,
    white: Vec<f64>,
}

impl GaussianKernel {
    /// An unfitted kernel for dimension `dim`.
    pub(crate) fn new(dim: usize) -> Self {
        Self {
            dim,
            particles: Vec::new(),
            weights: Vec::new(),
            cum: Vec::new(),
            chol: alloc::vec![0.0; dim * dim],
            half_log_det: 0.0,
            white: Vec::new(),
        }
    }

    /// The lower Cholesky factor `L` of the kernel covariance, row-major.
    pub(crate) fn chol(&self) -> &[f64] {
        &self.chol
    }

    /// Fits the kernel to a population (normalised `weights`, `particles` row-major): the
    /// covariance `scale · Σ_w`, jittered on the diagonal (relative `1e-12`, then ×100 up to
    /// 8 times) if the population has collapsed in some direction.
    ///
    /// # Errors
    ///
    /// Shape errors as [`weighted_mean`]; [`AbcError::DegenerateCovariance`] if no jitter
    /// makes the covariance positive definite.
    pub(crate) fn fit(
        &mut self,
        particles: &[f64],
        weights: &[f64],
        scale: f64,
    ) -> Result<(), AbcError> {
        let dim = self.dim;
        let mut mean = alloc::vec![0.0; dim];
        weighted_mean(particles, dim, weights, &mut mean)?;
        weighted_covariance(particles, dim, weights, &mean, &mut self.chol)?;
        for c in &mut self.chol {
            *c *= scale;
        }
        self.particles.clear();
        self.particles.extend_from_slice(particles);
        self.weights.clear();
        self.weights.extend_from_slice(weights);
        let mut jitter = 0.0;
        let base: Vec<f64> = self.chol.clone();
        let mut fitted = false;
        for _ in 0..8 {
            self.chol.copy_from_slice(&base);
            for i in 0..dim {
                let d = base[i * dim + i];
                self.chol[i * dim + i] = d + jitter * d.abs().max(1e-300) + jitter;
            }
            if let Ok(h) = cholesky_in_place(&mut self.chol, dim) {
                self.half_log_det = h;
                fitted = true;
                break;
            }
            jitter = if jitter == 0.0 { 1e-12 } else { jitter * 100.0 };
        }
        if !fitted {
            return Err(AbcError::DegenerateCovariance);
        }
        self.whiten();
        self.cum.clear();
        let mut c = 0.0;
        for &w in &self.weights {
            c += w;
            self.cum.push(c);
        }
        if let Some(last) = self.cum.last_mut() {
            *last = f64::INFINITY; // guards rounding: every u ∈ (0,1) finds an index
        }
        Ok(())
    }

    /// Whitens the population with the Cholesky factor (`z_j = L⁻¹ θ_j`), so that each kernel
    /// evaluation in [`Self::log_mixture`] is a plain squared distance.
    fn whiten(&mut self) {
        let dim = self.dim;
        let n = self.weights.len();
        let mut scratch = alloc::vec![0.0; dim];
        self.white.clear();
        self.white.resize(n * dim, 0.0);
        for j in 0..n {
            let _ = mahalanobis_sq(
                &self.chol,
                dim,
                &self.particles[j * dim..(j + 1) * dim],
                &mut scratch,
            );
            self.white[j * dim..(j + 1) * dim].copy_from_slice(&scratch);
        }
    }

    /// Draws a proposal into `theta` (with `z`, length `dim`, as scratch): an ancestor by
    /// weight (one open uniform), then `θ_j + L z` with `z` standard normal. The caller checks
    /// the prior support.
    pub(crate) fn propose<R: Rng + ?Sized>(&self, rng: &mut R, theta: &mut [f64], z: &mut [f64]) {
        let dim = self.dim;
        let u = u01_open(rng);
        let n = self.cum.len();
        let j = self.cum.partition_point(|&c| c < u).min(n - 1);
        let base = &self.particles[j * dim..(j + 1) * dim];
        for zi in z.iter_mut() {
            *zi = standard_normal(rng);
        }
        for (i, &b) in base.iter().enumerate() {
            let row = &self.chol[i * dim..=i * dim + i];
            let s: f64 = row.iter().zip(z.iter()).map(|(l, zk)| l * zk).sum();
            theta[i] = b + s;
        }
    }

    /// `ln Σ_j W_j K(θ | θ_j)` up to the Gaussian's `(2π)^{d/2}` (which cancels on
    /// normalisation); `diff` (length `dim`) and `logs` are scratch. Linear-space sum on the
    /// whitened particles; exact log-sum-exp fallback when every kernel underflows.
    pub(crate) fn log_mixture(&self, theta: &[f64], diff: &mut [f64], logs: &mut Vec<f64>) -> f64 {
        let dim = self.dim;
        let _ = mahalanobis_sq(&self.chol, dim, theta, diff);
        let z = &*diff;
        let mut s = 0.0;
        for (wj, zj) in self.weights.iter().zip(self.white.chunks_exact(dim)) {
            let mut q = 0.0;
            for (a, b) in z.iter().zip(zj) {
                let d = a - b;
                q += d * d;
            }
            s += wj * libm::exp(-0.5 * q);
        }
        if s.is_finite() && s > 1e-280 {
            return libm::log(s) - self.half_log_det;
        }
        // Fallback: every kernel underflowed; redo in log space with the maximum shifted out.
        let mut max = f64::NEG_INFINITY;
        logs.clear();
        for (wj, zj) in self.weights.iter().zip(self.white.chunks_exact(dim)) {
            let mut q = 0.0;
            for (a, b) in z.iter().zip(zj) {
                let d = a - b;
                q += d * d;
            }
            let l = libm::log(*wj) - 0.5 * q;
            max = max.max(l);
            logs.push(l);
        }
        if max == f64::NEG_INFINITY || max.is_nan() {
            return f64::NEG_INFINITY;
        }
        let mut t = 0.0;
        for &l in logs.iter() {
            t += libm::exp(l - max);
        }
        max + libm::log(t) - self.half_log_det
    }

    /// The Beaumont et al. (2009, §3) importance log-weight `ln π(θ) − ln Σ_j W_j K(θ | θ_j)`
    /// of a proposal: `−∞` outside the prior support or for a NaN mixture.
    pub(crate) fn log_weight(
        &self,
        ln_prior: f64,
        theta: &[f64],
        diff: &mut [f64],
        logs: &mut Vec<f64>,
    ) -> f64 {
        let lm = self.log_mixture(theta, diff, logs);
        if ln_prior == f64::NEG_INFINITY || lm.is_nan() {
            f64::NEG_INFINITY
        } else {
            ln_prior - lm
        }
    }
}
