//! The DP-Barker correction distribution `V_corr` (Heikkilä et al. 2019; thesis §3.2).
//!
//! The Barker test accepts when `λ + V_log > 0`, `V_log ~ Logistic(0, 1)`. With Gaussian
//! privacy noise `N(0, σ²)` already in λ, one needs `V_corr` with
//! `N(0, σ²) + V_corr = Logistic(0, 1)`. No such distribution exists for any σ² > 0 (the
//! ratio of characteristic functions `(πt / sinh πt) · e^{σ²t²/2}` is unbounded), so this
//! module ships Gaussian-mixture approximations fitted offline by
//! `scripts/fit_vcorr.py` (a linear program minimising the sup-norm CDF error of
//! `N(0, σ²) + mixture` against the logistic CDF, with the mixture's variance fixed to
//! `π²/3 − σ²` and the CDF error on `x ∈ [3, 12]` bounded by a fraction η of the logistic
//! tail) for the grid σ² ∈ {0.25, 0.5, …, 2}. Each table carries its measured sup-CDF error;
//! tests re-measure it and the moments independently. Errors of `N(0, σ²) + V_corr` against
//! Logistic(0, 1) (variance `π²/3`, fourth moment `7π⁴/15`):
//!
//! | σ² | components | sup-CDF error | variance | fourth moment | tail (max rel. on [3, 12]) |
//! |---|---|---|---|---|---|
//! | 0.25 | 59 | 9.9e-9 | +5e-7 | +2.4e-5 | 5.8e-4 |
//! | 0.5 | 65 | 4.3e-9 | −4e-8 | −3.2e-7 | 1.1e-4 |
//! | 0.75 | 55 | 1.3e-8 | +5e-10 | +8.9e-6 | 1.2e-4 |
//! | 1.0 | 39 | 9.8e-8 | 0 | −1.1e-5 | 9.1e-3 |
//! | 1.25 | 27 | 2.5e-6 | 0 | +5.7e-4 | 1.4e-2 |
//! | 1.5 | 23 | 3.0e-5 | 0 | +3.9e-3 | 1.0e-2 |
//! | 1.75 | 19 | 1.7e-4 | 0 | +2.7e-2 | 2.0e-2 |
//! | 2.0 | 15 | 6.3e-4 | 0 | +4.2e-2 | 1.0e-1 |
//!
//! ("0" is below 1e-15.) Before issue 13 the fit had no variance constraint and the σ² = 2
//! table's variance was +3.98 % off (weight 0.0021 at ±9.5); its sup-CDF error was 6.0e-4.
//!
//! (For comparison, a single Gaussian correction `N(0, π²/3 − σ²)` is 2.3e-2 off.)

use rand_core::Rng;

use crate::McmcError;
use crate::rng::{below, std_normal, uniform01};
use crate::vcorr_tables::{RawTable, TABLES};

/// A fitted correction distribution for one noise variance σ², sampled in O(1) by an alias
/// table.
#[derive(Clone, Copy, Debug)]
pub struct VCorr {
    table: &'static RawTable,
}

impl VCorr {
    /// The table for noise variance `sigma2`, which must be one of the grid values
    /// 0.25, 0.5, …, 2 (compared with a relative tolerance of 1e-12).
    ///
    /// # Errors
    ///
    /// [`McmcError::VcorrUnavailable`] for any other σ² (including NaN, ≤ 0, > 2).
    pub fn new(sigma2: f64) -> Result<Self, McmcError> {
        TABLES
            .iter()
            .find(|t| (t.sigma2 - sigma2).abs() <= 1e-12 * t.sigma2)
            .map(|table| Self { table })
            .ok_or(McmcError::VcorrUnavailable { sigma2 })
    }
    /// The noise variances that have tables.
    pub fn grid() -> impl Iterator<Item = f64> {
        TABLES.iter().map(|t| t.sigma2)
    }
    /// σ² of this table.
    #[must_use]
    pub fn sigma2(&self) -> f64 {
        self.table.sigma2
    }
    /// Measured `sup_x |P(N(0,σ²) + V_corr ≤ x) − 1/(1+e^{−x})|` on `[−30, 30]`.
    #[must_use]
    pub fn sup_cdf_error(&self) -> f64 {
        self.table.sup_cdf_error
    }
    /// Mixture components as `(weight, mean, sd)`.
    pub fn components(&self) -> impl Iterator<Item = (f64, f64, f64)> + '_ {
        let sd = self.table.component_sd;
        self.table
            .weights
            .iter()
            .zip(self.table.means)
            .map(move |(&w, &m)| (w, m, sd))
    }
    /// CDF of `N(0, σ²) + V_corr` at `x` (closed form: a Gaussian mixture).
    #[must_use]
    pub fn convolved_cdf(&self, x: f64) -> f64 {
        let v = libm::sqrt(self.table.sigma2 + self.table.component_sd * self.table.component_sd);
        self.components()
            .map(|(w, m, _)| w * dpinfer_math::norm_cdf((x - m) / v))
            .sum()
    }
    /// Alias-table probabilities and aliases (for inspection and tests).
    #[must_use]
    pub fn alias_table(&self) -> (&'static [f64], &'static [u16]) {
        (self.table.prob, self.table.alias)
    }
    /// One draw of `V_corr`: alias-table component choice, then a Gaussian.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let m = self.table.means.len();
        let i = below(rng, m);
        let k = if uniform01(rng) < self.table.prob[i] {
            i
        } else {
            usize::from(self.table.alias[i])
        };
        self.table.means[k] + self.table.component_sd * std_normal(rng)
    }
}
