//! `kind = "svt-abc"`: ABCDP, the sparse vector technique over the public pairs (Park,
//! Mijoung & Jitkrittum 2021, Algorithm 1), as [`dpinfer::abc::svt::SvtAbc`].

use dpinfer::abc::analysis::Resample;
use dpinfer::abc::svt::SvtAbcSettings;
use serde::{Deserialize, Serialize};

use super::{Calibration, PairsPass, With, setting_error};
use crate::error::Result;

/// `[sampler] kind = "svt-abc"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvtAbc {
    /// Public (θ, simulation) pairs T.
    pub pairs: usize,
    /// ABC threshold ε_abc.
    pub epsilon_abc: f64,
    /// Maximum number of accepted pairs c.
    pub c: u64,
    /// RESAMPLE: fresh threshold noise after each acceptance (default false).
    #[serde(default)]
    pub resample: bool,
    /// Clipping bound of the distance (default: the distance's own bound).
    pub clip: Option<f64>,
}

impl TryFrom<With<'_, SvtAbc, Calibration>> for SvtAbcSettings {
    type Error = crate::Error;

    fn try_from(With(s, cal): With<'_, SvtAbc, Calibration>) -> Result<Self> {
        let settings = Self {
            epsilon_abc: s.epsilon_abc,
            epsilon_total: cal.epsilon,
            c: s.c,
            sensitivity: cal.sensitivity,
            clip: cal.clip,
            resample: if s.resample {
                Resample::AfterAccept
            } else {
                Resample::Never
            },
        };
        settings.validate().map_err(|e| setting_error(&e, s))?;
        cal.threshold(s.epsilon_abc)?;
        Ok(settings)
    }
}

impl PairsPass for SvtAbc {
    super::pairs_pass!(SvtAbcSettings, dpinfer::abc::svt::SvtAbc);

    fn limits(&self) -> Vec<(&'static str, Option<u64>, u64)> {
        vec![("sampler.c", Some(self.c), crate::limits::MAX_COUNT)]
    }

    fn mechanism(&self, scope: &str) -> String {
        format!(
            "SVT-ABC (ABCDP Theorem 1), discrete Laplace on a grid, c = {}, RESAMPLE = {}; {scope}",
            self.c, self.resample
        )
    }
}
