//! A product of independent blocks chosen at run time — what a configuration file's
//! `[[prior]]` tables build (one block per parameter, or a Dirichlet block over several).

use alloc::vec::Vec;

use crate::error::{SimError, check_len};
use crate::prior::{
    Beta, Dirichlet, Exponential, Gamma, LogNormal, Normal, Prior, TruncatedNormal, Uniform,
};
use rand_core::Rng;

/// One independent block of a [`DeclaredPrior`].
#[derive(Copy, Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Marginal {
    /// U(lo, hi).
    Uniform(Uniform),
    /// N(mean, sd²).
    Normal(Normal),
    /// N(mean, sd²) truncated to `[lo, hi]`.
    TruncatedNormal(TruncatedNormal),
    /// ln θ ~ N(mu, sigma²).
    LogNormal(LogNormal),
    /// Gamma(shape, rate).
    Gamma(Gamma),
    /// Beta(a, b).
    Beta(Beta),
    /// Exp(rate).
    Exponential(Exponential),
    /// Symmetric Dirichlet over `k` coordinates (a block of `k` parameters).
    Dirichlet(Dirichlet),
}

macro_rules! each {
    ($self:expr, $p:ident => $e:expr) => {
        match $self {
            Marginal::Uniform($p) => $e,
            Marginal::Normal($p) => $e,
            Marginal::TruncatedNormal($p) => $e,
            Marginal::LogNormal($p) => $e,
            Marginal::Gamma($p) => $e,
            Marginal::Beta($p) => $e,
            Marginal::Exponential($p) => $e,
            Marginal::Dirichlet($p) => $e,
        }
    };
}

impl Prior for Marginal {
    fn dim(&self) -> usize {
        each!(self, p => p.dim())
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        each!(self, p => p.sample(rng, out))
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        each!(self, p => p.ln_density(theta))
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        each!(self, p => p.in_support(theta))
    }
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        each!(self, p => p.marginal_ln_density(j, x))
    }
}

/// θ = (θ_1, …, θ_m), the concatenation of independent [`Marginal`] blocks drawn in order;
/// the density is the product of the blocks' normalised densities. Sampling allocates
/// nothing.
///
/// ```
/// use dpinfer_simulators::prior::{DeclaredPrior, Gamma, Marginal, Uniform};
/// use dpinfer_simulators::{Prior, SimStream};
/// let p = DeclaredPrior::new(vec![
///     Marginal::Uniform(Uniform::new(0.0, 1.0)?),
///     Marginal::Gamma(Gamma::new(2.0, 1.0)?),
/// ])?;
/// let mut th = [0.0; 2];
/// p.sample(&mut SimStream::new(1, 0), &mut th)?;
/// assert!(p.in_support(&th));
/// # Ok::<(), dpinfer_simulators::SimError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeclaredPrior {
    blocks: Vec<Marginal>,
    dim: usize,
}

impl DeclaredPrior {
    /// The product of `blocks`, in order.
    ///
    /// # Errors
    /// [`SimError::InvalidSize`] for no blocks.
    pub fn new(blocks: Vec<Marginal>) -> Result<Self, SimError> {
        if blocks.is_empty() {
            return Err(SimError::InvalidSize {
                name: "blocks",
                value: 0,
            });
        }
        let dim = blocks.iter().map(Prior::dim).sum();
        Ok(Self { blocks, dim })
    }
    /// The blocks, in order.
    #[must_use]
    pub fn blocks(&self) -> &[Marginal] {
        &self.blocks
    }
}

impl Prior for DeclaredPrior {
    fn dim(&self) -> usize {
        self.dim
    }
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) -> Result<(), SimError> {
        check_len("out", self.dim, out.len())?;
        let mut rest = out;
        for b in &self.blocks {
            let (head, tail) = rest.split_at_mut(b.dim());
            b.sample(rng, head)?;
            rest = tail;
        }
        Ok(())
    }
    fn ln_density(&self, theta: &[f64]) -> f64 {
        if theta.len() != self.dim {
            return f64::NEG_INFINITY;
        }
        let mut acc = 0.0;
        let mut rest = theta;
        for b in &self.blocks {
            let (head, tail) = rest.split_at(b.dim());
            let l = b.ln_density(head);
            if l == f64::NEG_INFINITY || l.is_nan() {
                return f64::NEG_INFINITY;
            }
            acc += l;
            rest = tail;
        }
        acc
    }
    fn in_support(&self, theta: &[f64]) -> bool {
        if theta.len() != self.dim {
            return false;
        }
        let mut rest = theta;
        for b in &self.blocks {
            let (head, tail) = rest.split_at(b.dim());
            if !b.in_support(head) {
                return false;
            }
            rest = tail;
        }
        true
    }
    /// The marginal of the block holding coordinate `j` (blocks are independent).
    fn marginal_ln_density(&self, j: usize, x: f64) -> Option<f64> {
        let mut start = 0;
        for b in &self.blocks {
            let d = b.dim();
            if j < start + d {
                return b.marginal_ln_density(j - start, x);
            }
            start += d;
        }
        None
    }
}
