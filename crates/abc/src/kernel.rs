//! The Gaussian perturbation kernel of population Monte Carlo ABC (Beaumont, Cornuet, Marin &
//! Robert 2009, Biometrika 96(4), §3): an ancestor drawn by weight from the previous
//! population, plus `N(0, scale · Σ_w)` with `Σ_w` the weighted particle covariance
//! (Beaumont et al. use `scale = 2`). Shared by the adaptive SMC-ABC ([`crate::smc`]) and the
//! fixed-proposal PMC generations ([`crate::pmc`]), so both draw and weight the same way.
//!
//! The same kernel also holds the **optimal local covariance matrix** (OLCM) kernel of
//! Filippi, Barnes, Cornebise & Stumpf (2013, *Stat. Appl. Genet. Mol. Biol.* 12(1), §4.2):
//! particle `j` gets its own covariance
//! `Σ_j = Σ_k ω̃_k (θ̃_k − θ_j)(θ̃_k − θ_j)ᵀ`, the weighted spread around `θ_j` of the
//! particles `θ̃_k` that would already be accepted at the new tolerance
//! ([`GaussianKernel::fit_local`]); proposals and the Beaumont weights then use the mixture
//! `Σ_j W_j N(θ; θ_j, Σ_j)` with each particle's own covariance.

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
    /// OLCM: the Cholesky factors of the per-particle covariances (`n × dim²`, row-major);
    /// empty for the shared-covariance kernel.
    local_chol: Vec<f64>,
    /// OLCM: `ln det(Σ_j) / 2` per particle.
    local_hld: Vec<f64>,
}

/// The lower Cholesky factor of `base` (row-major `dim × dim`) into `chol`, jittered on the
/// diagonal (relative `1e-12`, then ×100 up to 8 times) if it is not positive definite.
/// Returns `ln det / 2`.
fn factor_jittered(base: &[f64], dim: usize, chol: &mut [f64]) -> Result<f64, AbcError> {
    let mut jitter = 0.0;
    for _ in 0..8 {
        chol.copy_from_slice(base);
        for i in 0..dim {
            let d = base[i * dim + i];
            chol[i * dim + i] = d + jitter * d.abs().max(1e-300) + jitter;
        }
        if let Ok(h) = cholesky_in_place(chol, dim) {
            return Ok(h);
        }
        jitter = if jitter == 0.0 { 1e-12 } else { jitter * 100.0 };
    }
    Err(AbcError::DegenerateCovariance)
}

