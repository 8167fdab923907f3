//! `kind = "soft-abc"`: soft ABCDP, Gaussian noisy scaled distances and weights (Park &
//! Jitkrittum, Algorithm 2), as [`dpinfer::abc::soft::SoftAbcdp`]; the table is the
//! library's [`SoftAbcOptions`] between `pairs` and `clip`.

use dpinfer::abc::pass::SoftAbcOptions;
use dpinfer::abc::soft::SoftAbcdpSettings;

use super::{Calibration, PairsPass, Pass, With, setting_error};
use crate::error::Result;

/// `[sampler] kind = "soft-abc"`.
pub type SoftAbc = Pass<SoftAbcOptions>;

impl TryFrom<With<'_, SoftAbc, Calibration>> for SoftAbcdpSettings {
    type Error = crate::Error;

    fn try_from(With(s, cal): With<'_, SoftAbc, Calibration>) -> Result<Self> {
        let settings = s
            .options
            .settings(cal.epsilon, cal.delta, cal.sensitivity, cal.clip);
        settings.validate().map_err(|e| setting_error(&e, s))?;
        cal.threshold(s.options.epsilon_abc)?;
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
