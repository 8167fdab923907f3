//! Continuous floating-point noise for simulations and experiments **only**.
//!
//! <div class="warning">
//!
//! **Not for releasing private data.** The types here add `f64` Laplace/Gaussian noise
//! drawn with `rand_distr` (inverse-CDF / ziggurat on floats). Such noise is differentially
//! private only under *idealised real arithmetic*: on real machines the set of reachable
//! doubles depends on the input and leaks it (Mironov 2012; Jin, McMurtry, Rubinstein,
//! Ohrimenko 2022; Haney et al. 2022). Use them to *simulate* a mechanism — e.g. to produce
//! the noisy pseudo-summaries of ABC, where the input is public simulated data — never on
//! a dataset you must protect. The secure types ([`crate::Laplace`], [`crate::Gaussian`], …)
//! are the only release path.
//!
//! </div>
//!
//! Their costs are tagged: [`IdealizedCost`] holds the event an ideal mechanism would
//! report, and hands it out only through
//! [`IdealizedCost::assume_idealized_numerics`], so code that composes it says so.
//! These types are separate types in a separately named module; no feature switches a
//! secure type to this path.

use dpinfer_accountants::Event;
use rand_core::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};

use crate::MechanismError;
use crate::error::positive;

/// The privacy cost of an idealised (real-arithmetic) mechanism.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct IdealizedCost {
    event: Event<'static>,
}

impl IdealizedCost {
    /// The event, valid only under the idealised-numerics assumption (see the module docs).
    #[must_use]
    pub fn assume_idealized_numerics(self) -> Event<'static> {
        self.event
    }
}

/// Continuous Laplace noise `x + Lap(b)` in `f64` (simulation only).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct IdealizedLaplace {
    scale: f64,
}

impl IdealizedLaplace {
    /// Scale `b > 0`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive `scale`.
    pub fn new(scale: f64) -> Result<Self, MechanismError> {
        Ok(Self {
            scale: positive("scale", scale)?,
        })
    }

    /// The scale `b`.
    #[must_use]
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// `x` plus one Laplace draw (difference of two exponentials); any seedable RNG.
    pub fn add_noise<R: Rng + ?Sized>(&self, x: f64, rng: &mut R) -> f64 {
        let a: f64 = Exp1.sample(rng);
        let b: f64 = Exp1.sample(rng);
        x + self.scale * (a - b)
    }

    /// The cost under real arithmetic for sensitivity Δ: [`Event::Laplace`].
    ///
    /// # Errors
    ///
    /// Non-finite or negative `sensitivity`.
    pub fn cost(&self, sensitivity: f64) -> Result<IdealizedCost, MechanismError> {
        let sensitivity = crate::error::non_negative("sensitivity", sensitivity)?;
        Ok(IdealizedCost {
            event: Event::Laplace {
                scale: self.scale,
                sensitivity,
            },
        })
    }
}

impl Distribution<f64> for IdealizedLaplace {
    /// One draw of `Lap(b)` noise.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.add_noise(0.0, rng)
    }
}

/// Continuous Gaussian noise `x + N(0, σ²)` in `f64` (simulation only).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct IdealizedGaussian {
    sigma: f64,
}

impl IdealizedGaussian {
    /// Standard deviation `σ > 0`.
    ///
    /// # Errors
    ///
    /// Non-finite or non-positive `sigma`.
    pub fn new(sigma: f64) -> Result<Self, MechanismError> {
        Ok(Self {
            sigma: positive("sigma", sigma)?,
        })
    }

    /// The standard deviation `σ`.
    #[must_use]
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// `x` plus one Gaussian draw; any seedable RNG.
    pub fn add_noise<R: Rng + ?Sized>(&self, x: f64, rng: &mut R) -> f64 {
        let z: f64 = StandardNormal.sample(rng);
        x + self.sigma * z
    }

    /// The cost under real arithmetic for ℓ₂ sensitivity Δ: [`Event::Gaussian`].
    ///
    /// # Errors
    ///
    /// Non-finite or negative `sensitivity`.
    pub fn cost(&self, sensitivity: f64) -> Result<IdealizedCost, MechanismError> {
        let sensitivity = crate::error::non_negative("sensitivity", sensitivity)?;
        Ok(IdealizedCost {
            event: Event::Gaussian {
                sigma: self.sigma,
                sensitivity,
            },
        })
    }
}

impl Distribution<f64> for IdealizedGaussian {
    /// One draw of `N(0, σ²)` noise.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.add_noise(0.0, rng)
    }
}
