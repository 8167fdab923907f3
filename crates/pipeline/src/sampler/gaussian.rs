//! `kind = "gaussian-abc"`: Gaussian rejection ABCDP (Park & Jitkrittum, Algorithm 1), as
//! [`dpinfer::abc::gaussian::GaussianRejectionAbcdp`].

use dpinfer::abc::gaussian::GaussianRejectionSettings;
use serde::{Deserialize, Serialize};

use super::{Calibration, PairsPass, With, setting_error};
use crate::error::Result;

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
        settings.validate().map_err(|e| setting_error(&e, s))?;
        cal.threshold(s.epsilon_abc)?;
        Ok(settings)
    }
}

impl PairsPass for GaussianAbc {
    super::pairs_pass!(
        GaussianRejectionSettings,
        dpinfer::abc::gaussian::GaussianRejectionAbcdp
    );

    fn mechanism(&self, scope: &str) -> String {
        format!(
            "Gaussian rejection ABCDP (Theorem 3.1 with grid correction, linear \
             composition over T); {scope}"
        )
    }
}
