//! `kind = "gaussian-abc"`: Gaussian rejection ABCDP (Park & Jitkrittum, Algorithm 1), as
//! [`dpinfer::abc::gaussian::GaussianRejectionAbcdp`].

use dpinfer::abc::gaussian::GaussianRejectionSettings;
use serde::{Deserialize, Serialize};

use super::{Calibration, With};

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
    type Error = anyhow::Error;

    /// The library checks the rest when the pass is built
    /// ([`dpinfer::abc::gaussian::GaussianRejectionAbcdp::new`]).
    fn try_from(With(s, cal): With<'_, GaussianAbc, Calibration>) -> anyhow::Result<Self> {
        Ok(Self {
            epsilon_abc: cal.threshold(s.epsilon_abc)?,
            epsilon_total: cal.epsilon,
            sensitivity: cal.sensitivity,
            bound: cal.clip,
        })
    }
}
