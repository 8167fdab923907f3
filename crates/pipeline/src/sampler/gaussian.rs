//! `kind = "gaussian-abc"`: Gaussian rejection ABCDP (Park & Jitkrittum, Algorithm 1), as
//! [`dpinfer::abc::gaussian::GaussianRejectionAbcdp`].

use dpinfer::abc::gaussian::GaussianRejectionSettings;
use serde::{Deserialize, Serialize};

use super::{Calibration, LibraryPass, PairsPass, With, abc_key};
use crate::error::Result;
use crate::private::ObservedDistance;
use dpinfer::abc::pairs::PublicPairs;

/// `[sampler] kind = "gaussian-abc"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GaussianAbc {
    /// Public (θ, simulation) pairs T.
    pub pairs: usize,
    /// ABC threshold ε_abc, below the clipping bound.
    pub epsilon_abc: f64,
    /// Clipping bound of the distance (default: the distance's own bound).
    pub clip: Option<f64>,
}

impl TryFrom<With<'_, GaussianAbc, Calibration>> for GaussianRejectionSettings {
    type Error = crate::Error;

    fn try_from(With(s, cal): With<'_, GaussianAbc, Calibration>) -> Result<Self> {
        let settings = Self {
            epsilon_abc: s.epsilon_abc,
            epsilon_total: cal.epsilon,
            sensitivity: cal.sensitivity,
            bound: cal.clip,
        };
        settings.validate().map_err(abc_key)?;
        cal.threshold(s.epsilon_abc)?;
        Ok(settings)
    }
}

impl PairsPass for GaussianAbc {
    fn pairs(&self) -> usize {
        self.pairs
    }

    fn clip(&self) -> Option<f64> {
        self.clip
    }

    fn check(&self, cal: Calibration) -> Result<()> {
        GaussianRejectionSettings::try_from(With(self, cal)).map(|_| ())
    }

    fn build<'a>(
        &self,
        pairs: &'a PublicPairs,
        dist: ObservedDistance<'a>,
        cal: Calibration,
    ) -> Result<Box<LibraryPass<'a>>> {
        let settings = With(self, cal).try_into()?;
        Ok(Box::new(
            dpinfer::abc::gaussian::GaussianRejectionAbcdp::new(pairs, dist, settings)?,
        ))
    }

    fn mechanism(&self, scope: &str) -> String {
        format!(
            "Gaussian rejection ABCDP (Theorem 3.1 with grid correction, linear \
             composition over T); {scope}"
        )
    }
}
