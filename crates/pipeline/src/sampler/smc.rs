//! `kind = "smc-abc"`: SMC-ABC on the observed data (or on a privatized statistic, see
//! `crate::release`): the library's adaptive [`SmcAbc`](dpinfer::abc::smc::SmcAbc)
//! (`crate::smc`), or with `pairs` set the population Monte Carlo with a fixed number of
//! proposals per generation ([`dpinfer::abc::pmc`], `crate::pmc`), which shards.

use crate::error::Context as _;
use dpinfer::abc::pmc::PmcSettings;
use dpinfer::abc::smc::{SmcSettings, Tolerance};
use serde::{Deserialize, Serialize};

use super::abc_key;

/// `[sampler] kind = "smc-abc"` (unset keys keep the library's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmcAbc {
    /// PMC: proposals M per generation (set: the sharded PMC; unset: the adaptive SMC-ABC).
    pub pairs: Option<usize>,
    /// Particles N.
    pub particles: Option<usize>,
    /// Final tolerance.
    pub final_tolerance: Option<f64>,
    /// Maximum generations.
    pub generations: Option<usize>,
    /// Adaptive: quantile α of the tolerance schedule.
    pub alpha: Option<f64>,
    /// Adaptive: simulation budget.
    pub simulations: Option<u64>,
}

impl TryFrom<&SmcAbc> for SmcSettings {
    type Error = crate::Error;

    /// The adaptive SMC-ABC's settings (defaults: [`SmcSettings::quick`]).
    fn try_from(s: &SmcAbc) -> crate::Result<Self> {
        let d = Self::quick();
        let alpha = match d.tolerance {
            Tolerance::Quantile { alpha, .. } => alpha,
            _ => 0.5,
        };
        let settings = Self {
            particles: s.particles.unwrap_or(d.particles),
            tolerance: Tolerance::Quantile {
                initial: f64::INFINITY,
                alpha: s.alpha.unwrap_or(alpha),
            },
            final_tolerance: s.final_tolerance.unwrap_or(d.final_tolerance),
            max_generations: s.generations.unwrap_or(d.max_generations),
            simulation_budget: s.simulations.unwrap_or(d.simulation_budget),
            ..d
        };
        settings.validate().map_err(abc_key)?;
        Ok(settings)
    }
}

impl TryFrom<&SmcAbc> for PmcSettings {
    type Error = crate::Error;

    /// The PMC's settings (defaults: [`PmcSettings::default`]); `pairs` is M.
    fn try_from(s: &SmcAbc) -> crate::Result<Self> {
        let d = Self::default();
        let settings = Self {
            particles: s.particles.unwrap_or(d.particles),
            proposals: s.pairs.map_or(d.proposals, |p| p as u64),
            generations: s
                .generations
                .map_or(Ok(d.generations), u32::try_from)
                .map_err(|e| crate::error::err!("{e}"))
                .context("sampler.generations is too large")?,
            final_tolerance: s.final_tolerance.unwrap_or(d.final_tolerance),
        };
        settings.validate().map_err(|e| {
            crate::error::err!(
                "sampler: {e} (smc-abc with sampler.pairs needs 2 ≤ sampler.particles ≤ \
                 sampler.pairs ({}), sampler.generations ≥ 1, sampler.final_tolerance ≥ 0)",
                settings.proposals
            )
        })?;
        Ok(settings)
    }
}

impl SmcAbc {
    /// The library's checks of the settings this table selects.
    ///
    /// # Errors
    /// Settings the library refuses, named by their key.
    pub fn check(&self) -> crate::Result<()> {
        if self.pairs.is_some() {
            PmcSettings::try_from(self).map(|_| ())
        } else {
            SmcSettings::try_from(self).map(|_| ())
        }
    }
}
