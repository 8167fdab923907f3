//! `kind = "smc-abc"`: SMC-ABC on the observed data (or on a privatized statistic, see
//! `crate::release`): the library's adaptive [`SmcAbc`](dpinfer::abc::smc::SmcAbc)
//! (`crate::smc`), or with `pairs` set the population Monte Carlo with a fixed number of
//! proposals per generation ([`dpinfer::abc::pmc`], `crate::pmc`), which shards.

use crate::error::Context as _;
use dpinfer::abc::pmc::PmcSettings;
use dpinfer::abc::smc::{Perturbation, SmcSettings, Tolerance};
use serde::{Deserialize, Serialize};

use super::setting_error;

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
    /// Adaptive: the perturbation kernel, `"twice-covariance"` (default), `"olcm"` (Filippi et
    /// al. 2013) or `"mvn"` (Silverman-scaled, pyabc's `MultivariateNormalTransition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Adaptive: the kernel covariance multiplier (default 2 for `"twice-covariance"`, 1 for
    /// the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_scale: Option<f64>,
    /// Adaptive: generation 0's tolerance, `"infinity"` (default: the prior) or
    /// `"prior-quantile"` (the `alpha`-quantile of `particles` prior-predictive distances,
    /// pyabc's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_tolerance: Option<String>,
}

impl SmcAbc {
    /// The adaptive SMC-ABC's perturbation kernel (`sampler.kernel`).
    ///
    /// # Errors
    /// An unknown kernel name.
    pub fn perturbation(&self) -> crate::Result<Perturbation> {
        match self.kernel.as_deref() {
            None => Ok(Perturbation::default()),
            Some(name) => Perturbation::from_name(name).ok_or_else(|| {
                crate::error::err!(
                    key = "sampler.kernel".to_string();
                    "sampler.kernel = {name:?} is not one of {}",
                    Perturbation::ALL.map(|k| format!("{:?}", k.name())).join(", ")
                )
            }),
        }
    }

    /// Whether generation 0's tolerance comes from the prior-predictive distances
    /// (`sampler.first_tolerance`).
    ///
    /// # Errors
    /// A value other than `"infinity"` or `"prior-quantile"`.
    pub fn prior_quantile(&self) -> crate::Result<bool> {
        match self.first_tolerance.as_deref() {
            None | Some("infinity") => Ok(false),
            Some("prior-quantile") => Ok(true),
            Some(other) => Err(crate::error::err!(
                key = "sampler.first_tolerance".to_string();
                "sampler.first_tolerance = {other:?} is not \"infinity\" or \"prior-quantile\""
            )),
        }
    }
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
        let alpha = s.alpha.unwrap_or(alpha);
        let settings = Self {
            particles: s.particles.unwrap_or(d.particles),
            tolerance: if s.prior_quantile()? {
                Tolerance::PriorQuantile { alpha }
            } else {
                Tolerance::Quantile {
                    initial: f64::INFINITY,
                    alpha,
                }
            },
            kernel_scale: s.kernel_scale.unwrap_or_else(|| {
                s.perturbation()
                    .map_or(d.kernel_scale, Perturbation::default_scale)
            }),
            final_tolerance: s.final_tolerance.unwrap_or(d.final_tolerance),
            max_generations: s.generations.unwrap_or(d.max_generations),
            simulation_budget: s.simulations.unwrap_or(d.simulation_budget),
            ..d
        };
        settings.validate().map_err(|e| setting_error(&e, s))?;
        Ok(settings)
    }
}

impl TryFrom<&SmcAbc> for PmcSettings {
    type Error = crate::Error;

