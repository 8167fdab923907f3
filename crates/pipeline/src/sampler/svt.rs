//! `kind = "svt-abc"`: ABCDP, the sparse vector technique over the public pairs (Park,
//! Mijoung & Jitkrittum 2021, Algorithm 1), as [`dpinfer::abc::svt::SvtAbc`]; the table is
//! the library's [`SvtAbcOptions`] between `pairs` and `clip`.

use dpinfer::abc::pass::SvtAbcOptions;
use dpinfer::abc::svt::SvtAbcSettings;

use super::{Calibration, PairsPass, Pass, With, setting_error};
use crate::error::Result;

/// `[sampler] kind = "svt-abc"`.
pub type SvtAbc = Pass<SvtAbcOptions>;

impl TryFrom<With<'_, SvtAbc, Calibration>> for SvtAbcSettings {
    type Error = crate::Error;

    fn try_from(With(s, cal): With<'_, SvtAbc, Calibration>) -> Result<Self> {
        let settings = s.options.settings(cal.epsilon, cal.sensitivity, cal.clip);
        settings.validate().map_err(|e| setting_error(&e, s))?;
        cal.threshold(s.options.epsilon_abc)?;
        Ok(settings)
    }
}

impl PairsPass for SvtAbc {
    super::pairs_pass!(SvtAbcSettings, dpinfer::abc::svt::SvtAbc);

    fn limits(&self) -> Vec<(&'static str, Option<u64>, u64)> {
        vec![("sampler.c", Some(self.options.c), crate::limits::MAX_COUNT)]
    }

    fn mechanism(&self, scope: &str) -> String {
        format!(
            "SVT-ABC (ABCDP Theorem 1), discrete Laplace on a grid, c = {}, RESAMPLE = {}; {scope}",
            self.options.c, self.options.resample
        )
    }
}