/// Silverman's rule-of-thumb bandwidth factor `h = (4 / (n (d + 2)))^{1/(d + 4)}` for `n`
/// (effective) points in `d` dimensions; a Gaussian kernel density estimate uses `h² Σ`
/// (pyabc's `MultivariateNormalTransition` with `silverman_rule_of_thumb`, `n` = ESS).
pub(crate) fn silverman_factor(n: f64, dim: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let d = dim as f64;
    libm::pow(4.0 / (n * (d + 2.0)), 1.0 / (d + 4.0))
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
            local_chol: Vec::new(),
            local_hld: Vec::new(),
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
        self.local_chol.clear();
        self.local_hld.clear();
        self.store(particles, weights);
        let base: Vec<f64> = self.chol.clone();
        self.half_log_det = factor_jittered(&base, dim, &mut self.chol)?;
        self.whiten();
        Ok(())
    }

    /// Keeps the population and its cumulative weights (the ancestor draw).
    fn store(&mut self, particles: &[f64], weights: &[f64]) {
        self.particles.clear();
        self.particles.extend_from_slice(particles);
        self.weights.clear();
        self.weights.extend_from_slice(weights);
        self.cum.clear();
        let mut c = 0.0;
        for &w in &self.weights {
            c += w;
            self.cum.push(c);
        }
        if let Some(last) = self.cum.last_mut() {
            *last = f64::INFINITY; // guards rounding: every u ∈ (0,1) finds an index
        }
    }

    /// Fits the OLCM kernel (Filippi et al. 2013) to a population (normalised `weights`,
    /// `particles` row-major, their `distances`) for the new tolerance `eps`: particle `j`
    /// gets `scale · Σ_j`, `Σ_j = Σ_k ω̃_k (θ̃_k − θ_j)(θ̃_k − θ_j)ᵀ = C̃ + (m̃ − θ_j)(m̃ − θ_j)ᵀ`
    /// over the positive-weight particles `θ̃_k` with distance `≤ eps` (weights `ω̃`
    /// renormalised; `m̃`, `C̃` their weighted mean and covariance). When fewer than `dim + 1`
    /// particles qualify (no covariance of full rank), the whole population is used. Each
    /// `Σ_j` is jittered as in [`Self::fit`].
    ///
    /// # Errors
    ///
    /// Shape errors as [`weighted_mean`]; [`AbcError::DegenerateCovariance`] if some `Σ_j`
    /// stays singular.
    pub(crate) fn fit_local(
        &mut self,
        particles: &[f64],
        weights: &[f64],
        distances: &[f64],
        eps: f64,
        scale: f64,
    ) -> Result<(), AbcError> {
        let dim = self.dim;
        let n = weights.len();
        crate::error::check_len("distances", n, distances.len())?;
        let near = |k: usize| weights[k] > 0.0 && distances[k] <= eps;
        let count = (0..n).filter(|&k| near(k)).count();
        let (sub_p, sub_w): (Vec<f64>, Vec<f64>) = if count > dim {
            let mut p = Vec::with_capacity(count * dim);
            let mut w = Vec::with_capacity(count);
            for k in (0..n).filter(|&k| near(k)) {
                p.extend_from_slice(&particles[k * dim..(k + 1) * dim]);
                w.push(weights[k]);
            }
            (p, w)
        } else {
            (particles.to_vec(), weights.to_vec())
        };
        let mut mean = alloc::vec![0.0; dim];
        weighted_mean(&sub_p, dim, &sub_w, &mut mean)?;
        let mut cov = alloc::vec![0.0; dim * dim];
        weighted_covariance(&sub_p, dim, &sub_w, &mean, &mut cov)?;
        self.store(particles, weights);
        self.local_chol.clear();
        self.local_chol.resize(n * dim * dim, 0.0);
        self.local_hld.clear();
        self.local_hld.resize(n, 0.0);
        let mut base = alloc::vec![0.0; dim * dim];
        let mut delta = alloc::vec![0.0; dim];
        for j in 0..n {
            let th = &particles[j * dim..(j + 1) * dim];
            for (d, (m, t)) in delta.iter_mut().zip(mean.iter().zip(th)) {
                *d = m - t;
            }
            for r in 0..dim {
                for c in 0..dim {
                    base[r * dim + c] = scale * (cov[r * dim + c] + delta[r] * delta[c]);
                }
            }
            self.local_hld[j] = factor_jittered(
                &base,
                dim,
                &mut self.local_chol[j * dim * dim..(j + 1) * dim * dim],
            )?;
        }
        // the shared factor is unused by an OLCM kernel; keep `chol()` meaningful (the
        // covariance of the first particle's kernel)
        self.chol.copy_from_slice(&self.local_chol[..dim * dim]);
        self.half_log_det = self.local_hld[0];
        self.white.clear();
        Ok(())
    }

    /// The Cholesky factor of particle `j`'s kernel covariance.
    fn factor(&self, j: usize) -> &[f64] {
        if self.local_chol.is_empty() {
            &self.chol
        } else {
            let d2 = self.dim * self.dim;
            &self.local_chol[j * d2..(j + 1) * d2]
        }
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
        let chol = self.factor(j);
        for (i, &b) in base.iter().enumerate() {
            let row = &chol[i * dim..=i * dim + i];
            let s: f64 = row.iter().zip(z.iter()).map(|(l, zk)| l * zk).sum();
            theta[i] = b + s;
        }
    }

    /// `ln Σ_j W_j K(θ | θ_j)` up to the Gaussian's `(2π)^{d/2}` (which cancels on
    /// normalisation); `diff` (length `dim`) and `logs` are scratch. Linear-space sum on the
    /// whitened particles; exact log-sum-exp fallback when every kernel underflows.
    pub(crate) fn log_mixture(&self, theta: &[f64], diff: &mut [f64], logs: &mut Vec<f64>) -> f64 {
        let dim = self.dim;
        if !self.local_chol.is_empty() {
            return self.log_local_mixture(theta, diff, logs);
        }
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

    /// [`Self::log_mixture`] of an OLCM kernel: `ln Σ_j W_j N(θ; θ_j, Σ_j)` up to
    /// `(2π)^{d/2}`, each particle with its own covariance, in log space (log-sum-exp).
    fn log_local_mixture(&self, theta: &[f64], diff: &mut [f64], logs: &mut Vec<f64>) -> f64 {
        let dim = self.dim;
        let mut delta = alloc::vec![0.0; dim];
        let mut max = f64::NEG_INFINITY;
        logs.clear();
        for (j, (wj, tj)) in self
            .weights
            .iter()
            .zip(self.particles.chunks_exact(dim))
            .enumerate()
        {
            if *wj <= 0.0 {
                continue;
            }
            for (d, (a, b)) in delta.iter_mut().zip(theta.iter().zip(tj)) {
                *d = a - b;
            }
            let q = mahalanobis_sq(self.factor(j), dim, &delta, diff);
            let l = libm::log(*wj) - 0.5 * q - self.local_hld[j];
            if l.is_nan() {
                return f64::NAN;
            }
            max = max.max(l);
            logs.push(l);
        }
        if max == f64::NEG_INFINITY {
            return f64::NEG_INFINITY;
        }
        let mut t = 0.0;
        for &l in logs.iter() {
            t += libm::exp(l - max);
        }
        max + libm::log(t)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::float_cmp, clippy::cast_precision_loss)]
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::Xoshiro256PlusPlus;

    const P: [f64; 8] = [0.0, 0.0, 1.0, 0.5, -0.5, 2.0, 0.3, -1.0];
    const W: [f64; 4] = [0.1, 0.2, 0.3, 0.4];
    const D: [f64; 4] = [0.1, 0.5, 0.2, 0.05];

    /// `Σ_j = scale · Σ_k ω̃_k (θ̃_k − θ_j)(θ̃_k − θ_j)ᵀ` over `members`, by the definition.
    fn olcm_cov(members: &[usize], j: usize, scale: f64) -> [f64; 4] {
        let tot: f64 = members.iter().map(|&k| W[k]).sum();
        let mut c = [0.0; 4];
        for &k in members {
            let (a, b) = (P[2 * k] - P[2 * j], P[2 * k + 1] - P[2 * j + 1]);
            let w = W[k] / tot * scale;
            c[0] += w * a * a;
            c[1] += w * a * b;
            c[3] += w * b * b;
        }
        c[2] = c[1];
        c
    }

    /// `ln Σ_j W_j N(θ; θ_j, Σ_j)` with explicit 2×2 inverses.
    fn mixture(members: &[usize], scale: f64, th: [f64; 2]) -> f64 {
        let mut s = 0.0;
        for j in 0..4 {
            let c = olcm_cov(members, j, scale);
            let det = c[0] * c[3] - c[1] * c[2];
            let (a, b) = (th[0] - P[2 * j], th[1] - P[2 * j + 1]);
            let q = (c[3] * a * a - 2.0 * c[1] * a * b + c[0] * b * b) / det;
            s += W[j] * (-0.5 * q).exp() / (2.0 * core::f64::consts::PI * det.sqrt());
        }
        s.ln()
    }

    /// The OLCM density of `log_mixture` is the Gaussian mixture with each particle's own
    /// covariance (from the particles within the tolerance; from all of them when fewer than
    /// `dim + 1` are), to 1e-9 (the code sums `C̃ + δδᵀ`, the test the definition).
    #[test]
    fn olcm_density_is_the_local_covariance_mixture() {
        for (eps, members) in [(0.3, &[0usize, 2, 3][..]), (0.07, &[0, 1, 2, 3][..])] {
            let mut k = GaussianKernel::new(2);
            k.fit_local(&P, &W, &D, eps, 1.5).unwrap();
            let (mut diff, mut logs) = ([0.0; 2], Vec::new());
            for th in [[0.0, 0.0], [0.7, -0.3], [-2.0, 3.0], [5.0, 5.0]] {
                // log_mixture leaves out (2π)^{d/2} = 2π
                let got =
                    k.log_mixture(&th, &mut diff, &mut logs) - (2.0 * core::f64::consts::PI).ln();
                let want = mixture(members, 1.5, th);
                assert!(
                    (got - want).abs() < 1e-9 * want.abs().max(1.0),
                    "{eps} {th:?}: {got} vs {want}"
                );
            }
        }
    }

    /// OLCM proposals have the mixture's mean and covariance
    /// (`Σ W_j θ_j`, `Σ W_j (Σ_j + θ_j θ_jᵀ) − m mᵀ`): 200 000 draws, 6 SE per moment
    /// (false failure < 1e-8 for the five checks).
    #[test]
    fn olcm_proposals_follow_the_mixture() {
        let members = [0usize, 2, 3];
        let mut k = GaussianKernel::new(2);
        k.fit_local(&P, &W, &D, 0.3, 1.0).unwrap();
        let mut m = [0.0; 2];
        let mut s2 = [0.0; 3]; // E θ₁², E θ₁θ₂, E θ₂²
        for j in 0..4 {
            let c = olcm_cov(&members, j, 1.0);
            let (a, b) = (P[2 * j], P[2 * j + 1]);
            m[0] += W[j] * a;
            m[1] += W[j] * b;
            s2[0] += W[j] * (c[0] + a * a);
            s2[1] += W[j] * (c[1] + a * b);
            s2[2] += W[j] * (c[3] + b * b);
        }
        let n = 200_000;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(20_261_122);
        let (mut th, mut z) = ([0.0; 2], [0.0; 2]);
        let mut x = alloc::vec![[0.0; 5]; n];
        for xi in &mut x {
            k.propose(&mut rng, &mut th, &mut z);
            *xi = [th[0], th[1], th[0] * th[0], th[0] * th[1], th[1] * th[1]];
        }
        let want = [m[0], m[1], s2[0], s2[1], s2[2]];
        for c in 0..5 {
            let mean = x.iter().map(|r| r[c]).sum::<f64>() / n as f64;
            let var = x.iter().map(|r| (r[c] - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let se = (var / n as f64).sqrt();
            assert!(
                (mean - want[c]).abs() < 6.0 * se,
                "moment {c}: {mean} vs {} (se {se})",
                want[c]
            );
        }
    }

    /// Silverman's factor as pyabc's `silverman_rule_of_thumb`: `(4 / (n (d + 2)))^{1/(d+4)}`.
    #[test]
    fn silverman_factor_matches_the_rule_of_thumb() {
        assert!((silverman_factor(100.0, 2) - 0.01_f64.powf(1.0 / 6.0)).abs() < 1e-15);
        assert!((silverman_factor(1000.0, 1) - (4.0_f64 / 3000.0).powf(0.2)).abs() < 1e-15);
    }
}