    /// The PMC's settings (defaults: [`PmcSettings::default`]); `pairs` is M.
    fn try_from(s: &SmcAbc) -> crate::Result<Self> {
        for (key, set) in [
            ("kernel", s.kernel.is_some()),
            ("kernel_scale", s.kernel_scale.is_some()),
            ("first_tolerance", s.first_tolerance.is_some()),
        ] {
            crate::error::ensure!(
                !set,
                key = format!("sampler.{key}");
                "sampler.{key} applies to the adaptive SMC-ABC: the PMC with sampler.pairs \
                 uses the twice-covariance kernel and the prior as generation 0"
            );
        }
        let d = Self::default();
        let settings = Self {
            particles: s.particles.unwrap_or(d.particles),
            proposals: s.pairs.map_or(d.proposals, |p| p as u64),
            generations: s
                .generations
                .map_or(Ok(d.generations), u32::try_from)
                .map_err(|e| crate::error::err!(key = "sampler.generations"; "{e}"))
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

/// The adaptive SMC-ABC (`crate::smc`), or with `pairs` set the sharded PMC (`crate::pmc`),
/// on the observed data or on the released statistic (its replica from the config).
impl super::Sequential for SmcAbc {
    fn limits(&self) -> Vec<super::Limit> {
        use super::as_u64;
        use crate::limits::{MAX_GENERATIONS, MAX_PARTICLES, MAX_SIMULATIONS};
        vec![
            ("sampler.particles", as_u64(self.particles), MAX_PARTICLES),
            (
                "sampler.generations",
                as_u64(self.generations),
                MAX_GENERATIONS,
            ),
            ("sampler.simulations", self.simulations, MAX_SIMULATIONS),
        ]
    }

    fn check(&self, _kind: &str) -> crate::Result<()> {
        SmcAbc::check(self)
    }

    fn run(&self, on: &super::SequentialRun<'_>) -> crate::Result<crate::results::Outcome> {
        let run = if self.pairs.is_some() {
            crate::pmc::run
        } else {
            crate::smc::run
        };
        run(on.cfg, on.model, on.target, on.dir, on.threads, on.observer)
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
            self.perturbation()?;
            SmcSettings::try_from(self).map(|_| ())
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::float_cmp)]
    use super::*;

    fn read(body: &str) -> SmcAbc {
        toml::from_str(body).unwrap()
    }

    /// `sampler.kernel`, `sampler.kernel_scale` and `sampler.first_tolerance` reach the
    /// library's settings (issue 31); unset, the settings are the library's defaults as before.
    #[test]
    fn kernel_and_first_tolerance_keys_reach_the_settings() {
        let d = SmcSettings::try_from(&read("")).unwrap();
        assert_eq!(
            d.tolerance,
            Tolerance::Quantile {
                initial: f64::INFINITY,
                alpha: 0.5
            }
        );
        assert_eq!(d.kernel_scale, 2.0);
        assert_eq!(read("").perturbation().unwrap(), Perturbation::Covariance);
        assert_eq!(d, SmcSettings::quick());

        let s = read("kernel = \"olcm\"\nfirst_tolerance = \"prior-quantile\"\nalpha = 0.3");
        let t = SmcSettings::try_from(&s).unwrap();
        assert_eq!(t.tolerance, Tolerance::PriorQuantile { alpha: 0.3 });
        assert_eq!(t.kernel_scale, 1.0);
        assert_eq!(s.perturbation().unwrap(), Perturbation::Olcm);

        let s = read("kernel = \"mvn\"\nkernel_scale = 0.5\nfirst_tolerance = \"infinity\"");
        let t = SmcSettings::try_from(&s).unwrap();
        assert_eq!(t.kernel_scale, 0.5);
        assert_eq!(s.perturbation().unwrap(), Perturbation::Mvn);
        assert!(matches!(t.tolerance, Tolerance::Quantile { .. }));

        let s = read("kernel = \"twice-covariance\"");
        assert_eq!(SmcSettings::try_from(&s).unwrap(), SmcSettings::quick());
    }

    #[test]
    fn bad_kernel_keys_are_named() {
        let e = read("kernel = \"gauss\"").check().unwrap_err().to_string();
        assert!(
            e.contains("sampler.kernel") && e.contains("\"olcm\""),
            "{e}"
        );
        let e = read("first_tolerance = \"median\"")
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("sampler.first_tolerance"), "{e}");
        let e = read("kernel_scale = -1.0").check().unwrap_err().to_string();
        assert!(e.contains("sampler.kernel_scale"), "{e}");
        for key in [
            "kernel = \"olcm\"",
            "kernel_scale = 1.0",
            "first_tolerance = \"prior-quantile\"",
        ] {
            let e = read(&format!("pairs = 100\n{key}"))
                .check()
                .unwrap_err()
                .to_string();
            assert!(e.contains("adaptive SMC-ABC"), "{key}: {e}");
        }
    }

    /// The new keys are left out of a serialized config when unset, so a config written by
    /// an earlier version (and every fingerprint of one) reads and writes back unchanged.
    #[test]
    fn unset_kernel_keys_are_not_serialized() {
        let j = serde_json::to_string(&read("particles = 10")).unwrap();
        assert!(
            !j.contains("kernel") && !j.contains("first_tolerance"),
            "{j}"
        );
    }
}
