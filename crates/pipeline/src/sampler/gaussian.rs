//! `kind = "gaussian-abc"`: Gaussian rejection ABCDP (Park & Jitkrittum, Algorithm 1), as
//! [`dpinfer::abc::gaussian::GaussianRejectionAbcdp`]; the table is the library's
//! [`GaussianAbcOptions`] between `pairs` and `clip`.

use dpinfer::abc::gaussian::GaussianRejectionSettings;
use dpinfer::abc::pass::GaussianAbcOptions;

use super::{Calibration, PairsPass, Pass, With, setting_error};
use crate::error::Result;

/// `[sampler] kind = "gaussian-abc"`.
pub type GaussianAbc = Pass<GaussianAbcOptions>;

impl TryFrom<With<'_, GaussianAbc, Calibration>> for GaussianRejectionSettings {
    type Error = crate::Error;

    fn try_from(With(s, cal): With<'_, GaussianAbc, Calibration>) -> Result<Self> {
        let settings = s.options.settings(cal.epsilon, cal.sensitivity, cal.clip);
        settings.validate().map_err(|e| setting_error(&e, s))?;
        cal.threshold(s.options.epsilon_abc)?;
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
