//! `kind = "soft-abc"`: soft ABCDP, Gaussian noisy scaled distances and weights (Park &
//! Jitkrittum, Algorithm 2), as [`dpinfer::abc::soft::SoftAbcdp`].

use dpinfer::abc::soft::SoftAbcdpSettings;
use serde::{Deserialize, Serialize};

use super::{Calibration, PairsPass, With, setting_error};
use crate::error::Result;

/// `[sampler] kind = "soft-abc"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoftAbc {
    /// Public (θ, simulation) pairs T.
    pub pairs: usize,
    /// Soft threshold ε_abc of the kernel `exp(−ρ/ε_abc)`.
    pub epsilon_abc: f64,
    /// Clipping bound of the distance (default: the distance's own bound).
    pub clip: Option<f64>,
}

impl TryFrom<With<'_, SoftAbc, Calibration>> for SoftAbcdpSettings {
    type Error = crate::Error;

    fn try_from(With(s, cal): With<'_, SoftAbc, Calibration>) -> Result<Self> {
        let settings = Self {
            epsilon_abc: s.epsilon_abc,
            epsilon_total: cal.epsilon,
            delta_total: cal.delta,
            sensitivity: cal.sensitivity,
            bound: cal.clip,
            floor: Self::FLOOR,
        };
        settings.validate().map_err(|e| setting_error(&e, s))?;
        cal.threshold(s.epsilon_abc)?;
        Ok(settings)
    }
}

impl PairsPass for SoftAbc {
    super::pairs_pass!(SoftAbcdpSettings, dpinfer::abc::soft::SoftAbcdp);

    fn mechanism(&self, scope: &str) -> String {
        format!(
            "soft-ABC: Gaussian noisy scaled distances, kernel exp(−ρ/ε_abc) (Park & \
             Jitkrittum Thms 3.2–3.3); {scope}"
        )
    }
}
