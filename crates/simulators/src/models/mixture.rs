//! Mixture of uniforms, the ABCDP toy: Park, Vinaroz, Jitkrittum (2021), *ABCDP: Approximate
//! Bayesian Computation with Differential Privacy*, Entropy 23(8), §6.1, eq. (11):
//! π(θ) = Dirichlet(θ; 1), p(y | θ) = Σ_{i=1}^{5} θ_i Uniform(y; [i − 1, i]).
//! Paper setting: θ* = (0.25, 0.04, 0.33, 0.04, 0.34), 5000 observations (observed and
//! pseudo-data alike).

use crate::dist;
use crate::error::{SimError, check_len};
use crate::prior::Dirichlet;
use crate::simulator::{IncrementalSimulator, Simulator};
use rand_core::Rng;

/// The paper's true mixing weights θ*.
pub const THETA_STAR: [f64; 5] = [0.25, 0.04, 0.33, 0.04, 0.34];

/// Number of observations in the paper.
pub const PAPER_N: usize = 5000;

/// Mixture of `k` uniforms on [i − 1, i], i = 1..k; θ = the k weights. Output: n draws, one per
/// incremental block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UniformMixture {
    k: usize,
    n: usize,
}

/// Maximum number of components (stack buffer of cumulative weights).
pub const MAX_COMPONENTS: usize = 64;

/// Tolerance on |Σθ − 1| for θ to be a probability vector.
const SIMPLEX_TOL: f64 = 1e-9;

impl UniformMixture {
    /// The paper's model: k = 5 components, n = 5000.
    #[must_use]
    pub const fn paper() -> Self {
        Self { k: 5, n: PAPER_N }
    }

    /// `k` components (2 ≤ k ≤ 64), `n` ≥ 1 observations.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] otherwise.
    pub fn new(k: usize, n: usize) -> Result<Self, SimError> {
        if !(2..=MAX_COMPONENTS).contains(&k) {
            return Err(SimError::InvalidSize {
                name: "k",
                value: k as u64,
            });
        }
        if n == 0 {
            return Err(SimError::InvalidSize {
                name: "n",
                value: 0,
            });
        }
        Ok(Self { k, n })
    }

    /// The paper's prior Dirichlet(1, …, 1).
    ///
    /// # Errors
    /// Never for a validated model (kept fallible for uniformity).
    pub fn prior(&self) -> Result<Dirichlet, SimError> {
        Dirichlet::new(self.k, 1.0)
    }

    /// Mean Σθ_i (i − ½) and variance of one observation, for tests and diagnostics.
    ///
    /// # Errors
    /// [`SimError::OutsideSupport`] unless θ is a probability vector of length k.
    pub fn moments(&self, theta: &[f64]) -> Result<(f64, f64), SimError> {
        self.validate(theta)?;
        let mut m1 = 0.0;
        let mut m2 = 0.0;
        for (i, &w) in theta.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let lo = i as f64;
            m1 += w * (lo + 0.5);
            m2 += w * (lo * lo + lo + 1.0 / 3.0);
        }
        Ok((m1, m2 - m1 * m1))
    }

    fn validate(&self, theta: &[f64]) -> Result<(), SimError> {
        check_len("theta", self.k, theta.len())?;
        let mut s = 0.0;
        for (i, &w) in theta.iter().enumerate() {
            if !(0.0..=1.0).contains(&w) {
                return Err(SimError::OutsideSupport { index: i });
            }
            s += w;
        }
        if (s - 1.0).abs() > SIMPLEX_TOL {
            return Err(SimError::OutsideSupport { index: self.k - 1 });
        }
        Ok(())
    }

    #[inline]
    fn draw<R: Rng + ?Sized>(&self, cum: &[f64], rng: &mut R) -> f64 {
        // Component by inversion on the cumulative weights (last one absorbs rounding): the
        // first i < k − 1 with u < cum[i], else k − 1. `cum` is non-decreasing (partial sums of
        // weights ≥ 0), so that index is the count of cum[i] ≤ u over i < k − 1 — counted
        // without branches (a data-dependent loop exit mispredicts about once per draw).
        let u = dist::uniform01(rng) * cum[self.k - 1];
        let i: usize = cum[..self.k - 1].iter().map(|&c| usize::from(u >= c)).sum();
        #[allow(clippy::cast_precision_loss)]
        let lo = i as f64;
        lo + dist::uniform01(rng)
    }
}

/// Run state of [`UniformMixture`]: cumulative weights and observations emitted.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MixtureRun {
    cum: [f64; MAX_COMPONENTS],
    done: usize,
}

impl Simulator for UniformMixture {
    fn param_dim(&self) -> usize {
        self.k
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
        let run = self.begin(theta)?;
        let cum = &run.cum[..self.k];
        for y in out.iter_mut() {
            *y = self.draw(cum, rng);
        }
        Ok(())
    }
}

impl IncrementalSimulator for UniformMixture {
    type Run = MixtureRun;
    fn n_blocks(&self) -> usize {
        self.n
    }
    fn block_len(&self) -> usize {
        1
    }
    fn begin(&self, theta: &[f64]) -> Result<MixtureRun, SimError> {
        self.validate(theta)?;
        let mut cum = [0.0; MAX_COMPONENTS];
        let mut s = 0.0;
        for (c, &w) in cum.iter_mut().zip(theta) {
            s += w;
            *c = s;
        }
        Ok(MixtureRun { cum, done: 0 })
    }
    fn next_block<R: Rng + ?Sized>(
        &self,
        run: &mut MixtureRun,
        rng: &mut R,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        super::one_value_block(&mut run.done, self.n, out, |_| {
            Ok(self.draw(&run.cum[..self.k], rng))
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::cast_precision_loss)]
mod tests {
    use super::*;
    use crate::SimStream;

    /// The branch-free component count equals the first-exceeding-index loop it replaced, draw
    /// for draw, including weight vectors with zeros (ties in the cumulative weights) and a
    /// last component absorbing rounding.
    #[test]
    fn branch_free_component_equals_the_loop() {
        let thetas: [&[f64]; 5] = [
            &THETA_STAR,
            &[0.0, 0.5, 0.0, 0.5, 0.0],
            &[1.0, 0.0, 0.0],
            &[0.0, 0.0, 1.0],
            &[0.1; 10],
        ];
        for th in thetas {
            let m = UniformMixture::new(th.len(), 1).unwrap();
            let mut cum = [0.0; MAX_COMPONENTS];
            let mut s = 0.0;
            for (c, &w) in cum.iter_mut().zip(th) {
                s += w;
                *c = s;
            }
            let cum = &cum[..th.len()];
            let (mut a, mut b) = (SimStream::new(3, 1), SimStream::new(3, 1));
            for _ in 0..20_000 {
                let got = m.draw(cum, &mut a);
                let u = dist::uniform01(&mut b) * cum[th.len() - 1];
                let mut i = 0;
                while i + 1 < th.len() && u >= cum[i] {
                    i += 1;
                }
                let want = i as f64 + dist::uniform01(&mut b);
                assert_eq!(got.to_bits(), want.to_bits());
            }
        }
    }
}
